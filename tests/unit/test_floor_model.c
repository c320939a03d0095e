/* test_floor_model.c — the floor model (report/floor_model.h) on hand-written
 * `counters` objects: memory- and compute-bound floors against hand arithmetic, the
 * FP16 peak for half flops, chips without the peak the flops need left out, the JSON
 * labelled a model, the table's header saying so, and null counters left alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/floor_model.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "test.h"

/* total.device.distinct_bytes and total.flops as given. */
static cJSON *counters(double bytes, double f32, double f16, double bf16) {
    char text[512];
    snprintf(text, sizeof text,
             "{\"version\":1,\"exact\":true,\"total\":{\"device\":{\"distinct_bytes\":%.0f},"
             "\"flops\":{\"float\":%.0f,\"half\":%.0f,\"bfloat\":%.0f,\"total\":%.0f}}}",
             bytes, f32, f16, bf16, f32 + f16 + bf16);
    return cJSON_Parse(text);
}

static const cJSON *floor_for(const cJSON *c, const char *chip, int cores) {
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(c, "floors")) {
        if (strcmp(cJSON_GetObjectItem(f, "chip")->valuestring, chip) == 0 &&
            cJSON_GetObjectItem(f, "gpu_cores")->valueint == cores)
            return f;
    }
    return NULL;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

TEST(floor_model_memory_and_compute_bound) {
    const chip_info *m1 = chip_find("Apple M1", 8); /* 68.25 GB/s, 2.6 TFLOP/s */
    floor_est e;
    cJSON *c = counters(68.25e6, 2.6e6, 0, 0);     /* 1 ms of memory, 1 us of compute */
    CHECK(c && floor_model_estimate(c, m1, &e) == 0);
    CHECK_NEAR(e.memory_s, 1e-3, 1e-12);
    CHECK_NEAR(e.compute_s, 1e-6, 1e-15);
    CHECK_NEAR(e.floor_s, 1e-3, 1e-12);
    CHECK(!e.compute_bound && e.flops_verified);
    cJSON_Delete(c);
    /* bfloat at the FP32 peak, half at the FP16 peak (equal on the M1: 2.6) */
    c = counters(68.25e3, 2.6e9, 2.6e9, 2.6e9);
    CHECK(c && floor_model_estimate(c, m1, &e) == 0);
    CHECK_NEAR(e.compute_s, 3e-3, 1e-12);
    CHECK_NEAR(e.floor_s, 3e-3, 1e-12);
    CHECK(e.compute_bound);
    CHECK(!e.flops_verified); /* FP16 peaks are never Apple-published */
    cJSON_Delete(c);
    /* a chip with a different FP16 peak would tell half from float: use a made-up one */
    chip_info fake = {"Test GPU", 1, 100, 1.0, 4.0, 1, 1};
    c = counters(0, 1e12, 4e12, 0);
    CHECK(c && floor_model_estimate(c, &fake, &e) == 0);
    CHECK_NEAR(e.compute_s, 2.0, 1e-12);
    cJSON_Delete(c);
}

TEST(floor_model_json_and_unknown_peaks) {
    cJSON *c = counters(546e6, 1e6, 0, 0);
    CHECK(c && floor_model_add(c) == 0);
    const cJSON *f = floor_for(c, "Apple M4 Max", 40);
    CHECK(f != NULL);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(f, "model")));
    CHECK_NEAR(num(f, "memory_s"), 1e-3, 1e-12);
    CHECK_NEAR(num(f, "floor_s"), 1e-3, 1e-12);
    CHECK(f && strcmp(cJSON_GetObjectItem(f, "bound")->valuestring, "memory") == 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(f, "bandwidth_verified")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(f, "flops_verified"))); /* M4's FLOP/s are derived */
    CHECK(f && cJSON_IsFalse(cJSON_GetObjectItem(floor_for(c, "Apple M1", 8), "bandwidth_verified")));
    /* the M5 has no public FP32 peak: left out when there are flops ... */
    CHECK(floor_for(c, "Apple M5", 10) == NULL);
    int n;
    chip_table(&n);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(c, "floors")), n - 1);
    /* ... present when there are none; a second add replaces, never appends */
    cJSON *nof = counters(153e6, 0, 0, 0);
    CHECK(nof && floor_model_add(nof) == 0 && floor_model_add(nof) == 0);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(nof, "floors")), n);
    CHECK_NEAR(num(floor_for(nof, "Apple M5", 10), "floor_s"), 1e-3, 1e-12);
    int floors_keys = 0;
    for (const cJSON *k = nof->child; k; k = k->next) floors_keys += strcmp(k->string, "floors") == 0;
    CHECK_EQ_INT(floors_keys, 1);
    cJSON_Delete(nof);
    cJSON_Delete(c);
    /* null counters, and an object without a total, are left alone */
    cJSON *null = cJSON_CreateNull();
    CHECK(floor_model_add(null) == 0 && cJSON_IsNull(null));
    cJSON_Delete(null);
    cJSON *bare = cJSON_Parse("{\"version\":1}");
    CHECK(bare && floor_model_add(bare) == 0 && !cJSON_GetObjectItem(bare, "floors"));
    floor_est e;
    CHECK(floor_model_estimate(bare, chip_find("Apple M1", 8), &e) == -1);
    cJSON_Delete(bare);
    /* a negative count is no counters at all */
    cJSON *bad = counters(-5, 0, 0, 0);
    CHECK(bad && floor_model_estimate(bad, chip_find("Apple M1", 8), &e) == -1);
    cJSON_Delete(bad);
}

TEST(floor_model_table_says_model) {
    cJSON *c = counters(68.25e6, 2.6e6, 0, 0);
    FILE *f = tmpfile();
    CHECK(c && f);
    if (!c || !f) {
        cJSON_Delete(c);
        if (f) fclose(f);
        return;
    }
    floor_model_print(f, c, NULL, 1);
    char text[8192] = "";
    rewind(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    CHECK_MSG(strstr(text, "a MODEL, not a measurement") != NULL, "%s", text);
    CHECK_MSG(strstr(text, "Apple M1") && strstr(text, "1 ms") && strstr(text, "memory *"), "%s", text);
    /* null counters print nothing */
    rewind(f);
    cJSON *null = cJSON_CreateNull();
    long before = ftell(f);
    floor_model_print(f, null, NULL, 0);
    CHECK(ftell(f) == before);
    cJSON_Delete(null);
    fclose(f);
    cJSON_Delete(c);
    char s[32];
    floor_model_fmt_s(s, sizeof s, 1.5e-6);
    CHECK(strcmp(s, "1.5 us") == 0);
    floor_model_fmt_s(s, sizeof s, 0.0123);
    CHECK(strcmp(s, "12.3 ms") == 0);
}

/* counters.floors against results/schema-1.json's $defs/counters_floors, and the
 * schema refusing a floor that does not say it is a model. */
TEST(floor_model_schema) {
    char path[1024], err[512];
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *full = json_read_file(path, err, sizeof err);
    CHECK_MSG(full != NULL, "%s", err);
    cJSON *schema = cJSON_CreateObject();
    cJSON *c = counters(1e6, 1e6, 1e3, 0);
    if (!full || !schema || !c || floor_model_add(c) != 0) {
        CHECK(0);
        cJSON_Delete(full), cJSON_Delete(schema), cJSON_Delete(c);
        return;
    }
    cJSON_AddItemToObject(schema, "$defs", cJSON_DetachItemFromObject(full, "$defs"));
    cJSON_AddStringToObject(schema, "$ref", "#/$defs/counters_floors");
    const cJSON *floors = cJSON_GetObjectItem(c, "floors");
    CHECK_MSG(json_schema_validate(schema, floors, err, sizeof err) == 0, "%s", err);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(floors, 0), "model", cJSON_CreateFalse());
    CHECK(json_schema_validate(schema, floors, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "model") != NULL, "%s", err);
    cJSON_Delete(full), cJSON_Delete(schema), cJSON_Delete(c);
}

/* The table's text for counters c, self and all (floor_model_print). */
static void print_to(char *text, size_t n, const cJSON *c, const chip_info *self, int all) {
    text[0] = 0;
    FILE *f = tmpfile();
    if (!f) return;
    floor_model_print(f, c, self, all);
    rewind(f);
    text[fread(text, 1, n - 1, f)] = 0;
    fclose(f);
}

static int count_of_str(const char *s, const char *sub) {
    int k = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) k++;
    return k;
}

/* The range over the chip table: fastest and slowest against every chip's estimate,
 * and the memory-bound count; the default view a summary, --all-floors every chip,
 * the run's own chip first and marked. */
TEST(floor_model_range_and_views) {
    cJSON *c = counters(68.25e6, 2.6e6, 0, 0);
    floor_est fast, slow;
    int nmem = -1, n, rows = c ? floor_model_range(c, &fast, &slow, &nmem) : 0;
    const chip_info *t = chip_table(&n);
    int m = 0; /* chips with a floor: the M5 has no FP32 peak for these flops */
    for (int i = 0; rows && i < n; i++) {
        floor_est e;
        if (floor_model_estimate(c, &t[i], &e)) continue;
        m++;
        CHECK(e.floor_s >= fast.floor_s && e.floor_s <= slow.floor_s);
    }
    CHECK(m >= 30 && rows == m && nmem == m); /* bytes dominate on every chip */
    CHECK(rows && strcmp(slow.chip->name, "Apple M1") == 0); /* the least bandwidth */
    cJSON *heavy = counters(1, 1e12, 0, 0);
    CHECK(heavy && floor_model_range(heavy, &fast, &slow, &nmem) == m && nmem == 0);
    char text[16384];
    print_to(text, sizeof text, c, NULL, 0);
    CHECK_MSG(strstr(text, "a MODEL, not a measurement") && strstr(text, "* = a derived peak"), "%s", text);
    CHECK_MSG(strstr(text, "fastest ") && strstr(text, "slowest Apple M1 (7 cores) 1 ms *"), "%s", text);
    CHECK_MSG(strstr(text, "memory on every chip") && strstr(text, "--all-floors"), "%s", text);
    CHECK_MSG(count_of_str(text, "\n") == 3 && !strstr(text, "this machine"), "%s", text);
    print_to(text, sizeof text, heavy, NULL, 0);
    CHECK_MSG(strstr(text, "compute on every chip"), "%s", text);
    print_to(text, sizeof text, c, NULL, 1);
    CHECK_MSG(count_of_str(text, "\n") == m + 2 && strstr(text, "a MODEL"), "%s", text);
    const chip_info *self = chip_find("Apple M2 Max", 38);
    CHECK(self != NULL);
    print_to(text, sizeof text, c, self, 0);
    const char *row = strstr(text, "\n    Apple M2 Max");
    CHECK_MSG(row && strstr(row, "<- this machine") && strstr(text, "a MODEL") && strstr(text, "fastest "), "%s", text);
    CHECK_MSG(count_of_str(text, "\n") == 5, "%s", text);
    print_to(text, sizeof text, c, self, 1);
    CHECK_MSG(count_of_str(text, "\n") == m + 2 && count_of_str(text, "this machine") == 1, "%s", text);
    CHECK_MSG(strstr(text, "\n    Apple M2 Max") == strchr(strchr(text, '\n') + 1, '\n'), "%s", text);
    cJSON_Delete(c), cJSON_Delete(heavy);
}
