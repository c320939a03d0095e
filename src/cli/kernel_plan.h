/* kernel_plan.h — kernel cases through the one run driver (runner/driver.h): the plan
 * that `gdnbench kernel`, `suite DIR` and `validate CASE.json` make of their cases and
 * the driver's hooks for them (the case as an op_case, its checks and --dump after the
 * run, its block of the table), so a case is sampled, timed and reported as an op
 * run is. */
#ifndef GDN_KERNEL_PLAN_H
#define GDN_KERNEL_PLAN_H

#include "kcase/kcase.h"
#include "runner/driver.h"
#include "runner/kcase_run.h"
#include "runner/runner.h"

typedef struct kernel_plan {
    const char *cmd;           /* "kernel", "suite", "validate": what messages begin with */
    run_opts ro;               /* backend, seed, sampling, the software device's options */
    int poison;                /* KC_POISON_* of the outputs' initial bytes (0: NaN) */
    const char *dump_dir;      /* --dump DIR, or NULL */
    const char *capture_dir;   /* --capture DIR (metal), or NULL */
    char trace[4096];          /* the capture path of the case running */
    int n;                     /* cases */
    kc_case **cases;           /* owned; a NULL entry is loaded from paths[k] when it runs */
    char **paths;              /* suite: the case files (owned), else NULL */
    run_record *recs;          /* each case's record */
    run_record **ptrs;
    kc_result *res;            /* each case's checks */
    driver_tally tally;
    /* the kernel-case backend to run on, opened by the caller and kept (a test's
     * device), or NULL: kernel_plan_run opens one of ro.backend and closes it */
    backend *on;
    /* {"backend": "sw"} on another backend: the software device that runs the
     * reference (opened when a case first needs it) */
    backend *ref;
} kernel_plan;

/* Room for n cases; 0, or -1 when memory runs out. */
int kernel_plan_init(kernel_plan *kp, const char *cmd, int n);
/* Runs every case on a backend of kp->ro.backend (with kp->capture_dir, the first
 * timed iteration of each recorded as DIR/kernel-<case name>.gputrace; a trace
 * already there stops the plan before that case runs) (a case that expects
 * {"backend": "sw"} once more on the software device for its reference, unless it
 * ran there: then that output is its own reference, listed and not checked, as an
 * op's output on the backend that is its reference), printing each case's block
 * (unless kp->ro.quiet; a case that cannot run: one line on stderr).  0, or -1 with
 * err when the backend cannot be opened or --dump fails (nothing more runs). */
int kernel_plan_run(kernel_plan *kp, char *err, size_t errlen);
void kernel_plan_free(kernel_plan *kp);

#endif
