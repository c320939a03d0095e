/* micro_tgmem.c — op `micro.tgmem`: threadgroup memory bandwidth and bank conflicts.
 *
 * Each threadgroup (256 threads) stages 16 KB in threadgroup memory, then every
 * thread adds `rounds` words read at (tid*stride + r) mod 4096
 * (shaders/micro/tgmem.metal).  stride 1 and 33 are conflict-free, 2 is a 2-way and
 * 32 a 32-way bank conflict.  Bytes are the threadgroup-memory words read, so GB/s
 * is threadgroup-memory bandwidth; the report's % of peak compares it with DRAM
 * bandwidth and may exceed 100 — compare strides with each other instead.  The
 * per-thread sums (u32, wrapping) are checked exactly. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/micro_common.h"

enum { TM_IN, TM_OUT, TM_NBUFS };
enum { D_STRIDE, D_GROUPS, D_ROUNDS };

#define TM_TG 256
#define TM_WORDS 4096

static const op_dim tgmem_dims[] = {
    [D_STRIDE] = {"stride", NULL, 1, 1, 4096, "word stride between lanes (1, 2, 32, 33 are the classic)"},
    [D_GROUPS] = {"groups", NULL, 64, 1, 1 << 16, "threadgroups of 256 threads"},
    [D_ROUNDS] = {"rounds", NULL, 1024, 1, 1 << 16, "threadgroup-memory words each thread reads"},
};

static const op_buf tgmem_bufs[TM_NBUFS] = {
    [TM_IN] = {"in", BUF_IN, DT_U32, NULL, {{0}}},
    [TM_OUT] = {"out", BUF_OUT, DT_U32, NULL, {{0, 0, 0}, {0, 0, 0}}},
};

static int tgmem_setup(op_case *c, char *err, size_t errlen) {
    if (micro_alloc1(c, TM_IN, c->dim[D_GROUPS] * TM_WORDS, err, errlen) ||
        micro_alloc1(c, TM_OUT, c->dim[D_GROUPS] * TM_TG, err, errlen))
        return -1;
    micro_fill_u32(c->t[TM_IN], c->seed);
    return 0;
}

/* Sums of `rounds` consecutive words of a circular 4096-word block, from circular
 * prefix sums (mod 2^32, like the kernel's uint adds). */
static int tgmem_reference(const op_case *c, ref_kind kind, double **out) {
    const uint32_t *in = c->t[TM_IN]->data;
    uint32_t stride = (uint32_t)c->dim[D_STRIDE], rounds = (uint32_t)c->dim[D_ROUNDS];
    uint32_t *prefix = malloc(sizeof(uint32_t) * (2 * TM_WORDS + 1));
    if (!prefix) return -1;
    for (int64_t g = 0; g < c->dim[D_GROUPS]; g++) {
        const uint32_t *w = in + g * TM_WORDS;
        prefix[0] = 0;
        for (uint32_t i = 0; i < 2 * TM_WORDS; i++) prefix[i + 1] = prefix[i] + w[i % TM_WORDS];
        uint32_t whole = prefix[TM_WORDS], laps = rounds / TM_WORDS, rest = rounds % TM_WORDS;
        for (uint32_t t = 0; t < TM_TG; t++) {
            uint32_t start = (t * stride) % TM_WORDS;
            uint32_t acc = whole * laps + (prefix[start + rest] - prefix[start]);
            out[TM_OUT][g * TM_TG + t] = (double)acc;
        }
    }
    free(prefix);
    return 0;
}

static int tgmem_nstages(const op_case *c) { return 1; }

static int tgmem_launch(const op_case *c, int stage, op_launch *l) {
    *l = (op_launch){
        .stage = "tgmem",
        .shader = "shaders/micro/tgmem.metal",
        .function = "micro_tgmem_read",
        .grid = {(uint32_t)c->dim[D_GROUPS], 1, 1},
        .tg = {TM_TG, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = TM_IN}, {.index = 1, .buf = TM_OUT}},
        .params_index = 2,
        .params = {(uint32_t)c->dim[D_STRIDE], (uint32_t)c->dim[D_ROUNDS]},
        .nparams = 2,
    };
    return 0;
}

static double tgmem_bytes(const int64_t *dim) { return 4.0 * TM_TG * (double)dim[D_GROUPS] * (double)dim[D_ROUNDS]; }

static double tgmem_flops(const int64_t *dim) { return 0; }

const op_desc op_micro_tgmem = {
    .name = "micro.tgmem",
    .group = "micro",
    .summary = "threadgroup memory read bandwidth by lane stride (1, 2, 32, 33: bank conflicts); GB/s is "
               "threadgroup-memory traffic",
    .dims = tgmem_dims,
    .ndims = 3,
    .bufs = tgmem_bufs,
    .nbufs = TM_NBUFS,
    .setup = tgmem_setup,
    .reference = tgmem_reference,
    .nstages = tgmem_nstages,
    .launch = tgmem_launch,
    .bytes = tgmem_bytes,
    .flops = tgmem_flops,
};
