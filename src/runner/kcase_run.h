/* kcase_run.h — a kernel case through the one run driver (runner/driver.h), as an op
 * run goes: the case becomes an op_case (kc_op_case_new) that a kernel-case backend
 * (kc_backend_open: the software device or a GPU, through the one bridge src/metal)
 * prepares — compile with its includes, defines and function constants, bind by
 * reflection (kcase_bind.h), fill the buffers — and runs as runner_run_case runs any
 * case: warmup, timed samples by the same rule (exact --iters or adaptive), every
 * launch in one command buffer from the same initial contents each run, the outputs
 * bitwise the same on every run.  The command's `after` hook then checks each buffer
 * (kc_check_case: expected values with their tolerances, unwritten (poisoned)
 * elements, NaN/Inf, readonly inputs unchanged) and makes the record a kernel case's
 * (kc_record_case). */
#ifndef GDN_KCASE_RUN_H
#define GDN_KCASE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "kcase/kcase.h"
#include "metal/mtl.h"
#include "runner/backend.h"
#include "runner/record.h"

#define KC_MAX_BUFS 32
#define KC_MAX_LAUNCHES 64

typedef struct kc_buf_result {
    char name[64];
    int index;            /* the first [[buffer(n)]] it is bound at (-1: not bound) */
    int writable, readonly;
    int by_bytes;         /* bound with setBytes (a value or struct of at most KC_SET_BYTES_MAX bytes) */
    kc_dtype dtype;
    int64_t numel;
    int64_t nan, inf, unwritten, changed; /* changed: elements of a readonly buffer that differ */
    int checked;          /* compared with an expectation */
    char reference[16];   /* what it was compared with: "expected" (a file or value) or "sw" */
    int self_ref;         /* {"backend": "sw"} on the software device: its own reference, not a check */
    double atol, rtol, rel_l2_max, ulp_max;  /* the tolerances applied */
    double max_abs, max_rel, rel_l2;
    double ulp;           /* largest ulp distance of a float output (-1: not measured) */
    int64_t bad, first_bad;
    uint64_t hash;        /* FNV-1a of the buffer's bytes after the run (validate compares schedules) */
    int pass;
} kc_buf_result;

typedef struct kc_result {
    int prepared;         /* the backend compiled, bound and filled the case */
    int nbufs;
    kc_buf_result bufs[KC_MAX_BUFS];
    int pass;             /* every buffer's checks */
} kc_result;

/* A "value" or "struct" buffer the kernel cannot write is bound with setBytes, as
 * MLX and llama.cpp bind their scalars and argument structs, when it fits Metal's limit for it (4 KiB: "data
 * smaller than 4 KB"; the software device refuses more as Metal's validation does);
 * a larger one, or one the kernel may write, is a buffer of its bytes. */
#define KC_SET_BYTES_MAX 4096

/* The descriptor every kernel case's record names: op "kernel". */
extern const op_desc kc_record_op;

/* Case c (kept alive by the caller until the op_case is freed) as an op_case:
 * an "mlx_metal_kernel" case runs as the plain case kc_mlx_lower makes of it.  seed:
 * the init patterns'; poison: KC_POISON_* of the outputs' initial bytes (0: the NaN
 * pattern).  Its tensors (the bytes of every buffer the kernel may write or that is
 * readonly, read back after each run) exist once a kernel-case backend prepared it.
 * NULL with err. */
op_case *kc_op_case_new(const kc_case *c, uint64_t seed, int poison, char *err, size_t errlen);
/* The case as written, and the plain case that runs (the same unless MLX's). */
const kc_case *kc_op_case_source(const op_case *oc);
const kc_case *kc_op_case_plain(const op_case *oc);

/* The backend that runs kernel cases on the Metal device of --backend `name` (sw or
 * metal; the software device with o's --sw-checks/--sw-schedule/--sw-timeout).  NULL
 * with err. */
backend *kc_backend_open(const char *name, const run_opts *o, char *err, size_t errlen);
/* The same on dev (taken over: freed on failure too) as a backend of `kind`. */
backend *kc_backend_on_device(struct mtl_device *dev, backend_kind kind, char *err, size_t errlen);

/* 1 when a buffer of c expects another backend's result ({"backend": "sw"}). */
int kc_case_wants_backend(const kc_case *c);

/* The reference run of {"backend": "sw"}: the case oc was made from, run once on
 * `ref` (a kernel-case backend of the software device) from the same initial bytes;
 * the returned op_case's tensors hold its outputs (op_case_free it).  NULL with err
 * when it could not run. */
op_case *kc_reference_run(backend *ref, const op_case *oc, const run_opts *o, char *err, size_t errlen);

/* After a run of oc (its tensors hold the last run's bytes): every buffer's checks
 * into r; a {"backend": "sw"} expectation against ref's outputs (kc_reference_run),
 * or, with ref NULL (the run was the software device's), listed as its own
 * reference, not a check.  Nothing but r->prepared = 0 when the case never ran.  0,
 * or -1 with err (an expected file that cannot be read). */
int kc_check_case(const op_case *oc, const op_case *ref, kc_result *r, char *err, size_t errlen);

/* Compares out (n elements of dt) with ref under the buffer's expectation and fills
 * the metrics of r (kcase_check.c). */
void kc_check_expect(const kc_buffer *b, kc_dtype dt, const void *out, const double *ref, int64_t n, kc_buf_result *r);

/* An "mlx_metal_kernel" case as a plain case (kcase_mlx_lower.c): MLX's generated
 * text as its source, MLX's host name as its function, and value buffers for the
 * generated <input>_shape/_strides/_ndim parameters.  NULL with err. */
kc_case *kc_mlx_lower(const kc_case *c, uint64_t seed, char *err, size_t errlen);

/* Makes rec (as runner_run_case filled it, or as the driver records a case that
 * could not run) the record of kernel case `source` run as `plain` with the checks r
 * (NULL: not checked): op "kernel", the "case" key (name, file, sha256 of source and
 * case file, each buffer's binding), the kernel and each launch, a check per buffer
 * with an expectation (reference "expected"); a pass that a buffer's check fails
 * becomes a fail.  0, or -1 with err when memory runs out. */
int kc_record_case(const kc_case *source, const kc_case *plain, const kc_result *r, run_record *rec, char *err,
                   size_t errlen);

/* --dump DIR (kcase_dump.c): DIR/kernel_<name>.safetensors with every buffer of the
 * case run as oc (inputs as they went in, outputs as the last run left them) and
 * `<name>.expected` (float64) per expectation.  0 (*path_out: the file), or -1 with a
 * one-line err. */
int kc_dump_case(const char *dir, const op_case *oc, char *path_out, size_t pathlen, char *err, size_t errlen);

/* "<prefix><case name>" with the name's characters outside [A-Za-z0-9_.-] as '_': a
 * case's file name in a directory (--dump's kernel_<name>, --capture's kernel-<name>). */
void kc_file_stem(const char *prefix, const char *name, char *out, size_t n);

#endif
