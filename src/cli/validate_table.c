/* validate_table.c — printing `gdnbench validate` results for a person. */
#include <stdio.h>
#include <string.h>

#include "cli/table.h"
#include "cli/validate_table.h"

void validate_table_header(FILE *f, const validate_report *vr, const run_opts *ro) {
    fprintf(f, "gdnbench validate %s — %s\n", vr->op->name, vr->op->summary);
    if (ro->shader && ro->function)
        fprintf(f, "kernel %s: %s (main stage; other stages: the file's kernels of their default names, else ours)",
                ro->shader, ro->function);
    else if (ro->shader)
        fprintf(f, "kernels: %s's of the stages' default names, else ours", ro->shader);
    else if (ro->nstage_choices == 0)
        fprintf(f, "kernel: gdnbench's own (shaders/)");
    for (int i = 0; i < ro->nstage_choices; i++) {
        const run_stage_choice *c = &ro->stage_choices[i];
        fprintf(f, "%sstage %s: %s%s%s", i || ro->shader ? "; " : "kernels: ours, but ", c->stage, c->file,
                c->function[0] ? ":" : "", c->function);
    }
    for (int i = 0; i < ro->nconstants; i++)
        fprintf(f, "%s%d=%s", i ? " " : " constants ", ro->constants[i].index, ro->constants[i].value);
    fprintf(f, "\ndevice %s (%s), checks %s, seed %llu\n", vr->device, vr->backend, vr->checks,
            (unsigned long long)vr->seed);
    if (vr->nruns > 1) {
        fprintf(f, "runs per case (schedule/threadgroup order):");
        for (int i = 0; i < vr->nruns; i++)
            fprintf(f, " %s/%s%s", vr->runs[i].schedule, vr->runs[i].tg_order, i == vr->nruns - 1 ? " (repeat)" : ",");
        fprintf(f, "\n");
    }
    if (vr->self_references & CHECK_PARITY)
        fprintf(f, "bounds: the op's tolerances vs f64 (the cpu backend's output is the bf16-parity reference: "
                   "parity is self, not a check)\n\n");
    else
        fprintf(f, "bounds: the op's tolerances vs f64 and bf16-parity, bf16 outputs p99 <= %d ulp vs parity\n\n",
                vr->ulp_p99_max);
    fprintf(f, "  %3s  %-8s %-15s %-40s %-12s %s\n", "#", "sweep", "profile", "shape", "result", "time");
}

void validate_table_case(FILE *f, const validate_report *vr, int k) {
    const validate_case_spec *s = &vr->specs[k];
    const validate_result *r = &vr->results[k];
    char shape[160], t[32];
    table_shape_str(vr->op, s->dim, shape, sizeof shape);
    table_fmt_us(r->seconds * 1e6, t, sizeof t);
    const char *res = r->status == VAL_PASS ? "PASS" : r->status == VAL_FAIL ? "FAIL"
                      : r->status == VAL_UNSUPPORTED ? "unsupported" : "ERROR";
    fprintf(f, "  %3d  %-8s %-15s %-40s %-12s %s\n", k + 1, s->why, s->profile->name, shape, res, t);
    if (r->status == VAL_UNSUPPORTED || r->status == VAL_ERROR) fprintf(f, "         %s\n", r->reason);
    for (int i = 0; i < r->nfindings; i++) {
        const validate_finding *x = &r->findings[i];
        fprintf(f, "       %s %s\n", x->is_note ? "note:" : "-", x->text);
        if (x->pattern[0]) fprintf(f, "         pattern: %s\n", x->pattern);
        if (strcmp(x->kind, "fault") == 0 && r->ndev_findings > 0)
            dev_findings_print(f, r->dev_findings, r->ndev_findings, vr->max_findings, "         ");
    }
    fflush(f);
}

void validate_table_summary(FILE *f, const validate_report *vr) {
    int counts[4] = {0};
    for (int i = 0; i < vr->ncases; i++) counts[vr->results[i].status]++;
    fprintf(f, "\n%s: %d case%s: %d passed, %d failed, %d unsupported (kernel limits), %d could not run",
            vr->op->name, vr->ncases, vr->ncases == 1 ? "" : "s", counts[VAL_PASS], counts[VAL_FAIL],
            counts[VAL_UNSUPPORTED], counts[VAL_ERROR]);
    if (vr->ncases < vr->nspecs) fprintf(f, ", %d not run", vr->nspecs - vr->ncases);
    fprintf(f, " -> %s\n", vr->status == RUN_PASS ? "PASS" : vr->status == RUN_FAIL ? "FAIL" : "ERROR");
}
