/* gdn_ref_common.c — views, tile loaders and scratch shared by the GDN references. */
#include <stdlib.h>

#include "ref/gdn_simd.h"

gdn_view gdn_view_tensor(const tensor *t) { return (gdn_view){t->data, t->dtype}; }
gdn_view gdn_view_f64(const double *p) { return (gdn_view){p, DT_F64}; }
gdn_sink gdn_sink_tensor(tensor *t) { return (gdn_sink){t->data, t->dtype}; }
gdn_sink gdn_sink_f64(double *p) { return (gdn_sink){p, DT_F64}; }

/* The dtype switch sits outside the element loops: tile loads are on the hot path of
 * every reference. */
void gdn_load_f32(gdn_view v, int64_t off, int64_t stride, int64_t rows, int64_t n, float *dst) {
    for (int64_t r = 0; r < rows; r++, dst += n) {
        int64_t o = off + r * stride;
        switch (v.dt) {
        case DT_F32: memcpy(dst, (const float *)v.data + o, (size_t)n * sizeof(float)); break;
        case DT_BF16: {
            const uint16_t *p = (const uint16_t *)v.data + o;
            for (int64_t i = 0; i < n; i++) dst[i] = bf16_to_f32(p[i]);
            break;
        }
        case DT_F64: {
            const double *p = (const double *)v.data + o;
            for (int64_t i = 0; i < n; i++) dst[i] = (float)p[i];
            break;
        }
        default:
            for (int64_t i = 0; i < n; i++) dst[i] = (float)dtype_load(v.dt, v.data, (size_t)(o + i));
        }
    }
}

void gdn_load_f64(gdn_view v, int64_t off, int64_t stride, int64_t rows, int64_t n, double *dst) {
    for (int64_t r = 0; r < rows; r++, dst += n) {
        int64_t o = off + r * stride;
        switch (v.dt) {
        case DT_F64: memcpy(dst, (const double *)v.data + o, (size_t)n * sizeof(double)); break;
        case DT_F32: {
            const float *p = (const float *)v.data + o;
            for (int64_t i = 0; i < n; i++) dst[i] = p[i];
            break;
        }
        case DT_BF16: {
            const uint16_t *p = (const uint16_t *)v.data + o;
            for (int64_t i = 0; i < n; i++) dst[i] = bf16_to_f32(p[i]);
            break;
        }
        default:
            for (int64_t i = 0; i < n; i++) dst[i] = dtype_load(v.dt, v.data, (size_t)(o + i));
        }
    }
}

void gdn_store_f32(gdn_sink s, int64_t off, int64_t stride, int64_t rows, int64_t n, const float *src) {
    for (int64_t r = 0; r < rows; r++, src += n) {
        int64_t o = off + r * stride;
        switch (s.dt) {
        case DT_F64: {
            double *p = (double *)s.data + o;
            for (int64_t i = 0; i < n; i++) p[i] = src[i];
            break;
        }
        case DT_F32: memcpy((float *)s.data + o, src, (size_t)n * sizeof(float)); break;
        case DT_BF16: {
            uint16_t *p = (uint16_t *)s.data + o;
            for (int64_t i = 0; i < n; i++) p[i] = bf16_from_f32(src[i]);
            break;
        }
        default:
            for (int64_t i = 0; i < n; i++) dtype_store(s.dt, s.data, (size_t)(o + i), src[i]);
        }
    }
}

void gdn_store_f64(gdn_sink s, int64_t off, int64_t stride, int64_t rows, int64_t n, const double *src) {
    for (int64_t r = 0; r < rows; r++, src += n) {
        int64_t o = off + r * stride;
        if (s.dt == DT_F64) {
            memcpy((double *)s.data + o, src, (size_t)n * sizeof(double));
        } else {
            for (int64_t i = 0; i < n; i++) dtype_store(s.dt, s.data, (size_t)(o + i), src[i]);
        }
    }
}

void gdn_transpose_f32(const float *src, int64_t rows, int64_t cols, float *dst) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
}

void gdn_transpose_f64(const double *src, int64_t rows, int64_t cols, double *dst) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
}

void gdn_round_bf16(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = bf16_round(x[i]);
}

void *gdn_scratch(int n, const size_t *bytes, void **out) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (bytes[i] + 63) & ~(size_t)63;
    char *block = aligned_alloc(64, total ? total : 64);
    if (!block) return NULL;
    memset(block, 0, total);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        out[i] = block + at;
        at += (bytes[i] + 63) & ~(size_t)63;
    }
    return block;
}
