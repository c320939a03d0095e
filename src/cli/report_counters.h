/* report_counters.h — `gdnbench report`'s sections on exact counters (issue 31):
 *
 *   Counters     per op, one row per counted case (shape or kernel case, kernel): the
 *                software device's exact counts from each record's `counters.total`;
 *                records whose backend could not count are listed under it with why.
 *   Floor model  each GPU timing (backend metal) joined with a counted run of the same
 *                work — same op, kernel function, source sha256, constants and shape
 *                or case — its measured median as a percentage of that chip's floor
 *                (report/floor_model.h): a MODEL, labelled so.
 *
 * Also the Markdown and HTML escaping the report's writers share. */
#ifndef GDN_REPORT_COUNTERS_H
#define GDN_REPORT_COUNTERS_H

#include <stdio.h>

#include "report/report_load.h"

/* op's counters and floor-model sections, to md and (when not NULL) html; nothing
 * when no record of op carries `counters`.  0, or -1 when memory runs out. */
int report_counters_write(FILE *md, FILE *html, const report_set *set, const char *op);

void report_md_escape(FILE *f, const char *s);
void report_html_escape(FILE *f, const char *s);

#endif
