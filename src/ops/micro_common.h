/* micro_common.h — what the micro-benchmark ops (micro_*.c) share.
 *
 * Micro ops measure one property of a chip (launch cost, copy bandwidth, ALU
 * rate...).  Their kernels still compute something the runner checks against a CPU
 * reference, so a broken or skipped kernel can never pass as a fast one; the inputs
 * are chosen so that every correct implementation gets the exact same bits
 * (tolerances are 0 unless a file says otherwise). */
#ifndef GDN_OPS_MICRO_COMMON_H
#define GDN_OPS_MICRO_COMMON_H

#include "ops/op.h"

/* Allocates bufs[i] of the case with a 1-D shape {n} (n may be 0: an unused buffer). */
int micro_alloc1(op_case *c, int i, int64_t n, char *err, size_t errlen);

/* Fills an f32 tensor with uniform values in [-1, 1) quantised to 2^-20, fast
 * enough for 1 GiB; stream (seed, tensor name). */
void micro_fill_uniform(tensor *t, uint64_t seed);
/* Fills an f32 tensor with integers in [lo, hi]: sums of them are exact in f32. */
void micro_fill_small_ints(tensor *t, uint64_t seed, int lo, int hi);
/* Fills a u32 tensor with values below 2^24. */
void micro_fill_u32(tensor *t, uint64_t seed);

/* Threadgroups to cover n items at per_group items each. */
static inline uint32_t micro_groups(int64_t n, int64_t per_group) { return (uint32_t)((n + per_group - 1) / per_group); }

#endif
