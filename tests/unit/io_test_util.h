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
#include "io/npy.h"
#include "io/npz.h"

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

/* Little-endian appends for the archive builder below. */
static inline void io_test_put(uint8_t *buf, size_t *at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) buf[(*at)++] = (uint8_t)(v >> (8 * i));
}

/* An .npz as numpy.savez writes it (Python's zipfile, each member opened with
 * force_zip64=True): NAME.npy members stored, every local header with 0xffffffff
 * sizes and a zip64 extra field holding them, the central directory with plain
 * 32-bit fields, then the end record.  method 8 labels the members deflated (as
 * numpy.savez_compressed would; the bytes stay stored); zip64_end adds the zip64 end
 * record and locator and sets the plain end record's fields to 0xffff/0xffffffff.
 * malloc'd; NULL on failure. */
static inline uint8_t *io_test_npz(tensor *const *ts, int n, int method, int zip64_end, size_t *len) {
    uint8_t *npy[16];
    size_t npy_len[16], total = 256;
    char err[256];
    if (n > 16) return NULL;
    for (int i = 0; i < n; i++) {
        if (npy_serialize(ts[i], &npy[i], &npy_len[i], err, sizeof err) != 0) return NULL;
        total += 2 * (46 + 20 + strlen(ts[i]->name) + 4) + npy_len[i];
    }
    uint8_t *b = calloc(1, total), *dir = calloc(1, total);
    size_t at = 0, dl = 0;
    for (int i = 0; b && dir && i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.npy", ts[i]->name);
        size_t nl = strlen(name), local = at;
        uint32_t crc = npz_crc32(0, npy[i], npy_len[i]);
        io_test_put(b, &at, 0x04034b50, 4);
        io_test_put(b, &at, 45, 2);               /* version needed: zip64 */
        io_test_put(b, &at, 0, 2);                /* flags */
        io_test_put(b, &at, (uint64_t)method, 2);
        io_test_put(b, &at, 0, 4);                /* time, date */
        io_test_put(b, &at, crc, 4);
        io_test_put(b, &at, 0xffffffffu, 4);      /* sizes in the zip64 extra */
        io_test_put(b, &at, 0xffffffffu, 4);
        io_test_put(b, &at, nl, 2);
        io_test_put(b, &at, 20, 2);
        memcpy(b + at, name, nl);
        at += nl;
        io_test_put(b, &at, 1, 2);
        io_test_put(b, &at, 16, 2);
        io_test_put(b, &at, npy_len[i], 8);
        io_test_put(b, &at, npy_len[i], 8);
        memcpy(b + at, npy[i], npy_len[i]);
        at += npy_len[i];
        io_test_put(dir, &dl, 0x02014b50, 4);
        io_test_put(dir, &dl, 45, 2);
        io_test_put(dir, &dl, 45, 2);
        io_test_put(dir, &dl, 0, 2);
        io_test_put(dir, &dl, (uint64_t)method, 2);
        io_test_put(dir, &dl, 0, 4);
        io_test_put(dir, &dl, crc, 4);
        io_test_put(dir, &dl, npy_len[i], 4);
        io_test_put(dir, &dl, npy_len[i], 4);
        io_test_put(dir, &dl, nl, 2);
        io_test_put(dir, &dl, 0, 2);              /* extra */
        io_test_put(dir, &dl, 0, 2);              /* comment */
        io_test_put(dir, &dl, 0, 2);              /* disk */
        io_test_put(dir, &dl, 0, 2);              /* internal attributes */
        io_test_put(dir, &dl, 0, 4);              /* external attributes */
        io_test_put(dir, &dl, local, 4);
        memcpy(dir + dl, name, nl);
        dl += nl;
    }
    for (int i = 0; i < n; i++) free(npy[i]);
    if (!b || !dir) {
        free(b);
        free(dir);
        return NULL;
    }
    size_t dir_off = at;
    memcpy(b + at, dir, dl);
    at += dl;
    free(dir);
    if (zip64_end) {
        size_t end64 = at;
        io_test_put(b, &at, 0x06064b50, 4);
        io_test_put(b, &at, 44, 8);
        io_test_put(b, &at, 45, 2);
        io_test_put(b, &at, 45, 2);
        io_test_put(b, &at, 0, 4);
        io_test_put(b, &at, 0, 4);
        io_test_put(b, &at, (uint64_t)n, 8);
        io_test_put(b, &at, (uint64_t)n, 8);
        io_test_put(b, &at, dl, 8);
        io_test_put(b, &at, dir_off, 8);
        io_test_put(b, &at, 0x07064b50, 4);
        io_test_put(b, &at, 0, 4);
        io_test_put(b, &at, end64, 8);
        io_test_put(b, &at, 1, 4);
    }
    io_test_put(b, &at, 0x06054b50, 4);
    io_test_put(b, &at, 0, 4);
    io_test_put(b, &at, zip64_end ? 0xffff : (uint64_t)n, 2);
    io_test_put(b, &at, zip64_end ? 0xffff : (uint64_t)n, 2);
    io_test_put(b, &at, zip64_end ? 0xffffffffu : dl, 4);
    io_test_put(b, &at, zip64_end ? 0xffffffffu : dir_off, 4);
    io_test_put(b, &at, 0, 2);
    *len = at;
    return b;
}

#endif
