/* mtl_constant.c — a function constant's text (--constant ID=VALUE, an op's own) as
 * the bytes of the type the function declares it with (MTLFunctionConstant.type), so
 * setConstantValue:type:atIndex: gets a value of that type; a value the type cannot
 * hold exactly is refused, never wrapped or rounded into it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "metal/mtl.h"

static const struct {
    unsigned long type;
    const char *name;
    int size;                 /* bytes */
    long long lo, hi;         /* integer types' range (lo == hi == 0: not an integer type) */
} types[] = {
    {MTL_DATA_TYPE_BOOL, "bool", 1, 0, 0},
    {MTL_DATA_TYPE_CHAR, "char", 1, -128, 127},
    {MTL_DATA_TYPE_UCHAR, "uchar", 1, 0, 255},
    {MTL_DATA_TYPE_SHORT, "short", 2, -32768, 32767},
    {MTL_DATA_TYPE_USHORT, "ushort", 2, 0, 65535},
    {MTL_DATA_TYPE_INT, "int", 4, -2147483648LL, 2147483647LL},
    {MTL_DATA_TYPE_UINT, "uint", 4, 0, 4294967295LL},
    {MTL_DATA_TYPE_HALF, "half", 2, 0, 0},
    {MTL_DATA_TYPE_FLOAT, "float", 4, 0, 0},
};

static int find(unsigned long type) {
    for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
        if (types[i].type == type) return i;
    return -1;
}

const char *mtl_data_type_name(unsigned long type) {
    int i = find(type);
    return i < 0 ? NULL : types[i].name;
}

static void put(void *out, const void *v, int size) { memcpy(out, v, (size_t)size); }

int mtl_constant_encode(const char *text, unsigned long type, void *out, char *err, size_t errlen) {
    int t = find(type);
    if (t < 0) {
        snprintf(err, errlen, "its type (MTLDataType %lu) is not one a value can be given for (bool, char, uchar, "
                              "short, ushort, int, uint, half, float are)", type);
        return -1;
    }
    char *end = NULL;
    if (type == MTL_DATA_TYPE_BOOL) {
        unsigned char b;
        if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0) b = 1;
        else if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0) b = 0;
        else {
            snprintf(err, errlen, "'%s' is not a bool: use true or false (or 1 or 0)", text);
            return -1;
        }
        put(out, &b, 1);
        return 0;
    }
    if (type == MTL_DATA_TYPE_HALF || type == MTL_DATA_TYPE_FLOAT) {
        errno = 0;
        double v = strtod(text, &end);
        if (end == text || *end || isnan(v)) {
            snprintf(err, errlen, "'%s' is not a number", text);
            return -1;
        }
        double max = type == MTL_DATA_TYPE_HALF ? 65504.0 : 3.4028234663852886e38;
        if (errno == ERANGE || fabs(v) > max) {
            snprintf(err, errlen, "%s is out of range for %s (magnitude at most %g)", text, types[t].name, max);
            return -1;
        }
        float f = (float)v;
        if (type == MTL_DATA_TYPE_FLOAT) put(out, &f, 4);
        else {
            uint16_t h = f16_from_f32(f);
            put(out, &h, 2);
        }
        return 0;
    }
    errno = 0;
    long long v = strtoll(text, &end, 0);
    if (end == text || *end) {
        snprintf(err, errlen, "'%s' is not an integer, as %s needs", text, types[t].name);
        return -1;
    }
    if (errno == ERANGE || v < types[t].lo || v > types[t].hi) {
        snprintf(err, errlen, "%s is out of range for %s (%lld..%lld)", text, types[t].name, types[t].lo, types[t].hi);
        return -1;
    }
    switch (types[t].size) {
    case 1: put(out, &(int8_t){(int8_t)(uint8_t)v}, 1); break;
    case 2: put(out, &(int16_t){(int16_t)(uint16_t)v}, 2); break;
    default: put(out, &(int32_t){(int32_t)(uint32_t)v}, 4); break;
    }
    return 0;
}
