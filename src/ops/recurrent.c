/* recurrent.c — op `recurrent`: the GDN forward token by token (FLA fused_recurrent).
 *
 * Same inputs and outputs as chunk_fwd.  mlx-native has no bf16 prefill-recurrence
 * kernel with this ABI (its decode kernels are f32 with tiled GQA, see decode.c),
 * so gdnbench defines one:
 *   gated_delta_net_recurrent_bf16 (shaders/gdn_recurrent.metal) —
 *   0 q bf16[B,T,Hg,K], 1 k bf16[B,T,Hg,K], 2 v bf16[B,T,H,V], 3 g f32[B,T,H]
 *   (raw natural-log decay), 4 beta f32[B,T,H], 5 h0 f32[B,H,V,K],
 *   6 o bf16[B,T,H,V], 7 final f32[B,H,V,K],
 *   8 params u32[8] = {B,T,Hg,H,K,V, bits of f32 scale, l2norm (0/1)}.
 *   TG (32, 4, 1): simdgroup y owns state row v = 4*group.x + y, each lane K/32
 *   cells of it; grid (V/4, H, B).  Value head h reads key head h / (H/Hg).
 *   Per token: S *= exp(g); sk = S.k; d = (v - sk) beta; S += d k; o = S.(scale q).
 * References: F64 = the f64 recurrence; PARITY = the same in f32 in that order, q
 * scaled in f32 (and with l2norm normalised in f32, unrounded, as FLA's in-kernel
 * norm), o rounded to bf16.
 * Bytes: inputs once, outputs once.  Flops: 7KV + 3V per token and head. */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

/* The whole-forward tensors first, in gdn_forward_io_setup's order. */
enum {
    RC_Q = GDN_FWD_Q, RC_K = GDN_FWD_K, RC_V = GDN_FWD_V, RC_G = GDN_FWD_G, RC_BETA = GDN_FWD_BETA,
    RC_H0 = GDN_FWD_H0, RC_O = GDN_FWD_O, RC_FINAL = GDN_FWD_FINAL, RC_NBUFS = GDN_FWD_NBUFS
};

static const op_dim recurrent_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
    {"l2norm", NULL, 0, 0, 1, "1: L2-normalise q and k first (eps 1e-6)"},
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY vs F64: o max|d| 2.4e-4 rel_l2 1.7e-3 (bf16 output only); final max|d|
 *     1.1e-7 rel_l2 8.6e-8 (f32 state) -> F64 tol o atol 2e-3 rtol 2e-2 rel_l2 5e-3;
 *     final atol 1e-5 rtol 1e-4 rel_l2 1e-5.
 *   the f64 recurrence rounded to the output dtypes (an exact kernel) vs PARITY:
 *     o rel_l2 2.2e-5, final 8.9e-8 -> parity tol o as below, final as F64.
 * PARITY bounds of the bf16 outputs: GDN_BF16_PARITY_TOL (gdn_common.h). */
static const op_buf recurrent_bufs[RC_NBUFS] = {
    [RC_Q] = {"q", BUF_IN, DT_BF16, "q", {{0}}},
    [RC_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [RC_V] = {"v", BUF_IN, DT_BF16, "v", {{0}}},
    [RC_G] = {"g", BUF_IN, DT_F32, "g,g_log_decay,g_in", {{0}}},
    [RC_BETA] = {"beta", BUF_IN, DT_F32, "beta", {{0}}},
    [RC_H0] = {"h0", BUF_IN, DT_F32, "h0,initial_state", {{0}}},
    [RC_O] = {"o", BUF_OUT, DT_BF16, "o", {{2e-3, 2e-2, 5e-3}, GDN_BF16_PARITY_TOL(2e-4)}},
    [RC_FINAL] = {"final", BUF_OUT, DT_F32, "final,final_state", {{1e-5, 1e-4, 1e-5}, {1e-5, 1e-4, 1e-5}}},
};

extern const op_desc op_recurrent;

static int recurrent_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_recurrent, dim, err, errlen);
}

static int recurrent_setup(op_case *c, char *err, size_t errlen) {
    return gdn_forward_io_setup(c, (int)op_dimv(c, "l2norm"), err, errlen);
}

static int recurrent_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_recurrence_args a = gdn_forward_recurrence_args(c, (int)op_dimv(c, "l2norm"), out);
    a.o_bf16 = 1; /* PARITY rounds o to bf16, as the kernel writes it */
    return gdn_recurrence_ref(kind, &a);
}

static int recurrent_nstages(const op_case *c) { return 1; }

static int recurrent_launch(const op_case *c, int stage, op_launch *l) {
    gdn_shape s = gdn_shape_of(c);
    *l = (op_launch){
        .stage = "recurrent",
        .shader = "shaders/gdn_recurrent.metal",
        .function = "gated_delta_net_recurrent_bf16",
        .grid = {(uint32_t)((s.V + 3) / 4), (uint32_t)s.H, (uint32_t)s.B},
        .tg = {32, 4, 1},
        .nbinds = 8,
        .binds = {{.index = 0, .buf = RC_Q},
                  {.index = 1, .buf = RC_K},
                  {.index = 2, .buf = RC_V},
                  {.index = 3, .buf = RC_G},
                  {.index = 4, .buf = RC_BETA},
                  {.index = 5, .buf = RC_H0},
                  {.index = 6, .buf = RC_O},
                  {.index = 7, .buf = RC_FINAL}},
        .params_index = 8,
        .params = {(uint32_t)s.B, (uint32_t)s.T, (uint32_t)s.Hg, (uint32_t)s.H, (uint32_t)s.K, (uint32_t)s.V,
                   f32_bits((float)gdn_scale(s)), (uint32_t)op_dimv(c, "l2norm")},
        .nparams = 8,
    };
    return 0;
}

static double recurrent_bytes(const int64_t *dim) {
    return gdn_forward_bytes(gdn_shape_from_dims(&op_recurrent, dim));
}

static double recurrent_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_recurrent, dim);
    int l2 = (int)dim[op_dim_index(&op_recurrent, "l2norm")];
    return (double)s.B * s.T * (s.H * (7.0 * s.K * s.V + 3.0 * s.V) + (l2 ? 6.0 * s.Hg * s.K : 0.0));
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const recurrent_shapes[RC_NBUFS] = {
    [RC_Q] = "B,T,Hg,K",
    [RC_K] = "B,T,Hg,K",
    [RC_V] = "B,T,H,V",
    [RC_G] = "B,T,H",
    [RC_BETA] = "B,T,H",
    [RC_H0] = "B,H,V,K",
    [RC_O] = "B,T,H,V",
    [RC_FINAL] = "B,H,V,K",
};

const op_desc op_recurrent = {
    .name = "recurrent",
    .group = "gdn",
    .summary = "the GDN forward token by token (bf16 in/out, f32 state)",
    .dims = recurrent_dims,
    .ndims = 7,
    .bufs = recurrent_bufs,
    .nbufs = RC_NBUFS,
    .validate = recurrent_validate,
    .setup = recurrent_setup,
    .reference = recurrent_reference,
    .nstages = recurrent_nstages,
    .launch = recurrent_launch,
    .shapes = recurrent_shapes,
    .bytes = recurrent_bytes,
    .flops = recurrent_flops,
};
