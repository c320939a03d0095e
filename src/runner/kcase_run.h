/* kcase_run.h — running a kernel case on a Metal device (the software device or a
 * GPU, through the one bridge src/metal): compile with its includes, defines and
 * function constants, bind by reflection (kcase_bind.h), fill the buffers, run every
 * launch in one command buffer `iters` times from the same initial contents, and
 * check each buffer: the expected values with their tolerances, unwritten (poisoned)
 * elements, NaN/Inf, readonly inputs unchanged, bitwise determinism across runs. */
#ifndef GDN_KCASE_RUN_H
#define GDN_KCASE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "kcase/kcase.h"
#include "metal/mtl.h"

typedef struct kc_run_opts {
    int iters;            /* runs (>= 1); all must give the same bytes */
    uint64_t seed;        /* the init patterns' seed */
    int fast_math;
    int poison;           /* KC_POISON_* of the outputs' initial bytes (0: the NaN pattern) */
} kc_run_opts;

typedef struct kc_buf_result {
    char name[64];
    int index;            /* the first [[buffer(n)]] it is bound at */
    int writable, readonly;
    kc_dtype dtype;
    int64_t numel;
    int64_t nan, inf, unwritten, changed; /* changed: elements of a readonly buffer that differ */
    int checked;          /* compared with an expectation */
    double atol, rtol, rel_l2_max, ulp_max;  /* the tolerances applied */
    double max_abs, max_rel, rel_l2;
    double ulp;           /* largest ulp distance of a float output (-1: not measured) */
    int64_t bad, first_bad;
    uint64_t hash;        /* FNV-1a of the first run's bytes (validate compares schedules) */
    int pass;
} kc_buf_result;

typedef struct kc_result {
    int nbufs;
    kc_buf_result bufs[32];
    int iters;
    int deterministic;
    double min_us, median_us;   /* GPU (or device) time of the whole command buffer */
    double samples[256];  /* each run's time, in order (the first 256) */
    int nsamples;
    int pass;
    char fault[1024];     /* a run the device failed (check findings, fault): the reason */
} kc_result;

/* 0: it ran (r->pass is the verdict; a device fault fails it with r->fault); -1 with
 * err: the case cannot run on this kernel (bad input, exit 2). */
int kc_run(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_result *r, char *err, size_t errlen);

/* Compares out (n elements of dt) with ref under the buffer's expectation and fills
 * the metrics of r (kcase_check.c). */
void kc_check_expect(const kc_buffer *b, kc_dtype dt, const void *out, const double *ref, int64_t n, kc_buf_result *r);

/* An "mlx_metal_kernel" case as a plain case (kcase_mlx_lower.c): MLX's generated
 * text as its source, MLX's host name as its function, and value buffers for the
 * generated <input>_shape/_strides/_ndim parameters.  NULL with err. */
kc_case *kc_mlx_lower(const kc_case *c, uint64_t seed, char *err, size_t errlen);

struct run_record;
/* A run record of the case's run (the JSON report, schema 1, with its "case" key):
 * device, kernel, launches, every run's time, a check per buffer with an
 * expectation, determinism and status.  device_name/backend as run on. */
int kc_fill_record(const kc_case *c, const kc_result *r, const char *device_name, const char *backend,
                   uint64_t seed, struct run_record *rec, char *err, size_t errlen);

#endif
