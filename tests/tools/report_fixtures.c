/* report_fixtures.c — `gdnbench-testdata reports`: synthetic gdnbench JSON reports
 * (schema 1) for the CLI tests of `compare` and `report`.
 *
 *   gdnbench-testdata reports OUT.json SPEC [SPEC...]
 *   gdnbench-testdata reports - < LINES      (each line: OUT.json|SPEC|SPEC...)
 *
 * Each SPEC is comma-separated key=value pairs describing one record:
 *   op, fn (kernel function), sha (repeated 64 times: one hex digit), T (shape dim),
 *   dev (device name), backend, emulated (0/1), bw (peak GB/s or 'null'), median (us),
 *   spread (us: samples are median + spread * z for fixed z), n (samples), status,
 *   schema, cores (GPU cores), bwok (1/0: device.peak_verified's bandwidth flag; left
 *   out, the record has no peak_verified, as older reports); the machine state
 *   (`environment`, written only when one of these is given, as a report from before
 *   it existed has none): thermal (before and after the runs), thermal_after, power
 *   (ac/battery/null), lowpower (0/1/null); counters (a file holding a `counters`
 *   object, spliced in as the record's `counters`, or `null`: `counters: null` with
 *   the `counters_unavailable` a backend that cannot count writes; left out, the
 *   record has neither key, as a run without --counters).  An unknown key is an error.
 * Samples are deterministic: z are the n evenly spaced normal quantiles
 * Phi^-1((i + 0.5) / n), interleaved (even i, then odd i) so the measured order is not
 * sorted, each sample rounded to 6 decimals; the sample median is exactly `median`
 * (n odd) and the spread is controlled.  One SPEC writes an object, several an array.
 *
 * The timing figures are computed as the reports' readers see them, not as
 * src/core/stats.c does (p90 here is the lower order statistic at 0.9*(n-1)): this
 * keeps the fixtures the same as those the tests were written against. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tools/normal_quantile.h"
#include "tools/testdata.h"

enum {
    K_OP, K_FN, K_SHA, K_T, K_DEV, K_BACKEND, K_EMULATED, K_BW, K_MEDIAN, K_SPREAD, K_N, K_STATUS, K_SCHEMA,
    K_CORES, K_BWOK, K_THERMAL, K_THERMAL_AFTER, K_POWER, K_LOWPOWER, K_COUNTERS, NKEYS
};

/* Defaults; NULL: absent unless given. */
static const struct {
    const char *name, *def;
} spec_keys[NKEYS] = {
    [K_OP] = {"op", "cumsum"},
    [K_FN] = {"fn", "chunk_local_cumsum_g_f32"},
    [K_SHA] = {"sha", "a"},
    [K_T] = {"T", "4096"},
    [K_DEV] = {"dev", "Apple M4 Max"},
    [K_BACKEND] = {"backend", "metal"},
    [K_EMULATED] = {"emulated", "0"},
    [K_BW] = {"bw", "546"},
    [K_MEDIAN] = {"median", "100"},
    [K_SPREAD] = {"spread", "1"},
    [K_N] = {"n", "21"},
    [K_STATUS] = {"status", "pass"},
    [K_SCHEMA] = {"schema", "1"},
    [K_CORES] = {"cores", "40"},
    [K_BWOK] = {"bwok", NULL},
    [K_THERMAL] = {"thermal", NULL},
    [K_THERMAL_AFTER] = {"thermal_after", NULL},
    [K_POWER] = {"power", NULL},
    [K_LOWPOWER] = {"lowpower", NULL},
    [K_COUNTERS] = {"counters", NULL},
};

#define ERRLEN 512

typedef struct report_spec {
    const char *v[NKEYS]; /* into buf, or the defaults */
    char *buf;            /* owned copy of the SPEC text */
} report_spec;

static int spec_parse(report_spec *s, const char *text, char *err) {
    for (int k = 0; k < NKEYS; k++) s->v[k] = spec_keys[k].def;
    s->buf = strdup(text);
    if (!s->buf) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (char *kv = s->buf, *next; kv; kv = next) {
        next = strchr(kv, ',');
        if (next) *next++ = 0;
        if (!*kv) continue;
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, ERRLEN, "SPEC '%s': '%s' is not key=value", text, kv);
            return -1;
        }
        *eq = 0;
        int k = 0;
        while (k < NKEYS && strcmp(spec_keys[k].name, kv) != 0) k++;
        if (k == NKEYS) {
            snprintf(err, ERRLEN, "SPEC '%s': unknown key '%s' (keys: op fn sha T dev backend emulated bw median "
                     "spread n status schema cores bwok thermal thermal_after power lowpower)", text, kv);
            return -1;
        }
        s->v[k] = eq + 1;
    }
    return 0;
}

static int spec_int(const report_spec *s, int k, long long *out, char *err) {
    const char *t = s->v[k];
    char *end;
    errno = 0;
    long long x = strtoll(t, &end, 10);
    if (!*t || *end || errno) {
        snprintf(err, ERRLEN, "%s=%s is not an integer", spec_keys[k].name, t);
        return -1;
    }
    *out = x;
    return 0;
}

static int spec_double(const report_spec *s, int k, double *out, char *err) {
    const char *t = s->v[k];
    char *end;
    double x = strtod(t, &end);
    if (!*t || *end) {
        snprintf(err, ERRLEN, "%s=%s is not a number", spec_keys[k].name, t);
        return -1;
    }
    *out = x;
    return 0;
}

/* x rounded to 6 decimals, correctly (the exact binary value rounded half-even), as
 * Python's round(x, 6) does: printf is exact on glibc and on Apple's libc. */
static double round6(double x) {
    char text[512];
    snprintf(text, sizeof text, "%.6f", x);
    return strtod(text, NULL);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Neumaier-compensated sum: within an ulp or so of Python's math.fsum. */
static double sum_compensated(const double *x, long long n) {
    double s = 0, c = 0;
    for (long long i = 0; i < n; i++) {
        double t = s + x[i];
        c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

/* A number printed with the fewest digits that read back exactly (cJSON's own printer
 * settles for 15 digits within an ulp), so the fixtures hold exactly the values made. */
static cJSON *json_number(double x) {
    if (!isfinite(x)) return cJSON_CreateNull();
    char text[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x) break;
    }
    return cJSON_CreateRaw(text);
}

static cJSON *json_or_null(int present, double x) { return present ? json_number(x) : cJSON_CreateNull(); }

static void add_number(cJSON *o, const char *key, double x) { cJSON_AddItemToObject(o, key, json_number(x)); }

/* The "timing" object; NULL when out of memory or the figures have no value. */
static cJSON *timing_object(const double *samples, long long n, double *median_out, char *err) {
    cJSON *t = cJSON_CreateObject();
    double *sorted = n ? malloc((size_t)n * sizeof *sorted) : NULL;
    if (!t || (n && !sorted)) {
        snprintf(err, ERRLEN, "out of memory");
        cJSON_Delete(t);
        free(sorted);
        return NULL;
    }
    double median = 0, mean = 0, stddev = 0;
    if (n) {
        memcpy(sorted, samples, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
        median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        mean = sum_compensated(samples, n) / (double)n;
        if (n > 1) {
            double *dev2 = malloc((size_t)n * sizeof *dev2);
            if (!dev2) {
                snprintf(err, ERRLEN, "out of memory");
                cJSON_Delete(t);
                free(sorted);
                return NULL;
            }
            for (long long i = 0; i < n; i++) dev2[i] = (samples[i] - mean) * (samples[i] - mean);
            stddev = sqrt(sum_compensated(dev2, n) / (double)(n - 1));
            free(dev2);
        }
        if (mean == 0) {
            snprintf(err, ERRLEN, "the samples' mean is 0, so cv = stddev/mean has no value: choose another median");
            cJSON_Delete(t);
            free(sorted);
            return NULL;
        }
    }
    cJSON_AddStringToObject(t, "unit", "us");
    add_number(t, "warmup", 2);
    add_number(t, "iterations", (double)n);
    cJSON *arr = cJSON_AddArrayToObject(t, "samples");
    for (long long i = 0; arr && i < n; i++) cJSON_AddItemToArray(arr, json_number(samples[i]));
    cJSON_AddItemToObject(t, "min", json_or_null(n > 0, n ? sorted[0] : 0));
    cJSON_AddItemToObject(t, "median", json_or_null(n > 0, median));
    cJSON_AddItemToObject(t, "mean", json_or_null(n > 0, mean));
    cJSON_AddItemToObject(t, "p90", json_or_null(n > 0, n ? sorted[(long long)(0.9 * (double)(n - 1))] : 0));
    cJSON_AddItemToObject(t, "max", json_or_null(n > 0, n ? sorted[n - 1] : 0));
    cJSON_AddItemToObject(t, "stddev", json_or_null(n > 0, stddev));
    cJSON_AddItemToObject(t, "cv", json_or_null(n > 0, n ? stddev / mean : 0));
    cJSON_AddStringToObject(t, "source", "gpu");
    cJSON_AddNullToObject(t, "wall");
    free(sorted);
    *median_out = median;
    return t;
}

static void add_string_or_null(cJSON *o, const char *key, const char *s) {
    if (s) cJSON_AddStringToObject(o, key, s);
    else cJSON_AddNullToObject(o, key);
}

/* A given value, NULL for 'null' or not given. */
static const char *state_value(const report_spec *s, int k) {
    return s->v[k] && strcmp(s->v[k], "null") != 0 ? s->v[k] : NULL;
}

/* The "environment" object (machine state): marked when hot, in Low Power Mode or
 * on battery, the way src/runner's machine probe marks a real one. */
static cJSON *environment_object(const report_spec *s) {
    const char *before = state_value(s, K_THERMAL);
    const char *after = s->v[K_THERMAL_AFTER] ? state_value(s, K_THERMAL_AFTER) : before;
    const char *low = state_value(s, K_LOWPOWER), *power = state_value(s, K_POWER);
    int low_on = low && strcmp(low, "1") == 0;
    /* An empty value counts as unknown, as it is falsy in the Python original. */
    int hot_before = before && *before && strcmp(before, "nominal") != 0;
    int hot_after = after && *after && strcmp(after, "nominal") != 0;

    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    cJSON_AddStringToObject(e, "macos_version", "15.1");
    add_string_or_null(e, "thermal_state_before", before);
    add_string_or_null(e, "thermal_state_after", after);
    if (low) cJSON_AddBoolToObject(e, "low_power_mode", low_on);
    else cJSON_AddNullToObject(e, "low_power_mode");
    add_string_or_null(e, "power_source", power);
    cJSON_AddStringToObject(e, "gpu_name", s->v[K_DEV]);
    add_number(e, "gpu_cores", 40);
    const char *families[] = {"Apple7", "Apple8", "Apple9", "Metal3"};
    cJSON_AddItemToObject(e, "gpu_families", cJSON_CreateStringArray(families, 4));
    add_number(e, "recommended_max_working_set_bytes", 40000000000.0);
    cJSON_AddFalseToObject(e, "paravirtual");
    cJSON *marks = cJSON_CreateArray();
    if (hot_before || hot_after) {
        char text[600];
        snprintf(text, sizeof text, "thermal state %s before, %s after the runs", before && *before ? before : "unknown",
                 after && *after ? after : "unknown");
        cJSON_AddItemToArray(marks, cJSON_CreateString(text));
    }
    if (low_on) cJSON_AddItemToArray(marks, cJSON_CreateString("Low Power Mode on"));
    if (power && strcmp(power, "battery") == 0) cJSON_AddItemToArray(marks, cJSON_CreateString("on battery power"));
    cJSON_AddBoolToObject(e, "marked", cJSON_GetArraySize(marks) > 0);
    cJSON_AddItemToObject(e, "marks", marks);
    return e;
}

static cJSON *int_array3(long long a, long long b, long long c) {
    cJSON *arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, json_number((double)a));
    cJSON_AddItemToArray(arr, json_number((double)b));
    cJSON_AddItemToArray(arr, json_number((double)c));
    return arr;
}

static long long floor_div(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* One record from SPEC text; NULL with err set on bad input. */
/* The record's `counters` from spec value v (a file, or "null"): 0, or -1 with err. */
static int add_counters(cJSON *rec, const char *v, char *err) {
    if (strcmp(v, "null") == 0) {
        cJSON_AddNullToObject(rec, "counters");
        cJSON_AddStringToObject(rec, "counters_unavailable",
                                "the metal backend cannot count: Metal exposes no per-access counters to a program");
        return 0;
    }
    FILE *f = fopen(v, "rb");
    char *text = NULL;
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)len + 1)) && fread(text, 1, (size_t)len, f) == (size_t)len)
        text[len] = 0;
    else
        len = -1;
    if (f) fclose(f);
    cJSON *c = len >= 0 ? cJSON_Parse(text) : NULL;
    free(text);
    if (!c) {
        snprintf(err, ERRLEN, "counters=%s: cannot read a JSON object from it", v);
        return -1;
    }
    cJSON_AddItemToObject(rec, "counters", c);
    return 0;
}

static cJSON *record(const char *text, char *err) {
    report_spec s;
    long long n, T, schema, cores;
    double median_us, spread, bw = 0;
    cJSON *rec = NULL;
    double *samples = NULL;
    if (spec_parse(&s, text, err) != 0) goto out;
    if (spec_int(&s, K_N, &n, err) || spec_int(&s, K_T, &T, err) || spec_int(&s, K_SCHEMA, &schema, err) ||
        spec_int(&s, K_CORES, &cores, err) || spec_double(&s, K_MEDIAN, &median_us, err) ||
        spec_double(&s, K_SPREAD, &spread, err))
        goto out;
    int have_bw = strcmp(s.v[K_BW], "null") != 0;
    if (have_bw && spec_double(&s, K_BW, &bw, err)) goto out;
    if (n < 0 || n > 1000000) {
        snprintf(err, ERRLEN, "n=%lld: the sample count must be 0..1000000", n);
        goto out;
    }
    int bw_truthy = have_bw && bw != 0; /* "no peak" for the fields that depend on one */

    samples = n ? malloc((size_t)n * sizeof *samples) : NULL;
    if (n && !samples) {
        snprintf(err, ERRLEN, "out of memory");
        goto out;
    }
    /* z at even i first, then odd i: the measured order is not sorted. */
    long long at = 0;
    for (int parity = 0; parity < 2; parity++)
        for (long long i = parity; i < n; i += 2)
            samples[at++] = round6(median_us + spread * normal_quantile(((double)i + 0.5) / (double)n));

    double median = 0;
    cJSON *timing = timing_object(samples, n, &median, err);
    if (!timing) goto out;
    double nbytes = 8.0 * (double)T * 32;
    int have_gbps = n > 0 && median != 0;
    double gbps = have_gbps ? nbytes / median / 1e3 : 0;

    rec = cJSON_CreateObject();
    add_number(rec, "schema", (double)schema);
    cJSON *tool = cJSON_AddObjectToObject(rec, "tool");
    cJSON_AddStringToObject(tool, "name", "gdnbench");
    cJSON_AddStringToObject(tool, "version", "0.1.0");
    cJSON_AddNullToObject(tool, "git_sha");
    cJSON *host = cJSON_AddObjectToObject(rec, "host");
    cJSON_AddStringToObject(host, "os", "Linux");
    cJSON_AddStringToObject(host, "kernel", "6");
    cJSON_AddStringToObject(host, "arch", "x86_64");
    cJSON_AddStringToObject(host, "cpu", "test");
    add_number(host, "cores", 2);
    cJSON_AddStringToObject(host, "hostname_hash", "0123456789abcdef");

    cJSON *device = cJSON_AddObjectToObject(rec, "device");
    cJSON_AddStringToObject(device, "name", s.v[K_DEV]);
    cJSON_AddStringToObject(device, "backend", s.v[K_BACKEND]);
    cJSON_AddBoolToObject(device, "emulated", strcmp(s.v[K_EMULATED], "1") == 0);
    cJSON_AddItemToObject(device, "gpu_cores", json_or_null(bw_truthy, (double)cores));
    cJSON_AddItemToObject(device, "bandwidth_gbps", json_or_null(have_bw, bw));
    cJSON_AddNullToObject(device, "fp32_tflops");
    cJSON_AddNullToObject(device, "fp16_tflops");
    if (s.v[K_BWOK]) {
        cJSON *pv = cJSON_AddObjectToObject(device, "peak_verified");
        if (bw_truthy) cJSON_AddBoolToObject(pv, "bandwidth_gbps", strcmp(s.v[K_BWOK], "1") == 0);
        else cJSON_AddNullToObject(pv, "bandwidth_gbps");
        cJSON_AddNullToObject(pv, "fp32_tflops");
        cJSON_AddNullToObject(pv, "fp16_tflops");
    }
    cJSON_AddStringToObject(rec, "op", s.v[K_OP]);

    cJSON *kernel = cJSON_AddObjectToObject(rec, "kernel");
    cJSON_AddStringToObject(kernel, "source", "shaders/gdn_cumsum.metal");
    cJSON_AddStringToObject(kernel, "function", s.v[K_FN]);
    size_t shalen = strlen(s.v[K_SHA]);
    char *sha = malloc(shalen * 64 + 1);
    if (sha) {
        for (int i = 0; i < 64; i++) memcpy(sha + (size_t)i * shalen, s.v[K_SHA], shalen);
        sha[shalen * 64] = 0;
        cJSON_AddStringToObject(kernel, "sha256", sha);
        free(sha);
    }
    cJSON_AddArrayToObject(kernel, "constants");
    add_number(rec, "seed", 1);

    cJSON *shape = cJSON_AddObjectToObject(rec, "shape");
    add_number(shape, "B", 1);
    add_number(shape, "T", (double)T);
    add_number(shape, "H", 32);
    add_number(shape, "BT", 64);
    cJSON *dtypes = cJSON_AddObjectToObject(shape, "dtypes");
    cJSON_AddStringToObject(dtypes, "g", "f32");
    cJSON_AddStringToObject(dtypes, "g_cumsum", "f32");

    cJSON *launch = cJSON_AddObjectToObject(rec, "launch");
    cJSON_AddItemToObject(launch, "grid", int_array3(1, 32, floor_div(T, 64)));
    cJSON_AddItemToObject(launch, "threadgroup", int_array3(64, 1, 1));
    add_number(launch, "threadgroup_memory_bytes", 0);

    cJSON_AddItemToObject(rec, "timing", timing);

    cJSON *tp = cJSON_AddObjectToObject(rec, "throughput");
    add_number(tp, "bytes", nbytes);
    add_number(tp, "flops", (double)T * 32.0);
    cJSON_AddItemToObject(tp, "gbps", json_or_null(have_gbps, gbps));
    cJSON_AddNullToObject(tp, "tflops");
    cJSON_AddItemToObject(tp, "pct_of_peak_bandwidth", json_or_null(have_gbps && gbps != 0 && bw_truthy,
                                                                     100 * gbps / bw));
    cJSON_AddNullToObject(tp, "pct_of_peak_flops");

    cJSON_AddArrayToObject(rec, "check");
    cJSON_AddNullToObject(rec, "determinism");
    cJSON_AddStringToObject(rec, "status", s.v[K_STATUS]);
    if (strcmp(s.v[K_STATUS], "pass") == 0) cJSON_AddNullToObject(rec, "error");
    else cJSON_AddStringToObject(rec, "error", "A: 3 elements outside tolerance");
    if (s.v[K_THERMAL] || s.v[K_THERMAL_AFTER] || s.v[K_POWER] || s.v[K_LOWPOWER])
        cJSON_AddItemToObject(rec, "environment", environment_object(&s));
    if (s.v[K_COUNTERS] && add_counters(rec, s.v[K_COUNTERS], err)) {
        cJSON_Delete(rec);
        rec = NULL;
    }
out:
    free(samples);
    free(s.buf);
    return rec;
}

/* OUT.json from the SPECs: an object for one, an array for several. */
static int write_reports(const char *out, char **specs, int nspecs, char *err) {
    if (nspecs < 1) {
        snprintf(err, ERRLEN, "%s: no SPEC given for it", out);
        return -1;
    }
    cJSON *doc = nspecs > 1 ? cJSON_CreateArray() : NULL;
    for (int i = 0; i < nspecs; i++) {
        cJSON *rec = record(specs[i], err);
        if (!rec) {
            cJSON_Delete(doc);
            return -1;
        }
        if (!doc) doc = rec;
        else cJSON_AddItemToArray(doc, rec);
    }
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, ERRLEN, "out of memory printing %s", out);
        return -1;
    }
    FILE *f = fopen(out, "wb");
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    free(text);
    if (!ok) {
        snprintf(err, ERRLEN, "%s: cannot write: %s", out, strerror(errno));
        return -1;
    }
    return 0;
}

/* Lines OUT.json|SPEC|SPEC... from stdin: many files from one process. */
static int write_from_lines(FILE *in, char *err) {
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        lineno++;
        char *start = line, *end = line + strlen(line);
        while (start < end && isspace((unsigned char)*start)) start++;
        while (end > start && isspace((unsigned char)end[-1])) *--end = 0;
        int nfields = 1;
        for (char *p = start; *p; p++) nfields += *p == '|';
        char **fields = malloc((size_t)nfields * sizeof *fields);
        if (!fields) {
            snprintf(err, ERRLEN, "out of memory");
            rc = -1;
            break;
        }
        int k = 0;
        for (char *p = start, *bar; p; p = bar) {
            bar = strchr(p, '|');
            if (bar) *bar++ = 0;
            fields[k++] = p;
        }
        if (*fields[0] && write_reports(fields[0], fields + 1, nfields - 1, err) != 0) {
            char inner[ERRLEN];
            memcpy(inner, err, ERRLEN);
            snprintf(err, ERRLEN, "stdin line %ld: %.400s", lineno, inner);
            rc = -1;
        }
        free(fields);
    }
    free(line);
    return rc;
}

int reports_main(int argc, char **argv) {
    char err[ERRLEN] = "";
    int rc;
    if (argc < 1) {
        fprintf(stderr, "gdnbench-testdata reports: give OUT.json SPEC... or - (lines OUT.json|SPEC|... on stdin)\n");
        return 2;
    }
    if (strcmp(argv[0], "-") == 0 && argc == 1) rc = write_from_lines(stdin, err);
    else rc = write_reports(argv[0], argv + 1, argc - 1, err);
    if (rc != 0) {
        fprintf(stderr, "gdnbench-testdata reports: %s\n", err);
        return 2;
    }
    return 0;
}
