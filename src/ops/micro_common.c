/* micro_common.c — allocation and input generators of the micro ops. */
#include <stdio.h>
#include <stdint.h>

#include "core/rng.h"
#include "ops/micro_common.h"

int micro_alloc1(op_case *c, int i, int64_t n, char *err, size_t errlen) {
    const op_buf *b = &c->op->bufs[i];
    c->t[i] = tensor_new(b->name, b->dtype, 1, &n);
    if (!c->t[i]) {
        snprintf(err, errlen, "cannot allocate %s %s [%lld] (%.1f MB): reduce the size", c->op->name, b->name,
                 (long long)n, (double)n * (double)dtype_size(b->dtype) / 1e6);
        return -1;
    }
    return 0;
}

void micro_fill_uniform(tensor *t, uint64_t seed) {
    rng r;
    rng_stream(&r, seed, t->name);
    float *p = t->data;
    int64_t n = tensor_numel(t);
    /* Two values per 64-bit draw: a normal per element would take seconds at 1 GiB. */
    for (int64_t i = 0; i < n; i += 2) {
        uint64_t u = rng_u64(&r);
        p[i] = (float)((int32_t)(u & 0x1fffffu) - 0x100000) * 0x1p-20f;
        if (i + 1 < n) p[i + 1] = (float)((int32_t)((u >> 32) & 0x1fffffu) - 0x100000) * 0x1p-20f;
    }
}

void micro_fill_small_ints(tensor *t, uint64_t seed, int lo, int hi) {
    rng r;
    rng_stream(&r, seed, t->name);
    float *p = t->data;
    int64_t n = tensor_numel(t);
    uint64_t span = (uint64_t)(hi - lo + 1);
    for (int64_t i = 0; i < n; i++) p[i] = (float)(lo + (int)(rng_u64(&r) % span));
}

void micro_fill_u32(tensor *t, uint64_t seed) {
    rng r;
    rng_stream(&r, seed, t->name);
    uint32_t *p = t->data;
    int64_t n = tensor_numel(t);
    for (int64_t i = 0; i < n; i++) p[i] = (uint32_t)(rng_u64(&r) >> 40);
}
