// gdn_solve_tril.metal — gdnbench's per-chunk inverse Ai = (I + A)^-1 (GDN pipeline step 3).
//
// A is strictly lower triangular inside each chunk, so I + A is unit lower
// triangular and so is its inverse.  f32 throughout, no rounding to bf16.
//
// ABI (mlx-native's chunk_tri_solve_invert_f32):
//   buffer 0  A_strict f32 [B, T, H, BT]   only entries j < i of each chunk row are read
//   buffer 1  A_inv    f32 [B, T, H, BT]   full rows: 1 on the diagonal, 0 above it
//   buffer 2  params   u32[4] = {B, T, H, BT}
//   threadgroup 0  2*BT*BT*4 bytes (32 KB): [0, BT*BT) the chunk's A rows,
//                  [BT*BT, 2*BT*BT) the inverse, column c owned by thread c
//   grid (NT, H, B), BT threads.  BT = 64 is compiled in (validate refuses others).
//
// Shapes: every T >= 1 (rows of a partial chunk past T are neither read nor
// written), any H.  The 32 KB of threadgroup memory is the whole budget, so there
// is no static threadgroup storage here.
//
// Design: thread c computes column c of X = (I + A)^-1 by forward substitution,
//   X[c][c] = 1,  X[i][c] = -sum_{m=c}^{i-1} A[i][m] X[m][c]  (ascending m),
// which needs no barrier after A is staged: a thread reads only its own column of
// X and the shared (broadcast) A[i][m].  Row i of the result is written by all 64
// threads at once, one float each: 256 contiguous bytes per row.  The summation
// order is the parity reference's (mlx-native's row-by-row forward substitution).
//
// Bytes at the default shape (B=1, T=4096, H=32): A 33.6 MB + Ai 33.6 MB = 67.1 MB
// -> roofline 123 us on M4 Max (546 GB/s).  Math: 64^3/3 flop per chunk = 0.18 GFLOP;
// the serial dependence along a column (up to 2016 dependent multiply-adds for
// column 0) rather than bandwidth bounds each threadgroup, hidden by the 2048
// threadgroups in flight.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TRI_BT = 64;

kernel void chunk_tri_solve_invert_f32(device const float *A [[buffer(0)]],
                                       device float *A_inv [[buffer(1)]],
                                       constant uint *params [[buffer(2)]],
                                       threadgroup float *tg [[threadgroup(0)]],
                                       uint3 tgid [[threadgroup_position_in_grid]],
                                       uint tid [[thread_index_in_threadgroup]]) {
    const uint T = params[1], H = params[2];
    const uint chunk = tgid.x, h = tgid.y, b = tgid.z;
    const uint t0 = chunk * TRI_BT;
    const uint n = min(TRI_BT, T - t0);
    threadgroup float *L = tg;                    // [BT][BT] A rows
    threadgroup float *X = tg + TRI_BT * TRI_BT;  // [BT][BT] inverse

    const ulong row0 = ((ulong)b * T + t0) * H + h;  // in units of BT-float rows
    // Stage the rows that exist: 16 float4 per row, 16 per thread.
    for (uint e = tid; e < TRI_BT * TRI_BT / 4; e += TRI_BT) {
        const uint row = e / (TRI_BT / 4), c4 = e % (TRI_BT / 4);
        if (row < n)
            *(threadgroup float4 *)(L + row * TRI_BT + c4 * 4) =
                *(device const float4 *)(A + (row0 + (ulong)row * H) * TRI_BT + c4 * 4);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    const uint c = tid;
    for (uint i = 0; i < n; i++) {
        float x;
        if (i < c) {
            x = 0.0f;
        } else if (i == c) {
            x = 1.0f;
        } else {
            float s = 0.0f;
            for (uint m = c; m < i; m++) s += -L[i * TRI_BT + m] * X[m * TRI_BT + c];
            x = s;
        }
        X[i * TRI_BT + c] = x;
        A_inv[(row0 + (ulong)i * H) * TRI_BT + c] = x;
    }
}
