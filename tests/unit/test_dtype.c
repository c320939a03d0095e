/* test_dtype.c — bf16/f16 rounding against hand-computed bit patterns. */
#include "core/dtype.h"
#include "test.h"

TEST(bf16_round_to_nearest_even) {
    /* 1 + 2^-8 is exactly halfway between 1 and 1+2^-7: ties to even -> 1.0 */
    CHECK_EQ_INT(bf16_from_f32(1.0f + 0x1p-8f), 0x3f80);
    /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: ties to even -> 0x3f82 */
    CHECK_EQ_INT(bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3f82);
    CHECK_EQ_INT(bf16_from_f32(-2.0f), 0xc000);
    CHECK(bf16_to_f32(bf16_from_f32(NAN)) != bf16_to_f32(bf16_from_f32(NAN))); /* stays NaN */
    CHECK_EQ_INT(bf16_from_f32(INFINITY), 0x7f80);
}

TEST(f16_round_trip) {
    CHECK_EQ_INT(f16_from_f32(1.0f), 0x3c00);
    CHECK_EQ_INT(f16_from_f32(65504.0f), 0x7bff);
    CHECK_EQ_INT(f16_from_f32(65520.0f), 0x7c00); /* rounds up to inf */
    CHECK_EQ_INT(f16_from_f32(0x1p-24f), 0x0001);  /* smallest subnormal */
    CHECK_EQ_INT(f16_from_f32(1.0f + 0x1p-11f), 0x3c00); /* tie -> even */
    for (uint32_t h = 0; h < 0x7c00; h++) CHECK_EQ_INT(f16_from_f32(f16_to_f32((uint16_t)h)), h);
}
