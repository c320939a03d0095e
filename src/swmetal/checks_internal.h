/* checks_internal.h — the access checks behind the __tsan_* hooks (tsan_hooks.c),
 * and the per-dispatch state they need (exec.c sets it up). */
#ifndef GDN_SW_CHECKS_INTERNAL_H
#define GDN_SW_CHECKS_INTERNAL_H

#include <stddef.h>

struct sw_job;

/* One access of n bytes at addr by the GPU thread running on this worker, made by
 * the instruction at pc.  Ignores addresses outside the threadgroup arena and the
 * bound buffers, and any call made outside a fiber of a full-check dispatch.
 * atomic: exempt from race and conflict checks. */
void sw_checks_on_access(const void *addr, size_t n, int is_write, int atomic, const void *pc);

/* An instrumented function was entered from the call at call_site / returned: the
 * GPU thread's shadow call stack, so an access inside a prelude function that was
 * not inlined is reported at the user's line that called it. */
void sw_checks_on_call(const void *call_site);
void sw_checks_on_return(void);

/* Around a dispatch of an instrumented kernel: sets up (and frees) the device-memory
 * shadow of its buffers, or leaves the device check off when the shadow would not
 * fit in memory (saying so on stderr). */
void sw_checks_dispatch_begin(struct sw_job *job);
void sw_checks_dispatch_end(struct sw_job *job);

/* Arena bytes [off, off + n) hold a threadgroup variable's initializer, copied in
 * when the first thread reached its declaration: initialised, and written by no
 * thread of the current barrier interval (so no race with later accesses). */
struct sw_worker;
void sw_checks_tg_initialized(struct sw_worker *w, size_t off, size_t n);

#endif
