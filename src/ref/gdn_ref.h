/* gdn_ref.h — CPU references of the Gated DeltaNet ops (kernels.md), on plain arrays.
 *
 * Two flavours of each: `kind == REF_F64` is the ideal (double throughout, no
 * rounding); `REF_PARITY` computes in f32 and rounds to bf16 exactly where
 * FLA/mlx-native do.  Layouts are the mlx-native ABI's.  Work is spread over
 * (batch, head[, chunk or value rows]) with parallel_for.
 *
 * Arrays are passed as views (data + dtype) so one function serves an op's tensors
 * (bf16/f32 in their ABI dtype), the runner's double outputs, and stage chains that
 * keep intermediates in double (f64 chain) or in their ABI dtype (parity chain:
 * every parity value is exactly representable in its ABI dtype, so storing it there
 * loses nothing).
 *
 * Parity rounding points (each a bf16 round-to-nearest-even of an f32 value):
 *   kkt        bf16(k*beta) before the k.k dot; A stays f32
 *   solve_tril none (f32 forward substitution)
 *   wy         bf16(v*beta), bf16(k*beta*exp(gc)) before the Ai products; w, u bf16
 *   chunk_h    h = bf16(S); v_new = bf16(u - w.S) (S f32); bf16(v_new_f32*exp(gl-gc))
 *              before the state update; S and final f32
 *   chunk_o    bf16 of the gated, masked q.k matrix before the product with v_new; o bf16
 *   l2norm     y = bf16(x / sqrt(sum x^2 + 1e-6)) (FLA l2norm_fwd keeps the input dtype)
 * Dot products accumulate in f32 in ascending index order.
 *
 * All functions return 0, or -1 when scratch memory cannot be allocated. */
#ifndef GDN_REF_GDN_REF_H
#define GDN_REF_GDN_REF_H

#include <stdint.h>

#include "core/tensor.h"
#include "ref/ref_kind.h"

/* The GDN dimensions the references work on; dims an op lacks are 0 (V for kkt, ...).
 * NT = ceil(T / BT), the number of chunks.  The ops fill it from their case
 * (gdn_shape_of, ops/gdn_common.h). */
typedef struct gdn_shape {
    int64_t B, T, Hg, H, K, V, BT, NT;
} gdn_shape;

/* A read-only array of some dtype, and a written one. */
typedef struct gdn_view {
    const void *data;
    dtype dt;
} gdn_view;

typedef struct gdn_sink {
    void *data;
    dtype dt;
} gdn_sink;

gdn_view gdn_view_tensor(const tensor *t);
gdn_view gdn_view_f64(const double *p);
gdn_sink gdn_sink_tensor(tensor *t);
gdn_sink gdn_sink_f64(double *p);

/* The l2norm epsilon of FLA (added to the sum of squares) and kernels.md. */
#define GDN_L2NORM_EPS 1e-6

/* g f32[B,T,H] -> gc[B,T,H]: inclusive cumulative sum restarting every BT tokens. */
void gdn_cumsum_ref(ref_kind kind, const float *g, double *gc, int64_t B, int64_t T, int64_t H, int64_t BT);

/* Same, on views (for stage chains). */
int gdn_cumsum_view_ref(ref_kind kind, gdn_shape s, gdn_view g, gdn_sink gc);

/* Per-row L2 normalisation of x[rows, d]: y = x / sqrt(sum x^2 + 1e-6).
 * PARITY: f32 math, y rounded to bf16. */
int gdn_l2norm_ref(ref_kind kind, gdn_view x, gdn_sink y, int64_t rows, int64_t d);

/* kkt: k[B,T,Hg,K], beta[B,T,H], gc[B,T,H] (cumsummed) -> A[B,T,H,BT]:
 * A[i,j] = beta_i (k_i . k_j) exp(gc_i - gc_j) for j < i in the chunk, else 0. */
int gdn_kkt_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view beta, gdn_view gc, gdn_sink A);

/* solve_tril: A[B,T,H,BT] strictly lower per chunk -> Ai = (I + A)^-1 (per chunk). */
int gdn_solve_tril_ref(ref_kind kind, gdn_shape s, gdn_view A, gdn_sink Ai);

/* wy: w[B,T,H,K] = Ai (beta exp(gc) k), u[B,T,H,V] = Ai (beta v), per chunk. */
int gdn_wy_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view v, gdn_view beta, gdn_view gc, gdn_view Ai,
               gdn_sink w, gdn_sink u);

/* chunk_h: inter-chunk state.  h0/final [B,H,V,K]; h [B,NT,H,V,K] = state entering
 * each chunk; v_new[B,T,H,V] = u - w S^T. */
int gdn_chunk_h_ref(ref_kind kind, gdn_shape s, gdn_view k, gdn_view w, gdn_view u, gdn_view gc, gdn_view h0,
                    gdn_sink h, gdn_sink v_new, gdn_sink final);

/* chunk_o: o[B,T,H,V] = scale (exp(gc_t) h[c] q_t + sum_{j<=t} (q_t.k_j) exp(gc_t-gc_j) v_new_j). */
int gdn_chunk_o_ref(ref_kind kind, gdn_shape s, gdn_view q, gdn_view k, gdn_view v_new, gdn_view h, gdn_view gc,
                    double scale, gdn_sink o);

/* The chunked pipeline: optional l2norm of q,k, then cumsum, kkt, solve_tril, wy,
 * chunk_h, chunk_o, with intermediates kept in double (F64) or in their ABI dtypes
 * (PARITY: the rounding points listed above).  g is the raw log decay. */
int gdn_chunk_pipeline_ref(ref_kind kind, gdn_shape s, int l2norm, gdn_view q, gdn_view k, gdn_view v, gdn_view g,
                           gdn_view beta, gdn_view h0, double scale, gdn_sink o, gdn_sink final);

/* The token recurrence (kernels.md "The recurrence"), per (b, h):
 *   S = a_t S;  S += beta_t (v_t - S k_t) k_t^T;  o_t = scale S q_t
 * with a_t = exp(g_sign * g_t).  q,k [B,T,Hg,K], v [B,T,H,V], g/beta [B,T,H],
 * h0/final [B,H,V,K], o [B,T,H,V].
 * F64: the ideal.  PARITY: f32 in the order of mlx-native's decode kernel (decay,
 * S.k, delta = (v - S.k) beta, update, S.q) with q pre-multiplied by scale in f32
 * (FLA fused_recurrent); o rounded to bf16 when o_bf16, else kept f32. */
typedef struct gdn_recurrence_args {
    gdn_shape s;      /* B, T, Hg, H, K, V used */
    gdn_view q, k, v, g, beta, h0;
    int l2norm;       /* normalise q, k rows first (f32 without rounding in PARITY) */
    int gqa_tiled;    /* key head = h % Hg (llama.cpp / mlx-native decode) instead of h / (H/Hg) */
    double g_sign;    /* +1: g is a log decay (FLA); -1: g is a positive rate (mlx-native decode) */
    double scale;
    int o_bf16;
    gdn_sink o, final;
} gdn_recurrence_args;

int gdn_recurrence_ref(ref_kind kind, const gdn_recurrence_args *a);

#endif
