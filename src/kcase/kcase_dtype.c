/* kcase_dtype.c — the twelve element types a kernel case names, and raw element
 * loads and stores through them (the tool's own dtype covers only what its ops use). */
#include <math.h>
#include <string.h>

#include "kcase/kcase.h"

static const struct {
    const char *name;
    size_t size;
    int is_float;
} kc_types[KC_NDTYPES] = {
    [KC_F32] = {"float32", 4, 1}, [KC_F16] = {"float16", 2, 1}, [KC_BF16] = {"bfloat16", 2, 1},
    [KC_I8] = {"int8", 1, 0},     [KC_U8] = {"uint8", 1, 0},    [KC_I16] = {"int16", 2, 0},
    [KC_U16] = {"uint16", 2, 0},  [KC_I32] = {"int32", 4, 0},   [KC_U32] = {"uint32", 4, 0},
    [KC_I64] = {"int64", 8, 0},   [KC_U64] = {"uint64", 8, 0},  [KC_BOOL] = {"bool", 1, 0},
};

const char *kc_dtype_name(kc_dtype t) { return (unsigned)t < KC_NDTYPES ? kc_types[t].name : "?"; }
size_t kc_dtype_size(kc_dtype t) { return (unsigned)t < KC_NDTYPES ? kc_types[t].size : 0; }
int kc_dtype_is_float(kc_dtype t) { return (unsigned)t < KC_NDTYPES && kc_types[t].is_float; }

const char *kc_dtype_list(void) {
    return "float32 float16 bfloat16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool";
}

int kc_dtype_parse(const char *s, kc_dtype *out) {
    for (int t = 0; t < KC_NDTYPES; t++)
        if (strcmp(s, kc_types[t].name) == 0) {
            *out = (kc_dtype)t;
            return 0;
        }
    return -1;
}

int kc_dtype_from_tensor(dtype t, kc_dtype *out) {
    switch (t) {
    case DT_F32: *out = KC_F32; return 0;
    case DT_BF16: *out = KC_BF16; return 0;
    case DT_F16: *out = KC_F16; return 0;
    case DT_I32: *out = KC_I32; return 0;
    case DT_U32: *out = KC_U32; return 0;
    default: return -1;
    }
}

/* Range of each integer type as doubles (int64/uint64 ends are where a double stops
 * being exact; JSON numbers are doubles anyway). */
static void int_range(kc_dtype t, double *lo, double *hi) {
    switch (t) {
    case KC_I8: *lo = -128; *hi = 127; break;
    case KC_U8: *lo = 0; *hi = 255; break;
    case KC_I16: *lo = -32768; *hi = 32767; break;
    case KC_U16: *lo = 0; *hi = 65535; break;
    case KC_I32: *lo = -2147483648.0; *hi = 2147483647.0; break;
    case KC_U32: *lo = 0; *hi = 4294967295.0; break;
    case KC_I64: *lo = -9223372036854775808.0; *hi = 9223372036854774784.0; break;
    case KC_U64: *lo = 0; *hi = 18446744073709549568.0; break;
    default: *lo = 0; *hi = 1; break;
    }
}

int kc_value_fits(kc_dtype t, double v) {
    if (kc_dtype_is_float(t)) return 1;
    if (!isfinite(v) || v != floor(v)) return 0;
    double lo, hi;
    int_range(t, &lo, &hi);
    return v >= lo && v <= hi;
}

double kc_load(kc_dtype t, const void *base, size_t i) {
    const unsigned char *p = (const unsigned char *)base + i * kc_dtype_size(t);
    switch (t) {
    case KC_F32: { float f; memcpy(&f, p, 4); return f; }
    case KC_F16: { uint16_t h; memcpy(&h, p, 2); return f16_to_f32(h); }
    case KC_BF16: { uint16_t h; memcpy(&h, p, 2); return bf16_to_f32(h); }
    case KC_I8: return (int8_t)p[0];
    case KC_U8: return p[0];
    case KC_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case KC_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case KC_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case KC_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case KC_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case KC_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    case KC_BOOL: return p[0] != 0;
    default: return 0;
    }
}

/* Saturating conversion of a double to an integer type (NaN -> 0). */
static double clamp_int(kc_dtype t, double v) {
    double lo, hi;
    int_range(t, &lo, &hi);
    if (v != v) return 0;
    v = v < 0 ? ceil(v) : floor(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void kc_store(kc_dtype t, void *base, size_t i, double v) {
    unsigned char *p = (unsigned char *)base + i * kc_dtype_size(t);
    if (!kc_dtype_is_float(t) && t != KC_BOOL) v = clamp_int(t, v);
    switch (t) {
    case KC_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
    case KC_F16: { uint16_t h = f16_from_f32((float)v); memcpy(p, &h, 2); break; }
    case KC_BF16: { uint16_t h = bf16_from_f32((float)v); memcpy(p, &h, 2); break; }
    case KC_I8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case KC_U8: p[0] = (unsigned char)v; break;
    case KC_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case KC_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case KC_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case KC_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case KC_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case KC_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case KC_BOOL: p[0] = v != 0 && v == v; break;
    default: break;
    }
}
