/* test_report_gbench.c — the Google Benchmark JSON has the keys gbench tooling
 * (compare.py) reads, one iteration entry per sample and the aggregates. */
#include <string.h>

#include <cjson/cJSON.h>

#include "report/report_gbench.h"
#include "report_testdata.h"
#include "test.h"

static int has(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k) != NULL; }

TEST(report_gbench_required_keys) {
    run_record a, b;
    report_test_record(&a, 6, 100.0);
    report_test_record(&b, 0, 1.0);
    b.status = RUN_ERROR;
    snprintf(b.error, sizeof b.error, "kernel failed to compile");
    run_record *recs[2] = {&a, &b};
    cJSON *doc = report_gbench_json(recs, 2);
    CHECK(doc != NULL);
    if (!doc) return;
    const cJSON *ctx = cJSON_GetObjectItem(doc, "context");
    const char *ctx_keys[] = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled",
                              "caches", "library_build_type"};
    for (size_t i = 0; i < sizeof ctx_keys / sizeof ctx_keys[0]; i++) CHECK_MSG(has(ctx, ctx_keys[i]), "context.%s", ctx_keys[i]);

    const cJSON *bm = cJSON_GetObjectItem(doc, "benchmarks");
    CHECK(cJSON_IsArray(bm));
    /* 6 samples + 4 aggregates for a, 1 error entry for b */
    CHECK_EQ_INT(cJSON_GetArraySize(bm), 11);
    const char *keys[] = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
                          "iterations", "real_time", "cpu_time", "time_unit"};
    int iterations = 0, aggregates = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, bm) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            CHECK_MSG(has(e, keys[i]), "%s lacks %s", cJSON_GetObjectItem(e, "name")->valuestring, keys[i]);
        CHECK(strcmp(cJSON_GetObjectItem(e, "time_unit")->valuestring, "us") == 0);
        const char *rt = cJSON_GetObjectItem(e, "run_type")->valuestring;
        if (strcmp(rt, "aggregate") == 0) {
            aggregates++;
            CHECK(has(e, "aggregate_name"));
        } else {
            iterations++;
        }
    }
    CHECK_EQ_INT(iterations, 7);
    CHECK_EQ_INT(aggregates, 4);

    const cJSON *first = cJSON_GetArrayItem(bm, 0);
    CHECK(strcmp(cJSON_GetObjectItem(first, "name")->valuestring, "testop/test_kernel_bf16/B:1/T:4096/H:32/K:128/metal") == 0);
    CHECK_NEAR(cJSON_GetObjectItem(first, "real_time")->valuedouble, a.timing.samples[0], 0);
    CHECK_NEAR(cJSON_GetObjectItem(first, "cpu_time")->valuedouble, a.wall.samples[0], 0);
    CHECK_NEAR(cJSON_GetObjectItem(first, "bytes_per_second")->valuedouble, a.bytes / (a.timing.samples[0] * 1e-6), 1);
    const cJSON *median = cJSON_GetArrayItem(bm, 7);
    CHECK(strcmp(cJSON_GetObjectItem(median, "name")->valuestring,
                 "testop/test_kernel_bf16/B:1/T:4096/H:32/K:128/metal_median") == 0);
    CHECK_NEAR(cJSON_GetObjectItem(median, "real_time")->valuedouble, a.timing.median, 0);
    CHECK(has(median, "gbps") && has(median, "pct_of_peak_bandwidth"));
    const cJSON *err = cJSON_GetArrayItem(bm, 10);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(err, "error_occurred")));
    CHECK(strcmp(cJSON_GetObjectItem(err, "error_message")->valuestring, "kernel failed to compile") == 0);

    cJSON_Delete(doc);
    run_record_free(&a);
    run_record_free(&b);
}

/* The gbench format has no warnings list: a paravirtual device's entries say so in
 * their label, and a real chip's do not. */
TEST(report_gbench_label_flags_a_paravirtual_device) {
    run_record a;
    report_test_record(&a, 2, 10.0);
    run_record *recs[1] = {&a};
    for (int pv = 0; pv < 2; pv++) {
        a.device.paravirtual = pv;
        cJSON *doc = report_gbench_json(recs, 1);
        CHECK(doc != NULL);
        if (!doc) break;
        const cJSON *e;
        int flagged = 0, n = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "benchmarks")) {
            const cJSON *label = cJSON_GetObjectItem(e, "label");
            n++;
            flagged += label && cJSON_IsString(label) && strstr(label->valuestring, "paravirtual device") != NULL;
        }
        CHECK(n > 0);
        CHECK_EQ_INT(flagged, pv ? n : 0);
        cJSON_Delete(doc);
    }
    run_record_free(&a);
}
