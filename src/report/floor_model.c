/* floor_model.c — each chip's floor time for a run's counters (floor_model.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/floor_model.h"

static const cJSON *child(const cJSON *o, const char *key) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

/* A count of the counters (absent or null: 0; *ok = 0 when it is not a number). */
static double count_of(const cJSON *o, const char *key, int *ok) {
    const cJSON *v = child(o, key);
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0) *ok = 0;
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

int floor_model_estimate(const cJSON *counters, const chip_info *chip, floor_est *out) {
    const cJSON *total = child(counters, "total");
    const cJSON *bytes = child(child(total, "device"), "distinct_bytes");
    if (!chip || !cJSON_IsNumber(bytes) || bytes->valuedouble < 0 || chip->bandwidth_gbps <= 0) return -1;
    const cJSON *flops = child(total, "flops");
    int ok = 1;
    double f32 = count_of(flops, "float", &ok) + count_of(flops, "bfloat", &ok);
    double f16 = count_of(flops, "half", &ok);
    if (!ok || (f32 > 0 && chip->fp32_tflops <= 0) || (f16 > 0 && chip->fp16_tflops <= 0)) return -1;
    memset(out, 0, sizeof *out);
    out->chip = chip;
    out->memory_s = bytes->valuedouble / (chip->bandwidth_gbps * 1e9);
    if (f32 > 0) out->compute_s += f32 / (chip->fp32_tflops * 1e12);
    if (f16 > 0) out->compute_s += f16 / (chip->fp16_tflops * 1e12);
    out->compute_bound = out->compute_s > out->memory_s;
    out->floor_s = out->compute_bound ? out->compute_s : out->memory_s;
    out->flops_verified = chip->flops_verified && f16 == 0;
    return 0;
}

/* One "floors" entry; NULL when memory runs out. */
static cJSON *floor_json(const floor_est *e) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    const chip_info *c = e->chip;
    int ok = cJSON_AddStringToObject(o, "chip", c->name) && cJSON_AddNumberToObject(o, "gpu_cores", c->gpu_cores) &&
             cJSON_AddTrueToObject(o, "model") && cJSON_AddNumberToObject(o, "memory_s", e->memory_s) &&
             cJSON_AddNumberToObject(o, "compute_s", e->compute_s) &&
             cJSON_AddNumberToObject(o, "floor_s", e->floor_s) &&
             cJSON_AddStringToObject(o, "bound", e->compute_bound ? "compute" : "memory") &&
             cJSON_AddBoolToObject(o, "bandwidth_verified", c->bandwidth_verified) &&
             cJSON_AddBoolToObject(o, "flops_verified", e->flops_verified) &&
             cJSON_AddNumberToObject(o, "bandwidth_gbps", c->bandwidth_gbps) &&
             (c->fp32_tflops > 0 ? cJSON_AddNumberToObject(o, "fp32_tflops", c->fp32_tflops)
                                 : cJSON_AddNullToObject(o, "fp32_tflops")) &&
             (c->fp16_tflops > 0 ? cJSON_AddNumberToObject(o, "fp16_tflops", c->fp16_tflops)
                                 : cJSON_AddNullToObject(o, "fp16_tflops"));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int floor_model_add(cJSON *counters) {
    if (!cJSON_IsObject(counters) || !cJSON_IsObject(child(counters, "total"))) return 0;
    cJSON *floors = cJSON_CreateArray();
    if (!floors) return -1;
    int n;
    const chip_info *t = chip_table(&n);
    for (int i = 0; i < n; i++) {
        floor_est e;
        if (floor_model_estimate(counters, &t[i], &e)) continue;
        cJSON *o = floor_json(&e);
        if (!o) {
            cJSON_Delete(floors);
            return -1;
        }
        cJSON_AddItemToArray(floors, o);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(counters, "floors");
    cJSON_AddItemToObject(counters, "floors", floors);
    return 0;
}

void floor_model_fmt_s(char *out, size_t n, double s) {
    if (!isfinite(s))
        snprintf(out, n, "-");
    else if (s < 1e-3)
        snprintf(out, n, "%.3g us", s * 1e6);
    else if (s < 1)
        snprintf(out, n, "%.3g ms", s * 1e3);
    else
        snprintf(out, n, "%.3g s", s);
}

int floor_model_range(const cJSON *counters, floor_est *fastest, floor_est *slowest, int *n_memory) {
    int n, rows = 0;
    const chip_info *t = chip_table(&n);
    *n_memory = 0;
    for (int i = 0; i < n; i++) {
        floor_est e;
        if (floor_model_estimate(counters, &t[i], &e)) continue;
        if (!rows++ || e.floor_s < fastest->floor_s) *fastest = e;
        if (rows == 1 || e.floor_s > slowest->floor_s) *slowest = e;
        *n_memory += !e.compute_bound;
    }
    return rows;
}

static void print_row(FILE *f, const floor_est *e, const char *mark) {
    char mem[32], comp[32], fl[32];
    floor_model_fmt_s(mem, sizeof mem, e->memory_s);
    floor_model_fmt_s(comp, sizeof comp, e->compute_s);
    floor_model_fmt_s(fl, sizeof fl, e->floor_s);
    int derived = e->compute_bound ? !e->flops_verified : !e->chip->bandwidth_verified;
    fprintf(f, "    %-16s %5d  %10s  %10s  %10s  %s%s%s\n", e->chip->name, e->chip->gpu_cores, mem, comp, fl,
            e->compute_bound ? "compute" : "memory", derived ? " *" : "", mark);
}

/* "Apple M1 (8 cores) 12.3 us *": a chip's floor in the summary line. */
static void fmt_chip_floor(char *out, size_t n, const floor_est *e) {
    char fl[32];
    floor_model_fmt_s(fl, sizeof fl, e->floor_s);
    int derived = e->compute_bound ? !e->flops_verified : !e->chip->bandwidth_verified;
    snprintf(out, n, "%s (%d cores) %s%s", e->chip->name, e->chip->gpu_cores, fl, derived ? " *" : "");
}

void floor_model_print(FILE *f, const cJSON *counters, const chip_info *self, int all) {
    if (!cJSON_IsObject(counters)) return;
    floor_est fast, slow, mine;
    int nmem, rows = floor_model_range(counters, &fast, &slow, &nmem);
    if (!rows) return;
    int have_self = self && !floor_model_estimate(counters, self, &mine);
    fprintf(f, "  floor per chip (a MODEL, not a measurement: max(distinct bytes / bandwidth, flops / peak); "
               "* = a derived peak)\n");
    if (have_self || all)
        fprintf(f, "    %-16s %5s  %10s  %10s  %10s  %s\n", "chip", "cores", "memory", "compute", "floor", "bound");
    if (have_self) print_row(f, &mine, "  <- this machine");
    if (all) {
        int n;
        const chip_info *t = chip_table(&n);
        for (int i = 0; i < n; i++) {
            floor_est e;
            if (&t[i] != self && !floor_model_estimate(counters, &t[i], &e)) print_row(f, &e, "");
        }
        return;
    }
    char a[128], b[128];
    fmt_chip_floor(a, sizeof a, &fast);
    fmt_chip_floor(b, sizeof b, &slow);
    fprintf(f, "    %d chips: fastest %s, slowest %s\n", rows, a, b);
    fprintf(f, "    bound: %s; --all-floors prints every chip's row\n",
            nmem == rows ? "memory on every chip" : nmem == 0 ? "compute on every chip" : "memory on some chips, compute on others");
}
