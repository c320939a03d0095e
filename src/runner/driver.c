/* driver.c — the one run driver (driver.h): a plan's cases through the same steps,
 * their outcomes counted, the plan's verdict. */
#include <stdio.h>
#include <string.h>

#include "runner/driver.h"

int driver_check_shapes(const driver_case *cases, int n, char *err, size_t errlen) {
    for (int k = 0; k < n; k++) {
        const op_desc *op = cases[k].op;
        for (int i = 0; i < op->ndims; i++) {
            const op_dim *d = &op->dims[i];
            if (cases[k].dim[i] >= d->min && cases[k].dim[i] <= d->max) continue;
            snprintf(err, errlen, "--%s %lld is out of range for %s: accepted %lld..%lld", d->name,
                     (long long)cases[k].dim[i], op->name, (long long)d->min, (long long)d->max);
            return -1;
        }
        if (op->validate && op->validate(cases[k].dim, err, errlen)) return -1;
    }
    return 0;
}

/* The record of a case whose inputs could not be made. */
static void record_not_run(const backend *b, const driver_case *dc, const char *why, run_record *rec) {
    memset(rec, 0, sizeof *rec);
    rec->op = dc->op;
    memcpy(rec->dim, dc->dim, sizeof rec->dim);
    rec->status = RUN_ERROR;
    snprintf(rec->error, sizeof rec->error, "%s", why);
    snprintf(rec->device.backend, sizeof rec->device.backend, "%s", b->desc->name);
}

static driver_outcome outcome_of(run_status s) {
    return s == RUN_PASS ? DRIVER_PASS : s == RUN_FAIL ? DRIVER_FAIL : DRIVER_ERROR;
}

/* Case k through the default steps into p->recs[k].  -1 with err set when a hook
 * stopped the plan. */
static int run_steps(const driver_plan *p, const driver_hooks *h, int k, char *err, size_t errlen) {
    const driver_case *dc = &p->cases[k];
    run_record *rec = p->recs[k];
    char why[512] = "";
    int stop = 0;
    op_case *c = h->make_case ? h->make_case(h->user, k, dc, why, sizeof why, &stop)
                              : op_case_new(dc->op, dc->dim, p->o->seed, why, sizeof why);
    if (!c && stop) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    /* this case's options: a hook may set its capture path or checks */
    run_opts o = *p->o;
    if (h->before) h->before(h->user, k, c, &o);
    if (!c) {
        record_not_run(p->b, dc, why, rec);
        return 0;
    }
    runner_run_case(p->b, c, &o, rec);
    if (p->b->release_case) p->b->release_case(p->b);
    int rc = h->after ? h->after(h->user, k, c, rec, err, errlen) : 0;
    op_case_free(c);
    return rc;
}

int driver_run(const driver_plan *p, const driver_hooks *h, driver_tally *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    int k = 0;
    while (k < p->ncases) {
        driver_outcome out;
        if (h->run) {
            out = h->run(h->user, k);
        } else {
            if (run_steps(p, h, k, err, errlen) != 0) return -1;
            out = outcome_of(p->recs[k]->status);
        }
        k++;
        t->npass += out == DRIVER_PASS;
        t->nfail += out == DRIVER_FAIL;
        t->nerror += out == DRIVER_ERROR;
        t->nskipped += out == DRIVER_SKIPPED;
        if (h->print) h->print(h->user, k - 1, out);
        if (out == DRIVER_ERROR && p->stop_on_error) break;
    }
    return k;
}

run_status driver_verdict(const driver_tally *t) {
    if (t->nerror) return RUN_ERROR;
    return t->nfail || (t->nskipped && !t->npass) ? RUN_FAIL : RUN_PASS;
}
