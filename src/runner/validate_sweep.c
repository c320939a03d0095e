/* validate_sweep.c — which cases `gdnbench validate` runs (issue 7 point 1).
 *
 * Not a full cross product (that would take hours on the software device): a base
 * shape, then one sweep per concern with the other dimensions at the base —
 *   T  {1, 2, 3, BT-1, BT, BT+1, 2BT-1, 2BT+1, 1000, 4096}  tails and chunk edges
 *   B  {1, 3}                                               batch strides
 *   (Hg, H) {(1,2), (2,2), (2,4), (1,4), (3,6)}             GQA ratios 2, 1, 2, 4 and
 *                                                           non-power-of-two heads
 *   K, V {64, 128}   l2norm {0, 1}
 * (decode prep: Hk/Hv pairs, Dk, Dv, N {1, 2, 3, 16}; attention: Hkv/Hq pairs, qL and
 * kL {1, 2, 63, 64, 65, 129}, causal {0, 1}, D {64, 128, 256}; other dimensions stay
 * at the op's default), then every stress profile at the base shape with T = 2BT+1 (two full chunks and a
 * one-token tail).  Base: B=1 T=BT+1 Hg=1 H=2 K=V=128 l2norm=0.
 * A dimension list given on the command line replaces that dimension's sweep, and
 * its base becomes the default base when the list has it, else the list's first
 * value (cli.md: third-party kernels often take only T % 64 == 0 or K == 128).
 * Giving Hg or H (Hk/Hv, Hkv/Hq) makes the head sweep the product of the two lists. */
#include <stdio.h>
#include <string.h>

#include "runner/validate.h"

typedef struct sweep_default {
    const char *dim;
    int64_t base;
    int n;
    int64_t values[12];
} sweep_default;

#define BT_DEFAULT 64

static const sweep_default defaults[] = {
    {"B", 1, 2, {1, 3}},
    {"T", BT_DEFAULT + 1, 10,
     {1, 2, 3, BT_DEFAULT - 1, BT_DEFAULT, BT_DEFAULT + 1, 2 * BT_DEFAULT - 1, 2 * BT_DEFAULT + 1, 1000, 4096}},
    {"K", 128, 2, {64, 128}},
    {"V", 128, 2, {64, 128}},
    {"Dk", 128, 2, {64, 128}},
    {"Dv", 128, 2, {64, 128}},
    {"BT", BT_DEFAULT, 1, {BT_DEFAULT}},
    {"l2norm", 0, 2, {0, 1}},
    {"N", 3, 4, {1, 2, 3, 16}},
    /* attention: query/key lengths around the 64-wide tiles, both masks, head dims */
    {"qL", BT_DEFAULT + 1, 6, {1, 2, BT_DEFAULT - 1, BT_DEFAULT, BT_DEFAULT + 1, 2 * BT_DEFAULT + 1}},
    {"kL", BT_DEFAULT + 1, 6, {1, 2, BT_DEFAULT - 1, BT_DEFAULT, BT_DEFAULT + 1, 2 * BT_DEFAULT + 1}},
    {"causal", 1, 2, {0, 1}},
    {"D", 64, 3, {64, 128, 256}},
    /* head pairs (key heads, value/query heads) are swept together: head_pairs */
    {"Hg", 1, 0, {0}},
    {"H", 2, 0, {0}},
    {"Hk", 1, 0, {0}},
    {"Hv", 2, 0, {0}},
    {"Hkv", 1, 0, {0}},
    {"Hq", 2, 0, {0}},
};

/* (key heads, value heads) dimension names of GDN, decode prep and attention ops. */
static const char *const head_dims[][2] = {{"Hg", "H"}, {"Hk", "Hv"}, {"Hkv", "Hq"}};
static const int64_t head_pairs[][2] = {{1, 2}, {2, 2}, {2, 4}, {1, 4}, {3, 6}};

static const sweep_default *find_default(const char *dim) {
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (strcmp(defaults[i].dim, dim) == 0) return &defaults[i];
    return NULL;
}

typedef struct sweep_builder {
    const op_desc *op;
    validate_case_spec *specs;
    int n, max;
} sweep_builder;

static int same_case(const validate_case_spec *a, const int64_t *dim, const validate_profile *p, int ndims) {
    return a->profile == p && memcmp(a->dim, dim, sizeof(int64_t) * (size_t)ndims) == 0;
}

/* Adds (dim, p) unless it is already there or outside the op's accepted ranges. */
static int add_case(sweep_builder *sb, const int64_t *dim, const validate_profile *p, const char *why, char *err,
                    size_t errlen) {
    for (int i = 0; i < sb->op->ndims; i++)
        if (dim[i] < sb->op->dims[i].min || dim[i] > sb->op->dims[i].max) return 0;
    for (int k = 0; k < sb->n; k++)
        if (same_case(&sb->specs[k], dim, p, sb->op->ndims)) return 0;
    if (sb->n >= sb->max) {
        snprintf(err, errlen, "the sweep has more than %d cases: give shorter dimension lists", sb->max);
        return -1;
    }
    validate_case_spec *s = &sb->specs[sb->n++];
    memset(s, 0, sizeof *s);
    memcpy(s->dim, dim, sizeof(int64_t) * (size_t)sb->op->ndims);
    s->profile = p;
    s->why = why;
    return 0;
}

static int in_list(int64_t v, const int64_t *list, int n) {
    for (int i = 0; i < n; i++)
        if (list[i] == v) return 1;
    return 0;
}

/* The values dimension i sweeps over (user list or default), and its base. */
static int dim_values(const op_desc *op, const validate_dims *vd, int i, const int64_t **vals, int64_t *base) {
    const sweep_default *d = find_default(op->dims[i].name);
    int64_t def_base = d ? d->base : op->dims[i].def;
    if (vd->given[i]) {
        *vals = vd->list[i];
        *base = in_list(def_base, vd->list[i], vd->n[i]) ? def_base : vd->list[i][0];
        return vd->n[i];
    }
    *base = def_base;
    *vals = d && d->n ? d->values : NULL;
    return d ? d->n : 0;
}

static int add_head_pairs(sweep_builder *sb, const validate_dims *vd, const int64_t *base, int ihg, int ih,
                          const validate_profile *real, char *err, size_t errlen) {
    int64_t dim[OP_MAX_DIMS];
    memcpy(dim, base, sizeof dim);
    if (!vd->given[ihg] && !vd->given[ih]) {
        for (size_t k = 0; k < sizeof head_pairs / sizeof head_pairs[0]; k++) {
            dim[ihg] = head_pairs[k][0];
            dim[ih] = head_pairs[k][1];
            if (add_case(sb, dim, real, "GQA", err, errlen)) return -1;
        }
        return 0;
    }
    int nhg = vd->given[ihg] ? vd->n[ihg] : 1, nh = vd->given[ih] ? vd->n[ih] : 1;
    for (int a = 0; a < nhg; a++)
        for (int c = 0; c < nh; c++) {
            dim[ihg] = vd->given[ihg] ? vd->list[ihg][a] : base[ihg];
            dim[ih] = vd->given[ih] ? vd->list[ih][c] : base[ih];
            if (add_case(sb, dim, real, "GQA", err, errlen)) return -1;
        }
    return 0;
}

int validate_sweep(const op_desc *op, const validate_dims *vd, const validate_profile *const *profiles, int nprofiles,
                   uint64_t seed, validate_case_spec *specs, int max, char *err, size_t errlen) {
    sweep_builder sb = {op, specs, 0, max};
    const validate_profile *real = validate_profile_find("realistic");
    int run_realistic = profiles == NULL;
    for (int k = 0; k < nprofiles && profiles; k++) run_realistic |= profiles[k] == real;
    int64_t base[OP_MAX_DIMS] = {0};
    for (int i = 0; i < op->ndims; i++) {
        const int64_t *vals;
        dim_values(op, vd, i, &vals, &base[i]);
    }
    int ihg = -1, ih = -1, it = op_dim_index(op, "T");
    for (size_t k = 0; k < sizeof head_dims / sizeof head_dims[0] && ihg < 0; k++) {
        int a = op_dim_index(op, head_dims[k][0]), b = op_dim_index(op, head_dims[k][1]);
        if (a >= 0 && b >= 0) ihg = a, ih = b;
    }
    if (run_realistic) {
        if (add_case(&sb, base, real, "base", err, errlen)) return -1;
        for (int i = 0; i < op->ndims; i++) {
            if (ihg >= 0 && ih >= 0 && (i == ihg || i == ih)) continue;
            const int64_t *vals;
            int64_t b;
            int n = dim_values(op, vd, i, &vals, &b);
            int64_t dim[OP_MAX_DIMS];
            memcpy(dim, base, sizeof dim);
            for (int k = 0; k < n; k++) {
                dim[i] = vals[k];
                if (add_case(&sb, dim, real, op->dims[i].name, err, errlen)) return -1;
            }
        }
        if (ihg >= 0 && ih >= 0 && add_head_pairs(&sb, vd, base, ihg, ih, real, err, errlen)) return -1;
    }
    /* Stresses: two full chunks and a tail, unless the user fixed T. */
    int64_t sbase[OP_MAX_DIMS];
    memcpy(sbase, base, sizeof sbase);
    if (it >= 0 && !vd->given[it]) sbase[it] = 2 * BT_DEFAULT + 1;
    for (int k = 0; k < (profiles ? nprofiles : validate_nprofiles); k++) {
        const validate_profile *p = profiles ? profiles[k] : &validate_profiles[k];
        if (p == real) continue;
        int applies = validate_profile_applies(op, sbase, seed, p);
        if (applies < 0) {
            char shape_err[256] = "";
            if (op->validate && op->validate(sbase, shape_err, sizeof shape_err)) continue; /* reported by the base */
            snprintf(err, errlen, "cannot build the %s inputs of %s (out of memory?)", p->name, op->name);
            return -1;
        }
        if (applies && add_case(&sb, sbase, p, "stress", err, errlen)) return -1;
    }
    return sb.n;
}
