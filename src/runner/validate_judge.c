/* validate_judge.c — the verdict on one run's outputs (issue 7 points 3 and 4).
 *
 * The runner's checks (runner.c, check.c) compare every output with the f64 and the
 * bf16-parity references under the op's measured tolerances (op->bufs[i].tol: the
 * parity bounds sit a few bf16 ulps above correct-kernel noise, the f64 ones are
 * the pipeline's error budget).  On top of those, validate adds a bound that a loose
 * --atol/--rtol cannot widen: for bf16/f16 outputs, the 99th percentile of the
 * distance to the parity reference rounded to the output type must stay within
 * ctx->ulp_p99_max units in the last place (default 4: a kernel that rounds at
 * other points than parity lands at 1-2, one that skips a bf16 rounding or loses
 * precision lands far above).  rel_l2 bounds are never overridden either.
 *
 * For every failing check the first bad coordinates and the pattern of the bad
 * elements are recorded; when only rel_l2 failed (no single element out of bounds)
 * the pattern is that of the largest errors (above a quarter of the maximum). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/check.h"
#include "runner/validate.h"

static int32_t ordered16(uint16_t b) { return (b & 0x8000u) ? -(int32_t)(b & 0x7fffu) : (int32_t)(b & 0x7fffu); }

/* Distance in units in the last place between element i of t (bf16/f16) and r
 * rounded to t's type; -1 when either is not finite. */
static int32_t ulp_distance(const tensor *t, int64_t i, double r) {
    if (!isfinite(r) || is_poison(t->dtype, t->data, i)) return -1;
    uint16_t xb = ((const uint16_t *)t->data)[i];
    uint16_t rb = t->dtype == DT_BF16 ? bf16_from_f32((float)r) : f16_from_f32((float)r);
    double x = dtype_load(t->dtype, t->data, (size_t)i);
    if (!isfinite(x)) return -1;
    return abs(ordered16(xb) - ordered16(rb));
}

static int elem_bad(const tensor *t, int64_t i, double r, op_tol tol) {
    if (is_poison(t->dtype, t->data, i)) return isfinite(r) || !isnan(r);
    double x = dtype_load(t->dtype, t->data, (size_t)i);
    if (isnan(x)) return !isnan(r);
    if (isinf(x)) return x != r;
    if (!isfinite(r)) return 1;
    return fabs(x - r) > tol.atol + tol.rtol * fabs(r);
}

typedef enum mask_kind { MASK_TOL, MASK_LARGEST, MASK_ULP } mask_kind;

/* Builds the mask of mask_kind for output t against ref and describes it. */
static void describe(const tensor *t, const double *ref, const rec_check *rc, mask_kind mk, int ulp_max, int64_t bt,
                     validate_finding *f) {
    int64_t n = tensor_numel(t), first = -1;
    unsigned char *mask = calloc((size_t)(n ? n : 1), 1);
    if (!mask) return;
    op_tol tol = {rc->atol, rc->rtol, rc->rel_l2_max};
    for (int64_t i = 0; i < n; i++) {
        int bad;
        if (mk == MASK_TOL) {
            bad = elem_bad(t, i, ref[i], tol);
        } else if (mk == MASK_ULP) {
            int32_t u = ulp_distance(t, i, ref[i]);
            bad = u < 0 || u > ulp_max;
        } else {
            double x = dtype_load(t->dtype, t->data, (size_t)i);
            bad = !isfinite(x) || fabs(x - ref[i]) > rc->max_abs / 4;
        }
        mask[i] = (unsigned char)bad;
        if (bad && first < 0) first = i;
    }
    if (first >= 0) {
        validate_coord_str(t, first, f->first_bad, sizeof f->first_bad);
        validate_pattern(t, mask, ref, bt, f->pattern, sizeof f->pattern);
    }
    free(mask);
}

static int find_buf(const op_desc *op, const char *name) {
    for (int i = 0; i < op->nbufs; i++)
        if (strcmp(op->bufs[i].name, name) == 0) return i;
    return -1;
}

static void free_refs(const op_desc *op, double **out) {
    for (int i = 0; i < op->nbufs; i++) {
        free(out[i]);
        out[i] = NULL;
    }
}

/* The reference of kind into out[] (outputs only); -1 when it cannot be computed. */
static int compute_ref(const op_case *c, ref_kind kind, double **out) {
    const op_desc *op = c->op;
    for (int i = 0; i < op->nbufs; i++) {
        out[i] = NULL;
        if (op->bufs[i].role != BUF_OUT && op->bufs[i].role != BUF_INOUT) continue;
        out[i] = host_alloc_large(sizeof(double) * (size_t)tensor_numel(c->t[i]));
        if (!out[i]) {
            free_refs(op, out);
            return -1;
        }
    }
    if (op->reference(c, kind, out) != 0) {
        free_refs(op, out);
        return -1;
    }
    return 0;
}

int validate_judge(const validate_ctx *ctx, const op_case *c, validate_result *res) {
    const op_desc *op = c->op;
    const run_record *rec = &res->rec;
    int64_t bt = validate_chunk_len(op, c->dim);
    double *refs[2][OP_MAX_BUFS] = {{0}};
    int have_ref[2] = {0, 0}, all_pass = 1;
    for (int k = 0; k < rec->nchecks; k++) {
        const rec_check *rc = &rec->checks[k];
        int parity = strcmp(rc->reference, "bf16-parity") == 0;
        int bi = find_buf(op, rc->output);
        if (bi < 0) continue;
        const tensor *t = c->t[bi];
        int half = t->dtype == DT_BF16 || t->dtype == DT_F16;
        int ulp_fail = parity && half && rc->ulp_p99 > ctx->ulp_p99_max;
        if (rc->pass && !ulp_fail) continue;
        all_pass = 0;
        ref_kind kind = parity ? REF_PARITY : REF_F64;
        if (!have_ref[kind]) have_ref[kind] = compute_ref(c, kind, refs[kind]) == 0 ? 1 : -1;
        const double *ref = have_ref[kind] == 1 ? refs[kind][bi] : NULL;
        if (!rc->pass) {
            const char *kindname = rc->unwritten ? "unwritten" : (rc->nan || rc->inf) ? "nan_inf" : "tolerance";
            validate_finding *f = validate_add_finding(res, kindname, 0);
            if (!f) break;
            snprintf(f->output, sizeof f->output, "%s", rc->output);
            snprintf(f->reference, sizeof f->reference, "%s", rc->reference);
            mask_kind mk = rc->n_bad ? MASK_TOL : MASK_LARGEST;
            if (ref) describe(t, ref, rc, mk, ctx->ulp_p99_max, bt, f);
            char counts[160] = "";
            if (rc->unwritten || rc->nan || rc->inf)
                snprintf(counts, sizeof counts, "; unwritten %lld, NaN %lld, Inf %lld", (long long)rc->unwritten,
                         (long long)rc->nan, (long long)rc->inf);
            if (rc->n_bad)
                snprintf(f->text, sizeof f->text,
                         "%s vs %s: %lld of %lld elements outside atol %.3g + rtol %.3g*|ref| (max_abs %.3g, rel_l2 "
                         "%.3g)%s; first bad %s got %.6g want %.6g",
                         rc->output, rc->reference, (long long)rc->n_bad, (long long)tensor_numel(t), rc->atol,
                         rc->rtol, rc->max_abs, rc->rel_l2, counts, f->first_bad, rc->first_bad_got,
                         rc->first_bad_want);
            else
                snprintf(f->text, sizeof f->text,
                         "%s vs %s: rel_l2 %.3g exceeds %.3g (max_abs %.3g; every element within atol/rtol); largest "
                         "errors from %s",
                         rc->output, rc->reference, rc->rel_l2, rc->rel_l2_max, rc->max_abs, f->first_bad);
        }
        if (ulp_fail) {
            validate_finding *f = validate_add_finding(res, "ulp", 0);
            if (!f) break;
            snprintf(f->output, sizeof f->output, "%s", rc->output);
            snprintf(f->reference, sizeof f->reference, "%s", rc->reference);
            if (ref) describe(t, ref, rc, MASK_ULP, ctx->ulp_p99_max, bt, f);
            snprintf(f->text, sizeof f->text,
                     "%s vs %s: 99%% of elements within %.0f %s ulps, bound %d (rel_l2 %.3g); first beyond %s",
                     rc->output, rc->reference, rc->ulp_p99, dtype_name(t->dtype), ctx->ulp_p99_max, rc->rel_l2,
                     f->first_bad);
        }
    }
    free_refs(op, refs[0]);
    free_refs(op, refs[1]);
    return all_pass;
}
