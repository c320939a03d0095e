/* fixture_bind.c — fixture tensors in place of generated inputs, the shape read from
 * them, and fixture checks (rules in fixture_bind.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/strutil.h"
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

int fixture_map_parse(const char *val, fixture_map *m, char *err, size_t errlen) {
    const char *eq = strchr(val, '=');
    size_t fl = eq ? (size_t)(eq - val) : 0;
    if (!eq || fl == 0 || !eq[1] || fl >= sizeof m->from || strlen(eq + 1) >= sizeof m->to) {
        snprintf(err, errlen, "--map '%s' must be FILE_NAME=BUFFER (a tensor of the fixture, a buffer of the op; e.g. "
                              "--map Dvec=D_vec)", val);
        return -1;
    }
    memcpy(m->from, val, fl);
    m->from[fl] = 0;
    str_copy(m->to, sizeof m->to, eq + 1);
    return 0;
}

static int tensor_index(const fixture *f, const tensor *t) {
    for (int i = 0; i < fixture_count(f); i++)
        if (fixture_at(f, i) == t) return i;
    return -1;
}

/* "a, b, c" of the fixture's tensor names (for messages). */
static void tensor_names(const fixture *f, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < fixture_count(f) && off + 8 < n; i++) {
        int w = snprintf(buf + off, n - off, "%s%s", i ? ", " : "", fixture_at(f, i)->name);
        if (w < 0 || (size_t)w >= n - off) break;
        off += (size_t)w;
    }
}

/* The op's inputs and outputs by name (for messages). */
static void buffer_names(const op_desc *op, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < op->nbufs && off + 8 < n; i++) {
        if (op->bufs[i].role == BUF_SCRATCH) continue;
        int w = snprintf(buf + off, n - off, "%s%s", off ? ", " : "", op->bufs[i].name);
        if (w < 0 || (size_t)w >= n - off) break;
        off += (size_t)w;
    }
}

static int apply_maps(const fixture *f, const op_desc *op, const fixture_map *maps, int nmaps, fixture_plan *p,
                      char *mapped, char *err, size_t errlen) {
    char list[400];
    for (int k = 0; k < nmaps; k++) {
        const fixture_map *m = &maps[k];
        const tensor *t = fixture_get(f, m->from);
        if (!t) {
            tensor_names(f, list, sizeof list);
            snprintf(err, errlen, "--map %s=%s: %s has no tensor '%s' (it holds: %s): check the name before '='", m->from,
                     m->to, fixture_path(f), m->from, list);
            return -1;
        }
        int bi = -1;
        for (int fold = 0; fold < 2 && bi < 0; fold++)
            for (int i = 0; i < op->nbufs && bi < 0; i++)
                if (fold ? strcasecmp(op->bufs[i].name, m->to) == 0 : strcmp(op->bufs[i].name, m->to) == 0) bi = i;
        buffer_names(op, list, sizeof list);
        if (bi < 0) {
            snprintf(err, errlen, "--map %s=%s: %s has no buffer '%s' (its inputs and outputs: %s): use one of those",
                     m->from, m->to, op->name, m->to, list);
            return -1;
        }
        if (op->bufs[bi].role == BUF_SCRATCH) {
            snprintf(err, errlen, "--map %s=%s: '%s' is an intermediate of %s, neither input nor output: map to one of %s",
                     m->from, m->to, op->bufs[bi].name, op->name, list);
            return -1;
        }
        if (p->tensor_of[bi] >= 0) {
            snprintf(err, errlen, "--map %s=%s: '%s' and '%s' are both mapped to %s: map one tensor per buffer", m->from,
                     m->to, fixture_at(f, p->tensor_of[bi])->name, m->from, op->bufs[bi].name);
            return -1;
        }
        int ti = tensor_index(f, t);
        p->tensor_of[bi] = ti;
        mapped[ti] = 1;
    }
    return 0;
}

/* Fixes dimension di to v, found as `what`; -1 with err set when it contradicts
 * what fixed it before. */
static int fix_dim(const fixture *f, const op_desc *op, fixture_plan *p, int di, int64_t v, const tensor *t, int axis,
                   char *err, size_t errlen) {
    const char *dn = op->dims[di].name;
    char shape[96], other[96];
    tensor_shape_str(t, shape, sizeof shape);
    if (p->dim_source[di] == FIXDIM_NONE) {
        p->dim_source[di] = FIXDIM_TENSOR;
        p->dim[di] = v;
        str_copy(p->dim_from[di], sizeof p->dim_from[di], t->name);
        return 0;
    }
    if (p->dim[di] == v) return 0;
    if (p->dim_source[di] == FIXDIM_META) {
        snprintf(err, errlen, "%s: tensor '%s' %s has %s=%lld (axis %d) but the file's parameter %s is %lld: the file "
                              "contradicts itself; fix one of them",
                 fixture_path(f), t->name, shape, dn, (long long)v, axis, dn, (long long)p->dim[di]);
        return -1;
    }
    const tensor *first = fixture_get(f, p->dim_from[di]);
    if (first) tensor_shape_str(first, other, sizeof other);
    else other[0] = 0;
    snprintf(err, errlen, "%s: tensors '%s' %s and '%s' %s disagree on %s (%lld vs %lld): fix the file, or --map them "
                          "to the buffers they are",
             fixture_path(f), p->dim_from[di], other, t->name, shape, dn, (long long)p->dim[di], (long long)v);
    return -1;
}

enum { AXIS_MAX = 48, TERM_MAX = 4, FACTOR_MAX = 4 };

/* The axes of a shape spec ("B,T,Hg,K") into axes[]; returns how many. */
static int split_axes(const char *spec, char axes[][AXIS_MAX]) {
    int n = 0;
    for (const char *q = spec; *q && n <= TENSOR_MAX_DIMS; n++) {
        size_t l = strcspn(q, ",");
        snprintf(axes[n], AXIS_MAX, "%.*s", (int)(l < AXIS_MAX - 1 ? l : AXIS_MAX - 1), q);
        q += l + (q[l] == ',');
    }
    return n;
}

/* An axis written as a sum of products ("2*Hk*Dk+Hv*Dv", "Hk*Dk"), not one name or size. */
static int is_axis_expr(const char *a) { return strlen(a) > 1 && strpbrk(a, "*+") != NULL; }

/* One product of an axis expression: coef times the dimensions dim[0..n). */
typedef struct axis_term {
    int64_t coef;
    int dim[FACTOR_MAX], n;
} axis_term;

/* Parses an axis expression into terms; -1 when it names no dimension of op (a
 * mistake in the op's table, which the fixture tests catch). */
static int parse_axis_expr(const op_desc *op, const char *a, axis_term *t) {
    int nt = 0;
    for (const char *q = a; *q && nt < TERM_MAX; nt++) {
        size_t tl = strcspn(q, "+");
        axis_term *x = &t[nt];
        x->coef = 1;
        x->n = 0;
        for (const char *r = q; r < q + tl;) {
            size_t fl = strcspn(r, "*+");
            char name[AXIS_MAX];
            snprintf(name, sizeof name, "%.*s", (int)fl, r);
            if (name[0] >= '0' && name[0] <= '9') x->coef *= strtoll(name, NULL, 10);
            else if (x->n < FACTOR_MAX && (x->dim[x->n] = op_dim_index(op, name)) >= 0) x->n++;
            else return -1;
            r += fl + (r[fl] == '*');
        }
        q += tl + (q[tl] == '+');
    }
    return nt;
}

/* Solves the axis expression a of tensor t (axis j) for its one unknown dimension,
 * or checks it when every dimension is known.  Returns 1 when it fixed one, 0 when
 * there was nothing to do, -1 with err set. */
static int solve_axis(const fixture *f, const op_desc *op, fixture_plan *p, const tensor *t, int j, const char *a,
                      char *err, size_t errlen) {
    axis_term term[TERM_MAX];
    int nt = parse_axis_expr(op, a, term), unknown = -1, uterm = -1, uses = 0;
    if (nt <= 0) return 0;
    int64_t known = 0, den = 1;
    for (int k = 0; k < nt; k++) {
        int64_t prod = term[k].coef;
        int has_unknown = 0;
        for (int i = 0; i < term[k].n; i++) {
            int d = term[k].dim[i];
            if (p->dim_source[d] != FIXDIM_NONE) {
                prod *= p->dim[d];
                continue;
            }
            if (unknown >= 0 && unknown != d) return 0; /* two unknowns: another axis may fix one */
            unknown = d, uterm = k, uses++, has_unknown = 1;
        }
        if (has_unknown) den = prod;
        else known += prod;
    }
    char shape[96];
    tensor_shape_str(t, shape, sizeof shape);
    int64_t v = t->shape[j];
    if (unknown < 0) {
        if (known == v) return 0;
        snprintf(err, errlen, "%s: tensor '%s' %s has %lld on axis %d, but %s is %lld at the dimensions the file "
                              "fixes: fix the file, or --map it to the buffer it is",
                 fixture_path(f), t->name, shape, (long long)v, j, a, (long long)known);
        return -1;
    }
    const char *dn = op->dims[unknown].name;
    if (uses > 1 || uterm < 0) return 0; /* not linear in the unknown: leave it to flags */
    if (den <= 0 || v - known <= 0 || (v - known) % den != 0) {
        snprintf(err, errlen, "%s: tensor '%s' %s has %lld on axis %d, which is %s for no whole %s at the other "
                              "dimensions the file fixes: fix the file, or --map it to the buffer it is",
                 fixture_path(f), t->name, shape, (long long)v, j, a, dn);
        return -1;
    }
    return fix_dim(f, op, p, unknown, (v - known) / den, t, j, err, errlen) == 0 ? 1 : -1;
}

/* Dimensions that are no axis of their own (prep_step's Hk lives only in
 * conv_out's 2*Hk*Dk+Hv*Dv and the norm weights' Hk*Dk): solved from the axis
 * expressions once the plain axes are known, repeated while one fixes another. */
static int solve_axis_exprs(const fixture *f, const op_desc *op, fixture_plan *p, char *err, size_t errlen) {
    for (int progress = 1; progress;) {
        progress = 0;
        for (int bi = 0; bi < op->nbufs; bi++) {
            const char *spec = op->shapes ? op->shapes[bi] : NULL;
            if (!spec || p->tensor_of[bi] < 0) continue;
            const tensor *t = fixture_at(f, p->tensor_of[bi]);
            char axes[TENSOR_MAX_DIMS + 1][AXIS_MAX];
            int naxes = split_axes(spec, axes);
            for (int j = 0; j < naxes && j < t->ndim; j++) {
                if (!is_axis_expr(axes[j])) continue;
                int r = solve_axis(f, op, p, t, j, axes[j], err, errlen);
                if (r < 0) return -1;
                progress |= r;
            }
        }
    }
    return 0;
}

/* Reads the dimensions that are axes of buffer bi from its tensor. */
static int dims_from_tensor(const fixture *f, const op_desc *op, int bi, fixture_plan *p, char *err, size_t errlen) {
    const char *spec = op->shapes ? op->shapes[bi] : NULL;
    if (!spec) return 0;
    const tensor *t = fixture_at(f, p->tensor_of[bi]);
    char axes[TENSOR_MAX_DIMS + 1][AXIS_MAX], shape[96];
    int naxes = split_axes(spec, axes);
    tensor_shape_str(t, shape, sizeof shape);
    if (t->ndim != naxes) {
        snprintf(err, errlen, "%s: tensor '%s' has shape %s but %s's %s '%s' has %d axes [%s]: fix the fixture, or --map "
                              "it to the buffer it is",
                 fixture_path(f), t->name, shape, op->name, op->bufs[bi].role == BUF_OUT ? "output" : "input",
                 op->bufs[bi].name, naxes, spec);
        return -1;
    }
    for (int j = 0; j < naxes; j++) {
        const char *a = axes[j];
        if (strcmp(a, "*") == 0 || is_axis_expr(a)) continue; /* expressions: solve_axis_exprs */
        if (a[0] >= '0' && a[0] <= '9') {
            if (t->shape[j] != strtoll(a, NULL, 10)) {
                snprintf(err, errlen, "%s: tensor '%s' has shape %s but axis %d of %s's '%s' [%s] is always %s: fix the "
                                      "fixture, or --map it to the buffer it is",
                         fixture_path(f), t->name, shape, j, op->name, op->bufs[bi].name, spec, a);
                return -1;
            }
            continue;
        }
        int di = op_dim_index(op, a);
        if (di >= 0 && fix_dim(f, op, p, di, t->shape[j], t, j, err, errlen) != 0) return -1;
    }
    return 0;
}

int fixture_plan_make(const fixture *f, const op_desc *op, const fixture_map *maps, int nmaps, fixture_plan *p,
                      char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < OP_MAX_BUFS; i++) p->tensor_of[i] = -1;
    int nt = fixture_count(f), rc = -1;
    char *mapped = calloc((size_t)(nt ? nt : 1), 2), *bound = mapped + (nt ? nt : 1);
    if (!mapped) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (apply_maps(f, op, maps, nmaps, p, mapped, err, errlen) != 0) goto out;
    for (int bi = 0; bi < op->nbufs; bi++) {
        const tensor *t = NULL;
        if (op->bufs[bi].role == BUF_SCRATCH || p->tensor_of[bi] >= 0) continue;
        if (fixture_match_op_buf(f, &op->bufs[bi], &t) != 0) continue;
        int ti = tensor_index(f, t);
        if (ti >= 0 && !mapped[ti]) p->tensor_of[bi] = ti; /* a mapped tensor goes only where the map says */
    }
    for (int bi = 0; bi < op->nbufs; bi++)
        if (p->tensor_of[bi] >= 0) bound[p->tensor_of[bi]] = 1;
    size_t off = 0;
    for (int i = 0; i < nt; i++) {
        if (bound[i]) continue;
        p->nignored++;
        if (off + 8 >= sizeof p->ignored) continue;
        int w = snprintf(p->ignored + off, sizeof p->ignored - off, "%s%s", off ? ", " : "", fixture_at(f, i)->name);
        if (w < 0 || (size_t)w >= sizeof p->ignored - off) snprintf(p->ignored + off, sizeof p->ignored - off, ", ...");
        else off += (size_t)w;
    }
    /* The shape: parameters first, then every bound tensor's axes. */
    for (int i = 0; i < op->ndims; i++) {
        int64_t v;
        if (!find_param(f, &op->dims[i], &v)) continue;
        p->dim_source[i] = FIXDIM_META;
        p->dim[i] = v;
        str_copy(p->dim_from[i], sizeof p->dim_from[i], op->dims[i].name);
    }
    for (int bi = 0; bi < op->nbufs; bi++) {
        if (p->tensor_of[bi] >= 0 || (op->bufs[bi].role != BUF_IN && op->bufs[bi].role != BUF_INOUT)) continue;
        const op_buf *b = &op->bufs[bi];
        snprintf(err, errlen, "%s: no tensor for %s's input '%s' %s (names tried: %s): %s%s%s--map FILE_NAME=%s",
                 fixture_path(f), op->name, b->name, dtype_name(b->dtype), b->fixture_names ? b->fixture_names : b->name,
                 p->nignored ? "the file's unbound tensors are " : "add it, or ",
                 p->ignored, p->nignored ? ": bind one with " : "", b->name);
        goto out;
    }
    for (int bi = 0; bi < op->nbufs; bi++)
        if (p->tensor_of[bi] >= 0 && dims_from_tensor(f, op, bi, p, err, errlen) != 0) goto out;
    if (solve_axis_exprs(f, op, p, err, errlen) != 0) goto out;
    /* A fixture that names no key heads has one per value head (no GQA), e.g.
     * mlx-native's tri-solve set, whose input is already per value head. */
    int hg = op_dim_index(op, "Hg"), h = op_dim_index(op, "H");
    if (hg >= 0 && h >= 0 && p->dim_source[hg] == FIXDIM_NONE && p->dim_source[h] != FIXDIM_NONE) {
        p->dim_source[hg] = p->dim_source[h];
        p->dim[hg] = p->dim[h];
        str_copy(p->dim_from[hg], sizeof p->dim_from[hg], p->dim_from[h]);
    }
    rc = 0;
out:
    free(mapped);
    return rc;
}

void fixture_plan_notes(const fixture *f, const fixture_plan *p, const op_desc *op, const int64_t *dim,
                        rec_fixture *notes) {
    memset(notes, 0, sizeof *notes);
    str_copy(notes->path, sizeof notes->path, fixture_path(f));
    str_copy(notes->format, sizeof notes->format, fixture_format(f));
    str_copy(notes->ignored, sizeof notes->ignored, p->ignored);
    size_t off = 0;
    for (int i = 0; i < op->ndims; i++) {
        if (p->dim_source[i] != FIXDIM_NONE || off + 8 >= sizeof notes->unfixed) continue;
        int w = snprintf(notes->unfixed + off, sizeof notes->unfixed - off, "%s%s=%lld", off ? ", " : "",
                         op->dims[i].name, (long long)dim[i]);
        if (w < 0 || (size_t)w >= sizeof notes->unfixed - off) break;
        off += (size_t)w;
    }
}

static int same_shape(const tensor *a, const tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* f32/f16 into bf16 rounds to nearest even; bf16/f16 into f32 is exact. */
static int convertible(dtype from, dtype to) {
    return (to == DT_BF16 && (from == DT_F32 || from == DT_F16)) || (to == DT_F32 && (from == DT_BF16 || from == DT_F16));
}

static void convert(const tensor *from, tensor *to) {
    int64_t n = tensor_numel(to);
    for (int64_t j = 0; j < n; j++) {
        /* f16 -> f32 is exact, so one rounding, f32 -> bf16 (round to nearest even) */
        float v = (float)dtype_load(from->dtype, from->data, (size_t)j);
        if (to->dtype == DT_BF16) ((uint16_t *)to->data)[j] = bf16_from_f32(v);
        else ((float *)to->data)[j] = v;
    }
}

int fixture_bind_inputs(const fixture *f, const fixture_plan *p, op_case *c, rec_fixture *notes, char *err,
                        size_t errlen) {
    const op_desc *op = c->op;
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if (r == BUF_SCRATCH || (r == BUF_OUT && p->tensor_of[i] < 0)) continue;
        tensor *ct = c->t[i];
        char want[96], got[96];
        tensor_shape_str(ct, want, sizeof want);
        if (p->tensor_of[i] < 0) {
            snprintf(err, errlen, "%s: no tensor for %s's input '%s' %s %s: add it, or --map FILE_NAME=%s",
                     fixture_path(f), op->name, op->bufs[i].name, dtype_name(ct->dtype), want, op->bufs[i].name);
            return -1;
        }
        const tensor *ft = fixture_at(f, p->tensor_of[i]);
        tensor_shape_str(ft, got, sizeof got);
        if (!same_shape(ft, ct)) {
            snprintf(err, errlen, "%s: tensor '%s' has shape %s but %s's %s '%s' needs %s at this shape: fix the fixture "
                                  "or the dimension flags",
                     fixture_path(f), ft->name, got, op->name, r == BUF_OUT ? "output" : "input", op->bufs[i].name, want);
            return -1;
        }
        if (r == BUF_OUT) continue; /* an expected value: compared after the run */
        if (ft->dtype == ct->dtype) {
            memcpy(ct->data, ft->data, tensor_nbytes(ct));
            continue;
        }
        if (!convertible(ft->dtype, ct->dtype)) {
            snprintf(err, errlen, "%s: tensor '%s' is %s but %s's input '%s' is %s in the kernel ABI: store it as %s "
                                  "(f32/f16 are rounded into bf16, bf16/f16 widened into f32)",
                     fixture_path(f), ft->name, dtype_name(ft->dtype), op->name, op->bufs[i].name,
                     dtype_name(ct->dtype), dtype_name(ct->dtype));
            return -1;
        }
        convert(ft, ct);
        if (notes && notes->nconverted < OP_MAX_BUFS) {
            int k = notes->nconverted++;
            str_copy(notes->converted[k].tensor, sizeof notes->converted[k].tensor, ft->name);
            str_copy(notes->converted[k].buffer, sizeof notes->converted[k].buffer, op->bufs[i].name);
            str_copy(notes->converted[k].from, sizeof notes->converted[k].from, dtype_name(ft->dtype));
            str_copy(notes->converted[k].to, sizeof notes->converted[k].to, dtype_name(ct->dtype));
        }
    }
    return 0;
}

int fixture_check_outputs(const fixture *f, const fixture_plan *p, const op_case *c, int has_atol, double atol,
                          int has_rtol, double rtol, run_record *rec) {
    const op_desc *op = c->op;
    int all = 1;
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if ((r != BUF_OUT && r != BUF_INOUT) || p->tensor_of[i] < 0) continue;
        const tensor *ft = fixture_at(f, p->tensor_of[i]);
        /* An INOUT buffer's own tensor is its input, not an expected result. */
        if (r == BUF_INOUT && fixture_role_at(f, p->tensor_of[i]) != IO_ROLE_OUTPUT) continue;
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
