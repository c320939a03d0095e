/* validate_table.h — the human output of `gdnbench validate`: a header, one line per
 * case as it finishes (with the findings of a failed case under it), a summary. */
#ifndef GDN_VALIDATE_TABLE_H
#define GDN_VALIDATE_TABLE_H

#include <stdio.h>

#include "runner/validate_report.h"

void validate_table_header(FILE *f, const validate_report *vr, const run_opts *ro);
void validate_table_case(FILE *f, const validate_report *vr, int k);
void validate_table_summary(FILE *f, const validate_report *vr);

#endif
