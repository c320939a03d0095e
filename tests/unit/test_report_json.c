/* test_report_json.c — the JSON report against results/schema-1.json, and the
 * schema validator itself (that it fails, naming the path, on broken records). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "test.h"

static cJSON *load_schema(void) {
    char path[1024], err[512];
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *s = json_read_file(path, err, sizeof err);
    CHECK_MSG(s != NULL, "%s", err);
    return s;
}

static const cJSON *at(const cJSON *o, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    return b ? cJSON_GetObjectItemCaseSensitive(x, b) : x;
}

TEST(report_json_record_validates) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 20, 100.0);
    cJSON *j = report_record_json(&r);
    CHECK(j != NULL);
    char err[512];
    int n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n == 0, "record does not validate: %s", err);

    /* Spot-check values and the null conventions. */
    CHECK_NEAR(at(j, "schema", NULL)->valuedouble, 1, 0);
    CHECK(strcmp(at(j, "tool", "name")->valuestring, "gdnbench") == 0);
    CHECK(strcmp(at(j, "op", NULL)->valuestring, "testop") == 0);
    CHECK_NEAR(at(j, "shape", "T")->valuedouble, 4096, 0);
    CHECK(strcmp(cJSON_GetObjectItem(at(j, "shape", "dtypes"), "k")->valuestring, "bf16") == 0);
    CHECK_NEAR(cJSON_GetArraySize(at(j, "timing", "samples")), 20, 0);
    CHECK_NEAR(at(j, "timing", "median")->valuedouble, r.timing.median, 0);
    /* bytes / median: 2*4096*32*128 B in r.timing.median us */
    double gbps = r.bytes / r.timing.median / 1e3;
    CHECK_NEAR(at(j, "throughput", "gbps")->valuedouble, gbps, 1e-9 * gbps);
    CHECK_NEAR(at(j, "throughput", "pct_of_peak_bandwidth")->valuedouble, 100 * gbps / 546, 1e-9);
    CHECK_NEAR(cJSON_GetArraySize(at(j, "launch", "stages")), 3, 0);
    CHECK_NEAR(at(j, "launch", "threadgroup_memory_bytes")->valuedouble, 4096, 0);
    const cJSON *c0 = cJSON_GetArrayItem(at(j, "check", NULL), 0);
    const cJSON *c1 = cJSON_GetArrayItem(at(j, "check", NULL), 1);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(c0, "ulp_p99")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(c0, "first_bad_index")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(c0, "first_bad_coord")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(c0, "rel_l2_max")));
    CHECK_NEAR(cJSON_GetObjectItem(c1, "first_bad_index")->valuedouble, 4097, 0);
    CHECK_NEAR(cJSON_GetArraySize(cJSON_GetObjectItem(c1, "first_bad_coord")), 3, 0);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(c1, "pass")));
    CHECK(cJSON_IsTrue(at(j, "determinism", "bitwise_identical")));
    CHECK(strcmp(at(j, "status", NULL)->valuestring, "fail") == 0);
    CHECK_NEAR(strlen(at(j, "host", "hostname_hash")->valuestring), 16, 0);
    /* Which peaks are Apple's figures and which are derived. */
    const cJSON *pv = at(j, "device", "peak_verified");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(pv, "bandwidth_gbps")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(pv, "fp32_tflops")));
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(pv, "fp16_tflops")));
    CHECK(at(j, "not_checked", NULL) == NULL); /* only written when there are some */

    cJSON_Delete(j);
    run_record_free(&r);
    cJSON_Delete(schema);
}

TEST(report_json_unknowns_are_null_and_validate) {
    cJSON *schema = load_schema();
    if (!schema) return;
    /* cpu backend, unknown chip, nothing timed, error status, no determinism. */
    run_record r;
    report_test_record(&r, 0, 1.0);
    snprintf(r.device.name, sizeof r.device.name, "Some CPU");
    snprintf(r.device.backend, sizeof r.device.backend, "cpu");
    r.device.gpu_cores = -1;
    r.device.bandwidth_gbps = r.device.fp32_tflops = r.device.fp16_tflops = -1;
    r.kernel.source[0] = r.kernel.function[0] = r.kernel.sha256[0] = 0;
    r.kernel.nconstants = 0;
    run_record_free(&r);
    r.nstages = 0;
    r.timing_source[0] = 0;
    r.wall.n = 0;
    r.nchecks = 0;
    r.determinism_runs = 0;
    r.checks[0].max_abs = NAN;
    r.status = RUN_ERROR;
    cJSON *j = report_record_json(&r);
    CHECK(j != NULL);
    char err[512];
    int n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n == 0, "record does not validate: %s", err);
    CHECK(cJSON_IsNull(at(j, "launch", NULL)));
    CHECK(cJSON_IsNull(at(j, "determinism", NULL)));
    CHECK(cJSON_IsNull(at(j, "device", "gpu_cores")));
    CHECK(cJSON_IsNull(at(j, "device", "bandwidth_gbps")));
    CHECK(cJSON_IsNull(at(j, "timing", "median")));
    CHECK(cJSON_IsNull(at(j, "timing", "wall")));
    CHECK(cJSON_IsNull(at(j, "throughput", "gbps")));
    CHECK(cJSON_IsNull(at(j, "throughput", "pct_of_peak_bandwidth")));
    CHECK(cJSON_IsNull(at(j, "kernel", "sha256")));
    const cJSON *pv = at(j, "device", "peak_verified");
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(pv, "bandwidth_gbps")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(pv, "fp32_tflops")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(pv, "fp16_tflops")));
    cJSON_Delete(j);
    cJSON_Delete(schema);
}

/* Validates j after a mutation and checks the message names `path`. */
static void expect_invalid(const cJSON *schema, const cJSON *j, const char *path, const char *what) {
    char err[512];
    int n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n > 0, "%s: mutated record validated", what);
    CHECK_MSG(strstr(err, path) != NULL, "%s: message \"%s\" does not name %s", what, err, path);
}

TEST(report_json_mutations_fail_with_path) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 10, 50.0);
    cJSON *base = report_record_json(&r);
    run_record_free(&r);
    CHECK(base != NULL);
    if (!base) return;

    cJSON *j = cJSON_Duplicate(base, 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "device"), "backend");
    expect_invalid(schema, j, "$.device: missing required key \"backend\"", "missing key");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "timing"), "median", cJSON_CreateString("fast"));
    expect_invalid(schema, j, "$.timing.median: expected number or null, got string", "wrong type");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "device"), "backend", cJSON_CreateString("cuda"));
    expect_invalid(schema, j, "$.device.backend: \"cuda\" is not one of", "bad enum");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "check"), 1), "reference",
                              cJSON_CreateString("f32"));
    expect_invalid(schema, j, "$.check[1].reference", "bad enum in array");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "timing"), "samples"), 3,
                             cJSON_CreateNumber(-1));
    expect_invalid(schema, j, "$.timing.samples[3]: -1 is below the minimum 0", "negative sample");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_AddNumberToObject(cJSON_GetObjectItem(j, "throughput"), "gflops", 1);
    expect_invalid(schema, j, "$.throughput: unexpected key \"gflops\"", "extra key");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(j, "shape"), "T", cJSON_CreateNumber(1.5));
    expect_invalid(schema, j, "$.shape.T: expected integer", "fractional dim");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(j, "schema", cJSON_CreateNumber(2));
    expect_invalid(schema, j, "$.schema: 2 is not the required value 1", "schema version");
    cJSON_Delete(j);

    j = cJSON_Duplicate(base, 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "timing"), "wall");
    cJSON_AddItemToObject(cJSON_GetObjectItem(j, "timing"), "wall", cJSON_CreateObject());
    expect_invalid(schema, j, "$.timing.wall: missing required key", "anyOf picks the object branch");
    cJSON_Delete(j);

    /* An array of records: the element index is in the path. */
    cJSON *arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, cJSON_Duplicate(base, 1));
    j = cJSON_Duplicate(base, 1);
    cJSON_ReplaceItemInObject(j, "status", cJSON_CreateString("ok"));
    cJSON_AddItemToArray(arr, j);
    expect_invalid(schema, arr, "$[1].status: \"ok\" is not one of \"pass\", \"fail\", \"error\"", "array element");
    cJSON_DeleteItemFromArray(arr, 1);
    char err[512];
    CHECK_MSG(json_schema_validate(schema, arr, err, sizeof err) == 0, "array of one valid record: %s", err);

    cJSON_Delete(arr);
    cJSON_Delete(base);
    cJSON_Delete(schema);
}

/* Additions to schema 1 (device.paravirtual, kernel.fast_math, warnings): written
 * and valid, still valid when absent (older reports), and typed. */
TEST(report_json_paravirtual_fast_math_and_warnings) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 5, 10.0);
    snprintf(r.device.name, sizeof r.device.name, "Apple Paravirtual device");
    r.device.paravirtual = 1;
    r.kernel.fast_math_known = 1;
    r.kernel.fast_math = 0;
    run_record_warn(&r, "first warning");
    run_record_warn(&r, "second warning");
    cJSON *j = report_record_json(&r);
    run_record_free(&r);
    CHECK(j != NULL);
    if (!j) {
        cJSON_Delete(schema);
        return;
    }
    char err[512];
    CHECK_MSG(json_schema_validate(schema, j, err, sizeof err) == 0, "record does not validate: %s", err);
    CHECK(cJSON_IsTrue(at(j, "device", "paravirtual")));
    CHECK(cJSON_IsFalse(at(j, "kernel", "fast_math")));
    CHECK_EQ_INT(cJSON_GetArraySize(at(j, "warnings", NULL)), 2);
    CHECK(strcmp(cJSON_GetArrayItem(at(j, "warnings", NULL), 1)->valuestring, "second warning") == 0);

    /* no kernel compiled: null */
    report_test_record(&r, 0, 1.0);
    r.kernel.fast_math_known = 0;
    cJSON *k = report_record_json(&r);
    run_record_free(&r);
    CHECK(k && cJSON_IsNull(at(k, "kernel", "fast_math")) && cJSON_GetArraySize(at(k, "warnings", NULL)) == 0);
    CHECK(k && cJSON_IsFalse(at(k, "device", "paravirtual")));
    cJSON_Delete(k);

    cJSON *old = cJSON_Duplicate(j, 1);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(old, "device"), "paravirtual");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(old, "kernel"), "fast_math");
    cJSON_DeleteItemFromObject(old, "warnings");
    CHECK_MSG(json_schema_validate(schema, old, err, sizeof err) == 0, "an older report no longer validates: %s", err);
    cJSON_Delete(old);

    cJSON *m = cJSON_Duplicate(j, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(m, "kernel"), "fast_math", cJSON_CreateString("off"));
    expect_invalid(schema, m, "$.kernel.fast_math", "fast_math as a string");
    cJSON_Delete(m);
    m = cJSON_Duplicate(j, 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(m, "device"), "paravirtual", cJSON_CreateNull());
    expect_invalid(schema, m, "$.device.paravirtual", "paravirtual null");
    cJSON_Delete(m);
    m = cJSON_Duplicate(j, 1);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(m, "warnings"), 0, cJSON_CreateNumber(1));
    expect_invalid(schema, m, "$.warnings[0]", "a warning that is not text");
    cJSON_Delete(m);

    /* at most REC_MAX_WARNINGS are kept, none overflows */
    report_test_record(&r, 1, 1.0);
    for (int i = 0; i < REC_MAX_WARNINGS + 3; i++) run_record_warn(&r, "w");
    CHECK_EQ_INT(r.nwarnings, REC_MAX_WARNINGS);
    run_record_free(&r);

    cJSON_Delete(j);
    cJSON_Delete(schema);
}

TEST(report_jsonschema_rejects_unsupported_schema) {
    char err[256];
    cJSON *s = cJSON_Parse("{\"type\":\"string\",\"pattern\":\"^a\"}");
    cJSON *v = cJSON_CreateString("abc");
    CHECK_EQ_INT(json_schema_validate(s, v, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "pattern") != NULL, "%s", err);
    cJSON_Delete(s);
    s = cJSON_Parse("{\"$ref\":\"#/$defs/missing\"}");
    CHECK_EQ_INT(json_schema_validate(s, v, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "#/$defs/missing") != NULL, "%s", err);
    cJSON_Delete(s);
    /* A cycle of $refs stops instead of recursing forever. */
    s = cJSON_Parse("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}");
    CHECK_EQ_INT(json_schema_validate(s, v, err, sizeof err), -1);
    cJSON_Delete(s);
    cJSON_Delete(v);
}

TEST(report_jsonschema_keywords) {
    char err[256];
    cJSON *s = cJSON_Parse("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"type\":"
                           "\"integer\",\"minimum\":2},\"minItems\":2,\"maxItems\":3},\"s\":{\"type\":\"string\","
                           "\"minLength\":2,\"maxLength\":3}},\"required\":[\"a\"],\"additionalProperties\":false}");
    CHECK(s != NULL);
    struct {
        const char *doc;
        int valid;
        const char *needle;
    } cases[] = {
        {"{\"a\":[2,3]}", 1, NULL},
        {"{\"a\":[2,3,4,5]}", 0, "$.a: has 4 items, more than the maximum 3"},
        {"{\"a\":[2]}", 0, "$.a: has 1 items, fewer than the minimum 2"},
        {"{\"a\":[2,1]}", 0, "$.a[1]: 1 is below the minimum 2"},
        {"{\"a\":[2,2.5]}", 0, "$.a[1]: expected integer, got number"},
        {"{\"a\":[2,2],\"s\":\"\xc3\xa9\xc3\xa9\"}", 1, NULL}, /* two code points, four bytes */
        {"{\"a\":[2,2],\"s\":\"abcd\"}", 0, "$.s: string of length 4 is longer than the maximum 3"},
        {"{\"a\":[2,2],\"odd key\":1}", 0, "$: unexpected key \"odd key\""},
        {"[]", 0, "$: expected object, got array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *v = cJSON_Parse(cases[i].doc);
        int n = json_schema_validate(s, v, err, sizeof err);
        if (cases[i].valid)
            CHECK_MSG(n == 0, "%s should validate: %s", cases[i].doc, err);
        else
            CHECK_MSG(n > 0 && strstr(err, cases[i].needle), "%s: got \"%s\", want \"%s\"", cases[i].doc,
                      n > 0 ? err : "(valid)", cases[i].needle);
        cJSON_Delete(v);
    }
    cJSON_Delete(s);
}

TEST(report_write_file_and_array) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record a, b;
    report_test_record(&a, 8, 10.0);
    report_test_record(&b, 8, 20.0);
    char dir[] = "/tmp/gdnbench-report-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/out.json", dir);
    run_record *recs[2] = {&a, &b};
    CHECK_EQ_INT(report_write(path, recs, 2, err, sizeof err), 0);
    cJSON *doc = json_read_file(path, err, sizeof err);
    CHECK_MSG(doc != NULL, "%s", err);
    CHECK(cJSON_IsArray(doc) && cJSON_GetArraySize(doc) == 2);
    CHECK_MSG(json_schema_validate(schema, doc, err, sizeof err) == 0, "%s", err);
    cJSON_Delete(doc);

    CHECK_EQ_INT(report_write(path, recs, 1, err, sizeof err), 0);
    doc = json_read_file(path, err, sizeof err);
    CHECK(cJSON_IsObject(doc));
    cJSON_Delete(doc);
    remove(path);
    rmdir(dir);

    /* A directory that does not exist: a message naming the file, no crash. */
    CHECK_EQ_INT(report_write("/nonexistent-dir/x.json", recs, 1, err, sizeof err), -1);
    CHECK_MSG(strstr(err, "/nonexistent-dir/x.json") != NULL, "%s", err);
    run_record_free(&a);
    run_record_free(&b);
    cJSON_Delete(schema);
}

/* The software device's findings (schema 1 addition): structured records that
 * validate, null for a device without checks, and a wrong kind is caught. */
TEST(report_json_findings_validate) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 5, 100.0);
    char err[512];
    cJSON *j = report_record_json(&r);
    CHECK(j && cJSON_IsNull(at(j, "findings", NULL)));
    cJSON_Delete(j);

    dev_finding f[2];
    memset(f, 0, sizeof f);
    f[0].kind = DEV_FIND_TG_RACE;
    snprintf(f[0].kernel, sizeof f[0].kernel, "k");
    snprintf(f[0].memory, sizeof f[0].memory, "threadgroup");
    f[0].buffer = -1;
    snprintf(f[0].variable, sizeof f[0].variable, "st");
    f[0].variable_line = 21;
    f[0].has_range = 1, f[0].offset_lo = 128, f[0].offset_hi = 256, f[0].length = 256;
    f[0].nsites = 2;
    for (int i = 0; i < 2; i++) {
        dev_site *s = &f[0].site[i];
        snprintf(s->file, sizeof s->file, "k.metal");
        s->line = 28 - 3 * i, s->column = 9;
        snprintf(s->text, sizeof s->text, "st[tid] = x;");
        snprintf(s->access, sizeof s->access, "write");
        s->size = 4, s->has_thread = 1, s->thread[0] = 32u * (unsigned)i, s->index = 32u * (unsigned)i;
    }
    f[0].has_interval = 1;
    snprintf(f[0].barrier[1].file, sizeof f[0].barrier[1].file, "k.metal");
    f[0].barrier[1].line = 30;
    f[0].occurrences = 128, f[0].threads = 256, f[0].threadgroups = 4;
    f[1].kind = DEV_FIND_OOB;
    snprintf(f[1].kernel, sizeof f[1].kernel, "k");
    snprintf(f[1].memory, sizeof f[1].memory, "device");
    f[1].buffer = 1, f[1].has_range = 1, f[1].offset_lo = -4, f[1].offset_hi = 0, f[1].length = 1000;
    f[1].nsites = 1;
    snprintf(f[1].site[0].access, sizeof f[1].site[0].access, "read");
    f[1].occurrences = f[1].threads = f[1].threadgroups = 1;
    r.device_checks = 1;
    r.findings = malloc(sizeof f);
    if (r.findings) memcpy(r.findings, f, sizeof f), r.nfindings = 2;
    j = report_record_json(&r);
    CHECK(j != NULL);
    int n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n == 0, "record with findings does not validate: %s", err);
    const cJSON *fs = at(j, "findings", NULL);
    CHECK_NEAR(cJSON_GetArraySize(fs), 2, 0);
    const cJSON *race = cJSON_GetArrayItem(fs, 0), *oob = cJSON_GetArrayItem(fs, 1);
    CHECK(strcmp(cJSON_GetObjectItem(race, "kind")->valuestring, "threadgroup_race") == 0);
    CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(race, "sites"), 1), "line")->valuedouble, 25, 0);
    CHECK(cJSON_IsNull(at(race, "barriers", "opening")));
    CHECK_NEAR(cJSON_GetObjectItem(at(race, "barriers", "closing"), "line")->valuedouble, 30, 0);
    CHECK_NEAR(at(race, "bytes", "last")->valuedouble, 255, 0);
    CHECK(strstr(cJSON_GetObjectItem(race, "summary")->valuestring, "write at k.metal:28") != NULL);
    CHECK_NEAR(at(oob, "bytes", "first")->valuedouble, -4, 0);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(oob, "sites"), 0), "line")));
    /* A kind the schema does not know fails, naming where. */
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "findings"), 0), "kind",
                              cJSON_CreateString("heisenbug"));
    n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n > 0 && strstr(err, "findings[0].kind"), "mutated kind: %d errors: %s", n, err);
    cJSON_Delete(j);
    run_record_free(&r);
    cJSON_Delete(schema);
}

/* "compile" (the software device): phases per kind of variant, an unreported phase
 * null; null for a record without compile facts. */
TEST(report_json_compile_phases_validate) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 5, 100.0);
    cJSON *j = report_record_json(&r);
    char err[512];
    CHECK(j && cJSON_IsNull(at(j, "compile", NULL)));
    cJSON_Delete(j);
    r.compile = (rec_compile){.present = 1, .nkinds = 2, .wall_s = 6.5};
    r.compile.kinds[0] = (rec_compile_kind){"library", 0, 0, 1, 0.25, 0, 0, 0, 0, 0.25};
    r.compile.kinds[1] = (rec_compile_kind){"fibers", 1, 2, 1, 0.001, 0.11, 1.9, 3.5, -1, 6.25};
    j = report_record_json(&r);
    CHECK(j != NULL);
    int n = json_schema_validate(schema, j, err, sizeof err);
    CHECK_MSG(n == 0, "record does not validate: %s", err);
    const cJSON *fb = at(at(j, "compile", "phases"), "fibers", NULL);
    CHECK(fb && cJSON_GetObjectItem(fb, "compiles")->valuedouble == 1);
    CHECK(fb && cJSON_GetObjectItem(fb, "prepasses")->valuedouble == 1);
    CHECK(fb && cJSON_GetObjectItem(fb, "optimise_s")->valuedouble == 1.9);
    CHECK(fb && cJSON_IsNull(cJSON_GetObjectItem(fb, "link_s")));
    CHECK_NEAR(at(j, "compile", "wall_s")->valuedouble, 6.5, 0);
    /* the schema holds the writer to it: a negative phase does not validate */
    cJSON_ReplaceItemInObject((cJSON *)fb, "frontend_s", cJSON_CreateNumber(-0.5));
    CHECK(json_schema_validate(schema, j, err, sizeof err) != 0);
    cJSON_Delete(j);
    run_record_free(&r);
    cJSON_Delete(schema);
}

/* --counters' object (report/counters_json.c) validates against the schema, and so
 * does its null form; ratios with a zero denominator are null. */
TEST(report_json_counters_validate) {
    cJSON *schema = load_schema();
    if (!schema) return;
    run_record r;
    report_test_record(&r, 4, 100.0);
    rec_counters *c = calloc(1, sizeof *c);
    CHECK(c != NULL);
    if (!c) return;
    c->ndispatches = 1;
    c->dispatches = calloc(1, sizeof *c->dispatches);
    rc_dispatch *d = &c->dispatches[0];
    snprintf(d->stage, sizeof d->stage, "kkt");
    snprintf(d->function, sizeof d->function, "k");
    d->device = (rc_mem){.load_bytes = 256, .load_distinct_bytes = 128, .distinct_bytes = 128, .distinct_lines = 1,
                         .accesses = 2, .lines = 4, .min_lines = 2};
    d->flops_half = 64;
    d->simd_instructions = 10;
    d->active_lanes = 160;
    d->atomics_kind[5] = 3;
    d->nbuffers = 1;
    d->buffers[0] = (rc_buffer){.name = "k", .index = 0, .m = d->device};
    c->total = *d;
    r.counters_asked = 1;
    r.counters = c;
    cJSON *j = report_record_json(&r);
    CHECK(j != NULL);
    char err[512];
    CHECK_MSG(json_schema_validate(schema, j, err, sizeof err) == 0, "counters do not validate: %s", err);
    CHECK_NEAR(at(at(j, "counters", "total"), "simd", "lane_utilisation")->valuedouble, 0.5, 0);
    CHECK_NEAR(at(at(at(j, "counters", "total"), "device", "coalescing"), "efficiency", NULL)->valuedouble, 0.5, 0);
    CHECK_NEAR(at(at(j, "counters", "total"), "flops", "total")->valuedouble, 64, 0);
    CHECK_NEAR(at(at(at(j, "counters", "total"), "atomics", "by_kind"), "fetch_add", NULL)->valuedouble, 3, 0);
    CHECK_NEAR(at(at(j, "counters", "total"), "arithmetic_intensity", NULL)->valuedouble, 0.5, 0);
    cJSON_Delete(j);
    /* a backend that cannot count */
    rec_counters_free(c);
    r.counters = NULL;
    snprintf(r.counters_unavailable, sizeof r.counters_unavailable, "the cpu backend cannot count");
    j = report_record_json(&r);
    CHECK(j != NULL);
    CHECK_MSG(json_schema_validate(schema, j, err, sizeof err) == 0, "null counters do not validate: %s", err);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "counters")));
    CHECK(strcmp(cJSON_GetObjectItem(j, "counters_unavailable")->valuestring, "the cpu backend cannot count") == 0);
    cJSON_Delete(j);
    r.counters_asked = 0;
    run_record_free(&r);
    cJSON_Delete(schema);
}
