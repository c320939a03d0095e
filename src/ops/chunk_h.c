/* chunk_h.c — op `chunk_h`: the state carried across chunks (pipeline step 5).
 *
 *   h[c] = S (entering chunk c);  v_new_t = u_t - S w_t;
 *   S = exp(gl) S + sum_t exp(gl - gc_t) v_new_t k_t^T;  final = S.
 *
 * ABI: gated_delta_net_chunk_inter_state_bf16 — 0 k bf16[B,T,Hg,K], 1 w bf16[B,T,H,K],
 *   2 u bf16[B,T,H,V], 3 g f32[B,T,H] (cumsummed), 4 h0 f32[B,H,V,K],
 *   5 h bf16[B,NT,H,V,K], 6 v_new bf16[B,T,H,V], 7 final f32[B,H,V,K],
 *   8 params u32[8] = {B,T,Hg,H,K,V,BT,NT}; BV=32 value rows per group;
 *   grid (V/32, H, B), 128 threads.  mlx-native's kernel is K=128 only and assumes
 *   T % BT == 0; the op (and our kernels) take K, V in {64,128,256} and any T.
 * Inputs: w, u from the parity wy of generated k, v, beta, cumsummed g and the
 * parity Ai; h0 ~ N(0, 0.1).
 * Bytes: inputs once, h/v_new/final once.  Flops: per chunk of n tokens 2nKV (w.S)
 * + 2nKV (update) + KV (decay) + 2nV (v_new, gate). */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { CH_K, CH_W, CH_U, CH_G, CH_H0, CH_H, CH_VNEW, CH_FINAL, CH_NBUFS };

static const op_dim chunk_h_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
    GDN_DIM_BT,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY vs F64: h max|d| 3.9e-3 rel_l2 2.2e-3; v_new 9.2e-3 / 1e-3; final
 *     1.8e-3 / 1.4e-3 -> F64 tol atol 1e-2 (v_new 3e-2), rtol 2e-2, rel_l2 6e-3.
 *   kernel-like (K order reversed; gc moved 1 f32 ulp) vs PARITY: h rel_l2 1.6e-5
 *     (1-ulp flips), v_new 5e-7, final 1.3e-7 (max 1e-6); final's atol 2e-3 leaves
 *     room for a flipped bf16 gated value (1 ulp x |k| ~ 7e-4 on one state row).
 * PARITY bounds of the bf16 outputs: GDN_BF16_PARITY_TOL (gdn_common.h). */
static const op_buf chunk_h_bufs[CH_NBUFS] = {
    [CH_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [CH_W] = {"w", BUF_IN, DT_BF16, "w", {{0}}},
    [CH_U] = {"u", BUF_IN, DT_BF16, "u", {{0}}},
    [CH_G] = {"g", BUF_IN, DT_F32, "g,g_cumsum,gc", {{0}}},
    [CH_H0] = {"h0", BUF_IN, DT_F32, "h0,initial_state", {{0}}},
    [CH_H] = {"h", BUF_OUT, DT_BF16, "h,state", {{1e-2, 2e-2, 6e-3}, GDN_BF16_PARITY_TOL(1e-3)}},
    [CH_VNEW] = {"v_new", BUF_OUT, DT_BF16, "v_new", {{3e-2, 2e-2, 6e-3}, GDN_BF16_PARITY_TOL(1e-2)}},
    [CH_FINAL] = {"final", BUF_OUT, DT_F32, "final,final_state", {{1e-2, 2e-2, 6e-3}, {2e-3, 1e-2, 2e-4}}},
};

extern const op_desc op_chunk_h;

static int chunk_h_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_chunk_h, dim, err, errlen);
}

static int chunk_h_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    if (gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_WY, err, errlen)) return -1;
    c->t[CH_K] = gdn_chain_take(&ch.k, "k");
    c->t[CH_W] = gdn_chain_take(&ch.w, "w");
    c->t[CH_U] = gdn_chain_take(&ch.u, "u");
    c->t[CH_G] = gdn_chain_take(&ch.gc, "g");
    gdn_chain_free(&ch);
    if (gdn_alloc(c, CH_H0, 4, s.B, s.H, s.V, s.K, 0, err, errlen)) return -1;
    gdn_gen_h0(c->t[CH_H0], c->seed);
    if (gdn_alloc(c, CH_H, 5, s.B, s.NT, s.H, s.V, s.K, err, errlen)) return -1;
    if (gdn_alloc(c, CH_VNEW, 4, s.B, s.T, s.H, s.V, 0, err, errlen)) return -1;
    return gdn_alloc(c, CH_FINAL, 4, s.B, s.H, s.V, s.K, 0, err, errlen);
}

static int chunk_h_reference(const op_case *c, ref_kind kind, double **out) {
    return gdn_chunk_h_ref(kind, gdn_shape_of(c), gdn_view_tensor(c->t[CH_K]), gdn_view_tensor(c->t[CH_W]),
                           gdn_view_tensor(c->t[CH_U]), gdn_view_tensor(c->t[CH_G]), gdn_view_tensor(c->t[CH_H0]),
                           gdn_sink_f64(out[CH_H]), gdn_sink_f64(out[CH_VNEW]), gdn_sink_f64(out[CH_FINAL]));
}

static int chunk_h_nstages(const op_case *c) { return 1; }

static int chunk_h_launch(const op_case *c, int stage, op_launch *l) {
    gdn_launch_chunk_h(gdn_shape_of(c), l, CH_K, CH_W, CH_U, CH_G, CH_H0, CH_H, CH_VNEW, CH_FINAL);
    return 0;
}

static double chunk_h_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_chunk_h, dim);
    double per_token = 2.0 * s.Hg * s.K + 2.0 * s.H * s.K + 2.0 * s.H * s.V + 4.0 * s.H + 2.0 * s.H * s.V;
    double state = 4.0 * s.H * s.V * s.K;
    return (double)s.B * (s.T * per_token + 2 * state + 2.0 * s.NT * s.H * s.V * s.K);
}

static double chunk_h_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_chunk_h, dim);
    return (double)s.B * s.H * gdn_chunk_h_head_flops(s);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const chunk_h_shapes[CH_NBUFS] = {
    [CH_K] = "B,T,Hg,K",
    [CH_W] = "B,T,H,K",
    [CH_U] = "B,T,H,V",
    [CH_G] = "B,T,H",
    [CH_H0] = "B,H,V,K",
    [CH_H] = "B,*,H,V,K",
    [CH_VNEW] = "B,T,H,V",
    [CH_FINAL] = "B,H,V,K",
};

const op_desc op_chunk_h = {
    .name = "chunk_h",
    .group = "gdn",
    .summary = "state across chunks: h per chunk, v_new = u - S w, final state (pipeline step 5)",
    .dims = chunk_h_dims,
    .ndims = 7,
    .bufs = chunk_h_bufs,
    .nbufs = CH_NBUFS,
    .validate = chunk_h_validate,
    .setup = chunk_h_setup,
    .reference = chunk_h_reference,
    .nstages = chunk_h_nstages,
    .launch = chunk_h_launch,
    .shapes = chunk_h_shapes,
    .bytes = chunk_h_bytes,
    .flops = chunk_h_flops,
};
