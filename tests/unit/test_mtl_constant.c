/* test_mtl_constant.c — a function constant's text as the bytes of the MTLDataType
 * the function declares (src/metal/mtl_constant.c), and values a type cannot hold. */
#include <string.h>

#include "core/dtype.h"
#include "metal/mtl.h"
#include "test.h"

static int enc(const char *text, unsigned long type, void *out) {
    char err[256];
    memset(out, 0xAA, 8);
    return mtl_constant_encode(text, type, out, err, sizeof err);
}

TEST(mtl_constant_encodes_every_supported_type) {
    unsigned char b[8];
    CHECK(enc("true", MTL_DATA_TYPE_BOOL, b) == 0 && b[0] == 1 && b[1] == 0xAA);
    CHECK(enc("false", MTL_DATA_TYPE_BOOL, b) == 0 && b[0] == 0);
    CHECK(enc("1", MTL_DATA_TYPE_BOOL, b) == 0 && b[0] == 1);
    int8_t c;
    CHECK(enc("-128", MTL_DATA_TYPE_CHAR, b) == 0 && (memcpy(&c, b, 1), c == -128) && b[1] == 0xAA);
    CHECK(enc("255", MTL_DATA_TYPE_UCHAR, b) == 0 && b[0] == 255 && b[1] == 0xAA);
    int16_t s;
    uint16_t us;
    CHECK(enc("-300", MTL_DATA_TYPE_SHORT, b) == 0 && (memcpy(&s, b, 2), s == -300) && b[2] == 0xAA);
    CHECK(enc("0xFFFF", MTL_DATA_TYPE_USHORT, b) == 0 && (memcpy(&us, b, 2), us == 65535) && b[2] == 0xAA);
    int32_t i;
    uint32_t u;
    CHECK(enc("-2147483648", MTL_DATA_TYPE_INT, b) == 0 && (memcpy(&i, b, 4), i == INT32_MIN) && b[4] == 0xAA);
    CHECK(enc("4000000000", MTL_DATA_TYPE_UINT, b) == 0 && (memcpy(&u, b, 4), u == 4000000000u));
    float f;
    CHECK(enc("2.5", MTL_DATA_TYPE_FLOAT, b) == 0 && (memcpy(&f, b, 4), f == 2.5f) && b[4] == 0xAA);
    CHECK(enc("3", MTL_DATA_TYPE_FLOAT, b) == 0 && (memcpy(&f, b, 4), f == 3.0f));
    uint16_t h;
    CHECK(enc("0.5", MTL_DATA_TYPE_HALF, b) == 0 && (memcpy(&h, b, 2), h == 0x3800) && b[2] == 0xAA);
    CHECK(enc("-65504", MTL_DATA_TYPE_HALF, b) == 0 && (memcpy(&h, b, 2), f16_to_f32(h) == -65504.0f));
    CHECK(strcmp(mtl_data_type_name(MTL_DATA_TYPE_USHORT), "ushort") == 0);
    CHECK(mtl_data_type_name(4 /* float2 */) == NULL);
}

TEST(mtl_constant_refuses_what_the_type_cannot_hold) {
    unsigned char b[8];
    char err[256] = "";
    CHECK(mtl_constant_encode("70000", MTL_DATA_TYPE_SHORT, b, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "is out of range for short (-32768..32767)") != NULL, "%s", err);
    CHECK(mtl_constant_encode("-1", MTL_DATA_TYPE_UINT, b, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "is out of range for uint") != NULL, "%s", err);
    CHECK(mtl_constant_encode("1.5", MTL_DATA_TYPE_INT, b, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "not an integer") != NULL, "%s", err);
    CHECK(mtl_constant_encode("2", MTL_DATA_TYPE_BOOL, b, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "not a bool") != NULL, "%s", err);
    CHECK(enc("256", MTL_DATA_TYPE_UCHAR, b) != 0);
    CHECK(enc("-129", MTL_DATA_TYPE_CHAR, b) != 0);
    CHECK(enc("65536", MTL_DATA_TYPE_USHORT, b) != 0);
    CHECK(enc("2147483648", MTL_DATA_TYPE_INT, b) != 0);
    CHECK(enc("4294967296", MTL_DATA_TYPE_UINT, b) != 0);
    CHECK(enc("99999999999999999999", MTL_DATA_TYPE_UINT, b) != 0); /* past long long */
    CHECK(enc("65520", MTL_DATA_TYPE_HALF, b) != 0);
    CHECK(enc("1e39", MTL_DATA_TYPE_FLOAT, b) != 0);
    CHECK(enc("nan", MTL_DATA_TYPE_FLOAT, b) != 0);
    CHECK(enc("1.5x", MTL_DATA_TYPE_FLOAT, b) != 0);
    CHECK(enc("", MTL_DATA_TYPE_INT, b) != 0);
    CHECK(enc("yes", MTL_DATA_TYPE_BOOL, b) != 0);
    CHECK(mtl_constant_encode("1", 4 /* float2 */, b, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "MTLDataType 4") != NULL, "%s", err);
}
