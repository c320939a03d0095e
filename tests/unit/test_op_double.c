/* test_op_double.c — test_op_double.h. */
#include <stdio.h>

#include "core/tensor.h"
#include "test_op_double.h"

static const op_dim dbl_dims[] = {{"N", NULL, 16, 1, 1024, "elements"}};
static const op_buf dbl_bufs[] = {{"x", BUF_IN, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}},
                                  {"y", BUF_OUT, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}}};

static int dbl_validate(const int64_t *dim, char *err, size_t errlen) {
    if (dim[0] % 2 == 0) return 0;
    snprintf(err, errlen, "N=%lld is odd: test_double takes even N", (long long)dim[0]);
    return -1;
}

static int dbl_setup(op_case *c, char *err, size_t errlen) {
    (void)err;
    (void)errlen;
    int64_t n = c->dim[0];
    c->t[0] = tensor_new("x", DT_F32, 1, &n);
    c->t[1] = tensor_new("y", DT_F32, 1, &n);
    if (!c->t[0] || !c->t[1]) return -1;
    for (int64_t i = 0; i < n; i++) tensor_set(c->t[0], i, (double)i);
    return 0;
}

/* "Kernel": y = 2 x. */
static int dbl_reference(const op_case *c, ref_kind kind, double **out) {
    (void)kind;
    for (int64_t i = 0; i < c->dim[0]; i++) out[1][i] = 2 * tensor_get(c->t[0], i);
    return 0;
}

const op_desc test_op_double = {
    .name = "test_double", .group = "test", .summary = "y = 2 x", .dims = dbl_dims, .ndims = 1, .bufs = dbl_bufs,
    .nbufs = 2, .validate = dbl_validate, .setup = dbl_setup, .reference = dbl_reference,
};
