/* gdn_common.h — what the Gated DeltaNet ops share: dimension set, validity rules,
 * realistic input generators (kernels.md "Realistic synthetic inputs").
 *
 * Every GDN op file includes this; the math itself lives in src/ref/gdn_ref.h. */
#ifndef GDN_OPS_GDN_COMMON_H
#define GDN_OPS_GDN_COMMON_H

#include "core/rng.h"
#include "ops/op.h"
#include "ref/gdn_ref.h"

/* Entries of the GDN ops' dimension tables (defaults: a Qwen3.5-class layer at a 4K
 * prefill), shared so every op names, bounds and documents a dimension the same way. */
#define GDN_DIM_B {"B", NULL, 1, 1, 1024, "batch"}
#define GDN_DIM_T {"T", NULL, 4096, 1, 1 << 24, "tokens"}
#define GDN_DIM_HG {"Hg", NULL, 16, 1, 4096, "key heads"}
#define GDN_DIM_H {"H", NULL, 32, 1, 4096, "value heads (multiple of Hg)"}
#define GDN_DIM_K {"K", "Dk", 128, 1, 1024, "key head dim (64, 128, 256)"}
#define GDN_DIM_V {"V", "Dv", 128, 1, 1024, "value head dim (64, 128, 256)"}
#define GDN_DIM_BT {"BT", NULL, 64, 1, 1024, "chunk length (64 only)"}

/* The PARITY tolerance (op_tol) of a bf16 output of a chunked GDN op, atol its own:
 * rel_l2 2e-4 sits between correct-kernel noise (<= 4e-5: sparse 1-ulp flips) and a
 * moved/dropped bf16 rounding (>= 5e-4); rtol 1.6e-2 is ~2 bf16 ulps per element. */
#define GDN_BF16_PARITY_TOL(atol) {atol, 1.6e-2, 2e-4}

/* The GDN dimensions of a case (the references' gdn_shape, ref/gdn_ref.h). */
gdn_shape gdn_shape_of(const op_case *c);
gdn_shape gdn_shape_from_dims(const op_desc *op, const int64_t *dim);

/* Shared validity rules: T >= 1, H % Hg == 0, BT == 64, K/V in the supported set
 * (when the op has them).  Writes a one-line error naming the flag. */
int gdn_validate_common(const op_desc *op, const int64_t *dim, char *err, size_t errlen);

/* Generators: each fills a tensor from its own stream of (seed, tensor name). */
void gdn_gen_normal(tensor *t, uint64_t seed, double stddev);
/* q/k: N(0,1) then L2-normalised over the last dim (the head dim). */
void gdn_gen_unit_rows(tensor *t, uint64_t seed);
/* g: per-token natural-log decay, logsigmoid of N(2.5, 1.5): mostly near 0, never >0,
 * clamped to [-8, 0). */
void gdn_gen_log_decay(tensor *t, uint64_t seed);
/* beta: sigmoid(N(0, 1)). */
void gdn_gen_beta(tensor *t, uint64_t seed);

/* Input stress profiles (`gdnbench validate`, src/runner/validate_profile.c).
 * While a profile is set on the calling thread, the generators above (and
 * gdn_gen_qk/gdn_gen_h0) draw the tensors it targets from the stressed distribution
 * instead of the realistic one.  Every GDN op makes its raw inputs with these
 * generators and, for a single-stage op, its derived inputs (g_cumsum, A, Ai, w, u,
 * h, v_new) by running the earlier stages' parity references on them
 * (gdn_chain_build), so a stressed g, beta, k or h0 reaches every derived input
 * consistently: kkt's cumsummed g is the cumsum of the stressed log decay. */
typedef enum gdn_stress {
    GDN_STRESS_NONE = 0,
    GDN_STRESS_G_NEAR_ZERO,   /* log decay in [-1e-4, 0): almost no forgetting */
    GDN_STRESS_G_VERY_NEG,    /* log decay in [-21, -19]: gates underflow within a chunk */
    GDN_STRESS_BETA_NEAR_ZERO,/* beta in (0, 1e-3] */
    GDN_STRESS_BETA_NEAR_ONE, /* beta in [1 - 1e-3, 1) */
    GDN_STRESS_K_LARGE,       /* k not unit: rows of norm GDN_STRESS_K_NORM (raw k for l2norm ops x GDN_STRESS_K_RAW) */
    GDN_STRESS_H0_ZERO,       /* initial state exactly 0 */
    GDN_STRESS_H0_LARGE,      /* initial state N(0, GDN_STRESS_H0_STD), 100x the realistic one */
} gdn_stress;

#define GDN_STRESS_K_NORM 2.0
#define GDN_STRESS_K_RAW 32.0
#define GDN_STRESS_H0_STD 10.0

void gdn_set_stress(gdn_stress s);
gdn_stress gdn_current_stress(void);

/* Shorthand: allocate a tensor with up to 5 dims (trailing zeros ignored) for bufs[i]
 * of the case, in the buf's dtype.  Returns -1 (err set) on failure. */
int gdn_alloc(op_case *c, int i, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4,
              char *err, size_t errlen);

#endif
