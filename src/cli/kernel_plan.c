/* kernel_plan.c — kernel cases through the run driver (kernel_plan.h): the hooks that
 * make each case an op_case, check its buffers after the run and print its block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/capture_opts.h"
#include "cli/kernel_plan.h"
#include "cli/table.h"
#include "io/io_util.h"
#include "kcase/kcase_data.h"

int kernel_plan_init(kernel_plan *kp, const char *cmd, int n) {
    memset(kp, 0, sizeof *kp);
    kp->cmd = cmd;
    kp->n = n;
    kp->cases = calloc((size_t)n, sizeof *kp->cases);
    kp->recs = calloc((size_t)n, sizeof *kp->recs);
    kp->ptrs = calloc((size_t)n, sizeof *kp->ptrs);
    kp->res = calloc((size_t)n, sizeof *kp->res);
    if (!kp->cases || !kp->recs || !kp->ptrs || !kp->res) return -1;
    for (int k = 0; k < n; k++) kp->ptrs[k] = &kp->recs[k];
    return 0;
}

void kernel_plan_free(kernel_plan *kp) {
    for (int k = 0; k < kp->n; k++) {
        if (kp->cases) kc_free(kp->cases[k]);
        if (kp->recs) run_record_free(&kp->recs[k]);
    }
    if (kp->paths) io_free_names(kp->paths, kp->n);
    free(kp->cases);
    free(kp->recs);
    free(kp->ptrs);
    free(kp->res);
    memset(kp, 0, sizeof *kp);
}

/* driver hook: case k (a suite's read from its file now) as an op_case; with
 * --capture, where its trace goes (a trace already there stops the plan: Metal
 * would refuse to overwrite it). */
static op_case *make_case(void *user, int k, const driver_case *dc, char *err, size_t errlen, int *stop) {
    kernel_plan *kp = user;
    (void)dc;
    if (!kp->cases[k]) {
        kp->cases[k] = kc_load_file(kp->paths[k], err, errlen);
        if (!kp->cases[k] || kc_check_files(kp->cases[k], err, errlen) < 0) return NULL;
    }
    if (kp->capture_dir) {
        char stem[512];
        kc_file_stem("kernel-", kp->cases[k]->name, stem, sizeof stem);
        cli_capture_path(kp->capture_dir, stem, kp->trace, sizeof kp->trace);
        if (cli_capture_unused(kp->trace, err, errlen)) {
            *stop = 1;
            return NULL;
        }
    }
    return kc_op_case_new(kp->cases[k], kp->ro.seed, kp->poison, err, errlen);
}

/* driver hook: the case's capture path. */
static void before_case(void *user, int k, const op_case *c, run_opts *o) {
    kernel_plan *kp = user;
    if (kp->capture_dir && c) o->capture_path = kp->trace;
}

/* The reference run of c's {"backend": "sw"} expectations when it ran elsewhere:
 * NULL with *why empty when there is none to make (no such expectation, the run
 * failed, or it ran on the software device: its own reference). */
static op_case *reference_run(kernel_plan *kp, const op_case *c, const run_record *rec, char *why, size_t n) {
    why[0] = '\0';
    const backend_desc *d = backend_desc_find(kp->ro.backend);
    if (rec->status == RUN_ERROR || !kc_case_wants_backend(kc_op_case_plain(c)) || !d || d->kind == BACKEND_SW)
        return NULL;
    if (!kp->ref) {
        run_opts o = kp->ro;
        o.sw_checks = o.sw_schedule = NULL; /* the environment's defaults: a plain run */
        if (!(kp->ref = kc_backend_open("sw", &o, why, n))) return NULL;
    }
    return kc_reference_run(kp->ref, c, &kp->ro, why, n);
}

/* driver hook: the capture's note, every buffer's checks, the record a kernel
 * case's, --dump. */
static int after_case(void *user, int k, op_case *c, run_record *rec, char *err, size_t errlen) {
    kernel_plan *kp = user;
    char why[1024];
    op_case *ref = reference_run(kp, c, rec, why, sizeof why);
    int rc = why[0] ? -1 : kc_check_case(c, ref, &kp->res[k], why, sizeof why);
    op_case_free(ref);
    if (kp->capture_dir && rec->status != RUN_ERROR && !kp->ro.quiet) cli_capture_note(kp->trace);
    if (rc < 0) {
        rec->status = RUN_ERROR;
        snprintf(rec->error, sizeof rec->error, "%.500s", why);
        kp->res[k].prepared = 0;
    }
    if (kc_record_case(kc_op_case_source(c), kc_op_case_plain(c), &kp->res[k], rec, err, errlen) < 0) return -1;
    if (kp->dump_dir && rec->status != RUN_ERROR) {
        char path[4096];
        if (kc_dump_case(kp->dump_dir, c, path, sizeof path, err, errlen) < 0) return -1;
        if (!kp->ro.quiet) printf("dumped %s\n", path);
    }
    return 0;
}

/* One buffer's row: binding, dtype, elements, what was checked, verdict. */
static void print_buffer(const kc_buf_result *b) {
    char bind[32], what[256];
    snprintf(bind, sizeof bind, "buffer(%d)", b->index);
    if (b->checked) {
        snprintf(what, sizeof what, "expect%s%s: max_abs %.3g rel_l2 %.3g", strcmp(b->reference, "expected") ? " " : "",
                 strcmp(b->reference, "expected") ? b->reference : "", b->max_abs, b->rel_l2);
        size_t l = strlen(what);
        if (b->ulp >= 0) snprintf(what + l, sizeof what - l, " ulp %.0f", b->ulp);
        l = strlen(what);
        snprintf(what + l, sizeof what - l, " (atol %g rtol %g%s)", b->atol, b->rtol,
                 b->ulp_max >= 0 ? " or ulp" : "");
    } else if (b->self_ref) {
        snprintf(what, sizeof what, "expect %s: this run is the %s device's, its own reference (not a check); "
                 "output: nan %lld inf %lld", b->reference, b->reference, (long long)b->nan, (long long)b->inf);
    } else if (b->readonly) {
        snprintf(what, sizeof what, "readonly: %lld elements changed", (long long)b->changed);
    } else if (b->writable) {
        snprintf(what, sizeof what, "output: nan %lld inf %lld", (long long)b->nan, (long long)b->inf);
    } else {
        snprintf(what, sizeof what, "input");
    }
    if (b->by_bytes) snprintf(what + strlen(what), sizeof what - strlen(what), " (setBytes)");
    size_t l = strlen(what);
    if (b->writable && b->unwritten) snprintf(what + l, sizeof what - l, ", %lld unwritten", (long long)b->unwritten);
    l = strlen(what);
    if (b->checked && b->bad)
        snprintf(what + l, sizeof what - l, ", %lld bad, first at %lld", (long long)b->bad, (long long)b->first_bad);
    printf("  %-12s %-11s %-9s %10lld  %-4s  %s\n", b->name, bind, kc_dtype_name(b->dtype), (long long)b->numel,
           b->pass ? "PASS" : "FAIL", what);
}

/* driver hook: case k's block — the case (after the first, the machine's line as an
 * op run prints it), its warnings, the runner's timing and sampling lines, a row per
 * buffer, the device's findings, determinism, the verdict.  A case that could not
 * run is one line on stderr. */
static void print_case(void *user, int k, driver_outcome out) {
    kernel_plan *kp = user;
    const run_record *rec = kp->ptrs[k];
    const kc_result *r = &kp->res[k];
    (void)out;
    if (rec->status == RUN_ERROR && (!r->prepared || kp->ro.quiet)) {
        fprintf(stderr, "gdnbench %s: %s\n", kp->cmd, rec->error);
        return;
    }
    if (kp->ro.quiet) return;
    printf("kernel case %s (%s) on %s [%s]%s\n", rec->kcase.name, rec->kcase.file, rec->device.name,
           rec->device.backend, rec->device.emulated ? " (emulated: the software device's timings, not a GPU's)" : "");
    /* the device as an op run's table shows it: the machine once, then the warnings
     * (a paravirtual GPU) before any number */
    if (k == 0 && rec->machine.collected) table_print_machine(stdout, &rec->machine);
    table_print_warnings(stdout, rec);
    if (rec->timing.n > 0) table_print_timing(stdout, rec);
    for (int i = 0; rec->status != RUN_ERROR && i < r->nbufs; i++) print_buffer(&r->bufs[i]);
    table_print_findings(stdout, rec, run_max_findings(&kp->ro));
    table_print_counters(stdout, rec);
    if (rec->status == RUN_ERROR)
        printf("  the device failed the run: %s\n", rec->error);
    else if (rec->determinism_runs > 1)
        printf("  determinism: %s across %d runs\n", rec->bitwise_identical ? "bitwise identical" : "FAIL: outputs differ",
               rec->determinism_runs);
    else
        printf("  determinism: not checked (one run)\n");
    printf("%s\n", rec->status == RUN_PASS ? "PASS" : rec->status == RUN_FAIL ? "FAIL" : "ERROR");
    fflush(stdout);
    if (rec->status == RUN_ERROR) fprintf(stderr, "gdnbench %s: %s\n", kp->cmd, rec->error);
}

/* The plan's cases on b through the driver.  Returns the driver's count, or -1. */
static int run_on(kernel_plan *kp, backend *b, char *err, size_t errlen) {
    if (kp->capture_dir && cli_capture_dir(kp->capture_dir, err, errlen)) return -1;
    driver_case *dcs = calloc((size_t)kp->n, sizeof *dcs);
    if (!dcs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < kp->n; k++) dcs[k].op = &kc_record_op;
    driver_plan plan = {b, &kp->ro, dcs, kp->n, kp->ptrs, 0};
    driver_hooks hooks = {.user = kp, .make_case = make_case, .before = before_case, .after = after_case,
                          .print = print_case};
    int n = driver_run(&plan, &hooks, &kp->tally, err, errlen);
    const char *hint_case = kp->n == 1 && kp->cases[0] ? kp->cases[0]->path : "CASE.json";
    if (n >= 0 && !kp->ro.quiet) table_print_checks_hint(stderr, b, &kp->ro, hint_case, kp->tally.nfail);
    free(dcs);
    return n;
}

int kernel_plan_run(kernel_plan *kp, char *err, size_t errlen) {
    backend *b = kp->on;
    if (!b && kp->capture_dir) cli_capture_enable(); /* Metal reads it when the device is created */
    if (!b && !(b = kc_backend_open(kp->ro.backend, &kp->ro, err, errlen))) return -1;
    int n = run_on(kp, b, err, errlen);
    if (b != kp->on) b->destroy(b);
    if (kp->ref) kp->ref->destroy(kp->ref);
    kp->ref = NULL;
    return n < 0 ? -1 : 0;
}
