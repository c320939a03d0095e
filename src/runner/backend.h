/* backend.h — what produces an op's outputs: the CPU reference, the software Metal
 * device, or a real GPU through Metal.
 *
 * The runner drives every backend the same way: prepare once per case, run_once
 * per iteration (outputs are poisoned by the backend before each run so unwritten
 * elements are visible), release.  Nothing in src/ops/ knows which backend runs. */
#ifndef GDN_BACKEND_H
#define GDN_BACKEND_H

#include <stddef.h>

#include "ops/op.h"
#include "runner/record.h"

typedef struct run_opts run_opts;
struct mtl_device;
struct stage_kernel;
struct swmtl_schedule;

/* Which backend: decided once from the --backend name (backend_desc_find) and turned
 * back into that name only for tables and reports. */
typedef enum backend_kind { BACKEND_CPU, BACKEND_SW, BACKEND_METAL } backend_kind;

/* What a backend can do.  Every decision about a backend is made on these, never on
 * its name. */
enum {
    BACKEND_EMULATED = 1u << 0,  /* a software model of a GPU: its timings are not a GPU's */
    BACKEND_GPU = 1u << 1,       /* real GPU hardware: chip table, GPU sampling defaults */
    BACKEND_KERNELS = 1u << 2,   /* runs the ops' Metal kernels, stage by stage (cpu runs the
                                    reference as one step): --shader/--stage apply */
    BACKEND_CHECKS = 1u << 3,    /* the device checks the kernels it runs (--sw-checks, findings) */
    BACKEND_SCHEDULES = 1u << 4, /* fiber schedule and threadgroup order can be chosen (validate) */
    BACKEND_CAPTURE = 1u << 5,   /* records a GPU trace of a run (--capture) */
    BACKEND_COUNTERS = 1u << 6   /* counts every access and operation exactly (--counters) */
};

typedef struct backend_desc {
    backend_kind kind;
    const char *name;            /* "cpu" | "sw" | "metal": the --backend word and the JSON's */
    unsigned caps;               /* BACKEND_* */
} backend_desc;

/* The descriptor of a --backend name; NULL when there is none of that name. */
const backend_desc *backend_desc_find(const char *name);
const backend_desc *backend_desc_of(backend_kind kind);

/* How backend_timing.stage_us was measured. */
enum {
    STAGE_TIMING_NONE = 0,     /* one stage (its time is the total), or no GPU */
    STAGE_TIMING_COUNTERS,     /* timestamps sampled at stage boundaries, one submission */
    STAGE_TIMING_SEPARATE      /* each stage run again in command buffers of its own */
};

/* Timing of one iteration.  gpu_us < 0 when the backend has no GPU clock. */
typedef struct backend_timing {
    double wall_us;
    double gpu_us;
    int nstages;
    double stage_us[OP_MAX_STAGES]; /* GPU time per dispatch (or wall per stage) */
    int stage_method;               /* STAGE_TIMING_* */
    const char *stage_why;          /* why not counters (owned by the backend), or NULL */
} backend_timing;

typedef struct backend {
    const backend_desc *desc; /* kind, name, capabilities */
    char device_name[96];
    int gpu_cores;           /* from the device when it says; -1 unknown */
    struct mtl_device *device; /* the Metal device it runs on (sw, metal; owned); NULL for cpu */
    /* CHECK_* mask of the references this backend's output is itself (cpu: its output
     * is the bf16-parity reference): comparing with them checks nothing, so the runner
     * lists them as not checked instead of reporting a PASS. */
    int self_references;

    /* Compiles/loads kernels, allocates device buffers, uploads inputs. */
    int (*prepare)(struct backend *b, op_case *c, const run_opts *o, char *err, size_t errlen);
    /* One iteration: poison outputs, run every stage, wait, bring outputs back into
     * c->t.  Returns 0, or -1 with err set (kernel fault, device error). */
    int (*run_once)(struct backend *b, op_case *c, backend_timing *t, char *err, size_t errlen);
    /* Describes stage s for the report (function actually run, launch geometry). */
    void (*describe)(struct backend *b, op_case *c, int s, op_launch *l);
    /* Fills rec->kernel (source path, function, sha256 of the source, constants) of
     * the case just prepared; may be NULL (cpu: no kernel). */
    void (*fill_kernel)(struct backend *b, run_record *rec);
    /* Fills the facts of the GPU the numbers come from into m (name, core count,
     * Metal GPU families, working set, paravirtual); NULL when there is no GPU. */
    void (*device_facts)(struct backend *b, rec_machine *m);
    /* Records the work of the next run_once into a GPU trace at path (the metal
     * backend: MTLCaptureManager); NULL when the backend cannot.  Returns 0, or -1
     * with err set. */
    int (*capture_begin)(struct backend *b, const char *path, char *err, size_t errlen);
    void (*capture_end)(struct backend *b);
    /* After run_once failed: what the device's checks found (software device; NULL
     * for backends without checks).  Hands over a malloc'd array, returns its length
     * (0 and *out NULL when none). */
    int (*take_findings)(struct backend *b, dev_finding **out);
    /* The order the software device runs the next run_once's threadgroups and fibers
     * in (validate compares several); NULL for other backends.  Returns 0 or -1. */
    int (*set_schedule)(struct backend *b, const struct swmtl_schedule *s);
    /* Resolves which kernel every dispatch of c runs under o (runner/kernel_choice.h)
     * into out[0..nstages) without allocating buffers or running anything, so the
     * CLI can refuse a bad choice for every shape first.  c needs only op and dim.
     * Returns the number of dispatches, or -1 with err set.  NULL: no kernels (cpu). */
    int (*check_kernels)(struct backend *b, const op_case *c, const run_opts *o, struct stage_kernel *out,
                         char *err, size_t errlen);
    /* The kernel dispatch s of the case just prepared runs (file, function, ours or
     * theirs); NULL when the backend has none (cpu).  Valid until release_case. */
    const struct stage_kernel *(*stage_kernel)(struct backend *b, int s);
    /* --counters: one more run of the prepared case on the software device's counting
     * variant, counted exactly (counters.h).  Returns the counters, or NULL with err
     * set.  NULL: the backend cannot count (cpu, a GPU). */
    struct rec_counters *(*count_once)(struct backend *b, op_case *c, char *err, size_t errlen);
    /* Frees per-case state (called after each case); the backend stays usable. */
    void (*release_case)(struct backend *b);
    void (*destroy)(struct backend *b);
    void *state;
} backend;

static inline int backend_has(const backend *b, unsigned cap) { return (b->desc->caps & cap) != 0; }

/* Opens a backend by name; NULL with err set when it is not available here
 * ("metal" on Linux, "sw" without clang >= 17, ...). */
backend *backend_open(const char *name, const run_opts *o, char *err, size_t errlen);
const char *backend_default_name(void);

backend *backend_cpu_open(char *err, size_t errlen);
/* The Metal backend on dev (taken over, freed on failure too): kind BACKEND_SW for the
 * software device, BACKEND_METAL for a GPU.  The same Metal code path for both. */
backend *backend_metal_open(struct mtl_device *dev, backend_kind kind, char *err, size_t errlen);
/* The device alone, as backend_open makes it for a sw or metal backend (the software
 * device with the options' --sw-checks/--sw-schedule): for a command that drives
 * Metal itself (kernel cases).  NULL with err for cpu or when unavailable. */
struct mtl_device *backend_open_device(const char *name, const run_opts *o, char *err, size_t errlen);

#endif
