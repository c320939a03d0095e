/* validate_json.h — the JSON document of `gdnbench validate --json FILE`, written from
 * the validate_report the sweep produced (runner/validate_report.h); the layout is in
 * validate_json.c. */
#ifndef GDN_REPORT_VALIDATE_JSON_H
#define GDN_REPORT_VALIDATE_JSON_H

#include <stddef.h>

#include "runner/validate_report.h"

/* "pass", "fail", "unsupported" or "error": the word the document uses. */
const char *validate_status_name(validate_status s);

/* Writes the document to path ("-" = stdout).  0, or -1 with err set. */
int validate_write_json(const char *path, const validate_report *vr, char *err, size_t errlen);

#endif
