/* io_test_util.h — helpers shared by the fixture I/O tests: temporary directories,
 * tensors with deterministic contents of every dtype, tensor equality. */
#ifndef GDN_IO_TEST_UTIL_H
#define GDN_IO_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/rng.h"
#include "core/tensor.h"

/* mkdtemp under $TMPDIR (or /tmp); aborts the test process on failure. */
static inline void io_test_tmpdir(char *buf, size_t n) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, n, "%s/gdnbench-io-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Removes a flat directory (files only) made by io_test_tmpdir. */
static inline void io_test_rmdir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    char p[1024];
    for (struct dirent *de; (de = readdir(d));) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static inline void io_test_write(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        perror(path);
        exit(2);
    }
    fclose(f);
}

/* A tensor whose bytes are pseudo-random but whose values are finite (so NaN
 * payloads cannot make equal tensors compare unequal). */
static inline tensor *io_test_tensor(const char *name, dtype dt, int ndim, const int64_t *shape, uint64_t seed) {
    tensor *t = tensor_new(name, dt, ndim, shape);
    if (!t) return NULL;
    rng r;
    rng_stream(&r, seed, name);
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v = dt == DT_I32 ? (double)(int32_t)rng_u64(&r) : dt == DT_U32 ? (double)(uint32_t)rng_u64(&r)
                                                                           : 100.0 * rng_normal(&r);
        tensor_set(t, i, v);
    }
    return t;
}

/* Same name, dtype, shape and bytes. */
static inline int io_test_same(const tensor *a, const tensor *b) {
    if (!a || !b || strcmp(a->name, b->name) != 0 || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return memcmp(a->data, b->data, tensor_nbytes(a)) == 0;
}

#endif
