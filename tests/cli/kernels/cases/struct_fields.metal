// struct_fields.metal — a `constant Params &` whose layout a naive packing gets
// wrong (test_kernel_struct.sh): float3 is 16-byte aligned and sized, packed_float3
// 12 bytes, and the bool's padding puts the int64_t at 8.  Each field is copied out.
#include <metal_stdlib>
using namespace metal;

struct Params {
    bool flag;
    long big;
    float3 v;
    packed_float3 p;
    float tail;
    int arr[3];
};

kernel void struct_fields(constant Params &prm [[buffer(0)]], device float *out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    out[0] = prm.flag ? 1.0f : 0.0f;
    out[1] = float(prm.big);
    out[2] = prm.v.x; out[3] = prm.v.y; out[4] = prm.v.z;
    out[5] = prm.p.x; out[6] = prm.p.y; out[7] = prm.p.z;
    out[8] = prm.tail;
    out[9] = float(prm.arr[0]); out[10] = float(prm.arr[1]); out[11] = float(prm.arr[2]);
}

// Nested structs and an array of structs (test_kernel_struct.sh): Inner's float3 is
// 16-byte aligned, so Inner is 32 bytes and `in` starts at 16, `list` at 48 with a
// stride of 32; a layout that packs members or ignores the nested offsets moves
// every value after `n`.
struct Inner {
    bool on;
    float3 v;
};
struct Outer {
    int n;
    Inner in;
    Inner list[2];
    packed_float3 tail;
};

kernel void nested_fields(constant Outer &o [[buffer(0)]], device float *out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    if (i != 0) return;
    out[0] = float(o.n);
    out[1] = o.in.on ? 1.0f : 0.0f;
    out[2] = o.in.v.x; out[3] = o.in.v.y; out[4] = o.in.v.z;
    for (int k = 0; k < 2; k++) {
        out[5 + 4 * k] = o.list[k].on ? 1.0f : 0.0f;
        out[6 + 4 * k] = o.list[k].v.x; out[7 + 4 * k] = o.list[k].v.y; out[8 + 4 * k] = o.list[k].v.z;
    }
    out[13] = o.tail.x; out[14] = o.tail.y; out[15] = o.tail.z;
}
