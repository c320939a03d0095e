/* validate_report.h — the results of one `gdnbench validate` invocation, as the
 * table printer (src/cli/validate_table.c) and the JSON writer (src/report/validate_json.c)
 * see them. */
#ifndef GDN_VALIDATE_REPORT_H
#define GDN_VALIDATE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "runner/validate.h"

typedef struct validate_report {
    const op_desc *op;
    const char *backend;          /* "sw" (or "cpu" when calibrating the references) */
    int self_references;          /* the backend's CHECK_* self references (cpu: parity) */
    const char *device;
    const char *checks;           /* software device checks: "full" */
    uint64_t seed;
    int ulp_p99_max;
    int nruns;
    validate_run_cfg runs[VALIDATE_NRUNS];
    const validate_case_spec *specs;
    int nspecs;                   /* cases in the sweep */
    const validate_result *results;
    int ncases;                   /* cases run (the first nspecs may stop early on an error) */
    int max_findings;             /* device findings shown per case in the table */
    run_status status;
} validate_report;

#endif
