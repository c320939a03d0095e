/* op.h — the operation descriptor: everything the runner needs to know about one op.
 *
 * One op = one `op_desc` in one file under src/ops/ (shapes, buffers, generator,
 * launch geometry, references, bytes/flops, tolerances) and one line in the table in
 * src/ops/registry.c.  The CLI and the runner only ever see this interface, so adding
 * an op touches neither.
 *
 * Life of a run:
 *   1. the CLI fills dim[] from defaults and flags (names from op->dims), then calls
 *      op->validate(dim) — a non-zero return aborts with exit 2 and the message;
 *   2. op_case_new() calls op->setup(): it allocates every tensor of op->bufs with its
 *      ABI shape and dtype, and fills the inputs from the seeded generator;
 *   3. a backend produces the outputs (cpu: op->reference(PARITY) rounded into the
 *      output dtypes; sw/metal: op->launch() for each stage, then dispatch);
 *   4. the runner computes op->reference(F64) and (PARITY) into double arrays and
 *      compares each output with the tolerances in op->bufs[i].tol.
 */
#ifndef GDN_OP_H
#define GDN_OP_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "ref/ref_kind.h"

#define OP_MAX_DIMS 12
#define OP_MAX_BUFS 20
/* 64: decode_seq_steps dispatches one kernel per token (N <= 64). */
#define OP_MAX_STAGES 64
#define OP_MAX_BINDS 16
#define OP_MAX_CONSTANTS 4

typedef struct op_dim {
    const char *name;     /* flag name without dashes: "T" */
    const char *alias;    /* second accepted flag name or NULL ("Dk" for "K") */
    int64_t def;          /* default value */
    int64_t min, max;     /* accepted range, inclusive; tighter rules in validate() */
    const char *help;     /* one line */
} op_dim;

typedef enum buf_role {
    BUF_IN,      /* generated (or read from a fixture), read by the kernel */
    BUF_OUT,     /* written by the kernel, checked against the references */
    BUF_INOUT,   /* both (e.g. a state updated in place) — checked like BUF_OUT */
    BUF_SCRATCH  /* intermediate of a multi-stage op: written and read by kernels, not checked */
} buf_role;

/* allclose-style bound: |x - r| <= atol + rtol*|r| for every element, and
 * rel_l2(x, r) <= rel_l2 (0 = not checked). */
typedef struct op_tol {
    double atol, rtol, rel_l2;
} op_tol;

typedef struct op_buf {
    const char *name;      /* tensor name, e.g. "k", "beta", "A" */
    buf_role role;
    dtype dtype;           /* ABI dtype */
    const char *fixture_names; /* comma list of names this tensor has in fixtures,
                                  e.g. "g_log_decay,g_cumsum"; NULL = only `name` */
    op_tol tol[2];         /* per ref_kind, for BUF_OUT/BUF_INOUT */
} op_buf;

/* One instantiated problem: an op at one shape, with its tensors. */
typedef struct op_case {
    const struct op_desc *op;
    int64_t dim[OP_MAX_DIMS];      /* in op->dims order */
    tensor *t[OP_MAX_BUFS];        /* in op->bufs order; all allocated by setup() */
    uint32_t private_bufs;         /* bit i set by setup(): buffer i lives in GPU-private storage
                                      (MTLStorageModePrivate), filled and read back through a blit;
                                      the software device keeps it CPU-visible (as shared) */
    uint64_t seed;
    void *priv;                    /* op-owned extra state, freed by op->cleanup */
} op_case;

/* One kernel dispatch of an op (one stage of a pipeline).  Filled by op->launch(). */
typedef struct op_launch {
    const char *stage;             /* "kkt", or for chunk_fwd "cumsum", "kkt", ... */
    const char *shader;            /* repository-relative default source: "shaders/kkt.metal" */
    const char *function;          /* default kernel function name */
    uint32_t grid[3];              /* threadgroups per grid */
    uint32_t tg[3];                /* threads per threadgroup */
    int nbinds;
    struct {
        int index;                 /* [[buffer(index)]] */
        int buf;                   /* index into op->bufs / case->t */
        uint64_t offset;           /* bytes into the buffer (setBuffer:offset:), usually 0 */
        uint32_t repeat_stride;    /* bytes added to the binding's offset on each repeat, so
                                      repeat r sees the buffer from byte r*stride (0: same) */
    } binds[OP_MAX_BINDS];
    int params_index;              /* [[buffer(n)]] of the params bytes, -1 if none */
    uint32_t params[40];           /* passed with setBytes */
    int nparams;                   /* number of uint32 words in params */
    int ntgmem;
    struct {
        int index;                 /* [[threadgroup(index)]] */
        uint32_t bytes;
    } tgmem[4];                    /* setThreadgroupMemoryLength */
    /* Function constants the kernel needs (newFunctionWithName:constantValues:), e.g.
     * {301, "true"}; value forms as for --constant (bool/int/float by form).  --constant
     * flags override entries with the same index. */
    int nconstants;
    struct {
        int index;
        const char *value;
    } constants[OP_MAX_CONSTANTS];
    uint32_t repeat;               /* dispatches of this stage per run, one after another in
                                      order (0 or 1: once) — e.g. N launches of one kernel */
    int own_command_buffers;       /* 1: each of those dispatches is committed in a command
                                      buffer of its own; 0: they share the run's one */
    /* The kernel role of this dispatch when several dispatches share one (attn_bwd's
     * cast_dK and cast_dV: "cast"; decode_seq_steps' token0, token1, ...: "prep_step"):
     * --stage ROLE=FILE replaces all of them at once, as --stage STAGE=FILE replaces
     * one.  NULL: the stage name is the only name. */
    const char *role;
} op_launch;

typedef struct op_desc {
    const char *name;              /* CLI name: "kkt" */
    const char *group;             /* "gdn", "attn", "micro" */
    const char *summary;           /* one line for `gdnbench list` */
    const op_dim *dims;
    int ndims;
    const op_buf *bufs;
    int nbufs;

    /* 0 if dim[] is a shape this op (and its kernels) support; else writes a one-line
     * message naming the flag and the accepted values into err and returns -1. */
    int (*validate)(const int64_t *dim, char *err, size_t errlen);

    /* Allocates every tensor of bufs (ABI shapes) into c->t and fills the inputs from
     * c->seed.  Outputs/scratch are allocated zeroed.  A buffer the op does not use at
     * this shape may have 0 elements: it is then not checked (its out[i] is NULL).
     * Returns 0, or -1 with err set (e.g. out of memory). */
    int (*setup)(op_case *c, char *err, size_t errlen);

    /* Computes every BUF_OUT/BUF_INOUT tensor of the case into out[i] (double arrays,
     * indexed like bufs; entries for other roles are NULL and must be left alone),
     * from the case's input tensors.  Must be thread-safe w.r.t. other cases. */
    int (*reference)(const op_case *c, ref_kind kind, double **out);

    /* Number of dispatches (1 for single kernels; chunk_fwd: one per stage). */
    int (*nstages)(const op_case *c);
    /* Fills the launch of stage s.  Returns 0, or -1 if the op has no kernel.
     * nstages() and launch() read only c->op and c->dim (never the tensors), so the
     * kernel choice of every shape can be checked before any tensor exists. */
    int (*launch)(const op_case *c, int stage, op_launch *l);

    /* The stage doing the op's work, whose kernel `--shader FILE --function NAME`
     * replaces (the other stages then take FILE's kernels of their default names, or
     * ours): a stage or role name, or a comma list of them when the op's stages
     * differ by shape (the first present at a shape).  NULL: the only stage of a
     * single-stage op; an op of several equal stages (chunk_fwd) has none, and
     * --function is refused there in favour of --stage NAME=FILE:FUNCTION. */
    const char *main_stage;

    /* The ABI shape of each buffer, indexed like bufs, as a comma list of axes: a
     * dimension name ("B,T,Hg,K"), a fixed size ("1"), a sum of products of
     * dimensions and integers ("2*Hk*Dk+Hv*Dv": a dimension that is no axis of its own
     * is solved from it once the others are known), or "*" for an axis that is no
     * such expression (NT chunks).  A fixture without parameters gets its
     * dimensions from the shapes of its tensors through this (runner/fixture_bind.c).
     * NULL (or a NULL entry): not described; such a fixture must then carry its
     * dimensions as metadata, or the flags give them. */
    const char *const *shapes;

    /* Minimum bytes moved (each input read once, each output written once) and
     * useful floating-point operations, for GB/s and TFLOP/s. */
    double (*bytes)(const int64_t *dim);
    double (*flops)(const int64_t *dim);

    void (*cleanup)(op_case *c);   /* frees c->priv; may be NULL */

    /* 1 when the kernel's outputs may legitimately differ bitwise between runs of the
     * same inputs (float atomics in a run-dependent order): the runner should report
     * the determinism check but not fail the case on it. */
    int nondeterministic;

    /* Bit i set: bufs[i] is a BUF_OUT accumulator the kernel adds into (float atomics,
     * e.g. attn_bwd's dK/dV), so backends fill it with zeros before every run instead
     * of the poison pattern, as the kernel's ABI requires.  (A mask here rather than a
     * field of op_buf so positional op_buf initialisers elsewhere stay complete.) */
    uint32_t zero_init_bufs;
} op_desc;

/* The op table (src/ops/registry.c). */
extern const op_desc *const op_table[];
const op_desc *op_find(const char *name);
int op_dim_index(const op_desc *op, const char *name); /* by name or alias; -1 if none */

/* Case lifetime: op_case_new runs validate + setup; op_case_free frees tensors and priv. */
op_case *op_case_new(const op_desc *op, const int64_t *dim, uint64_t seed, char *err, size_t errlen);
void op_case_free(op_case *c);

/* For setup(): allocates c->t[i] as bufs[i] (its name and dtype) of this shape, zeroed;
 * -1 with "cannot allocate OP BUF (N MB): reduce the shape" in err when memory runs out. */
int op_case_alloc(op_case *c, int i, int ndim, const int64_t *shape, char *err, size_t errlen);

/* Convenience for op files: dimension value by name (aborts on a name the op lacks,
 * which is a programming error). */
int64_t op_dimv(const op_case *c, const char *name);

#endif
