/* kcase_data.c — a case's buffers as bytes: files read through src/io and checked
 * against the case's dtype and shape, init patterns, values, and expected outputs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "io/io_util.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/safetensors.h"
#include "kcase/kcase_data.h"

void kc_tensor_free(kc_tensor *t) {
    free(t->data);
    memset(t, 0, sizeof *t);
}

void kc_poison(kc_dtype t, int pattern, void *base, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (pattern == KC_POISON_FINITE) memset((char *)base + (size_t)i * kc_dtype_size(t), 0x5a, kc_dtype_size(t));
        else if (t == KC_F32) memcpy((char *)base + 4 * i, &(uint32_t){0x7fa5a5a5u}, 4);
        else if (t == KC_BF16) memcpy((char *)base + 2 * i, &(uint16_t){0x7fa5u}, 2);
        else if (t == KC_F16) memcpy((char *)base + 2 * i, &(uint16_t){0x7da5u}, 2);
        else memset((char *)base + (size_t)i * kc_dtype_size(t), 0xa5, kc_dtype_size(t));
    }
}

int kc_is_poison(kc_dtype t, int pattern, const void *base, int64_t i) {
    size_t sz = kc_dtype_size(t);
    unsigned char want[8];
    kc_poison(t, pattern, want, 1);
    return memcmp((const char *)base + (size_t)i * sz, want, sz) == 0;
}

static int tensor_alloc(kc_tensor *t, kc_dtype dt, int ndim, const int64_t *shape, char *err, size_t errlen,
                        const char *what) {
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->ndim = ndim;
    t->numel = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->numel *= shape[i];
    }
    t->nbytes = (size_t)t->numel * kc_dtype_size(dt);
    t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
    if (!t->data) {
        io_err(err, errlen, "%s: cannot allocate %zu bytes: give a smaller shape", what, t->nbytes);
        return -1;
    }
    return 0;
}

/* One tensor out of a file, by suffix: .npy, or the named (or only) member of an
 * .npz / .safetensors. keypath names the key in messages. */
static int read_file_tensor(const kc_case *c, const char *rel, const char *member, const char *keypath, tensor **out,
                            char *err, size_t errlen) {
    char msg[768];
    char *path = kc_path(c, rel);
    io_set set = {0};
    int rc = -1;
    if (!path) return io_err(err, errlen, "%s: out of memory", keypath), -1;
    if (io_has_suffix(path, ".npy")) {
        if (member) io_err(err, errlen, "%s: %s: an .npy holds one array: drop \"tensor\"", c->path, keypath);
        else if (npy_read(path, out, msg, sizeof msg) < 0) io_err(err, errlen, "%s: %s: %s", c->path, keypath, msg);
        else rc = 0;
        free(path);
        return rc;
    }
    int r = io_has_suffix(path, ".npz")           ? npz_read(path, &set, msg, sizeof msg)
            : io_has_suffix(path, ".safetensors") ? safetensors_read(path, &set, msg, sizeof msg)
                                                  : (snprintf(msg, sizeof msg, "%s: not a .npy, .npz or .safetensors file", rel), -1);
    if (r < 0) {
        io_err(err, errlen, "%s: %s: %s", c->path, keypath, msg);
    } else {
        int k = member ? io_set_find(&set, member) : (set.n == 1 ? 0 : -1);
        if (k < 0) {
            char names[256] = "";
            for (int i = 0; i < set.n; i++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", set.e[i].t->name);
            }
            io_err(err, errlen, "%s: %s: %s %s: name one of its tensors (%s) with \"tensor\"", c->path, keypath, rel,
                   member ? "has no tensor of that name" : "holds several tensors", names);
        } else {
            *out = set.e[k].t;
            set.e[k].t = NULL;
            rc = 0;
        }
    }
    io_set_clear(&set);
    free(path);
    return rc;
}

static void shape_text(int ndim, const int64_t *shape, char *buf, size_t n) { io_shape_str(ndim, shape, buf, n); }

/* A file's tensor as buffer b says it should be: same dtype and shape when the case
 * gives them. */
static int file_contents(const kc_case *c, const kc_buffer *b, kc_tensor *out, char *err, size_t errlen) {
    char key[200], want[96], got[96];
    tensor *t = NULL;
    kc_dtype dt;
    snprintf(key, sizeof key, "buffers.%s.file", b->name);
    if (read_file_tensor(c, b->file, b->tensor, key, &t, err, errlen) < 0) return -1;
    int rc = -1;
    if (kc_dtype_from_tensor(t->dtype, &dt) < 0) {
        io_err(err, errlen, "%s: %s: %s holds %s, which a kernel case cannot bind: save it as float32", c->path, key,
               b->file, dtype_name(t->dtype));
    } else if (b->has_dtype && dt != b->dtype) {
        io_err(err, errlen, "%s: %s: %s holds %s but \"dtype\" says %s: make them agree (or drop \"dtype\")", c->path,
               key, b->file, kc_dtype_name(dt), kc_dtype_name(b->dtype));
    } else if (b->has_shape && (t->ndim != b->ndim || memcmp(t->shape, b->shape, (size_t)t->ndim * sizeof *t->shape))) {
        shape_text(t->ndim, t->shape, got, sizeof got);
        shape_text(b->ndim, b->shape, want, sizeof want);
        io_err(err, errlen, "%s: %s: %s has shape %s but \"shape\" says %s: make them agree (or drop \"shape\")",
               c->path, key, b->file, got, want);
    } else if (tensor_alloc(out, dt, t->ndim, t->shape, err, errlen, key) == 0) {
        memcpy(out->data, t->data, out->nbytes);
        rc = 0;
    }
    tensor_free(t);
    return rc;
}

static void fill_init(const kc_buffer *b, uint64_t seed, int poison, int poison_default, kc_tensor *t) {
    kc_init init = b->has_init ? b->init : poison_default ? KC_INIT_POISON : KC_INIT_ZEROS;
    rng r;
    rng_stream(&r, seed, b->name);
    if (init == KC_INIT_POISON) {
        kc_poison(t->dtype, poison, t->data, t->numel);
        return;
    }
    for (int64_t i = 0; init != KC_INIT_ZEROS && i < t->numel; i++) {
        double v = init == KC_INIT_FILL     ? b->init_arg[0]
                   : init == KC_INIT_ARANGE  ? b->init_arg[0] + (double)i * b->init_arg[1]
                   : init == KC_INIT_UNIFORM ? b->init_arg[0] + (b->init_arg[1] - b->init_arg[0]) * rng_uniform(&r)
                                             : b->init_arg[0] + b->init_arg[1] * rng_normal(&r);
        kc_store(t->dtype, t->data, (size_t)i, v);
    }
}

int kc_buffer_contents(const kc_case *c, int i, uint64_t seed, int poison, int poison_default, kc_tensor *out, char *err,
                       size_t errlen) {
    const kc_buffer *b = &c->bufs[i];
    char key[200];
    snprintf(key, sizeof key, "%s: buffers.%s", c->path, b->name);
    switch (b->kind) {
    case KC_BUF_FILE: return file_contents(c, b, out, err, errlen);
    case KC_BUF_ARRAY:
        if (tensor_alloc(out, b->dtype, b->ndim, b->shape, err, errlen, key) < 0) return -1;
        fill_init(b, seed, poison ? poison : KC_POISON_NAN, poison_default, out);
        return 0;
    case KC_BUF_VALUE: {
        int64_t n = b->value.n;
        if (tensor_alloc(out, b->dtype, b->has_shape ? b->ndim : b->value.is_array, b->has_shape ? b->shape : &n, err,
                         errlen, key) < 0)
            return -1;
        for (int k = 0; k < b->value.n; k++) kc_store(b->dtype, out->data, (size_t)k, b->value.v[k]);
        return 0;
    }
    default: io_err(err, errlen, "%s: a struct's bytes follow the kernel's layout of it", key); return -1;
    }
}

/* Expected values out of a file, shaped like the buffer. */
static int expect_file(const kc_case *c, const kc_buffer *b, const kc_tensor *ct, double *ref, char *err,
                       size_t errlen) {
    char key[200], want[96], got[96];
    tensor *t = NULL;
    snprintf(key, sizeof key, "buffers.%s.expect.file", b->name);
    if (read_file_tensor(c, b->expect.file, b->expect.tensor, key, &t, err, errlen) < 0) return -1;
    if (t->ndim != ct->ndim || memcmp(t->shape, ct->shape, (size_t)t->ndim * sizeof *t->shape)) {
        shape_text(t->ndim, t->shape, got, sizeof got);
        shape_text(ct->ndim, ct->shape, want, sizeof want);
        io_err(err, errlen, "%s: %s: %s has shape %s but buffer %s is %s: save the expected output in the buffer's shape",
               c->path, key, b->expect.file, got, b->name, want);
        tensor_free(t);
        return -1;
    }
    for (int64_t k = 0; k < ct->numel; k++) ref[k] = tensor_get(t, k);
    tensor_free(t);
    return 0;
}

int kc_expect_contents(const kc_case *c, int i, const kc_tensor *ct, double **ref, char *err, size_t errlen) {
    const kc_buffer *b = &c->bufs[i];
    const kc_expect *e = &b->expect;
    *ref = NULL;
    if (e->kind != KC_EXPECT_FILE && e->kind != KC_EXPECT_VALUE) return 0;
    if (e->kind == KC_EXPECT_VALUE && e->value.n != 1 && e->value.n != ct->numel) {
        io_err(err, errlen, "%s: buffers.%s.expect.value: has %d values for %lld elements: give one, or one per element",
               c->path, b->name, e->value.n, (long long)ct->numel);
        return -1;
    }
    double *r = malloc((size_t)(ct->numel ? ct->numel : 1) * sizeof *r);
    if (!r) return io_err(err, errlen, "%s: buffers.%s.expect: out of memory", c->path, b->name), -1;
    if (e->kind == KC_EXPECT_FILE) {
        if (expect_file(c, b, ct, r, err, errlen) < 0) return free(r), -1;
    } else {
        for (int64_t k = 0; k < ct->numel; k++) r[k] = e->value.v[e->value.n == 1 ? 0 : k];
    }
    *ref = r;
    return 0;
}

static int check_source(const kc_case *c, char *err, size_t errlen) {
    if (!c->source_path) return 0;
    char *path = kc_path(c, c->source_path);
    char *text = NULL;
    size_t len;
    char msg[600];
    int rc = path ? io_read_small_file(path, 64u << 20, &text, &len, msg, sizeof msg) : -1;
    if (rc < 0) io_err(err, errlen, "%s: source: %s", c->path, path ? msg : "out of memory");
    free(text);
    free(path);
    return rc;
}

int kc_check_files(const kc_case *c, char *err, size_t errlen) {
    if (check_source(c, err, errlen) < 0) return -1;
    for (int i = 0; i < c->nbufs; i++) {
        const kc_buffer *b = &c->bufs[i];
        kc_tensor t;
        double *ref = NULL;
        if (b->kind == KC_BUF_STRUCT) continue;
        if (kc_buffer_contents(c, i, 0, KC_POISON_NAN, 0, &t, err, errlen) < 0) return -1;
        int rc = kc_expect_contents(c, i, &t, &ref, err, errlen);
        free(ref);
        kc_tensor_free(&t);
        if (rc < 0) return -1;
    }
    return 0;
}
