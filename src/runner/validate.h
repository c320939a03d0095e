/* validate.h — `gdnbench validate`: the checks a kernel author runs before trusting a
 * kernel (issue 7).
 *
 * One validation = a list of cases (shape x input profile, validate_sweep.c), each run
 * on the software Metal device with checks=full under several fiber schedules and
 * threadgroup orders (validate_exec.c), judged against the CPU references with
 * bounds that catch real bugs (validate_judge.c), with the pattern of the bad
 * elements described for every failing output (validate_pattern.c).  Calls go one
 * way: exec -> judge -> pattern, and both exec and judge add to the case's result
 * (validate_result.c).
 *
 * The pieces are split so each stays small: the CLI (src/cli/cmd_validate.c) parses
 * flags, builds the sweep, runs every case, prints the table and writes the JSON
 * (src/report/validate_json.c). */
#ifndef GDN_VALIDATE_H
#define GDN_VALIDATE_H

#include <stdint.h>

#include "ops/op.h"
#include "runner/backend.h"
#include "runner/record.h"
#include "runner/runner.h"

/* ---- input profiles (validate_profile.c) ---- */

typedef struct validate_profile {
    const char *name;   /* "realistic", "g_near_zero", ... (CLI and JSON) */
    const char *help;   /* one line */
    int stress;         /* gdn_stress value (GDN_STRESS_NONE for realistic) */
    int check_f64;      /* 1: also judged against the f64 reference (see validate_profile.c) */
} validate_profile;

extern const validate_profile validate_profiles[];
extern const int validate_nprofiles;
const validate_profile *validate_profile_find(const char *name);

/* A new case of op at dim under profile p (inputs generated with the profile's
 * stress), or NULL with err set. */
op_case *validate_case_new(const op_desc *op, const int64_t *dim, uint64_t seed, const validate_profile *p,
                           char *err, size_t errlen);
/* 1 when profile p changes at least one input of op at dim (a stress of beta means
 * nothing to cumsum); 0 when the inputs are the realistic ones; -1 on error. */
int validate_profile_applies(const op_desc *op, const int64_t *dim, uint64_t seed, const validate_profile *p);

/* ---- the sweep (validate_sweep.c) ---- */

#define VALIDATE_MAX_CASES 512
#define VALIDATE_MAX_LIST 64

typedef struct validate_case_spec {
    int64_t dim[OP_MAX_DIMS];
    const validate_profile *profile;
    const char *why;    /* which sweep put it there: "T sweep", "GQA", "stress", ... */
} validate_case_spec;

/* User dimension lists: given[i] = 1 replaces dimension i's default sweep by list[i]. */
typedef struct validate_dims {
    int given[OP_MAX_DIMS];
    int n[OP_MAX_DIMS];
    int64_t list[OP_MAX_DIMS][VALIDATE_MAX_LIST];
} validate_dims;

/* Fills specs (at most max) with the cases of op; profiles: the profiles to run
 * (NULL = all).  Returns the count, or -1 with err set. */
int validate_sweep(const op_desc *op, const validate_dims *vd, const validate_profile *const *profiles, int nprofiles,
                   uint64_t seed, validate_case_spec *specs, int max, char *err, size_t errlen);

/* ---- one case (validate_exec.c, validate_judge.c, validate_pattern.c) ---- */

#define VALIDATE_NRUNS 4
#define VALIDATE_MAX_FINDINGS 16

/* One way the outputs were produced: fiber schedule + threadgroup order. */
typedef struct validate_run_cfg {
    char schedule[32];
    char tg_order[32];
} validate_run_cfg;

typedef enum validate_status {
    VAL_PASS = 0,
    VAL_FAIL,
    VAL_UNSUPPORTED,  /* the kernel's documented limits refuse the shape */
    VAL_ERROR         /* could not run (kernel does not compile, out of memory) */
} validate_status;

/* One reason a case failed, or one note (kind "atomics"). */
typedef struct validate_finding {
    char kind[24];      /* "tolerance", "ulp", "unwritten", "nan_inf", "schedule", "repeat",
                           "fault", "atomics" (note: atomics within tolerance) */
    char output[48];    /* tensor name, "" when not about one output */
    char reference[16]; /* "f64" | "bf16-parity" | "" */
    char text[600];     /* one line for the table */
    char first_bad[160];/* "(b=0, t=65, h=1, v=3)", "" when none */
    char pattern[200];  /* "one head (h=1 of 2)", "" when none */
    int is_note;        /* 1: reported, not a failure */
} validate_finding;

typedef struct validate_result {
    validate_status status;
    char reason[512];             /* unsupported/error: why */
    run_record rec;               /* the first run (schedule 0): checks, launch, kernel */
    int have_rec;
    int nruns;
    validate_run_cfg runs[VALIDATE_NRUNS];
    int identical;                /* every run bitwise identical to the first */
    int uses_atomics;             /* the kernel source mentions atomics */
    int nfindings;
    validate_finding findings[VALIDATE_MAX_FINDINGS];
    /* What the software device's checks found in the first run that failed on the
     * device (every distinct bug, with source lines); NULL when none did. */
    dev_finding *dev_findings;    /* malloc'd */
    int ndev_findings;
    int dev_findings_run;         /* index into runs, -1 */
    double seconds;               /* wall time of the case */
} validate_result;

typedef struct validate_ctx {
    const op_desc *op;
    backend *b;                   /* sw, checks=full */
    run_opts ro;                  /* shader/function/constants/tolerance overrides */
    uint64_t seed;
    int ulp_p99_max;              /* bf16 outputs vs parity */
} validate_ctx;

/* Runs one case; never aborts on a kernel fault or check diagnosis (those are
 * findings of the case).  Fills *res (free with validate_result_free). */
void validate_run_case(validate_ctx *ctx, const validate_case_spec *spec, validate_result *res);

/* The run configurations, in order: run 0 is the reference run. */
void validate_run_configs(uint64_t seed, validate_run_cfg cfg[VALIDATE_NRUNS]);

/* Judging (validate_judge.c): adds findings for res->rec's checks (tolerances, ulp
 * bound, NaN/Inf, unwritten) with first-bad coordinates and patterns computed on c.
 * Returns 1 if every check passed. */
int validate_judge(const validate_ctx *ctx, const op_case *c, validate_result *res);

/* ---- a case's result (validate_result.c): below both the run and the judging,
 * which add findings to it; neither calls the other's way up ---- */

/* Adds a finding; returns it (or NULL when the list is full). */
validate_finding *validate_add_finding(validate_result *res, const char *kind, int is_note);
void validate_result_free(validate_result *res);

/* ---- error patterns (validate_pattern.c) ---- */

/* Axis names of an op's output tensor by its name and rank ("B","T","H","V" ...;
 * "C" = column inside a chunk, "N" = chunk index); NULL-filled "d0".. when unknown. */
void validate_axes(const tensor *t, const char *axes[TENSOR_MAX_DIMS]);

/* The chunk length of a case: its BT dimension, 64 when the op has none. */
int64_t validate_chunk_len(const op_desc *op, const int64_t *dim);

/* "(b=0, t=65, h=1, v=3)" for flat element i of t. */
void validate_coord_str(const tensor *t, int64_t i, char *buf, size_t n);

/* Describes where mask (numel(t) bytes, 1 = bad) is set, in terms of t's axes and
 * the chunk length BT.  ref (may be NULL) is the reference: a chunk whose reference
 * is all zero and that has no bad element says nothing (a one-token tail row of A)
 * and is left out of the chunk facets.  Facets: "every element", "the tail (t >= 64, last partial chunk)",
 * "one head (h=1 of 2)", "the diagonal (j == i)", ... */
void validate_pattern(const tensor *t, const unsigned char *mask, const double *ref, int64_t BT, char *buf, size_t n);

#endif
