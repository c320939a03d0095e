/* report_testdata.c — see report_testdata.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "report_testdata.h"

static const op_dim test_dims[] = {
    {"B", NULL, 1, 1, 64, "batch"},
    {"T", NULL, 4096, 1, 1 << 20, "tokens"},
    {"H", NULL, 32, 1, 256, "heads"},
    {"K", "Dk", 128, 1, 256, "key dim"},
};

static const op_buf test_bufs[] = {
    {"k", BUF_IN, DT_BF16, NULL, {{0, 0, 0}, {0, 0, 0}}},
    {"beta", BUF_IN, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}},
    {"A", BUF_OUT, DT_F32, NULL, {{1e-5, 1e-5, 0}, {1e-6, 1e-6, 0}}},
};

static double test_bytes(const int64_t *dim) { return 2.0 * (double)(dim[0] * dim[1] * dim[2] * dim[3]); }
static double test_flops(const int64_t *dim) { return 4.0 * (double)(dim[0] * dim[1] * dim[2] * dim[3]); }

const op_desc report_test_op = {
    .name = "testop",
    .group = "gdn",
    .summary = "report test op",
    .dims = test_dims,
    .ndims = 4,
    .bufs = test_bufs,
    .nbufs = 3,
    .bytes = test_bytes,
    .flops = test_flops,
};

static void fill_stats(rec_stats *s, int n, double base) {
    s->n = n;
    s->samples = n > 0 ? malloc(sizeof(double) * (size_t)n) : NULL;
    for (int i = 0; i < n; i++) s->samples[i] = base * (1.0 + 0.01 * (double)((i * 7) % 5));
    stats_compute(s);
}

void report_test_record(run_record *r, int n, double base_us) {
    memset(r, 0, sizeof *r);
    snprintf(r->device.name, sizeof r->device.name, "Apple M4 Max");
    snprintf(r->device.backend, sizeof r->device.backend, "metal");
    r->device.emulated = 0;
    r->device.gpu_cores = 40;
    r->device.bandwidth_gbps = 546;
    r->device.fp32_tflops = 16.1;
    r->device.fp16_tflops = 16.1;
    r->device.bandwidth_verified = 1; /* as the chip table: Apple's 546 GB/s, derived FLOP/s */
    r->device.flops_verified = 0;

    r->op = &report_test_op;
    snprintf(r->kernel.source, sizeof r->kernel.source, "shaders/test.metal");
    snprintf(r->kernel.function, sizeof r->kernel.function, "test_kernel_bf16");
    memset(r->kernel.sha256, 'a', 64);
    r->kernel.nconstants = 2;
    r->kernel.constants[0].index = 0;
    snprintf(r->kernel.constants[0].value, sizeof r->kernel.constants[0].value, "true");
    r->kernel.constants[1].index = 3;
    snprintf(r->kernel.constants[1].value, sizeof r->kernel.constants[1].value, "64");

    r->dim[0] = 1, r->dim[1] = 4096, r->dim[2] = 32, r->dim[3] = 128;
    r->seed = 42;

    r->nstages = 3;
    const char *names[3] = {"cumsum", "kkt", "solve"};
    for (int s = 0; s < 3; s++) {
        rec_stage *st = &r->stages[s];
        snprintf(st->name, sizeof st->name, "%s", names[s]);
        snprintf(st->function, sizeof st->function, "%s_kernel", names[s]);
        st->grid[0] = 64, st->grid[1] = 32, st->grid[2] = 1;
        st->tg[0] = 128, st->tg[1] = 1, st->tg[2] = 1;
        st->tgmem_bytes = 4096u * (uint32_t)(s + 1);
        fill_stats(&st->timing, n, base_us / 3);
    }
    r->warmup = 5;
    r->iterations = n;
    snprintf(r->timing_source, sizeof r->timing_source, "gpu");
    snprintf(r->stage_timing, sizeof r->stage_timing, "counters");
    fill_stats(&r->timing, n, base_us);
    fill_stats(&r->wall, n, base_us * 1.2);
    r->bytes = report_test_op.bytes(r->dim);
    r->flops = report_test_op.flops(r->dim);

    r->nchecks = 2;
    rec_check *c = &r->checks[0];
    snprintf(c->output, sizeof c->output, "A");
    snprintf(c->reference, sizeof c->reference, "f64");
    c->max_abs = 2e-6, c->max_rel = 1e-5, c->rel_l2 = 3e-7, c->ulp_p99 = -1;
    c->first_bad_index = -1;
    c->atol = 1e-5, c->rtol = 1e-5, c->rel_l2_max = 0;
    c->pass = 1;
    c = &r->checks[1];
    snprintf(c->output, sizeof c->output, "A");
    snprintf(c->reference, sizeof c->reference, "bf16-parity");
    c->max_abs = 0.5, c->max_rel = 2.0, c->rel_l2 = 0.01, c->ulp_p99 = 3;
    c->nan = 1, c->inf = 0, c->unwritten = 2, c->n_bad = 3;
    c->first_bad_index = 4097;
    c->first_bad_ndim = 3;
    c->first_bad_coord[0] = 0, c->first_bad_coord[1] = 32, c->first_bad_coord[2] = 1;
    c->first_bad_got = 1.5, c->first_bad_want = 1.0;
    c->atol = 1e-6, c->rtol = 1e-6, c->rel_l2_max = 1e-3;
    c->pass = 0;

    /* a Mac on AC power, cool, in Low Power Mode off */
    rec_machine *m = &r->machine;
    m->collected = 1;
    m->thermal_before = m->thermal_after = 0;
    m->low_power = 0;
    snprintf(m->power_source, sizeof m->power_source, "ac");
    snprintf(m->macos_version, sizeof m->macos_version, "15.1");
    snprintf(m->gpu_name, sizeof m->gpu_name, "Apple M4 Max");
    m->gpu_cores = 40;
    m->nfamilies = 4;
    const char *fam[4] = {"Apple7", "Apple8", "Apple9", "Metal3"};
    for (int i = 0; i < 4; i++) snprintf(m->families[i], sizeof m->families[i], "%s", fam[i]);
    m->working_set = 40000000000;
    m->paravirtual = 0;

    r->determinism_runs = 3;
    r->bitwise_identical = 1;
    r->status = RUN_FAIL;
    snprintf(r->error, sizeof r->error, "A: 3 elements outside atol+rtol against bf16-parity");
}

void report_test_repo_path(char *out, size_t n, const char *rel) {
    const char *root = getenv("GDNBENCH_ROOT");
    if (root && root[0])
        snprintf(out, n, "%s/%s", root, rel);
    else
        snprintf(out, n, "%s", rel);
}
