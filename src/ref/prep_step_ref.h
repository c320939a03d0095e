/* prep_step_ref.h — CPU reference of the fused Qwen3.5/3.6 GDN decode step
 * (kernels.md "Fused decode prep_step"), for one token or a sequence of N tokens.
 *
 * Per token, batch b and value head h (key head hk = h / (Hv/Hk)):
 *   q = rmsnorm(conv_out[q | hk]) * q_norm_weight[hk], k likewise (eps 1e-6, over Dk);
 *   v = conv_out[v | h];  g = exp(-exp(a_log[h]) * softplus(a_raw + dt_bias[h]));
 *   beta = sigmoid(b_raw);  S = g*S;  S += beta * (v - S k) k^T;  y = S q.
 * Layouts (token-major so one token's slice is contiguous):
 *   conv_out [N,B,2*Hk*Dk + Hv*Dv] (q | k | v), a_raw, b_raw [N,B,Hv], a_log, dt_bias
 *   [Hv], q/k_norm_weight [Hk*Dk], state_in/out [B,Hv,Dv,Dk], y [N,B,Hv,Dv].
 * REF_F64 computes in double; REF_PARITY in f32 with the kernel's reduction order
 * (shaders/prep_step.metal: lane l of 32 sums elements l, l+32, ... in order, then a
 * butterfly over lanes with offsets 16, 8, 4, 2, 1). */
#ifndef GDN_REF_PREP_STEP_REF_H
#define GDN_REF_PREP_STEP_REF_H

#include <stdint.h>

#include "ref/ref_kind.h"

typedef struct prep_shape {
    int64_t B, Hk, Hv, Dk, Dv, N;
} prep_shape;

#define PREP_RMS_EPS 1e-6

/* Returns 0, or -1 when scratch memory ran out. */
int prep_seq_ref(ref_kind kind, const prep_shape *s, const float *conv_out, const float *a_log,
                 const float *dt_bias, const float *a_raw, const float *b_raw, const float *q_norm_weight,
                 const float *k_norm_weight, const float *state_in, double *state_out, double *y);

/* The 32-lane butterfly sum of the parity reference (lane 0's result). */
float prep_simd_sum_f32(const float *lanes);

#endif
