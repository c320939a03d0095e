/* solve_tril.c — op `solve_tril`: Ai = (I + A)^-1 per chunk, A strictly lower (pipeline step 3).
 *
 * ABI: chunk_tri_solve_invert_f32 — 0 A_strict f32[B,T,H,BT], 1 A_inv f32[B,T,H,BT],
 *   2 params u32[4] = {B,T,H,BT}; threadgroup memory (0) 2*BT*BT*4 bytes;
 *   grid (NT, H, B), BT threads.  mlx-native's version computes NT = T/BT (full chunks
 *   only); ours handles the partial last chunk as a smaller block.
 * Input: A = the parity kkt of generated k, beta and cumsummed g (what the pipeline
 * feeds this stage).  Bytes: A read once, Ai written once.  Flops: forward
 * substitution of an n x n unit-lower inverse, n(n^2-1)/3 per chunk. */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { ST_A, ST_AI, ST_NBUFS };

static const op_dim solve_tril_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    {"Hg", NULL, 16, 1, 4096, "key heads of the kkt that makes the input"},
    GDN_DIM_H,
    {"K", "Dk", 128, 1, 1024, "key head dim of the kkt that makes the input (64, 128, 256)"},
    GDN_DIM_BT,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128:
 *   PARITY vs F64 (same f32 A): max|d| 1.8e-8, rel_l2 3.8e-9 -> F64 tol atol 1e-4,
 *     rtol 1e-4, rel_l2 1e-5 (loose: only f32 rounding of the substitution).
 *   the exact inverse rounded to f32 (a kernel with other sums) vs PARITY: max|d|
 *     1.5e-8 -> parity tol atol 2e-5, rtol 2e-5, rel_l2 1e-5 (worst/tol 7e-4).
 *     Ai stored as bf16 (FLA's dtype) lands at worst/tol 30: fails. */
static const op_buf solve_tril_bufs[ST_NBUFS] = {
    [ST_A] = {"A", BUF_IN, DT_F32, "A,A_strict,a_strict", {{0}}},
    [ST_AI] = {"Ai", BUF_OUT, DT_F32, "Ai,A_inv,a_inv", {{1e-4, 1e-4, 1e-5}, {2e-5, 2e-5, 1e-5}}},
};

extern const op_desc op_solve_tril;

static int solve_tril_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_solve_tril, dim, err, errlen);
}

static int solve_tril_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    if (gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_KKT, err, errlen)) return -1;
    c->t[ST_A] = gdn_chain_take(&ch.A, "A");
    gdn_chain_free(&ch);
    return gdn_alloc(c, ST_AI, 4, s.B, s.T, s.H, s.BT, 0, err, errlen);
}

static int solve_tril_reference(const op_case *c, ref_kind kind, double **out) {
    return gdn_solve_tril_ref(kind, gdn_shape_of(c), gdn_view_tensor(c->t[ST_A]), gdn_sink_f64(out[ST_AI]));
}

static int solve_tril_nstages(const op_case *c) { return 1; }

static int solve_tril_launch(const op_case *c, int stage, op_launch *l) {
    gdn_launch_solve_tril(gdn_shape_of(c), l, ST_A, ST_AI);
    return 0;
}

static double solve_tril_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_solve_tril, dim);
    return 8.0 * s.B * s.T * s.H * s.BT;
}

static double solve_tril_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_solve_tril, dim);
    return (double)s.B * s.H * gdn_solve_tril_head_flops(s);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const solve_tril_shapes[ST_NBUFS] = {
    [ST_A] = "B,T,H,BT",
    [ST_AI] = "B,T,H,BT",
};

const op_desc op_solve_tril = {
    .name = "solve_tril",
    .group = "gdn",
    .summary = "Ai = (I + A)^-1 per chunk, A strictly lower (pipeline step 3)",
    .dims = solve_tril_dims,
    .ndims = 6,
    .bufs = solve_tril_bufs,
    .nbufs = ST_NBUFS,
    .validate = solve_tril_validate,
    .setup = solve_tril_setup,
    .reference = solve_tril_reference,
    .nstages = solve_tril_nstages,
    .launch = solve_tril_launch,
    .shapes = solve_tril_shapes,
    .bytes = solve_tril_bytes,
    .flops = solve_tril_flops,
};
