/* validate_exec.c — one case of `gdnbench validate`: build the inputs, run the kernel
 * on the software device under every run configuration, compare the runs bit for
 * bit, judge the first run against the references (issue 7 point 2).
 *
 * Run configurations (fiber schedule within threadgroups, threadgroup start order):
 *   0 inorder/inorder      the judged run
 *   1 reverse/reverse      a race between threads or threadgroups changes the output
 *   2 random:S/random:S+1  likewise, an order neither of the above produces
 *   3 inorder/inorder      repeatability (uninitialised memory, stale state)
 * A kernel fault or check diagnosis (OOB, uninitialised threadgroup read, race,
 * divergent barrier) fails the case with the device's text; the run goes on with
 * the next case.  A kernel whose source uses atomics may legitimately differ between
 * schedules: such differences within the output's parity tolerance are a note, not a
 * failure.  Not between the two inorder runs: the device applies atomics in
 * threadgroup order (swmetal/atomics.c), so one schedule gives one result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/strutil.h"
#include "runner/check.h"
#include "runner/kernel_choice.h"
#include "runner/shader_source.h"
#include "runner/validate.h"
#include "msl/msl_include.h"
#include "swmetal/swmetal.h"

void validate_run_configs(uint64_t seed, validate_run_cfg cfg[VALIDATE_NRUNS]) {
    memset(cfg, 0, sizeof(validate_run_cfg) * VALIDATE_NRUNS);
    snprintf(cfg[0].schedule, sizeof cfg[0].schedule, "inorder");
    snprintf(cfg[0].tg_order, sizeof cfg[0].tg_order, "inorder");
    snprintf(cfg[1].schedule, sizeof cfg[1].schedule, "reverse");
    snprintf(cfg[1].tg_order, sizeof cfg[1].tg_order, "reverse");
    snprintf(cfg[2].schedule, sizeof cfg[2].schedule, "random:%llu", (unsigned long long)(seed % 1000000 + 1));
    snprintf(cfg[2].tg_order, sizeof cfg[2].tg_order, "random:%llu", (unsigned long long)(seed % 1000000 + 2));
    cfg[3] = cfg[0];
}

/* Limits of the device or the pipeline that a launch exceeds: the kernel cannot run
 * this shape on an Apple GPU either, so the shape is unsupported, not failed. */
static int is_limit_refusal(const char *msg) {
    if (strstr(msg, "exceed the pipeline's limit")) return 1;
    return strstr(msg, "exceeds the") && strstr(msg, "limit") &&
           (strstr(msg, "threadgroup memory") || strstr(msg, "threads per threadgroup"));
}

/* Every configuration on fibers: lanes (lanes.c) would run only the inorder
 * one, and where a kernel calls simd functions in divergent code they reconverge
 * as a GPU does while fibers may not; that difference is not a race to report. */
static int apply_run_cfg(backend *b, const validate_run_cfg *cfg) {
    swmtl_schedule s = {.lanes = 0};
    if (swmtl_parse_order(cfg->schedule, &s.fibers, "schedule", NULL, 0) != 0 ||
        swmtl_parse_order(cfg->tg_order, &s.groups, "threadgroup order", NULL, 0) != 0 || !b->set_schedule)
        return -1;
    return b->set_schedule(b, &s);
}

/* Whether any source the case runs mentions atomics: the files the backend chose
 * for each dispatch (ours or the user's, runner/kernel_choice.h). */
static int sources_use_atomics(const validate_ctx *ctx, const op_case *c) {
    const char *paths[OP_MAX_STAGES];
    int np = 0;
    int nst = c->op->nstages ? c->op->nstages(c) : 0;
    for (int s = 0; s < nst && s < OP_MAX_STAGES && ctx->b->stage_kernel; s++) {
        const stage_kernel *k = ctx->b->stage_kernel(ctx->b, s);
        if (k && k->path[0]) paths[np++] = k->path;
    }
    int uses = 0;
    for (int i = 0; i < np && !uses; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(paths[i], paths[j]) == 0;
        if (seen) continue;
        shader_source src;
        char err[256];
        if (shader_source_load(paths[i], &src, err, sizeof err) != 0) continue;
        /* with the headers it includes */
        char *xerr = NULL;
        char *text = msl_expand_source(src.text, src.display_path, ctx->ro.shader ? &ctx->ro.source : NULL,
                                       MSL_EXPAND_KEEP_SYSTEM, &xerr);
        uses = strstr(text ? text : src.text, "atomic_") != NULL;
        free(text);
        free(xerr);
        shader_source_free(&src);
    }
    return uses;
}

static int is_output(const op_desc *op, int i) { return op->bufs[i].role == BUF_OUT || op->bufs[i].role == BUF_INOUT; }

/* Copies of the judged run's outputs, to compare the other runs with. */
static int snapshot_outputs(const op_case *c, tensor **snap) {
    for (int i = 0; i < c->op->nbufs; i++) {
        snap[i] = NULL;
        if (!is_output(c->op, i)) continue;
        snap[i] = tensor_new_like(c->t[i], c->t[i]->name, c->t[i]->dtype);
        if (!snap[i]) return -1;
        memcpy(snap[i]->data, c->t[i]->data, tensor_nbytes(c->t[i]));
    }
    return 0;
}

/* Compares run r's outputs with the judged run's: adds a finding for the first
 * output that differs.  Returns 1 if all identical. */
static int compare_run(const validate_ctx *ctx, const op_case *c, tensor *const *snap, const validate_run_cfg *cfg,
                       int r, validate_result *res) {
    for (int i = 0; i < c->op->nbufs; i++) {
        if (!snap[i]) continue;
        const tensor *now = c->t[i], *ref = snap[i];
        if (memcmp(now->data, ref->data, tensor_nbytes(now)) == 0) continue;
        int64_t n = tensor_numel(now), ndiff = 0, first = -1;
        int within_tol = 1;
        op_tol tol = c->op->bufs[i].tol[REF_PARITY];
        size_t esz = tensor_nbytes(now) / (size_t)(n ? n : 1);
        for (int64_t j = 0; j < n; j++) {
            if (memcmp((const char *)now->data + (size_t)j * esz, (const char *)ref->data + (size_t)j * esz, esz) == 0)
                continue;
            if (first < 0) first = j;
            ndiff++;
            double a = tensor_get(now, j), b = tensor_get(ref, j);
            if (!(fabs(a - b) <= tol.atol + tol.rtol * fabs(b))) within_tol = 0;
        }
        int repeat = r == VALIDATE_NRUNS - 1;
        int note = res->uses_atomics && within_tol && !repeat;
        validate_finding *f = validate_add_finding(res, repeat ? "repeat" : "schedule", note);
        if (!f) return 0;
        snprintf(f->output, sizeof f->output, "%s", now->name);
        validate_coord_str(now, first, f->first_bad, sizeof f->first_bad);
        unsigned char *mask = calloc((size_t)n, 1);
        if (mask) {
            for (int64_t j = 0; j < n; j++)
                mask[j] = memcmp((const char *)now->data + (size_t)j * esz, (const char *)ref->data + (size_t)j * esz,
                                 esz) != 0;
            validate_pattern(now, mask, NULL, validate_chunk_len(c->op, c->dim), f->pattern, sizeof f->pattern);
            free(mask);
        }
        validate_run_cfg where = *cfg;
        char first_at[sizeof f->first_bad], when[160];
        snprintf(first_at, sizeof first_at, "%s", f->first_bad);
        if (repeat)
            snprintf(when, sizeof when, "between two identical runs (%s/%s, repeated)", where.schedule, where.tg_order);
        else
            snprintf(when, sizeof when, "from the inorder run under schedule %s, threadgroup order %s", where.schedule,
                     where.tg_order);
        snprintf(f->text, sizeof f->text, "%s differs %s: %lld of %lld elements, first %s got %.9g want %.9g%s",
                 now->name, when, (long long)ndiff, (long long)n, first_at, tensor_get(now, first), tensor_get(ref, first),
                 note                           ? " (the kernel uses atomics; within the parity tolerance)"
                 : res->uses_atomics && repeat ? ": a race (atomics land in the same order in both runs)"
                 : res->uses_atomics           ? " (atomics, but beyond the parity tolerance)"
                                               : ": a race");
        return 0;
    }
    return 1;
}

static void set_status_from_findings(validate_result *res) {
    res->status = VAL_PASS;
    for (int i = 0; i < res->nfindings; i++)
        if (!res->findings[i].is_note) res->status = VAL_FAIL;
}

/* A run that failed on the device: msg is its error; findings (taken over, may be
 * NULL) what the device's checks found, listed by the table and the JSON. */
static void fault_finding(validate_result *res, const validate_run_cfg *cfg, int run, const char *msg,
                          dev_finding *findings, int nfindings) {
    validate_run_cfg where = *cfg;
    validate_finding *f = validate_add_finding(res, "fault", 0);
    if (nfindings > 0 && !res->dev_findings) {
        res->dev_findings = findings;
        res->ndev_findings = nfindings;
        res->dev_findings_run = run;
        findings = NULL;
    }
    free(findings);
    if (!f) return;
    if (nfindings > 0) {
        /* Which kinds, in the order found, then the list itself follows in the table. */
        uint64_t occ = 0;
        char kinds[200] = "";
        size_t kl = 0;
        int seen[DEV_FIND_NKINDS] = {0};
        for (int i = 0; i < res->ndev_findings; i++) {
            const dev_finding *x = &res->dev_findings[i];
            occ += x->occurrences;
            if (x->kind <= 0 || x->kind >= DEV_FIND_NKINDS || seen[x->kind]++ || kl >= sizeof kinds - 1) continue;
            kl += (size_t)snprintf(kinds + kl, sizeof kinds - kl, "%s%s", kl ? ", " : "",
                                   dev_finding_kind_name(x->kind));
        }
        snprintf(f->text, sizeof f->text,
                 "the kernel failed under schedule %s, threadgroup order %s: the software device's checks found %d "
                 "distinct bug%s (%llu occurrence%s) in kernel '%s': %s",
                 where.schedule, where.tg_order, res->ndev_findings, res->ndev_findings == 1 ? "" : "s",
                 (unsigned long long)occ, occ == 1 ? "" : "s", res->dev_findings[0].kernel, kinds);
    } else {
        snprintf(f->text, sizeof f->text, "the kernel failed under schedule %s, threadgroup order %s: %s",
                 where.schedule, where.tg_order, msg);
    }
}

static dev_finding *copy_findings(const dev_finding *f, int n) {
    dev_finding *c = n > 0 ? malloc(sizeof *c * (size_t)n) : NULL;
    if (c) memcpy(c, f, sizeof *c * (size_t)n);
    return c;
}

/* The case's inputs under its profile; NULL when the op refuses the shape
 * (unsupported) or they cannot be made (error), res saying so. */
static op_case *make_case(const validate_ctx *ctx, const validate_case_spec *spec, validate_result *res) {
    const op_desc *op = ctx->op;
    char err[1024] = "";
    if (op->validate && op->validate(spec->dim, err, sizeof err) != 0) {
        res->status = VAL_UNSUPPORTED;
        snprintf(res->reason, sizeof res->reason, "%s refuses the shape: %.400s", op->name, err);
        return NULL;
    }
    op_case *c = validate_case_new(op, spec->dim, ctx->seed, spec->profile, err, sizeof err);
    if (!c) {
        res->status = VAL_ERROR;
        str_copy(res->reason, sizeof res->reason, err);
    }
    return c;
}

/* The judged run (configuration 0) through the runner.  0 when it ran; 1 when it
 * failed on the device (a fault finding) or hit a limit (unsupported); -1 when the
 * case could not be prepared (nothing to release), res saying why. */
static int first_run(validate_ctx *ctx, op_case *c, int schedules, validate_result *res) {
    char err[1024] = "";
    if (schedules && apply_run_cfg(ctx->b, &res->runs[0]) != 0) {
        res->status = VAL_ERROR;
        snprintf(res->reason, sizeof res->reason, "the software device refused the schedule %s",
                 res->runs[0].schedule);
        return -1;
    }
    if (ctx->b->prepare(ctx->b, c, &ctx->ro, err, sizeof err) != 0) {
        res->status = is_limit_refusal(err) ? VAL_UNSUPPORTED : VAL_ERROR;
        str_copy(res->reason, sizeof res->reason, err);
        return -1;
    }
    res->uses_atomics = schedules && sources_use_atomics(ctx, c);
    res->have_rec = 1;
    res->nruns = 1;
    res->identical = 1;
    if (runner_run_case(ctx->b, c, &ctx->ro, &res->rec) == 0) return 0;
    if (is_limit_refusal(res->rec.error)) {
        res->status = VAL_UNSUPPORTED;
        str_copy(res->reason, sizeof res->reason, res->rec.error);
    } else {
        snprintf(err, sizeof err, "%s", res->rec.error);
        dev_finding *copy = copy_findings(res->rec.findings, res->rec.nfindings);
        fault_finding(res, &res->runs[0], 0, err, copy, copy ? res->rec.nfindings : 0);
        set_status_from_findings(res);
    }
    return 1;
}

/* Configurations 1.. on the device, each compared bit for bit with the judged run.
 * 0, or -1 (error) when the judged outputs cannot be copied. */
static int other_runs(validate_ctx *ctx, op_case *c, validate_result *res) {
    tensor *snap[OP_MAX_BUFS] = {0};
    char err[1024] = "";
    int rc = snapshot_outputs(c, snap);
    if (rc != 0) {
        res->status = VAL_ERROR;
        snprintf(res->reason, sizeof res->reason, "out of memory for a copy of the outputs");
    }
    for (int r = 1; rc == 0 && r < VALIDATE_NRUNS; r++) {
        backend_timing t;
        res->nruns = r + 1;
        if (apply_run_cfg(ctx->b, &res->runs[r]) != 0 || ctx->b->run_once(ctx->b, c, &t, err, sizeof err) != 0) {
            dev_finding *found = NULL;
            int nfound = ctx->b->take_findings ? ctx->b->take_findings(ctx->b, &found) : 0;
            fault_finding(res, &res->runs[r], r, err, found, nfound);
            break;
        }
        if (!compare_run(ctx, c, snap, &res->runs[r], r, res)) res->identical = 0;
    }
    if (rc == 0) {
        res->rec.determinism_runs = res->nruns;
        res->rec.bitwise_identical = res->identical;
    }
    for (int i = 0; i < OP_MAX_BUFS; i++) tensor_free(snap[i]);
    return rc;
}

/* The case's status from its findings; the embedded record says the same, with the
 * first failure as its error. */
static void conclude(validate_result *res) {
    set_status_from_findings(res);
    res->rec.status = res->status == VAL_PASS ? RUN_PASS : RUN_FAIL;
    if (res->status != VAL_FAIL || res->rec.error[0]) return;
    for (int i = 0; i < res->nfindings; i++)
        if (!res->findings[i].is_note) {
            str_copy(res->rec.error, sizeof res->rec.error, res->findings[i].text);
            return;
        }
}

void validate_run_case(validate_ctx *ctx, const validate_case_spec *spec, validate_result *res) {
    double t0 = (clock_now_us() * 1e-6);
    memset(res, 0, sizeof *res);
    res->dev_findings_run = -1;
    validate_run_configs(ctx->seed, res->runs);
    op_case *c = make_case(ctx, spec, res);
    if (c) {
        int schedules = backend_has(ctx->b, BACKEND_SCHEDULES);
        int ran = first_run(ctx, c, schedules, res);
        if (ran == 0) {
            validate_judge(ctx, c, res);
            if (!schedules || other_runs(ctx, c, res) == 0) conclude(res);
        }
        if (ran >= 0) {
            /* The embedded record says what validate concluded: a fault is a failed case. */
            if (res->status == VAL_FAIL) res->rec.status = RUN_FAIL;
            if (ctx->b->release_case) ctx->b->release_case(ctx->b);
        }
        op_case_free(c);
        if (schedules) apply_run_cfg(ctx->b, &res->runs[0]);
    }
    res->seconds = (clock_now_us() * 1e-6) - t0;
}
