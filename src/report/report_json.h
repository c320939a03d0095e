/* report_json.h — the JSON report, schema 1 (../shared/spec/report.md).
 *
 * One run_record becomes one JSON object with a fixed key order; a run over several
 * ops or shapes writes an array of them.  results/schema-1.json is the schema of
 * what this writes (tests/unit/test_report_json.c checks the two agree), and the
 * README documents every key.  compare and report read these files back, never the
 * struct.
 *
 * Conventions of the writer:
 *   - a figure that is unknown or not finite is written as null (JSON has no NaN):
 *     chip-table peaks < 0, stats of an empty sample set, ulp_p99 < 0,
 *     first_bad_index -1, max_abs of an output holding NaN (its nan count says so);
 *   - strings that are empty in the record (kernel source for cpu, error when none)
 *     are written as null;
 *   - host.hostname_hash is a 16-hex-digit prefix of SHA-256("gdnbench:" hostname),
 *     so records from one machine can be grouped without naming the machine. */
#ifndef GDN_REPORT_JSON_H
#define GDN_REPORT_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "runner/record.h"

#define REPORT_SCHEMA_VERSION 1

/* A new cJSON object for one record (caller frees with cJSON_Delete), or NULL when
 * memory runs out. */
cJSON *report_record_json(const run_record *r);

/* The array of the device's findings as the record's "findings" key holds it (also
 * used by the validate document), or NULL when memory runs out. */
cJSON *report_findings_json(const dev_finding *list, int n);

/* Writes one object (n == 1) or an array (n != 1) to path, or stdout for "-".  A
 * file is written to PATH.tmp and renamed, so a reader never sees half a report.
 * Returns 0, or -1 with a one-line message naming the file in err. */
int report_write(const char *path_or_dash, run_record *const *recs, int n, char *err, size_t errlen);

#endif
