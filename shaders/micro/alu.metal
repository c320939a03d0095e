// alu.metal — micro.alu: arithmetic throughput of float, half and bfloat, as
// scalar FMA chains and as simdgroup_matrix 8x8 multiply-accumulates.
//
// Scalar: each thread runs 8 independent chains x = x*a + b for `steps` steps
// (8 chains keep the ALU pipeline full), then writes the chains' sum.  a and b
// come from a buffer so the compiler cannot fold the loop; the runner passes
// a = 1 and b = +-1 and starts from small integers, so every value stays an
// integer of at most 8 significant bits and every type computes it exactly:
// the result is checked bit for bit and depends on the number of steps.
// MMA: each simdgroup runs 4 independent chains C = A*C + B with A = I and B in
// {-1, 0, 1} (again exact in every type), then writes the chains' sum.
// bfloat kernels exist only where the compiler has bfloat (MSL 3.1).
// ABI: 0 coef f32[16] = {a, b0..b7}, 1 mat f32[128] = {A row-major, B row-major},
//      2 out f32 (one per thread, or 64 per simdgroup), 3 params uint[1] = {steps}.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TG = 256;
constant constexpr uint CHAINS = 8;
constant constexpr uint MMA_CHAINS = 4;

// Start value of chain c of thread (or simdgroup) i: an integer in [-8, 7].
static float chain_start(uint i, uint c, uint chains) { return float(int((i * chains + c) % 16u)) - 8.0f; }

template <typename T>
static float fma_chains(device const float *coef, uint steps, uint gid) {
    T a = T(coef[0]);
    T b[CHAINS], x[CHAINS];
    for (uint c = 0; c < CHAINS; c++) {
        b[c] = T(coef[1 + c]);
        x[c] = T(chain_start(gid, c, CHAINS));
    }
    for (uint i = 0; i < steps; i++)
        for (uint c = 0; c < CHAINS; c++) x[c] = x[c] * a + b[c];
    float s = 0.0f;
    for (uint c = 0; c < CHAINS; c++) s += float(x[c]);
    return s;
}

// stage holds TG/32 simdgroups x 128 elements (A, B on the way in; C on the way out).
template <typename T>
static void mma_chains(device const float *mat, device float *out, uint steps, uint g, uint sg, uint lane,
                       threadgroup T *stage) {
    threadgroup T *mine = stage + sg * 128;
    for (uint e = lane; e < 128; e += 32) mine[e] = T(mat[e]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_matrix<T, 8, 8> A, B, C[MMA_CHAINS];
    simdgroup_load(A, mine, 8);
    simdgroup_load(B, mine + 64, 8);
    uint sg_global = g * (TG / 32) + sg;
    for (uint c = 0; c < MMA_CHAINS; c++)
        C[c] = make_filled_simdgroup_matrix<T, 8, 8>(T(chain_start(sg_global, c, MMA_CHAINS)));
    for (uint i = 0; i < steps; i++)
        for (uint c = 0; c < MMA_CHAINS; c++) simdgroup_multiply_accumulate(C[c], A, C[c], B);
    float s0 = 0.0f, s1 = 0.0f;
    for (uint c = 0; c < MMA_CHAINS; c++) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_store(C[c], mine, 8);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        s0 += float(mine[lane]);
        s1 += float(mine[lane + 32]);
    }
    out[sg_global * 64 + lane] = s0;
    out[sg_global * 64 + lane + 32] = s1;
}

kernel void micro_alu_f32(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                          device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                          uint gid [[thread_position_in_grid]]) {
    out[gid] = fma_chains<float>(coef, params[0], gid);
}

kernel void micro_alu_f16(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                          device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                          uint gid [[thread_position_in_grid]]) {
    out[gid] = fma_chains<half>(coef, params[0], gid);
}

kernel void micro_mma_f32(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                          device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                          uint g [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float stage[TG / 32 * 128];
    mma_chains<float>(mat, out, params[0], g, sg, lane, stage);
}

kernel void micro_mma_f16(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                          device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                          uint g [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]]) {
    threadgroup half stage[TG / 32 * 128];
    mma_chains<half>(mat, out, params[0], g, sg, lane, stage);
}

#if defined(__HAVE_BFLOAT__)
kernel void micro_alu_bf16(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                           device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                           uint gid [[thread_position_in_grid]]) {
    out[gid] = fma_chains<bfloat>(coef, params[0], gid);
}

kernel void micro_mma_bf16(device const float *coef [[buffer(0)]], device const float *mat [[buffer(1)]],
                           device float *out [[buffer(2)]], constant uint *params [[buffer(3)]],
                           uint g [[threadgroup_position_in_grid]], uint sg [[simdgroup_index_in_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]]) {
    threadgroup bfloat stage[TG / 32 * 128];
    mma_chains<bfloat>(mat, out, params[0], g, sg, lane, stage);
}
#endif
