/* test_kcase_record.c — a kernel case's run as a JSON report record
 * (src/runner/kcase_record.c + the "case" key of src/report/report_json.c): valid
 * against results/schema-1.json, with the case's name, file, digests and bindings,
 * a check per expected buffer (reference "expected"); a "case" key that breaks the
 * schema is caught. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report/report_load.h"
#include "report_testdata.h"
#include "runner/kcase_run.h"
#include "test.h"

static const char two_pass[] =
    "{\"case\": 1, \"name\": \"two\", \"source\": {\"text\": \"kernel void a() {}\"},\n"
    " \"dispatches\": [{\"function\": \"a\", \"dispatch\": {\"grid\": [64], \"threadgroup\": [32]}},\n"
    "  {\"function\": \"b\", \"dispatch\": {\"threadgroups\": [2], \"threadgroup\": [32], \"threadgroup_memory\": {\"0\": 64}}}],\n"
    " \"buffers\": {\"x\": {\"dtype\": \"int8\", \"shape\": [64], \"readonly\": true},\n"
    "  \"y\": {\"dtype\": \"float16\", \"shape\": [64], \"expect\": {\"value\": 1, \"ulp\": 1}}}}";

TEST(kcase_record_is_a_valid_report) {
    char err[512], path[1024];
    kc_case *c = kc_parse(two_pass, strlen(two_pass), "two.json", ".", err, sizeof err);
    CHECK_MSG(c != NULL, "%s", err);
    if (!c) return;
    kc_result r;
    memset(&r, 0, sizeof r);
    r.prepared = 1;
    r.nbufs = 2;
    snprintf(r.bufs[0].name, sizeof r.bufs[0].name, "x");
    r.bufs[0].dtype = KC_I8, r.bufs[0].numel = 64, r.bufs[0].readonly = 1, r.bufs[0].pass = 1, r.bufs[0].index = 0;
    snprintf(r.bufs[1].name, sizeof r.bufs[1].name, "y");
    r.bufs[1].dtype = KC_F16, r.bufs[1].numel = 64, r.bufs[1].writable = 1, r.bufs[1].checked = 1, r.bufs[1].index = 1;
    r.bufs[1].bad = 2, r.bufs[1].first_bad = 5, r.bufs[1].atol = 0, r.bufs[1].rtol = 0, r.bufs[1].ulp = 3;
    /* the record as runner_run_case leaves it: device, three timed samples, a pass */
    run_record rec;
    memset(&rec, 0, sizeof rec);
    snprintf(rec.device.name, sizeof rec.device.name, "gdnbench software device");
    snprintf(rec.device.backend, sizeof rec.device.backend, "sw");
    rec.device.emulated = 1;
    rec.device.gpu_cores = -1;
    rec.device.bandwidth_gbps = rec.device.fp32_tflops = rec.device.fp16_tflops = -1;
    rec.device.bandwidth_verified = rec.device.flops_verified = -1;
    rec.seed = 7;
    rec.timing.samples = malloc(3 * sizeof(double));
    CHECK(rec.timing.samples != NULL);
    if (!rec.timing.samples) return;
    rec.timing.samples[0] = 10, rec.timing.samples[1] = 12, rec.timing.samples[2] = 11;
    rec.timing.n = rec.iterations = rec.determinism_runs = 3;
    stats_compute(&rec.timing);
    snprintf(rec.timing_source, sizeof rec.timing_source, "gpu");
    snprintf(rec.sampling, sizeof rec.sampling, "iters");
    snprintf(rec.stop, sizeof rec.stop, "iters");
    rec.noise = -1;
    rec.bitwise_identical = 1;
    rec.status = RUN_PASS;
    CHECK(kc_record_case(c, c, &r, &rec, err, sizeof err) == 0);
    cJSON *j = report_record_json(&rec);
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *schema = json_read_file(path, err, sizeof err);
    CHECK_MSG(j && schema, "%s", err);
    if (j && schema) {
        int n = json_schema_validate(schema, j, err, sizeof err);
        CHECK_MSG(n == 0, "%s", err);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "case");
        CHECK(k && strcmp(cJSON_GetObjectItemCaseSensitive(k, "name")->valuestring, "two") == 0);
        CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k, "buffers")) == 2);
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(j, "status")->valuestring, "fail") == 0);
        const cJSON *chk = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "check"), 0);
        CHECK(chk && strcmp(cJSON_GetObjectItemCaseSensitive(chk, "reference")->valuestring, "expected") == 0);
        /* negative control: a buffer without its index breaks the schema */
        cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(k, "buffers"), 0), "index");
        CHECK(json_schema_validate(schema, j, err, sizeof err) > 0 && strstr(err, "case.buffers[0]"));
    }
    cJSON_Delete(j);
    cJSON_Delete(schema);
    run_record_free(&rec);
    kc_free(c);
}
