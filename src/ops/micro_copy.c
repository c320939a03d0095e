/* micro_copy.c — op `micro.copy`: device-to-device copy bandwidth.
 *
 * dst[i] = src[i] over MB MiB, one float or float4 per thread, with both buffers
 * in shared or private storage (private: filled and read back through a blit; the
 * software device has no private memory and keeps them shared).  Bytes = read +
 * write = 2 * size, so GB/s and % of the chip's peak come straight from the report.
 * The copy is checked bit for bit (tolerance 0), so a kernel that skips elements
 * fails.  Reference point: a naive copy kernel reached 53% of the M4 Max's
 * 546 GB/s in a published M-series optimisation guide. */
#include <stdio.h>

#include "ops/micro_common.h"

enum { CP_SRC, CP_DST, CP_NBUFS };
enum { D_MB, D_VEC, D_STORAGE };

static const op_dim copy_dims[] = {
    [D_MB] = {"MB", NULL, 64, 1, 1024, "size of each buffer in MiB"},
    [D_VEC] = {"vec", NULL, 4, 1, 4, "elements per thread: 1 (float) or 4 (float4)"},
    [D_STORAGE] = {"storage", NULL, 0, 0, 1, "0 shared, 1 private (GPU-only) buffers"},
};

static const op_buf copy_bufs[CP_NBUFS] = {
    [CP_SRC] = {"src", BUF_IN, DT_F32, NULL, {{0}}},
    [CP_DST] = {"dst", BUF_OUT, DT_F32, NULL, {{0, 0, 0}, {0, 0, 0}}},
};

static int64_t copy_floats(const int64_t *dim) { return dim[D_MB] << 18; } /* MiB / 4 bytes */

static int copy_validate(const int64_t *dim, char *err, size_t errlen) {
    if (dim[D_VEC] != 1 && dim[D_VEC] != 4) {
        snprintf(err, errlen, "--vec %lld is not supported by micro.copy: use 1 (float) or 4 (float4)",
                 (long long)dim[D_VEC]);
        return -1;
    }
    return 0;
}

static int copy_setup(op_case *c, char *err, size_t errlen) {
    int64_t n = copy_floats(c->dim);
    if (micro_alloc1(c, CP_SRC, n, err, errlen) || micro_alloc1(c, CP_DST, n, err, errlen)) return -1;
    micro_fill_uniform(c->t[CP_SRC], c->seed);
    if (c->dim[D_STORAGE]) c->private_bufs = (1u << CP_SRC) | (1u << CP_DST);
    return 0;
}

static int copy_reference(const op_case *c, ref_kind kind, double **out) {
    const float *src = c->t[CP_SRC]->data;
    int64_t n = tensor_numel(c->t[CP_SRC]);
    for (int64_t i = 0; i < n; i++) out[CP_DST][i] = src[i];
    return 0;
}

static int copy_nstages(const op_case *c) { return 1; }

static int copy_launch(const op_case *c, int stage, op_launch *l) {
    int vec4 = c->dim[D_VEC] == 4;
    int64_t items = copy_floats(c->dim) / (vec4 ? 4 : 1);
    *l = (op_launch){
        .stage = "copy",
        .shader = "shaders/micro/copy.metal",
        .function = vec4 ? "micro_copy_f32x4" : "micro_copy_f32",
        .grid = {micro_groups(items, 256), 1, 1},
        .tg = {256, 1, 1},
        .nbinds = 2,
        .binds = {{.index = 0, .buf = CP_SRC}, {.index = 1, .buf = CP_DST}},
        .params_index = 2,
        .params = {(uint32_t)items},
        .nparams = 1,
    };
    return 0;
}

static double copy_bytes(const int64_t *dim) { return 2.0 * 4.0 * (double)copy_floats(dim); }

static double copy_flops(const int64_t *dim) { return 0; }

const op_desc op_micro_copy = {
    .name = "micro.copy",
    .group = "micro",
    .summary = "device-to-device copy, float vs float4, shared vs private: GB/s and % of peak bandwidth "
               "(reference: a naive copy reached 53% of 546 GB/s on an M4 Max)",
    .dims = copy_dims,
    .ndims = 3,
    .bufs = copy_bufs,
    .nbufs = CP_NBUFS,
    .validate = copy_validate,
    .setup = copy_setup,
    .reference = copy_reference,
    .nstages = copy_nstages,
    .launch = copy_launch,
    .bytes = copy_bytes,
    .flops = copy_flops,
};
