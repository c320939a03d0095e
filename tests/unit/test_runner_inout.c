/* test_runner_inout.c — a BUF_INOUT tensor (input updated in place by the kernel)
 * starts every run from its original input, and the references read that input. */
#include <string.h>

#include "runner/runner.h"
#include "test.h"

static const op_dim inout_dims[] = {{"N", NULL, 64, 1, 1024, "elements"}};
static const op_buf inout_bufs[] = {{"x", BUF_INOUT, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}}};

static int inout_setup(op_case *c, char *err, size_t errlen) {
    int64_t n = c->dim[0];
    c->t[0] = tensor_new("x", DT_F32, 1, &n);
    if (!c->t[0]) return -1;
    for (int64_t i = 0; i < n; i++) tensor_set(c->t[0], i, (double)i);
    return 0;
}

/* "Kernel": x += 1. */
static int inout_reference(const op_case *c, ref_kind kind, double **out) {
    for (int64_t i = 0; i < c->dim[0]; i++) out[0][i] = tensor_get(c->t[0], i) + 1.0;
    return 0;
}

static const op_desc op_inout = {
    .name = "test_inout", .group = "test", .summary = "x += 1 in place", .dims = inout_dims, .ndims = 1,
    .bufs = inout_bufs, .nbufs = 1, .setup = inout_setup, .reference = inout_reference,
};

TEST(runner_inout_runs_from_the_original_input) {
    char err[256];
    int64_t dim[1] = {64};
    op_case *c = op_case_new(&op_inout, dim, 1, err, sizeof err);
    backend *b = backend_cpu_open(err, sizeof err);
    CHECK(c && b);
    if (!c || !b) return;
    run_opts o = {.backend = "cpu", .warmup = 2, .iters = 3, .check = CHECK_BOTH};
    run_record rec;
    CHECK_EQ_INT(runner_run_case(b, c, &o, &rec), 0);
    CHECK_MSG(rec.status == RUN_PASS, "status %s: %s", run_status_name(rec.status), rec.error);
    CHECK(rec.bitwise_identical);
    /* The cpu backend's output is the parity reference: only f64 is a check. */
    CHECK_EQ_INT(rec.nchecks, 1);
    CHECK(strcmp(rec.checks[0].reference, "f64") == 0);
    CHECK_EQ_INT(rec.nself, 1);
    CHECK(strcmp(rec.self_refs[0].reference, "bf16-parity") == 0);
    /* After five runs the tensor holds one increment, not five. */
    CHECK_NEAR(tensor_get(c->t[0], 10), 11.0, 0);
    run_record_free(&rec);
    b->release_case(b);
    b->destroy(b);
    op_case_free(c);
}
