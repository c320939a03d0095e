/* checks_internal.h — the access check behind the __tsan_* hooks (tsan_hooks.c). */
#ifndef GDN_SW_CHECKS_INTERNAL_H
#define GDN_SW_CHECKS_INTERNAL_H

#include <stddef.h>

/* One access of n bytes at addr by the GPU thread running on this worker.  Ignores
 * addresses outside the threadgroup arena and the bound buffers, and any call made
 * outside a fiber of a full-check dispatch.  atomic: exempt from race checks. */
void sw_checks_on_access(const void *addr, size_t n, int is_write, int atomic);

#endif
