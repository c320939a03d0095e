/* counters_json.h — a record's exact counters as its JSON key `counters`
 * (results/README.md; the contract: per dispatch, and "total" for the whole op or
 * kernel case).  Absent when --counters was not asked; null with
 * "counters_unavailable" when the backend could not count. */
#ifndef GDN_REPORT_COUNTERS_JSON_H
#define GDN_REPORT_COUNTERS_JSON_H

#include <cjson/cJSON.h>

#include "report/json_build.h"
#include "runner/record.h"

void report_add_counters(json_build *b, cJSON *root, const run_record *r);

#endif
