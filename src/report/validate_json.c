/* validate_json.c — the JSON document of `gdnbench validate --json FILE`.
 *
 *   {"validate": {schema, op, backend, device, checks, seed, ulp_p99_max,
 *                 runs: [{schedule, threadgroup_order}], summary: {cases, pass, fail,
 *                 unsupported, error}, status},
 *    "cases": [{index, sweep, profile, shape: {B: 1, ...}, status, reason, seconds,
 *               runs, bitwise_identical, uses_atomics,
 *               findings: [{kind, note, output, reference, text, first_bad, pattern}],
 *               device_findings: [<finding of the device's checks, as a record's
 *                                  "findings" holds them>] | null,
 *               device_findings_run: index into runs of the run they come from | null,
 *               record: <a schema-1 run record of the judged run> | null}]}
 * Every case of the sweep is listed, unsupported and failed ones included; the
 * embedded record is exactly what `gdnbench <op> --json` writes for that run
 * (report_json.c), so its checks can be read with the same code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report/json_build.h"
#include "report/report_json.h"
#include "report/validate_json.h"

static const char *status_name(validate_status s) {
    switch (s) {
    case VAL_PASS: return "pass";
    case VAL_FAIL: return "fail";
    case VAL_UNSUPPORTED: return "unsupported";
    default: return "error";
    }
}

const char *validate_status_name(validate_status s) { return status_name(s); }

static cJSON *finding_json(json_build *b, const validate_finding *f) {
    cJSON *o = jb_check(b, cJSON_CreateObject());
    if (!o) return NULL;
    jb_str(b, o, "kind", f->kind);
    jb_bool(b, o, "note", f->is_note);
    jb_str_or_null(b, o, "output", f->output);
    jb_str_or_null(b, o, "reference", f->reference);
    jb_str(b, o, "text", f->text);
    jb_str_or_null(b, o, "first_bad", f->first_bad);
    jb_str_or_null(b, o, "pattern", f->pattern);
    return o;
}

static cJSON *case_json(json_build *b, const op_desc *op, int index, const validate_case_spec *spec,
                        const validate_result *res) {
    cJSON *o = jb_check(b, cJSON_CreateObject());
    if (!o) return NULL;
    jb_num(b, o, "index", index);
    jb_str(b, o, "sweep", spec->why);
    jb_str(b, o, "profile", spec->profile->name);
    cJSON *shape = jb_put_obj(b, o, "shape");
    for (int i = 0; shape && i < op->ndims; i++) jb_num(b, shape, op->dims[i].name, (double)spec->dim[i]);
    jb_str(b, o, "status", status_name(res->status));
    jb_str_or_null(b, o, "reason", res->reason);
    jb_num(b, o, "seconds", res->seconds);
    jb_num(b, o, "runs", res->nruns);
    if (res->nruns > 1)
        jb_bool(b, o, "bitwise_identical", res->identical);
    else
        jb_null(b, o, "bitwise_identical");
    jb_bool(b, o, "uses_atomics", res->uses_atomics);
    cJSON *fs = jb_put_array(b, o, "findings");
    for (int i = 0; fs && i < res->nfindings; i++) jb_append(b, fs, finding_json(b, &res->findings[i]));
    if (res->ndev_findings > 0) {
        jb_put(b, o, "device_findings", report_findings_json(res->dev_findings, res->ndev_findings));
        jb_num(b, o, "device_findings_run", res->dev_findings_run);
    } else {
        jb_null(b, o, "device_findings");
        jb_null(b, o, "device_findings_run");
    }
    if (res->have_rec) {
        jb_put(b, o, "record", report_record_json(&res->rec));
    } else {
        jb_null(b, o, "record");
    }
    return o;
}

static cJSON *header_json(json_build *b, const validate_report *vr) {
    cJSON *h = jb_check(b, cJSON_CreateObject());
    if (!h) return NULL;
    jb_num(b, h, "schema", 1);
    jb_str(b, h, "op", vr->op->name);
    jb_str(b, h, "backend", vr->backend);
    jb_str(b, h, "device", vr->device);
    jb_str(b, h, "checks", vr->checks);
    jb_num(b, h, "seed", (double)vr->seed);
    jb_num(b, h, "ulp_p99_max", vr->ulp_p99_max);
    cJSON *runs = jb_put_array(b, h, "runs");
    for (int i = 0; runs && i < vr->nruns; i++) {
        cJSON *r = jb_append_obj(b, runs);
        if (!r) break;
        jb_str(b, r, "schedule", vr->runs[i].schedule);
        jb_str(b, r, "threadgroup_order", vr->runs[i].tg_order);
    }
    int counts[4] = {0};
    for (int i = 0; i < vr->ncases; i++) counts[vr->results[i].status]++;
    cJSON *sum = jb_put_obj(b, h, "summary");
    if (sum) {
        jb_num(b, sum, "cases", vr->ncases);
        jb_num(b, sum, "not_run", vr->nspecs - vr->ncases);
        for (int s = 0; s < 4; s++) jb_num(b, sum, status_name((validate_status)s), counts[s]);
    }
    jb_str(b, h, "status", run_status_name(vr->status));
    return h;
}

int validate_write_json(const char *path, const validate_report *vr, char *err, size_t errlen) {
    json_build b = {1};
    cJSON *doc = jb_check(&b, cJSON_CreateObject());
    if (doc) {
        jb_put(&b, doc, "validate", header_json(&b, vr));
        cJSON *cases = jb_put_array(&b, doc, "cases");
        for (int i = 0; cases && i < vr->ncases; i++)
            jb_append(&b, cases, case_json(&b, vr->op, i + 1, &vr->specs[i], &vr->results[i]));
    }
    char *text = b.ok ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        snprintf(err, errlen, "out of memory while writing the validate JSON to %s", path);
        return -1;
    }
    int rc = 0;
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "--json %s: cannot create the file", path);
        rc = -1;
    } else {
        if (fputs(text, f) == EOF || fputc('\n', f) == EOF) rc = -1;
        if (f == stdout ? fflush(f) != 0 : fclose(f) != 0) rc = -1;
        if (rc) snprintf(err, errlen, "--json %s: write failed (disk full?)", path);
    }
    free(text);
    return rc;
}
