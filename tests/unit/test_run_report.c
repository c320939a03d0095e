/* test_run_report.c — real runs of every op on the cpu backend produce JSON records
 * that validate against results/schema-1.json, with the values the run measured. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/table.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "runner/runner.h"
#include "test.h"

static int run_small(const op_desc *op, run_record *rec, char *err, size_t errlen) {
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    /* Small but with a tail chunk: T=100, few heads, head dims 64. */
    static const struct {
        const char *name;
        int64_t v;
    } small[] = {{"T", 100}, {"H", 2}, {"Hg", 1}, {"K", 64}, {"V", 64}, {"B", 1}};
    for (size_t k = 0; k < sizeof small / sizeof small[0]; k++) {
        int i = op_dim_index(op, small[k].name);
        if (i >= 0) dim[i] = small[k].v;
    }
    op_case *c = op_case_new(op, dim, 7, err, errlen);
    if (!c) return -1;
    backend *b = backend_cpu_open(err, errlen);
    if (!b) {
        op_case_free(c);
        return -1;
    }
    run_opts o = {.backend = "cpu", .seed = 7, .warmup = 1, .iters = 3, .check = CHECK_BOTH};
    int rc = runner_run_case(b, c, &o, rec);
    b->release_case(b);
    b->destroy(b);
    op_case_free(c);
    return rc;
}

TEST(run_report_every_gdn_op_validates_against_schema) {
    char path[1024], err[512];
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *schema = json_read_file(path, err, sizeof err);
    CHECK_MSG(schema != NULL, "%s", err);
    if (!schema) return;
    int nops = 0;
    for (int i = 0; op_table[i]; i++) {
        const op_desc *op = op_table[i];
        if (strcmp(op->group, "gdn") != 0) continue;
        run_record rec;
        int rc = run_small(op, &rec, err, sizeof err);
        CHECK_MSG(rc == 0, "%s: %s", op->name, rc ? err : "");
        if (rc != 0) continue;
        nops++;
        CHECK_MSG(rec.status == RUN_PASS, "%s: status %s %s", op->name, run_status_name(rec.status), rec.error);
        CHECK_EQ_INT(rec.timing.n, 3);
        cJSON *j = report_record_json(&rec);
        char verr[512] = "";
        CHECK_MSG(json_schema_validate(schema, j, verr, sizeof verr) == 0, "%s: %s", op->name, verr);
        /* The JSON carries what was measured, not placeholders. */
        const cJSON *timing = cJSON_GetObjectItemCaseSensitive(j, "timing");
        const cJSON *median = cJSON_GetObjectItemCaseSensitive(timing, "median");
        CHECK(cJSON_IsNumber(median) && median->valuedouble == rec.timing.median);
        /* The cpu backend's output is the bf16-parity reference: every output is
         * checked against f64 only, and parity is listed as not checked (self). */
        const cJSON *checks = cJSON_GetObjectItemCaseSensitive(j, "check");
        CHECK_MSG(cJSON_GetArraySize(checks) == rec.nchecks && rec.nchecks >= 1, "%s: %d checks", op->name,
                  rec.nchecks);
        for (int k = 0; k < rec.nchecks; k++)
            CHECK_MSG(strcmp(rec.checks[k].reference, "f64") == 0, "%s: a %s check on the cpu backend", op->name,
                      rec.checks[k].reference);
        CHECK_EQ_INT(rec.nself, rec.nchecks);
        const cJSON *self = cJSON_GetObjectItemCaseSensitive(j, "not_checked");
        CHECK_EQ_INT(cJSON_GetArraySize(self), rec.nself);
        for (int k = 0; k < cJSON_GetArraySize(self); k++) {
            const cJSON *e = cJSON_GetArrayItem(self, k);
            CHECK(strcmp(cJSON_GetObjectItem(e, "reference")->valuestring, "bf16-parity") == 0);
            CHECK(strcmp(cJSON_GetObjectItem(e, "reason")->valuestring, "self") == 0);
        }
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
        CHECK(strcmp(cJSON_GetObjectItemCaseSensitive(dev, "backend")->valuestring, "cpu") == 0);
        cJSON_Delete(j);
        run_record_free(&rec);
    }
    CHECK_MSG(nops >= 9, "only %d GDN ops ran", nops);
    cJSON_Delete(schema);
}

/* A run on a device named like a virtual machine's GPU carries the warning in the
 * record (so in the JSON) and in the table, above its numbers; other runs do not. */
TEST(run_report_paravirtual_device_is_flagged) {
    const op_desc *op = op_find("cumsum");
    CHECK(op != NULL);
    if (!op) return;
    char err[256];
    for (int pv = 0; pv < 2; pv++) {
        int64_t dim[OP_MAX_DIMS];
        for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
        int ti = op_dim_index(op, "T");
        if (ti >= 0) dim[ti] = 64;
        op_case *c = op_case_new(op, dim, 1, err, sizeof err);
        backend *b = backend_cpu_open(err, sizeof err);
        CHECK(c && b);
        if (!c || !b) {
            op_case_free(c);
            if (b) b->destroy(b);
            return;
        }
        if (pv) snprintf(b->device_name, sizeof b->device_name, "Apple Paravirtual device");
        run_opts o = {.backend = "cpu", .warmup = 0, .iters = 1, .check = CHECK_NONE};
        run_record rec;
        runner_run_case(b, c, &o, &rec);
        CHECK_EQ_INT(rec.device.paravirtual, pv);
        CHECK_EQ_INT(rec.nwarnings, pv);
        FILE *f = tmpfile();
        CHECK(f != NULL);
        if (f) {
            table_print_record(f, &rec);
            char text[8192] = "";
            rewind(f);
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = 0;
            fclose(f);
            const char *w = strstr(text, "WARNING paravirtual");
            const char *t = strstr(text, "time (");
            CHECK_MSG(pv ? (w && t && w < t) : !w, "table:\n%s", text);
        }
        cJSON *j = report_record_json(&rec);
        CHECK(j && cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "device"), "paravirtual")));
        CHECK(j && cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")) == pv);
        cJSON_Delete(j);
        run_record_free(&rec);
        b->release_case(b);
        b->destroy(b);
        op_case_free(c);
    }
}
