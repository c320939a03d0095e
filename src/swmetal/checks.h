/* checks.h — the software device's checks: mode setting and guarded buffers.
 *
 *   none: plain memory, no checks beyond the executor's own (limits, faults,
 *         divergent barriers, poisoned threadgroup memory);
 *   fast: (default) every buffer ends at a PROT_NONE guard page, so a write or read
 *         past the end faults and is reported with kernel, buffer index, byte offset
 *         past the end and thread.  The data start is 16-byte aligned (vector loads
 *         need it), so when a length is not a multiple of 16 the guard begins up to
 *         15 bytes after the end;
 *   numerics: fast's buffers, and kernels run in their numerics variant (numerics.c):
 *         the first float/half/bfloat operation that makes Inf or NaN of finite
 *         operands, conversions that overflow, signed integer overflow, integer
 *         division by zero, out-of-range shifts, 8/16-bit integers that wrap;
 *   full: also a guard page before each buffer, the numeric checks, and kernels run in their
 *         instrumented variant (every memory access calls a __tsan_* hook
 *         implemented in checks.c): exact out-of-bounds (any byte outside [start,
 *         start+length); threadgroup memory past every declared region), reads of
 *         never-written threadgroup memory, threadgroup races between barriers
 *         (lanes of one simdgroup are ordered by simd syncs too), and device-memory
 *         conflicts within a dispatch: two threads writing the same bytes (of
 *         different threadgroups, or of one with no barrier between), a threadgroup
 *         reading bytes another writes.
 * Whatever the mode, what the checks find names the .metal line of each access
 * (findings.h, symbolize.h).
 *
 * The mode is a device's (swmtl_options.checks; GDNBENCH_SW_CHECKS by default).  A
 * buffer keeps the layout of the mode it was allocated in. */
#ifndef GDN_SW_CHECKS_H
#define GDN_SW_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "swmetal/swmetal.h"

enum {
    SW_CHECKS_NONE = SWMTL_CHECKS_NONE,
    SW_CHECKS_FAST = SWMTL_CHECKS_FAST,
    SW_CHECKS_FULL = SWMTL_CHECKS_FULL,
    SW_CHECKS_NUMERICS = SWMTL_CHECKS_NUMERICS
};

/* GDNBENCH_SW_CHECKS, read once (a bad value is reported once), else fast. */
int sw_checks_default(void);
const char *sw_checks_mode_name(int mode);

/* Memory for one MTLBuffer (or setBytes copy), laid out for the mode. */
typedef struct sw_guarded {
    uint8_t *map;        /* whole mapping, guard pages included */
    size_t map_size;
    uint8_t *data;       /* `length` bytes, zero-filled, 16-byte aligned */
    size_t length;
    int mode;            /* the mode it was laid out for */
    /* Full checks: the buffer's device-memory shadow, kept between dispatches (its
     * layout is checks.c's; NULL until a full-check dispatch uses the buffer). */
    void *shadow;
    size_t shadow_bytes;
} sw_guarded;

/* Returns 0, or -1 (length 0 or out of memory; errno set). */
int sw_guarded_alloc(sw_guarded *g, size_t length, int mode);
void sw_guarded_free(sw_guarded *g);

#endif
