/* gdn_test_util.h — helpers for the GDN reference tests: build an op case by name
 * with dimension overrides, run its references, compare arrays. */
#ifndef GDN_TEST_UTIL_H
#define GDN_TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"
#include "ref/gdn_ref.h"
#include "test.h"

/* A case of `op` at its default dims with overrides "name", value, ..., NULL. */
static inline op_case *gt_case(const char *opname, uint64_t seed, ...) {
    const op_desc *op = op_find(opname);
    if (!op) return NULL;
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    va_list ap;
    va_start(ap, seed);
    for (const char *name; (name = va_arg(ap, const char *));) {
        int64_t v = va_arg(ap, int64_t);
        int i = op_dim_index(op, name);
        if (i >= 0) dim[i] = v;
    }
    va_end(ap);
    char err[256];
    op_case *c = op_case_new(op, dim, seed, err, sizeof err);
    if (!c) printf("  case %s: %s\n", opname, err);
    return c;
}

/* Output arrays for every BUF_OUT/BUF_INOUT of the case (NULL elsewhere). */
static inline double **gt_outs(const op_case *c) {
    double **out = calloc(OP_MAX_BUFS, sizeof *out);
    for (int i = 0; i < c->op->nbufs; i++) {
        buf_role r = c->op->bufs[i].role;
        if (r == BUF_OUT || r == BUF_INOUT) out[i] = calloc((size_t)tensor_numel(c->t[i]), sizeof(double));
    }
    return out;
}

static inline void gt_outs_free(double **out) {
    if (!out) return;
    for (int i = 0; i < OP_MAX_BUFS; i++) free(out[i]);
    free(out);
}

typedef struct gt_err {
    double max_abs, rel_l2, worst_ratio; /* worst |d| / (atol + rtol|r|) */
    int64_t nan;
} gt_err;

static inline gt_err gt_compare(const double *x, const double *r, int64_t n, double atol, double rtol) {
    gt_err e = {0, 0, 0, 0};
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i]) || isnan(r[i])) {
            e.nan++;
            continue;
        }
        double d = fabs(x[i] - r[i]);
        if (d > e.max_abs) e.max_abs = d;
        double bound = atol + rtol * fabs(r[i]);
        if (bound > 0 && d / bound > e.worst_ratio) e.worst_ratio = d / bound;
        num += d * d;
        den += r[i] * r[i];
    }
    e.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
    return e;
}

/* Does x pass the op_tol of buffer b for reference kind k against r? */
static inline int gt_passes(const op_buf *b, ref_kind k, const double *x, const double *r, int64_t n, gt_err *out) {
    op_tol t = b->tol[k];
    gt_err e = gt_compare(x, r, n, t.atol, t.rtol);
    if (out) *out = e;
    return e.nan == 0 && e.worst_ratio <= 1.0 && (t.rel_l2 == 0 || e.rel_l2 <= t.rel_l2);
}

static inline double gt_rel_l2(const double *x, const double *r, int64_t n) { return gt_compare(x, r, n, 0, 0).rel_l2; }

static inline int64_t gt_count_nan(const double *x, int64_t n) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += !isfinite(x[i]);
    return c;
}

#endif
