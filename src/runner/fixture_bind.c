/* fixture_bind.c — fixture tensors in place of generated inputs, and fixture checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/check.h"
#include "runner/fixture_bind.h"

/* Parameter names other projects' fixtures use for our dimensions. */
static const struct {
    const char *dim, *param;
} param_synonyms[] = {
    {"l2norm", "use_qk_l2norm_in_kernel"}, /* mlx-native chunk_gated_delta_rule_fwd */
    {NULL, NULL},
};

static int find_param(const fixture *f, const op_dim *d, int64_t *v) {
    if (fixture_param(f, d->name, v) == 0) return 1;
    if (d->alias && fixture_param(f, d->alias, v) == 0) return 1;
    for (int k = 0; param_synonyms[k].dim; k++)
        if (strcmp(param_synonyms[k].dim, d->name) == 0 && fixture_param(f, param_synonyms[k].param, v) == 0) return 1;
    return 0;
}

int fixture_bind_dims(const fixture *f, const op_desc *op, int64_t *dim, int *found) {
    int n = 0, hg = op_dim_index(op, "Hg"), h = op_dim_index(op, "H");
    for (int i = 0; i < op->ndims; i++) {
        int64_t v;
        found[i] = find_param(f, &op->dims[i], &v);
        if (found[i]) {
            dim[i] = v;
            n++;
        }
    }
    /* A fixture that names no key heads has one per value head (no GQA), e.g.
     * mlx-native's tri-solve set, whose input is already per value head. */
    if (hg >= 0 && h >= 0 && !found[hg] && found[h]) {
        dim[hg] = dim[h];
        found[hg] = 1;
        n++;
    }
    return n;
}

static int same_shape(const tensor *a, const tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

int fixture_bind_inputs(const fixture *f, op_case *c, char *err, size_t errlen) {
    const op_desc *op = c->op;
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if (r != BUF_IN && r != BUF_INOUT) continue;
        const tensor *ft = NULL;
        tensor *ct = c->t[i];
        char want[96], got[96];
        tensor_shape_str(ct, want, sizeof want);
        if (fixture_match_op_buf(f, &op->bufs[i], &ft) != 0) {
            snprintf(err, errlen, "%s: no tensor for %s's input '%s' %s %s (names tried: %s%s%s)", fixture_path(f),
                     op->name, op->bufs[i].name, dtype_name(ct->dtype), want, op->bufs[i].name,
                     op->bufs[i].fixture_names ? "," : "", op->bufs[i].fixture_names ? op->bufs[i].fixture_names : "");
            return -1;
        }
        tensor_shape_str(ft, got, sizeof got);
        if (!same_shape(ft, ct)) {
            snprintf(err, errlen, "%s: tensor '%s' has shape %s but %s's input '%s' needs %s at this shape: fix the fixture or the dimension flags",
                     fixture_path(f), ft->name, got, op->name, op->bufs[i].name, want);
            return -1;
        }
        if (ft->dtype != ct->dtype) {
            snprintf(err, errlen, "%s: tensor '%s' is %s but %s's input '%s' is %s in the kernel ABI: store it as %s",
                     fixture_path(f), ft->name, dtype_name(ft->dtype), op->name, op->bufs[i].name,
                     dtype_name(ct->dtype), dtype_name(ct->dtype));
            return -1;
        }
        memcpy(ct->data, ft->data, tensor_nbytes(ct));
    }
    return 0;
}

int fixture_check_outputs(const fixture *f, const op_case *c, int has_atol, double atol, int has_rtol, double rtol,
                          run_record *rec) {
    const op_desc *op = c->op;
    int all = 1;
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if (r != BUF_OUT && r != BUF_INOUT) continue;
        const tensor *ft = NULL;
        if (fixture_match_op_buf(f, &op->bufs[i], &ft) != 0) continue;
        /* An INOUT buffer's fixture tensor is its input; only a distinct expected
         * tensor (e.g. "state_out") would be an output, which the match prefers. */
        if (r == BUF_INOUT && ft->data == NULL) continue;
        if (!same_shape(ft, c->t[i]) || rec->nchecks >= REC_MAX_CHECKS) continue;
        int64_t n = tensor_numel(ft);
        double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!want) return 0;
        for (int64_t j = 0; j < n; j++) want[j] = tensor_get(ft, j);
        op_tol tol = op->bufs[i].tol[REF_F64];
        double fa, fr;
        int mask = fixture_tolerance(f, ft->name, &fa, &fr);
        if (mask == 0) mask = fixture_tolerance(f, op->bufs[i].name, &fa, &fr);
        if (mask & 1) tol.atol = fa;
        if (mask & 2) tol.rtol = fr;
        if (mask) tol.rel_l2 = 0; /* the fixture's bound is elementwise */
        if (has_atol) tol.atol = atol;
        if (has_rtol) tol.rtol = rtol;
        rec_check *rc = &rec->checks[rec->nchecks++];
        check_output(c->t[i], want, "fixture", tol, rc);
        all &= rc->pass;
        free(want);
    }
    return all;
}
