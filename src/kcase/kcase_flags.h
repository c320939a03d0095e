/* kcase_flags.h — the flag form of a kernel case: `gdnbench kernel FILE.metal
 * --function NAME --grid|--threadgroups X[,Y,Z] --threadgroup X[,Y,Z] --buffer
 * NAME=SPEC ... --expect NAME=FILE ...` as the same kc_case a case file gives.
 *
 * SPEC is a tensor file (FILE.npy, FILE.npz:TENSOR, FILE.safetensors:TENSOR), an array
 * `dtype[d0,d1,...]` with an optional `:init` (zeros, poison, fill=V, arange=START,STEP,
 * uniform=LO,HI, normal=MEAN,STD), or a scalar `dtype:VALUE`. */
#ifndef GDN_KCASE_FLAGS_H
#define GDN_KCASE_FLAGS_H

#include <stddef.h>

#include "kcase/kcase.h"

typedef struct kc_flags {
    const char *source, *function;
    const char *grid, *threadgroups, *threadgroup;  /* "X[,Y,Z]" */
    const char **buffers;   /* "NAME=SPEC", in order */
    int nbuffers;
    const char **expects;   /* "NAME=FILE" */
    int nexpects;
    const char **constants; /* "NAME=VALUE" or "INDEX=VALUE" */
    int nconstants;
} kc_flags;

/* NULL with one line naming the flag and the fix. */
kc_case *kc_from_flags(const kc_flags *f, char *err, size_t errlen);

#endif
