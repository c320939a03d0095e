/* prep_step.c — ops `prep_step`, `decode_seq` and `decode_seq_steps`: the fused
 * decode of a Qwen3.5/3.6 Gated DeltaNet layer from its conv output (kernels.md
 * "Fused decode prep_step"; math in src/ref/prep_step_ref.h).
 *
 * Buffers, in kernel ABI order (shaders/prep_step.metal): 0 conv_out, 1 a_log,
 * 2 dt_bias, 3 a_raw, 4 b_raw, 5 q_norm_weight, 6 k_norm_weight, 7 state_in,
 * 8 state_out, 9 y, 10 params u32 {B, Hk, Hv, Dk, Dv} (+ N for the sequence kernel).
 * Grid [Dv, B*Hv, 1] threadgroups of 32 threads: one simdgroup per state row.
 *
 *  - prep_step: one token, mt_gated_delta_prep_step.
 *  - decode_seq: N tokens in one dispatch, mt_gated_delta_prep_seq (each threadgroup
 *    keeps its state row in registers across tokens).
 *  - decode_seq_steps: the same N tokens as N dispatches of mt_gated_delta_prep_step
 *    (stage t binds token t's slices by offset, reads state_out after the first), so
 *    comparing the two shows the per-dispatch cost and the N-1 extra state round trips.
 * Inputs of a sequence are token-major ([N,B,...]) so one token's slice is contiguous.
 *
 * Memory-bound.  Bytes (the minimum, same for both sequence variants): state read
 * and written once (8*B*Hv*Dv*Dk) + per token conv_out, a_raw, b_raw read and y
 * written + a_log, dt_bias, norm weights.  Flops: 7 per state element per token
 * (decay 1, S k 2, rank-1 update 2, S q 2) + 8 per q/k element per key head (norms). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/rng.h"
#include "ops/gdn_common.h"
#include "ref/prep_step_ref.h"

enum { PS_CONV, PS_ALOG, PS_DTB, PS_ARAW, PS_BRAW, PS_QW, PS_KW, PS_SIN, PS_SOUT, PS_Y, PS_NBUFS };

/* Kernel limit: each of the 32 lanes keeps Dk/32 state elements in registers. */
#define PREP_MAX_DK 256

static const op_dim prep_step_dims[] = {
    {"B", NULL, 1, 1, 4096, "batch (sequences decoding together)"},
    {"Hk", NULL, 16, 1, 1024, "key/query heads"},
    {"Hv", NULL, 32, 1, 1024, "value heads (Hv % Hk == 0)"},
    {"Dk", "K", 128, 32, PREP_MAX_DK, "key head dim (multiple of 32)"},
    {"Dv", "V", 128, 1, 1024, "value head dim"},
};

static const op_dim decode_seq_dims[] = {
    {"B", NULL, 1, 1, 4096, "batch (sequences decoding together)"},
    {"Hk", NULL, 16, 1, 1024, "key/query heads"},
    {"Hv", NULL, 32, 1, 1024, "value heads (Hv % Hk == 0)"},
    {"Dk", "K", 128, 32, PREP_MAX_DK, "key head dim (multiple of 32)"},
    {"Dv", "V", 128, 1, 1024, "value head dim"},
    {"N", NULL, 16, 1, 65536, "tokens decoded one after another"},
};

/* One dispatch per token: N is bounded by the stages a run can record. */
static const op_dim decode_seq_steps_dims[] = {
    {"B", NULL, 1, 1, 4096, "batch (sequences decoding together)"},
    {"Hk", NULL, 16, 1, 1024, "key/query heads"},
    {"Hv", NULL, 32, 1, 1024, "value heads (Hv % Hk == 0)"},
    {"Dk", "K", 128, 32, PREP_MAX_DK, "key head dim (multiple of 32)"},
    {"Dv", "V", 128, 1, 1024, "value head dim"},
    {"N", NULL, 16, 1, OP_MAX_STAGES, "tokens, one dispatch each"},
};

/* f32 kernel vs f32 parity: the same operations, differing only in how simd_sum
 * associates and in exp/log/rsqrt ulps: ~1e-7 relative, growing slowly with N.
 * vs f64: f32 rounding of every step, ~1e-6 relative.  y is ~0.05 in size
 * (q carries the 1/Dk scale), so its atol is tighter than the state's. */
static const op_buf prep_step_bufs[PS_NBUFS] = {
    [PS_CONV] = {"conv_out", BUF_IN, DT_F32, "conv_out,mixed_qkv,qkv", {{0}}},
    [PS_ALOG] = {"a_log", BUF_IN, DT_F32, "a_log,A_log", {{0}}},
    [PS_DTB] = {"dt_bias", BUF_IN, DT_F32, "dt_bias", {{0}}},
    [PS_ARAW] = {"a_raw", BUF_IN, DT_F32, "a_raw,a", {{0}}},
    [PS_BRAW] = {"b_raw", BUF_IN, DT_F32, "b_raw,b", {{0}}},
    [PS_QW] = {"q_norm_weight", BUF_IN, DT_F32, "q_norm_weight,q_norm", {{0}}},
    [PS_KW] = {"k_norm_weight", BUF_IN, DT_F32, "k_norm_weight,k_norm", {{0}}},
    [PS_SIN] = {"state_in", BUF_IN, DT_F32, "state_in,h0,initial_state", {{0}}},
    [PS_SOUT] = {"state_out", BUF_OUT, DT_F32, "state_out,final_state,final", {{1e-5, 1e-4, 1e-5}, {2e-6, 1e-5, 1e-6}}},
    [PS_Y] = {"y", BUF_OUT, DT_F32, "y,o,out", {{1e-6, 1e-4, 1e-5}, {2e-7, 1e-5, 1e-6}}},
};

static const op_buf decode_seq_bufs[PS_NBUFS] = {
    [PS_CONV] = {"conv_out", BUF_IN, DT_F32, "conv_out,mixed_qkv,qkv", {{0}}},
    [PS_ALOG] = {"a_log", BUF_IN, DT_F32, "a_log,A_log", {{0}}},
    [PS_DTB] = {"dt_bias", BUF_IN, DT_F32, "dt_bias", {{0}}},
    [PS_ARAW] = {"a_raw", BUF_IN, DT_F32, "a_raw,a", {{0}}},
    [PS_BRAW] = {"b_raw", BUF_IN, DT_F32, "b_raw,b", {{0}}},
    [PS_QW] = {"q_norm_weight", BUF_IN, DT_F32, "q_norm_weight,q_norm", {{0}}},
    [PS_KW] = {"k_norm_weight", BUF_IN, DT_F32, "k_norm_weight,k_norm", {{0}}},
    [PS_SIN] = {"state_in", BUF_IN, DT_F32, "state_in,h0,initial_state", {{0}}},
    [PS_SOUT] = {"state_out", BUF_OUT, DT_F32, "state_out,final_state,final", {{2e-5, 1e-3, 2e-5}, {1e-5, 1e-4, 5e-6}}},
    [PS_Y] = {"y", BUF_OUT, DT_F32, "y,o,out", {{2e-6, 1e-3, 2e-5}, {1e-6, 1e-4, 5e-6}}},
};

static prep_shape prep_shape_of(const op_case *c) {
    prep_shape s = {op_dimv(c, "B"), op_dimv(c, "Hk"), op_dimv(c, "Hv"), op_dimv(c, "Dk"), op_dimv(c, "Dv"), 1};
    if (op_dim_index(c->op, "N") >= 0) s.N = op_dimv(c, "N");
    return s;
}

/* dims[0..4] are B, Hk, Hv, Dk, Dv in all three ops. */
static int prep_validate(const int64_t *dim, char *err, size_t errlen) {
    if (dim[2] % dim[1] != 0) {
        snprintf(err, errlen, "--Hv %lld is not a multiple of --Hk %lld: GQA needs Hv %% Hk == 0", (long long)dim[2],
                 (long long)dim[1]);
        return -1;
    }
    if (dim[3] % 32 != 0) {
        snprintf(err, errlen, "--Dk %lld is not a multiple of 32: the kernel splits Dk over 32 lanes", (long long)dim[3]);
        return -1;
    }
    return 0;
}

/* Realistic Qwen3.5-style inputs: conv output ~N(0,1); A_log = log(U(1,16));
 * dt_bias = softplus^-1(dt) with dt log-uniform in [1e-3, 0.1] (Mamba's init);
 * a_raw, b_raw ~N(0,1); the norm weights make k unit-length (1/sqrt(Dk)) and fold
 * the attention scale into q (1/Dk), with 5% jitter; state ~N(0, 0.1). */
static void gen_prep_inputs(op_case *c, const prep_shape *s) {
    rng r;
    gdn_gen_normal(c->t[PS_CONV], c->seed, 1.0);
    gdn_gen_normal(c->t[PS_ARAW], c->seed, 1.0);
    gdn_gen_normal(c->t[PS_BRAW], c->seed, 1.0);
    gdn_gen_normal(c->t[PS_SIN], c->seed, 0.1);
    rng_stream(&r, c->seed, "a_log");
    for (int64_t h = 0; h < s->Hv; h++) tensor_set(c->t[PS_ALOG], h, log(1.0 + 15.0 * rng_uniform(&r)));
    rng_stream(&r, c->seed, "dt_bias");
    for (int64_t h = 0; h < s->Hv; h++) {
        double dt = exp(log(1e-3) + (log(0.1) - log(1e-3)) * rng_uniform(&r));
        tensor_set(c->t[PS_DTB], h, log(expm1(dt)));
    }
    rng_stream(&r, c->seed, "q_norm_weight");
    for (int64_t i = 0; i < s->Hk * s->Dk; i++)
        tensor_set(c->t[PS_QW], i, (1.0 + 0.05 * rng_normal(&r)) / (double)s->Dk);
    rng_stream(&r, c->seed, "k_norm_weight");
    for (int64_t i = 0; i < s->Hk * s->Dk; i++)
        tensor_set(c->t[PS_KW], i, (1.0 + 0.05 * rng_normal(&r)) / sqrt((double)s->Dk));
}

/* ABI shapes by dimension name (op.h); conv_out's width is 2*Hk*Dk + Hv*Dv and the
 * norm weights hold Hk*Dk: Hk is no axis of its own, so a fixture without
 * parameters has it solved from those widths once Hv, Dv and Dk are read. */
static const char *const prep_step_shapes[PS_NBUFS] = {
    [PS_CONV] = "B,2*Hk*Dk+Hv*Dv", [PS_ALOG] = "Hv", [PS_DTB] = "Hv", [PS_ARAW] = "B,Hv", [PS_BRAW] = "B,Hv",
    [PS_QW] = "Hk*Dk",             [PS_KW] = "Hk*Dk",  [PS_SIN] = "B,Hv,Dv,Dk", [PS_SOUT] = "B,Hv,Dv,Dk",
    [PS_Y] = "B,Hv,Dv",
};
static const char *const decode_seq_shapes[PS_NBUFS] = {
    [PS_CONV] = "N,B,2*Hk*Dk+Hv*Dv", [PS_ALOG] = "Hv", [PS_DTB] = "Hv", [PS_ARAW] = "N,B,Hv", [PS_BRAW] = "N,B,Hv",
    [PS_QW] = "Hk*Dk",               [PS_KW] = "Hk*Dk",  [PS_SIN] = "B,Hv,Dv,Dk", [PS_SOUT] = "B,Hv,Dv,Dk",
    [PS_Y] = "N,B,Hv,Dv",
};

/* prep_step drops the leading N of every per-token tensor (its ABI is one token). */
static int prep_setup(op_case *c, char *err, size_t errlen) {
    prep_shape s = prep_shape_of(c);
    int seq = op_dim_index(c->op, "N") >= 0, lead = seq ? 1 : 0;
    int64_t C = 2 * s.Hk * s.Dk + s.Hv * s.Dv;
    int64_t conv[3] = {s.N, s.B, C}, per_head[3] = {s.N, s.B, s.Hv}, y[4] = {s.N, s.B, s.Hv, s.Dv};
    int64_t hv[1] = {s.Hv}, w[1] = {s.Hk * s.Dk}, state[4] = {s.B, s.Hv, s.Dv, s.Dk};
    if (op_case_alloc(c, PS_CONV, 2 + lead, conv + 1 - lead, err, errlen) ||
        op_case_alloc(c, PS_ALOG, 1, hv, err, errlen) || op_case_alloc(c, PS_DTB, 1, hv, err, errlen) ||
        op_case_alloc(c, PS_ARAW, 2 + lead, per_head + 1 - lead, err, errlen) ||
        op_case_alloc(c, PS_BRAW, 2 + lead, per_head + 1 - lead, err, errlen) ||
        op_case_alloc(c, PS_QW, 1, w, err, errlen) || op_case_alloc(c, PS_KW, 1, w, err, errlen) ||
        op_case_alloc(c, PS_SIN, 4, state, err, errlen) || op_case_alloc(c, PS_SOUT, 4, state, err, errlen) ||
        op_case_alloc(c, PS_Y, 3 + lead, y + 1 - lead, err, errlen))
        return -1;
    gen_prep_inputs(c, &s);
    return 0;
}

static int prep_reference(const op_case *c, ref_kind kind, double **out) {
    prep_shape s = prep_shape_of(c);
    const float *in[PS_NBUFS];
    for (int i = 0; i < PS_NBUFS; i++) in[i] = c->t[i]->data;
    return prep_seq_ref(kind, &s, in[PS_CONV], in[PS_ALOG], in[PS_DTB], in[PS_ARAW], in[PS_BRAW], in[PS_QW],
                        in[PS_KW], in[PS_SIN], out[PS_SOUT], out[PS_Y]);
}

static int prep_one_stage(const op_case *c) { return 1; }

static int prep_steps_nstages(const op_case *c) { return (int)op_dimv(c, "N"); }

/* Geometry and bindings shared by both kernels; token t's slices by byte offset. */
static void prep_launch_common(const prep_shape *s, int64_t t, op_launch *l) {
    uint64_t C = (uint64_t)(2 * s->Hk * s->Dk + s->Hv * s->Dv), B = (uint64_t)s->B, Hv = (uint64_t)s->Hv;
    uint64_t tok = (uint64_t)t;
    l->shader = "shaders/prep_step.metal";
    l->grid[0] = (uint32_t)s->Dv;
    l->grid[1] = (uint32_t)(s->B * s->Hv);
    l->grid[2] = 1;
    l->tg[0] = 32;
    l->tg[1] = l->tg[2] = 1;
    l->nbinds = 10;
    for (int i = 0; i < PS_NBUFS; i++) {
        l->binds[i].index = i;
        l->binds[i].buf = i;
        l->binds[i].offset = 0;
    }
    l->binds[PS_CONV].offset = tok * B * C * 4;
    l->binds[PS_ARAW].offset = l->binds[PS_BRAW].offset = tok * B * Hv * 4;
    l->binds[PS_Y].offset = tok * B * Hv * (uint64_t)s->Dv * 4;
    l->params_index = 10;
    l->params[0] = (uint32_t)s->B;
    l->params[1] = (uint32_t)s->Hk;
    l->params[2] = (uint32_t)s->Hv;
    l->params[3] = (uint32_t)s->Dk;
    l->params[4] = (uint32_t)s->Dv;
    l->nparams = 5;
}

static int prep_step_launch(const op_case *c, int stage, op_launch *l) {
    prep_shape s = prep_shape_of(c);
    *l = (op_launch){.stage = "prep_step", .function = "mt_gated_delta_prep_step"};
    prep_launch_common(&s, 0, l);
    return 0;
}

static int decode_seq_launch(const op_case *c, int stage, op_launch *l) {
    prep_shape s = prep_shape_of(c);
    *l = (op_launch){.stage = "prep_seq", .function = "mt_gated_delta_prep_seq"};
    prep_launch_common(&s, 0, l);
    l->params[5] = (uint32_t)s.N;
    l->nparams = 6;
    return 0;
}

static int decode_seq_steps_launch(const op_case *c, int stage, op_launch *l) {
    static const char *const names[] = {"token0", "token1", "token2", "token3", "token4", "token5", "token6",
                                        "token7", "token8", "token9", "token10+"};
    prep_shape s = prep_shape_of(c);
    *l = (op_launch){.stage = names[stage < 10 ? stage : 10], .function = "mt_gated_delta_prep_step", .role = "prep_step"};
    prep_launch_common(&s, stage, l);
    if (stage > 0) l->binds[PS_SIN].buf = PS_SOUT; /* the state carries over in place */
    return 0;
}

static double prep_bytes_n(const int64_t *dim, double N) {
    double B = (double)dim[0], Hk = (double)dim[1], Hv = (double)dim[2], Dk = (double)dim[3], Dv = (double)dim[4];
    double C = 2 * Hk * Dk + Hv * Dv;
    return 8 * B * Hv * Dv * Dk + N * 4 * (B * C + 2 * B * Hv + B * Hv * Dv) + 8 * Hv + 8 * Hk * Dk;
}

static double prep_flops_n(const int64_t *dim, double N) {
    double B = (double)dim[0], Hk = (double)dim[1], Hv = (double)dim[2], Dk = (double)dim[3], Dv = (double)dim[4];
    return N * (7 * B * Hv * Dv * Dk + 8 * B * Hk * Dk);
}

static double prep_step_bytes(const int64_t *dim) { return prep_bytes_n(dim, 1); }
static double prep_step_flops(const int64_t *dim) { return prep_flops_n(dim, 1); }
static double decode_seq_bytes(const int64_t *dim) { return prep_bytes_n(dim, (double)dim[5]); }
static double decode_seq_flops(const int64_t *dim) { return prep_flops_n(dim, (double)dim[5]); }

const op_desc op_prep_step = {
    .name = "prep_step",
    .group = "gdn",
    .summary = "fused one-token GDN decode from conv output: q/k RMSNorm, gates, one recurrence step (f32)",
    .dims = prep_step_dims,
    .ndims = 5,
    .bufs = prep_step_bufs,
    .nbufs = PS_NBUFS,
    .validate = prep_validate,
    .setup = prep_setup,
    .reference = prep_reference,
    .nstages = prep_one_stage,
    .launch = prep_step_launch,
    .shapes = prep_step_shapes,
    .bytes = prep_step_bytes,
    .flops = prep_step_flops,
};

const op_desc op_decode_seq = {
    .name = "decode_seq",
    .group = "gdn",
    .summary = "N decode tokens in one fused dispatch (state kept in registers); compare decode_seq_steps",
    .dims = decode_seq_dims,
    .ndims = 6,
    .bufs = decode_seq_bufs,
    .nbufs = PS_NBUFS,
    .validate = prep_validate,
    .setup = prep_setup,
    .reference = prep_reference,
    .nstages = prep_one_stage,
    .launch = decode_seq_launch,
    .shapes = decode_seq_shapes,
    .bytes = decode_seq_bytes,
    .flops = decode_seq_flops,
};

const op_desc op_decode_seq_steps = {
    .name = "decode_seq_steps",
    .group = "gdn",
    .summary = "the same N decode tokens as N prep_step dispatches (shows per-dispatch overhead)",
    .dims = decode_seq_steps_dims,
    .ndims = 6,
    .bufs = decode_seq_bufs,
    .nbufs = PS_NBUFS,
    .validate = prep_validate,
    .setup = prep_setup,
    .reference = prep_reference,
    .nstages = prep_steps_nstages,
    .launch = decode_seq_steps_launch,
    .shapes = decode_seq_shapes,
    .main_stage = "prep_step",
    .bytes = decode_seq_bytes,
    .flops = decode_seq_flops,
};
