/* micro_dispatch.c — op `micro.dispatch`: the cost of launching a kernel.
 *
 * N dispatches of an almost empty kernel (one simdgroup adding 1 to 32 words), all
 * in one command buffer (percb 0: one compute encoder, N dispatches) or each in a
 * command buffer of its own (percb 1: committed back to back, then waited for).
 * The report's time divided by launch.dispatches is the time per dispatch; the
 * table prints it for the GPU clock and the host wall clock.  Each dispatch owns
 * its 32 words (buffer offsets advance per dispatch), so out == in + 1 everywhere
 * proves every one of the N dispatches ran.  Reference point: about 7-8 us per
 * dispatch has been reported on an M4 Max. */
#include <stdio.h>

#include "ops/micro_common.h"

enum { DP_IN, DP_OUT, DP_NBUFS };
enum { D_N, D_PERCB };

#define WORDS_PER_DISPATCH 32

static const op_dim dispatch_dims[] = {
    [D_N] = {"N", NULL, 100, 1, 10000, "dispatches per timed iteration (1, 10, 100, 1000 are the classic)"},
    [D_PERCB] = {"percb", NULL, 0, 0, 1, "0: all in one command buffer; 1: one command buffer per dispatch"},
};

static const op_buf dispatch_bufs[DP_NBUFS] = {
    [DP_IN] = {"in", BUF_IN, DT_U32, NULL, {{0}}},
    [DP_OUT] = {"out", BUF_OUT, DT_U32, NULL, {{0, 0, 0}, {0, 0, 0}}},
};

static int dispatch_setup(op_case *c, char *err, size_t errlen) {
    int64_t n = c->dim[D_N] * WORDS_PER_DISPATCH;
    if (micro_alloc1(c, DP_IN, n, err, errlen) || micro_alloc1(c, DP_OUT, n, err, errlen)) return -1;
    micro_fill_u32(c->t[DP_IN], c->seed);
    return 0;
}

static int dispatch_reference(const op_case *c, ref_kind kind, double **out) {
    const uint32_t *in = c->t[DP_IN]->data;
    int64_t n = tensor_numel(c->t[DP_IN]);
    for (int64_t i = 0; i < n; i++) out[DP_OUT][i] = (double)(uint32_t)(in[i] + 1u);
    return 0;
}

static int dispatch_nstages(const op_case *c) { return 1; }

static int dispatch_launch(const op_case *c, int stage, op_launch *l) {
    const uint32_t stride = WORDS_PER_DISPATCH * sizeof(uint32_t);
    *l = (op_launch){
        .stage = "tick",
        .shader = "shaders/micro/dispatch.metal",
        .function = "micro_tick",
        .grid = {1, 1, 1},
        .tg = {WORDS_PER_DISPATCH, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = DP_IN, .repeat_stride = stride}, {.index = 1, .buf = DP_OUT, .repeat_stride = stride}},
        .params_index = -1,
        .repeat = (uint32_t)c->dim[D_N],
        .own_command_buffers = (int)c->dim[D_PERCB],
    };
    return 0;
}

static double dispatch_bytes(const int64_t *dim) { return 0; }

static double dispatch_flops(const int64_t *dim) { return 0; }

const op_desc op_micro_dispatch = {
    .name = "micro.dispatch",
    .group = "micro",
    .summary = "launch cost: time per dispatch for N dispatches per command buffer or one command buffer each, "
               "GPU vs wall clock (reference: ~7-8 us per dispatch on an M4 Max)",
    .dims = dispatch_dims,
    .ndims = 2,
    .bufs = dispatch_bufs,
    .nbufs = DP_NBUFS,
    .setup = dispatch_setup,
    .reference = dispatch_reference,
    .nstages = dispatch_nstages,
    .launch = dispatch_launch,
    .bytes = dispatch_bytes,
    .flops = dispatch_flops,
};
