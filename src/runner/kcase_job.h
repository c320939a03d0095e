/* kcase_job.h — what a kernel case's op_case carries (its priv), shared by the files
 * of runner/kcase_*: the case, its own op descriptor (the buffers read back after a
 * run, as that op's outputs, so the runner's determinism check covers them), and what
 * the backend learnt preparing it that the checks need after the backend let go of
 * the case (each buffer's initial bytes, whether the kernel may write it, where it
 * is bound). */
#ifndef GDN_KCASE_JOB_H
#define GDN_KCASE_JOB_H

#include "kcase/kcase_data.h"
#include "ops/op.h"
#include "runner/kcase_run.h"

typedef struct kc_job {
    const kc_case *source;      /* as written (not owned) */
    kc_case *lowered;           /* an mlx_metal_kernel case's plain case (owned), or NULL */
    const kc_case *c;           /* what runs: lowered or source */
    int poison;                 /* KC_POISON_* */
    int prepared;               /* the backend prepared it: what follows is filled */
    op_desc op;                 /* name "kernel"; bufs: the buffers read back */
    op_buf bufs[OP_MAX_BUFS];
    int slot[KC_MAX_BUFS];      /* case buffer -> its op buffer / tensor, or -1 */
    kc_tensor init[KC_MAX_BUFS];/* each buffer's initial bytes */
    int writable[KC_MAX_BUFS];
    int by_bytes[KC_MAX_BUFS];  /* bound with setBytes, no device buffer */
    int index[KC_MAX_BUFS];     /* the first [[buffer(n)]] it is bound at, -1 */
} kc_job;

static inline kc_job *kc_job_of(const op_case *oc) { return (kc_job *)oc->priv; }

#endif
