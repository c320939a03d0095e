/* gdn_stages.c — stage launches and the realistic input chain of the GDN pipeline. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

static uint32_t u32(int64_t v) { return (uint32_t)v; }

static uint32_t f32_word(double v) { return f32_bits((float)v); }

void gdn_launch_cumsum(gdn_shape s, op_launch *l, int g, int gc) {
    *l = (op_launch){
        .stage = "cumsum",
        .shader = "shaders/gdn_cumsum.metal",
        .function = "chunk_local_cumsum_g_f32",
        .grid = {1, u32(s.H), u32(s.B * s.NT)},
        .tg = {64, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = g}, {.index = 1, .buf = gc}},
        .params_index = 2,
        .params = {u32(s.B), u32(s.T), u32(s.H), u32(s.BT), u32(s.NT)},
        .nparams = 5,
    };
}

/* Our own kernel (mlx-native runs FLA's l2norm as a separate op): one simdgroup per
 * (token, key head) row normalises that row of q and of k:
 *   y = x / sqrt(sum x^2 + eps), written as bf16.
 * 0 q bf16[B,T,Hg,K], 1 k bf16, 2 q_out bf16, 3 k_out bf16,
 * 4 params[3] = {rows = B*T*Hg, K, bits of f32 eps}.  Grid (rows, 1, 1), TG (32, 1, 1). */
void gdn_launch_l2norm(gdn_shape s, op_launch *l, int q, int k, int q_out, int k_out) {
    *l = (op_launch){
        .stage = "l2norm",
        .shader = "shaders/gdn_l2norm.metal",
        .function = "gdn_l2norm_qk_bf16",
        .grid = {u32(s.B * s.T * s.Hg), 1, 1},
        .tg = {32, 1, 1},
        .nbinds = 4,
        .binds = {{.index = 0, .buf = q},
                  {.index = 1, .buf = k},
                  {.index = 2, .buf = q_out},
                  {.index = 3, .buf = k_out}},
        .params_index = 4,
        .params = {u32(s.B * s.T * s.Hg), u32(s.K), f32_word(GDN_L2NORM_EPS)},
        .nparams = 3,
    };
}

void gdn_launch_kkt(gdn_shape s, op_launch *l, int k, int beta, int gc, int A) {
    *l = (op_launch){
        .stage = "kkt",
        .shader = "shaders/gdn_kkt.metal",
        .function = "gated_delta_net_kkt_bf16",
        .grid = {u32(s.NT), u32(s.H), u32(s.B)},
        .tg = {256, 1, 1},
        .nbinds = 4,
        .binds = {{.index = 0, .buf = k}, {.index = 1, .buf = beta}, {.index = 2, .buf = gc}, {.index = 3, .buf = A}},
        .params_index = 4,
        .params = {u32(s.B), u32(s.T), u32(s.Hg), u32(s.H), u32(s.K), u32(s.BT), u32(s.NT), GDN_KKT_BK},
        .nparams = 8,
        .ntgmem = 2,
        .tgmem = {{0, u32(s.BT * GDN_KKT_BK * 2)}, {1, u32(s.BT * s.BT * 4)}},
    };
}

void gdn_launch_solve_tril(gdn_shape s, op_launch *l, int A, int Ai) {
    *l = (op_launch){
        .stage = "solve_tril",
        .shader = "shaders/gdn_solve_tril.metal",
        .function = "chunk_tri_solve_invert_f32",
        .grid = {u32(s.NT), u32(s.H), u32(s.B)},
        .tg = {u32(s.BT), 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = A}, {.index = 1, .buf = Ai}},
        .params_index = 2,
        .params = {u32(s.B), u32(s.T), u32(s.H), u32(s.BT)},
        .nparams = 4,
        .ntgmem = 1,
        .tgmem = {{0, u32(2 * s.BT * s.BT * 4)}},
    };
}

void gdn_launch_wy(gdn_shape s, op_launch *l, int k, int v, int beta, int gc, int Ai, int w, int u) {
    *l = (op_launch){
        .stage = "wy",
        .shader = "shaders/gdn_wy.metal",
        .function = "gated_delta_net_recompute_wu_bf16",
        .grid = {u32(s.NT), u32(s.H), u32(s.B)},
        .tg = {256, 1, 1},
        .nbinds = 7,
        .binds = {{.index = 0, .buf = k},
                  {.index = 1, .buf = v},
                  {.index = 2, .buf = beta},
                  {.index = 3, .buf = gc},
                  {.index = 4, .buf = Ai},
                  {.index = 5, .buf = w},
                  {.index = 6, .buf = u}},
        .params_index = 7,
        .params = {u32(s.B), u32(s.T), u32(s.Hg), u32(s.H), u32(s.K), u32(s.V), u32(s.BT), u32(s.NT)},
        .nparams = 8,
        .ntgmem = 2,
        .tgmem = {{0, u32(s.BT * s.BT * 4)}, {1, u32(s.BT * GDN_WY_BKV * 2)}},
    };
}

/* Threadgroup memory: (BT*BV + BV*K) f32 — the [BT,BV] staging tile plus the [BV,K]
 * state tile of mlx-native's scalar version (24 KB at K=128); its simdgroup-matrix
 * version needs less (~20 KB), so this covers both.  Capped at the 32 KB limit: at
 * K=256 the formula gives 40 KB, which no kernel can get (ours needs 20.25 KB there). */
void gdn_launch_chunk_h(gdn_shape s, op_launch *l, int k, int w, int u, int gc, int h0, int h, int v_new, int final) {
    int64_t tg_bytes = (s.BT * GDN_CHUNK_H_BV + GDN_CHUNK_H_BV * s.K) * 4;
    if (tg_bytes > 32768) tg_bytes = 32768;
    *l = (op_launch){
        .stage = "chunk_h",
        .shader = "shaders/gdn_chunk_h.metal",
        .function = "gated_delta_net_chunk_inter_state_bf16",
        .grid = {u32((s.V + GDN_CHUNK_H_BV - 1) / GDN_CHUNK_H_BV), u32(s.H), u32(s.B)},
        .tg = {128, 1, 1},
        .nbinds = 8,
        .binds = {{.index = 0, .buf = k},
                  {.index = 1, .buf = w},
                  {.index = 2, .buf = u},
                  {.index = 3, .buf = gc},
                  {.index = 4, .buf = h0},
                  {.index = 5, .buf = h},
                  {.index = 6, .buf = v_new},
                  {.index = 7, .buf = final}},
        .params_index = 8,
        .params = {u32(s.B), u32(s.T), u32(s.Hg), u32(s.H), u32(s.K), u32(s.V), u32(s.BT), u32(s.NT)},
        .nparams = 8,
        .ntgmem = 1,
        .tgmem = {{0, u32(tg_bytes)}},
    };
}

void gdn_launch_chunk_o(gdn_shape s, op_launch *l, double scale, int q, int k, int v_new, int h, int gc, int o) {
    *l = (op_launch){
        .stage = "chunk_o",
        .shader = "shaders/gdn_chunk_o.metal",
        .function = "gated_delta_net_chunk_o_bf16",
        .grid = {u32((s.V + GDN_CHUNK_O_BV - 1) / GDN_CHUNK_O_BV), u32(s.NT), u32(s.B * s.H)},
        .tg = {256, 1, 1},
        .nbinds = 6,
        .binds = {{.index = 0, .buf = q},
                  {.index = 1, .buf = k},
                  {.index = 2, .buf = v_new},
                  {.index = 3, .buf = h},
                  {.index = 4, .buf = gc},
                  {.index = 5, .buf = o}},
        .params_index = 6,
        .params = {u32(s.B), u32(s.T), u32(s.Hg), u32(s.H), u32(s.K), u32(s.V), u32(s.BT), u32(s.NT),
                   GDN_CHUNK_O_BK, GDN_CHUNK_O_BV, f32_word(scale)},
        .nparams = 11,
        .ntgmem = 1,
        .tgmem = {{0, u32(s.BT * s.BT * 2)}},
    };
}

void gdn_gen_qk(tensor *t, uint64_t seed, int l2norm) {
    if (l2norm)
        gdn_gen_normal(t, seed, 1.0);
    else
        gdn_gen_unit_rows(t, seed);
}

int gdn_forward_io_setup(op_case *c, int l2norm, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    if (gdn_alloc(c, GDN_FWD_Q, 4, s.B, s.T, s.Hg, s.K, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_K, 4, s.B, s.T, s.Hg, s.K, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_V, 4, s.B, s.T, s.H, s.V, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_G, 3, s.B, s.T, s.H, 0, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_BETA, 3, s.B, s.T, s.H, 0, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_H0, 4, s.B, s.H, s.V, s.K, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_O, 4, s.B, s.T, s.H, s.V, 0, err, errlen) ||
        gdn_alloc(c, GDN_FWD_FINAL, 4, s.B, s.H, s.V, s.K, 0, err, errlen))
        return -1;
    gdn_gen_qk(c->t[GDN_FWD_Q], c->seed, l2norm);
    gdn_gen_qk(c->t[GDN_FWD_K], c->seed, l2norm);
    gdn_gen_normal(c->t[GDN_FWD_V], c->seed, 1.0);
    gdn_gen_log_decay(c->t[GDN_FWD_G], c->seed);
    gdn_gen_beta(c->t[GDN_FWD_BETA], c->seed);
    gdn_gen_h0(c->t[GDN_FWD_H0], c->seed);
    return 0;
}

gdn_recurrence_args gdn_forward_recurrence_args(const op_case *c, int l2norm, double **out) {
    gdn_shape s = gdn_shape_of(c);
    return (gdn_recurrence_args){
        .s = s,
        .q = gdn_view_tensor(c->t[GDN_FWD_Q]),
        .k = gdn_view_tensor(c->t[GDN_FWD_K]),
        .v = gdn_view_tensor(c->t[GDN_FWD_V]),
        .g = gdn_view_tensor(c->t[GDN_FWD_G]),
        .beta = gdn_view_tensor(c->t[GDN_FWD_BETA]),
        .h0 = gdn_view_tensor(c->t[GDN_FWD_H0]),
        .l2norm = l2norm,
        .g_sign = 1.0,
        .scale = gdn_scale(s),
        .o = gdn_sink_f64(out[GDN_FWD_O]),
        .final = gdn_sink_f64(out[GDN_FWD_FINAL]),
    };
}

double gdn_forward_bytes(gdn_shape s) {
    double per_token = 4.0 * s.Hg * s.K + 2.0 * s.H * s.V + 8.0 * s.H + 2.0 * s.H * s.V;
    return (double)s.B * (s.T * per_token + 8.0 * s.H * s.V * s.K);
}

void gdn_gen_h0(tensor *t, uint64_t seed) {
    gdn_stress st = gdn_current_stress();
    gdn_gen_normal(t, seed, st == GDN_STRESS_H0_LARGE ? GDN_STRESS_H0_STD : 0.1);
    if (st == GDN_STRESS_H0_ZERO) memset(t->data, 0, tensor_nbytes(t));
}

static tensor *chain_new(const char *name, dtype dt, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                         int64_t d4, char *err, size_t errlen) {
    int64_t shape[5] = {d0, d1, d2, d3, d4};
    tensor *t = tensor_new(name, dt, ndim, shape);
    if (!t)
        snprintf(err, errlen, "cannot allocate the %s input chain tensor (%.1f MB): reduce the shape", name,
                 (double)shape_nbytes(dt, ndim, shape) / 1e6);
    return t;
}

int gdn_chain_build(gdn_chain *ch, gdn_shape s, uint64_t seed, gdn_chain_stage upto, char *err, size_t errlen) {
    memset(ch, 0, sizeof *ch);
    const char *failed_stage = NULL;
    if (!(ch->k = chain_new("k", DT_BF16, 4, s.B, s.T, s.Hg, s.K, 0, err, errlen))) goto fail;
    if (!(ch->beta = chain_new("beta", DT_F32, 3, s.B, s.T, s.H, 0, 0, err, errlen))) goto fail;
    if (!(ch->g = chain_new("g", DT_F32, 3, s.B, s.T, s.H, 0, 0, err, errlen))) goto fail;
    gdn_gen_unit_rows(ch->k, seed);
    gdn_gen_beta(ch->beta, seed);
    gdn_gen_log_decay(ch->g, seed);
    if (upto >= GDN_CHAIN_CUMSUM) {
        if (!(ch->gc = chain_new("g_cumsum", DT_F32, 3, s.B, s.T, s.H, 0, 0, err, errlen))) goto fail;
        failed_stage = "cumsum";
        if (gdn_cumsum_view_ref(REF_PARITY, s, gdn_view_tensor(ch->g), gdn_sink_tensor(ch->gc))) goto fail_ref;
    }
    if (upto >= GDN_CHAIN_KKT) {
        if (!(ch->A = chain_new("A", DT_F32, 4, s.B, s.T, s.H, s.BT, 0, err, errlen))) goto fail;
        failed_stage = "kkt";
        if (gdn_kkt_ref(REF_PARITY, s, gdn_view_tensor(ch->k), gdn_view_tensor(ch->beta), gdn_view_tensor(ch->gc),
                        gdn_sink_tensor(ch->A)))
            goto fail_ref;
    }
    if (upto >= GDN_CHAIN_SOLVE) {
        if (!(ch->Ai = chain_new("Ai", DT_F32, 4, s.B, s.T, s.H, s.BT, 0, err, errlen))) goto fail;
        failed_stage = "solve_tril";
        if (gdn_solve_tril_ref(REF_PARITY, s, gdn_view_tensor(ch->A), gdn_sink_tensor(ch->Ai))) goto fail_ref;
    }
    if (upto >= GDN_CHAIN_WY) {
        if (!(ch->v = chain_new("v", DT_BF16, 4, s.B, s.T, s.H, s.V, 0, err, errlen))) goto fail;
        if (!(ch->w = chain_new("w", DT_BF16, 4, s.B, s.T, s.H, s.K, 0, err, errlen))) goto fail;
        if (!(ch->u = chain_new("u", DT_BF16, 4, s.B, s.T, s.H, s.V, 0, err, errlen))) goto fail;
        gdn_gen_normal(ch->v, seed, 1.0);
        failed_stage = "wy";
        if (gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(ch->k), gdn_view_tensor(ch->v), gdn_view_tensor(ch->beta),
                       gdn_view_tensor(ch->gc), gdn_view_tensor(ch->Ai), gdn_sink_tensor(ch->w),
                       gdn_sink_tensor(ch->u)))
            goto fail_ref;
    }
    if (upto >= GDN_CHAIN_CHUNK_H) {
        if (!(ch->h0 = chain_new("h0", DT_F32, 4, s.B, s.H, s.V, s.K, 0, err, errlen))) goto fail;
        if (!(ch->h = chain_new("h", DT_BF16, 5, s.B, s.NT, s.H, s.V, s.K, err, errlen))) goto fail;
        if (!(ch->v_new = chain_new("v_new", DT_BF16, 4, s.B, s.T, s.H, s.V, 0, err, errlen))) goto fail;
        if (!(ch->final = chain_new("final", DT_F32, 4, s.B, s.H, s.V, s.K, 0, err, errlen))) goto fail;
        gdn_gen_h0(ch->h0, seed);
        failed_stage = "chunk_h";
        if (gdn_chunk_h_ref(REF_PARITY, s, gdn_view_tensor(ch->k), gdn_view_tensor(ch->w), gdn_view_tensor(ch->u),
                            gdn_view_tensor(ch->gc), gdn_view_tensor(ch->h0), gdn_sink_tensor(ch->h),
                            gdn_sink_tensor(ch->v_new), gdn_sink_tensor(ch->final)))
            goto fail_ref;
    }
    return 0;
fail_ref:
    snprintf(err, errlen, "out of memory running the %s reference for the input chain: reduce the shape",
             failed_stage);
fail:
    gdn_chain_free(ch);
    return -1;
}

tensor *gdn_chain_take(tensor **slot, const char *name) {
    tensor *t = *slot;
    *slot = NULL;
    if (t) snprintf(t->name, sizeof t->name, "%s", name);
    return t;
}

void gdn_chain_free(gdn_chain *ch) {
    tensor **all[] = {&ch->k, &ch->v, &ch->g,  &ch->beta, &ch->h0,    &ch->gc,   &ch->A,
                      &ch->Ai, &ch->w, &ch->u, &ch->h,    &ch->v_new, &ch->final};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tensor_free(*all[i]);
        *all[i] = NULL;
    }
}

double gdn_sum_over_chunks(int64_t T, int64_t BT, double (*f)(double n)) {
    if (BT <= 0) return 0;
    return (double)(T / BT) * f((double)BT) + (T % BT ? f((double)(T % BT)) : 0.0);
}

static double lower_pairs(double n) { return n * (n - 1) / 2; } /* below the diagonal of n x n */
static double tokens(double n) { return n; }
static double lower_incl_x2(double n) { return n * (n + 1); }  /* twice the lower triangle, diagonal in */
static double unit_lower_inverse(double n) { return n * (n * n - 1) / 3; }

double gdn_kkt_head_flops(gdn_shape s) {
    double pairs = gdn_sum_over_chunks(s.T, s.BT, lower_pairs);
    return pairs * (2.0 * s.K + 3.0) + gdn_sum_over_chunks(s.T, s.BT, tokens) * s.K;
}

double gdn_solve_tril_head_flops(gdn_shape s) { return gdn_sum_over_chunks(s.T, s.BT, unit_lower_inverse); }

double gdn_wy_head_flops(gdn_shape s) {
    double tri = gdn_sum_over_chunks(s.T, s.BT, lower_incl_x2);
    return tri * (double)(s.K + s.V) + (double)s.T * (2.0 * s.K + s.V);
}

double gdn_chunk_h_head_flops(gdn_shape s) {
    return 4.0 * s.T * s.K * s.V + (double)s.NT * s.K * s.V + 2.0 * s.T * s.V;
}

double gdn_chunk_o_head_flops(gdn_shape s) {
    double tri = gdn_sum_over_chunks(s.T, s.BT, lower_incl_x2);
    return 2.0 * s.T * s.K * s.V + tri * (double)(s.K + s.V) + 3.0 * s.T * s.V;
}

double gdn_scale(gdn_shape s) { return 1.0 / sqrt((double)s.K); }
