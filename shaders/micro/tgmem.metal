// tgmem.metal — micro.tgmem: threadgroup memory bandwidth and bank conflicts.
//
// A threadgroup (256 threads) loads 4096 words (16 KB) into threadgroup memory,
// then each thread reads `rounds` words at (tid*stride + r) mod 4096 and adds them.
// Threadgroup memory has 32 four-byte banks: the word's bank is its index mod 32,
// so within a simdgroup stride 1 and 33 touch 32 different banks, stride 2 two
// words per bank (2-way conflict) and stride 32 one bank for all lanes (32-way).
// ABI: 0 in u32[groups*4096], 1 out u32[groups*256], 2 params uint[2] = {stride, rounds}.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TG = 256;
constant constexpr uint WORDS = 4096;

kernel void micro_tgmem_read(device const uint *in [[buffer(0)]],
                             device uint *out [[buffer(1)]],
                             constant uint *params [[buffer(2)]],
                             uint tid [[thread_index_in_threadgroup]],
                             uint g [[threadgroup_position_in_grid]]) {
    threadgroup uint words[WORDS];
    for (uint i = tid; i < WORDS; i += TG) words[i] = in[g * WORDS + i];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint stride = params[0], rounds = params[1];
    uint start = tid * stride, acc = 0;
    for (uint r = 0; r < rounds; r++) acc += words[(start + r) & (WORDS - 1)];
    out[g * TG + tid] = acc;
}
