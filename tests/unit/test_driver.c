/* test_driver.c — the run driver (runner/driver.h): the steps every case goes
 * through in order, hooks that stop a plan, a command's own run with stop_on_error,
 * the verdict; the up-front shape check; backend descriptors and status words. */
#include <string.h>

#include "runner/driver.h"
#include "test.h"
#include "test_op_double.h"

/* What the hooks saw, in order: "m0 b0 a0 p0 ..." (make, before, after, print). */
typedef struct trace {
    char log[512];
    int fail_make;       /* case whose inputs cannot be made (-1: none) */
    int stop_make;       /* ... and that stops the plan */
    int stop_after;      /* case whose after hook stops the plan (-1: none) */
    double y1[4];        /* y[1] of each case, as the after hook saw it */
    driver_outcome outcomes[8]; /* the command's own run: what case k ends as */
} trace;

static void note(trace *t, char what, int k) {
    size_t n = strlen(t->log);
    snprintf(t->log + n, sizeof t->log - n, "%s%c%d", n ? " " : "", what, k);
}

static op_case *make(void *user, int k, const driver_case *dc, char *err, size_t errlen, int *stop) {
    trace *t = user;
    note(t, 'm', k);
    if (k == t->fail_make) {
        snprintf(err, errlen, "no inputs for case %d", k);
        *stop = t->stop_make;
        return NULL;
    }
    return op_case_new(dc->op, dc->dim, 7, err, errlen);
}

static void before(void *user, int k, const op_case *c, run_opts *o) { note(user, c ? 'b' : 'B', k); }

static int after(void *user, int k, op_case *c, run_record *rec, char *err, size_t errlen) {
    trace *t = user;
    note(t, 'a', k);
    t->y1[k] = tensor_get(c->t[1], 1);
    if (k != t->stop_after) return 0;
    snprintf(err, errlen, "after hook stops at %d", k);
    return -1;
}

static void print(void *user, int k, driver_outcome out) { note(user, "pfes"[out], k); }

static driver_outcome own_run(void *user, int k) {
    trace *t = user;
    note(t, 'r', k);
    return t->outcomes[k];
}

static backend *open_cpu(void) {
    char err[256];
    backend *b = backend_cpu_open(err, sizeof err);
    CHECK_MSG(b != NULL, "cpu backend: %s", err);
    return b;
}

TEST(driver_takes_every_case_through_its_steps_in_order) {
    backend *b = open_cpu();
    if (!b) return;
    driver_case cases[3] = {{&test_op_double, {4}}, {&test_op_double, {8}}, {&test_op_double, {6}}};
    run_record recs[3], *ptrs[3] = {&recs[0], &recs[1], &recs[2]};
    run_opts o = {.backend = "cpu", .warmup = 1, .iters = 2, .check = CHECK_NONE};
    trace t = {.fail_make = 1, .stop_make = 0, .stop_after = -1};
    driver_plan plan = {b, &o, cases, 3, ptrs, 0};
    driver_hooks hooks = {.user = &t, .make_case = make, .before = before, .after = after, .print = print};
    driver_tally tally;
    char err[256] = "";
    CHECK_EQ_INT(driver_run(&plan, &hooks, &tally, err, sizeof err), 3);
    /* case 1 could not be made: before sees no case, no after, an error record */
    CHECK_MSG(strcmp(t.log, "m0 b0 a0 p0 m1 B1 e1 m2 b2 a2 p2") == 0, "hooks ran as %s", t.log);
    CHECK(recs[0].status == RUN_PASS && recs[2].status == RUN_PASS);
    CHECK(recs[1].status == RUN_ERROR);
    CHECK(strcmp(recs[1].error, "no inputs for case 1") == 0);
    CHECK(strcmp(recs[1].device.backend, "cpu") == 0 && recs[1].dim[0] == 8);
    CHECK_EQ_INT(recs[0].iterations, 2);
    CHECK_NEAR(t.y1[2], 2.0, 0); /* after sees the outputs */
    CHECK(tally.npass == 2 && tally.nerror == 1 && tally.nfail == 0);
    CHECK(driver_verdict(&tally) == RUN_ERROR);
    for (int i = 0; i < 3; i++) run_record_free(&recs[i]);
    b->destroy(b);
}

TEST(driver_stops_where_a_hook_says_so) {
    backend *b = open_cpu();
    if (!b) return;
    driver_case cases[3] = {{&test_op_double, {4}}, {&test_op_double, {8}}, {&test_op_double, {6}}};
    run_record recs[3], *ptrs[3] = {&recs[0], &recs[1], &recs[2]};
    run_opts o = {.backend = "cpu", .warmup = 0, .iters = 1, .check = CHECK_NONE};
    driver_plan plan = {b, &o, cases, 3, ptrs, 0};
    driver_hooks hooks = {.make_case = make, .before = before, .after = after, .print = print};
    driver_tally tally;
    char err[256] = "";

    trace t1 = {.fail_make = 1, .stop_make = 1, .stop_after = -1};
    hooks.user = &t1;
    CHECK_EQ_INT(driver_run(&plan, &hooks, &tally, err, sizeof err), -1);
    CHECK_MSG(strcmp(err, "no inputs for case 1") == 0, "err %s", err);
    CHECK_MSG(strcmp(t1.log, "m0 b0 a0 p0 m1") == 0, "hooks ran as %s", t1.log);
    run_record_free(&recs[0]);

    trace t2 = {.fail_make = -1, .stop_after = 0};
    hooks.user = &t2;
    CHECK_EQ_INT(driver_run(&plan, &hooks, &tally, err, sizeof err), -1);
    CHECK_MSG(strcmp(err, "after hook stops at 0") == 0, "err %s", err);
    CHECK_MSG(strcmp(t2.log, "m0 b0 a0") == 0, "hooks ran as %s", t2.log);
    run_record_free(&recs[0]);
    b->destroy(b);
}

TEST(driver_own_run_stops_on_error_and_counts_skipped) {
    driver_case cases[5] = {{&test_op_double, {4}}};
    run_opts o = {.backend = "cpu"};
    driver_plan plan = {NULL, &o, cases, 5, NULL, 1};
    /* the command's own run: make/before/after are not called */
    driver_hooks hooks = {.make_case = make, .before = before, .after = after, .print = print, .run = own_run};
    driver_tally tally;
    char err[64] = "";
    trace t = {.outcomes = {DRIVER_PASS, DRIVER_SKIPPED, DRIVER_ERROR, DRIVER_PASS, DRIVER_PASS}};
    hooks.user = &t;
    CHECK_EQ_INT(driver_run(&plan, &hooks, &tally, err, sizeof err), 3);
    CHECK_MSG(strcmp(t.log, "r0 p0 r1 s1 r2 e2") == 0, "hooks ran as %s", t.log);
    CHECK(tally.npass == 1 && tally.nskipped == 1 && tally.nerror == 1);
    CHECK(driver_verdict(&tally) == RUN_ERROR);

    trace all_skipped = {.outcomes = {DRIVER_SKIPPED, DRIVER_SKIPPED}};
    hooks.user = &all_skipped;
    plan.ncases = 2;
    CHECK_EQ_INT(driver_run(&plan, &hooks, &tally, err, sizeof err), 2);
    CHECK(driver_verdict(&tally) == RUN_FAIL); /* nothing was validated */

    trace some = {.outcomes = {DRIVER_SKIPPED, DRIVER_PASS}};
    hooks.user = &some;
    driver_run(&plan, &hooks, &tally, err, sizeof err);
    CHECK(driver_verdict(&tally) == RUN_PASS);

    trace failed = {.outcomes = {DRIVER_FAIL, DRIVER_PASS}};
    hooks.user = &failed;
    driver_run(&plan, &hooks, &tally, err, sizeof err);
    CHECK(driver_verdict(&tally) == RUN_FAIL);
}

TEST(driver_check_shapes_names_the_first_bad_one) {
    char err[256] = "";
    driver_case ok[2] = {{&test_op_double, {2}}, {&test_op_double, {1024}}};
    CHECK_EQ_INT(driver_check_shapes(ok, 2, err, sizeof err), 0);
    driver_case range[3] = {{&test_op_double, {2}}, {&test_op_double, {2048}}, {&test_op_double, {3}}};
    CHECK_EQ_INT(driver_check_shapes(range, 3, err, sizeof err), -1);
    CHECK_MSG(strcmp(err, "--N 2048 is out of range for test_double: accepted 1..1024") == 0, "err %s", err);
    driver_case odd[2] = {{&test_op_double, {2}}, {&test_op_double, {3}}};
    CHECK_EQ_INT(driver_check_shapes(odd, 2, err, sizeof err), -1);
    CHECK_MSG(strcmp(err, "N=3 is odd: test_double takes even N") == 0, "err %s", err);
}

TEST(backend_desc_and_status_words) {
    static const char *const names[] = {"cpu", "sw", "metal"};
    for (int k = BACKEND_CPU; k <= BACKEND_METAL; k++) {
        const backend_desc *d = backend_desc_find(names[k]);
        CHECK(d && d == backend_desc_of((backend_kind)k) && (int)d->kind == k);
    }
    CHECK(backend_desc_find("gpu") == NULL && backend_desc_find(NULL) == NULL);
    /* what the commands decide on */
    CHECK(backend_desc_of(BACKEND_SW)->caps & BACKEND_EMULATED);
    CHECK(!(backend_desc_of(BACKEND_CPU)->caps & BACKEND_KERNELS));
    CHECK(backend_desc_of(BACKEND_METAL)->caps & BACKEND_CAPTURE);
    CHECK(!(backend_desc_of(BACKEND_SW)->caps & BACKEND_CAPTURE));
    CHECK(backend_desc_of(BACKEND_SW)->caps & BACKEND_SCHEDULES);
    for (int s = RUN_PASS; s <= RUN_ERROR; s++) CHECK_EQ_INT(run_status_parse(run_status_name((run_status)s)), s);
    CHECK(strcmp(run_status_name(RUN_FAIL), "fail") == 0);
    CHECK_EQ_INT(run_status_parse("ok"), -1);
    CHECK_EQ_INT(run_status_parse(NULL), -1);
}
