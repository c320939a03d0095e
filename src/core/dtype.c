/* dtype.c — element sizes, names, f16 conversion and typed load/store. */
#include <math.h>
#include <strings.h>

#include "core/dtype.h"

static const struct {
    const char *name;
    size_t size;
    const char *aliases[4];
} dtype_table[DT_COUNT] = {
    [DT_F32] = {"f32", 4, {"float32", "float", "F32", NULL}},
    [DT_BF16] = {"bf16", 2, {"bfloat16", "BF16", "bfloat", NULL}},
    [DT_F16] = {"f16", 2, {"float16", "F16", "half", NULL}},
    [DT_F64] = {"f64", 8, {"float64", "F64", "double", NULL}},
    [DT_I32] = {"i32", 4, {"int32", "I32", NULL, NULL}},
    [DT_U32] = {"u32", 4, {"uint32", "U32", NULL, NULL}},
};

size_t dtype_size(dtype t) { return t < DT_COUNT ? dtype_table[t].size : 0; }

const char *dtype_name(dtype t) { return t < DT_COUNT ? dtype_table[t].name : "?"; }

int dtype_from_name(const char *s, dtype *out) {
    for (int t = 0; t < DT_COUNT; t++) {
        if (strcasecmp(s, dtype_table[t].name) == 0) goto found_t;
        for (int a = 0; a < 4 && dtype_table[t].aliases[a]; a++)
            if (strcasecmp(s, dtype_table[t].aliases[a]) == 0) goto found_t;
        continue;
    found_t:
        *out = (dtype)t;
        return 0;
    }
    return -1;
}

uint16_t f16_from_f32(float f) {
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
    if (a < 0x38800000u) {
        /* subnormal half: value = a * 2^24 rounded to integer, RNE */
        float af = f32_from_bits(a);
        float scaled = af * 16777216.0f; /* exact: power of two */
        uint32_t q = (uint32_t)scaled;
        float rem = scaled - (float)q;
        if (rem > 0.5f || (rem == 0.5f && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t mant = a & 0x7fffffu;
    uint32_t exp = (a >> 23) - 112u;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t low = mant & 0x1fffu;
    if (low > 0x1000u || (low == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        float m = (float)mant / 16777216.0f;
        return sign ? -m : m;
    }
    if (exp == 31) return f32_from_bits(sign | 0x7f800000u | (mant << 13));
    return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

double dtype_load(dtype t, const void *base, size_t i) {
    switch (t) {
    case DT_F32: return ((const float *)base)[i];
    case DT_BF16: return bf16_to_f32(((const uint16_t *)base)[i]);
    case DT_F16: return f16_to_f32(((const uint16_t *)base)[i]);
    case DT_F64: return ((const double *)base)[i];
    case DT_I32: return ((const int32_t *)base)[i];
    case DT_U32: return ((const uint32_t *)base)[i];
    default: return NAN;
    }
}

void dtype_store(dtype t, void *base, size_t i, double v) {
    switch (t) {
    case DT_F32: ((float *)base)[i] = (float)v; break;
    case DT_BF16: ((uint16_t *)base)[i] = bf16_from_f32((float)v); break;
    case DT_F16: ((uint16_t *)base)[i] = f16_from_f32((float)v); break;
    case DT_F64: ((double *)base)[i] = v; break;
    case DT_I32: ((int32_t *)base)[i] = (int32_t)v; break;
    case DT_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    default: break;
    }
}
