/* kcase_check.c — one output of a kernel case against its expected values: an
 * element passes when |x - r| <= atol + rtol*|r| or, where the case gives "ulp",
 * when x is within that many units in the last place of r in the output's own type
 * (NaN matches NaN); rel_l2 bounds the whole buffer.  Integer and bool outputs are
 * exact unless the case says otherwise; float outputs default to atol = rtol = 1e-5
 * (float32) or 1e-2 (float16, bfloat16).  kc_check_case: every buffer of a case after
 * its run — unwritten (still poisoned) elements, NaN/Inf, readonly bytes changed,
 * and the expectation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/kcase_job.h"

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

/* Buffer i's checks on its bytes after the run (out: the read-back bytes, or its
 * initial bytes when the kernel cannot write it and it is not readonly). */
/* Buffer i's reference from the reference run ref (as doubles, malloc'd). */
static double *reference_of(const op_case *ref, int i, const kc_tensor *t) {
    const kc_job *rj = kc_job_of(ref);
    if (!rj->prepared || rj->slot[i] < 0 || rj->init[i].nbytes != t->nbytes) return NULL;
    double *v = malloc(sizeof(double) * (size_t)(t->numel ? t->numel : 1));
    for (int64_t k = 0; v && k < t->numel; k++) v[k] = kc_load(t->dtype, ref->t[rj->slot[i]]->data, (size_t)k);
    return v;
}

static void check_buffer(const kc_job *j, int i, const unsigned char *out, const op_case *ref_case, kc_buf_result *br,
                         char *err, size_t errlen) {
    const kc_case *c = j->c;
    const kc_buffer *b = &c->bufs[i];
    const kc_tensor *t = &j->init[i];
    snprintf(br->name, sizeof br->name, "%s", b->name);
    br->index = j->index[i];
    br->writable = j->writable[i];
    br->readonly = b->readonly;
    br->by_bytes = j->by_bytes[i];
    br->numel = t->numel;
    br->dtype = t->dtype;
    br->ulp = -1;
    br->first_bad = -1;
    br->hash = 1469598103934665603ull;
    for (size_t k = 0; k < t->nbytes; k++) br->hash = (br->hash ^ out[k]) * 1099511628211ull;
    size_t es = kc_dtype_size(t->dtype);
    for (int64_t k = 0; b->readonly && k < t->numel; k++)
        br->changed += memcmp(out + (size_t)k * es, (const unsigned char *)t->data + (size_t)k * es, es) != 0;
    int poisoned = br->writable && (!b->has_init ? 1 : b->init == KC_INIT_POISON) && b->kind == KC_BUF_ARRAY;
    for (int64_t k = 0; br->writable && k < t->numel; k++) {
        if (poisoned && kc_is_poison(t->dtype, j->poison, out, k)) {
            br->unwritten++;
            continue;
        }
        double v = kc_load(t->dtype, out, (size_t)k);
        br->nan += v != v;
        br->inf += v == v && (v > 1.79e308 || v < -1.79e308);
    }
    br->pass = br->changed == 0 && br->unwritten == 0;
    double *ref = NULL;
    int by_backend = b->expect.kind == KC_EXPECT_BACKEND;
    snprintf(br->reference, sizeof br->reference, "%s", by_backend ? b->expect.backend : "expected");
    if (by_backend && ref_case && !(ref = reference_of(ref_case, i, t)))
        snprintf(err, errlen, "%s: buffers.%s: the reference run left no output to compare with", c->path, b->name);
    br->self_ref = by_backend && !ref_case;
    if ((by_backend ? ref != NULL : kc_expect_contents(c, i, t, &ref, err, errlen) == 0) && ref) {
        kc_buf_result m = *br;
        kc_check_expect(b, t->dtype, out, ref, t->numel, &m);
        m.pass = m.pass && br->pass;
        *br = m;
    } else if (br->writable) {
        br->pass = br->pass && br->nan == 0 && br->inf == 0;
    }
    free(ref);
}

int kc_case_wants_backend(const kc_case *c) {
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].expect.kind == KC_EXPECT_BACKEND) return 1;
    return 0;
}

int kc_check_case(const op_case *oc, const op_case *ref, kc_result *r, char *err, size_t errlen) {
    const kc_job *j = kc_job_of(oc);
    memset(r, 0, sizeof *r);
    r->prepared = j->prepared;
    if (!j->prepared) return 0;
    err[0] = '\0';
    r->nbufs = j->c->nbufs;
    r->pass = 1;
    for (int i = 0; i < j->c->nbufs && !err[0]; i++) {
        const void *out = j->slot[i] >= 0 ? oc->t[j->slot[i]]->data : j->init[i].data;
        check_buffer(j, i, out, ref, &r->bufs[i], err, errlen);
        r->pass = r->pass && r->bufs[i].pass;
    }
    return err[0] ? -1 : 0;
}
