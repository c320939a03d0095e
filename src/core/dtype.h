/* dtype.h — element types of tensors and the bf16/f16 conversions.
 *
 * bf16 is the upper half of an IEEE f32; converting rounds to nearest even, as
 * Metal, torch and FLA do.  NaN stays NaN (quiet bit forced) rather than rounding
 * into an infinity.  Every conversion in the tool goes through these helpers so the
 * CPU references round exactly like the kernels. */
#ifndef GDN_DTYPE_H
#define GDN_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum dtype {
    DT_F32 = 0,
    DT_BF16,
    DT_F16,
    DT_F64,
    DT_I32,
    DT_U32,
    DT_COUNT
} dtype;

size_t dtype_size(dtype t);
const char *dtype_name(dtype t);        /* "f32", "bf16", ... */
int dtype_from_name(const char *s, dtype *out); /* 0 on success; accepts "float32", "BF16", ... */

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t bf16_from_f32(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

/* Round an f32 (or f64 via f32) value to the nearest bf16 and back. */
static inline float bf16_round(float f) { return bf16_to_f32(bf16_from_f32(f)); }

uint16_t f16_from_f32(float f);
float f16_to_f32(uint16_t h);

/* Read element i of a buffer of type t as double; write double as type t
 * (rounding to nearest even for bf16/f16). */
double dtype_load(dtype t, const void *base, size_t i);
void dtype_store(dtype t, void *base, size_t i, double v);

#endif
