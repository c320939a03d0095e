/* gpu_limits.c — which of the Apple GPU launch limits a launch breaks (gpu_limits.h).
 *
 * Sources (all public):
 *  [FST]   Apple, Metal Feature Set Tables (developer.apple.com/metal/Metal-Feature-Set-
 *          Tables.pdf), "Compute": maximum threads per threadgroup 1024 and maximum
 *          total threadgroup memory allocation 32 KB for every Apple GPU family the
 *          Macs have (Apple7 M1, Apple8 M2, Apple9 M3/M4).
 *  [896]   github.com/Blaizzy/mlx-vlm issue 1799 and jundot/omlx issue 2049: on an M2
 *          Ultra, a kernel compiled for 1024 threads fails with "Thread group size
 *          (1024) is greater than maximum allowed threads per threadgroup (896)": a
 *          pipeline's maxTotalThreadsPerThreadgroup falls below 1024 when the kernel
 *          uses many registers, and Apple documents no floor for it.
 *  [MB]    github.com/philipturner/metal-benchmarks README, "On-Chip Memory" table,
 *          per core of Apple7/Apple8 (M1, M2): Shared Memory 64 KB, Max Threads
 *          768-3072 (768 with the most registers per thread, 3072 with the fewest).
 *          M3 and M4 (Apple9) allocate a core's on-chip memory among registers,
 *          threadgroup memory and cache as kernels run ("Dynamic Caching", Apple's
 *          M3 announcement, 2023-10-30) and publish no per-core figure: the count of
 *          threadgroups per core is the M1/M2 one, a guide there, not a measurement.
 * Simdgroups are cut from the linear thread index in the threadgroup
 * (thread_index_in_threadgroup / 32), so what leaves lanes idle is the threadgroup's
 * thread count, not its x extent alone: 16x2 fills whole simdgroups, 48x1 does not. */
#include <stdint.h>

#include "core/gpu_limits.h"

uint32_t gpu_limits_tgs_per_core(uint32_t tgmem_bytes) {
    return tgmem_bytes ? GPU_CORE_TGMEM_BYTES / tgmem_bytes : UINT32_MAX;
}

unsigned gpu_limits_check(const uint32_t tg[3], uint32_t tgmem_bytes) {
    uint64_t threads = (uint64_t)tg[0] * tg[1] * tg[2];
    unsigned mask = 0;
    if (threads == 0) return 0;
    if (threads > GPU_MAX_THREADS_PER_TG)
        mask |= 1u << GPU_LIMIT_THREADS;
    else if (threads > GPU_LOW_PIPELINE_MAX_THREADS)
        mask |= 1u << GPU_LIMIT_THREADS_LOW;
    if (threads % GPU_SIMD_WIDTH) mask |= 1u << GPU_LIMIT_SIMD_PARTIAL;
    if (tgmem_bytes > GPU_MAX_TGMEM_BYTES) {
        mask |= 1u << GPU_LIMIT_TGMEM;
    } else if (tgmem_bytes) {
        uint64_t resident = (uint64_t)gpu_limits_tgs_per_core(tgmem_bytes) * threads;
        if (resident < GPU_CORE_MIN_RESIDENT_THREADS) mask |= 1u << GPU_LIMIT_TGMEM_OCCUPANCY;
    }
    return mask;
}
