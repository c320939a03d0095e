// msl_helpers.h — included twice by features.metal (through "helpers_again.h"
// too): #pragma once must keep it single.  Includes a <metal_*> header itself.
#pragma once

#include <metal_simdgroup>
#include "helpers_again.h"

// overloads that differ only in the address space of the pointee
inline float space_tag(device const float *p) { return 1.0f + 0.0f * p[0]; }
inline float space_tag(threadgroup const float *p) { return 2.0f + 0.0f * p[0]; }
inline float space_tag(constant float *p) { return 3.0f + 0.0f * p[0]; }
inline float space_tag(thread const float *p) { return 4.0f + 0.0f * p[0]; }

// member functions qualified by the address space of `this`, identical bodies
// (as MLX writes them), and constructors likewise
struct Acc {
    float v;
    Acc() thread : v(7) {}
    Acc() threadgroup : v(7) {}
    Acc(float x) thread : v(x) {}
    Acc(float x) device : v(x) {}
    float get() const thread { return v + 100.0f; }
    float get() const device { return v + 100.0f; }
    float get() const threadgroup { return v + 100.0f; }
    float get() const constant { return v + 100.0f; }
};

template <typename T> inline T first_of(device const T *p) { return p[0]; }

// an array parameter in the constant address space is a pointer
inline int sum2(constant const int strides[2]) { return strides[0] + strides[1]; }

// MSL has no erf; a kernel library may define its own without ambiguity
inline float erf(float x) { return x * 1000.0f; }
