/* kcase_check.c — one output of a kernel case against its expected values: an
 * element passes when |x - r| <= atol + rtol*|r| or, where the case gives "ulp",
 * when x is within that many units in the last place of r in the output's own type
 * (NaN matches NaN); rel_l2 bounds the whole buffer.  Integer and bool outputs are
 * exact unless the case says otherwise; float outputs default to atol = rtol = 1e-5
 * (float32) or 1e-2 (float16, bfloat16). */
#include <math.h>
#include <string.h>

#include "runner/kcase_run.h"

/* Bits of a float of type t as an integer ordered like the values (sign-magnitude
 * folded), so the ulp distance is a difference. */
static int64_t ordered(kc_dtype t, double v) {
    unsigned char b[4];
    kc_store(t, b, 0, v);
    if (t == KC_F32) {
        uint32_t u;
        memcpy(&u, b, 4);
        return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
    }
    uint16_t h;
    memcpy(&h, b, 2);
    return (h & 0x8000u) ? -(int64_t)(h & 0x7fffu) : (int64_t)h;
}

static void default_tolerances(const kc_buffer *b, kc_dtype dt, kc_buf_result *r) {
    const kc_expect *e = &b->expect;
    double def = dt == KC_F32 ? 1e-5 : kc_dtype_is_float(dt) ? 1e-2 : 0;
    int any = e->has != 0;
    r->atol = (e->has & KC_TOL_ATOL) ? e->atol : any ? 0 : def;
    r->rtol = (e->has & KC_TOL_RTOL) ? e->rtol : any ? 0 : def;
    r->rel_l2_max = (e->has & KC_TOL_REL_L2) ? e->rel_l2 : 0;
    r->ulp_max = (e->has & KC_TOL_ULP) ? e->ulp : -1;
}

void kc_check_expect(const kc_buffer *b, kc_dtype dt, const void *out, const double *ref, int64_t n, kc_buf_result *r) {
    default_tolerances(b, dt, r);
    r->checked = 1;
    r->first_bad = -1;
    r->ulp = kc_dtype_is_float(dt) ? 0 : -1;
    double err2 = 0, ref2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double x = kc_load(dt, out, (size_t)i), y = ref[i];
        if (isnan(x) && isnan(y)) continue;
        double d = fabs(x - y);
        int ok = d <= r->atol + r->rtol * fabs(y) || (x == y);
        if (kc_dtype_is_float(dt) && !isnan(x) && !isnan(y)) {
            double u = fabs((double)(ordered(dt, x) - ordered(dt, y)));
            if (u > r->ulp) r->ulp = u;
            if (!ok && r->ulp_max >= 0 && u <= r->ulp_max) ok = 1;
        }
        if (isnan(x) || isnan(y)) ok = 0, d = INFINITY;
        if (d > r->max_abs) r->max_abs = d;
        if (y != 0 && d / fabs(y) > r->max_rel) r->max_rel = d / fabs(y);
        if (isfinite(d)) err2 += d * d;
        ref2 += y * y;
        if (!ok) {
            if (r->bad++ == 0) r->first_bad = i;
        }
    }
    r->rel_l2 = ref2 > 0 ? sqrt(err2 / ref2) : sqrt(err2);
    r->pass = r->bad == 0 && (r->rel_l2_max <= 0 || r->rel_l2 <= r->rel_l2_max);
}
