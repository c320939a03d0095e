/* gdn_ref.h — CPU references of the Gated DeltaNet ops (kernels.md), on plain arrays.
 *
 * Two flavours of each: `kind == REF_F64` is the ideal (double throughout, no
 * rounding); `REF_PARITY` computes in f32 and rounds to bf16 exactly where
 * FLA/mlx-native do.  Layouts are the mlx-native ABI's; results are written as
 * doubles.  Work is spread over (batch, head) with parallel_for. */
#ifndef GDN_REF_GDN_REF_H
#define GDN_REF_GDN_REF_H

#include <stdint.h>

#include "ops/op.h"

/* g f32[B,T,H] -> gc[B,T,H]: inclusive cumulative sum restarting every BT tokens. */
void gdn_cumsum_ref(ref_kind kind, const float *g, double *gc, int64_t B, int64_t T, int64_t H, int64_t BT);

#endif
