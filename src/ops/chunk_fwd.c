/* chunk_fwd.c — op `chunk_fwd`: the whole chunked forward pipeline (FLA
 * chunk_gated_delta_rule_fwd), one dispatch per stage.
 *
 * Inputs q, k bf16[B,T,Hg,K], v bf16[B,T,H,V], g f32[B,T,H] (raw log decay, not
 * cumsummed), beta f32[B,T,H], h0 f32[B,H,V,K]; outputs o bf16[B,T,H,V] and
 * final f32[B,H,V,K].  Intermediates are BUF_SCRATCH tensors in their stage ABI
 * dtypes/shapes; stage s of launch() binds them exactly like the single-stage ops:
 *   [l2norm (only with --l2norm 1): q,k -> q_l2,k_l2]  cumsum: g -> g_cumsum
 *   kkt -> A   solve_tril: A -> Ai   wy -> w, u   chunk_h -> h, v_new, final
 *   chunk_o -> o
 * With l2norm=1, q and k are generated unnormalised (N(0,1)) and every later stage
 * reads q_l2/k_l2; with l2norm=0 they are unit rows and q_l2/k_l2 go unused.
 * References: F64 = the f64 token recurrence (the ideal); PARITY = the parity
 * stage references chained with intermediates in their ABI dtypes.
 * Bytes: the op's inputs once and outputs once (scratch traffic is not "minimum").
 * Flops: the sum of the stages' useful flops (+ 3K per q/k row for l2norm). */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

/* The whole-forward tensors first, in gdn_forward_io_setup's order; then scratch. */
enum {
    CF_Q = GDN_FWD_Q, CF_K = GDN_FWD_K, CF_V = GDN_FWD_V, CF_G = GDN_FWD_G, CF_BETA = GDN_FWD_BETA,
    CF_H0 = GDN_FWD_H0, CF_O = GDN_FWD_O, CF_FINAL = GDN_FWD_FINAL,
    CF_GC = GDN_FWD_NBUFS, CF_A, CF_AI, CF_W, CF_U, CF_H, CF_VNEW, CF_QL2, CF_KL2, CF_NBUFS
};

static const op_dim chunk_fwd_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
    GDN_DIM_BT,
    {"l2norm", NULL, 0, 0, 1, "1: L2-normalise q and k first (eps 1e-6), as use_qk_l2norm_in_kernel"},
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY (the chain) vs F64 (the recurrence): o max|d| 5.6e-4 rel_l2 3.5e-3;
 *     final max|d| 4.5e-3 rel_l2 2.9e-3 (kernels.md: FLA lands ~3e-3) -> F64 tol
 *     o atol 3e-3 rtol 3e-2, final atol 2e-2 rtol 3e-2, rel_l2 8e-3.
 *   kernel-like (K order reversed; g moved 1 f32 ulp) vs PARITY: o rel_l2 3.9e-5.
 *   mlx-native's FLA fixture vs PARITY: o rel_l2 1e-6, final 3e-6.
 *   Ai rounded to bf16 between stages (FLA's dtype): o rel_l2 1.2e-3 -> fails; the
 *   ideal recurrence rounded to bf16: o rel_l2 3.8e-3 -> fails.
 * PARITY bounds of the bf16 outputs: GDN_BF16_PARITY_TOL (gdn_common.h). */
static const op_buf chunk_fwd_bufs[CF_NBUFS] = {
    [CF_Q] = {"q", BUF_IN, DT_BF16, "q", {{0}}},
    [CF_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [CF_V] = {"v", BUF_IN, DT_BF16, "v", {{0}}},
    [CF_G] = {"g", BUF_IN, DT_F32, "g,g_log_decay,g_in", {{0}}},
    [CF_BETA] = {"beta", BUF_IN, DT_F32, "beta", {{0}}},
    [CF_H0] = {"h0", BUF_IN, DT_F32, "h0,initial_state", {{0}}},
    [CF_O] = {"o", BUF_OUT, DT_BF16, "o", {{3e-3, 3e-2, 8e-3}, GDN_BF16_PARITY_TOL(2e-4)}},
    [CF_FINAL] = {"final", BUF_OUT, DT_F32, "final,final_state", {{2e-2, 3e-2, 8e-3}, {2e-3, 1e-2, 2e-4}}},
    [CF_GC] = {"g_cumsum", BUF_SCRATCH, DT_F32, NULL, {{0}}},
    [CF_A] = {"A", BUF_SCRATCH, DT_F32, NULL, {{0}}},
    [CF_AI] = {"Ai", BUF_SCRATCH, DT_F32, NULL, {{0}}},
    [CF_W] = {"w", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
    [CF_U] = {"u", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
    [CF_H] = {"h", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
    [CF_VNEW] = {"v_new", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
    [CF_QL2] = {"q_l2", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
    [CF_KL2] = {"k_l2", BUF_SCRATCH, DT_BF16, NULL, {{0}}},
};

extern const op_desc op_chunk_fwd;

static int chunk_fwd_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_chunk_fwd, dim, err, errlen);
}

static int chunk_fwd_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    int l2 = (int)op_dimv(c, "l2norm");
    if (gdn_forward_io_setup(c, l2, err, errlen)) return -1;
    struct {
        int buf, ndim;
        int64_t d[5];
    } shapes[] = {
        {CF_GC, 3, {s.B, s.T, s.H}},         {CF_A, 4, {s.B, s.T, s.H, s.BT}},
        {CF_AI, 4, {s.B, s.T, s.H, s.BT}},   {CF_W, 4, {s.B, s.T, s.H, s.K}},
        {CF_U, 4, {s.B, s.T, s.H, s.V}},     {CF_H, 5, {s.B, s.NT, s.H, s.V, s.K}},
        {CF_VNEW, 4, {s.B, s.T, s.H, s.V}},  {CF_QL2, 4, {s.B, s.T, s.Hg, s.K}},
        {CF_KL2, 4, {s.B, s.T, s.Hg, s.K}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t *d = shapes[i].d;
        if (gdn_alloc(c, shapes[i].buf, shapes[i].ndim, d[0], d[1], d[2], d[3], d[4], err, errlen)) return -1;
    }
    return 0;
}

static int chunk_fwd_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_shape s = gdn_shape_of(c);
    int l2 = (int)op_dimv(c, "l2norm");
    if (kind == REF_PARITY)
        return gdn_chunk_pipeline_ref(kind, s, l2, gdn_view_tensor(c->t[CF_Q]), gdn_view_tensor(c->t[CF_K]),
                                      gdn_view_tensor(c->t[CF_V]), gdn_view_tensor(c->t[CF_G]),
                                      gdn_view_tensor(c->t[CF_BETA]), gdn_view_tensor(c->t[CF_H0]), gdn_scale(s),
                                      gdn_sink_f64(out[CF_O]), gdn_sink_f64(out[CF_FINAL]));
    gdn_recurrence_args a = gdn_forward_recurrence_args(c, l2, out);
    return gdn_recurrence_ref(kind, &a);
}

static int chunk_fwd_nstages(const op_case *c) { return 6 + (int)op_dimv(c, "l2norm"); }

static int chunk_fwd_launch(const op_case *c, int stage, op_launch *l) {
    gdn_shape s = gdn_shape_of(c);
    int l2 = (int)op_dimv(c, "l2norm");
    int q = l2 ? CF_QL2 : CF_Q, k = l2 ? CF_KL2 : CF_K;
    if (l2 && stage == 0) {
        gdn_launch_l2norm(s, l, CF_Q, CF_K, CF_QL2, CF_KL2);
        return 0;
    }
    switch (stage - l2) {
    case 0: gdn_launch_cumsum(s, l, CF_G, CF_GC); return 0;
    case 1: gdn_launch_kkt(s, l, k, CF_BETA, CF_GC, CF_A); return 0;
    case 2: gdn_launch_solve_tril(s, l, CF_A, CF_AI); return 0;
    case 3: gdn_launch_wy(s, l, k, CF_V, CF_BETA, CF_GC, CF_AI, CF_W, CF_U); return 0;
    case 4: gdn_launch_chunk_h(s, l, k, CF_W, CF_U, CF_GC, CF_H0, CF_H, CF_VNEW, CF_FINAL); return 0;
    case 5: gdn_launch_chunk_o(s, l, gdn_scale(s), q, k, CF_VNEW, CF_H, CF_GC, CF_O); return 0;
    default: return -1;
    }
}

static double chunk_fwd_bytes(const int64_t *dim) {
    return gdn_forward_bytes(gdn_shape_from_dims(&op_chunk_fwd, dim));
}

/* Per head: cumsum's one add per token, then the stages' own counts. */
static double chunk_fwd_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_chunk_fwd, dim);
    int l2 = (int)dim[op_dim_index(&op_chunk_fwd, "l2norm")];
    double T = (double)s.T, K = (double)s.K;
    double per_head = T + gdn_kkt_head_flops(s) + gdn_solve_tril_head_flops(s) + gdn_wy_head_flops(s) +
                      gdn_chunk_h_head_flops(s) + gdn_chunk_o_head_flops(s);
    return (double)s.B * (s.H * per_head + (l2 ? 2.0 * T * s.Hg * 3 * K : 0.0));
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const chunk_fwd_shapes[CF_NBUFS] = {
    [CF_Q] = "B,T,Hg,K",
    [CF_K] = "B,T,Hg,K",
    [CF_V] = "B,T,H,V",
    [CF_G] = "B,T,H",
    [CF_BETA] = "B,T,H",
    [CF_H0] = "B,H,V,K",
    [CF_O] = "B,T,H,V",
    [CF_FINAL] = "B,H,V,K",
};

const op_desc op_chunk_fwd = {
    .name = "chunk_fwd",
    .group = "gdn",
    .summary = "the whole chunked GDN forward: [l2norm], cumsum, kkt, solve_tril, wy, chunk_h, chunk_o",
    .dims = chunk_fwd_dims,
    .ndims = 8,
    .bufs = chunk_fwd_bufs,
    .nbufs = CF_NBUFS,
    .validate = chunk_fwd_validate,
    .setup = chunk_fwd_setup,
    .reference = chunk_fwd_reference,
    .nstages = chunk_fwd_nstages,
    .launch = chunk_fwd_launch,
    .shapes = chunk_fwd_shapes,
    .bytes = chunk_fwd_bytes,
    .flops = chunk_fwd_flops,
};
