/* validate_result.c — one validate case's result: the list of findings that the run
 * (validate_exec.c) and the verdict (validate_judge.c) add to, and what it owns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/validate.h"

validate_finding *validate_add_finding(validate_result *res, const char *kind, int is_note) {
    if (res->nfindings >= VALIDATE_MAX_FINDINGS) return NULL;
    validate_finding *f = &res->findings[res->nfindings++];
    memset(f, 0, sizeof *f);
    snprintf(f->kind, sizeof f->kind, "%s", kind);
    f->is_note = is_note;
    return f;
}

void validate_result_free(validate_result *res) {
    if (res->have_rec) run_record_free(&res->rec);
    res->have_rec = 0;
    free(res->dev_findings);
    res->dev_findings = NULL;
    res->ndev_findings = 0;
}
