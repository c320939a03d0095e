/* micro_alu.c — op `micro.alu`: FMA and simdgroup_matrix MMA throughput per type.
 *
 * type 0 float, 1 half, 2 bfloat; mma 0: every thread runs 8 independent scalar
 * chains x = x*a + b, mma 1: every simdgroup runs 4 independent 8x8 chains
 * C = A*C + B with simdgroup_multiply_accumulate (shaders/micro/alu.metal).  The
 * coefficients (a = 1, b = +-1, A = I, B in {-1,0,1}) keep every value a small
 * integer, exact in all three types, so the outputs are checked bit for bit and
 * change with the number of steps: a kernel that skips work cannot pass.  steps is
 * capped at 240 so the values stay within bfloat's 8 significant bits.
 * Flops: 2 per scalar FMA, 2*8*8*8 per MMA.  The report's % of peak uses the chip
 * table's FP32 figure (equal to FP16 on Apple GPUs; bfloat has no published peak). */
#include <stdio.h>

#include "ops/micro_common.h"

enum { AL_COEF, AL_MAT, AL_OUT, AL_NBUFS };
enum { D_TYPE, D_MMA, D_GROUPS, D_STEPS };
enum { TYPE_F32, TYPE_F16, TYPE_BF16 };

#define AL_TG 256
#define AL_CHAINS 8
#define AL_MMA_CHAINS 4
#define AL_SG_PER_TG (AL_TG / 32)

static const op_dim alu_dims[] = {
    [D_TYPE] = {"type", NULL, TYPE_F32, 0, 2, "0 float, 1 half, 2 bfloat"},
    [D_MMA] = {"mma", NULL, 0, 0, 1, "0 scalar FMA chains, 1 simdgroup_matrix 8x8 multiply-accumulate"},
    [D_GROUPS] = {"groups", NULL, 64, 1, 1 << 16, "threadgroups of 256 threads"},
    [D_STEPS] = {"steps", NULL, 240, 1, 240, "steps of each chain (<= 240 keeps bfloat exact)"},
};

static const op_buf alu_bufs[AL_NBUFS] = {
    [AL_COEF] = {"coef", BUF_IN, DT_F32, NULL, {{0}}},
    [AL_MAT] = {"mat", BUF_IN, DT_F32, NULL, {{0}}},
    [AL_OUT] = {"out", BUF_OUT, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}},
};

static int64_t alu_outputs(const int64_t *dim) {
    return dim[D_MMA] ? dim[D_GROUPS] * AL_SG_PER_TG * 64 : dim[D_GROUPS] * AL_TG;
}

static int alu_setup(op_case *c, char *err, size_t errlen) {
    if (micro_alloc1(c, AL_COEF, 16, err, errlen) || micro_alloc1(c, AL_MAT, 128, err, errlen) ||
        micro_alloc1(c, AL_OUT, alu_outputs(c->dim), err, errlen))
        return -1;
    float *coef = c->t[AL_COEF]->data, *mat = c->t[AL_MAT]->data;
    /* b and B from the seed; a = 1 and A = I are what keep the chains exact. */
    micro_fill_small_ints(c->t[AL_COEF], c->seed, -1, 1);
    micro_fill_small_ints(c->t[AL_MAT], c->seed, -1, 1);
    coef[0] = 1.0f;
    for (int i = 1; i <= AL_CHAINS; i++)
        if (coef[i] == 0.0f) coef[i] = 1.0f;
    for (int i = 0; i < 64; i++) mat[i] = (i / 8 == i % 8) ? 1.0f : 0.0f;
    return 0;
}

/* Rounds to the kernel's type, as every step of the kernel does (REF_PARITY); the
 * f64 reference does not round.  With these inputs both are exact integers. */
static double round_to(int type, ref_kind kind, double v) {
    if (kind == REF_F64) return v;
    switch (type) {
    case TYPE_F16: return f16_to_f32(f16_from_f32((float)v));
    case TYPE_BF16: return bf16_round((float)v);
    default: return (float)v;
    }
}

/* Chain c of thread (or simdgroup) i starts at start_slot - 8, as in the kernel. */
static int start_slot(int64_t i, int c, int chains) { return (int)((i * chains + c) % 16); }

/* Chains depend on (start, coefficients) only and starts repeat every 16, so
 * compute the 16 distinct results per chain once. */
static void alu_scalar_reference(const op_case *c, ref_kind kind, double *out) {
    const float *coef = c->t[AL_COEF]->data;
    int type = (int)c->dim[D_TYPE];
    double end[16][AL_CHAINS];
    for (int s = 0; s < 16; s++) {
        for (int ch = 0; ch < AL_CHAINS; ch++) {
            double x = round_to(type, kind, (double)s - 8.0);
            double a = round_to(type, kind, coef[0]), b = round_to(type, kind, coef[1 + ch]);
            for (int64_t i = 0; i < c->dim[D_STEPS]; i++) x = round_to(type, kind, x * a + b);
            end[s][ch] = x;
        }
    }
    int64_t threads = c->dim[D_GROUPS] * AL_TG;
    for (int64_t t = 0; t < threads; t++) {
        double sum = 0;
        for (int ch = 0; ch < AL_CHAINS; ch++) sum += end[start_slot(t, ch, AL_CHAINS)][ch];
        out[t] = (float)sum;
    }
}

static void alu_mma_reference(const op_case *c, ref_kind kind, double *out) {
    const float *mat = c->t[AL_MAT]->data;
    int type = (int)c->dim[D_TYPE];
    double A[64], B[64], end[16][64];
    for (int e = 0; e < 64; e++) {
        A[e] = round_to(type, kind, mat[e]);
        B[e] = round_to(type, kind, mat[64 + e]);
    }
    for (int s = 0; s < 16; s++) {
        double C[64], next[64];
        for (int e = 0; e < 64; e++) C[e] = round_to(type, kind, (double)s - 8.0);
        for (int64_t i = 0; i < c->dim[D_STEPS]; i++) {
            for (int r = 0; r < 8; r++)
                for (int col = 0; col < 8; col++) {
                    double acc = B[r * 8 + col];
                    for (int k = 0; k < 8; k++) acc += A[r * 8 + k] * C[k * 8 + col];
                    next[r * 8 + col] = round_to(type, kind, acc);
                }
            for (int e = 0; e < 64; e++) C[e] = next[e];
        }
        for (int e = 0; e < 64; e++) end[s][e] = C[e];
    }
    int64_t sgs = c->dim[D_GROUPS] * AL_SG_PER_TG;
    for (int64_t sg = 0; sg < sgs; sg++) {
        for (int e = 0; e < 64; e++) {
            double sum = 0;
            for (int ch = 0; ch < AL_MMA_CHAINS; ch++) sum += end[start_slot(sg, ch, AL_MMA_CHAINS)][e];
            out[sg * 64 + e] = (float)sum;
        }
    }
}

static int alu_reference(const op_case *c, ref_kind kind, double **out) {
    if (c->dim[D_MMA]) alu_mma_reference(c, kind, out[AL_OUT]);
    else alu_scalar_reference(c, kind, out[AL_OUT]);
    return 0;
}

static int alu_nstages(const op_case *c) { return 1; }

static int alu_launch(const op_case *c, int stage, op_launch *l) {
    static const char *const functions[2][3] = {
        {"micro_alu_f32", "micro_alu_f16", "micro_alu_bf16"},
        {"micro_mma_f32", "micro_mma_f16", "micro_mma_bf16"},
    };
    *l = (op_launch){
        .stage = c->dim[D_MMA] ? "mma" : "fma",
        .shader = "shaders/micro/alu.metal",
        .function = functions[c->dim[D_MMA]][c->dim[D_TYPE]],
        .grid = {(uint32_t)c->dim[D_GROUPS], 1, 1},
        .tg = {AL_TG, 1, 1},
        .nbinds = 3,
        .binds = {{.index = 0, .buf = AL_COEF}, {.index = 1, .buf = AL_MAT}, {.index = 2, .buf = AL_OUT}},
        .params_index = 3,
        .params = {(uint32_t)c->dim[D_STEPS]},
        .nparams = 1,
    };
    return 0;
}

static double alu_bytes(const int64_t *dim) { return 4.0 * (double)alu_outputs(dim); }

static double alu_flops(const int64_t *dim) {
    double steps = (double)dim[D_GROUPS] * (double)dim[D_STEPS];
    if (dim[D_MMA]) return steps * AL_SG_PER_TG * AL_MMA_CHAINS * 2.0 * 8 * 8 * 8;
    return steps * AL_TG * AL_CHAINS * 2.0;
}

const op_desc op_micro_alu = {
    .name = "micro.alu",
    .group = "micro",
    .summary = "FMA and simdgroup_matrix 8x8 MMA throughput in float, half and bfloat: TFLOP/s and % of peak",
    .dims = alu_dims,
    .ndims = 4,
    .bufs = alu_bufs,
    .nbufs = AL_NBUFS,
    .setup = alu_setup,
    .reference = alu_reference,
    .nstages = alu_nstages,
    .launch = alu_launch,
    .bytes = alu_bytes,
    .flops = alu_flops,
};
