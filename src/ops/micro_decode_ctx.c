/* micro_decode_ctx.c — op `micro.decode_ctx`: one decode token, GDN vs attention.
 *
 * mode 0: the Gated DeltaNet state update of one token (H heads of a 128x128 f32
 * state, read and written once: its cost does not depend on the context);
 * mode 1: decode attention reading a bf16 KV cache of `ctx` tokens (split-K partial
 * + combine, shaders/micro/decode_ctx.metal).  Sweeping ctx 1k..128k for both
 * modes shows where linear attention wins: the attention time grows with ctx,
 * the GDN time stays flat.  Buffers of the other mode are left empty (0 elements).
 * Checked against double-precision references. */
#include <math.h>
#include <stdio.h>

#include "core/rng.h"
#include "ops/micro_common.h"

enum { DC_Q, DC_K, DC_V, DC_G, DC_BETA, DC_STATE, DC_STATE_OUT, DC_KCACHE, DC_VCACHE, DC_O, DC_PART_M, DC_PART_L,
       DC_PART_ACC, DC_NBUFS };
enum { D_CTX, D_MODE, D_H, D_HKV };

#define DC_D 128
#define DC_CHUNK 1024
#define DC_SG_PER_CHUNK 4
#define DC_MAX_G 8

static const op_dim decode_ctx_dims[] = {
    [D_CTX] = {"ctx", NULL, 1024, 1, 131072, "context length (tokens in the KV cache; GDN ignores it)"},
    [D_MODE] = {"mode", NULL, 0, 0, 1, "0 GDN decode state update, 1 attention decode over the KV cache"},
    [D_H] = {"H", NULL, 32, 1, 256, "query / value heads"},
    [D_HKV] = {"Hkv", NULL, 8, 1, 256, "KV heads of the attention (H/Hkv <= 8)"},
};

/* f32 sums over D (GDN) or ctx (attention) terms, compared with f64. */
#define DC_TOL {{1e-6, 1e-3, 1e-5}, {1e-6, 1e-3, 1e-5}}
static const op_buf decode_ctx_bufs[DC_NBUFS] = {
    [DC_Q] = {"q", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_K] = {"k", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_V] = {"v", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_G] = {"g", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_BETA] = {"beta", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_STATE] = {"state", BUF_IN, DT_F32, NULL, {{0}}},
    [DC_STATE_OUT] = {"state_out", BUF_OUT, DT_F32, NULL, DC_TOL},
    [DC_KCACHE] = {"k_cache", BUF_IN, DT_BF16, NULL, {{0}}},
    [DC_VCACHE] = {"v_cache", BUF_IN, DT_BF16, NULL, {{0}}},
    [DC_O] = {"o", BUF_OUT, DT_F32, NULL, DC_TOL},
    [DC_PART_M] = {"part_m", BUF_SCRATCH, DT_F32, NULL, {{0}}},
    [DC_PART_L] = {"part_l", BUF_SCRATCH, DT_F32, NULL, {{0}}},
    [DC_PART_ACC] = {"part_acc", BUF_SCRATCH, DT_F32, NULL, {{0}}},
};

static int64_t dc_parts(const int64_t *dim) { return (dim[D_CTX] + DC_CHUNK - 1) / DC_CHUNK * DC_SG_PER_CHUNK; }

static int decode_ctx_validate(const int64_t *dim, char *err, size_t errlen) {
    if (dim[D_MODE] == 1 && (dim[D_H] % dim[D_HKV] != 0 || dim[D_H] / dim[D_HKV] > DC_MAX_G)) {
        snprintf(err, errlen, "--H %lld --Hkv %lld: attention needs H a multiple of Hkv with H/Hkv <= %d",
                 (long long)dim[D_H], (long long)dim[D_HKV], DC_MAX_G);
        return -1;
    }
    return 0;
}

/* Unit-norm rows of length D, like normalised q/k. */
static void normalise_rows(tensor *t) {
    float *p = t->data;
    int64_t rows = tensor_numel(t) / DC_D;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0;
        for (int i = 0; i < DC_D; i++) s += (double)p[r * DC_D + i] * p[r * DC_D + i];
        float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.0f;
        for (int i = 0; i < DC_D; i++) p[r * DC_D + i] *= inv;
    }
}

static int decode_ctx_setup(op_case *c, char *err, size_t errlen) {
    int gdn = c->dim[D_MODE] == 0;
    int64_t H = c->dim[D_H], hd = H * DC_D, kv = c->dim[D_CTX] * c->dim[D_HKV] * DC_D, parts = dc_parts(c->dim);
    int64_t n[DC_NBUFS] = {
        [DC_Q] = hd,
        [DC_K] = gdn ? hd : 0,
        [DC_V] = gdn ? hd : 0,
        [DC_G] = gdn ? H : 0,
        [DC_BETA] = gdn ? H : 0,
        [DC_STATE] = gdn ? hd * DC_D : 0,
        [DC_STATE_OUT] = gdn ? hd * DC_D : 0,
        [DC_KCACHE] = gdn ? 0 : kv,
        [DC_VCACHE] = gdn ? 0 : kv,
        [DC_O] = hd,
        [DC_PART_M] = gdn ? 0 : H * parts,
        [DC_PART_L] = gdn ? 0 : H * parts,
        [DC_PART_ACC] = gdn ? 0 : H * parts * DC_D,
    };
    for (int i = 0; i < DC_NBUFS; i++)
        if (micro_alloc1(c, i, n[i], err, errlen)) return -1;
    micro_fill_uniform(c->t[DC_Q], c->seed);
    normalise_rows(c->t[DC_Q]);
    if (gdn) {
        micro_fill_uniform(c->t[DC_K], c->seed);
        normalise_rows(c->t[DC_K]);
        micro_fill_uniform(c->t[DC_V], c->seed);
        micro_fill_uniform(c->t[DC_STATE], c->seed);
        rng r;
        rng_stream(&r, c->seed, "g,beta");
        float *g = c->t[DC_G]->data, *beta = c->t[DC_BETA]->data;
        for (int64_t h = 0; h < H; h++) {
            g[h] = (float)(-0.5 * rng_uniform(&r));   /* decay exp(g) in (0.6, 1] */
            beta[h] = (float)(0.1 + 0.8 * rng_uniform(&r));
        }
    } else {
        /* bf16 caches: generate in f32, round once (the reference reads the same bits). */
        for (int b = DC_KCACHE; b <= DC_VCACHE; b++) {
            tensor *t = c->t[b];
            rng r;
            rng_stream(&r, c->seed, t->name);
            uint16_t *p = t->data;
            for (int64_t i = 0; i < kv; i++) p[i] = bf16_from_f32((float)(2.0 * rng_uniform(&r) - 1.0));
        }
    }
    return 0;
}

static void gdn_reference(const op_case *c, double *state_out, double *o) {
    const float *q = c->t[DC_Q]->data, *k = c->t[DC_K]->data, *v = c->t[DC_V]->data;
    const float *g = c->t[DC_G]->data, *beta = c->t[DC_BETA]->data, *S = c->t[DC_STATE]->data;
    double scale = 1.0 / sqrt((double)DC_D);
    for (int64_t h = 0; h < c->dim[D_H]; h++) {
        const float *Sh = S + h * DC_D * DC_D, *kh = k + h * DC_D, *qh = q + h * DC_D;
        double decay = exp((double)g[h]);
        for (int j = 0; j < DC_D; j++) {
            double kv = 0;
            for (int i = 0; i < DC_D; i++) kv += decay * Sh[i * DC_D + j] * kh[i];
            double u = beta[h] * (v[h * DC_D + j] - kv), out = 0;
            for (int i = 0; i < DC_D; i++) {
                double s = decay * Sh[i * DC_D + j] + kh[i] * u;
                state_out[h * DC_D * DC_D + i * DC_D + j] = s;
                out += s * qh[i];
            }
            o[h * DC_D + j] = out * scale;
        }
    }
}

static void attn_reference(const op_case *c, double *o) {
    const float *q = c->t[DC_Q]->data;
    const uint16_t *kc = c->t[DC_KCACHE]->data, *vc = c->t[DC_VCACHE]->data;
    int64_t ctx = c->dim[D_CTX], hkv = c->dim[D_HKV], G = c->dim[D_H] / hkv;
    double scale = 1.0 / sqrt((double)DC_D);
    for (int64_t h = 0; h < c->dim[D_H]; h++) {
        int64_t kvh = h / G;
        double m = -INFINITY, l = 0, acc[DC_D] = {0};
        for (int64_t t = 0; t < ctx; t++) {
            const uint16_t *kr = kc + (t * hkv + kvh) * DC_D, *vr = vc + (t * hkv + kvh) * DC_D;
            double s = 0;
            for (int i = 0; i < DC_D; i++) s += (double)q[h * DC_D + i] * bf16_to_f32(kr[i]);
            s *= scale;
            double m_new = s > m ? s : m, corr = exp(m - m_new), p = exp(s - m_new);
            l = l * corr + p;
            for (int i = 0; i < DC_D; i++) acc[i] = acc[i] * corr + p * bf16_to_f32(vr[i]);
            m = m_new;
        }
        for (int i = 0; i < DC_D; i++) o[h * DC_D + i] = acc[i] / l;
    }
}

static int decode_ctx_reference(const op_case *c, ref_kind kind, double **out) {
    if (c->dim[D_MODE] == 0) gdn_reference(c, out[DC_STATE_OUT], out[DC_O]);
    else attn_reference(c, out[DC_O]);
    return 0;
}

static int decode_ctx_nstages(const op_case *c) { return c->dim[D_MODE] == 0 ? 1 : 2; }

static int decode_ctx_launch(const op_case *c, int stage, op_launch *l) {
    const char *shader = "shaders/micro/decode_ctx.metal";
    uint32_t H = (uint32_t)c->dim[D_H], hkv = (uint32_t)c->dim[D_HKV];
    if (c->dim[D_MODE] == 0) {
        *l = (op_launch){
            .stage = "gdn_decode",
            .shader = shader,
            .function = "micro_gdn_decode",
            .grid = {H, 1, 1},
            .tg = {DC_D, 1, 1},
            .nbinds = 8,
            .binds = {{.index = 0, .buf = DC_Q},
                      {.index = 1, .buf = DC_K},
                      {.index = 2, .buf = DC_V},
                      {.index = 3, .buf = DC_G},
                      {.index = 4, .buf = DC_BETA},
                      {.index = 5, .buf = DC_STATE},
                      {.index = 6, .buf = DC_STATE_OUT},
                      {.index = 7, .buf = DC_O}},
            .params_index = -1,
        };
    } else if (stage == 0) {
        *l = (op_launch){
            .stage = "attn_partial",
            .shader = shader,
            .function = "micro_attn_decode_partial",
            .grid = {(uint32_t)(dc_parts(c->dim) / DC_SG_PER_CHUNK), hkv, 1},
            .tg = {32 * DC_SG_PER_CHUNK, 1, 1},
            .nbinds = 6,
            .binds = {{.index = 0, .buf = DC_Q},
                      {.index = 1, .buf = DC_KCACHE},
                      {.index = 2, .buf = DC_VCACHE},
                      {.index = 3, .buf = DC_PART_M},
                      {.index = 4, .buf = DC_PART_L},
                      {.index = 5, .buf = DC_PART_ACC}},
            .params_index = 6,
            .params = {(uint32_t)c->dim[D_CTX], hkv, H / hkv},
            .nparams = 3,
        };
    } else {
        *l = (op_launch){
            .stage = "attn_combine",
            .shader = shader,
            .function = "micro_attn_decode_combine",
            .grid = {H, 1, 1},
            .tg = {DC_D, 1, 1},
            .nbinds = 4,
            .binds = {{.index = 0, .buf = DC_PART_M},
                      {.index = 1, .buf = DC_PART_L},
                      {.index = 2, .buf = DC_PART_ACC},
                      {.index = 3, .buf = DC_O}},
            .params_index = 4,
            .params = {(uint32_t)dc_parts(c->dim)},
            .nparams = 1,
        };
    }
    return 0;
}

static double decode_ctx_bytes(const int64_t *dim) {
    double H = (double)dim[D_H], hd = H * DC_D;
    if (dim[D_MODE] == 0) return 4.0 * (2.0 * hd * DC_D + 4.0 * hd + 2.0 * H);
    double kv = (double)dim[D_CTX] * (double)dim[D_HKV] * DC_D;
    double partials = H * (double)dc_parts(dim) * (DC_D + 2);
    return 2.0 * 2.0 * kv + 4.0 * (2.0 * hd + 2.0 * partials);
}

static double decode_ctx_flops(const int64_t *dim) {
    double hd = (double)dim[D_H] * DC_D;
    if (dim[D_MODE] == 0) return 6.0 * hd * DC_D;
    return 4.0 * (double)dim[D_CTX] * hd;
}

const op_desc op_micro_decode_ctx = {
    .name = "micro.decode_ctx",
    .group = "micro",
    .summary = "one decode token vs context: GDN state update (flat) vs attention KV-cache read (grows with ctx)",
    .dims = decode_ctx_dims,
    .ndims = 4,
    .bufs = decode_ctx_bufs,
    .nbufs = DC_NBUFS,
    .validate = decode_ctx_validate,
    .setup = decode_ctx_setup,
    .reference = decode_ctx_reference,
    .nstages = decode_ctx_nstages,
    .launch = decode_ctx_launch,
    .main_stage = "gdn_decode,attn_partial",
    .bytes = decode_ctx_bytes,
    .flops = decode_ctx_flops,
};
