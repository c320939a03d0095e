/* kcase_buffer.c — one entry of a case's "buffers": where its bytes come from (dtype,
 * shape and init; a file; a value; a struct's fields), what it must hold afterwards
 * (expect and tolerances) and how it binds (index, readonly). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase_json_util.h"

static const char *const buffer_keys[] = {"dtype", "shape", "init",   "file",     "tensor", "value",
                                          "struct", "expect", "readonly", "index", NULL};
static const char *const expect_keys[] = {"file", "tensor", "value", "backend", "atol", "rtol", "rel_l2", "ulp", NULL};

static int parse_shape(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    char sub[KC_PATH_MAX];
    int n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : -1;
    if (n < 0 || n > TENSOR_MAX_DIMS)
        return kc_perr(p, path, "must be an array of at most %d non-negative integers, such as [8, 4096]",
                       TENSOR_MAX_DIMS);
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        int64_t d;
        kc_idx(sub, path, i);
        if (kc_get_int(p, e, sub, 0, (int64_t)1 << 40, &d) < 0) return -1;
        b->shape[i] = d;
    }
    b->ndim = n;
    b->has_shape = 1;
    uint64_t bytes = b->has_dtype ? kc_dtype_size(b->dtype) : 1;
    for (i = 0; i < n; i++) {
        if (b->shape[i] && bytes > (UINT64_C(1) << 40) / (uint64_t)b->shape[i])
            return kc_perr(p, path, "is more than 1 TiB of elements: give a smaller shape");
        bytes *= (uint64_t)b->shape[i];
    }
    return 0;
}

/* Two numbers [a, b] for arange/uniform/normal. */
static int init_pair(kc_pctx *p, const cJSON *x, const char *path, double out[2]) {
    char sub[KC_PATH_MAX];
    if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != 2) return kc_perr(p, path, "must be an array of two numbers");
    for (int i = 0; i < 2; i++) {
        kc_idx(sub, path, i);
        if (kc_get_number(p, cJSON_GetArrayItem(x, i), sub, &out[i]) < 0) return -1;
    }
    return 0;
}

static int parse_init(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    static const char *const init_keys[] = {"fill", "arange", "uniform", "normal", NULL};
    static const char *hint = "use \"zeros\", \"poison\", {\"fill\": v}, {\"arange\": [start, step]}, "
                              "{\"uniform\": [lo, hi]} or {\"normal\": [mean, std]}";
    char sub[KC_PATH_MAX];
    b->has_init = 1;
    b->init_arg[0] = b->init_arg[1] = 0;
    if (cJSON_IsString(x)) {
        if (strcmp(x->valuestring, "zeros") == 0) b->init = KC_INIT_ZEROS;
        else if (strcmp(x->valuestring, "poison") == 0) b->init = KC_INIT_POISON;
        else return kc_perr(p, path, "\"%.40s\" is not an init: %s", x->valuestring, hint);
        return 0;
    }
    if (!cJSON_IsObject(x) || cJSON_GetArraySize(x) != 1) return kc_perr(p, path, "%s", hint);
    if (kc_check_object(p, x, path, init_keys) < 0) return -1;
    const cJSON *e = x->child;
    kc_key(sub, path, e->string);
    if (strcmp(e->string, "fill") == 0) {
        b->init = KC_INIT_FILL;
        return kc_get_number(p, e, sub, &b->init_arg[0]);
    }
    b->init = !strcmp(e->string, "arange") ? KC_INIT_ARANGE : !strcmp(e->string, "uniform") ? KC_INIT_UNIFORM
                                                                                           : KC_INIT_NORMAL;
    if (init_pair(p, e, sub, b->init_arg) < 0) return -1;
    if (b->init == KC_INIT_UNIFORM && !(b->init_arg[0] < b->init_arg[1]))
        return kc_perr(p, sub, "needs lo < hi");
    if (b->init == KC_INIT_NORMAL && b->init_arg[1] < 0) return kc_perr(p, sub, "needs a std of 0 or more");
    return 0;
}

static int parse_tolerances(kc_pctx *p, const cJSON *x, const char *path, kc_expect *e) {
    static const char *const names[] = {"atol", "rtol", "rel_l2", "ulp"};
    double *dst[] = {&e->atol, &e->rtol, &e->rel_l2, &e->ulp};
    char sub[KC_PATH_MAX];
    for (int i = 0; i < 4; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, names[i]);
        if (!t) continue;
        kc_key(sub, path, names[i]);
        if (kc_get_number(p, t, sub, dst[i]) < 0) return -1;
        if (*dst[i] < 0) return kc_perr(p, sub, "must be 0 or more");
        e->has |= 1u << i;
    }
    return 0;
}

static int parse_expect(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    char sub[KC_PATH_MAX];
    kc_expect *e = &b->expect;
    if (kc_check_object(p, x, path, expect_keys) < 0) return -1;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(x, "file"), *v = cJSON_GetObjectItemCaseSensitive(x, "value"),
                *be = cJSON_GetObjectItemCaseSensitive(x, "backend"), *t = cJSON_GetObjectItemCaseSensitive(x, "tensor");
    if (!!f + !!v + !!be != 1) return kc_perr(p, path, "needs exactly one of \"file\", \"value\" or \"backend\"");
    if (t && !f) return kc_perr(p, path, "\"tensor\" goes with \"file\" (a member of an .npz or .safetensors)");
    if (f) {
        e->kind = KC_EXPECT_FILE;
        kc_key(sub, path, "file");
        if (kc_get_string(p, f, sub, &e->file) < 0) return -1;
        kc_key(sub, path, "tensor");
        if (t && kc_get_string(p, t, sub, &e->tensor) < 0) return -1;
    } else if (v) {
        e->kind = KC_EXPECT_VALUE;
        kc_key(sub, path, "value");
        if (kc_get_values(p, v, sub, b->has_dtype ? (int)b->dtype : -1, &e->value) < 0) return -1;
    } else {
        e->kind = KC_EXPECT_BACKEND;
        kc_key(sub, path, "backend");
        if (kc_get_string(p, be, sub, &e->backend) < 0) return -1;
        if (strcmp(e->backend, "sw") != 0)
            return kc_perr(p, sub, "\"%.40s\" is not a reference backend: use \"sw\"", e->backend);
    }
    return parse_tolerances(p, x, path, e);
}

static int parse_fields(kc_pctx *p, const cJSON *x, const char *path, int depth, kc_field **out, int *n);

/* One field's JSON: numbers, an object (a nested struct) or an array of objects. */
static int parse_field(kc_pctx *p, const cJSON *f, const char *path, int depth, kc_field *fd) {
    if (cJSON_IsObject(f)) {
        fd->kind = KC_FIELD_STRUCT;
        return parse_fields(p, f, path, depth + 1, &fd->sub, &fd->nsub);
    }
    if (!cJSON_IsArray(f) || !cJSON_IsObject(f->child)) return kc_get_values(p, f, path, -1, &fd->value);
    fd->kind = KC_FIELD_STRUCTS;
    int n = cJSON_GetArraySize(f), k = 0;
    if (!(fd->sub = calloc((size_t)n, sizeof *fd->sub))) return kc_perr(p, path, "out of memory");
    char sub[KC_PATH_MAX];
    for (const cJSON *e = f->child; e; e = e->next, k++) {
        snprintf(sub, sizeof sub, "%.200s[%d]", path, k);
        if (!cJSON_IsObject(e))
            return kc_perr(p, sub, "an array of structs holds only objects (one per element, its fields by name)");
        /* counted before it is filled, so a failure part-way is freed with the rest */
        kc_field *el = &fd->sub[fd->nsub++];
        el->kind = KC_FIELD_STRUCT;
        if (parse_fields(p, e, sub, depth + 1, &el->sub, &el->nsub) < 0) return -1;
    }
    return 0;
}

/* An object of fields by name (a struct, or a nested one at `depth`). */
static int parse_fields(kc_pctx *p, const cJSON *x, const char *path, int depth, kc_field **out, int *nout) {
    char sub[KC_PATH_MAX];
    if (depth > KC_MAX_FIELD_DEPTH) return kc_perr(p, path, "structs nested more than %d deep", KC_MAX_FIELD_DEPTH);
    if (kc_check_object(p, x, path, NULL) < 0) return -1;
    int n = cJSON_GetArraySize(x);
    if (!(*out = calloc((size_t)(n ? n : 1), sizeof **out))) return kc_perr(p, path, "out of memory");
    for (const cJSON *f = x->child; f; f = f->next) {
        kc_key(sub, path, f->string);
        if (!kc_is_identifier(f->string)) return kc_perr(p, sub, "is not a field name (letters, digits, _)");
        kc_field *fd = &(*out)[(*nout)++];
        if (!(fd->name = kc_strdup(f->string))) return kc_perr(p, sub, "out of memory");
        if (parse_field(p, f, sub, depth, fd) < 0) return -1;
    }
    return 0;
}

static int parse_struct(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    b->kind = KC_BUF_STRUCT;
    return parse_fields(p, x, path, 0, &b->fields, &b->nfields);
}

/* Which form the buffer is written in, and the keys that form forbids. */
static int parse_form(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    char sub[KC_PATH_MAX];
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(x, "file"), *val = cJSON_GetObjectItemCaseSensitive(x, "value"),
                *st = cJSON_GetObjectItemCaseSensitive(x, "struct"), *init = cJSON_GetObjectItemCaseSensitive(x, "init");
    if (!!file + !!val + !!st > 1) return kc_perr(p, path, "give one of \"file\", \"value\" or \"struct\", not several");
    if (init && (file || val || st))
        return kc_perr(p, path, "\"init\" goes with \"dtype\" and \"shape\", not with \"%s\"",
                       file ? "file" : val ? "value" : "struct");
    if (cJSON_GetObjectItemCaseSensitive(x, "tensor") && !file)
        return kc_perr(p, path, "\"tensor\" goes with \"file\" (a member of an .npz or .safetensors)");
    if (st) {
        if (b->has_dtype || b->has_shape) return kc_perr(p, path, "a \"struct\" takes no \"dtype\" or \"shape\"");
        kc_key(sub, path, "struct");
        return parse_struct(p, st, sub, b);
    }
    if (file) {
        b->kind = KC_BUF_FILE;
        kc_key(sub, path, "file");
        if (kc_get_string(p, file, sub, &b->file) < 0) return -1;
        kc_key(sub, path, "tensor");
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "tensor");
        return t ? kc_get_string(p, t, sub, &b->tensor) : 0;
    }
    if (!b->has_dtype) return kc_perr(p, path, "needs \"dtype\" (one of %s), or a \"file\"", kc_dtype_list());
    if (val) {
        b->kind = KC_BUF_VALUE;
        kc_key(sub, path, "value");
        if (kc_get_values(p, val, sub, (int)b->dtype, &b->value) < 0) return -1;
        if (b->has_shape) {
            int64_t n = 1;
            for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
            if (n != b->value.n)
                return kc_perr(p, sub, "has %d values but \"shape\" says %lld: make them agree", b->value.n, (long long)n);
        }
        return 0;
    }
    if (!b->has_shape) return kc_perr(p, path, "needs \"shape\" (such as [1024]), or a \"value\" or \"file\"");
    b->kind = KC_BUF_ARRAY;
    kc_key(sub, path, "init");
    return init ? parse_init(p, init, sub, b) : 0;
}

int kc_parse_buffer(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b) {
    char sub[KC_PATH_MAX];
    const cJSON *e;
    if (kc_check_object(p, x, path, buffer_keys) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "dtype"))) {
        kc_key(sub, path, "dtype");
        if (!cJSON_IsString(e) || kc_dtype_parse(e->valuestring, &b->dtype) < 0)
            return kc_perr(p, sub, "must be one of %s", kc_dtype_list());
        b->has_dtype = 1;
    }
    kc_key(sub, path, "shape");
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "shape")) && parse_shape(p, e, sub, b) < 0) return -1;
    if (parse_form(p, x, path, b) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "index"))) {
        int64_t i;
        kc_key(sub, path, "index");
        if (kc_get_int(p, e, sub, 0, 30, &i) < 0) return -1;
        b->index = (int)i;
    }
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "readonly"))) {
        kc_key(sub, path, "readonly");
        if (kc_get_bool(p, e, sub, &b->readonly) < 0) return -1;
    }
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "expect"))) {
        kc_key(sub, path, "expect");
        if (b->kind == KC_BUF_STRUCT || b->kind == KC_BUF_VALUE)
            return kc_perr(p, sub, "a \"%s\" buffer is bound with setBytes and cannot be written: drop \"expect\"",
                           b->kind == KC_BUF_STRUCT ? "struct" : "value");
        if (b->readonly) return kc_perr(p, sub, "a readonly buffer must stay unchanged: drop \"expect\" or \"readonly\"");
        if (parse_expect(p, e, sub, b) < 0) return -1;
    }
    return 0;
}
