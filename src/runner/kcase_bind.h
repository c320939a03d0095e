/* kcase_bind.h — a kernel case's buffers bound to a compiled kernel's parameters: by
 * the parameter names the pipeline's reflection gives, at the indices the function
 * declares (or by a buffer's "index", or a dispatch's "bind"), threadgroup memory
 * lengths by index, and the dispatch held to the pipeline's limits.  Everything a
 * case gets wrong about its kernel is one line naming the key and the fix, before
 * anything runs. */
#ifndef GDN_KCASE_BIND_H
#define GDN_KCASE_BIND_H

#include <stddef.h>
#include <stdint.h>

#include "kcase/kcase.h"
#include "kcase/kcase_data.h"
#include "metal/mtl.h"

typedef struct kc_binding {
    int kind;              /* MTL_ARG_BUFFER or MTL_ARG_THREADGROUP */
    int index;             /* [[buffer(n)]] / [[threadgroup(n)]] */
    char param[64];
    int buffer;            /* the case's buffer (MTL_ARG_BUFFER) */
    uint32_t tg_bytes;     /* MTL_ARG_THREADGROUP: setThreadgroupMemoryLength */
    int writable;          /* the kernel may write through it */
    const mtl_argument *arg; /* the pipeline's argument (valid while the pipeline lives) */
} kc_binding;

/* Binds launch `launch` of c (whose function is `function`) to the pipeline's
 * arguments args[0..nargs): out[0..*nout).  max_threads: the pipeline's
 * maxTotalThreadsPerThreadgroup.  0, or -1 with err. */
int kc_bind_launch(const kc_case *c, int launch, const char *function, const mtl_argument *args, int nargs,
                   unsigned max_threads, kc_binding *out, int *nout, char *err, size_t errlen);

/* After every launch is bound (binds[l][0..nbinds[l])): each buffer of the case is
 * bound somewhere, and one with "expect" is written by some launch (not only bound
 * to const parameters).  writable[i] is set for the buffers some launch may write. */
int kc_bind_check_case(const kc_case *c, kc_binding *const *binds, const int *nbinds, int *writable, char *err,
                       size_t errlen);

/* Buffer i's bytes from its "struct" fields, laid out by the reflection of the
 * parameter a it is bound to (kcase_struct.c): 0, or -1 with err naming the field
 * (an unknown one with the struct's real fields). */
int kc_struct_contents(const kc_case *c, int i, const mtl_argument *a, kc_tensor *out, char *err, size_t errlen);

#endif
