/* chunk_o.c — op `chunk_o`: the output (pipeline step 6).
 *
 *   o_t = scale ( exp(gc_t) h[c] q_t + sum_{j<=t} (q_t . k_j) exp(gc_t - gc_j) v_new_j )
 *
 * ABI: gated_delta_net_chunk_o_bf16 — 0 q bf16[B,T,Hg,K], 1 k bf16[B,T,Hg,K],
 *   2 v_new bf16[B,T,H,V], 3 h bf16[B,NT,H,V,K], 4 g f32[B,T,H] (cumsummed),
 *   5 o bf16[B,T,H,V], 6 params u32[11] = {B,T,Hg,H,K,V,BT,NT,BK=32,BV=32,
 *   bits of f32 scale}; threadgroup memory (0) bf16[BT,BT] 8 KB;
 *   grid (V/32, NT, B*H), 256 threads.  scale = K^-0.5.
 * Inputs: q unit rows; h, v_new from the parity chunk_h of the parity chain.
 * Bytes: inputs once, o once.  Flops: per chunk 2nKV (q.h) + n(n+1)(K+V) (q.k and
 * A.v_new, causal) + gates. */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { CO_Q, CO_K, CO_VNEW, CO_H, CO_G, CO_O, CO_NBUFS };

static const op_dim chunk_o_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
    GDN_DIM_BT,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY vs F64: max|d| 3.6e-4, rel_l2 2.3e-3 -> F64 tol atol 2e-3, rtol 2e-2,
 *     rel_l2 8e-3.
 *   kernel-like (K order reversed; gc moved 1 f32 ulp) vs PARITY: rel_l2 <= 3.5e-5.
 *   The q.k matrix kept f32 (no bf16 before A.v_new): rel_l2 2.6e-3 -> fails.
 * PARITY bounds of the bf16 outputs: GDN_BF16_PARITY_TOL (gdn_common.h). */
static const op_buf chunk_o_bufs[CO_NBUFS] = {
    [CO_Q] = {"q", BUF_IN, DT_BF16, "q", {{0}}},
    [CO_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [CO_VNEW] = {"v_new", BUF_IN, DT_BF16, "v_new,v", {{0}}},
    [CO_H] = {"h", BUF_IN, DT_BF16, "h,state", {{0}}},
    [CO_G] = {"g", BUF_IN, DT_F32, "g,g_cumsum,gc", {{0}}},
    [CO_O] = {"o", BUF_OUT, DT_BF16, "o", {{2e-3, 2e-2, 8e-3}, GDN_BF16_PARITY_TOL(2e-4)}},
};

extern const op_desc op_chunk_o;

static int chunk_o_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_chunk_o, dim, err, errlen);
}

static int chunk_o_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    if (gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_CHUNK_H, err, errlen)) return -1;
    c->t[CO_K] = gdn_chain_take(&ch.k, "k");
    c->t[CO_VNEW] = gdn_chain_take(&ch.v_new, "v_new");
    c->t[CO_H] = gdn_chain_take(&ch.h, "h");
    c->t[CO_G] = gdn_chain_take(&ch.gc, "g");
    gdn_chain_free(&ch);
    if (gdn_alloc(c, CO_Q, 4, s.B, s.T, s.Hg, s.K, 0, err, errlen)) return -1;
    gdn_gen_qk(c->t[CO_Q], c->seed, 0);
    return gdn_alloc(c, CO_O, 4, s.B, s.T, s.H, s.V, 0, err, errlen);
}

static int chunk_o_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_shape s = gdn_shape_of(c);
    return gdn_chunk_o_ref(kind, s, gdn_view_tensor(c->t[CO_Q]), gdn_view_tensor(c->t[CO_K]),
                           gdn_view_tensor(c->t[CO_VNEW]), gdn_view_tensor(c->t[CO_H]), gdn_view_tensor(c->t[CO_G]),
                           gdn_scale(s), gdn_sink_f64(out[CO_O]));
}

static int chunk_o_nstages(const op_case *c) { return 1; }

static int chunk_o_launch(const op_case *c, int stage, op_launch *l) {
    gdn_shape s = gdn_shape_of(c);
    gdn_launch_chunk_o(s, l, gdn_scale(s), CO_Q, CO_K, CO_VNEW, CO_H, CO_G, CO_O);
    return 0;
}

static double chunk_o_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_chunk_o, dim);
    double per_token = 4.0 * s.Hg * s.K + 2.0 * s.H * s.V + 4.0 * s.H + 2.0 * s.H * s.V;
    return (double)s.B * (s.T * per_token + 2.0 * s.NT * s.H * s.V * s.K);
}

static double chunk_o_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_chunk_o, dim);
    return (double)s.B * s.H * gdn_chunk_o_head_flops(s);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const chunk_o_shapes[CO_NBUFS] = {
    [CO_Q] = "B,T,Hg,K",
    [CO_K] = "B,T,Hg,K",
    [CO_VNEW] = "B,T,H,V",
    [CO_H] = "B,*,H,V,K",
    [CO_G] = "B,T,H",
    [CO_O] = "B,T,H,V",
};

const op_desc op_chunk_o = {
    .name = "chunk_o",
    .group = "gdn",
    .summary = "o = scale (exp(gc) h q + causal (q k^T gated) v_new) per chunk (pipeline step 6)",
    .dims = chunk_o_dims,
    .ndims = 7,
    .bufs = chunk_o_bufs,
    .nbufs = CO_NBUFS,
    .validate = chunk_o_validate,
    .setup = chunk_o_setup,
    .reference = chunk_o_reference,
    .nstages = chunk_o_nstages,
    .launch = chunk_o_launch,
    .shapes = chunk_o_shapes,
    .bytes = chunk_o_bytes,
    .flops = chunk_o_flops,
};
