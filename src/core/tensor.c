/* tensor.c — allocation and element access for host tensors. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/tensor.h"

size_t shape_nbytes(dtype dt, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > TENSOR_MAX_DIMS) return 0;
    size_t n = dtype_size(dt);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return 0;
        if (shape[i] != 0 && n > SIZE_MAX / (size_t)shape[i]) return 0;
        n *= (size_t)shape[i];
    }
    return n;
}

/* Host memory held by live tensors.  A shape whose tensors would not fit in 80% of
 * physical memory is refused up front (tensor_new returns NULL and the op reports
 * "reduce the shape"), instead of letting the OOM killer end the run half-way.
 * GDNBENCH_MEM_LIMIT_MB overrides the budget. */
static _Atomic size_t live_bytes;

static size_t memory_budget(void) {
    const char *env = getenv("GDNBENCH_MEM_LIMIT_MB");
    if (env && atol(env) > 0) return (size_t)atol(env) << 20;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return SIZE_MAX;
    return (size_t)((double)pages * (double)page * 0.8);
}

size_t tensor_live_bytes(void) { return atomic_load(&live_bytes); }

static tensor *tensor_header(const char *name, dtype dt, int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > TENSOR_MAX_DIMS) return NULL;
    tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    return t;
}

tensor *tensor_new(const char *name, dtype dt, int ndim, const int64_t *shape) {
    size_t nb = shape_nbytes(dt, ndim, shape);
    int empty = 0;
    for (int i = 0; i < ndim; i++) empty |= shape[i] == 0;
    if (nb == 0 && !empty) return NULL;
    if (nb > memory_budget() || atomic_load(&live_bytes) + nb > memory_budget()) return NULL;
    tensor *t = tensor_header(name, dt, ndim, shape);
    if (!t) return NULL;
    t->data = calloc(1, nb ? nb : 1);
    if (!t->data) {
        free(t);
        return NULL;
    }
    t->owns_data = 1;
    atomic_fetch_add(&live_bytes, nb);
    return t;
}

tensor *tensor_new_like(const tensor *src, const char *name, dtype dt) {
    return tensor_new(name ? name : src->name, dt, src->ndim, src->shape);
}

tensor *tensor_wrap(const char *name, dtype dt, int ndim, const int64_t *shape, void *data) {
    tensor *t = tensor_header(name, dt, ndim, shape);
    if (t) t->data = data;
    return t;
}

tensor *tensor_clone(const tensor *src) {
    tensor *t = tensor_new(src->name, src->dtype, src->ndim, src->shape);
    if (t) memcpy(t->data, src->data, tensor_nbytes(src));
    return t;
}

void *host_alloc_large(size_t nbytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    size_t huge = (size_t)2 << 20;
    if (nbytes >= 2 * huge && nbytes <= SIZE_MAX - huge) {
        size_t n = (nbytes + huge - 1) & ~(huge - 1);
        void *p = aligned_alloc(huge, n);
        if (p) {
            madvise(p, n, MADV_HUGEPAGE); /* advice only: without THP it is plain memory */
            return p;
        }
    }
#endif
    return malloc(nbytes ? nbytes : 1);
}

void tensor_free(tensor *t) {
    if (!t) return;
    if (t->owns_data) {
        atomic_fetch_sub(&live_bytes, tensor_nbytes(t));
        free(t->data);
    }
    free(t);
}

int64_t tensor_numel(const tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

size_t tensor_nbytes(const tensor *t) { return (size_t)tensor_numel(t) * dtype_size(t->dtype); }

double tensor_get(const tensor *t, int64_t i) { return dtype_load(t->dtype, t->data, (size_t)i); }

void tensor_set(tensor *t, int64_t i, double v) { dtype_store(t->dtype, t->data, (size_t)i, v); }

void tensor_shape_str(const tensor *t, char *buf, size_t n) {
    size_t off = 0;
    off += (size_t)snprintf(buf + off, n > off ? n - off : 0, "[");
    for (int i = 0; i < t->ndim; i++)
        off += (size_t)snprintf(buf + off, n > off ? n - off : 0, "%s%lld", i ? "," : "",
                                (long long)t->shape[i]);
    snprintf(buf + off, n > off ? n - off : 0, "]");
}

void tensor_unravel(const tensor *t, int64_t flat, int64_t *coord) {
    for (int i = t->ndim - 1; i >= 0; i--) {
        int64_t d = t->shape[i] ? t->shape[i] : 1;
        coord[i] = flat % d;
        flat /= d;
    }
}
