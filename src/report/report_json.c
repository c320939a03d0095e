/* report_json.c — run_record -> JSON (schema 1), and writing a report file.
 *
 * Key order is the order of report.md and results/schema-1.json; readers should
 * not depend on it, but diffs of two reports stay readable.  Every cJSON call is
 * checked through json_build.h's helpers, which clear `ok` when memory runs out;
 * report_record_json then frees the half-built object and returns NULL. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/sha256.h"
#include "core/version.h"
#include "report/counters_json.h"
#include "report/json_build.h"
#include "report/report_json.h"
#include "runner/host.h"
#include "runner/machine.h"

static void add_u32x3(json_build *b, cJSON *obj, const char *key, const uint32_t v[3]) {
    cJSON *a = jb_check(b, cJSON_CreateArray());
    for (int i = 0; a && i < 3; i++)
        jb_append(b, a, cJSON_CreateNumber(v[i]));
    jb_put(b, obj, key, a);
}

/* ---- host ---------------------------------------------------------------- */

static void add_host(json_build *b, cJSON *root) {
    cJSON *host = jb_put_obj(b, root, "host");
    if (!host) return;
    struct utsname u;
    if (uname(&u) != 0) memset(&u, 0, sizeof u);
    jb_str_or_null(b, host, "os", u.sysname);
    jb_str_or_null(b, host, "kernel", u.release);
    jb_str_or_null(b, host, "arch", u.machine);
    char cpu[256];
    if (host_cpu_name(cpu, sizeof cpu) != 0) snprintf(cpu, sizeof cpu, "%s", u.machine[0] ? u.machine : "unknown");
    jb_str(b, host, "cpu", cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    jb_num_or_null(b, host, "cores", (double)cores, cores > 0);

    /* A salted hash: enough to tell machines apart, nothing to read the name from
     * (short of guessing it). */
    char name[256 + 16] = "gdnbench:";
    if (gethostname(name + 9, sizeof name - 10) != 0) name[9] = 0;
    name[sizeof name - 1] = 0;
    char hex[65];
    sha256_hex(name, strlen(name), hex);
    hex[16] = 0;
    jb_str(b, host, "hostname_hash", hex);
}

/* ---- record parts -------------------------------------------------------- */

/* The summary figures of a stats block; all null when there are no samples. */
static void add_stats_summary(json_build *b, cJSON *obj, const rec_stats *s) {
    int have = s->n > 0;
    jb_num_or_null(b, obj, "min", s->min, have);
    jb_num_or_null(b, obj, "median", s->median, have);
    jb_num_or_null(b, obj, "mean", s->mean, have);
    jb_num_or_null(b, obj, "p90", s->p90, have);
    jb_num_or_null(b, obj, "max", s->max, have);
    jb_num_or_null(b, obj, "stddev", s->stddev, have);
    jb_num_or_null(b, obj, "cv", s->cv, have);
}

static void add_samples(json_build *b, cJSON *obj, const char *key, const rec_stats *s) {
    cJSON *a = jb_check(b, cJSON_CreateArray());
    for (int i = 0; a && b->ok && i < s->n; i++)
        jb_append(b, a, isfinite(s->samples[i]) ? cJSON_CreateNumber(s->samples[i]) : cJSON_CreateNull());
    jb_put(b, obj, key, a);
}

static void add_device(json_build *b, cJSON *root, const run_record *r) {
    cJSON *d = jb_put_obj(b, root, "device");
    if (!d) return;
    jb_str(b, d, "name", r->device.name);
    jb_str(b, d, "backend", r->device.backend);
    jb_bool(b, d, "emulated", r->device.emulated);
    jb_bool(b, d, "paravirtual", r->device.paravirtual);
    jb_num_or_null(b, d, "gpu_cores", r->device.gpu_cores, r->device.gpu_cores > 0);
    jb_num_or_null(b, d, "bandwidth_gbps", r->device.bandwidth_gbps, r->device.bandwidth_gbps > 0);
    jb_num_or_null(b, d, "fp32_tflops", r->device.fp32_tflops, r->device.fp32_tflops > 0);
    jb_num_or_null(b, d, "fp16_tflops", r->device.fp16_tflops, r->device.fp16_tflops > 0);
    /* Per peak: true = Apple-published, false = derived (src/core/chips.c says how),
     * null = no peak; pct_of_peak_* against a derived peak is an estimate. */
    cJSON *v = jb_put_obj(b, d, "peak_verified");
    if (!v) return;
    jb_put(b, v, "bandwidth_gbps",
             r->device.bandwidth_gbps > 0 && r->device.bandwidth_verified >= 0
                 ? cJSON_CreateBool(r->device.bandwidth_verified)
                 : cJSON_CreateNull());
    jb_put(b, v, "fp32_tflops",
             r->device.fp32_tflops > 0 && r->device.flops_verified >= 0 ? cJSON_CreateBool(r->device.flops_verified)
                                                                          : cJSON_CreateNull());
    jb_put(b, v, "fp16_tflops", r->device.fp16_tflops > 0 ? cJSON_CreateFalse() : cJSON_CreateNull());
}

static void add_bool_or_null(json_build *b, cJSON *obj, const char *key, int v) {
    jb_put(b, obj, key, v < 0 ? cJSON_CreateNull() : cJSON_CreateBool(v != 0));
}

/* The machine's state (machine.h): unknown fields null; marked when a condition
 * that throttles timings held (marks says which). */
static void add_environment(json_build *b, cJSON *root, const run_record *r) {
    cJSON *e = jb_put_obj(b, root, "environment");
    if (!e) return;
    rec_machine unknown = {0};
    const rec_machine *m = r->machine.collected ? &r->machine : &unknown;
    if (!r->machine.collected) {
        unknown.thermal_before = unknown.thermal_after = unknown.low_power = unknown.gpu_cores = -1;
        unknown.nfamilies = unknown.paravirtual = -1;
        unknown.working_set = -1;
    }
    jb_str_or_null(b, e, "macos_version", m->macos_version);
    jb_str_or_null(b, e, "thermal_state_before", machine_thermal_name(m->thermal_before));
    jb_str_or_null(b, e, "thermal_state_after", machine_thermal_name(m->thermal_after));
    add_bool_or_null(b, e, "low_power_mode", m->low_power);
    jb_str_or_null(b, e, "power_source", m->power_source);
    jb_str_or_null(b, e, "gpu_name", m->gpu_name);
    jb_num_or_null(b, e, "gpu_cores", m->gpu_cores, m->gpu_cores > 0);
    if (m->nfamilies < 0) {
        jb_null(b, e, "gpu_families");
    } else {
        cJSON *fam = jb_check(b, cJSON_CreateArray());
        for (int i = 0; fam && i < m->nfamilies && i < REC_MAX_FAMILIES; i++)
            jb_append(b, fam, cJSON_CreateString(m->families[i]));
        jb_put(b, e, "gpu_families", fam);
    }
    jb_num_or_null(b, e, "recommended_max_working_set_bytes", (double)m->working_set, m->working_set > 0);
    add_bool_or_null(b, e, "paravirtual", m->paravirtual);
    char marks[4][80];
    int nmarks = machine_marks(m, marks, 4);
    jb_bool(b, e, "marked", nmarks > 0);
    cJSON *arr = jb_check(b, cJSON_CreateArray());
    for (int i = 0; arr && i < nmarks && i < 4; i++)
        jb_append(b, arr, cJSON_CreateString(marks[i]));
    jb_put(b, e, "marks", arr);
}

static void add_kernel(json_build *b, cJSON *root, const run_record *r) {
    cJSON *k = jb_put_obj(b, root, "kernel");
    if (!k) return;
    jb_str_or_null(b, k, "source", r->kernel.source);
    jb_str_or_null(b, k, "function", r->kernel.function);
    jb_str_or_null(b, k, "sha256", r->kernel.sha256);
    /* Optional (absent in older reports and for the cpu backend): whose kernel ran. */
    if (r->kernel.source[0]) jb_str(b, k, "origin", r->kernel.theirs ? "theirs" : "ours");
    cJSON *consts = jb_check(b, cJSON_CreateArray());
    jb_put(b, k, "constants", consts);
    for (int i = 0; b->ok && i < r->kernel.nconstants && i < REC_MAX_CONSTANTS; i++) {
        cJSON *c = jb_append_obj(b, consts);
        if (!c) break;
        jb_num(b, c, "index", r->kernel.constants[i].index);
        jb_str(b, c, "value", r->kernel.constants[i].value);
    }
    jb_put(b, k, "fast_math",
             r->kernel.fast_math_known ? cJSON_CreateBool(r->kernel.fast_math != 0) : cJSON_CreateNull());
}

static void add_warnings(json_build *b, cJSON *root, const run_record *r) {
    cJSON *arr = jb_check(b, cJSON_CreateArray());
    jb_put(b, root, "warnings", arr);
    for (int i = 0; b->ok && i < r->nwarnings && i < REC_MAX_WARNINGS; i++)
        jb_append(b, arr, cJSON_CreateString(r->warnings[i]));
}

static void add_shape(json_build *b, cJSON *root, const run_record *r) {
    cJSON *s = jb_put_obj(b, root, "shape");
    if (!s || !r->op) return;
    for (int i = 0; i < r->op->ndims && i < OP_MAX_DIMS; i++) jb_num(b, s, r->op->dims[i].name, (double)r->dim[i]);
    cJSON *dt = jb_put_obj(b, s, "dtypes");
    for (int i = 0; dt && i < r->op->nbufs; i++) jb_str(b, dt, r->op->bufs[i].name, dtype_name(r->op->bufs[i].dtype));
}

static void add_launch(json_build *b, cJSON *root, const run_record *r) {
    if (r->nstages <= 0) {
        jb_null(b, root, "launch"); /* cpu backend: no dispatch */
        return;
    }
    cJSON *l = jb_put_obj(b, root, "launch");
    if (!l) return;
    const rec_stage *first = &r->stages[0];
    add_u32x3(b, l, "grid", first->grid);
    add_u32x3(b, l, "threadgroup", first->tg);
    jb_num(b, l, "threadgroup_memory_bytes", first->tgmem_bytes);
    /* Optional keys: records built without the runner (tests, old code) leave them 0. */
    if (r->dispatches > 0) jb_num(b, l, "dispatches", (double)r->dispatches);
    if (r->command_buffers > 0) jb_num(b, l, "command_buffers", (double)r->command_buffers);
    if (r->nstages == 1) return;
    cJSON *stages = jb_check(b, cJSON_CreateArray());
    jb_put(b, l, "stages", stages);
    for (int i = 0; b->ok && i < r->nstages && i < REC_MAX_STAGES; i++) {
        const rec_stage *st = &r->stages[i];
        cJSON *o = jb_append_obj(b, stages);
        if (!o) break;
        jb_str(b, o, "name", st->name);
        jb_str_or_null(b, o, "function", st->function);
        if (st->source[0]) { /* optional: which file, ours or the user's */
            jb_str(b, o, "source", st->source);
            jb_str_or_null(b, o, "sha256", st->sha256);
            jb_str(b, o, "origin", st->theirs ? "theirs" : "ours");
        }
        add_u32x3(b, o, "grid", st->grid);
        add_u32x3(b, o, "threadgroup", st->tg);
        jb_num(b, o, "threadgroup_memory_bytes", st->tgmem_bytes);
        cJSON *t = jb_put_obj(b, o, "timing");
        if (!t) break;
        jb_num(b, t, "n", st->timing.n);
        add_stats_summary(b, t, &st->timing);
    }
}

/* How the number of samples was decided (runner/sampling.h), and the warmup runs'
 * own times: absent from records the runner did not make (and from older reports). */
static void add_sampling(json_build *b, cJSON *t, const run_record *r) {
    add_samples(b, t, "warmup_samples", &r->warmup_timing);
    cJSON *o = jb_put_obj(b, t, "sampling");
    if (!o) return;
    int adaptive = strcmp(r->sampling, "adaptive") == 0;
    jb_str(b, o, "mode", r->sampling);
    jb_str_or_null(b, o, "stop", r->stop);
    jb_bool(b, o, "cold", r->cold);
    jb_num_or_null(b, o, "noise", r->noise, r->noise >= 0);
    jb_num_or_null(b, o, "max_time_s", r->max_time_s, adaptive);
    jb_num_or_null(b, o, "max_noise", r->max_noise, adaptive);
    jb_num_or_null(b, o, "min_samples", r->min_samples, adaptive);
}

static void add_timing(json_build *b, cJSON *root, const run_record *r) {
    cJSON *t = jb_put_obj(b, root, "timing");
    if (!t) return;
    jb_str(b, t, "unit", "us");
    jb_num(b, t, "warmup", r->warmup);
    jb_num(b, t, "iterations", r->iterations);
    add_samples(b, t, "samples", &r->timing);
    add_stats_summary(b, t, &r->timing);
    jb_str_or_null(b, t, "source", r->timing_source);
    jb_str_or_null(b, t, "stage_timing", r->stage_timing);
    if (r->sampling[0]) add_sampling(b, t, r);
    if (r->wall.n <= 0) {
        jb_null(b, t, "wall");
        return;
    }
    cJSON *w = jb_put_obj(b, t, "wall");
    if (!w) return;
    jb_num(b, w, "n", r->wall.n);
    add_stats_summary(b, w, &r->wall);
}

static void add_throughput(json_build *b, cJSON *root, const run_record *r) {
    cJSON *t = jb_put_obj(b, root, "throughput");
    if (!t) return;
    double med = r->timing.median;
    int timed = r->timing.n > 0 && isfinite(med) && med > 0;
    /* bytes / (median us * 1e-6 s) / 1e9 = bytes / median / 1e3 */
    double gbps = timed ? r->bytes / med / 1e3 : 0;
    double tflops = timed ? r->flops / med / 1e6 : 0;
    jb_num(b, t, "bytes", r->bytes);
    jb_num(b, t, "flops", r->flops);
    jb_num_or_null(b, t, "gbps", gbps, timed);
    jb_num_or_null(b, t, "tflops", tflops, timed);
    jb_num_or_null(b, t, "pct_of_peak_bandwidth", 100.0 * gbps / r->device.bandwidth_gbps,
                    timed && r->device.bandwidth_gbps > 0);
    /* The kernels accumulate in f32, so the FP32 peak is the ceiling. */
    jb_num_or_null(b, t, "pct_of_peak_flops", 100.0 * tflops / r->device.fp32_tflops,
                    timed && r->device.fp32_tflops > 0);
}

static void add_checks(json_build *b, cJSON *root, const run_record *r) {
    cJSON *arr = jb_check(b, cJSON_CreateArray());
    jb_put(b, root, "check", arr);
    for (int i = 0; b->ok && i < r->nchecks && i < REC_MAX_CHECKS; i++) {
        const rec_check *c = &r->checks[i];
        cJSON *o = jb_append_obj(b, arr);
        if (!o) break;
        jb_str(b, o, "output", c->output);
        jb_str(b, o, "reference", c->reference);
        jb_num(b, o, "max_abs", c->max_abs);
        jb_num(b, o, "max_rel", c->max_rel);
        jb_num(b, o, "rel_l2", c->rel_l2);
        jb_num_or_null(b, o, "ulp_p99", c->ulp_p99, c->ulp_p99 >= 0);
        jb_num(b, o, "nan", (double)c->nan);
        jb_num(b, o, "inf", (double)c->inf);
        jb_num(b, o, "unwritten", (double)c->unwritten);
        jb_num(b, o, "n_bad", (double)c->n_bad);
        int has_bad = c->first_bad_index >= 0;
        jb_num_or_null(b, o, "first_bad_index", (double)c->first_bad_index, has_bad);
        if (has_bad && c->first_bad_ndim > 0) {
            cJSON *coord = jb_check(b, cJSON_CreateArray());
            for (int d = 0; coord && d < c->first_bad_ndim && d < TENSOR_MAX_DIMS; d++)
                jb_append(b, coord, cJSON_CreateNumber((double)c->first_bad_coord[d]));
            jb_put(b, o, "first_bad_coord", coord);
        } else {
            jb_null(b, o, "first_bad_coord");
        }
        jb_num_or_null(b, o, "first_bad_got", c->first_bad_got, has_bad);
        jb_num_or_null(b, o, "first_bad_want", c->first_bad_want, has_bad);
        jb_num(b, o, "atol", c->atol);
        jb_num(b, o, "rtol", c->rtol);
        jb_num_or_null(b, o, "rel_l2_max", c->rel_l2_max, c->rel_l2_max > 0);
        jb_bool(b, o, "pass", c->pass);
    }
}

/* ---- findings of the device's checks ------------------------------------- */

static void add_int_or_null(json_build *b, cJSON *obj, const char *key, double v, int known) {
    jb_put(b, obj, key, known ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

static cJSON *site_json(json_build *b, const dev_site *s, int with_access) {
    cJSON *o = jb_check(b, cJSON_CreateObject());
    if (!o) return NULL;
    if (with_access) {
        jb_str_or_null(b, o, "access", s->access);
        add_int_or_null(b, o, "size", s->size, s->size > 0);
    }
    jb_str_or_null(b, o, "file", s->file);
    add_int_or_null(b, o, "line", s->line, s->line > 0);
    add_int_or_null(b, o, "column", s->column, s->column > 0);
    jb_str_or_null(b, o, "text", s->text);
    if (with_access) {
        if (s->has_thread) {
            add_u32x3(b, o, "thread", s->thread);
            add_u32x3(b, o, "threadgroup", s->threadgroup);
        } else {
            jb_null(b, o, "thread");
            jb_null(b, o, "threadgroup");
        }
        add_int_or_null(b, o, "thread_index", s->index, s->has_thread);
        add_int_or_null(b, o, "threads_here", s->nthreads, s->nthreads > 0);
    }
    return o;
}

static cJSON *finding_json(json_build *b, const dev_finding *f) {
    cJSON *o = jb_check(b, cJSON_CreateObject());
    if (!o) return NULL;
    jb_str(b, o, "kind", dev_finding_kind_name(f->kind));
    jb_str(b, o, "kernel", f->kernel);
    jb_str_or_null(b, o, "memory", f->memory);
    add_int_or_null(b, o, "buffer", f->buffer, f->buffer >= 0);
    jb_str_or_null(b, o, "variable", f->variable);
    add_int_or_null(b, o, "variable_line", f->variable_line, f->variable_line > 0);
    if (f->has_range) {
        cJSON *r = jb_put_obj(b, o, "bytes");
        if (r) {
            jb_num(b, r, "first", (double)f->offset_lo);
            jb_num(b, r, "last", (double)(f->offset_hi - 1));
        }
    } else {
        jb_null(b, o, "bytes");
    }
    add_int_or_null(b, o, "length", (double)f->length, f->length > 0);
    jb_str_or_null(b, o, "detail", f->detail);
    cJSON *sites = jb_check(b, cJSON_CreateArray());
    for (int i = 0; sites && i < f->nsites && i < 2; i++) jb_append(b, sites, site_json(b, &f->site[i], 1));
    jb_put(b, o, "sites", sites);
    if (f->has_interval) {
        cJSON *iv = jb_put_obj(b, o, "barriers");
        for (int i = 0; iv && i < 2; i++) {
            const char *key = i == 0 ? "opening" : "closing";
            if (f->barrier[i].line > 0) jb_put(b, iv, key, site_json(b, &f->barrier[i], 0));
            else jb_null(b, iv, key);
        }
    } else {
        jb_null(b, o, "barriers");
    }
    jb_num(b, o, "occurrences", (double)f->occurrences);
    jb_num(b, o, "threads", (double)f->threads);
    jb_num(b, o, "threadgroups", (double)f->threadgroups);
    char line[1500];
    dev_finding_summary(f, line, sizeof line);
    jb_str(b, o, "summary", line);
    return o;
}

cJSON *report_findings_json(const dev_finding *list, int n) {
    json_build b = {1};
    cJSON *a = cJSON_CreateArray();
    if (!a) return NULL;
    for (int i = 0; i < n; i++) jb_append(&b, a, finding_json(&b, &list[i]));
    if (!b.ok) {
        cJSON_Delete(a);
        return NULL;
    }
    return a;
}

/* Appends the ", "-separated names of list to arr as strings. */
static void add_name_list(json_build *b, cJSON *arr, const char *list) {
    for (const char *p = list; b->ok && p && *p;) {
        size_t l = strcspn(p, ",");
        char one[128];
        snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one - 1 ? l : sizeof one - 1), p);
        jb_append(b, arr, cJSON_CreateString(one));
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
}

/* Optional "fixture" (only for --fixture runs): the file, tensors converted into the
 * kernel's dtypes, tensors bound to nothing, dimensions the file did not fix. */
static void add_fixture(json_build *b, cJSON *root, const run_record *r) {
    const rec_fixture *fx = &r->fixture;
    if (!fx->path[0]) return;
    cJSON *o = jb_put_obj(b, root, "fixture");
    if (!o) return;
    jb_str(b, o, "path", fx->path);
    jb_str_or_null(b, o, "format", fx->format);
    cJSON *conv = jb_check(b, cJSON_CreateArray());
    jb_put(b, o, "converted", conv);
    for (int i = 0; b->ok && i < fx->nconverted && i < OP_MAX_BUFS; i++) {
        cJSON *c = jb_append_obj(b, conv);
        if (!c) break;
        jb_str(b, c, "tensor", fx->converted[i].tensor);
        jb_str(b, c, "buffer", fx->converted[i].buffer);
        jb_str(b, c, "from", fx->converted[i].from);
        jb_str(b, c, "to", fx->converted[i].to);
        jb_str(b, c, "rounding", strcmp(fx->converted[i].to, "bf16") == 0 ? "nearest-even" : "exact");
    }
    cJSON *ign = jb_check(b, cJSON_CreateArray());
    jb_put(b, o, "ignored", ign);
    if (ign) add_name_list(b, ign, fx->ignored);
    cJSON *unf = jb_check(b, cJSON_CreateArray());
    jb_put(b, o, "unfixed", unf);
    if (unf) add_name_list(b, unf, fx->unfixed);
}

/* Outputs not checked against a reference because they are that reference (the cpu
 * backend's output is bf16-parity): written only when there are some, so records of
 * other backends are unchanged. */
static void add_not_checked(json_build *b, cJSON *root, const run_record *r) {
    if (r->nself <= 0) return;
    cJSON *arr = jb_check(b, cJSON_CreateArray());
    jb_put(b, root, "not_checked", arr);
    for (int i = 0; b->ok && i < r->nself && i < REC_MAX_CHECKS; i++) {
        cJSON *o = jb_append_obj(b, arr);
        if (!o) break;
        jb_str(b, o, "output", r->self_refs[i].output);
        jb_str(b, o, "reference", r->self_refs[i].reference);
        jb_str(b, o, "reason", "self");
        jb_str(b, o, "note", "self, not a check: the backend's output is this reference");
    }
}

/* "case": a kernel case's name, files' digests and each buffer's binding. */
static void add_case(json_build *b, cJSON *root, const run_record *r) {
    const rec_case *k = &r->kcase;
    if (!k->present) return;
    cJSON *o = jb_put_obj(b, root, "case");
    if (!o) return;
    jb_str(b, o, "name", k->name);
    jb_str(b, o, "file", k->file);
    jb_str_or_null(b, o, "source_sha256", k->source_sha256);
    jb_str_or_null(b, o, "case_sha256", k->case_sha256);
    cJSON *arr = jb_put_array(b, o, "buffers");
    for (int i = 0; arr && b->ok && i < k->nbuffers && i < REC_MAX_CASE_BUFFERS; i++) {
        cJSON *x = jb_append_obj(b, arr);
        if (!x) break;
        jb_str(b, x, "name", k->buffers[i].name);
        jb_num(b, x, "index", k->buffers[i].index);
        jb_str(b, x, "dtype", k->buffers[i].dtype);
        jb_num(b, x, "elements", (double)k->buffers[i].elements);
        jb_bool(b, x, "writable", k->buffers[i].writable);
        jb_bool(b, x, "readonly", k->buffers[i].readonly);
    }
}

/* "compile": what compiling the case's kernels cost on the software device, by
 * kind of variant and phase (seconds; null where clang did not say). */
static void add_compile(json_build *b, cJSON *root, const run_record *r) {
    const rec_compile *c = &r->compile;
    if (!c->present) {
        jb_null(b, root, "compile");
        return;
    }
    cJSON *o = jb_put_obj(b, root, "compile");
    if (!o) return;
    jb_num(b, o, "wall_s", c->wall_s);
    cJSON *ph = jb_put_obj(b, o, "phases");
    for (int i = 0; ph && b->ok && i < c->nkinds && i < REC_MAX_COMPILE_KINDS; i++) {
        const rec_compile_kind *k = &c->kinds[i];
        cJSON *x = jb_put_obj(b, ph, k->kind);
        if (!x) break;
        jb_num(b, x, "compiles", k->compiles);
        jb_num(b, x, "cached", k->cached);
        jb_num(b, x, "prepasses", k->prepasses);
        jb_num(b, x, "prepass_s", k->prepass_s);
        jb_num_or_null(b, x, "frontend_s", k->frontend_s, k->frontend_s >= 0);
        jb_num_or_null(b, x, "optimise_s", k->optimise_s, k->optimise_s >= 0);
        jb_num_or_null(b, x, "codegen_s", k->codegen_s, k->codegen_s >= 0);
        jb_num_or_null(b, x, "link_s", k->link_s, k->link_s >= 0);
        jb_num(b, x, "wall_s", k->wall_s);
    }
}

cJSON *report_record_json(const run_record *r) {
    json_build b = {1};
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    jb_num(&b, root, "schema", REPORT_SCHEMA_VERSION);

    cJSON *tool = jb_put_obj(&b, root, "tool");
    if (tool) {
        jb_str(&b, tool, "name", "gdnbench");
        jb_str(&b, tool, "version", gdnbench_version);
        jb_str_or_null(&b, tool, "git_sha", gdnbench_git_sha);
    }
    add_host(&b, root);
    add_device(&b, root, r);
    add_environment(&b, root, r);
    jb_str_or_null(&b, root, "op", r->op ? r->op->name : NULL);
    add_kernel(&b, root, r);
    jb_num(&b, root, "seed", (double)r->seed);
    add_shape(&b, root, r);
    add_launch(&b, root, r);
    add_timing(&b, root, r);
    add_throughput(&b, root, r);
    add_checks(&b, root, r);
    add_not_checked(&b, root, r);
    if (r->determinism_runs > 0) {
        cJSON *d = jb_put_obj(&b, root, "determinism");
        if (d) {
            jb_num(&b, d, "runs", r->determinism_runs);
            jb_bool(&b, d, "bitwise_identical", r->bitwise_identical);
        }
    } else {
        jb_null(&b, root, "determinism");
    }
    add_warnings(&b, root, r);
    add_fixture(&b, root, r);
    add_case(&b, root, r);
    add_compile(&b, root, r);
    report_add_counters(&b, root, r);
    jb_str(&b, root, "status", run_status_name(r->status));
    jb_str_or_null(&b, root, "error", r->error);
    jb_put(&b, root, "findings", r->device_checks ? report_findings_json(r->findings, r->nfindings) : cJSON_CreateNull());
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int report_write(const char *path, run_record *const *recs, int n, char *err, size_t errlen) {
    cJSON *doc = NULL;
    if (n == 1) {
        doc = report_record_json(recs[0]);
    } else {
        doc = cJSON_CreateArray();
        for (int i = 0; doc && i < n; i++) {
            cJSON *o = report_record_json(recs[i]);
            if (!o || !cJSON_AddItemToArray(doc, o)) {
                cJSON_Delete(o);
                cJSON_Delete(doc);
                doc = NULL;
            }
        }
    }
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "out of memory while writing the JSON report to %s", path);
        return -1;
    }

    int rc = 0;
    if (strcmp(path, "-") == 0) {
        if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
            snprintf(err, errlen, "--json -: cannot write to stdout: %s", strerror(errno));
            rc = -1;
        }
        free(text);
        return rc;
    }

    size_t plen = strlen(path) + 5;
    char *tmp = malloc(plen);
    if (!tmp) {
        free(text);
        snprintf(err, errlen, "out of memory while writing the JSON report to %s", path);
        return -1;
    }
    snprintf(tmp, plen, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "--json %s: cannot create %s: %s", path, tmp, strerror(errno));
        rc = -1;
    } else {
        int bad = fputs(text, f) == EOF || fputc('\n', f) == EOF;
        if (fclose(f) != 0) bad = 1;
        if (bad) {
            snprintf(err, errlen, "--json %s: write failed: %s", path, strerror(errno));
            rc = -1;
        } else if (rename(tmp, path) != 0) {
            snprintf(err, errlen, "--json %s: cannot replace the file: %s", path, strerror(errno));
            rc = -1;
        }
        if (rc) remove(tmp);
    }
    free(tmp);
    free(text);
    return rc;
}
