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
#include "report/report_gbench.h"

static int add_num(cJSON *o, const char *k, double v) {
    return cJSON_AddItemToObject(o, k, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull()) ? 0 : -1;
}

static cJSON *context_json(void) {
    cJSON *c = cJSON_CreateObject();
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

    cJSON_AddStringToObject(c, "date", date);
    cJSON_AddStringToObject(c, "host_name", hex); /* hashed like host.hostname_hash */
    cJSON_AddStringToObject(c, "executable", "gdnbench");
    cJSON_AddNumberToObject(c, "num_cpus", cpus > 0 ? (double)cpus : 0);
    cJSON_AddNumberToObject(c, "mhz_per_cpu", 0); /* not measured */
    cJSON_AddBoolToObject(c, "cpu_scaling_enabled", 0);
    cJSON_AddItemToObject(c, "caches", cJSON_CreateArray());
    cJSON *la = cJSON_AddArrayToObject(c, "load_avg");
    for (int i = 0; la && i < nload; i++) cJSON_AddItemToArray(la, cJSON_CreateNumber(load[i]));
    cJSON_AddStringToObject(c, "library_build_type", "release");
    cJSON_AddStringToObject(c, "gdnbench_version", gdnbench_version);
    return c;
}

static void bench_name(const run_record *r, char *out, size_t n) {
    int len = snprintf(out, n, "%s/%s", r->op ? r->op->name : "?", r->kernel.function[0] ? r->kernel.function : "cpu");
    for (int i = 0; r->op && i < r->op->ndims && len > 0 && (size_t)len < n; i++)
        len += snprintf(out + len, n - (size_t)len, "/%s:%lld", r->op->dims[i].name, (long long)r->dim[i]);
    if (len > 0 && (size_t)len < n) snprintf(out + len, n - (size_t)len, "/%s", r->device.backend);
}

/* One benchmark entry with the fields every gbench entry has. */
static cJSON *entry(const char *name, const char *run_name, int family, const char *run_type, int repetitions,
                    int repetition_index, double iterations, double real_us, double cpu_us, const run_record *r) {
    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    char label[192];
    /* Google Benchmark's format has no place for warnings: the label carries it. */
    snprintf(label, sizeof label, "%s (%s%s)", r->device.name, r->device.backend,
             r->device.paravirtual ? "; paravirtual device: not an Apple GPU's timings" : "");
    int bad = 0;
    bad |= !cJSON_AddStringToObject(e, "name", name);
    bad |= !cJSON_AddNumberToObject(e, "family_index", family);
    bad |= !cJSON_AddNumberToObject(e, "per_family_instance_index", 0);
    bad |= !cJSON_AddStringToObject(e, "run_name", run_name);
    bad |= !cJSON_AddStringToObject(e, "run_type", run_type);
    bad |= !cJSON_AddNumberToObject(e, "repetitions", repetitions);
    bad |= !cJSON_AddNumberToObject(e, "repetition_index", repetition_index);
    bad |= !cJSON_AddNumberToObject(e, "threads", 1);
    bad |= !cJSON_AddNumberToObject(e, "iterations", iterations);
    bad |= add_num(e, "real_time", real_us) != 0;
    bad |= add_num(e, "cpu_time", cpu_us) != 0;
    bad |= !cJSON_AddStringToObject(e, "time_unit", "us");
    bad |= !cJSON_AddStringToObject(e, "label", label);
    if (real_us > 0 && isfinite(real_us)) {
        bad |= add_num(e, "bytes_per_second", r->bytes / (real_us * 1e-6)) != 0;
        bad |= add_num(e, "items_per_second", r->flops / (real_us * 1e-6)) != 0;
    }
    bad |= add_num(e, "bytes", r->bytes) != 0;
    bad |= add_num(e, "flops", r->flops) != 0;
    if (bad) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

static int push(cJSON *arr, cJSON *e) {
    if (!e) return -1;
    if (!cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return -1;
    }
    return 0;
}

static int add_record(cJSON *benchmarks, const run_record *r, int family) {
    char name[512], agg[600];
    bench_name(r, name, sizeof name);
    const rec_stats *t = &r->timing;
    if (r->status == RUN_ERROR || t->n <= 0) {
        cJSON *e = entry(name, name, family, "iteration", 1, 0, 0, 0, 0, r);
        if (!e) return -1;
        cJSON_AddBoolToObject(e, "error_occurred", 1);
        cJSON_AddStringToObject(e, "error_message", r->error[0] ? r->error : "not timed");
        return push(benchmarks, e);
    }
    int wall_per_sample = r->wall.n == t->n && r->wall.samples;
    for (int i = 0; i < t->n; i++) {
        double cpu = wall_per_sample ? r->wall.samples[i] : t->samples[i];
        if (push(benchmarks, entry(name, name, family, "iteration", t->n, i, 1, t->samples[i], cpu, r))) return -1;
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
        cJSON *e = entry(agg, name, family, "aggregate", t->n, 0, t->n, aggs[a].real, aggs[a].cpu, r);
        if (!e) return -1;
        if (strcmp(aggs[a].suffix, "stddev") == 0 || strcmp(aggs[a].suffix, "cv") == 0) {
            /* throughput of a spread is meaningless */
            cJSON_DeleteItemFromObject(e, "bytes_per_second");
            cJSON_DeleteItemFromObject(e, "items_per_second");
        }
        cJSON_AddStringToObject(e, "aggregate_name", aggs[a].suffix);
        cJSON_AddStringToObject(e, "aggregate_unit", aggs[a].unit);
        if (a == 1 && t->median > 0) {
            double gbps = r->bytes / t->median / 1e3;
            add_num(e, "gbps", gbps);
            add_num(e, "tflops", r->flops / t->median / 1e6);
            if (r->device.bandwidth_gbps > 0) add_num(e, "pct_of_peak_bandwidth", 100 * gbps / r->device.bandwidth_gbps);
        }
        if (push(benchmarks, e)) return -1;
    }
    return 0;
}

cJSON *report_gbench_json(run_record *const *recs, int n) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON *ctx = context_json();
    if (!ctx) {
        cJSON_Delete(root);
        return NULL;
    }
    if (!cJSON_AddItemToObject(root, "context", ctx)) {
        cJSON_Delete(ctx);
        cJSON_Delete(root);
        return NULL;
    }
    cJSON *benchmarks = cJSON_AddArrayToObject(root, "benchmarks");
    for (int i = 0; benchmarks && i < n; i++) {
        if (add_record(benchmarks, recs[i], i)) {
            benchmarks = NULL;
            break;
        }
    }
    if (!benchmarks) {
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
