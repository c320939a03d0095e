/* mtl_types.h — Apple's numbers for Metal's enums that both sides of the bridge speak:
 * the host (src/metal, the runner) reads them from any MTLDevice's reflection and
 * hands them to its function constants, and the software device (src/swmetal)
 * answers with them.  Values as in Metal's MTLArgument.h (MTLDataType,
 * MTLArgumentType); one copy, so the two sides cannot drift apart. */
#ifndef GDN_MTL_TYPES_H
#define GDN_MTL_TYPES_H

/* MTLDataType.  A scalar type's 2-, 3- and 4-vectors follow it: FLOAT + 1 is float2,
 * FLOAT + 3 float4 (likewise for every scalar below). */
enum {
    MTL_DATA_TYPE_NONE = 0,
    MTL_DATA_TYPE_STRUCT = 1,
    MTL_DATA_TYPE_ARRAY = 2,
    MTL_DATA_TYPE_FLOAT = 3,
    MTL_DATA_TYPE_HALF = 16,
    MTL_DATA_TYPE_INT = 29,
    MTL_DATA_TYPE_UINT = 33,
    MTL_DATA_TYPE_SHORT = 37,
    MTL_DATA_TYPE_USHORT = 41,
    MTL_DATA_TYPE_CHAR = 45,
    MTL_DATA_TYPE_UCHAR = 49,
    MTL_DATA_TYPE_BOOL = 53,
    MTL_DATA_TYPE_LONG = 81,
    MTL_DATA_TYPE_ULONG = 85,
    MTL_DATA_TYPE_BFLOAT = 121
};

/* MTLArgumentType: what a kernel parameter is bound to. */
enum { MTL_ARGUMENT_TYPE_BUFFER = 0, MTL_ARGUMENT_TYPE_THREADGROUP_MEMORY = 1 };

#endif
