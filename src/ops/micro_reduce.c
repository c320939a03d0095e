/* micro_reduce.c — op `micro.reduce`: summing floats inside a threadgroup.
 *
 * Every threadgroup of 256 threads sums a block of 256*items floats into one
 * partial sum; `mode` picks how the 256 per-thread sums are combined: 0 simd_sum +
 * threadgroup memory, 1 a scalar threadgroup-memory tree, 2 device atomics
 * (shaders/micro/reduce.metal).  The inputs are small integers, so every order of
 * addition gives the same exact sum and the partials are checked bit for bit, even
 * for the atomics.  Bytes: the input read once plus the partials. */
#include <stdio.h>

#include "ops/micro_common.h"

enum { RD_X, RD_PARTIAL, RD_NBUFS };
enum { D_N, D_MODE, D_ITEMS };

#define RD_TG 256

static const op_dim reduce_dims[] = {
    [D_N] = {"N", NULL, 1024, 1, 1 << 20, "floats to sum, in units of 1024"},
    [D_MODE] = {"mode", NULL, 0, 0, 2, "0 simd_sum + threadgroup memory, 1 scalar tree, 2 atomics"},
    [D_ITEMS] = {"items", NULL, 4, 1, 256, "floats each thread adds before the threadgroup combines"},
};

static const op_buf reduce_bufs[RD_NBUFS] = {
    [RD_X] = {"x", BUF_IN, DT_F32, NULL, {{0}}},
    [RD_PARTIAL] = {"partial", BUF_OUT, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}},
};

static int64_t reduce_n(const int64_t *dim) { return dim[D_N] * 1024; }

static int64_t reduce_groups(const int64_t *dim) { return micro_groups(reduce_n(dim), RD_TG * dim[D_ITEMS]); }

static int reduce_setup(op_case *c, char *err, size_t errlen) {
    if (micro_alloc1(c, RD_X, reduce_n(c->dim), err, errlen) ||
        micro_alloc1(c, RD_PARTIAL, reduce_groups(c->dim), err, errlen))
        return -1;
    /* |sum| <= 8 * 256 * 256 < 2^24: exact in f32 in any order. */
    micro_fill_small_ints(c->t[RD_X], c->seed, -8, 8);
    return 0;
}

static int reduce_reference(const op_case *c, ref_kind kind, double **out) {
    const float *x = c->t[RD_X]->data;
    int64_t n = reduce_n(c->dim), block = RD_TG * c->dim[D_ITEMS], groups = reduce_groups(c->dim);
    for (int64_t g = 0; g < groups; g++) {
        double s = 0;
        for (int64_t i = g * block; i < (g + 1) * block && i < n; i++) s += x[i];
        out[RD_PARTIAL][g] = s;
    }
    return 0;
}

static int reduce_nstages(const op_case *c) { return 1; }

static int reduce_launch(const op_case *c, int stage, op_launch *l) {
    static const char *const functions[] = {"micro_reduce_simd", "micro_reduce_tree", "micro_reduce_atomic"};
    *l = (op_launch){
        .stage = "reduce",
        .shader = "shaders/micro/reduce.metal",
        .function = functions[c->dim[D_MODE]],
        .grid = {(uint32_t)reduce_groups(c->dim), 1, 1},
        .tg = {RD_TG, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = RD_X}, {.index = 1, .buf = RD_PARTIAL}},
        .params_index = 2,
        .params = {(uint32_t)reduce_n(c->dim), (uint32_t)c->dim[D_ITEMS]},
        .nparams = 2,
    };
    return 0;
}

static double reduce_bytes(const int64_t *dim) { return 4.0 * (double)(reduce_n(dim) + reduce_groups(dim)); }

static double reduce_flops(const int64_t *dim) { return (double)reduce_n(dim); }

const op_desc op_micro_reduce = {
    .name = "micro.reduce",
    .group = "micro",
    .summary = "sum of N floats per threadgroup: simd_sum + threadgroup memory vs scalar tree vs atomics",
    .dims = reduce_dims,
    .ndims = 3,
    .bufs = reduce_bufs,
    .nbufs = RD_NBUFS,
    .setup = reduce_setup,
    .reference = reduce_reference,
    .nstages = reduce_nstages,
    .launch = reduce_launch,
    .bytes = reduce_bytes,
    .flops = reduce_flops,
};
