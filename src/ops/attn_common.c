/* attn_common.c — shared dimensions, validation, AttnParams and helpers of the
 * flash attention ops. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attn_common.h"

static_assert(sizeof(attn_params) == 160, "AttnParams is 160 bytes in the mlx-native ABI");
static_assert(offsetof(attn_params, Q_strides) == 64, "int64 strides start at byte 64");
static_assert(sizeof(attn_params) == sizeof(((op_launch *)0)->params), "AttnParams fills op_launch.params");

const op_dim attn_dims[ATTN_NDIMS] = {
    {"B", NULL, 1, 1, 256, "batch"},
    {"Hq", "H", 16, 1, 1024, "query heads"},
    {"Hkv", NULL, 2, 1, 1024, "key/value heads (GQA: Hq % Hkv == 0)"},
    {"qL", NULL, 512, 1, 1 << 20, "query length"},
    {"kL", NULL, 512, 1, 1 << 20, "key length"},
    {"D", NULL, 256, 1, 1024, "head dim (64, 128 or 256)"},
    {"causal", NULL, 1, 0, 1, "bottom-right causal mask (1) or none (0)"},
};

attn_shape attn_shape_of(const op_case *c) {
    attn_shape s = {c->dim[0], c->dim[1], c->dim[2], c->dim[3], c->dim[4], c->dim[5], (int)c->dim[6], 0};
    s.scale = 1.0 / sqrt((double)s.D);
    return s;
}

int attn_validate(const int64_t *dim, char *err, size_t errlen) {
    int64_t Hq = dim[1], Hkv = dim[2], qL = dim[3], kL = dim[4], D = dim[5];
    if (Hq % Hkv != 0) {
        snprintf(err, errlen, "--Hq %lld is not a multiple of --Hkv %lld: GQA needs Hq %% Hkv == 0", (long long)Hq,
                 (long long)Hkv);
        return -1;
    }
    if (D != 64 && D != 128 && D != 256) {
        snprintf(err, errlen, "--D %lld is not supported by the attention kernels: use 64, 128 or 256", (long long)D);
        return -1;
    }
    if (dim[6] && qL > kL) {
        snprintf(err, errlen,
                 "--qL %lld > --kL %lld with --causal 1: the bottom-right causal mask leaves queries with no key; "
                 "use qL <= kL or --causal 0",
                 (long long)qL, (long long)kL);
        return -1;
    }
    return 0;
}

/* Visible (query, key) pairs of one head: all of them, or with the bottom-right
 * causal mask (qL <= kL) query i sees kL - qL + i + 1 keys. */
double attn_visible_pairs(const int64_t *dim) {
    double qL = (double)dim[3], kL = (double)dim[4];
    if (!dim[6]) return qL * kL;
    return qL * (kL - qL) + qL * (qL + 1) / 2;
}

attn_params attn_params_of(const attn_shape *s) {
    attn_params p;
    memset(&p, 0, sizeof p);
    p.B = (int32_t)s->B;
    p.H = (int32_t)s->Hq;
    p.D = (int32_t)s->D;
    p.qL = (int32_t)s->qL;
    p.kL = (int32_t)s->kL;
    p.gqa_factor = (int32_t)(s->Hq / s->Hkv);
    p.scale = (float)s->scale;
    p.softcapping = 1.0f; /* MLX convention: 1.0 = no soft-capping */
    p.NQ = (int32_t)((s->qL + ATTN_BQ - 1) / ATTN_BQ);
    p.NK = (int32_t)((s->kL + ATTN_BK - 1) / ATTN_BK);
    p.NQ_aligned = (int32_t)(s->qL / ATTN_BQ);
    p.NK_aligned = (int32_t)(s->kL / ATTN_BK);
    p.qL_rem = (int32_t)(s->qL - (int64_t)p.NQ_aligned * ATTN_BQ);
    p.kL_rem = (int32_t)(s->kL - (int64_t)p.NK_aligned * ATTN_BK);
    p.qL_off = (int32_t)(s->kL - s->qL);
    int64_t q[3] = {s->Hq * s->qL * s->D, s->qL * s->D, s->D};
    int64_t k[3] = {s->Hkv * s->kL * s->D, s->kL * s->D, s->D};
    memcpy(p.Q_strides, q, sizeof q);
    memcpy(p.O_strides, q, sizeof q);
    memcpy(p.K_strides, k, sizeof k);
    memcpy(p.V_strides, k, sizeof k);
    return p;
}

void attn_launch_common(const attn_shape *s, op_launch *l) {
    attn_params p = attn_params_of(s);
    l->grid[0] = (uint32_t)((s->qL + ATTN_BQ - 1) / ATTN_BQ);
    l->grid[1] = (uint32_t)s->Hq;
    l->grid[2] = (uint32_t)s->B;
    l->tg[0] = ATTN_THREADS;
    l->tg[1] = l->tg[2] = 1;
    l->params_index = 10;
    memcpy(l->params, &p, sizeof p);
    l->nparams = (int)(sizeof p / 4);
    l->nconstants = 4;
    l->constants[0].index = 200;
    l->constants[0].value = s->qL % ATTN_BQ == 0 ? "true" : "false";
    l->constants[1].index = 201;
    l->constants[1].value = s->kL % ATTN_BK == 0 ? "true" : "false";
    l->constants[2].index = 300;
    l->constants[2].value = "false";
    l->constants[3].index = 301;
    l->constants[3].value = s->causal ? "true" : "false";
}

int attn_alloc(op_case *c, int i, int64_t H, int64_t L, int with_d, char *err, size_t errlen) {
    int64_t shape[4] = {c->dim[0], H, L, c->dim[5]};
    return op_case_alloc(c, i, with_d ? 4 : 3, shape, err, errlen);
}

double *attn_tensor_f64(const tensor *t) {
    int64_t n = tensor_numel(t);
    double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!x) return NULL;
    for (int64_t i = 0; i < n; i++) x[i] = tensor_get(t, i);
    return x;
}
