/* test_ref_fixtures.c — the parity references against mlx-native's fixtures (FLA
 * outputs, ../shared/fixtures/mlx-native from the repo root).
 *
 * This is where the parity rounding points were checked against the real thing: each
 * stage's parity reference, fed the fixture's inputs, must land within the op's
 * parity tolerance of FLA's output (and mostly bit-exact, see the printed counts).
 * Skips with a message when the fixtures are absent. */
#include <cjson/cJSON.h>

#include "gdn_test_util.h"
#include "ops/gdn_stages.h"

static char *fx_path(const char *file) {
    const char *root = getenv("GDNBENCH_ROOT");
    char *p = NULL;
    if (asprintf(&p, "%s/../shared/fixtures/mlx-native/%s", root ? root : ".", file) < 0) return NULL;
    return p;
}

static char *fx_slurp(const char *file, long *len) {
    char *path = fx_path(file);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Loads a raw little-endian tensor file of a known dtype and shape. */
static tensor *fx_raw(const char *file, dtype dt, int ndim, const int64_t *shape) {
    long n = 0;
    char *data = fx_slurp(file, &n);
    if (!data) return NULL;
    tensor *t = tensor_new(file, dt, ndim, shape);
    if (t && (size_t)n == tensor_nbytes(t)) {
        memcpy(t->data, data, (size_t)n);
    } else {
        tensor_free(t);
        t = NULL;
    }
    free(data);
    return t;
}

/* Loads tensor `name` of section "inputs"/"outputs" of an mlx-native meta file. */
static tensor *fx_load(const char *meta, const char *section, const char *name) {
    char *text = fx_slurp(meta, NULL);
    if (!text) return NULL;
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(root, section), name);
    tensor *t = NULL;
    if (e) {
        cJSON *shape = cJSON_GetObjectItem(e, "shape");
        const char *dts = cJSON_GetStringValue(cJSON_GetObjectItem(e, "dtype"));
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(e, "file"));
        int64_t d[TENSOR_MAX_DIMS];
        int nd = cJSON_GetArraySize(shape);
        for (int i = 0; i < nd && i < TENSOR_MAX_DIMS; i++) d[i] = (int64_t)cJSON_GetArrayItem(shape, i)->valuedouble;
        dtype dt;
        if (dts && file && dtype_from_name(dts, &dt) == 0) t = fx_raw(file, dt, nd, d);
    }
    cJSON_Delete(root);
    return t;
}

static gdn_shape fx_shape(void) { return (gdn_shape){1, 128, 2, 4, 128, 128, 64, 2}; }

static void fx_require(void) {
    char *p = fx_path("gated_delta_net_kkt_meta.json");
    FILE *f = p ? fopen(p, "r") : NULL;
    free(p);
    if (!f) SKIP("mlx-native fixtures not found at ../shared/fixtures/mlx-native (repo-root relative)");
    fclose(f);
}

/* Compares the parity output (double) with the fixture tensor using the op's parity
 * tolerance for that buffer; prints the counts of bit-exact elements. */
static void fx_check(const char *opname, const char *bufname, const double *mine, const tensor *ref) {
    const op_desc *op = op_find(opname);
    const op_buf *b = NULL;
    for (int i = 0; i < op->nbufs; i++)
        if (strcmp(op->bufs[i].name, bufname) == 0) b = &op->bufs[i];
    CHECK(b != NULL && ref != NULL);
    if (!b || !ref) return;
    int64_t n = tensor_numel(ref), exact = 0;
    double *r = malloc((size_t)n * sizeof *r);
    for (int64_t i = 0; i < n; i++) {
        r[i] = tensor_get(ref, i);
        exact += (float)mine[i] == (float)r[i];
    }
    gt_err e;
    int ok = gt_passes(b, REF_PARITY, mine, r, n, &e);
    printf("  %s.%s vs FLA fixture: %lld/%lld bit-exact, max|d| %.3g, rel_l2 %.3g, worst/tol %.3g\n", opname, bufname,
           (long long)exact, (long long)n, e.max_abs, e.rel_l2, e.worst_ratio);
    CHECK_MSG(ok, "%s.%s parity reference is outside its parity tolerance of the FLA fixture", opname, bufname);
    free(r);
}

TEST(ref_fixture_kkt) {
    fx_require();
    const char *m = "gated_delta_net_kkt_meta.json";
    tensor *k = fx_load(m, "inputs", "k"), *beta = fx_load(m, "inputs", "beta"), *g = fx_load(m, "inputs", "g");
    tensor *A = fx_load(m, "outputs", "A");
    CHECK(k && beta && g && A);
    if (k && beta && g && A) {
        double *out = calloc((size_t)tensor_numel(A), sizeof(double));
        CHECK(gdn_kkt_ref(REF_PARITY, fx_shape(), gdn_view_tensor(k), gdn_view_tensor(beta), gdn_view_tensor(g),
                          gdn_sink_f64(out)) == 0);
        fx_check("kkt", "A", out, A);
        free(out);
    }
    tensor_free(k), tensor_free(beta), tensor_free(g), tensor_free(A);
}

TEST(ref_fixture_solve_tril) {
    fx_require();
    int64_t shape[4] = {4, 64, 1, 64};
    tensor *A = fx_raw("chunk_tri_solve_invert_input_a_strict.bin", DT_F32, 4, shape);
    tensor *Ai = fx_raw("chunk_tri_solve_invert_a_inv_ref.bin", DT_F32, 4, shape);
    CHECK(A && Ai);
    if (A && Ai) {
        gdn_shape s = {4, 64, 1, 1, 0, 0, 64, 1};
        double *out = calloc((size_t)tensor_numel(Ai), sizeof(double));
        CHECK(gdn_solve_tril_ref(REF_PARITY, s, gdn_view_tensor(A), gdn_sink_f64(out)) == 0);
        fx_check("solve_tril", "Ai", out, Ai);
        free(out);
    }
    tensor_free(A), tensor_free(Ai);
}

TEST(ref_fixture_wy) {
    fx_require();
    const char *m = "gated_delta_net_recompute_wu_meta.json";
    tensor *k = fx_load(m, "inputs", "k"), *v = fx_load(m, "inputs", "v"), *beta = fx_load(m, "inputs", "beta");
    tensor *g = fx_load(m, "inputs", "g"), *A = fx_load(m, "inputs", "A");
    tensor *w = fx_load(m, "outputs", "w"), *u = fx_load(m, "outputs", "u");
    CHECK(k && v && beta && g && A && w && u);
    if (k && v && beta && g && A && w && u) {
        double *ow = calloc((size_t)tensor_numel(w), sizeof(double));
        double *ou = calloc((size_t)tensor_numel(u), sizeof(double));
        CHECK(gdn_wy_ref(REF_PARITY, fx_shape(), gdn_view_tensor(k), gdn_view_tensor(v), gdn_view_tensor(beta),
                         gdn_view_tensor(g), gdn_view_tensor(A), gdn_sink_f64(ow), gdn_sink_f64(ou)) == 0);
        fx_check("wy", "w", ow, w);
        fx_check("wy", "u", ou, u);
        free(ow), free(ou);
    }
    tensor_free(k), tensor_free(v), tensor_free(beta), tensor_free(g), tensor_free(A), tensor_free(w), tensor_free(u);
}

TEST(ref_fixture_chunk_h) {
    fx_require();
    const char *m = "gated_delta_net_chunk_meta.json";
    tensor *k = fx_load(m, "inputs", "k"), *w = fx_load(m, "inputs", "w"), *u = fx_load(m, "inputs", "u");
    tensor *g = fx_load(m, "inputs", "g"), *h0 = fx_load(m, "inputs", "h0");
    tensor *h = fx_load(m, "outputs", "h"), *vn = fx_load(m, "outputs", "v_new");
    tensor *fin = fx_load(m, "outputs", "final_state");
    CHECK(k && w && u && g && h0 && h && vn && fin);
    if (k && w && u && g && h0 && h && vn && fin) {
        double *oh = calloc((size_t)tensor_numel(h), sizeof(double));
        double *ov = calloc((size_t)tensor_numel(vn), sizeof(double));
        double *of = calloc((size_t)tensor_numel(fin), sizeof(double));
        CHECK(gdn_chunk_h_ref(REF_PARITY, fx_shape(), gdn_view_tensor(k), gdn_view_tensor(w), gdn_view_tensor(u),
                              gdn_view_tensor(g), gdn_view_tensor(h0), gdn_sink_f64(oh), gdn_sink_f64(ov),
                              gdn_sink_f64(of)) == 0);
        fx_check("chunk_h", "h", oh, h);
        fx_check("chunk_h", "v_new", ov, vn);
        fx_check("chunk_h", "final", of, fin);
        free(oh), free(ov), free(of);
    }
    tensor_free(k), tensor_free(w), tensor_free(u), tensor_free(g), tensor_free(h0);
    tensor_free(h), tensor_free(vn), tensor_free(fin);
}

TEST(ref_fixture_chunk_o) {
    fx_require();
    const char *m = "gated_delta_net_chunk_o_meta.json";
    tensor *q = fx_load(m, "inputs", "q"), *k = fx_load(m, "inputs", "k"), *vn = fx_load(m, "inputs", "v_new");
    tensor *h = fx_load(m, "inputs", "h"), *g = fx_load(m, "inputs", "g"), *o = fx_load(m, "outputs", "o");
    CHECK(q && k && vn && h && g && o);
    if (q && k && vn && h && g && o) {
        gdn_shape s = fx_shape();
        double *oo = calloc((size_t)tensor_numel(o), sizeof(double));
        CHECK(gdn_chunk_o_ref(REF_PARITY, s, gdn_view_tensor(q), gdn_view_tensor(k), gdn_view_tensor(vn),
                              gdn_view_tensor(h), gdn_view_tensor(g), gdn_scale(s), gdn_sink_f64(oo)) == 0);
        fx_check("chunk_o", "o", oo, o);
        free(oo);
    }
    tensor_free(q), tensor_free(k), tensor_free(vn), tensor_free(h), tensor_free(g), tensor_free(o);
}

TEST(ref_fixture_chunk_fwd_l2norm) {
    fx_require();
    const char *m = "chunk_gated_delta_rule_fwd_meta.json";
    tensor *q = fx_load(m, "inputs", "q"), *k = fx_load(m, "inputs", "k"), *v = fx_load(m, "inputs", "v");
    tensor *g = fx_load(m, "inputs", "g_log_decay"), *beta = fx_load(m, "inputs", "beta");
    tensor *h0 = fx_load(m, "inputs", "h0"), *o = fx_load(m, "outputs", "o");
    tensor *fin = fx_load(m, "outputs", "final_state");
    CHECK(q && k && v && g && beta && h0 && o && fin);
    if (q && k && v && g && beta && h0 && o && fin) {
        gdn_shape s = fx_shape();
        double *oo = calloc((size_t)tensor_numel(o), sizeof(double));
        double *of = calloc((size_t)tensor_numel(fin), sizeof(double));
        CHECK(gdn_chunk_pipeline_ref(REF_PARITY, s, 1, gdn_view_tensor(q), gdn_view_tensor(k), gdn_view_tensor(v),
                                     gdn_view_tensor(g), gdn_view_tensor(beta), gdn_view_tensor(h0), gdn_scale(s),
                                     gdn_sink_f64(oo), gdn_sink_f64(of)) == 0);
        fx_check("chunk_fwd", "o", oo, o);
        fx_check("chunk_fwd", "final", of, fin);
        free(oo), free(of);
    }
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(g), tensor_free(beta), tensor_free(h0);
    tensor_free(o), tensor_free(fin);
}
