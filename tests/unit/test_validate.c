/* test_validate.c — pieces of `gdnbench validate` that need no kernel: the error-
 * pattern classifier on planted masks, coordinates, the sweep, the stress profiles. */
#include <stdlib.h>
#include <string.h>

#include "ops/gdn_common.h"
#include "runner/validate.h"
#include "test.h"

/* An output tensor named `name` of the given shape, with its bad-element mask. */
static tensor *make(const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3, unsigned char **mask) {
    int64_t shape[4] = {d0, d1, d2, d3};
    tensor *t = tensor_new(name, DT_F32, ndim, shape);
    *mask = calloc((size_t)tensor_numel(t), 1);
    return t;
}

static void pattern_of(const tensor *t, const unsigned char *mask, char *buf, size_t n) {
    validate_pattern(t, mask, NULL, 64, buf, n);
}

TEST(validate_pattern_tail_head_every) {
    unsigned char *m;
    tensor *t = make("o", 4, 1, 129, 2, 8, &m); /* [B,T,H,V] */
    char buf[200];
    int64_t c[4];
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[1] >= 128;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "the tail") != NULL, "tail: %s", buf);
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[2] == 1;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "one head (h=1 of 2)") == 0, "head: %s", buf);
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[1] >= 64;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "every chunk but the first") != NULL, "chunks: %s", buf);
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[3] >= 4;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "v=4..7 of 8") != NULL, "v tile: %s", buf);
    memset(m, 1, (size_t)tensor_numel(t));
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "every element") == 0, "every: %s", buf);
    memset(m, 0, (size_t)tensor_numel(t));
    m[17] = m[tensor_numel(t) - 1] = 1; /* different chunks, heads and v */
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "scattered") != NULL, "scattered: %s", buf);
    free(m);
    tensor_free(t);
}

TEST(validate_pattern_diagonal_and_coords) {
    unsigned char *m;
    tensor *t = make("A", 4, 1, 128, 2, 64, &m); /* [B,T,H,C] */
    char buf[200];
    int64_t c[4];
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[3] == c[1] % 64;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strncmp(buf, "the diagonal", 12) == 0, "diagonal: %s", buf);
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        m[i] = c[3] > c[1] % 64;
    }
    pattern_of(t, m, buf, sizeof buf);
    CHECK_MSG(strncmp(buf, "above the diagonal", 18) == 0, "above: %s", buf);
    validate_coord_str(t, 64 * 2 * 65 + 64 + 3, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "(b=0, t=65, h=1, j=3)") == 0, "coords: %s", buf);
    free(m);
    tensor_free(t);
}

TEST(validate_pattern_dead_tail_chunk_ignored) {
    /* T=65: row 64 of A is all zero in the reference; errors only in chunk 0 are
     * "every live chunk", not "one chunk". */
    unsigned char *m;
    tensor *t = make("A", 4, 1, 65, 1, 64, &m);
    double *ref = calloc((size_t)tensor_numel(t), sizeof(double));
    int64_t c[4];
    for (int64_t i = 0; i < tensor_numel(t); i++) {
        tensor_unravel(t, i, c);
        int lower = c[1] < 64 && c[3] < c[1];
        ref[i] = lower ? 0.5 : 0.0;
        m[i] = lower;
    }
    char buf[200];
    validate_pattern(t, m, ref, 64, buf, sizeof buf);
    CHECK_MSG(strstr(buf, "chunk") == NULL, "dead chunk counted: %s", buf);
    free(ref);
    free(m);
    tensor_free(t);
}

TEST(validate_sweep_defaults_and_lists) {
    const op_desc *op = op_find("kkt");
    CHECK(op != NULL);
    validate_dims vd;
    memset(&vd, 0, sizeof vd);
    validate_case_spec *specs = calloc(VALIDATE_MAX_CASES, sizeof *specs);
    char err[256];
    const validate_profile *real = validate_profile_find("realistic");
    int n = validate_sweep(op, &vd, &real, 1, 0, specs, VALIDATE_MAX_CASES, err, sizeof err);
    int it = op_dim_index(op, "T"), ih = op_dim_index(op, "H"), ihg = op_dim_index(op, "Hg");
    int saw_t1 = 0, saw_4096 = 0, saw_36 = 0;
    for (int k = 0; k < n; k++) {
        saw_t1 |= specs[k].dim[it] == 1;
        saw_4096 |= specs[k].dim[it] == 4096;
        saw_36 |= specs[k].dim[ihg] == 3 && specs[k].dim[ih] == 6;
    }
    CHECK(n > 10);
    CHECK(saw_t1 && saw_4096 && saw_36);
    /* A T list replaces the T sweep everywhere: only 64 and 128 appear. */
    vd.given[it] = 1;
    vd.n[it] = 2;
    vd.list[it][0] = 64;
    vd.list[it][1] = 128;
    n = validate_sweep(op, &vd, NULL, 0, 0, specs, VALIDATE_MAX_CASES, err, sizeof err);
    CHECK(n > 2);
    int stress = 0;
    for (int k = 0; k < n; k++) {
        CHECK_MSG(specs[k].dim[it] == 64 || specs[k].dim[it] == 128, "T=%lld", (long long)specs[k].dim[it]);
        stress += strcmp(specs[k].why, "stress") == 0;
    }
    CHECK(stress >= 4); /* g x2, beta x2, k: kkt has no h0 */
    free(specs);
}

TEST(validate_profiles_reach_derived_inputs) {
    /* wy's Ai is solve(kkt(k, beta, gc)): a beta stress must change it. */
    const op_desc *op = op_find("wy");
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    dim[op_dim_index(op, "T")] = 65;
    dim[op_dim_index(op, "H")] = 2;
    dim[op_dim_index(op, "Hg")] = 1;
    char err[256];
    op_case *plain = validate_case_new(op, dim, 3, validate_profile_find("realistic"), err, sizeof err);
    op_case *near1 = validate_case_new(op, dim, 3, validate_profile_find("beta_near_one"), err, sizeof err);
    CHECK(plain && near1);
    int ai = -1, beta = -1;
    for (int i = 0; i < op->nbufs; i++) {
        if (strcmp(op->bufs[i].name, "Ai") == 0) ai = i;
        if (strcmp(op->bufs[i].name, "beta") == 0) beta = i;
    }
    CHECK(ai >= 0 && beta >= 0);
    if (plain && near1 && ai >= 0 && beta >= 0) {
        CHECK(memcmp(plain->t[ai]->data, near1->t[ai]->data, tensor_nbytes(plain->t[ai])) != 0);
        for (int64_t i = 0; i < tensor_numel(near1->t[beta]); i++) CHECK(tensor_get(near1->t[beta], i) >= 0.999);
    }
    CHECK(gdn_current_stress() == GDN_STRESS_NONE);
    CHECK(validate_profile_applies(op_find("cumsum"), (int64_t[]){1, 65, 2, 64}, 0, validate_profile_find("beta_near_one")) == 0);
    op_case_free(plain);
    op_case_free(near1);
}
