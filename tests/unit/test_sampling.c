/* test_sampling.c — the stopping rule of timed samples (runner/sampling.h) on made-up
 * samples and costs, and the runner following it on a fake clock: exact --iters,
 * the minimum where the budget allows, never fewer than one, the noise target, the
 * cap, the cold first run, and chunk_fwd on the software device running once per
 * sample (no stage run again) under the adaptive rule. */
#include <string.h>

#include "runner/runner.h"
#include "runner/sampling.h"
#include "swmetal/swmetal.h"
#include "test.h"
#include "test_op_double.h"

/* Feeds samples[i] at cost[i] until the rule stops; returns the count taken. */
static int drive(const sampling_rule *r, const double *samples, const double *cost, int n, sampling_stop *why) {
    sampling_state st = {0};
    *why = SAMPLING_GO;
    for (int i = 0; i < n; i++) {
        sampling_add(&st, samples[i], cost[i]);
        *why = sampling_next(r, &st);
        if (*why != SAMPLING_GO) return st.n;
    }
    return st.n;
}

#define NS 64

TEST(sampling_noise_is_the_relative_error_of_the_median) {
    sampling_state st = {0};
    CHECK(isinf(sampling_noise(&st)));
    sampling_add(&st, 1, 0);
    CHECK(isinf(sampling_noise(&st))); /* one sample says nothing about noise */
    sampling_add(&st, 3, 0);
    /* mean 2, stddev sqrt(2): sqrt(pi/2) * sqrt(2) / (sqrt(2) * 2) */
    CHECK_NEAR(sampling_noise(&st), sqrt(M_PI / 2) / 2, 1e-12);
    sampling_add(&st, 2, 0);
    CHECK_NEAR(sampling_noise(&st), sqrt(M_PI / 2) * 1.0 / (sqrt(3.0) * 2), 1e-12);
    CHECK_NEAR(st.mean, 2, 1e-12);
}

TEST(sampling_exact_iters_ignore_budget_and_noise) {
    double s[NS], c[NS];
    for (int i = 0; i < NS; i++) s[i] = 5, c[i] = 1e9; /* quiet, and far over any budget */
    sampling_rule r = {.exact = 1, .iters = 7, .max_time_us = 1, .max_noise = 1, .min_samples = 1, .max_samples = 2};
    sampling_stop why;
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 7);
    CHECK_EQ_INT(why, SAMPLING_ITERS);
    CHECK(strcmp(sampling_stop_name(why), "iters") == 0);
}

TEST(sampling_takes_the_minimum_where_the_budget_allows) {
    double s[NS], c[NS];
    for (int i = 0; i < NS; i++) s[i] = 10, c[i] = 10; /* no noise at all */
    sampling_rule r = {.max_time_us = 1000, .max_noise = 0.01, .min_samples = 3, .max_samples = 1000};
    sampling_stop why;
    /* the noise target is met from the second sample on, but not before three */
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 3);
    CHECK_EQ_INT(why, SAMPLING_NOISE);
    /* two fit in the budget, a third would not: the budget wins over the minimum */
    r.max_time_us = 25;
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 2);
    CHECK_EQ_INT(why, SAMPLING_BUDGET);
    /* one run over the whole budget: still one sample, never none */
    r.max_time_us = 5;
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 1);
    CHECK_EQ_INT(why, SAMPLING_BUDGET);
}

TEST(sampling_budget_counts_the_cost_of_what_was_taken) {
    double s[NS], c[NS];
    for (int i = 0; i < NS; i++) s[i] = i % 2 ? 10 : 30, c[i] = 100; /* noisy: the target is never met */
    sampling_rule r = {.max_time_us = 1050, .max_noise = 1e-6, .min_samples = 3, .max_samples = 1000};
    sampling_stop why;
    /* after n samples 100 n us are spent; one more fits while 100 (n + 1) <= 1050 */
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 10);
    CHECK_EQ_INT(why, SAMPLING_BUDGET);
    CHECK(strcmp(sampling_stop_name(why), "budget") == 0);
    r.max_samples = 4, r.max_time_us = 1e12;
    CHECK_EQ_INT(drive(&r, s, c, NS, &why), 4);
    CHECK_EQ_INT(why, SAMPLING_CAP);
}

TEST(sampling_stops_at_the_noise_target_and_not_before) {
    double s[NS], c[NS];
    for (int i = 0; i < NS; i++) s[i] = i % 2 ? 90 : 110, c[i] = 1; /* cv about 10% */
    sampling_rule r = {.max_time_us = 1e9, .max_noise = 0.03, .min_samples = 3, .max_samples = 1000};
    sampling_stop why;
    int n = drive(&r, s, c, NS, &why);
    CHECK_EQ_INT(why, SAMPLING_NOISE);
    /* the first n whose noise is under the target */
    sampling_state st = {0};
    for (int i = 0; i < n; i++) {
        sampling_add(&st, s[i], c[i]);
        if (i + 1 >= 3 && i + 1 < n) CHECK_MSG(sampling_noise(&st) > 0.03, "noise %g at n=%d, stopped at %d",
                                               sampling_noise(&st), i + 1, n);
    }
    CHECK(sampling_noise(&st) <= 0.03);
    CHECK(n > 3 && n < NS);
}

/* A fake host clock: every reading is `fake_step` us after the one before. */
static double fake_now, fake_step;
static double fake_clock(void) { return fake_now += fake_step; }

/* Runs test_op_double on the cpu backend under o with the fake clock (each run costs
 * fake_step: the runner reads the clock before and after it). */
static int run_tiny(run_opts *o, run_record *rec) {
    char err[256];
    int64_t dim[1] = {16};
    op_case *c = op_case_new(&test_op_double, dim, 1, err, sizeof err);
    backend *b = backend_cpu_open(err, sizeof err);
    if (!c || !b) {
        op_case_free(c);
        if (b) b->destroy(b);
        return -1;
    }
    o->backend = "cpu";
    o->clock_us = fake_clock;
    fake_now = 0;
    int rc = runner_run_case(b, c, o, rec);
    b->release_case(b);
    b->destroy(b);
    op_case_free(c);
    return rc;
}

TEST(sampling_runner_follows_the_rule_on_a_fake_clock) {
    run_record rec;
    fake_step = 1000; /* a run costs 1000 us */
    /* a budget of 10.5 runs, a noise target nothing meets: ten samples after one warmup */
    run_opts o = {.warmup = 1, .adaptive = 1, .warmup_auto = 1, .max_time_s = 10.5e-3, .max_noise = 1e-12,
                  .min_samples = 1000, .check = CHECK_NONE};
    CHECK_EQ_INT(run_tiny(&o, &rec), 0);
    CHECK_EQ_INT(rec.timing.n, 10);
    CHECK_EQ_INT(rec.iterations, 10);
    CHECK_EQ_INT(rec.wall.n, 10);
    CHECK_EQ_INT(rec.warmup, 1);
    CHECK_EQ_INT(rec.warmup_timing.n, 1);
    CHECK_EQ_INT(rec.determinism_runs, 11);
    CHECK(!rec.cold);
    CHECK(strcmp(rec.sampling, "adaptive") == 0 && strcmp(rec.stop, "budget") == 0);
    CHECK_NEAR(rec.max_time_s, 10.5e-3, 0);
    run_record_free(&rec);

    /* the first run costs more than the budget: it is the one sample, cold */
    o.max_time_s = 0.5e-3;
    CHECK_EQ_INT(run_tiny(&o, &rec), 0);
    CHECK_EQ_INT(rec.timing.n, 1);
    CHECK_EQ_INT(rec.warmup, 0);
    CHECK_EQ_INT(rec.warmup_timing.n, 0);
    CHECK(rec.cold);
    CHECK(strcmp(rec.stop, "budget") == 0);
    CHECK(rec.noise < 0); /* one sample: unknown */
    run_record_free(&rec);

    /* the same with --warmup given: the warmup runs, then one sample */
    o.warmup_auto = 0;
    CHECK_EQ_INT(run_tiny(&o, &rec), 0);
    CHECK_EQ_INT(rec.timing.n, 1);
    CHECK_EQ_INT(rec.warmup, 1);
    CHECK(!rec.cold);
    run_record_free(&rec);

    /* exact iters: the budget does not apply */
    run_opts e = {.warmup = 2, .iters = 6, .max_time_s = 1e-9, .check = CHECK_NONE};
    CHECK_EQ_INT(run_tiny(&e, &rec), 0);
    CHECK_EQ_INT(rec.timing.n, 6);
    CHECK_EQ_INT(rec.warmup, 2);
    CHECK_EQ_INT(rec.warmup_timing.n, 2);
    CHECK(strcmp(rec.sampling, "iters") == 0 && strcmp(rec.stop, "iters") == 0);
    run_record_free(&rec);
}

TEST(sampling_runner_grows_past_the_first_allocation) {
    run_record rec;
    fake_step = 1; /* cheap runs: many samples, more than the first 16 slots */
    run_opts o = {.warmup = 0, .adaptive = 1, .max_time_s = 100.5e-6, .max_noise = 1e-12, .min_samples = 1000,
                  .check = CHECK_NONE};
    CHECK_EQ_INT(run_tiny(&o, &rec), 0);
    CHECK_EQ_INT(rec.timing.n, 100);
    for (int i = 0; i < rec.timing.n; i++) CHECK(rec.timing.samples[i] >= 0);
    run_record_free(&rec);
}

TEST(sampling_chunk_fwd_adaptive_runs_the_op_once_per_sample) {
    const op_desc *op = op_find("chunk_fwd");
    CHECK(op != NULL);
    if (!op) return;
    char err[512] = "";
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    dim[op_dim_index(op, "T")] = 100, dim[op_dim_index(op, "H")] = 2, dim[op_dim_index(op, "Hg")] = 1;
    dim[op_dim_index(op, "K")] = 64, dim[op_dim_index(op, "V")] = 64;
    op_case *c = op_case_new(op, dim, 3, err, sizeof err);
    backend *b = c ? backend_open("sw", NULL, err, sizeof err) : NULL;
    CHECK_MSG(b != NULL, "%s", err);
    if (!b) {
        op_case_free(c);
        return;
    }
    fake_step = 1000, fake_now = 0;
    run_opts o = {.backend = "sw", .warmup = 1, .adaptive = 1, .warmup_auto = 1, .max_time_s = 3.5e-3,
                  .max_noise = 1e-12, .min_samples = 100, .check = CHECK_NONE, .clock_us = fake_clock};
    run_record rec;
    uint64_t d0 = swmtl_dispatches_executed(), c0 = swmtl_command_buffers_executed();
    int rc = runner_run_case(b, c, &o, &rec);
    uint64_t dispatches = swmtl_dispatches_executed() - d0, cbs = swmtl_command_buffers_executed() - c0;
    CHECK_MSG(rc == 0, "%s", rec.error);
    if (rc == 0) {
        CHECK_EQ_INT(rec.timing.n, 3);
        CHECK_MSG(strcmp(rec.stage_timing, "counters") == 0, "stage_timing '%s'", rec.stage_timing);
        /* warmup + 3 samples, each one submission of the op: nothing ran again */
        CHECK_EQ_INT(dispatches, 4 * rec.dispatches);
        CHECK_EQ_INT(cbs, 4 * rec.command_buffers);
        for (int s = 0; s < rec.nstages; s++) CHECK_EQ_INT(rec.stages[s].timing.n, 3);
    }
    run_record_free(&rec);
    b->release_case(b);
    b->destroy(b);
    op_case_free(c);
}
