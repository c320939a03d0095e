/* registry.c — the table of ops and the op_case lifecycle.
 *
 * Adding an op: write src/ops/<name>.c defining `const op_desc op_<name>` and add
 * one line to op_table below.  Nothing else changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ops/op.h"

extern const op_desc op_cumsum;
extern const op_desc op_kkt, op_solve_tril, op_wy, op_chunk_h, op_chunk_o, op_chunk_fwd, op_recurrent, op_decode;
extern const op_desc op_prep_step, op_decode_seq, op_decode_seq_steps;
extern const op_desc op_attn_fwd, op_attn_bwd;
extern const op_desc op_micro_dispatch, op_micro_copy, op_micro_reduce, op_micro_alu, op_micro_tgmem,
    op_micro_decode_ctx;

const op_desc *const op_table[] = {
    &op_cumsum,
    &op_kkt,
    &op_solve_tril,
    &op_wy,
    &op_chunk_h,
    &op_chunk_o,
    &op_chunk_fwd,
    &op_recurrent,
    &op_decode,
    &op_prep_step,
    &op_decode_seq,
    &op_decode_seq_steps,
    &op_attn_fwd,
    &op_attn_bwd,
    &op_micro_dispatch,
    &op_micro_copy,
    &op_micro_reduce,
    &op_micro_alu,
    &op_micro_tgmem,
    &op_micro_decode_ctx,
    NULL,
};

const op_desc *op_find(const char *name) {
    for (int i = 0; op_table[i]; i++)
        if (strcmp(op_table[i]->name, name) == 0) return op_table[i];
    return NULL;
}

int op_dim_index(const op_desc *op, const char *name) {
    for (int i = 0; i < op->ndims; i++) {
        if (strcmp(op->dims[i].name, name) == 0) return i;
        if (op->dims[i].alias && strcmp(op->dims[i].alias, name) == 0) return i;
    }
    return -1;
}

int64_t op_dimv(const op_case *c, const char *name) {
    int i = op_dim_index(c->op, name);
    if (i < 0) {
        fprintf(stderr, "internal error: op %s has no dimension %s\n", c->op->name, name);
        abort();
    }
    return c->dim[i];
}

int op_case_alloc(op_case *c, int i, int ndim, const int64_t *shape, char *err, size_t errlen) {
    const op_buf *b = &c->op->bufs[i];
    c->t[i] = tensor_new(b->name, b->dtype, ndim, shape);
    if (!c->t[i]) {
        snprintf(err, errlen, "cannot allocate %s %s (%.1f MB): reduce the shape", c->op->name, b->name,
                 (double)shape_nbytes(b->dtype, ndim, shape) / 1e6);
        return -1;
    }
    return 0;
}

op_case *op_case_new(const op_desc *op, const int64_t *dim, uint64_t seed, char *err, size_t errlen) {
    for (int i = 0; i < op->ndims; i++) {
        if (dim[i] < op->dims[i].min || dim[i] > op->dims[i].max) {
            snprintf(err, errlen, "--%s %lld is out of range for %s: accepted %lld..%lld", op->dims[i].name,
                     (long long)dim[i], op->name, (long long)op->dims[i].min, (long long)op->dims[i].max);
            return NULL;
        }
    }
    if (op->validate && op->validate(dim, err, errlen) != 0) return NULL;
    op_case *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->op = op;
    c->seed = seed;
    memcpy(c->dim, dim, sizeof(int64_t) * (size_t)op->ndims);
    if (op->setup(c, err, errlen) != 0) {
        op_case_free(c);
        return NULL;
    }
    for (int i = 0; i < op->nbufs; i++) {
        if (!c->t[i]) {
            snprintf(err, errlen, "internal error: %s setup left tensor %s unallocated", op->name, op->bufs[i].name);
            op_case_free(c);
            return NULL;
        }
    }
    return c;
}

void op_case_free(op_case *c) {
    if (!c) return;
    if (c->op->cleanup) c->op->cleanup(c);
    for (int i = 0; i < OP_MAX_BUFS; i++) tensor_free(c->t[i]);
    free(c);
}
