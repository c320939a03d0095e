/* attn_common.h — what the flash attention ops (attn_fwd, attn_bwd) share: the
 * dimension set, validity rules, the mlx-native `AttnParams` struct and function
 * constants of kernels.md, and helpers to feed bf16 tensors to the references. */
#ifndef GDN_OPS_ATTN_COMMON_H
#define GDN_OPS_ATTN_COMMON_H

#include <stdint.h>

#include "ops/op.h"
#include "ref/attn_ref.h"

/* Tile sizes of flash_attn_train_bwd_bf16_d* and of our forward kernel. */
enum { ATTN_BQ = 32, ATTN_BK = 16, ATTN_THREADS = 128 };

/* Dimensions, in this order, for both ops: B, Hq (alias H), Hkv, qL, kL, D, causal. */
extern const op_dim attn_dims[];
enum { ATTN_NDIMS = 7 };

attn_shape attn_shape_of(const op_case *c);

/* Hq % Hkv == 0, D in {64, 128, 256}, causal needs qL <= kL (bottom-right alignment
 * would leave the first qL-kL queries with no visible key). */
int attn_validate(const int64_t *dim, char *err, size_t errlen);

/* mlx-native's AttnParams (buffer 10), byte for byte: 160 bytes, int64 strides in
 * elements for [batch, head, row].  O_strides is the layout of O (forward) and of
 * dO/dQ (backward), which is Q's. */
typedef struct attn_params {
    int32_t B, H, D, qL, kL, gqa_factor;
    float scale, softcapping;
    int32_t NQ, NK, NQ_aligned, NK_aligned, qL_rem, kL_rem, qL_off, pad;
    int64_t Q_strides[3], K_strides[3], V_strides[3], O_strides[3];
} attn_params;

attn_params attn_params_of(const attn_shape *s);

/* (query, key) pairs one head computes: qL*kL, or under the causal mask the visible
 * ones; for flop counts. */
double attn_visible_pairs(const int64_t *dim);

/* Fills l's geometry (grid (ceil(qL/32), Hq, B), 128 threads), the AttnParams bytes
 * at buffer 10 and the function constants 200 align_Q, 201 align_K, 300 has_mask
 * (false), 301 do_causal. */
void attn_launch_common(const attn_shape *s, op_launch *l);

/* Allocates [B,H,L,D] (ndim 4) or [B,H,L] (ndim 3) for bufs[i]. */
int attn_alloc(op_case *c, int i, int64_t H, int64_t L, int with_d, char *err, size_t errlen);

/* A double copy of a tensor's values (malloc'd; NULL when out of memory). */
double *attn_tensor_f64(const tensor *t);

#endif
