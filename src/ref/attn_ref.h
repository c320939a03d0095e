/* attn_ref.h — CPU references of flash attention forward and backward (kernels.md
 * "flash_attn_train_bwd_bf16_d{64,256}"), on plain double arrays.
 *
 * Layouts: Q, O, dO, dQ [B,Hq,qL,D]; K, V, dK, dV [B,Hkv,kL,D]; L, D_vec [B,Hq,qL].
 * Query head h reads key/value head h / (Hq/Hkv) (GQA); dK/dV sum over the group.
 * Causal masks are bottom-right aligned: key j is visible to query i when
 * j <= i + kL - qL.  scale multiplies the scores; L is the natural-log logsumexp of
 * the scaled, masked scores.  Both return 0, or -1 when scratch memory ran out.
 *
 * Inputs are doubles so tests can perturb them for finite differences; the ops
 * convert their bf16 tensors once (exactly).  REF_F64 computes in double throughout;
 * REF_PARITY accumulates in f32 like our kernels and rounds O to bf16 (the kernel
 * stores O as bf16); the gradients stay f32. */
#ifndef GDN_REF_ATTN_REF_H
#define GDN_REF_ATTN_REF_H

#include <stdint.h>

#include "ref/ref_kind.h"

typedef struct attn_shape {
    int64_t B, Hq, Hkv, qL, kL, D;
    int causal;
    double scale;
} attn_shape;

/* 1 when key j is visible to query i under s's mask. */
static inline int attn_visible(const attn_shape *s, int64_t i, int64_t j) {
    return !s->causal || j <= i + s->kL - s->qL;
}

/* O [B,Hq,qL,D] and L [B,Hq,qL] from Q, K, V.  A query that sees no key (only
 * possible with causal and qL > kL, which the ops reject) gets O = 0, L = -inf. */
int attn_fwd_ref(ref_kind kind, const attn_shape *s, const double *Q, const double *K, const double *V, double *O,
                 double *L);

/* D_vec[b,h,i] = sum_d O[b,h,i,d] * dO[b,h,i,d] (in double). */
void attn_dvec_ref(const attn_shape *s, const double *O, const double *dO, double *Dvec);

/* dQ, dK, dV from Q, K, V, dO and the forward's L and D_vec:
 *   P = exp(scale*QK^T - L) (masked), dV = P^T dO, dP = dO V^T, dS = P*(dP - D_vec),
 *   dQ = scale*dS K, dK = scale*dS^T Q, dK/dV summed over each GQA group. */
int attn_bwd_ref(ref_kind kind, const attn_shape *s, const double *Q, const double *K, const double *V,
                 const double *dO, const double *L, const double *Dvec, double *dQ, double *dK, double *dV);

#endif
