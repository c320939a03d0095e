/* test_ref_tolerances.c — where the default tolerances of the GDN ops come from, and
 * the proof that they discriminate.
 *
 * For each op at T=4096 (H=4, Hg=2, K=V=128, seeds 1..2 where cheap):
 *   1. PARITY vs F64 must pass the op's F64 tolerance (the stats printed are the
 *      "measured" numbers the tolerances were chosen from, with a 2-4x margin);
 *   2. a kernel-like variant — the parity reference with the K axis reversed (every
 *      K-dot sums in the opposite order), or the exact result rounded to the output
 *      dtype where no K-dot exists — must pass the PARITY tolerance;
 *   3. deliberate mistakes (a bf16 rounding moved or dropped, a gate left out, the
 *      wrong GQA mapping) must fail the PARITY tolerance. */
#include "gdn_test_util.h"
#include "ops/gdn_stages.h"

/* Copy of t with the last dimension reversed (same name, dtype, shape). */
static tensor *rev_last(const tensor *t) {
    tensor *r = tensor_clone(t);
    int64_t d = t->shape[t->ndim - 1], rows = tensor_numel(t) / d;
    size_t el = dtype_size(t->dtype);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < d; j++)
            memcpy((char *)r->data + (size_t)(i * d + j) * el, (const char *)t->data + (size_t)(i * d + d - 1 - j) * el,
                   el);
    return r;
}

static void unrev_last(double *x, int64_t n, int64_t d) {
    for (int64_t i = 0; i < n; i += d)
        for (int64_t j = 0; j < d / 2; j++) {
            double t = x[i + j];
            x[i + j] = x[i + d - 1 - j];
            x[i + d - 1 - j] = t;
        }
}

/* Copy of an f32 tensor with every other entry moved by one f32 ulp: what a GPU's
 * exp/FMA differences do to the gates, the main source of bf16 rounding flips. */
static tensor *nudge_f32(const tensor *t) {
    tensor *r = tensor_clone(t);
    float *x = r->data;
    for (int64_t i = 0; i < tensor_numel(r); i += 2) x[i] = nextafterf(x[i], 0.0f);
    return r;
}

static int buf_index(const op_case *c, const char *name) {
    for (int i = 0; i < c->op->nbufs; i++)
        if (strcmp(c->op->bufs[i].name, name) == 0) return i;
    return -1;
}

/* Checks x against r with buffer `name`'s tolerance of kind k; prints; returns pass. */
static int tol_report(const op_case *c, const char *what, const char *name, ref_kind k, const double *x,
                      const double *r) {
    int i = buf_index(c, name);
    gt_err e;
    int ok = gt_passes(&c->op->bufs[i], k, x, r, tensor_numel(c->t[i]), &e);
    printf("  %-10s %-6s %-34s max|d| %.3g rel_l2 %.3g worst/tol %.3g -> %s\n", c->op->name, name, what, e.max_abs,
           e.rel_l2, e.worst_ratio, ok ? "within" : "outside");
    return ok;
}

/* Step 1 for every output of the case; returns the parity outputs (caller frees). */
static double **parity_within_f64_tol(op_case *c) {
    double **f = gt_outs(c), **p = gt_outs(c);
    CHECK(c->op->reference(c, REF_F64, f) == 0);
    CHECK(c->op->reference(c, REF_PARITY, p) == 0);
    for (int i = 0; i < c->op->nbufs; i++)
        if (p[i]) CHECK(tol_report(c, "parity vs f64", c->op->bufs[i].name, REF_F64, p[i], f[i]));
    gt_outs_free(f);
    return p;
}

#define T_LONG ((int64_t)4096)
#define SMALL "H", (int64_t)4, "Hg", (int64_t)2

TEST(ref_tol_kkt) {
    for (uint64_t seed = 1; seed <= 2; seed++) {
        op_case *c = gt_case("kkt", seed, "T", T_LONG, SMALL, NULL);
        double **p = parity_within_f64_tol(c);
        gdn_shape s = gdn_shape_of(c);
        int64_t n = tensor_numel(c->t[3]);
        double *x = calloc((size_t)n, sizeof *x);
        tensor *kr = rev_last(c->t[0]);
        gdn_kkt_ref(REF_PARITY, s, gdn_view_tensor(kr), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_sink_f64(x));
        CHECK(tol_report(c, "K-reversed parity vs parity", "A", REF_PARITY, x, p[3]));
        tensor *gn = nudge_f32(c->t[2]);
        gdn_kkt_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(gn),
                    gdn_sink_f64(x));
        CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "A", REF_PARITY, x, p[3]));
        tensor_free(gn);
        /* mistake: no bf16 rounding of k*beta (exact A, stored f32) */
        tensor *A32 = tensor_new("A", DT_F32, c->t[3]->ndim, c->t[3]->shape);
        gdn_kkt_ref(REF_F64, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_sink_tensor(A32));
        for (int64_t i = 0; i < n; i++) x[i] = tensor_get(A32, i);
        CHECK(!tol_report(c, "no bf16(k*beta) vs parity", "A", REF_PARITY, x, p[3]));
        tensor_free(A32), tensor_free(kr), free(x), gt_outs_free(p), op_case_free(c);
    }
}

TEST(ref_tol_solve_tril) {
    op_case *c = gt_case("solve_tril", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    gdn_shape s = gdn_shape_of(c);
    int64_t n = tensor_numel(c->t[1]);
    double *x = calloc((size_t)n, sizeof *x);
    /* a kernel with exact sums: the f64 inverse rounded to f32 */
    gdn_solve_tril_ref(REF_F64, s, gdn_view_tensor(c->t[0]), gdn_sink_f64(x));
    for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
    CHECK(tol_report(c, "f64 rounded to f32 vs parity", "Ai", REF_PARITY, x, p[1]));
    /* mistake: Ai stored as bf16 (FLA's solve_tril output dtype) */
    for (int64_t i = 0; i < n; i++) x[i] = bf16_round((float)p[1][i]);
    CHECK(!tol_report(c, "Ai rounded to bf16 vs parity", "Ai", REF_PARITY, x, p[1]));
    free(x), gt_outs_free(p), op_case_free(c);
}

TEST(ref_tol_wy) {
    op_case *c = gt_case("wy", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    gdn_shape s = gdn_shape_of(c);
    int64_t nw = tensor_numel(c->t[5]), nu = tensor_numel(c->t[6]);
    double *w = calloc((size_t)nw, sizeof *w), *u = calloc((size_t)nu, sizeof *u);
    /* a kernel with exact sums: w, u without the rounding of anything but the output
     * would differ from parity by the operand rounding too, so the kernel-like
     * variant here rounds the operands (the parity path) and only perturbs Ai by
     * one f32 ulp on alternate entries — the size of f32 summation-order effects. */
    tensor *ai = tensor_clone(c->t[4]);
    float *a = ai->data;
    for (int64_t i = 0; i < tensor_numel(ai); i += 2) a[i] = nextafterf(a[i], 2.0f * a[i]);
    gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
               gdn_view_tensor(c->t[3]), gdn_view_tensor(ai), gdn_sink_f64(w), gdn_sink_f64(u));
    CHECK(tol_report(c, "Ai +1 f32 ulp vs parity", "w", REF_PARITY, w, p[5]));
    CHECK(tol_report(c, "Ai +1 f32 ulp vs parity", "u", REF_PARITY, u, p[6]));
    tensor *gn = nudge_f32(c->t[3]);
    gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
               gdn_view_tensor(gn), gdn_view_tensor(c->t[4]), gdn_sink_f64(w), gdn_sink_f64(u));
    CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "w", REF_PARITY, w, p[5]));
    tensor_free(gn);
    /* mistake: the exp(gc) gate of k left out */
    tensor *g0 = tensor_new("g", DT_F32, c->t[3]->ndim, c->t[3]->shape);
    gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
               gdn_view_tensor(g0), gdn_view_tensor(c->t[4]), gdn_sink_f64(w), gdn_sink_f64(u));
    CHECK(!tol_report(c, "no exp(gc) gate vs parity", "w", REF_PARITY, w, p[5]));
    /* mistake: Ai rounded to bf16 before the products (FLA's solve_tril dtype) */
    for (int64_t i = 0; i < tensor_numel(ai); i++) a[i] = bf16_round(((float *)c->t[4]->data)[i]);
    gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
               gdn_view_tensor(c->t[3]), gdn_view_tensor(ai), gdn_sink_f64(w), gdn_sink_f64(u));
    int w_in = tol_report(c, "Ai rounded to bf16 vs parity", "w", REF_PARITY, w, p[5]);
    int u_in = tol_report(c, "Ai rounded to bf16 vs parity", "u", REF_PARITY, u, p[6]);
    CHECK(!(w_in && u_in));
    tensor_free(g0), tensor_free(ai), free(w), free(u), gt_outs_free(p), op_case_free(c);
}

TEST(ref_tol_chunk_h) {
    op_case *c = gt_case("chunk_h", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    gdn_shape s = gdn_shape_of(c);
    int64_t nh = tensor_numel(c->t[5]), nv = tensor_numel(c->t[6]), nf = tensor_numel(c->t[7]);
    double *h = calloc((size_t)nh, sizeof *h), *vn = calloc((size_t)nv, sizeof *vn), *f = calloc((size_t)nf, 8);
    tensor *kr = rev_last(c->t[0]), *wr = rev_last(c->t[1]), *h0r = rev_last(c->t[4]);
    gdn_chunk_h_ref(REF_PARITY, s, gdn_view_tensor(kr), gdn_view_tensor(wr), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(c->t[3]), gdn_view_tensor(h0r), gdn_sink_f64(h), gdn_sink_f64(vn), gdn_sink_f64(f));
    unrev_last(h, nh, s.K), unrev_last(f, nf, s.K);
    CHECK(tol_report(c, "K-reversed parity vs parity", "h", REF_PARITY, h, p[5]));
    CHECK(tol_report(c, "K-reversed parity vs parity", "v_new", REF_PARITY, vn, p[6]));
    CHECK(tol_report(c, "K-reversed parity vs parity", "final", REF_PARITY, f, p[7]));
    tensor *gn = nudge_f32(c->t[3]);
    gdn_chunk_h_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(gn), gdn_view_tensor(c->t[4]), gdn_sink_f64(h), gdn_sink_f64(vn), gdn_sink_f64(f));
    CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "h", REF_PARITY, h, p[5]));
    CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "v_new", REF_PARITY, vn, p[6]));
    CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "final", REF_PARITY, f, p[7]));
    tensor_free(gn);
    /* mistake: the gates left out (gc = 0) */
    tensor *g0 = tensor_new("g", DT_F32, c->t[3]->ndim, c->t[3]->shape);
    gdn_chunk_h_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(g0), gdn_view_tensor(c->t[4]), gdn_sink_f64(h), gdn_sink_f64(vn), gdn_sink_f64(f));
    CHECK(!tol_report(c, "no gate vs parity", "final", REF_PARITY, f, p[7]));
    tensor_free(g0), tensor_free(kr), tensor_free(wr), tensor_free(h0r);
    free(h), free(vn), free(f), gt_outs_free(p), op_case_free(c);
}

TEST(ref_tol_chunk_o) {
    op_case *c = gt_case("chunk_o", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    gdn_shape s = gdn_shape_of(c);
    int64_t n = tensor_numel(c->t[5]);
    double *o = calloc((size_t)n, sizeof *o);
    tensor *qr = rev_last(c->t[0]), *kr = rev_last(c->t[1]), *hr = rev_last(c->t[3]);
    gdn_chunk_o_ref(REF_PARITY, s, gdn_view_tensor(qr), gdn_view_tensor(kr), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(hr), gdn_view_tensor(c->t[4]), gdn_scale(s), gdn_sink_f64(o));
    CHECK(tol_report(c, "K-reversed parity vs parity", "o", REF_PARITY, o, p[5]));
    tensor *gn = nudge_f32(c->t[4]);
    gdn_chunk_o_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(c->t[3]), gdn_view_tensor(gn), gdn_scale(s), gdn_sink_f64(o));
    CHECK(tol_report(c, "gc -1 f32 ulp vs parity", "o", REF_PARITY, o, p[5]));
    tensor_free(gn);
    /* mistake: the q.k matrix kept f32 (no bf16 before A.v_new): the f64 reference
     * with the same inputs, rounded to bf16 at the output only */
    gdn_chunk_o_ref(REF_F64, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(c->t[3]), gdn_view_tensor(c->t[4]), gdn_scale(s), gdn_sink_f64(o));
    for (int64_t i = 0; i < n; i++) o[i] = bf16_round((float)o[i]);
    CHECK(!tol_report(c, "exact (no inner bf16) vs parity", "o", REF_PARITY, o, p[5]));
    tensor *g0 = tensor_new("g", DT_F32, c->t[4]->ndim, c->t[4]->shape);
    gdn_chunk_o_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]), gdn_view_tensor(c->t[2]),
                    gdn_view_tensor(c->t[3]), gdn_view_tensor(g0), gdn_scale(s), gdn_sink_f64(o));
    CHECK(!tol_report(c, "no gate vs parity", "o", REF_PARITY, o, p[5]));
    tensor_free(g0), tensor_free(qr), tensor_free(kr), tensor_free(hr), free(o), gt_outs_free(p), op_case_free(c);
}

/* The chunk_fwd parity chain run by hand so one stage can be perturbed. */
static void chain_with_bf16_ai(op_case *c, double *o, double *f) {
    gdn_shape s = gdn_shape_of(c);
    gdn_chain ch;
    char err[128];
    CHECK(gdn_chain_build(&ch, s, c->seed, GDN_CHAIN_SOLVE, err, sizeof err) == 0);
    /* use the case's own inputs: the chain regenerates the same streams */
    float *a = ch.Ai->data;
    for (int64_t i = 0; i < tensor_numel(ch.Ai); i++) a[i] = bf16_round(a[i]);
    tensor *v = c->t[2], *w = tensor_new("w", DT_BF16, 4, (int64_t[]){s.B, s.T, s.H, s.K});
    tensor *u = tensor_new("u", DT_BF16, 4, (int64_t[]){s.B, s.T, s.H, s.V});
    tensor *h = tensor_new("h", DT_BF16, 5, (int64_t[]){s.B, s.NT, s.H, s.V, s.K});
    tensor *vn = tensor_new("v_new", DT_BF16, 4, (int64_t[]){s.B, s.T, s.H, s.V});
    gdn_wy_ref(REF_PARITY, s, gdn_view_tensor(ch.k), gdn_view_tensor(v), gdn_view_tensor(ch.beta),
               gdn_view_tensor(ch.gc), gdn_view_tensor(ch.Ai), gdn_sink_tensor(w), gdn_sink_tensor(u));
    gdn_chunk_h_ref(REF_PARITY, s, gdn_view_tensor(ch.k), gdn_view_tensor(w), gdn_view_tensor(u),
                    gdn_view_tensor(ch.gc), gdn_view_tensor(c->t[5]), gdn_sink_tensor(h), gdn_sink_tensor(vn),
                    gdn_sink_f64(f));
    gdn_chunk_o_ref(REF_PARITY, s, gdn_view_tensor(c->t[0]), gdn_view_tensor(ch.k), gdn_view_tensor(vn),
                    gdn_view_tensor(h), gdn_view_tensor(ch.gc), gdn_scale(s), gdn_sink_f64(o));
    tensor_free(w), tensor_free(u), tensor_free(h), tensor_free(vn);
    gdn_chain_free(&ch);
}

TEST(ref_tol_chunk_fwd) {
    op_case *c = gt_case("chunk_fwd", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    gdn_shape s = gdn_shape_of(c);
    int64_t no = tensor_numel(c->t[6]), nf = tensor_numel(c->t[7]);
    double *o = calloc((size_t)no, sizeof *o), *f = calloc((size_t)nf, sizeof *f);
    tensor *qr = rev_last(c->t[0]), *kr = rev_last(c->t[1]), *h0r = rev_last(c->t[5]);
    gdn_chunk_pipeline_ref(REF_PARITY, s, 0, gdn_view_tensor(qr), gdn_view_tensor(kr), gdn_view_tensor(c->t[2]),
                           gdn_view_tensor(c->t[3]), gdn_view_tensor(c->t[4]), gdn_view_tensor(h0r), gdn_scale(s),
                           gdn_sink_f64(o), gdn_sink_f64(f));
    unrev_last(f, nf, s.K);
    CHECK(tol_report(c, "K-reversed parity vs parity", "o", REF_PARITY, o, p[6]));
    CHECK(tol_report(c, "K-reversed parity vs parity", "final", REF_PARITY, f, p[7]));
    tensor *gn = nudge_f32(c->t[3]);
    gdn_chunk_pipeline_ref(REF_PARITY, s, 0, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]),
                           gdn_view_tensor(c->t[2]), gdn_view_tensor(gn), gdn_view_tensor(c->t[4]),
                           gdn_view_tensor(c->t[5]), gdn_scale(s), gdn_sink_f64(o), gdn_sink_f64(f));
    CHECK(tol_report(c, "g -1 f32 ulp vs parity", "o", REF_PARITY, o, p[6]));
    CHECK(tol_report(c, "g -1 f32 ulp vs parity", "final", REF_PARITY, f, p[7]));
    tensor_free(gn);
    /* mistake: Ai rounded to bf16 between solve_tril and wy (FLA's dtype choice) */
    chain_with_bf16_ai(c, o, f);
    int o_in = tol_report(c, "Ai rounded to bf16 vs parity", "o", REF_PARITY, o, p[6]);
    int f_in = tol_report(c, "Ai rounded to bf16 vs parity", "final", REF_PARITY, f, p[7]);
    CHECK(!(o_in && f_in));
    /* the f64 recurrence is what an ideal kernel returns: far outside parity */
    double **x = gt_outs(c);
    c->op->reference(c, REF_F64, x);
    for (int64_t i = 0; i < no; i++) x[6][i] = bf16_round((float)x[6][i]);
    CHECK(!tol_report(c, "f64 recurrence (bf16 o) vs parity", "o", REF_PARITY, x[6], p[6]));
    gt_outs_free(x);
    tensor_free(qr), tensor_free(kr), tensor_free(h0r), free(o), free(f), gt_outs_free(p), op_case_free(c);
}

TEST(ref_tol_recurrent) {
    op_case *c = gt_case("recurrent", 1, "T", T_LONG, SMALL, NULL);
    double **p = parity_within_f64_tol(c);
    double **x = gt_outs(c);
    /* an exact kernel: f64 recurrence, o rounded to bf16, final to f32 */
    c->op->reference(c, REF_F64, x);
    for (int64_t i = 0; i < tensor_numel(c->t[6]); i++) x[6][i] = bf16_round((float)x[6][i]);
    for (int64_t i = 0; i < tensor_numel(c->t[7]); i++) x[7][i] = (float)x[7][i];
    CHECK(tol_report(c, "f64 rounded vs parity", "o", REF_PARITY, x[6], p[6]));
    CHECK(tol_report(c, "f64 rounded vs parity", "final", REF_PARITY, x[7], p[7]));
    /* mistake: beta dropped (beta = 1) */
    float *beta = c->t[4]->data;
    for (int64_t i = 0; i < tensor_numel(c->t[4]); i++) beta[i] = 1.0f;
    c->op->reference(c, REF_PARITY, x);
    CHECK(!tol_report(c, "beta = 1 vs parity", "o", REF_PARITY, x[6], p[6]));
    gt_outs_free(x), gt_outs_free(p), op_case_free(c);
}

TEST(ref_tol_decode) {
    op_case *c = gt_case("decode", 1, "B", (int64_t)4, NULL);
    double **p = parity_within_f64_tol(c);
    double **x = gt_outs(c);
    c->op->reference(c, REF_F64, x);
    for (int i = 6; i <= 7; i++)
        for (int64_t j = 0; j < tensor_numel(c->t[i]); j++) x[i][j] = (float)x[i][j];
    CHECK(tol_report(c, "f64 rounded to f32 vs parity", "output", REF_PARITY, x[6], p[6]));
    CHECK(tol_report(c, "f64 rounded to f32 vs parity", "state_out", REF_PARITY, x[7], p[7]));
    /* mistake: g read as a log decay (exp(g) instead of exp(-g)) */
    gdn_shape s = gdn_shape_of(c);
    s.T = 1;
    gdn_recurrence_args a = {.s = s, .q = gdn_view_tensor(c->t[0]), .k = gdn_view_tensor(c->t[1]),
                             .v = gdn_view_tensor(c->t[2]), .g = gdn_view_tensor(c->t[3]),
                             .beta = gdn_view_tensor(c->t[4]), .h0 = gdn_view_tensor(c->t[5]), .gqa_tiled = 1,
                             .g_sign = 1.0, .scale = 1.0, .o = gdn_sink_f64(x[6]), .final = gdn_sink_f64(x[7])};
    gdn_recurrence_ref(REF_PARITY, &a);
    CHECK(!tol_report(c, "exp(+g) vs parity", "state_out", REF_PARITY, x[7], p[7]));
    /* mistake: GQA mapping h / (H/Hg) instead of the tiled h % Hg */
    a.g_sign = -1.0, a.gqa_tiled = 0;
    gdn_recurrence_ref(REF_PARITY, &a);
    CHECK(!tol_report(c, "blocked GQA vs parity", "output", REF_PARITY, x[6], p[6]));
    gt_outs_free(x), gt_outs_free(p), op_case_free(c);
}
