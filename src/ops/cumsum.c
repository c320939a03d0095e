/* cumsum.c — op `cumsum`: chunk-local inclusive cumulative sum of the log decay g.
 *
 * Pipeline step 1 (kernels.md).  ABI: chunk_local_cumsum_g_f32 —
 *   0 g_in f32[B,T,H], 1 g_cumsum f32[B,T,H], 2 params u32[5] = {B,T,H,BT,NT};
 *   grid (1, H, B*NT), one thread per group does the scan (we launch 64 and let
 *   thread 0 work; mlx-native's kernel uses a single lane).
 * Bytes: read g once, write gc once = 8*B*T*H.  Flops: B*T*H adds. */
#include <stdio.h>

#include "ops/gdn_common.h"
#include "ref/gdn_ref.h"

enum { CS_G, CS_GC, CS_NBUFS };

static const op_dim cumsum_dims[] = {
    GDN_DIM_B,
    GDN_DIM_T,
    {"H", NULL, 32, 1, 4096, "value heads"},
    GDN_DIM_BT,
};

static const op_buf cumsum_bufs[CS_NBUFS] = {
    [CS_G] = {"g", BUF_IN, DT_F32, "g,g_in,g_log_decay", {{0}}},
    /* f32 sums of <= 64 terms: parity is exact up to f32 rounding of the sum order.  A
     * parallel (simd prefix) scan lands a few f32 ulps from the serial sum: rel_l2 up to
     * 1.5e-7 measured over T in 1..4097, H in 1..32 (shaders/gdn_cumsum.metal). */
    [CS_GC] = {"g_cumsum", BUF_OUT, DT_F32, "g_cumsum,gc", {{1e-5, 1e-5, 1e-6}, {1e-6, 1e-6, 4e-7}}},
};

static int cumsum_validate(const int64_t *dim, char *err, size_t errlen) {
    extern const op_desc op_cumsum;
    return gdn_validate_common(&op_cumsum, dim, err, errlen);
}

static int cumsum_setup(op_case *c, char *err, size_t errlen) {
    gdn_shape s = gdn_shape_of(c);
    if (gdn_alloc(c, CS_G, 3, s.B, s.T, s.H, 0, 0, err, errlen)) return -1;
    if (gdn_alloc(c, CS_GC, 3, s.B, s.T, s.H, 0, 0, err, errlen)) return -1;
    gdn_gen_log_decay(c->t[CS_G], c->seed);
    return 0;
}

static int cumsum_reference(const op_case *c, ref_kind kind, double **out) {
    gdn_shape s = gdn_shape_of(c);
    gdn_cumsum_ref(kind, c->t[CS_G]->data, out[CS_GC], s.B, s.T, s.H, s.BT);
    return 0;
}

static int cumsum_nstages(const op_case *c) { return 1; }

static int cumsum_launch(const op_case *c, int stage, op_launch *l) {
    gdn_shape s = gdn_shape_of(c);
    *l = (op_launch){
        .stage = "cumsum",
        .shader = "shaders/gdn_cumsum.metal",
        .function = "chunk_local_cumsum_g_f32",
        .grid = {1, (uint32_t)s.H, (uint32_t)(s.B * s.NT)},
        .tg = {64, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = CS_G}, {.index = 1, .buf = CS_GC}},
        .params_index = 2,
        .params = {(uint32_t)s.B, (uint32_t)s.T, (uint32_t)s.H, (uint32_t)s.BT, (uint32_t)s.NT},
        .nparams = 5,
    };
    return 0;
}

static double cumsum_bytes(const int64_t *dim) { return 8.0 * (double)dim[0] * (double)dim[1] * (double)dim[2]; }

static double cumsum_flops(const int64_t *dim) { return (double)dim[0] * (double)dim[1] * (double)dim[2]; }

/* ABI shapes by dimension name (op.h): what a fixture's tensor shapes are read against. */
static const char *const cumsum_shapes[CS_NBUFS] = {
    [CS_G] = "B,T,H",
    [CS_GC] = "B,T,H",
};

const op_desc op_cumsum = {
    .name = "cumsum",
    .group = "gdn",
    .summary = "chunk-local cumulative sum of the log decay g (pipeline step 1)",
    .dims = cumsum_dims,
    .ndims = 4,
    .bufs = cumsum_bufs,
    .nbufs = CS_NBUFS,
    .validate = cumsum_validate,
    .setup = cumsum_setup,
    .reference = cumsum_reference,
    .nstages = cumsum_nstages,
    .launch = cumsum_launch,
    .shapes = cumsum_shapes,
    .bytes = cumsum_bytes,
    .flops = cumsum_flops,
};
