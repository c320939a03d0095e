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

/* cJSON_Add* return NULL when memory runs out; one flag collects every failure. */
static void need(int *ok, const void *p) {
    if (!p) *ok = 0;
}

static void add_str_or_null(int *ok, cJSON *o, const char *key, const char *s) {
    need(ok, s && s[0] ? cJSON_AddStringToObject(o, key, s) : cJSON_AddNullToObject(o, key));
}

static cJSON *finding_json(int *ok, const validate_finding *f) {
    cJSON *o = cJSON_CreateObject();
    need(ok, o);
    if (!o) return NULL;
    need(ok, cJSON_AddStringToObject(o, "kind", f->kind));
    need(ok, cJSON_AddBoolToObject(o, "note", f->is_note));
    add_str_or_null(ok, o, "output", f->output);
    add_str_or_null(ok, o, "reference", f->reference);
    need(ok, cJSON_AddStringToObject(o, "text", f->text));
    add_str_or_null(ok, o, "first_bad", f->first_bad);
    add_str_or_null(ok, o, "pattern", f->pattern);
    return o;
}

static cJSON *case_json(int *ok, const op_desc *op, int index, const validate_case_spec *spec,
                        const validate_result *res) {
    cJSON *o = cJSON_CreateObject();
    need(ok, o);
    if (!o) return NULL;
    need(ok, cJSON_AddNumberToObject(o, "index", index));
    need(ok, cJSON_AddStringToObject(o, "sweep", spec->why));
    need(ok, cJSON_AddStringToObject(o, "profile", spec->profile->name));
    cJSON *shape = cJSON_AddObjectToObject(o, "shape");
    need(ok, shape);
    for (int i = 0; shape && i < op->ndims; i++) need(ok, cJSON_AddNumberToObject(shape, op->dims[i].name, (double)spec->dim[i]));
    need(ok, cJSON_AddStringToObject(o, "status", status_name(res->status)));
    add_str_or_null(ok, o, "reason", res->reason);
    need(ok, cJSON_AddNumberToObject(o, "seconds", res->seconds));
    need(ok, cJSON_AddNumberToObject(o, "runs", res->nruns));
    need(ok, res->nruns > 1 ? cJSON_AddBoolToObject(o, "bitwise_identical", res->identical)
                            : cJSON_AddNullToObject(o, "bitwise_identical"));
    need(ok, cJSON_AddBoolToObject(o, "uses_atomics", res->uses_atomics));
    cJSON *fs = cJSON_AddArrayToObject(o, "findings");
    need(ok, fs);
    for (int i = 0; fs && i < res->nfindings; i++) {
        cJSON *f = finding_json(ok, &res->findings[i]);
        if (f && !cJSON_AddItemToArray(fs, f)) {
            cJSON_Delete(f);
            *ok = 0;
        }
    }
    if (res->ndev_findings > 0) {
        cJSON *df = report_findings_json(res->dev_findings, res->ndev_findings);
        need(ok, df);
        if (df && !cJSON_AddItemToObject(o, "device_findings", df)) {
            cJSON_Delete(df);
            *ok = 0;
        }
        need(ok, cJSON_AddNumberToObject(o, "device_findings_run", res->dev_findings_run));
    } else {
        need(ok, cJSON_AddNullToObject(o, "device_findings"));
        need(ok, cJSON_AddNullToObject(o, "device_findings_run"));
    }
    if (res->have_rec) {
        cJSON *r = report_record_json(&res->rec);
        need(ok, r);
        if (r && !cJSON_AddItemToObject(o, "record", r)) {
            cJSON_Delete(r);
            *ok = 0;
        }
    } else {
        need(ok, cJSON_AddNullToObject(o, "record"));
    }
    return o;
}

static cJSON *header_json(int *ok, const validate_report *vr) {
    cJSON *h = cJSON_CreateObject();
    need(ok, h);
    if (!h) return NULL;
    need(ok, cJSON_AddNumberToObject(h, "schema", 1));
    need(ok, cJSON_AddStringToObject(h, "op", vr->op->name));
    need(ok, cJSON_AddStringToObject(h, "backend", vr->backend));
    need(ok, cJSON_AddStringToObject(h, "device", vr->device));
    need(ok, cJSON_AddStringToObject(h, "checks", vr->checks));
    need(ok, cJSON_AddNumberToObject(h, "seed", (double)vr->seed));
    need(ok, cJSON_AddNumberToObject(h, "ulp_p99_max", vr->ulp_p99_max));
    cJSON *runs = cJSON_AddArrayToObject(h, "runs");
    need(ok, runs);
    for (int i = 0; runs && i < vr->nruns; i++) {
        cJSON *r = cJSON_CreateObject();
        need(ok, r);
        if (!r) break;
        need(ok, cJSON_AddStringToObject(r, "schedule", vr->runs[i].schedule));
        need(ok, cJSON_AddStringToObject(r, "threadgroup_order", vr->runs[i].tg_order));
        if (!cJSON_AddItemToArray(runs, r)) {
            cJSON_Delete(r);
            *ok = 0;
        }
    }
    int counts[4] = {0};
    for (int i = 0; i < vr->ncases; i++) counts[vr->results[i].status]++;
    cJSON *sum = cJSON_AddObjectToObject(h, "summary");
    need(ok, sum);
    if (sum) {
        need(ok, cJSON_AddNumberToObject(sum, "cases", vr->ncases));
        need(ok, cJSON_AddNumberToObject(sum, "not_run", vr->nspecs - vr->ncases));
        for (int s = 0; s < 4; s++) need(ok, cJSON_AddNumberToObject(sum, status_name((validate_status)s), counts[s]));
    }
    need(ok, cJSON_AddStringToObject(h, "status", run_status_name(vr->status)));
    return h;
}

int validate_write_json(const char *path, const validate_report *vr, char *err, size_t errlen) {
    int ok = 1;
    cJSON *doc = cJSON_CreateObject();
    need(&ok, doc);
    if (doc) {
        cJSON *h = header_json(&ok, vr);
        if (h && !cJSON_AddItemToObject(doc, "validate", h)) {
            cJSON_Delete(h);
            ok = 0;
        }
        cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
        need(&ok, cases);
        for (int i = 0; cases && i < vr->ncases; i++) {
            cJSON *c = case_json(&ok, vr->op, i + 1, &vr->specs[i], &vr->results[i]);
            if (c && !cJSON_AddItemToArray(cases, c)) {
                cJSON_Delete(c);
                ok = 0;
            }
        }
    }
    char *text = ok ? cJSON_Print(doc) : NULL;
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
