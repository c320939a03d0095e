/* attn_fwd.c — op `attn_fwd`: flash attention forward, bf16 in, O bf16 and L f32 out.
 *
 * Our own kernel (shaders/flash_attn.metal, flash_attn_fwd_bf16_d{64,128,256}) with
 * the mlx-native attention ABI (kernels.md): 0 Q bf16[B,Hq,qL,D], 1 K bf16[B,Hkv,kL,D],
 * 2 V bf16, 3 O bf16[B,Hq,qL,D], 4 L f32[B,Hq,qL] (natural-log logsumexp of the scaled
 * scores, what attn_bwd takes), 10 AttnParams; function constants 200 align_Q,
 * 201 align_K, 300 has_mask, 301 do_causal; grid (ceil(qL/32), Hq, B), 128 threads.
 * Bytes: Q, K, V read once, O and L written once.  Flops: 4*D per visible
 * (query, key) pair (QK^T and PV). */
#include <stdio.h>
#include <stdlib.h>

#include "ops/attn_common.h"
#include "ops/gdn_common.h"

enum { AF_Q, AF_K, AF_V, AF_O, AF_L, AF_NBUFS };

/* O: one bf16 rounding of an f32 value; the kernel's online softmax and the parity
 * reference's two-pass softmax differ by a few f32 ulps, which can move O across a
 * bf16 rounding boundary: 1 bf16 ulp (2^-8 relative) vs parity.  vs f64 add the
 * f32 accumulation error.  L: f32 of magnitude ~log(kL) + a few. */
static const op_buf attn_fwd_bufs[AF_NBUFS] = {
    [AF_Q] = {"Q", BUF_IN, DT_BF16, "Q,q,query", {{0}}},
    [AF_K] = {"K", BUF_IN, DT_BF16, "K,k,key", {{0}}},
    [AF_V] = {"V", BUF_IN, DT_BF16, "V,v,value", {{0}}},
    [AF_O] = {"O", BUF_OUT, DT_BF16, "O,o,out,attn_out", {{1e-3, 8e-3, 3e-3}, {5e-4, 8e-3, 1e-3}}},
    [AF_L] = {"L", BUF_OUT, DT_F32, "L,lse,logsumexp,softmax_lse", {{1e-4, 1e-5, 1e-6}, {2e-5, 4e-6, 1e-6}}},
};

static int attn_fwd_setup(op_case *c, char *err, size_t errlen) {
    attn_shape s = attn_shape_of(c);
    if (attn_alloc(c, AF_Q, s.Hq, s.qL, 1, err, errlen) || attn_alloc(c, AF_K, s.Hkv, s.kL, 1, err, errlen) ||
        attn_alloc(c, AF_V, s.Hkv, s.kL, 1, err, errlen) || attn_alloc(c, AF_O, s.Hq, s.qL, 1, err, errlen) ||
        attn_alloc(c, AF_L, s.Hq, s.qL, 0, err, errlen))
        return -1;
    gdn_gen_normal(c->t[AF_Q], c->seed, 1.0);
    gdn_gen_normal(c->t[AF_K], c->seed, 1.0);
    gdn_gen_normal(c->t[AF_V], c->seed, 1.0);
    return 0;
}

static int attn_fwd_reference(const op_case *c, ref_kind kind, double **out) {
    attn_shape s = attn_shape_of(c);
    double *Q = attn_tensor_f64(c->t[AF_Q]), *K = attn_tensor_f64(c->t[AF_K]), *V = attn_tensor_f64(c->t[AF_V]);
    int rc = -1;
    if (Q && K && V) rc = attn_fwd_ref(kind, &s, Q, K, V, out[AF_O], out[AF_L]);
    free(Q);
    free(K);
    free(V);
    return rc;
}

static int attn_fwd_nstages(const op_case *c) { return 1; }

static int attn_fwd_launch(const op_case *c, int stage, op_launch *l) {
    attn_shape s = attn_shape_of(c);
    *l = (op_launch){
        .stage = "attn_fwd",
        .shader = "shaders/flash_attn.metal",
        .function = s.D == 64 ? "flash_attn_fwd_bf16_d64" : s.D == 128 ? "flash_attn_fwd_bf16_d128"
                                                                        : "flash_attn_fwd_bf16_d256",
        .nbinds = 5,
        .binds = {{.index = 0, .buf = AF_Q},
                  {.index = 1, .buf = AF_K},
                  {.index = 2, .buf = AF_V},
                  {.index = 3, .buf = AF_O},
                  {.index = 4, .buf = AF_L}},
    };
    attn_launch_common(&s, l);
    return 0;
}

static double attn_fwd_bytes(const int64_t *dim) {
    double B = (double)dim[0], Hq = (double)dim[1], Hkv = (double)dim[2], qL = (double)dim[3], kL = (double)dim[4],
           D = (double)dim[5];
    return 2 * (2 * B * Hq * qL * D + 2 * B * Hkv * kL * D) + 4 * B * Hq * qL;
}

static double attn_fwd_flops(const int64_t *dim) {
    return 4.0 * (double)dim[0] * (double)dim[1] * (double)dim[5] * attn_visible_pairs(dim);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const attn_fwd_shapes[AF_NBUFS] = {
    [AF_Q] = "B,Hq,qL,D",
    [AF_K] = "B,Hkv,kL,D",
    [AF_V] = "B,Hkv,kL,D",
    [AF_O] = "B,Hq,qL,D",
    [AF_L] = "B,Hq,qL",
};

const op_desc op_attn_fwd = {
    .name = "attn_fwd",
    .group = "attn",
    .summary = "flash attention forward, bf16, GQA, causal or not: O (bf16) and logsumexp L",
    .dims = attn_dims,
    .ndims = ATTN_NDIMS,
    .bufs = attn_fwd_bufs,
    .nbufs = AF_NBUFS,
    .validate = attn_validate,
    .setup = attn_fwd_setup,
    .reference = attn_fwd_reference,
    .nstages = attn_fwd_nstages,
    .launch = attn_fwd_launch,
    .shapes = attn_fwd_shapes,
    .bytes = attn_fwd_bytes,
    .flops = attn_fwd_flops,
};
