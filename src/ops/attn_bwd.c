/* attn_bwd.c — op `attn_bwd`: flash attention backward (dQ, dK, dV), bf16 inputs.
 *
 * Kernel ABI flash_attn_train_bwd_bf16_d{64,256} (kernels.md; our kernel also has
 * d128): 0 Q bf16[B,Hq,qL,D], 1 K bf16[B,Hkv,kL,D], 2 V bf16, 3 unused, 4 L f32[B,Hq,qL],
 * 5 dO bf16[B,Hq,qL,D], 6 D_vec f32[B,Hq,qL], 7 dQ f32[B,Hq,qL,D], 8 dK f32[B,Hkv,kL,D],
 * 9 dV f32, 10 AttnParams; dQ/dK/dV start zeroed and dK/dV take atomic float adds
 * from every query block (so they are not bitwise reproducible run to run).  Then two
 * dispatches of f32_to_bf16_cast (0 in f32, 1 out bf16, 2 params {n}) give the bf16
 * dK and dV a training step would keep.
 * L and D_vec are inputs: setup computes them with the f64 forward reference
 * (D_vec = rowsum(O*dO) with the unrounded O), as a training forward would have.
 * Bytes: Q, K, V, dO, L, D_vec read once; dQ, dK, dV written once (f32), the casts'
 * bf16 dK/dV written once.  Flops: 10*D per visible pair (QK^T again, dO V^T, P^T dO,
 * dS K, dS^T Q). */
#include <stdio.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "ops/attn_common.h"
#include "ops/gdn_common.h"

enum { AB_Q, AB_K, AB_V, AB_L, AB_DO, AB_DVEC, AB_DQ, AB_DK, AB_DV, AB_DK16, AB_DV16, AB_NBUFS };

/* f32 sums over up to kL (dQ) or group*qL (dK, dV) terms in a different order from
 * the references (atomics): relative errors ~1e-6 seen, rel_l2 ~1e-7.  The bf16
 * copies can land one bf16 ulp (2^-8 relative) from the rounded reference. */
static const op_buf attn_bwd_bufs[AB_NBUFS] = {
    [AB_Q] = {"Q", BUF_IN, DT_BF16, "Q,q,query", {{0}}},
    [AB_K] = {"K", BUF_IN, DT_BF16, "K,k,key", {{0}}},
    [AB_V] = {"V", BUF_IN, DT_BF16, "V,v,value", {{0}}},
    [AB_L] = {"L", BUF_IN, DT_F32, "L,lse,logsumexp,softmax_lse", {{0}}},
    [AB_DO] = {"dO", BUF_IN, DT_BF16, "dO,do,dout,grad_out", {{0}}},
    [AB_DVEC] = {"D_vec", BUF_IN, DT_F32, "D_vec,delta,D", {{0}}},
    [AB_DQ] = {"dQ", BUF_OUT, DT_F32, "dQ,dq,grad_q", {{2e-5, 1e-3, 1e-5}, {1e-5, 1e-3, 5e-6}}},
    [AB_DK] = {"dK", BUF_OUT, DT_F32, "dK,dk,grad_k", {{2e-5, 1e-3, 1e-5}, {1e-5, 1e-3, 5e-6}}},
    [AB_DV] = {"dV", BUF_OUT, DT_F32, "dV,dv,grad_v", {{2e-5, 1e-3, 1e-5}, {1e-5, 1e-3, 5e-6}}},
    [AB_DK16] = {"dK_bf16", BUF_OUT, DT_BF16, "dK_bf16", {{1e-4, 8e-3, 3e-3}, {1e-4, 8e-3, 1e-3}}},
    [AB_DV16] = {"dV_bf16", BUF_OUT, DT_BF16, "dV_bf16", {{1e-4, 8e-3, 3e-3}, {1e-4, 8e-3, 1e-3}}},
};

static int attn_bwd_setup(op_case *c, char *err, size_t errlen) {
    attn_shape s = attn_shape_of(c);
    if (attn_alloc(c, AB_Q, s.Hq, s.qL, 1, err, errlen) || attn_alloc(c, AB_K, s.Hkv, s.kL, 1, err, errlen) ||
        attn_alloc(c, AB_V, s.Hkv, s.kL, 1, err, errlen) || attn_alloc(c, AB_L, s.Hq, s.qL, 0, err, errlen) ||
        attn_alloc(c, AB_DO, s.Hq, s.qL, 1, err, errlen) || attn_alloc(c, AB_DVEC, s.Hq, s.qL, 0, err, errlen) ||
        attn_alloc(c, AB_DQ, s.Hq, s.qL, 1, err, errlen) || attn_alloc(c, AB_DK, s.Hkv, s.kL, 1, err, errlen) ||
        attn_alloc(c, AB_DV, s.Hkv, s.kL, 1, err, errlen) || attn_alloc(c, AB_DK16, s.Hkv, s.kL, 1, err, errlen) ||
        attn_alloc(c, AB_DV16, s.Hkv, s.kL, 1, err, errlen))
        return -1;
    gdn_gen_normal(c->t[AB_Q], c->seed, 1.0);
    gdn_gen_normal(c->t[AB_K], c->seed, 1.0);
    gdn_gen_normal(c->t[AB_V], c->seed, 1.0);
    gdn_gen_normal(c->t[AB_DO], c->seed, 1.0);

    /* The forward a training step would have run: f64 O and L, then D_vec. */
    int64_t nq = tensor_numel(c->t[AB_DO]), nrow = tensor_numel(c->t[AB_L]);
    double *Q = attn_tensor_f64(c->t[AB_Q]), *K = attn_tensor_f64(c->t[AB_K]), *V = attn_tensor_f64(c->t[AB_V]);
    double *dO = attn_tensor_f64(c->t[AB_DO]);
    double *O = malloc(sizeof(double) * (size_t)nq), *L = malloc(sizeof(double) * (size_t)nrow);
    double *Dvec = malloc(sizeof(double) * (size_t)nrow);
    int rc = -1;
    if (Q && K && V && dO && O && L && Dvec && attn_fwd_ref(REF_F64, &s, Q, K, V, O, L) == 0) {
        attn_dvec_ref(&s, O, dO, Dvec);
        for (int64_t i = 0; i < nrow; i++) {
            tensor_set(c->t[AB_L], i, L[i]);
            tensor_set(c->t[AB_DVEC], i, Dvec[i]);
        }
        rc = 0;
    } else {
        snprintf(err, errlen, "out of memory computing the attn_bwd forward (O, L, D_vec): reduce the shape");
    }
    free(Q);
    free(K);
    free(V);
    free(dO);
    free(O);
    free(L);
    free(Dvec);
    return rc;
}

static int attn_bwd_reference(const op_case *c, ref_kind kind, double **out) {
    attn_shape s = attn_shape_of(c);
    double *Q = attn_tensor_f64(c->t[AB_Q]), *K = attn_tensor_f64(c->t[AB_K]), *V = attn_tensor_f64(c->t[AB_V]);
    double *dO = attn_tensor_f64(c->t[AB_DO]), *L = attn_tensor_f64(c->t[AB_L]);
    double *Dvec = attn_tensor_f64(c->t[AB_DVEC]);
    int rc = -1;
    if (Q && K && V && dO && L && Dvec)
        rc = attn_bwd_ref(kind, &s, Q, K, V, dO, L, Dvec, out[AB_DQ], out[AB_DK], out[AB_DV]);
    if (rc == 0) {
        int64_t n = tensor_numel(c->t[AB_DK]);
        for (int64_t i = 0; i < n; i++) {
            out[AB_DK16][i] = bf16_round((float)out[AB_DK][i]);
            out[AB_DV16][i] = bf16_round((float)out[AB_DV][i]);
        }
    }
    free(Q);
    free(K);
    free(V);
    free(dO);
    free(L);
    free(Dvec);
    return rc;
}

static int attn_bwd_nstages(const op_case *c) { return 3; }

static int attn_bwd_launch(const op_case *c, int stage, op_launch *l) {
    attn_shape s = attn_shape_of(c);
    if (stage == 0) {
        *l = (op_launch){
            .stage = "attn_bwd",
            .shader = "shaders/flash_attn.metal",
            .function = s.D == 64    ? "flash_attn_train_bwd_bf16_d64"
                        : s.D == 128 ? "flash_attn_train_bwd_bf16_d128"
                                     : "flash_attn_train_bwd_bf16_d256",
            .nbinds = 9,
            .binds = {{.index = 0, .buf = AB_Q},
                      {.index = 1, .buf = AB_K},
                      {.index = 2, .buf = AB_V},
                      {.index = 4, .buf = AB_L},
                      {.index = 5, .buf = AB_DO},
                      {.index = 6, .buf = AB_DVEC},
                      {.index = 7, .buf = AB_DQ},
                      {.index = 8, .buf = AB_DK},
                      {.index = 9, .buf = AB_DV}},
        };
        attn_launch_common(&s, l);
        return 0;
    }
    /* stages 1, 2: dK then dV to bf16 */
    int64_t n = s.B * s.Hkv * s.kL * s.D;
    *l = (op_launch){
        .stage = stage == 1 ? "cast_dK" : "cast_dV",
        .shader = "shaders/flash_attn.metal",
        .function = "f32_to_bf16_cast",
        .grid = {(uint32_t)((n + 255) / 256), 1, 1},
        .tg = {256, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = stage == 1 ? AB_DK : AB_DV},
                  {.index = 1, .buf = stage == 1 ? AB_DK16 : AB_DV16}},
        .params_index = 2,
        .params = {(uint32_t)n},
        .nparams = 1,
        .role = "cast",
    };
    return 0;
}

static double attn_bwd_bytes(const int64_t *dim) {
    double B = (double)dim[0], Hq = (double)dim[1], Hkv = (double)dim[2], qL = (double)dim[3], kL = (double)dim[4],
           D = (double)dim[5];
    double q_side = B * Hq * qL * D, kv_side = B * Hkv * kL * D;
    return 2 * (2 * q_side + 2 * kv_side) + 8 * B * Hq * qL /* L, D_vec */ + 4 * q_side + 2 * 4 * kv_side /* f32 */ +
           2 * 2 * kv_side /* bf16 copies */;
}

static double attn_bwd_flops(const int64_t *dim) {
    return 10.0 * (double)dim[0] * (double)dim[1] * (double)dim[5] * attn_visible_pairs(dim);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const attn_bwd_shapes[AB_NBUFS] = {
    [AB_Q] = "B,Hq,qL,D",
    [AB_K] = "B,Hkv,kL,D",
    [AB_V] = "B,Hkv,kL,D",
    [AB_L] = "B,Hq,qL",
    [AB_DO] = "B,Hq,qL,D",
    [AB_DVEC] = "B,Hq,qL",
    [AB_DQ] = "B,Hq,qL,D",
    [AB_DK] = "B,Hkv,kL,D",
    [AB_DV] = "B,Hkv,kL,D",
    [AB_DK16] = "B,Hkv,kL,D",
    [AB_DV16] = "B,Hkv,kL,D",
};

const op_desc op_attn_bwd = {
    .name = "attn_bwd",
    .group = "attn",
    .summary = "flash attention backward, bf16 in: dQ, dK, dV (f32, atomics) and bf16 dK/dV",
    .dims = attn_dims,
    .ndims = ATTN_NDIMS,
    .bufs = attn_bwd_bufs,
    .nbufs = AB_NBUFS,
    .validate = attn_validate,
    .setup = attn_bwd_setup,
    .reference = attn_bwd_reference,
    .nstages = attn_bwd_nstages,
    .launch = attn_bwd_launch,
    .shapes = attn_bwd_shapes,
    .main_stage = "attn_bwd",
    .bytes = attn_bwd_bytes,
    .flops = attn_bwd_flops,
    .nondeterministic = 1,
    .zero_init_bufs = (1u << AB_DQ) | (1u << AB_DK) | (1u << AB_DV),
};
