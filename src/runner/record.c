/* record.c — ownership of a run_record's sample arrays and findings, its warnings,
 * and the words of its status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/record.h"

static const char *const status_names[] = {"pass", "fail", "error"};

const char *run_status_name(run_status s) { return status_names[s]; }

int run_status_parse(const char *word) {
    for (int i = 0; word && i < 3; i++)
        if (strcmp(word, status_names[i]) == 0) return i;
    return -1;
}

void run_record_free(run_record *r) {
    free(r->timing.samples);
    free(r->wall.samples);
    free(r->warmup_timing.samples);
    r->timing.samples = r->wall.samples = r->warmup_timing.samples = NULL;
    for (int i = 0; i < r->nstages; i++) {
        free(r->stages[i].timing.samples);
        r->stages[i].timing.samples = NULL;
    }
    free(r->findings);
    r->findings = NULL;
    rec_counters_free(r->counters);
    r->counters = NULL;
    r->nfindings = 0;
}

void run_record_warn(run_record *r, const char *text) {
    if (r->nwarnings >= REC_MAX_WARNINGS) return;
    snprintf(r->warnings[r->nwarnings++], sizeof r->warnings[0], "%s", text);
}
