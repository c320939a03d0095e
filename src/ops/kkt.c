/* kkt.c — op `kkt`: A[i,j] = beta_i (k_i . k_j) exp(gc_i - gc_j) for j < i (pipeline step 2).
 *
 * ABI: gated_delta_net_kkt_bf16 — 0 k bf16[B,T,Hg,K], 1 beta f32[B,T,H],
 *   2 g f32[B,T,H] (chunk-cumsummed), 3 A f32[B,T,H,BT], 4 params u32[8] =
 *   {B,T,Hg,H,K,BT,NT,BK=64}; threadgroup memory (0) bf16[BT,BK] 8 KB,
 *   (1) f32[BT,BT] 16 KB; grid (NT, H, B), 256 threads.
 * Inputs: k unit rows, beta, and g = the parity cumsum of a generated log decay.
 * Bytes: k, beta, g read once, A written once.  Flops: per chunk of n tokens, the
 * n(n-1)/2 strictly-lower dots (2K each) plus beta*k (nK) and the gate (3 per entry). */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { KKT_K, KKT_BETA, KKT_G, KKT_A, KKT_NBUFS };

static const op_dim kkt_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_BT,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at T=4096 H=4 Hg=2 K=V=128, seeds 1-2:
 *   PARITY vs F64: max|d| 4.5e-4, rel_l2 1.7e-3 (bf16(k*beta) moves entries ~2^-9
 *     relative) -> F64 tol atol 2e-3, rtol 1e-2, rel_l2 5e-3 (3-4x margin).
 *   kernel-like variants vs PARITY (K order reversed; gc moved 1 f32 ulp): max|d|
 *     1e-7, rel_l2 1e-7 -> parity tol atol 1e-5, rtol 1e-4, rel_l2 1e-5 (worst/tol
 *     0.005).  Skipping bf16(k*beta) lands at worst/tol 35-40: fails. */
static const op_buf kkt_bufs[KKT_NBUFS] = {
    [KKT_K] = {"k", BUF_IN, DT_BF16, "k", {{0}}},
    [KKT_BETA] = {"beta", BUF_IN, DT_F32, "beta", {{0}}},
    [KKT_G] = {"g", BUF_IN, DT_F32, "g,g_cumsum,gc", {{0}}},
    [KKT_A] = {"A", BUF_OUT, DT_F32, "A,A_strict,a_strict", {{2e-3, 1e-2, 5e-3}, {1e-5, 1e-4, 1e-5}}},
};

extern const op_desc op_kkt;

static int kkt_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_kkt, dim, err, errlen);
}

static int kkt_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    if (gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_CUMSUM, err, errlen)) return -1;
    c->t[KKT_K] = gdn_chain_take(&ch.k, "k");
    c->t[KKT_BETA] = gdn_chain_take(&ch.beta, "beta");
    c->t[KKT_G] = gdn_chain_take(&ch.gc, "g");
    gdn_chain_free(&ch);
    return gdn_alloc(c, KKT_A, 4, s.B, s.T, s.H, s.BT, 0, err, errlen);
}

static int kkt_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_shape s = gdn_shape_of(c);
    return gdn_kkt_ref(kind, s, gdn_view_tensor(c->t[KKT_K]), gdn_view_tensor(c->t[KKT_BETA]),
                       gdn_view_tensor(c->t[KKT_G]), gdn_sink_f64(out[KKT_A]));
}

static int kkt_nstages(const op_case *c) { return 1; }

static int kkt_launch(const op_case *c, int stage, op_launch *l) {
    gdn_launch_kkt(gdn_shape_of(c), l, KKT_K, KKT_BETA, KKT_G, KKT_A);
    return 0;
}

static double kkt_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_kkt, dim);
    return (double)s.B * s.T * (2.0 * s.Hg * s.K + 8.0 * s.H + 4.0 * s.H * s.BT);
}

static double kkt_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_kkt, dim);
    return (double)s.B * s.H * gdn_kkt_head_flops(s);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const kkt_shapes[KKT_NBUFS] = {
    [KKT_K] = "B,T,Hg,K",
    [KKT_BETA] = "B,T,H",
    [KKT_G] = "B,T,H",
    [KKT_A] = "B,T,H,BT",
};

const op_desc op_kkt = {
    .name = "kkt",
    .group = "gdn",
    .summary = "A = beta k k^T exp(gc_i - gc_j), strictly lower per chunk (pipeline step 2)",
    .dims = kkt_dims,
    .ndims = 6,
    .bufs = kkt_bufs,
    .nbufs = KKT_NBUFS,
    .validate = kkt_validate,
    .setup = kkt_setup,
    .reference = kkt_reference,
    .nstages = kkt_nstages,
    .launch = kkt_launch,
    .shapes = kkt_shapes,
    .bytes = kkt_bytes,
    .flops = kkt_flops,
};
