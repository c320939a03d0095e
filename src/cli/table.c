/* table.c — human output: one block per case, aligned columns, PASS/FAIL per check. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/table.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"
#include "runner/machine.h"

void table_fmt_us(double us, char *buf, size_t n) {
    if (us < 1) snprintf(buf, n, "%.0f ns", us * 1e3);
    else if (us < 1e3) snprintf(buf, n, "%.2f us", us);
    else if (us < 1e6) snprintf(buf, n, "%.3f ms", us / 1e3);
    else snprintf(buf, n, "%.3f s", us / 1e6);
}

void table_shape_str(const op_desc *op, const int64_t *dim, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < op->ndims && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s=%lld", i ? " " : "", op->dims[i].name, (long long)dim[i]);
}

void table_print_header(FILE *f, const op_desc *op, const backend *b, const char *runs, unsigned long long seed) {
    fprintf(f, "gdnbench %s — %s\n", op->name, op->summary);
    fprintf(f, "backend %s on %s%s; %s, seed %llu\n", b->desc->name, b->device_name,
            backend_has(b, BACKEND_EMULATED) ? " (EMULATED: timings are of the software device, not of a GPU)"
            : !backend_has(b, BACKEND_KERNELS) ? " (timing the bf16-parity CPU reference, not a kernel)"
                                               : "",
            runs, seed);
}

void table_print_machine(FILE *f, const rec_machine *m) {
    char line[512];
    machine_describe(m, line, sizeof line);
    fprintf(f, "machine: %s\n", line);
}

void table_print_findings(FILE *f, const run_record *r, int max) {
    if (r->nfindings <= 0) return;
    fprintf(f, "  %d distinct finding%s of the software device's checks:\n", r->nfindings,
            r->nfindings == 1 ? "" : "s");
    dev_findings_print(f, r->findings, r->nfindings, max, "    ");
}

/* How many samples and why no more; the warmup runs' times beside the median, so
 * a slow first run is seen, not hidden. */
static void table_print_sampling(FILE *f, const run_record *r) {
    if (!r->sampling[0]) return; /* a record not made by the runner */
    char a[32], b[32];
    fprintf(f, "  samples %d, ", r->timing.n);
    if (r->cold) {
        table_fmt_us(r->wall.n > 0 ? r->wall.samples[0] : r->timing.median, a, sizeof a);
        fprintf(f, "cold: the first run (%s) costs more than the %g s budget, so it is the one sample and no warmup ran "
                   "(--warmup 1 for a warm sample)", a, r->max_time_s);
    } else if (strcmp(r->stop, "iters") == 0) {
        fprintf(f, "as --iters asked");
    } else if (strcmp(r->stop, "noise target") == 0) {
        fprintf(f, "stopped at the noise target (%g%%)", 100 * r->max_noise);
    } else if (strcmp(r->stop, "budget") == 0) {
        fprintf(f, "stopped by the time budget (%g s)", r->max_time_s);
    } else {
        fprintf(f, "stopped: %s", r->stop);
    }
    if (r->noise >= 0) fprintf(f, "; median known to +-%.2f%%", 100 * r->noise);
    fprintf(f, "\n");
    const rec_stats *w = &r->warmup_timing;
    if (w->n > 0 && w->samples && r->timing.median > 0) {
        table_fmt_us(w->samples[0], a, sizeof a);
        fprintf(f, "  warmup %d run%s: first %s (%.2fx the median)", w->n, w->n == 1 ? "" : "s", a,
                w->samples[0] / r->timing.median);
        if (w->n > 1) {
            table_fmt_us(w->max, b, sizeof b);
            fprintf(f, ", slowest %s (%.2fx)", b, w->max / r->timing.median);
        }
        fprintf(f, "\n");
    }
}

/* The median and its spread, throughput, how many samples; per dispatch when a
 * stage repeats or has command buffers of its own. */
void table_print_timing(FILE *f, const run_record *r) {
    char med[32], mn[32], p90[32];
    table_fmt_us(r->timing.median, med, sizeof med);
    table_fmt_us(r->timing.min, mn, sizeof mn);
    table_fmt_us(r->timing.p90, p90, sizeof p90);
    double s = r->timing.median * 1e-6;
    fprintf(f, "  time (%s clock, n=%d)  median %s  min %s  p90 %s  cv %.1f%%", r->timing_source, r->timing.n, med,
            mn, p90, 100 * r->timing.cv);
    if (s > 0 && r->bytes > 0) fprintf(f, "  %.2f GB/s", r->bytes / s / 1e9);
    if (s > 0 && r->flops > 0) fprintf(f, "  %.3f TFLOP/s", r->flops / s / 1e12);
    fprintf(f, "\n");
    table_print_sampling(f, r);
    int repeated = 0;
    for (int i = 0; i < r->nstages && i < REC_MAX_STAGES; i++)
        repeated |= r->stages[i].repeat > 1 || r->stages[i].own_command_buffers;
    if (repeated && r->dispatches > 0 && r->timing.n > 0) {
        table_fmt_us(r->timing.median / (double)r->dispatches, med, sizeof med);
        fprintf(f, "  per dispatch  %s (%s clock)", med, r->timing_source);
        if (r->wall.n > 0) {
            table_fmt_us(r->wall.median / (double)r->dispatches, mn, sizeof mn);
            fprintf(f, ", %s wall", mn);
        }
        fprintf(f, "; %lld dispatch%s in %lld command buffer%s\n", (long long)r->dispatches,
                r->dispatches == 1 ? "" : "es", (long long)r->command_buffers, r->command_buffers == 1 ? "" : "s");
    }
}

/* Each stage's median and kernel (how the stages were timed), or the one kernel. */
static void print_stages(FILE *f, const run_record *r) {
    if (r->nstages > 1 && r->stage_timing[0]) {
        if (strcmp(r->stage_timing, "counters") == 0)
            fprintf(f, "  stages timed by GPU timestamp counters at stage boundaries, in the same submission\n");
        else
            fprintf(f, "  stages timed by running each again in command buffers of its own%s%s\n",
                    r->stage_timing_why[0] ? ": " : "", r->stage_timing_why);
    }
    if (r->nstages > 1) {
        for (int i = 0; i < r->nstages; i++) {
            const rec_stage *st = &r->stages[i];
            char med[32];
            table_fmt_us(st->timing.median, med, sizeof med);
            fprintf(f, "    stage %-12s %-44s median %-10s", st->name, st->function, med);
            if (st->source[0]) fprintf(f, "  %s: %s", st->theirs ? "theirs" : "ours", st->source);
            fprintf(f, "\n");
        }
    } else if (r->kernel.source[0]) {
        fprintf(f, "  kernel %s  %s: %s\n", r->kernel.function, r->kernel.theirs ? "theirs" : "ours", r->kernel.source);
    }
}

/* One line per check against a reference (the first bad element of a failed one),
 * then the outputs that are their own reference. */
static void print_checks(FILE *f, const run_record *r) {
    if (r->nchecks + r->nself > 0)
        fprintf(f, "  %-10s %-12s %10s %10s %10s %8s %6s %6s %9s  %s\n", "output", "reference", "max_abs", "max_rel",
                "rel_l2", "ulp_p99", "nan", "inf", "unwritten", "result");
    for (int i = 0; i < r->nchecks; i++) {
        const rec_check *c = &r->checks[i];
        char ulp[16] = "-";
        if (c->ulp_p99 >= 0) snprintf(ulp, sizeof ulp, "%.0f", c->ulp_p99);
        fprintf(f, "  %-10s %-12s %10.3g %10.3g %10.3g %8s %6lld %6lld %9lld  %s", c->output, c->reference, c->max_abs,
                c->max_rel, c->rel_l2, ulp, (long long)c->nan, (long long)c->inf, (long long)c->unwritten,
                c->pass ? "PASS" : "FAIL");
        if (!c->pass) {
            if (c->first_bad_index >= 0) {
                fprintf(f, "  (%lld bad; first at [", (long long)c->n_bad);
                for (int d = 0; d < c->first_bad_ndim; d++)
                    fprintf(f, "%s%lld", d ? "," : "", (long long)c->first_bad_coord[d]);
                fprintf(f, "]: got %.6g want %.6g; atol %.3g rtol %.3g)", c->first_bad_got, c->first_bad_want, c->atol,
                        c->rtol);
            } else {
                fprintf(f, "  (rel_l2 %.3g > %.3g)", c->rel_l2, c->rel_l2_max);
            }
        }
        fprintf(f, "\n");
    }
    for (int i = 0; i < r->nself && i < REC_MAX_CHECKS; i++)
        fprintf(f, "  %-10s %-12s %10s %10s %10s %8s %6s %6s %9s  self, not a check (the %s backend's output is this "
                   "reference)\n",
                r->self_refs[i].output, r->self_refs[i].reference, "-", "-", "-", "-", "-", "-", "-", r->device.backend);
}

/* What the references cost, the machine's marks, nondeterminism, an error. */
static void print_notes(FILE *f, const run_record *r) {
    if (r->ref_us[REF_F64] > 0 || r->ref_us[REF_PARITY] > 0) {
        char f64[32], par[32];
        table_fmt_us(r->ref_us[REF_F64], f64, sizeof f64);
        table_fmt_us(r->ref_us[REF_PARITY], par, sizeof par);
        fprintf(f, "  CPU references computed in: f64 %s, bf16-parity %s (host wall clock, all cores)\n",
                r->ref_us[REF_F64] > 0 ? f64 : "-", r->ref_us[REF_PARITY] > 0 ? par : "-");
    }
    char marks[4][80];
    int nmarks = machine_marks(&r->machine, marks, 4);
    if (nmarks > 0) {
        fprintf(f, "  MARKED (timings may be throttled):");
        for (int i = 0; i < nmarks && i < 4; i++) fprintf(f, "%s %s", i ? ";" : "", marks[i]);
        fprintf(f, "\n");
    }
    if (r->determinism_runs > 1 && !r->bitwise_identical)
        fprintf(f, "  NONDETERMINISTIC: outputs differ across %d runs with the same inputs\n", r->determinism_runs);
    if (r->status == RUN_ERROR) fprintf(f, "  ERROR %s\n", r->error);
}

void table_print_warnings(FILE *f, const run_record *r) {
    for (int i = 0; i < r->nwarnings && i < REC_MAX_WARNINGS; i++) fprintf(f, "  WARNING %s\n", r->warnings[i]);
}

void table_print_record(FILE *f, const run_record *r) {
    char shape[256];
    table_shape_str(r->op, r->dim, shape, sizeof shape);
    fprintf(f, "\n%s\n", shape);
    table_print_warnings(f, r);
    if (r->kernel.fast_math_known && r->kernel.fast_math)
        fprintf(f, "  kernel compiled with fast math (--fast-math): Metal may reassociate and use fast:: functions\n");
    if (r->status == RUN_ERROR && r->timing.n == 0) {
        fprintf(f, "  ERROR %s\n", r->error);
        return;
    }
    table_print_timing(f, r);
    print_stages(f, r);
    print_checks(f, r);
    table_print_counters(f, r);
    print_notes(f, r);
}

void table_print_checks_hint(FILE *f, const backend *b, const run_opts *o, const char *op_name, int nfail) {
    if (nfail == 0 || !backend_has(b, BACKEND_CHECKS)) return;
    swmtl_options so;
    swmtl_options_init(&so); /* the environment's checks, unless --sw-checks says otherwise */
    char err[256];
    if (o->sw_checks && swmtl_parse_checks(o->sw_checks, &so.checks, "--sw-checks", err, sizeof err) != 0) return;
    if (so.checks == SWMTL_CHECKS_FULL) return;
    fprintf(f,
            "hint: an output check failed with the software device's %s checks: run again with --sw-checks full "
            "(or gdnbench validate %s) to look for races, out-of-bounds accesses and uninitialised reads\n",
            so.checks == SWMTL_CHECKS_NONE ? "none of" : "fast", op_name ? op_name : "OP");
}

/* A phase's seconds, "-" when clang did not report it. */
static void put_phase(FILE *f, double s) {
    if (s < 0) fprintf(f, " %9s", "-");
    else fprintf(f, " %9.2f", s);
}

void table_print_compile(FILE *f, const run_record *r) {
    const rec_compile *c = &r->compile;
    if (!c->present) return;
    int runs = 0, cached = 0;
    for (int i = 0; i < c->nkinds; i++) {
        runs += c->kinds[i].compiles;
        cached += c->kinds[i].cached;
    }
    fprintf(f, "compile: %.2f s, %d clang run%s, %d variant%s found built\n", c->wall_s, runs, runs == 1 ? "" : "s",
            cached, cached == 1 ? "" : "s");
    if (c->nkinds == 0) return;
    fprintf(f, "  %-12s %5s %6s %6s %9s %9s %9s %9s %9s %9s\n", "variant", "runs", "cached", "passes", "pre-pass",
            "front-end", "optimise", "codegen", "link", "total s");
    for (int i = 0; i < c->nkinds; i++) {
        const rec_compile_kind *k = &c->kinds[i];
        fprintf(f, "  %-12s %5d %6d %6d", k->kind, k->compiles, k->cached, k->prepasses);
        put_phase(f, k->prepass_s);
        put_phase(f, k->compiles ? k->frontend_s : -1);
        put_phase(f, k->compiles ? k->optimise_s : -1);
        put_phase(f, k->compiles ? k->codegen_s : -1);
        put_phase(f, k->compiles ? k->link_s : -1);
        fprintf(f, " %9.2f\n", k->wall_s);
    }
}
