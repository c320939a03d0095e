/* runner.c — warmup, timed iterations, determinism and correctness of one case. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/chips.h"
#include "core/clock.h"
#include "core/stats.h"
#include "core/strutil.h"
#include "runner/check.h"
#include "runner/machine.h"
#include "runner/kernel_choice.h"
#include "runner/launch_limits.h"
#include "runner/runner.h"
#include "runner/sampling.h"
#include "swmetal/swmetal.h"

/* FNV-1a over every output tensor, eight bytes per step in four interleaved lanes
 * (a byte at a time, the multiply chain made a 16 MB output cost ~25 ms a run):
 * a cheap bitwise-identity check across iterations.  Each step is a bijection of
 * the lane's state, so a change in one word always changes its lane. */
static uint64_t outputs_hash(const op_case *c) {
    const uint64_t prime = 1099511628211ull;
    uint64_t lane[4] = {1469598103934665603ull, 1469598103934665603ull ^ 1, 1469598103934665603ull ^ 2,
                        1469598103934665603ull ^ 3};
    for (int i = 0; i < c->op->nbufs; i++) {
        buf_role r = c->op->bufs[i].role;
        if (r != BUF_OUT && r != BUF_INOUT) continue;
        const unsigned char *p = c->t[i]->data;
        size_t n = tensor_nbytes(c->t[i]), j = 0;
        for (; j + 32 <= n; j += 32) {
            for (int k = 0; k < 4; k++) {
                uint64_t w;
                memcpy(&w, p + j + 8 * k, 8);
                lane[k] = (lane[k] ^ w) * prime;
            }
        }
        for (; j < n; j++) lane[0] = (lane[0] ^ p[j]) * prime;
        lane[1] = (lane[1] ^ (uint64_t)n) * prime; /* where one tensor ends and the next begins */
    }
    uint64_t h = lane[0];
    for (int k = 1; k < 4; k++) h = (h ^ lane[k]) * prime;
    return h;
}

static int alloc_stats(rec_stats *s, int n) {
    s->n = 0;
    s->samples = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    return s->samples ? 0 : -1;
}

static int grow_stats(rec_stats *s, int cap) {
    double *p = realloc(s->samples, sizeof(double) * (size_t)cap);
    if (!p) return -1;
    s->samples = p;
    return 0;
}

/* Room for `cap` timed samples in every per-sample array of rec. */
static int grow_samples(run_record *rec, int nst, int cap) {
    if (grow_stats(&rec->timing, cap) || grow_stats(&rec->wall, cap)) return -1;
    for (int s = 0; s < nst && s < REC_MAX_STAGES; s++)
        if (grow_stats(&rec->stages[s].timing, cap)) return -1;
    return 0;
}

/* The rule of o: exactly o->iters samples, or adaptive. */
static sampling_rule rule_of(const run_opts *o) {
    sampling_rule r = {.exact = !o->adaptive, .iters = o->iters, .max_time_us = o->max_time_s * 1e6,
                       .max_noise = o->max_noise, .min_samples = o->min_samples, .max_samples = SAMPLING_MAX_SAMPLES};
    if (r.min_samples < 1) r.min_samples = 1;
    return r;
}

static void fail(run_record *rec, const char *msg) {
    rec->status = RUN_ERROR;
    snprintf(rec->error, sizeof rec->error, "%s", msg);
}

/* Lists the outputs of c as not checked against reference `name`: the backend's
 * output is that reference. */
static void note_self_reference(const op_case *c, const char *name, run_record *rec) {
    for (int i = 0; i < c->op->nbufs; i++) {
        buf_role r = c->op->bufs[i].role;
        if (r != BUF_OUT && r != BUF_INOUT) continue;
        if (tensor_numel(c->t[i]) == 0 || rec->nself >= REC_MAX_CHECKS) continue;
        snprintf(rec->self_refs[rec->nself].output, sizeof rec->self_refs[0].output, "%s", c->op->bufs[i].name);
        snprintf(rec->self_refs[rec->nself].reference, sizeof rec->self_refs[0].reference, "%s", name);
        rec->nself++;
    }
}

static int run_checks(op_case *c, const run_opts *o, int self_references, run_record *rec, tensor *const *inout_in) {
    const op_desc *op = c->op;
    static const struct {
        int mask;
        ref_kind kind;
        const char *name;
    } refs[] = {{CHECK_F64, REF_F64, "f64"}, {CHECK_PARITY, REF_PARITY, "bf16-parity"}};
    int all_pass = 1;
    for (int k = 0; k < 2; k++) {
        if (!(o->check & refs[k].mask)) continue;
        if (self_references & refs[k].mask) {
            note_self_reference(c, refs[k].name, rec);
            continue;
        }
        double *out[OP_MAX_BUFS] = {0};
        int ok = 1;
        for (int i = 0; i < op->nbufs; i++) {
            if (op->bufs[i].role != BUF_OUT && op->bufs[i].role != BUF_INOUT) continue;
            if (tensor_numel(c->t[i]) == 0) continue; /* unused at this shape: nothing to check */
            out[i] = host_alloc_large(sizeof(double) * (size_t)tensor_numel(c->t[i]));
            if (!out[i]) ok = 0;
        }
        /* The references read a BUF_INOUT tensor's input, not the kernel's result. */
        tensor *result[OP_MAX_BUFS] = {0};
        for (int i = 0; i < op->nbufs; i++)
            if (inout_in[i]) result[i] = c->t[i], c->t[i] = inout_in[i];
        double t0 = clock_now_us();
        int ref_rc = ok ? op->reference(c, refs[k].kind, out) : -1;
        rec->ref_us[refs[k].kind] = clock_now_us() - t0;
        for (int i = 0; i < op->nbufs; i++)
            if (result[i]) c->t[i] = result[i];
        if (ref_rc != 0) {
            for (int i = 0; i < op->nbufs; i++) free(out[i]);
            fail(rec, "the CPU reference could not be computed (out of memory?)");
            return -1;
        }
        for (int i = 0; i < op->nbufs; i++) {
            if (!out[i] || rec->nchecks >= REC_MAX_CHECKS) continue;
            op_tol tol = op->bufs[i].tol[refs[k].kind];
            if (o->has_atol) tol.atol = o->atol;
            if (o->has_rtol) tol.rtol = o->rtol;
            rec_check *rc = &rec->checks[rec->nchecks++];
            check_output(c->t[i], out[i], refs[k].name, tol, rc);
            all_pass &= rc->pass;
            free(out[i]);
        }
    }
    return all_pass;
}

/* Dispatches and command buffers per iteration, grouped as mtl_run submits them:
 * consecutive ordinary stages share one command buffer; a stage with
 * own_command_buffers has one per dispatch. */
static void count_submissions(run_record *rec) {
    int shared_open = 0;
    rec->dispatches = rec->command_buffers = 0;
    for (int s = 0; s < rec->nstages && s < REC_MAX_STAGES; s++) {
        const rec_stage *st = &rec->stages[s];
        rec->dispatches += st->repeat;
        if (st->own_command_buffers) {
            rec->command_buffers += st->repeat;
            shared_open = 0;
        } else if (!shared_open) {
            rec->command_buffers++;
            shared_open = 1;
        }
    }
}

/* ---- the steps of one case, in the order runner_run_case takes them ---- */

/* The device the numbers come from: identity, and peaks only for real chips (an
 * emulated device or the host CPU has none). */
static void describe_device(const backend *b, const op_case *c, run_record *rec) {
    snprintf(rec->device.backend, sizeof rec->device.backend, "%s", b->desc->name);
    snprintf(rec->device.name, sizeof rec->device.name, "%s", b->device_name);
    rec->device.emulated = backend_has(b, BACKEND_EMULATED);
    rec->device.paravirtual = !rec->device.emulated && chip_is_paravirtual(b->device_name);
    if (rec->device.paravirtual) run_record_warn(rec, chip_paravirtual_warning());
    rec->device.gpu_cores = b->gpu_cores;
    rec->device_checks = b->take_findings != NULL;
    rec->device.bandwidth_gbps = rec->device.fp32_tflops = rec->device.fp16_tflops = -1;
    rec->device.bandwidth_verified = rec->device.flops_verified = -1;
    const chip_info *chip = rec->device.emulated ? NULL : chip_find(b->device_name, b->gpu_cores);
    if (chip) {
        rec->device.gpu_cores = chip->gpu_cores;
        rec->device.bandwidth_gbps = chip->bandwidth_gbps;
        rec->device.fp32_tflops = chip->fp32_tflops;
        rec->device.fp16_tflops = chip->fp16_tflops;
        rec->device.bandwidth_verified = chip->bandwidth_verified;
        rec->device.flops_verified = chip->flops_verified;
    }
    rec->bytes = c->op->bytes ? c->op->bytes(c->dim) : 0;
    rec->flops = c->op->flops ? c->op->flops(c->dim) : 0;
}

/* What each stage of the prepared case runs: kernel, file, launch geometry. */
static void describe_stages(backend *b, op_case *c, run_record *rec) {
    if (b->fill_kernel) b->fill_kernel(b, rec);
    int nst = c->op->nstages ? c->op->nstages(c) : 1;
    if (!backend_has(b, BACKEND_KERNELS)) nst = 1; /* the reference computes the whole op at once */
    rec->nstages = nst;
    for (int s = 0; s < nst && s < REC_MAX_STAGES; s++) {
        op_launch l;
        b->describe(b, c, s, &l);
        rec_stage *st = &rec->stages[s];
        snprintf(st->name, sizeof st->name, "%s", l.stage ? l.stage : "");
        snprintf(st->function, sizeof st->function, "%s", l.function ? l.function : "");
        const stage_kernel *k = b->stage_kernel ? b->stage_kernel(b, s) : NULL;
        if (k) {
            str_copy(st->source, sizeof st->source, k->display);
            str_copy(st->sha256, sizeof st->sha256, k->sha256);
            st->theirs = k->origin != KERNEL_OURS;
        }
        memcpy(st->grid, l.grid, sizeof st->grid);
        memcpy(st->tg, l.tg, sizeof st->tg);
        for (int m = 0; m < l.ntgmem; m++) st->tgmem_bytes += l.tgmem[m].bytes;
        st->repeat = l.repeat ? l.repeat : 1;
        st->own_command_buffers = l.own_command_buffers;
    }
    count_submissions(rec);
}

/* The warmup and sampling loop of one case: what it reads and what it has counted. */
typedef struct sampler {
    backend *b;
    op_case *c;
    const run_opts *o;
    run_record *rec;
    tensor *inout_in[OP_MAX_BUFS]; /* inputs of BUF_INOUT tensors (keep_inout_inputs) */
    sampling_rule rule;
    sampling_state ss;
    sampling_stop stop;
    double (*now)(void);
    int cap;                       /* room in every per-sample array */
    int nwarm, runs, identical, gpu_clock, stage_method;
    uint64_t first_hash;
} sampler;

/* Room for the samples the rule will take (grown as an adaptive rule goes on). */
static int prepare_buffers(sampler *sp) {
    run_record *rec = sp->rec;
    sp->cap = sp->rule.exact ? sp->rule.iters : 16;
    for (int s = 0; s < rec->nstages && s < REC_MAX_STAGES; s++)
        if (alloc_stats(&rec->stages[s].timing, sp->cap)) return -1;
    return alloc_stats(&rec->timing, sp->cap) || alloc_stats(&rec->wall, sp->cap) ||
                   alloc_stats(&rec->warmup_timing, sp->o->warmup)
               ? -1
               : 0;
}

/* A BUF_INOUT tensor is the kernel's input and, after a run, its output: keep the
 * input so every run starts from it and the references read it, not a result. */
static int keep_inout_inputs(sampler *sp) {
    const op_desc *op = sp->c->op;
    for (int i = 0; i < op->nbufs; i++) {
        if (op->bufs[i].role != BUF_INOUT) continue;
        sp->inout_in[i] = tensor_clone(sp->c->t[i]);
        if (!sp->inout_in[i]) return -1;
    }
    return 0;
}

/* One run of the case (warmup or timed): its timing in *t, its host cost in *cost.
 * The first timed run is the one a --capture records.  -1 with rec's error set. */
static int run_iteration(sampler *sp, backend_timing *t, double *cost) {
    backend *b = sp->b;
    op_case *c = sp->c;
    char err[512] = "";
    int timed = sp->nwarm >= sp->o->warmup;
    double cost0 = sp->now();
    for (int i = 0; i < c->op->nbufs; i++)
        if (sp->inout_in[i]) memcpy(c->t[i]->data, sp->inout_in[i]->data, tensor_nbytes(c->t[i]));
    /* The state the timed runs start in (the warmup may have heated the chip). */
    if (timed && sp->ss.n == 0 && sp->nwarm > 0) machine_sample(&sp->rec->machine, b);
    int capture = timed && sp->ss.n == 0 && sp->o->capture_path;
    if (capture && (!b->capture_begin || b->capture_begin(b, sp->o->capture_path, err, sizeof err) != 0)) {
        if (!b->capture_begin) snprintf(err, sizeof err, "a GPU capture needs --backend metal");
        fail(sp->rec, err);
        return -1;
    }
    int run_rc = b->run_once(b, c, t, err, sizeof err);
    if (capture) b->capture_end(b);
    if (run_rc != 0) {
        fail(sp->rec, err);
        if (b->take_findings) sp->rec->nfindings = b->take_findings(b, &sp->rec->findings);
        return -1;
    }
    uint64_t h = outputs_hash(c);
    if (sp->runs == 0) sp->first_hash = h;
    sp->identical &= h == sp->first_hash;
    sp->runs++;
    *cost = sp->now() - cost0;
    return 0;
}

/* Files run t as a warmup run (returns 1: not a sample) or as the next timed sample
 * (0); -1 when out of memory. */
static int take_sample(sampler *sp, const backend_timing *t, double cost) {
    run_record *rec = sp->rec;
    const run_opts *o = sp->o;
    double sample = t->gpu_us >= 0 ? t->gpu_us : t->wall_us;
    if (sp->nwarm < o->warmup) {
        /* The first run costs more than the whole budget: it is the one sample,
         * taken cold, rather than a warmup thrown away before another such run.
         * (Not when capturing: the capture records a timed run after warmup.) */
        if (o->adaptive && o->warmup_auto && sp->nwarm == 0 && cost > sp->rule.max_time_us && !o->capture_path) {
            rec->cold = 1;
            sp->stop = SAMPLING_BUDGET;
        } else {
            rec->warmup_timing.samples[rec->warmup_timing.n++] = sample;
            sp->nwarm++;
            return 1;
        }
    }
    if (rec->timing.n == sp->cap) {
        if (sp->cap >= SAMPLING_MAX_SAMPLES || grow_samples(rec, rec->nstages, sp->cap * 2)) return -1;
        sp->cap *= 2;
    }
    if (t->gpu_us < 0) sp->gpu_clock = 0;
    rec->timing.samples[rec->timing.n++] = sample;
    rec->wall.samples[rec->wall.n++] = t->wall_us;
    /* Every stage sample of a record comes from one method: when the backend had
     * to change (counter samples unusable), the samples so far are dropped. */
    if (t->stage_method != sp->stage_method) {
        for (int s = 0; s < rec->nstages; s++) rec->stages[s].timing.n = 0;
        sp->stage_method = t->stage_method;
        snprintf(rec->stage_timing_why, sizeof rec->stage_timing_why, "%s", t->stage_why ? t->stage_why : "");
    }
    for (int s = 0; s < rec->nstages && s < t->nstages; s++)
        rec->stages[s].timing.samples[rec->stages[s].timing.n++] = t->stage_us[s];
    sampling_add(&sp->ss, sample, cost);
    return 0;
}

/* Warmup, then timed runs until the rule stops them.  0, or -1 with rec's error set. */
static int sample_until_stop(sampler *sp) {
    machine_sample(&sp->rec->machine, sp->b);
    while (sp->stop == SAMPLING_GO) {
        backend_timing t = {0};
        double cost = 0;
        if (run_iteration(sp, &t, &cost) != 0) return -1;
        int taken = take_sample(sp, &t, cost);
        if (taken < 0) {
            fail(sp->rec, "out of memory for timing samples");
            return -1;
        }
        if (taken == 0 && sp->stop == SAMPLING_GO) sp->stop = sampling_next(&sp->rule, &sp->ss);
    }
    return 0;
}

/* The record's counts, rule, noise, clocks and statistics once sampling stopped. */
static void summarise(sampler *sp) {
    run_record *rec = sp->rec;
    const run_opts *o = sp->o;
    int nst = rec->nstages;
    rec->warmup = sp->nwarm;
    rec->iterations = rec->timing.n;
    snprintf(rec->sampling, sizeof rec->sampling, "%s", sp->rule.exact ? "iters" : "adaptive");
    snprintf(rec->stop, sizeof rec->stop, "%s", sampling_stop_name(sp->stop));
    double noise = sampling_noise(&sp->ss);
    rec->noise = isfinite(noise) ? noise : -1;
    if (!sp->rule.exact) {
        rec->max_time_s = o->max_time_s;
        rec->max_noise = o->max_noise;
        rec->min_samples = sp->rule.min_samples;
    }
    machine_resample_after(&rec->machine);
    snprintf(rec->timing_source, sizeof rec->timing_source, "%s", sp->gpu_clock ? "gpu" : "wall");
    snprintf(rec->stage_timing, sizeof rec->stage_timing, "%s",
             nst > 1 && sp->stage_method == STAGE_TIMING_COUNTERS   ? "counters"
             : nst > 1 && sp->stage_method == STAGE_TIMING_SEPARATE ? "separate command buffers"
                                                                     : "");
    stats_compute(&rec->timing);
    stats_compute(&rec->wall);
    stats_compute(&rec->warmup_timing);
    for (int s = 0; s < nst; s++) stats_compute(&rec->stages[s].timing);
    rec->determinism_runs = sp->runs;
    rec->bitwise_identical = sp->identical;
}

/* The verdict: the references' checks, and the same outputs on every run.  0, or -1
 * with rec's error set when a reference could not be computed. */
static int check(sampler *sp) {
    run_record *rec = sp->rec;
    op_case *c = sp->c;
    int pass = sp->o->check ? run_checks(c, sp->o, sp->b->self_references, rec, sp->inout_in) : 1;
    if (pass < 0) return -1;
    /* Ops whose kernels add with float atomics (op->nondeterministic) differ run to run
     * by design: still reported (bitwise_identical), not a failure. */
    int differ = !sp->identical && !c->op->nondeterministic;
    rec->status = pass && !differ ? RUN_PASS : RUN_FAIL;
    if (differ) snprintf(rec->error, sizeof rec->error, "outputs differ between runs of the same inputs");
    return 0;
}

/* The software device's compile totals when the last case ended: a case is charged
 * what was compiled since (the first case: since the process started), which takes
 * in the libraries the CLI created when it checked the kernels before any case. */
static pthread_mutex_t compile_seen_mu = PTHREAD_MUTEX_INITIALIZER;
static sw_compile_stats compile_seen;

void runner_note_compile(run_record *rec) {
    sw_compile_stats now, d;
    pthread_mutex_lock(&compile_seen_mu);
    sw_compile_stats_get(&now);
    sw_compile_stats_diff(&now, &compile_seen, &d);
    compile_seen = now;
    pthread_mutex_unlock(&compile_seen_mu);
    rec_compile *rc = &rec->compile;
    rc->present = 1;
    for (int k = 0; k < SW_COMPILE_MAX_KINDS && d.kinds[k].kind && rc->nkinds < REC_MAX_COMPILE_KINDS; k++) {
        const sw_compile_phases *p = &d.kinds[k];
        rec_compile_kind *o = &rc->kinds[rc->nkinds++];
        str_copy(o->kind, sizeof o->kind, p->kind);
        o->compiles = p->compiles;
        o->cached = p->cached;
        o->prepasses = p->prepasses;
        o->prepass_s = p->prepass_s;
        o->frontend_s = p->frontend_s;
        o->optimise_s = p->optimise_s;
        o->codegen_s = p->codegen_s;
        o->link_s = p->link_s;
        o->wall_s = p->wall_s;
        rc->wall_s += p->wall_s;
    }
}

static int run_case(backend *b, op_case *c, const run_opts *o, run_record *rec);

/* --counters: one more run, on the software device's counting variant, after the
 * timed ones (the counts are exact: one run is all of them); its outputs are not
 * checked again.  A backend that cannot count says why in the record. */
static void count_case(sampler *sp) {
    run_record *rec = sp->rec;
    backend *b = sp->b;
    rec->counters_asked = 1;
    if (!b->count_once) {
        snprintf(rec->counters_unavailable, sizeof rec->counters_unavailable,
                 "the %s backend cannot count: exact counters come from the software device (--backend sw)",
                 b->desc->name);
        return;
    }
    for (int i = 0; i < sp->c->op->nbufs; i++)
        if (sp->inout_in[i]) memcpy(sp->c->t[i]->data, sp->inout_in[i]->data, tensor_nbytes(sp->c->t[i]));
    char err[400] = "";
    rec->counters = b->count_once(b, sp->c, err, sizeof err);
    if (rec->counters) rec->counters_unavailable[0] = '\0';
    else {
        snprintf(rec->counters_unavailable, sizeof rec->counters_unavailable, "the counting run failed: %.170s", err);
        run_record_warn(rec, rec->counters_unavailable);
    }
}

int runner_run_case(backend *b, op_case *c, const run_opts *o, run_record *rec) {
    /* the software device compiles while the case is prepared and, for a variant
     * only a check needs, during its first run */
    int rc = run_case(b, c, o, rec);
    if (backend_has(b, BACKEND_EMULATED)) runner_note_compile(rec);
    return rc;
}

static int run_case(backend *b, op_case *c, const run_opts *o, run_record *rec) {
    char err[512] = "";
    memset(rec, 0, sizeof *rec);
    rec->op = c->op;
    memcpy(rec->dim, c->dim, sizeof rec->dim);
    rec->seed = c->seed;
    rec->noise = -1;
    rec->counters_asked = o->counters;
    rec->all_floors = o->all_floors;
    if (o->counters)
        snprintf(rec->counters_unavailable, sizeof rec->counters_unavailable,
                 "not counted: the case failed before its counting run");
    describe_device(b, c, rec);
    if (b->prepare(b, c, o, err, sizeof err) != 0) {
        fail(rec, err);
        return -1;
    }
    describe_stages(b, c, rec);
    launch_limits_warn(rec);
    sampler *sp = calloc(1, sizeof *sp);
    if (!sp) {
        fail(rec, "out of memory for timing samples");
        return -1;
    }
    *sp = (sampler){.b = b, .c = c, .o = o, .rec = rec, .rule = rule_of(o), .stop = SAMPLING_GO,
                    .now = o->clock_us ? o->clock_us : clock_now_us, .identical = 1, .gpu_clock = 1,
                    .stage_method = STAGE_TIMING_NONE};
    int rc = -1;
    if (prepare_buffers(sp) != 0 || keep_inout_inputs(sp) != 0)
        fail(rec, "out of memory for timing samples");
    else if (sample_until_stop(sp) == 0) {
        summarise(sp);
        rc = check(sp);
        if (rc == 0 && o->counters) count_case(sp);
    }
    for (int i = 0; i < OP_MAX_BUFS; i++) tensor_free(sp->inout_in[i]);
    free(sp);
    return rc;
}
