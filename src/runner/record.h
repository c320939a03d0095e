/* record.h — the result of one run of one op at one shape: what the JSON report
 * (schema 1, ../shared/spec/report.md, results/schema-1.json) is written from.
 *
 * The runner fills it; src/report/report_json.c turns it into a cJSON object; compare and
 * report read the JSON back (never this struct), so the JSON is the stable interface. */
#ifndef GDN_RECORD_H
#define GDN_RECORD_H

#include <stdint.h>

#include "runner/counters.h"
#include "core/finding.h"
#include "core/stats.h"
#include "ops/op.h"

#define REC_MAX_SAMPLES 100000
#define REC_MAX_CHECKS 32
#define REC_MAX_STAGES OP_MAX_STAGES
#define REC_MAX_CONSTANTS 16
#define REC_MAX_WARNINGS 8

/* How a run ended; written as run_status_name's word ("pass", "fail", "error"). */
typedef enum run_status {
    RUN_PASS = 0,
    RUN_FAIL,          /* ran; a check failed */
    RUN_ERROR          /* could not run (error says why) */
} run_status;

const char *run_status_name(run_status s);
/* The status a report's word names; -1 for any other word. */
int run_status_parse(const char *word);

typedef struct rec_check {
    char output[48];       /* tensor name */
    char reference[16];    /* "f64" | "bf16-parity" | "fixture" */
    double max_abs, max_rel, rel_l2;
    double ulp_p99;        /* bf16 outputs; < 0 when not applicable (written as null) */
    int64_t nan, inf, unwritten, n_bad;
    int64_t first_bad_index;   /* -1 when none */
    int first_bad_ndim;
    int64_t first_bad_coord[TENSOR_MAX_DIMS];
    double first_bad_got, first_bad_want;
    double atol, rtol, rel_l2_max; /* rel_l2_max 0 = not checked */
    int pass;
} rec_check;

/* A kernel case's own facts (gdnbench kernel): which case, its files' digests and
 * how each buffer was bound.  present 0: the record is an op's. */
#define REC_MAX_CASE_BUFFERS 32
typedef struct rec_case {
    int present;
    char name[96];
    char file[256];            /* the case file ("(flags)" for the flag form) */
    char source_sha256[65];    /* of the kernel source text */
    char case_sha256[65];      /* of the case file's bytes ("" for the flag form: null) */
    int nbuffers;
    struct {
        char name[64];
        int index;             /* [[buffer(n)]] it was bound at */
        char dtype[12];
        int64_t elements;
        int writable, readonly;
    } buffers[REC_MAX_CASE_BUFFERS];
} rec_case;

typedef struct rec_stage {
    char name[32];
    char function[96];
    char source[256];          /* file the function came from; "" when unknown (cpu) */
    char sha256[65];           /* of that file's text */
    int theirs;                /* 1: from the user's --shader/--stage file, 0: ours */
    uint32_t grid[3], tg[3];
    uint32_t tgmem_bytes;
    uint32_t repeat;           /* dispatches of this stage per iteration (>= 1) */
    int own_command_buffers;   /* 1: each in a command buffer of its own */
    rec_stats timing;
} rec_stage;

/* The machine's state during the run (JSON `environment`): what moves timings by
 * tens of percent, and what identifies the GPU.  Unknown fields are < 0 or "" and
 * written as null; collected == 0 (a record built without the runner) writes every
 * field as null. */
#define REC_MAX_FAMILIES 8
typedef struct rec_machine {
    int collected;
    int thermal_before, thermal_after; /* NSProcessInfoThermalState 0..3 (nominal..critical) */
    int low_power;                     /* Low Power Mode on at either sample: 1/0 */
    char power_source[12];             /* "ac" | "battery" | "ups" (battery if either sample was) */
    char macos_version[32];            /* "14.5"; "" off macOS */
    /* the Metal GPU the numbers come from ("" / < 0 for the sw and cpu backends) */
    char gpu_name[96];
    int gpu_cores;                     /* IORegistry gpu-core-count */
    int nfamilies;                     /* < 0: the device does not answer supportsFamily: */
    char families[REC_MAX_FAMILIES][12];
    int64_t working_set;               /* recommendedMaxWorkingSetSize, bytes */
    int paravirtual;                   /* the device is a VM's paravirtual GPU */
} rec_machine;
/* Where a case's inputs came from when they were not generated (--fixture). */
typedef struct rec_fixture {
    char path[256];            /* "" when the inputs were generated */
    char format[16];           /* "safetensors", "npz", ... */
    int nconverted;
    struct {
        char tensor[48], buffer[48];
        char from[8], to[8];   /* dtype names: f32 -> bf16 rounds to nearest even */
    } converted[OP_MAX_BUFS];
    char ignored[512];         /* tensors of the file bound to no buffer, "a, b" */
    char unfixed[256];         /* dimensions nothing in the file fixed: "BT=64, causal=1" */
} rec_fixture;

/* What compiling the case's kernels cost on the software device, by kind of
 * variant (swmetal.h's sw_compile_stats: "library", "fibers", "lanes",
 * "full_checks", ...), seconds per phase, < 0 when clang did not report it.
 * present 0: null (backends that compile nothing this way). */
#define REC_MAX_COMPILE_KINDS 8
typedef struct rec_compile_kind {
    char kind[16];
    int compiles, cached, prepasses;
    double prepass_s, frontend_s, optimise_s, codegen_s, link_s, wall_s;
} rec_compile_kind;
typedef struct rec_compile {
    int present;
    int nkinds;
    rec_compile_kind kinds[REC_MAX_COMPILE_KINDS];
    double wall_s;             /* all kinds together */
} rec_compile;

typedef struct run_record {
    /* tool/host are filled by the report writer itself */
    struct {
        char name[96];         /* "Apple M4 Max", "gdnbench software device", host CPU for cpu */
        char backend[8];       /* "metal" | "sw" | "cpu" */
        int emulated;
        /* a virtual machine's GPU ("Apple Paravirtual device"): its timings and
         * results are not those of an Apple GPU */
        int paravirtual;
        /* from the chip table; < 0 = unknown (null) */
        int gpu_cores;
        double bandwidth_gbps, fp32_tflops, fp16_tflops;
        /* 1: the peak is an Apple-published figure; 0: derived (core/chips.h says
         * how); -1: no peak.  FP16 peaks are never Apple-published (chips.h). */
        int bandwidth_verified, flops_verified;
    } device;

    const op_desc *op;
    /* The main stage's kernel (op_desc.main_stage; the first stage when the op has
     * none); every stage's own is in stages[]. */
    struct {
        char source[256];      /* path of the .metal source, "" for cpu */
        char function[96];
        char sha256[65];       /* of the source text, "" for cpu */
        int theirs;            /* 1: the user's kernel (--shader/--stage), 0: ours */
        int nconstants;
        struct {
            int index;
            char value[32];
        } constants[REC_MAX_CONSTANTS];
        int fast_math_known;   /* 0: no kernel compiled (cpu, setup error): null */
        int fast_math;         /* compiled with fast math in effect */
    } kernel;

    int64_t dim[OP_MAX_DIMS];  /* in op->dims order */
    uint64_t seed;

    /* launch of the (first or only) stage; every stage is in stages[] */
    int nstages;
    rec_stage stages[REC_MAX_STAGES];
    /* per timed iteration, over all stages: time per dispatch = timing / dispatches */
    int64_t dispatches, command_buffers;

    int warmup, iterations;    /* runs taken: untimed warmup, timed samples (= timing.n) */
    /* How the number of timed samples was decided (runner/sampling.h): sampling
     * "iters" (exactly --iters N) or "adaptive" (budget and noise target); stop is
     * sampling_stop_name's word; noise the relative standard error of the median at
     * the end (< 0 unknown: fewer than 2 samples).  max_time_s/max_noise/min_samples
     * are the adaptive rule's (0 for "iters").  cold: no warmup ran because the
     * first run alone cost more than the budget, so that run is the one sample. */
    char sampling[12];
    char stop[16];
    double noise;
    double max_time_s, max_noise;
    int min_samples;
    int cold;
    rec_stats warmup_timing;   /* each warmup run's time, same clock as timing */
    char timing_source[8];     /* "gpu" | "wall" */
    /* how stages[].timing was measured when the op has several stages: "counters"
     * (timestamps at stage boundaries in the one command buffer) or "separate command
     * buffers" (each stage again on its own); "" for one stage or no GPU */
    char stage_timing[32];
    char stage_timing_why[200]; /* why not counters (table only) */
    rec_stats timing;          /* total per iteration (sum of stages for pipelines) */
    rec_stats wall;            /* host wall clock per iteration; n = 0 when not measured */

    double bytes, flops;       /* op->bytes/flops at this shape */

    int nchecks;
    rec_check checks[REC_MAX_CHECKS];
    double ref_us[2];          /* wall time of the CPU references (REF_F64, REF_PARITY); 0 = not run */
    /* Outputs not checked against a reference because the backend's output is that
     * reference itself (cpu: bf16-parity); the table and the JSON ("not_checked")
     * say so instead of showing a PASS. */
    int nself;
    struct {
        char output[48];
        char reference[16];
    } self_refs[REC_MAX_CHECKS];

    rec_machine machine;

    int determinism_runs;      /* 0 = not measured (null) */
    int bitwise_identical;

    /* what a reader of the numbers must know (paravirtual device, a flag that had
     * no effect); printed with the table, written to the report */
    int nwarnings;
    char warnings[REC_MAX_WARNINGS][480];

    rec_fixture fixture;       /* --fixture notes; fixture.path "" when none */

    run_status status;
    char error[512];

    rec_case kcase;            /* a kernel case's facts (present 0 for an op) */

    rec_compile compile;       /* JSON `compile` (software device), present 0: null */

    /* What the device's own checks found (the software device; see core/finding.h):
     * every distinct finding of the run that failed, grouped, with source lines. */
    int device_checks;         /* 1: the device checks kernels (findings is a list, maybe empty); 0: null */
    /* --counters: asked; what the counting run counted (owned), or NULL with
     * counters_unavailable saying why (a backend that cannot count, a failure) */
    int counters_asked;
    int all_floors;                    /* --all-floors: the table prints every chip's floor */
    rec_counters *counters;
    char counters_unavailable[200];
    dev_finding *findings;     /* malloc'd, owned */
    int nfindings;
} run_record;

void run_record_free(run_record *r); /* frees sample arrays and findings (not the struct) */
/* Adds a warning (dropped past REC_MAX_WARNINGS, cut to fit). */
void run_record_warn(run_record *r, const char *text);

#endif
