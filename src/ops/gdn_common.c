/* gdn_common.c — shared shapes, validation and input generation for GDN ops. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/gdn_common.h"

static int64_t dim_or0(const op_desc *op, const int64_t *dim, const char *name) {
    int i = op_dim_index(op, name);
    return i < 0 ? 0 : dim[i];
}

gdn_shape gdn_shape_from_dims(const op_desc *op, const int64_t *dim) {
    gdn_shape s;
    s.B = dim_or0(op, dim, "B");
    s.T = dim_or0(op, dim, "T");
    s.Hg = dim_or0(op, dim, "Hg");
    s.H = dim_or0(op, dim, "H");
    s.K = dim_or0(op, dim, "K");
    s.V = dim_or0(op, dim, "V");
    s.BT = dim_or0(op, dim, "BT");
    if (s.BT == 0) s.BT = 64;
    s.NT = s.T > 0 ? (s.T + s.BT - 1) / s.BT : 0;
    return s;
}

gdn_shape gdn_shape_of(const op_case *c) { return gdn_shape_from_dims(c->op, c->dim); }

static int in_set(int64_t v, const int64_t *set, int n) {
    for (int i = 0; i < n; i++)
        if (set[i] == v) return 1;
    return 0;
}

int gdn_validate_common(const op_desc *op, const int64_t *dim, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_from_dims(op, dim);
    static const int64_t head_dims[] = {64, 128, 256};
    if (op_dim_index(op, "T") >= 0 && s.T < 1) {
        snprintf(err, errlen, "--T %lld: T must be at least 1", (long long)s.T);
        return -1;
    }
    if (op_dim_index(op, "Hg") >= 0 && op_dim_index(op, "H") >= 0 && (s.Hg < 1 || s.H % s.Hg != 0)) {
        snprintf(err, errlen, "--H %lld is not a multiple of --Hg %lld: GQA needs H %% Hg == 0", (long long)s.H,
                 (long long)s.Hg);
        return -1;
    }
    if (op_dim_index(op, "BT") >= 0 && s.BT != 64) {
        snprintf(err, errlen, "--BT %lld: only BT=64 is supported (the chunk size of FLA and mlx-native)",
                 (long long)s.BT);
        return -1;
    }
    if (op_dim_index(op, "K") >= 0 && !in_set(s.K, head_dims, 3)) {
        snprintf(err, errlen, "--K %lld is not supported by %s: use 64, 128 or 256", (long long)s.K, op->name);
        return -1;
    }
    if (op_dim_index(op, "V") >= 0 && !in_set(s.V, head_dims, 3)) {
        snprintf(err, errlen, "--V %lld is not supported by %s: use 64, 128 or 256", (long long)s.V, op->name);
        return -1;
    }
    return 0;
}

/* Per thread, so a test harness running cases on several threads cannot mix them. */
static _Thread_local gdn_stress current_stress = GDN_STRESS_NONE;

void gdn_set_stress(gdn_stress s) { current_stress = s; }

gdn_stress gdn_current_stress(void) { return current_stress; }

static int is_key(const tensor *t) { return strcmp(t->name, "k") == 0; }

void gdn_gen_normal(tensor *t, uint64_t seed, double stddev) {
    if (current_stress == GDN_STRESS_K_LARGE && is_key(t)) stddev *= GDN_STRESS_K_RAW;
    rng r;
    rng_stream(&r, seed, t->name);
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) tensor_set(t, i, stddev * rng_normal(&r));
}

void gdn_gen_unit_rows(tensor *t, uint64_t seed) {
    rng r;
    rng_stream(&r, seed, t->name);
    int64_t d = t->shape[t->ndim - 1];
    int64_t rows = tensor_numel(t) / d;
    double row[1024];
    for (int64_t i = 0; i < rows; i++) {
        double ss = 0;
        for (int64_t j = 0; j < d && j < 1024; j++) {
            row[j] = rng_normal(&r);
            ss += row[j] * row[j];
        }
        double inv = 1.0 / sqrt(ss + 1e-12);
        if (current_stress == GDN_STRESS_K_LARGE && is_key(t)) inv *= GDN_STRESS_K_NORM;
        for (int64_t j = 0; j < d && j < 1024; j++) tensor_set(t, i * d + j, row[j] * inv);
    }
}

void gdn_gen_log_decay(tensor *t, uint64_t seed) {
    rng r;
    rng_stream(&r, seed, t->name);
    int64_t n = tensor_numel(t);
    if (current_stress == GDN_STRESS_G_NEAR_ZERO || current_stress == GDN_STRESS_G_VERY_NEG) {
        int near_zero = current_stress == GDN_STRESS_G_NEAR_ZERO;
        for (int64_t i = 0; i < n; i++) {
            double u = rng_uniform(&r);
            tensor_set(t, i, near_zero ? -1e-4 * (1.0 - u) : -19.0 - 2.0 * u);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double x = 2.5 + 1.5 * rng_normal(&r);
        double ls = -log1p(exp(-x)); /* logsigmoid(x) */
        if (ls < -8.0) ls = -8.0;
        if (ls >= 0.0) ls = -1e-6;
        tensor_set(t, i, ls);
    }
}

void gdn_gen_beta(tensor *t, uint64_t seed) {
    rng r;
    rng_stream(&r, seed, t->name);
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double b = 1.0 / (1.0 + exp(-rng_normal(&r)));
        if (current_stress == GDN_STRESS_BETA_NEAR_ZERO) b = 1e-3 * (1.0 - rng_uniform(&r));
        if (current_stress == GDN_STRESS_BETA_NEAR_ONE) b = 1.0 - 1e-3 * (1.0 - rng_uniform(&r));
        tensor_set(t, i, b);
    }
}

int gdn_alloc(op_case *c, int i, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t d4,
              char *err, size_t errlen) {
    int64_t shape[5] = {d0, d1, d2, d3, d4};
    const op_buf *b = &c->op->bufs[i];
    c->t[i] = tensor_new(b->name, b->dtype, ndim, shape);
    if (!c->t[i]) {
        char s[96];
        tensor shape_only = {.ndim = ndim};
        memcpy(shape_only.shape, shape, sizeof(int64_t) * (size_t)ndim);
        tensor_shape_str(&shape_only, s, sizeof s);
        snprintf(err, errlen, "cannot allocate %s %s %s (%.1f MB): reduce the shape", c->op->name, b->name, s,
                 (double)shape_nbytes(b->dtype, ndim, shape) / 1e6);
        return -1;
    }
    return 0;
}
