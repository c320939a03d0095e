/* kcase_dump.c — --dump DIR for a kernel case, as runner/dump.c writes an op's: one
 * safetensors file, DIR/kernel_<case name>.safetensors, with every buffer of the case
 * under its name (the inputs as they went in, what the kernel may write as the last
 * run left it) and, per buffer with an expectation, `<name>.expected` (float64), as
 * an op's dump has `<name>.ref_f64`.  The metadata names the op ("kernel"), the case
 * and each buffer's dtype.
 *
 * The file is one gdnbench reads back (a case's "file" input, --fixture), so it holds
 * the dtypes gdnbench reads: float32/float16/bfloat16/int32/uint32 as they are;
 * int8/int16 widened to int32, uint8/uint16/bool to uint32 (exact); int64/uint64 as
 * float64 (exact up to 2^53).  A "struct" buffer is not written: its bytes are the
 * case's own fields, laid out as the kernel lays them out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fixture.h"
#include "runner/dump.h"
#include "runner/kcase_job.h"

/* The tensor dtype a case dtype is dumped as. */
static dtype dump_dtype(kc_dtype t) {
    switch (t) {
    case KC_F32: return DT_F32;
    case KC_F16: return DT_F16;
    case KC_BF16: return DT_BF16;
    case KC_I8: case KC_I16: case KC_I32: return DT_I32;
    case KC_U8: case KC_U16: case KC_U32: case KC_BOOL: return DT_U32;
    default: return DT_F64;
    }
}

/* t's shape (a scalar "value" as one element). */
static int shape_of(const kc_tensor *t, int64_t *shape) {
    if (t->ndim <= 0) {
        shape[0] = t->numel;
        return 1;
    }
    memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    return t->ndim;
}

/* Bytes data (t's numel elements of t's dtype) as a tensor of the dtype dumped. */
static tensor *buffer_tensor(const kc_tensor *t, const char *name, const void *data) {
    dtype dt = dump_dtype(t->dtype);
    int64_t shape[TENSOR_MAX_DIMS];
    tensor *x = tensor_new(name, dt, shape_of(t, shape), shape);
    if (!x) return NULL;
    if (dtype_size(dt) == kc_dtype_size(t->dtype) && dt != DT_F64)
        memcpy(x->data, data, t->nbytes);
    else
        for (int64_t k = 0; k < t->numel; k++) dtype_store(dt, x->data, (size_t)k, kc_load(t->dtype, data, (size_t)k));
    return x;
}

void kc_file_stem(const char *prefix, const char *name, char *out, size_t n) {
    size_t off = (size_t)snprintf(out, n, "%s", prefix);
    for (const char *p = name; *p && off + 1 < n; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                 *p == '.' || *p == '-';
        out[off++] = ok ? *p : '_';
    }
    out[off < n ? off : n - 1] = '\0';
}

/* DIR/kernel_<name>.safetensors. */
static void dump_path(const char *dir, const char *name, char *out, size_t n) {
    char stem[512];
    kc_file_stem("kernel_", name, stem, sizeof stem);
    snprintf(out, n, "%s/%s.safetensors", dir, stem);
}

/* Each buffer and expectation of the case as tensors into list (owned: free them). */
static int collect(const op_case *oc, tensor **list, int *n, char (*meta_keys)[64], char (*meta_vals)[32],
                   io_meta *meta, int *nmeta, char *err, size_t errlen) {
    const kc_job *j = kc_job_of(oc);
    const kc_case *c = j->c;
    for (int i = 0; i < c->nbufs; i++) {
        const kc_tensor *t = &j->init[i];
        if (c->bufs[i].kind == KC_BUF_STRUCT) continue;
        char name[TENSOR_NAME_MAX];
        snprintf(name, sizeof name, "%.38s", c->bufs[i].name);
        const void *bytes = j->slot[i] >= 0 ? oc->t[j->slot[i]]->data : t->data;
        if (!(list[*n] = buffer_tensor(t, name, bytes))) return snprintf(err, errlen, "--dump: out of memory"), -1;
        (*n)++;
        snprintf(meta_keys[*nmeta], 64, "dtype.%.40s", c->bufs[i].name);
        snprintf(meta_vals[*nmeta], 32, "%s", kc_dtype_name(t->dtype));
        meta[*nmeta] = (io_meta){meta_keys[*nmeta], meta_vals[*nmeta]};
        (*nmeta)++;
        double *ref = NULL;
        if (kc_expect_contents(c, i, t, &ref, err, errlen) < 0) return -1;
        if (!ref) continue;
        snprintf(name, sizeof name, "%.38s.expected", c->bufs[i].name);
        int64_t shape[TENSOR_MAX_DIMS];
        tensor *x = tensor_new(name, DT_F64, shape_of(t, shape), shape);
        if (x) memcpy(x->data, ref, (size_t)t->numel * sizeof(double));
        free(ref);
        if (!x) return snprintf(err, errlen, "--dump: out of memory"), -1;
        list[(*n)++] = x;
    }
    return 0;
}

int kc_dump_case(const char *dir, const op_case *oc, char *path_out, size_t pathlen, char *err, size_t errlen) {
    const kc_job *j = kc_job_of(oc);
    if (dump_make_dir(dir, err, errlen)) return -1;
    char path[4096];
    dump_path(dir, j->source->name, path, sizeof path);
    tensor *list[KC_MAX_BUFS * 2] = {0};
    char keys[KC_MAX_BUFS + 2][64], vals[KC_MAX_BUFS + 2][32];
    io_meta meta[KC_MAX_BUFS + 2];
    int n = 0, nmeta = 0;
    int rc = collect(oc, list, &n, keys, vals, meta, &nmeta, err, errlen);
    if (rc == 0) {
        snprintf(keys[nmeta], 64, "gdnbench_op");
        snprintf(vals[nmeta], 32, "kernel");
        meta[nmeta] = (io_meta){keys[nmeta], vals[nmeta]};
        nmeta++;
        char case_key[] = "gdnbench_case";
        meta[nmeta++] = (io_meta){case_key, j->source->name};
        rc = fixture_write_safetensors_meta(path, list, n, meta, nmeta, err, errlen);
    }
    if (rc == 0 && path_out) snprintf(path_out, pathlen, "%s", path);
    for (int i = 0; i < n; i++) tensor_free(list[i]);
    return rc;
}
