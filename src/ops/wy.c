/* wy.c — op `wy` (recompute w/u): w = Ai (beta exp(gc) k), u = Ai (beta v) per chunk
 * (pipeline step 4).
 *
 * ABI: gated_delta_net_recompute_wu_bf16 — 0 k bf16[B,T,Hg,K], 1 v bf16[B,T,H,V],
 *   2 beta f32[B,T,H], 3 g f32[B,T,H] (cumsummed), 4 A f32[B,T,H,BT] (= Ai),
 *   5 w bf16[B,T,H,K], 6 u bf16[B,T,H,V], 7 params u32[8] = {B,T,Hg,H,K,V,BT,NT};
 *   threadgroup memory (0) f32[BT,BT] 16 KB, (1) bf16[BT,64] 8 KB;
 *   grid (NT, H, B), 256 threads.
 * Inputs: generated k, v, beta; g cumsummed; Ai = parity solve_tril of the parity kkt.
 * Bytes: each input once, w and u once.  Flops: per chunk n(n+1)(K+V) for the two
 * lower-triangular products plus the operand scaling (2K + V per token). */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { WY_K, WY_V, WY_BETA, WY_G, WY_AI, WY_W, WY_U, WY_NBUFS };

static const op_dim wy_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
    GDN_DIM_BT,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY vs F64: w max|d| 1.7e-3 rel_l2 2.2e-3; u max|d| 2.3e-2 (1.5 ulp of |u|~3)
 *     rel_l2 2.3e-3 -> F64 tol atol 5e-3 (w) / 5e-2 (u), rtol 2e-2, rel_l2 8e-3.
 *   kernel-like (Ai or gc moved 1 f32 ulp) vs PARITY: rel_l2 <= 1.8e-5, max 1 ulp.
 *   Ai rounded to bf16 first: rel_l2 5.8e-4 / 6.5e-4 -> fails rel_l2 2e-4.
 * PARITY bounds of the bf16 outputs: GDN_BF16_PARITY_TOL (gdn_common.h). */
static const op_buf wy_bufs[WY_NBUFS] = {
    [WY_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [WY_V] = {"v", BUF_IN, DT_BF16, "v", {{0}}},
    [WY_BETA] = {"beta", BUF_IN, DT_F32, "beta", {{0}}},
    [WY_G] = {"g", BUF_IN, DT_F32, "g,g_cumsum,gc", {{0}}},
    [WY_AI] = {"Ai", BUF_IN, DT_F32, "Ai,A,A_inv,a_inv", {{0}}},
    [WY_W] = {"w", BUF_OUT, DT_BF16, "w", {{5e-3, 2e-2, 8e-3}, GDN_BF16_PARITY_TOL(1e-3)}},
    [WY_U] = {"u", BUF_OUT, DT_BF16, "u", {{5e-2, 2e-2, 8e-3}, GDN_BF16_PARITY_TOL(1e-2)}},
};

extern const op_desc op_wy;

static int wy_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_wy, dim, err, errlen);
}

static int wy_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    if (gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_SOLVE, err, errlen)) return -1;
    c->t[WY_K] = gdn_chain_take(&ch.k, "k");
    c->t[WY_BETA] = gdn_chain_take(&ch.beta, "beta");
    c->t[WY_G] = gdn_chain_take(&ch.gc, "g");
    c->t[WY_AI] = gdn_chain_take(&ch.Ai, "Ai");
    gdn_chain_free(&ch);
    if (gdn_alloc(c, WY_V, 4, s.B, s.T, s.H, s.V, 0, err, errlen)) return -1;
    gdn_gen_normal(c->t[WY_V], c->seed, 1.0);
    if (gdn_alloc(c, WY_W, 4, s.B, s.T, s.H, s.K, 0, err, errlen)) return -1;
    return gdn_alloc(c, WY_U, 4, s.B, s.T, s.H, s.V, 0, err, errlen);
}

static int wy_reference(const op_case *c, ref_kind kind, double **out) {
    return gdn_wy_ref(kind, gdn_shape_of(c), gdn_view_tensor(c->t[WY_K]), gdn_view_tensor(c->t[WY_V]),
                      gdn_view_tensor(c->t[WY_BETA]), gdn_view_tensor(c->t[WY_G]), gdn_view_tensor(c->t[WY_AI]),
                      gdn_sink_f64(out[WY_W]), gdn_sink_f64(out[WY_U]));
}

static int wy_nstages(const op_case *c) { return 1; }

static int wy_launch(const op_case *c, int stage, op_launch *l) {
    gdn_launch_wy(gdn_shape_of(c), l, WY_K, WY_V, WY_BETA, WY_G, WY_AI, WY_W, WY_U);
    return 0;
}

static double wy_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_wy, dim);
    double per_token = 2.0 * s.Hg * s.K + 2.0 * s.H * s.V + 8.0 * s.H + 4.0 * s.H * s.BT + 2.0 * s.H * s.K +
                       2.0 * s.H * s.V;
    return (double)s.B * s.T * per_token;
}

static double wy_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_wy, dim);
    return (double)s.B * s.H * gdn_wy_head_flops(s);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const wy_shapes[WY_NBUFS] = {
    [WY_K] = "B,T,Hg,K",
    [WY_V] = "B,T,H,V",
    [WY_BETA] = "B,T,H",
    [WY_G] = "B,T,H",
    [WY_AI] = "B,T,H,BT",
    [WY_W] = "B,T,H,K",
    [WY_U] = "B,T,H,V",
};

const op_desc op_wy = {
    .name = "wy",
    .group = "gdn",
    .summary = "w = Ai (beta exp(gc) k), u = Ai (beta v) per chunk (pipeline step 4)",
    .dims = wy_dims,
    .ndims = 7,
    .bufs = wy_bufs,
    .nbufs = WY_NBUFS,
    .validate = wy_validate,
    .setup = wy_setup,
    .reference = wy_reference,
    .nstages = wy_nstages,
    .launch = wy_launch,
    .shapes = wy_shapes,
    .bytes = wy_bytes,
    .flops = wy_flops,
};
