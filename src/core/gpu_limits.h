/* gpu_limits.h — the launch limits of Apple GPUs a kernel's launch can break, judged
 * from its launch facts alone (threads per threadgroup, threadgroup memory), so they
 * work on every backend: a run on the software device or the CPU warns of what a Mac
 * would refuse or run badly.
 *
 * The figures (sources in gpu_limits.c):
 *   1024  threads per threadgroup, the most any Apple GPU family allows;
 *   896   a lower maxTotalThreadsPerThreadgroup seen on a real chip: M2 Ultra gives
 *         it to register-heavy pipelines, so a 1024-thread launch fails there;
 *   32    threads per simdgroup: a threadgroup of another multiple leaves lanes idle;
 *   32 KiB threadgroup memory per threadgroup, the most any Apple GPU family allows;
 *   64 KiB threadgroup memory per GPU core (Apple7/Apple8: M1, M2), which decides how
 *         many threadgroups of a size sit on a core at once;
 *   768   threads a core keeps resident even for the most register-heavy kernels
 *         (Apple7/Apple8): threadgroup memory that allows fewer limits occupancy more
 *         than any register use would. */
#ifndef GDN_GPU_LIMITS_H
#define GDN_GPU_LIMITS_H

#include <stdint.h>

#define GPU_MAX_THREADS_PER_TG 1024u
#define GPU_LOW_PIPELINE_MAX_THREADS 896u
#define GPU_SIMD_WIDTH 32u
#define GPU_MAX_TGMEM_BYTES 32768u
#define GPU_CORE_TGMEM_BYTES 65536u
#define GPU_CORE_MIN_RESIDENT_THREADS 768u

/* Each limit a launch can break (a bit of gpu_limits_check's mask). */
typedef enum gpu_limit {
    GPU_LIMIT_THREADS = 0,   /* threads per threadgroup over 1024: fails on every Mac */
    GPU_LIMIT_THREADS_LOW,   /* over 896, at most 1024: fails where a pipeline gets 896 */
    GPU_LIMIT_SIMD_PARTIAL,  /* threads per threadgroup not a multiple of 32 */
    GPU_LIMIT_TGMEM,         /* threadgroup memory over 32 KiB: fails on every Mac */
    GPU_LIMIT_TGMEM_OCCUPANCY, /* threadgroup memory holds a core under 768 threads */
    GPU_NLIMITS
} gpu_limit;

/* The limits one launch breaks, as a mask of 1u << gpu_limit.  tg: threads per
 * threadgroup in x, y, z; tgmem_bytes: threadgroup memory per threadgroup (declared
 * and set lengths together).  A launch of no threads (the CPU backend's) breaks none. */
unsigned gpu_limits_check(const uint32_t tg[3], uint32_t tgmem_bytes);

/* Threadgroups of tgmem_bytes that fit a core's threadgroup memory at once (0 for
 * none: over 64 KiB; UINT32_MAX when the launch uses none). */
uint32_t gpu_limits_tgs_per_core(uint32_t tgmem_bytes);

#endif
