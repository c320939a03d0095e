/* check.c — error metrics of one output against one reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/check.h"

static const uint32_t POISON_F32 = 0x7fa5a5a5u;
static const uint16_t POISON_BF16 = 0x7fa5u;
static const uint16_t POISON_F16 = 0x7da5u;
static const uint64_t POISON_F64 = 0x7ff4a5a5a5a5a5a5ull;

void poison_tensor(tensor *t) {
    int64_t n = tensor_numel(t);
    switch (t->dtype) {
    case DT_F32:
        for (int64_t i = 0; i < n; i++) ((uint32_t *)t->data)[i] = POISON_F32;
        break;
    case DT_BF16:
        for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = POISON_BF16;
        break;
    case DT_F16:
        for (int64_t i = 0; i < n; i++) ((uint16_t *)t->data)[i] = POISON_F16;
        break;
    case DT_F64:
        for (int64_t i = 0; i < n; i++) ((uint64_t *)t->data)[i] = POISON_F64;
        break;
    default: memset(t->data, 0xa5, tensor_nbytes(t)); break;
    }
}

int is_poison(dtype dt, const void *base, int64_t i) {
    switch (dt) {
    case DT_F32: return ((const uint32_t *)base)[i] == POISON_F32;
    case DT_BF16: return ((const uint16_t *)base)[i] == POISON_BF16;
    case DT_F16: return ((const uint16_t *)base)[i] == POISON_F16;
    case DT_F64: return ((const uint64_t *)base)[i] == POISON_F64;
    default: return ((const uint32_t *)base)[i] == 0xa5a5a5a5u;
    }
}

/* Sign-magnitude 16-bit float bits -> integers ordered like the values. */
static int32_t ordered16(uint16_t b) { return (b & 0x8000u) ? -(int32_t)(b & 0x7fffu) : (int32_t)(b & 0x7fffu); }

#define ULP_BUCKETS 4096

void check_output(const tensor *out, const double *ref, const char *reference, op_tol tol, rec_check *rc) {
    memset(rc, 0, sizeof *rc);
    snprintf(rc->output, sizeof rc->output, "%s", out->name);
    snprintf(rc->reference, sizeof rc->reference, "%s", reference);
    rc->atol = tol.atol;
    rc->rtol = tol.rtol;
    rc->rel_l2_max = tol.rel_l2;
    rc->first_bad_index = -1;
    rc->ulp_p99 = -1;

    int half_type = out->dtype == DT_BF16 || out->dtype == DT_F16;
    uint64_t *ulp_hist = half_type ? calloc(ULP_BUCKETS + 1, sizeof *ulp_hist) : NULL;
    int64_t n = tensor_numel(out), n_ulp = 0;
    double err2 = 0, ref2 = 0, rel_floor = tol.atol > 1e-12 ? tol.atol : 1e-12;

    for (int64_t i = 0; i < n; i++) {
        double r = ref[i];
        int unwritten = is_poison(out->dtype, out->data, i);
        double x = unwritten ? NAN : dtype_load(out->dtype, out->data, (size_t)i);
        int bad = 0;
        if (unwritten) {
            rc->unwritten++;
            bad = isfinite(r) || !isnan(r);
        } else if (isnan(x)) {
            rc->nan++;
            bad = !isnan(r);
        } else if (isinf(x)) {
            rc->inf++;
            bad = x != r;
        } else if (!isfinite(r)) {
            bad = 1;
        } else {
            double d = fabs(x - r);
            if (d > rc->max_abs) rc->max_abs = d;
            if (fabs(r) > rel_floor && d / fabs(r) > rc->max_rel) rc->max_rel = d / fabs(r);
            err2 += d * d;
            ref2 += r * r;
            bad = d > tol.atol + tol.rtol * fabs(r);
            if (ulp_hist) {
                uint16_t xb = ((const uint16_t *)out->data)[i];
                uint16_t rb = out->dtype == DT_BF16 ? bf16_from_f32((float)r) : f16_from_f32((float)r);
                int32_t u = abs(ordered16(xb) - ordered16(rb));
                ulp_hist[u < ULP_BUCKETS ? u : ULP_BUCKETS]++;
                n_ulp++;
            }
        }
        if (bad) {
            if (rc->n_bad == 0) {
                rc->first_bad_index = i;
                rc->first_bad_ndim = out->ndim;
                tensor_unravel(out, i, rc->first_bad_coord);
                rc->first_bad_got = x;
                rc->first_bad_want = r;
            }
            rc->n_bad++;
        }
    }
    rc->rel_l2 = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    if (ulp_hist && n_ulp > 0) {
        int64_t need = (int64_t)ceil(0.99 * (double)n_ulp), acc = 0;
        for (int u = 0; u <= ULP_BUCKETS; u++) {
            acc += (int64_t)ulp_hist[u];
            if (acc >= need) {
                rc->ulp_p99 = u;
                break;
            }
        }
    }
    free(ulp_hist);
    rc->pass = rc->n_bad == 0 && (tol.rel_l2 <= 0 || rc->rel_l2 <= tol.rel_l2);
}
