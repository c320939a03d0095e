/* report_gbench.c — Google Benchmark JSON writer (see report_gbench.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/sha256.h"
#include "core/version.h"
#include "report/json_build.h"
#include "report/report_gbench.h"

static cJSON *context_json(json_build *b) {
    cJSON *c = jb_check(b, cJSON_CreateObject());
    if (!c) return NULL;
    char date[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm)) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", &tm);
    char host[256 + 16] = "gdnbench:", hex[65];
    if (gethostname(host + 9, sizeof host - 10) != 0) host[9] = 0;
    host[sizeof host - 1] = 0;
    sha256_hex(host, strlen(host), hex);
    hex[16] = 0;
    double load[3] = {0, 0, 0};
    int nload = getloadavg(load, 3);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    jb_str(b, c, "date", date);
    jb_str(b, c, "host_name", hex); /* hashed like host.hostname_hash */
    jb_str(b, c, "executable", "gdnbench");
    jb_num(b, c, "num_cpus", cpus > 0 ? (double)cpus : 0);
    jb_num(b, c, "mhz_per_cpu", 0); /* not measured */
    jb_bool(b, c, "cpu_scaling_enabled", 0);
    jb_put_array(b, c, "caches");
    cJSON *la = jb_put_array(b, c, "load_avg");
    for (int i = 0; la && i < nload; i++) jb_append(b, la, cJSON_CreateNumber(load[i]));
    jb_str(b, c, "library_build_type", "release");
    jb_str(b, c, "gdnbench_version", gdnbench_version);
    return c;
}

static void bench_name(const run_record *r, char *out, size_t n) {
    int len = snprintf(out, n, "%s/%s", r->op ? r->op->name : "?", r->kernel.function[0] ? r->kernel.function : "cpu");
    for (int i = 0; r->op && i < r->op->ndims && len > 0 && (size_t)len < n; i++)
        len += snprintf(out + len, n - (size_t)len, "/%s:%lld", r->op->dims[i].name, (long long)r->dim[i]);
    if (len > 0 && (size_t)len < n) snprintf(out + len, n - (size_t)len, "/%s", r->device.backend);
}

/* One benchmark entry with the fields every gbench entry has, at the end of benchmarks. */
static cJSON *entry(json_build *b, cJSON *benchmarks, const char *name, const char *run_name, int family,
                    const char *run_type, int repetitions, int repetition_index, double iterations, double real_us,
                    double cpu_us, const run_record *r) {
    cJSON *e = jb_append_obj(b, benchmarks);
    if (!e) return NULL;
    char label[192];
    /* Google Benchmark's format has no place for warnings: the label carries it. */
    snprintf(label, sizeof label, "%s (%s%s)", r->device.name, r->device.backend,
             r->device.paravirtual ? "; paravirtual device: not an Apple GPU's timings" : "");
    jb_str(b, e, "name", name);
    jb_num(b, e, "family_index", family);
    jb_num(b, e, "per_family_instance_index", 0);
    jb_str(b, e, "run_name", run_name);
    jb_str(b, e, "run_type", run_type);
    jb_num(b, e, "repetitions", repetitions);
    jb_num(b, e, "repetition_index", repetition_index);
    jb_num(b, e, "threads", 1);
    jb_num(b, e, "iterations", iterations);
    jb_num(b, e, "real_time", real_us);
    jb_num(b, e, "cpu_time", cpu_us);
    jb_str(b, e, "time_unit", "us");
    jb_str(b, e, "label", label);
    if (real_us > 0 && isfinite(real_us)) {
        jb_num(b, e, "bytes_per_second", r->bytes / (real_us * 1e-6));
        jb_num(b, e, "items_per_second", r->flops / (real_us * 1e-6));
    }
    jb_num(b, e, "bytes", r->bytes);
    jb_num(b, e, "flops", r->flops);
    return b->ok ? e : NULL;
}

static int add_record(json_build *b, cJSON *benchmarks, const run_record *r, int family) {
    char name[512], agg[600];
    bench_name(r, name, sizeof name);
    const rec_stats *t = &r->timing;
    if (r->status == RUN_ERROR || t->n <= 0) {
        cJSON *e = entry(b, benchmarks, name, name, family, "iteration", 1, 0, 0, 0, 0, r);
        if (!e) return -1;
        jb_bool(b, e, "error_occurred", 1);
        jb_str(b, e, "error_message", r->error[0] ? r->error : "not timed");
        return b->ok ? 0 : -1;
    }
    int wall_per_sample = r->wall.n == t->n && r->wall.samples;
    for (int i = 0; i < t->n; i++) {
        double cpu = wall_per_sample ? r->wall.samples[i] : t->samples[i];
        if (!entry(b, benchmarks, name, name, family, "iteration", t->n, i, 1, t->samples[i], cpu, r)) return -1;
    }
    const rec_stats *w = r->wall.n > 0 ? &r->wall : t;
    struct {
        const char *suffix;
        double real, cpu;
        const char *unit;
    } aggs[4] = {
        {"mean", t->mean, w->mean, "time"},
        {"median", t->median, w->median, "time"},
        {"stddev", t->stddev, w->stddev, "time"},
        {"cv", t->cv, w->cv, "percentage"},
    };
    for (int a = 0; a < 4; a++) {
        snprintf(agg, sizeof agg, "%s_%s", name, aggs[a].suffix);
        cJSON *e = entry(b, benchmarks, agg, name, family, "aggregate", t->n, 0, t->n, aggs[a].real, aggs[a].cpu, r);
        if (!e) return -1;
        if (strcmp(aggs[a].suffix, "stddev") == 0 || strcmp(aggs[a].suffix, "cv") == 0) {
            /* throughput of a spread is meaningless */
            cJSON_DeleteItemFromObject(e, "bytes_per_second");
            cJSON_DeleteItemFromObject(e, "items_per_second");
        }
        jb_str(b, e, "aggregate_name", aggs[a].suffix);
        jb_str(b, e, "aggregate_unit", aggs[a].unit);
        if (a == 1 && t->median > 0) {
            double gbps = r->bytes / t->median / 1e3;
            jb_num(b, e, "gbps", gbps);
            jb_num(b, e, "tflops", r->flops / t->median / 1e6);
            if (r->device.bandwidth_gbps > 0) jb_num(b, e, "pct_of_peak_bandwidth", 100 * gbps / r->device.bandwidth_gbps);
        }
        if (!b->ok) return -1;
    }
    return 0;
}

cJSON *report_gbench_json(run_record *const *recs, int n) {
    json_build b = {1};
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    jb_put(&b, root, "context", context_json(&b));
    cJSON *benchmarks = jb_put_array(&b, root, "benchmarks");
    for (int i = 0; benchmarks && i < n; i++)
        if (add_record(&b, benchmarks, recs[i], i)) break;
    if (!b.ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int report_gbench_write(const char *path, run_record *const *recs, int n, char *err, size_t errlen) {
    cJSON *doc = report_gbench_json(recs, n);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "out of memory writing the gbench report to %s", path);
        return -1;
    }
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        free(text);
        return -1;
    }
    int bad = fputs(text, f) == EOF || fputc('\n', f) == EOF;
    if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) bad = 1;
    free(text);
    if (bad) {
        snprintf(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}
