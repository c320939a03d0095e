/* tensor.h — a named, typed, contiguous row-major host array.
 *
 * The unit every layer passes around: generators fill them, references read them,
 * backends copy them into device buffers, fixtures load and save them.  A tensor
 * owns its data (freed by tensor_free) unless it was made with tensor_wrap. */
#ifndef GDN_TENSOR_H
#define GDN_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"

#define TENSOR_MAX_DIMS 6
#define TENSOR_NAME_MAX 48

typedef struct tensor {
    char name[TENSOR_NAME_MAX];
    dtype dtype;
    int ndim;
    int64_t shape[TENSOR_MAX_DIMS];
    void *data;
    int owns_data;
} tensor;

/* Allocates a zero-filled tensor; returns NULL when the size overflows or memory
 * runs out.  shape has ndim entries. */
tensor *tensor_new(const char *name, dtype dt, int ndim, const int64_t *shape);
tensor *tensor_new_like(const tensor *t, const char *name, dtype dt);
tensor *tensor_wrap(const char *name, dtype dt, int ndim, const int64_t *shape, void *data);
tensor *tensor_clone(const tensor *t);
void tensor_free(tensor *t);

int64_t tensor_numel(const tensor *t);
size_t tensor_nbytes(const tensor *t);
double tensor_get(const tensor *t, int64_t i);
void tensor_set(tensor *t, int64_t i, double v);

/* Memory for a large array written whole soon after (reference outputs): on Linux,
 * from 4 MiB up, 2 MiB aligned and advised for transparent huge pages, as numpy
 * does for its arrays, so the first touch faults once per 2 MiB instead of once per
 * 4 KiB (where faults are dear, in a VM, those of a 128 MiB output cost more than
 * the reference that fills it).  Not zeroed; free() it.  NULL when out of memory. */
void *host_alloc_large(size_t nbytes);

/* Writes "[1,4096,32,64]" into buf. */
void tensor_shape_str(const tensor *t, char *buf, size_t n);

/* Flat index -> coordinates (row-major). */
void tensor_unravel(const tensor *t, int64_t flat, int64_t *coord);

/* Bytes held by live tensors (allocation stops at 80% of physical memory, or
 * GDNBENCH_MEM_LIMIT_MB). */
size_t tensor_live_bytes(void);

/* Checked product of dims into bytes; returns 0 on overflow or negative dims. */
size_t shape_nbytes(dtype dt, int ndim, const int64_t *shape);

#endif
