/* gdn_stages.h — what the GDN pipeline op files share beyond gdn_common.h:
 *   - the launch (ABI: binds, params, geometry) of each pipeline stage, filled for
 *     given buffer indices so a single-stage op and chunk_fwd bind the same way;
 *   - the realistic input chain: raw inputs generated like kernels.md says, then
 *     the earlier stages' PARITY references run on them, so every stage op sees
 *     exactly what the real pipeline feeds it (kkt gets cumsummed g, wy gets the Ai
 *     of solve_tril, chunk_h gets w/u of wy, chunk_o gets h/v_new of chunk_h);
 *   - chunk-count sums for bytes/flops. */
#ifndef GDN_OPS_GDN_STAGES_H
#define GDN_OPS_GDN_STAGES_H

#include "ops/gdn_common.h"

/* Chunk sub-tile sizes of the mlx-native kernels (kernels.md). */
#define GDN_KKT_BK 64
#define GDN_WY_BKV 64
#define GDN_CHUNK_H_BV 32
#define GDN_CHUNK_O_BK 32
#define GDN_CHUNK_O_BV 32

/* Stage launches; the int arguments are indices into op->bufs / case->t. */
void gdn_launch_cumsum(gdn_shape s, op_launch *l, int g, int gc);
void gdn_launch_l2norm(gdn_shape s, op_launch *l, int q, int k, int q_out, int k_out);
void gdn_launch_kkt(gdn_shape s, op_launch *l, int k, int beta, int gc, int A);
void gdn_launch_solve_tril(gdn_shape s, op_launch *l, int A, int Ai);
void gdn_launch_wy(gdn_shape s, op_launch *l, int k, int v, int beta, int gc, int Ai, int w, int u);
void gdn_launch_chunk_h(gdn_shape s, op_launch *l, int k, int w, int u, int gc, int h0, int h, int v_new, int final);
void gdn_launch_chunk_o(gdn_shape s, op_launch *l, double scale, int q, int k, int v_new, int h, int gc, int o);

/* How far gdn_chain_build runs the pipeline. */
typedef enum gdn_chain_stage {
    GDN_CHAIN_RAW = 0,  /* k, beta, g (raw log decay) */
    GDN_CHAIN_CUMSUM,   /* + gc */
    GDN_CHAIN_KKT,      /* + A */
    GDN_CHAIN_SOLVE,    /* + Ai */
    GDN_CHAIN_WY,       /* + v, w, u */
    GDN_CHAIN_CHUNK_H,  /* + h0, h, v_new, final */
} gdn_chain_stage;

/* Tensors of the realistic chain, in their ABI dtypes and shapes; NULL when not
 * built (or taken).  Generated tensors use the generator streams of their names
 * ("k", "v", "g", "beta", "h0"), so a stage op's inputs are the same numbers the
 * chunk_fwd op generates for that seed. */
typedef struct gdn_chain {
    tensor *k, *v, *g, *beta, *h0, *gc, *A, *Ai, *w, *u, *h, *v_new, *final;
} gdn_chain;

int gdn_chain_build(gdn_chain *ch, gdn_shape s, uint64_t seed, gdn_chain_stage upto, char *err, size_t errlen);
/* Moves *slot out of the chain (renamed to `name`, the op's buffer name). */
tensor *gdn_chain_take(tensor **slot, const char *name);
void gdn_chain_free(gdn_chain *ch);

/* Realistic raw inputs (kernels.md): q/k unit rows bf16 — or N(0,1) rows when the op
 * normalises them itself (l2norm); v N(0,1) bf16; g log decay f32; beta f32; h0
 * N(0, 0.1) f32. */
void gdn_gen_qk(tensor *t, uint64_t seed, int l2norm);
void gdn_gen_h0(tensor *t, uint64_t seed);

/* The tensors of a whole GDN forward (chunk_fwd, recurrent), in this order at the
 * start of the op's bufs: q, k [B,T,Hg,K] bf16; v [B,T,H,V] bf16; g, beta [B,T,H] f32;
 * h0 [B,H,V,K] f32; then the outputs o [B,T,H,V] bf16 and final [B,H,V,K] f32.
 * Allocates the eight and fills the six inputs.  Returns 0, or -1 with err set. */
enum { GDN_FWD_Q, GDN_FWD_K, GDN_FWD_V, GDN_FWD_G, GDN_FWD_BETA, GDN_FWD_H0, GDN_FWD_O, GDN_FWD_FINAL,
       GDN_FWD_NBUFS };
int gdn_forward_io_setup(op_case *c, int l2norm, char *err, size_t errlen);
/* The token recurrence (gdn_recurrence_ref) over those tensors: g a natural-log decay
 * (g_sign +1), scale K^-0.5, q and k L2-normalised first when l2norm; o kept f32
 * (o_bf16 0: the caller sets it where the kernel's o is bf16). */
gdn_recurrence_args gdn_forward_recurrence_args(const op_case *c, int l2norm, double **out);
/* Their minimum traffic: the six inputs read once, o and final written once. */
double gdn_forward_bytes(gdn_shape s);

/* sum over the chunks of T (full chunks of BT and the tail) of f(n). */
double gdn_sum_over_chunks(int64_t T, int64_t BT, double (*f)(double n));

/* Useful flops of one pipeline stage for one (batch, value head), as each stage op's
 * header explains them: the stage op multiplies by B*H, chunk_fwd adds the stages up
 * per head first. */
double gdn_kkt_head_flops(gdn_shape s);
double gdn_solve_tril_head_flops(gdn_shape s);
double gdn_wy_head_flops(gdn_shape s);
double gdn_chunk_h_head_flops(gdn_shape s);
double gdn_chunk_o_head_flops(gdn_shape s);

/* The output scale every GDN op uses: K^-0.5. */
double gdn_scale(gdn_shape s);

#endif
