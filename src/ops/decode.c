/* decode.c — op `decode`: one token of the recurrence, mlx-native's f32 decode ABI.
 *
 * ABI: gated_delta_net_decode_f32_{NSG} with NSG = K/32 (mlx-native ships 1, 2, 4,
 * i.e. K <= 128; K=256 names _8, for our own kernels) —
 *   0 q f32[B,1,Hg,K], 1 k f32[B,1,Hg,K], 2 v f32[B,1,H,V], 3 g f32[B,1,H],
 *   4 beta f32[B,1,H], 5 state_in f32[B,H,V,K], 6 output f32[B,1,H,V],
 *   7 state_out f32[B,H,V,K], 8 params u32[9] = {K, V, Hg, H, n_tokens=1, B, 0, 0,
 *   q_scale_bits=0}.  TG (32, NSG, 1), grid (V/NSG, H, B).
 *   (mlx-native's kernel reads params[0..5]; later versions also read params[8] as
 *   the bits of a q scale folded in at writeback, 0 = none — so 9 words fit both.)
 * Semantics that differ from the chunked ops (read off the mlx-native kernel):
 *   - g is a positive decay rate: alpha = exp(-g)  (g = softplus(..) * exp(A_log));
 *   - q comes pre-scaled by K^-0.5 (the kernel applies no scale);
 *   - GQA is tiled: value head h reads key head h % Hg (llama.cpp convention).
 * Inputs: q = unit rows * K^-0.5, k unit rows, v N(0,1), g = -(log decay) >= 0,
 * beta, state_in N(0, 0.1).
 * References: F64 one step in double; PARITY f32 in the kernel's order (decay,
 * S.k, d = (v - S.k) beta, S += d k, S.q).
 * Bytes: inputs once, outputs once (dominated by the two states).
 * Flops: 7KV + 3V per head. */
#include <stdio.h>

#include "ops/gdn_stages.h"
#include "ref/gdn_ref.h"

enum { DC_Q, DC_K, DC_V, DC_G, DC_BETA, DC_SIN, DC_OUT, DC_SOUT, DC_NBUFS };

static const op_dim decode_dims[] = {
    {"B", NULL, 1, 1, 4096, "batch (sequences)"},
    GDN_DIM_HG,
    GDN_DIM_H,
    GDN_DIM_K,
    GDN_DIM_V,
};

/* Tolerances.  Measured by tests/unit/test_ref_tolerances.c at B=4 H=32 Hg=16:
 *   PARITY vs F64: output rel_l2 1.2e-7 (max 7.8e-9), state_out 4.4e-8 (max 8.2e-8);
 *   the same for the exact step rounded to f32 -> both kinds atol 1e-5, rtol 1e-4,
 *   rel_l2 1e-5 (100x margin: f32 only).  exp(+g) or blocked GQA: fail by 1e3+. */
static const op_buf decode_bufs[DC_NBUFS] = {
    [DC_Q] = {"q", BUF_IN, DT_F32, "q", {{0}}},
    [DC_K] = {"k", BUF_IN, DT_F32, "k", {{0}}},
    [DC_V] = {"v", BUF_IN, DT_F32, "v", {{0}}},
    [DC_G] = {"g", BUF_IN, DT_F32, "g", {{0}}},
    [DC_BETA] = {"beta", BUF_IN, DT_F32, "beta", {{0}}},
    [DC_SIN] = {"state_in", BUF_IN, DT_F32, "state_in,state,h0", {{0}}},
    [DC_OUT] = {"output", BUF_OUT, DT_F32, "output,o,y", {{1e-5, 1e-4, 1e-5}, {1e-5, 1e-4, 1e-5}}},
    [DC_SOUT] = {"state_out", BUF_OUT, DT_F32, "state_out,final_state,new_state",
                 {{1e-5, 1e-4, 1e-5}, {1e-5, 1e-4, 1e-5}}},
};

extern const op_desc op_decode;

static int decode_validate(const int64_t *dim, char *err, size_t errlen) {
    return gdn_validate_common(&op_decode, dim, err, errlen);
}

static int decode_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    if (gdn_alloc(c, DC_Q, 4, s.B, 1, s.Hg, s.K, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_K, 4, s.B, 1, s.Hg, s.K, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_V, 4, s.B, 1, s.H, s.V, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_G, 3, s.B, 1, s.H, 0, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_BETA, 3, s.B, 1, s.H, 0, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_SIN, 4, s.B, s.H, s.V, s.K, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_OUT, 4, s.B, 1, s.H, s.V, 0, err, errlen)) return -1;
    if (gdn_alloc(c, DC_SOUT, 4, s.B, s.H, s.V, s.K, 0, err, errlen)) return -1;
    gdn_gen_unit_rows(c->t[DC_Q], c->seed);
    double scale = gdn_scale(s);
    for (int64_t i = 0; i < tensor_numel(c->t[DC_Q]); i++) tensor_set(c->t[DC_Q], i, tensor_get(c->t[DC_Q], i) * scale);
    gdn_gen_unit_rows(c->t[DC_K], c->seed);
    gdn_gen_normal(c->t[DC_V], c->seed, 1.0);
    gdn_gen_log_decay(c->t[DC_G], c->seed);
    for (int64_t i = 0; i < tensor_numel(c->t[DC_G]); i++) tensor_set(c->t[DC_G], i, -tensor_get(c->t[DC_G], i));
    gdn_gen_beta(c->t[DC_BETA], c->seed);
    gdn_gen_h0(c->t[DC_SIN], c->seed);
    return 0;
}

static int decode_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_shape s = gdn_shape_of(c);
    s.T = 1;
    gdn_recurrence_args a = {
        .s = s,
        .q = gdn_view_tensor(c->t[DC_Q]),
        .k = gdn_view_tensor(c->t[DC_K]),
        .v = gdn_view_tensor(c->t[DC_V]),
        .g = gdn_view_tensor(c->t[DC_G]),
        .beta = gdn_view_tensor(c->t[DC_BETA]),
        .h0 = gdn_view_tensor(c->t[DC_SIN]),
        .gqa_tiled = 1,
        .g_sign = -1.0,
        .scale = 1.0,
        .o = gdn_sink_f64(out[DC_OUT]),
        .final = gdn_sink_f64(out[DC_SOUT]),
    };
    return gdn_recurrence_ref(kind, &a);
}

static int decode_nstages(const op_case *c) { return 1; }

static uint32_t decode_nsg(gdn_shape s) { return (uint32_t)(s.K / 32 > 0 ? s.K / 32 : 1); }

static int decode_launch(const op_case *c, int stage, op_launch *l) {
    gdn_shape s = gdn_shape_of(c);
    uint32_t nsg = decode_nsg(s);
    static const char *const names[] = {"gated_delta_net_decode_f32_1", "gated_delta_net_decode_f32_2",
                                        "gated_delta_net_decode_f32_4", "gated_delta_net_decode_f32_8"};
    const char *fn = nsg >= 8 ? names[3] : nsg >= 4 ? names[2] : nsg >= 2 ? names[1] : names[0];
    *l = (op_launch){
        .stage = "decode",
        .shader = "shaders/gdn_decode.metal",
        .function = fn,
        .grid = {(uint32_t)(s.V / nsg), (uint32_t)s.H, (uint32_t)s.B},
        .tg = {32, nsg, 1},
        .nbinds = 8,
        .binds = {{.index = 0, .buf = DC_Q},
                  {.index = 1, .buf = DC_K},
                  {.index = 2, .buf = DC_V},
                  {.index = 3, .buf = DC_G},
                  {.index = 4, .buf = DC_BETA},
                  {.index = 5, .buf = DC_SIN},
                  {.index = 6, .buf = DC_OUT},
                  {.index = 7, .buf = DC_SOUT}},
        .params_index = 8,
        .params = {(uint32_t)s.K, (uint32_t)s.V, (uint32_t)s.Hg, (uint32_t)s.H, 1, (uint32_t)s.B, 0, 0, 0},
        .nparams = 9,
    };
    return 0;
}

static double decode_bytes(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_decode, dim);
    return 4.0 * s.B * (2.0 * s.Hg * s.K + 2.0 * s.H * s.V + 2.0 * s.H + 2.0 * s.H * s.V * s.K);
}

static double decode_flops(const int64_t *dim) {
    gdn_shape s = gdn_shape_from_dims(&op_decode, dim);
    return (double)s.B * s.H * (7.0 * s.K * s.V + 3.0 * s.V);
}

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const decode_shapes[DC_NBUFS] = {
    [DC_Q] = "B,1,Hg,K",
    [DC_K] = "B,1,Hg,K",
    [DC_V] = "B,1,H,V",
    [DC_G] = "B,1,H",
    [DC_BETA] = "B,1,H",
    [DC_SIN] = "B,H,V,K",
    [DC_OUT] = "B,1,H,V",
    [DC_SOUT] = "B,H,V,K",
};

const op_desc op_decode = {
    .name = "decode",
    .group = "gdn",
    .summary = "one decode token of the recurrence, f32 (mlx-native gated_delta_net_decode ABI)",
    .dims = decode_dims,
    .ndims = 5,
    .bufs = decode_bufs,
    .nbufs = DC_NBUFS,
    .validate = decode_validate,
    .setup = decode_setup,
    .reference = decode_reference,
    .nstages = decode_nstages,
    .launch = decode_launch,
    .shapes = decode_shapes,
    .bytes = decode_bytes,
    .flops = decode_flops,
};
