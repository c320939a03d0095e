/* checks_internal.h — the access check behind the __tsan_* hooks (tsan_hooks.c). */
#ifndef GDN_SW_CHECKS_INTERNAL_H
#define GDN_SW_CHECKS_INTERNAL_H

#include <stddef.h>

/* One access of n bytes at addr by the GPU thread running on this worker.  Ignores
 * addresses outside the threadgroup arena and the bound buffers, and any call made
 * outside a fiber of a full-check dispatch.  atomic: exempt from race checks. */
void sw_checks_on_access(const void *addr, size_t n, int is_write, int atomic);

/* Arena bytes [off, off + n) hold a threadgroup variable's initializer, copied in
 * when the first thread reached its declaration: initialised, and written by no
 * thread of the current barrier interval (so no race with later accesses). */
struct sw_worker;
void sw_checks_tg_initialized(struct sw_worker *w, size_t off, size_t n);

#endif
