/* test_ref_gdn.c — the GDN CPU references and op descriptors: the chunked pipeline
 * agrees with the token recurrence, every T works (tails, prefixes), GQA maps heads
 * right, solve_tril inverts, small hand-made cases give known answers, and every op
 * descriptor is well-formed. */
#include "gdn_test_util.h"
#include "ops/gdn_stages.h"

static const char *const gdn_ops[] = {"kkt", "solve_tril", "wy", "chunk_h", "chunk_o", "chunk_fwd", "recurrent",
                                      "decode"};
#define NOPS ((int)(sizeof gdn_ops / sizeof gdn_ops[0]))

static int bidx(const op_case *c, const char *name) {
    for (int i = 0; i < c->op->nbufs; i++)
        if (strcmp(c->op->bufs[i].name, name) == 0) return i;
    return -1;
}

/* The chunk pipeline (both kinds) against the f64 recurrence. */
static void pipeline_vs_recurrence(int64_t T, int64_t Hg, int64_t H, int64_t K, int64_t V, int64_t l2) {
    op_case *c = gt_case("chunk_fwd", 7, "T", T, "Hg", Hg, "H", H, "K", K, "V", V, "l2norm", l2, NULL);
    CHECK(c != NULL);
    if (!c) return;
    gdn_shape s = gdn_shape_of(c);
    double **rec = gt_outs(c), **par = gt_outs(c);
    CHECK(c->op->reference(c, REF_F64, rec) == 0);
    CHECK(c->op->reference(c, REF_PARITY, par) == 0);
    int io = bidx(c, "o"), jf = bidx(c, "final");
    int64_t no = tensor_numel(c->t[io]), nf = tensor_numel(c->t[jf]);
    double *o64 = calloc((size_t)no, sizeof(double)), *f64 = calloc((size_t)nf, sizeof(double));
    CHECK(gdn_chunk_pipeline_ref(REF_F64, s, (int)l2, gdn_view_tensor(c->t[0]), gdn_view_tensor(c->t[1]),
                                 gdn_view_tensor(c->t[2]), gdn_view_tensor(c->t[3]), gdn_view_tensor(c->t[4]),
                                 gdn_view_tensor(c->t[5]), gdn_scale(s), gdn_sink_f64(o64), gdn_sink_f64(f64)) == 0);
    double po = gt_rel_l2(par[io], rec[io], no), pf = gt_rel_l2(par[jf], rec[jf], nf);
    double co = gt_rel_l2(o64, rec[io], no), cf = gt_rel_l2(f64, rec[jf], nf);
    printf("  T=%lld Hg=%lld H=%lld K=%lld V=%lld l2=%lld: parity chain o %.3g final %.3g; f64 chain o %.2g final "
           "%.2g\n",
           (long long)T, (long long)Hg, (long long)H, (long long)K, (long long)V, (long long)l2, po, pf, co, cf);
    CHECK(po < 5e-3 && pf < 5e-3);
    CHECK(co < 1e-10 && cf < 1e-10);
    free(o64), free(f64), gt_outs_free(rec), gt_outs_free(par), op_case_free(c);
}

TEST(ref_pipeline_matches_recurrence) {
    pipeline_vs_recurrence(1024, 2, 4, 128, 128, 0);
    pipeline_vs_recurrence(1000, 2, 4, 128, 128, 1);
    pipeline_vs_recurrence(300, 1, 4, 64, 256, 0);
    pipeline_vs_recurrence(200, 2, 2, 256, 64, 0);
}

/* Outputs that are token-major ([B=1,T,...]) or chunk-major (h) must not depend on
 * later tokens: a run at T equals the prefix of a run at a longer T (same seed, so
 * the same input prefix).  Also: nothing NaN or infinite, at every T. */
static void prefix_sweep(const char *opname, int64_t Tbig) {
    static const int64_t Ts[] = {1, 2, 63, 64, 65, 100, 129};
    op_case *big = gt_case(opname, 3, "T", Tbig, "H", (int64_t)2, "Hg", (int64_t)1, "K", (int64_t)64, "V",
                           (int64_t)64, NULL);
    CHECK(big != NULL);
    if (!big) return;
    double **ob[2] = {gt_outs(big), gt_outs(big)};
    for (int k = 0; k < 2; k++) CHECK(big->op->reference(big, (ref_kind)k, ob[k]) == 0);
    for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
        op_case *c = gt_case(opname, 3, "T", Ts[ti], "H", (int64_t)2, "Hg", (int64_t)1, "K", (int64_t)64, "V",
                             (int64_t)64, NULL);
        CHECK(c != NULL);
        if (!c) continue;
        for (int k = 0; k < 2; k++) {
            double **o = gt_outs(c);
            CHECK(c->op->reference(c, (ref_kind)k, o) == 0);
            for (int i = 0; i < c->op->nbufs; i++) {
                if (!o[i]) continue;
                int64_t n = tensor_numel(c->t[i]);
                CHECK_MSG(gt_count_nan(o[i], n) == 0, "%s T=%lld %s has non-finite values", opname,
                          (long long)Ts[ti], c->op->bufs[i].name);
                if (strcmp(c->op->bufs[i].name, "final") == 0) continue; /* depends on every token */
                int64_t diff = 0;
                for (int64_t e = 0; e < n; e++) diff += o[i][e] != ob[k][i][e];
                CHECK_MSG(diff == 0, "%s %s T=%lld: %lld elements differ from the prefix of the T=%lld run", opname,
                          c->op->bufs[i].name, (long long)Ts[ti], (long long)diff, (long long)Tbig);
            }
            gt_outs_free(o);
        }
        op_case_free(c);
    }
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < big->op->nbufs; i++)
            if (ob[k][i]) CHECK(gt_count_nan(ob[k][i], tensor_numel(big->t[i])) == 0);
        gt_outs_free(ob[k]);
    }
    op_case_free(big);
}

TEST(ref_sweep_T_kkt) { prefix_sweep("kkt", 4097); }
TEST(ref_sweep_T_solve_tril) { prefix_sweep("solve_tril", 4097); }
TEST(ref_sweep_T_wy) { prefix_sweep("wy", 4097); }
TEST(ref_sweep_T_chunk_h) { prefix_sweep("chunk_h", 4097); }
TEST(ref_sweep_T_chunk_o) { prefix_sweep("chunk_o", 4097); }
TEST(ref_sweep_T_chunk_fwd) { prefix_sweep("chunk_fwd", 4097); }
TEST(ref_sweep_T_recurrent) { prefix_sweep("recurrent", 4097); }

TEST(ref_sweep_T_pipeline_agrees_at_tails) {
    static const int64_t Ts[] = {1, 2, 63, 65, 129, 4097};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) pipeline_vs_recurrence(Ts[i], 1, 2, 64, 64, 0);
}

/* Changing key head `kh` must change exactly the value heads listed in `expect`. */
static void gqa_check(const char *opname, int64_t Hg, int64_t H, int kh, const int *expect, ref_kind kind) {
    op_case *c = gt_case(opname, 5, "T", (int64_t)100, "Hg", Hg, "H", H, "K", (int64_t)64, "V", (int64_t)64, NULL);
    CHECK(c != NULL);
    if (!c) return;
    int ik = bidx(c, "k"), io = bidx(c, "o") >= 0 ? bidx(c, "o") : bidx(c, "output");
    double **a = gt_outs(c), **b = gt_outs(c);
    CHECK(c->op->reference(c, kind, a) == 0);
    tensor *k = c->t[ik];
    int64_t K = k->shape[3], rows = tensor_numel(k) / K;
    for (int64_t r = 0; r < rows; r++)
        if (r % Hg == kh)
            for (int64_t x = 0; x < K; x++) tensor_set(k, r * K + x, tensor_get(k, r * K + ((x + 1) % K)));
    CHECK(c->op->reference(c, kind, b) == 0);
    tensor *o = c->t[io];
    int64_t V = o->shape[3], ntok = tensor_numel(o) / (H * V);
    for (int64_t h = 0; h < H; h++) {
        int64_t changed = 0;
        for (int64_t t = 0; t < ntok; t++)
            for (int64_t x = 0; x < V; x++) changed += a[io][(t * H + h) * V + x] != b[io][(t * H + h) * V + x];
        CHECK_MSG((changed > 0) == (expect[h] != 0), "%s Hg=%lld H=%lld: key head %d %s value head %lld", opname,
                  (long long)Hg, (long long)H, kh, changed ? "changed" : "did not change", (long long)h);
    }
    gt_outs_free(a), gt_outs_free(b), op_case_free(c);
}

TEST(ref_gqa_head_mapping) {
    static const int two[4] = {0, 0, 1, 1}, four[8] = {0, 0, 0, 0, 1, 1, 1, 1}, tiled[4] = {0, 1, 0, 1};
    for (int k = 0; k < 2; k++) {
        gqa_check("chunk_fwd", 2, 4, 1, two, (ref_kind)k);
        gqa_check("chunk_fwd", 2, 8, 1, four, (ref_kind)k);
        gqa_check("recurrent", 2, 4, 1, two, (ref_kind)k);
        gqa_check("chunk_o", 2, 8, 1, four, (ref_kind)k);
        gqa_check("decode", 2, 4, 1, tiled, (ref_kind)k); /* mlx-native decode: key head = h % Hg */
    }
}

TEST(ref_solve_tril_inverts) {
    op_case *c = gt_case("solve_tril", 2, "T", (int64_t)200, "H", (int64_t)2, "Hg", (int64_t)1, NULL);
    CHECK(c != NULL);
    if (!c) return;
    gdn_shape s = gdn_shape_of(c);
    for (int k = 0; k < 2; k++) {
        double **o = gt_outs(c);
        CHECK(c->op->reference(c, (ref_kind)k, o) == 0);
        double worst = 0;
        for (int64_t h = 0; h < s.H; h++)
            for (int64_t t0 = 0; t0 < s.T; t0 += s.BT) {
                int64_t n = s.T - t0 < s.BT ? s.T - t0 : s.BT;
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < n; j++) {
                        /* ((I + A) Ai)[i][j] = Ai[i][j] + sum_m A[i][m] Ai[m][j] */
                        double acc = o[1][((t0 + i) * s.H + h) * s.BT + j];
                        for (int64_t m = 0; m < n; m++)
                            acc += tensor_get(c->t[0], ((t0 + i) * s.H + h) * s.BT + m) *
                                   o[1][((t0 + m) * s.H + h) * s.BT + j];
                        double d = fabs(acc - (i == j));
                        if (d > worst) worst = d;
                    }
            }
        printf("  kind %d: max |(I+A)Ai - I| = %.3g\n", k, worst);
        CHECK(worst < (k == REF_F64 ? 1e-12 : 1e-5));
        gt_outs_free(o);
    }
    op_case_free(c);
}

/* Hand-made cases with answers worked out on paper. */
static tensor *mk(const char *name, dtype dt, int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t sh[4] = {a, b, c, d};
    return tensor_new(name, dt, nd, sh);
}

TEST(ref_hand_kkt_and_solve) {
    /* T=3, one head, K=64: k0 = e0, k1 = (e0+e1)/sqrt2 (not bf16-exact: use e0+e1
     * scaled by 0.5 -> exact), k2 = e1; beta = 0.5; gc = -0.1, -0.3, -0.6. */
    gdn_shape s = {1, 3, 1, 1, 64, 64, 64, 1};
    tensor *k = mk("k", DT_BF16, 4, 1, 3, 1, 64), *beta = mk("beta", DT_F32, 3, 1, 3, 1, 0);
    tensor *gc = mk("g", DT_F32, 3, 1, 3, 1, 0);
    tensor_set(k, 0, 1.0), tensor_set(k, 64, 0.5), tensor_set(k, 65, 0.5), tensor_set(k, 128 + 1, 1.0);
    for (int i = 0; i < 3; i++) tensor_set(beta, i, 0.5);
    tensor_set(gc, 0, -0.1), tensor_set(gc, 1, -0.3), tensor_set(gc, 2, -0.6);
    double A[3 * 64], Ai[3 * 64];
    for (int kind = 0; kind < 2; kind++) {
        memset(A, 0, sizeof A);
        CHECK(gdn_kkt_ref((ref_kind)kind, s, gdn_view_tensor(k), gdn_view_tensor(beta), gdn_view_tensor(gc),
                          gdn_sink_f64(A)) == 0);
        double a10 = 0.5 * 0.5 * exp(-0.2), a20 = 0.0, a21 = 0.5 * 0.5 * exp(-0.3);
        CHECK_NEAR(A[64 + 0], a10, 1e-6);
        CHECK_NEAR(A[128 + 0], a20, 1e-12);
        CHECK_NEAR(A[128 + 1], a21, 1e-6);
        CHECK_NEAR(A[0], 0, 0);
        CHECK_NEAR(A[65], 0, 0);
        CHECK_NEAR(A[1], 0, 0);
        /* (I + A)^-1 for the 3x3 unit lower [[1],[a,1],[0,b,1]] is [[1],[-a,1],[ab,-b,1]] */
        CHECK(gdn_solve_tril_ref((ref_kind)kind, s, gdn_view_f64(A), gdn_sink_f64(Ai)) == 0);
        CHECK_NEAR(Ai[0], 1, 0);
        CHECK_NEAR(Ai[65], 1, 0);
        CHECK_NEAR(Ai[130], 1, 0);
        CHECK_NEAR(Ai[64], -a10, 1e-6);
        CHECK_NEAR(Ai[129], -a21, 1e-6);
        CHECK_NEAR(Ai[128], a10 * a21, 1e-6);
        CHECK_NEAR(Ai[1], 0, 0);
        CHECK_NEAR(Ai[2], 0, 0);
    }
    tensor_free(k), tensor_free(beta), tensor_free(gc);
}

TEST(ref_hand_recurrence_two_tokens) {
    /* One head, K=V=64, h0 = 0.  Token 0: k0 = e0, v0 = 2 e3, beta 0.5, g = log 0.5,
     * q0 = e0.  S1 = 0.5 * v0 e0^T = e3 e0^T, o0 = scale * S1 q0 = scale * e3.
     * Token 1: k1 = e0, v1 = 0, beta 1, g = log 0.5, q1 = e0 + e1 -> S decays to
     * 0.5 e3 e0^T, S k1 = 0.5 e3, delta = -0.5 e3, S2 = 0, o1 = 0. */
    gdn_shape s = {1, 2, 1, 1, 64, 64, 64, 1};
    tensor *q = mk("q", DT_BF16, 4, 1, 2, 1, 64), *k = mk("k", DT_BF16, 4, 1, 2, 1, 64);
    tensor *v = mk("v", DT_BF16, 4, 1, 2, 1, 64), *g = mk("g", DT_F32, 3, 1, 2, 1, 0);
    tensor *beta = mk("beta", DT_F32, 3, 1, 2, 1, 0), *h0 = mk("h0", DT_F32, 4, 1, 1, 64, 64);
    tensor_set(k, 0, 1), tensor_set(k, 64, 1), tensor_set(v, 3, 2), tensor_set(q, 0, 1);
    tensor_set(q, 64, 1), tensor_set(q, 65, 1);
    tensor_set(g, 0, log(0.5)), tensor_set(g, 1, log(0.5)), tensor_set(beta, 0, 0.5), tensor_set(beta, 1, 1);
    double o[2 * 64], fin[64 * 64], scale = 0.125;
    for (int kind = 0; kind < 2; kind++) {
        gdn_recurrence_args a = {.s = s, .q = gdn_view_tensor(q), .k = gdn_view_tensor(k), .v = gdn_view_tensor(v),
                                 .g = gdn_view_tensor(g), .beta = gdn_view_tensor(beta), .h0 = gdn_view_tensor(h0),
                                 .g_sign = 1, .scale = scale, .o_bf16 = 1, .o = gdn_sink_f64(o),
                                 .final = gdn_sink_f64(fin)};
        CHECK(gdn_recurrence_ref((ref_kind)kind, &a) == 0);
        for (int x = 0; x < 64; x++) {
            CHECK_NEAR(o[x], x == 3 ? scale : 0.0, 1e-7);
            CHECK_NEAR(o[64 + x], 0.0, 1e-7);
        }
        double mx = 0;
        for (int x = 0; x < 64 * 64; x++) mx = fmax(mx, fabs(fin[x]));
        CHECK_NEAR(mx, 0.0, 1e-7);
        /* the chunk pipeline gives the same */
        double o2[2 * 64], f2[64 * 64];
        CHECK(gdn_chunk_pipeline_ref((ref_kind)kind, s, 0, gdn_view_tensor(q), gdn_view_tensor(k), gdn_view_tensor(v),
                                     gdn_view_tensor(g), gdn_view_tensor(beta), gdn_view_tensor(h0), scale,
                                     gdn_sink_f64(o2), gdn_sink_f64(f2)) == 0);
        for (int x = 0; x < 128; x++) CHECK_NEAR(o2[x], o[x], 1e-6);
    }
    tensor_free(q), tensor_free(k), tensor_free(v), tensor_free(g), tensor_free(beta), tensor_free(h0);
}

TEST(ref_hand_decode_step) {
    /* state_in = 0.5 e1 e0^T (row 1, column 0), g = log 2 (alpha = 0.5), beta 0.25,
     * k = e0, v = e1 * 3, q = e0:  S = 0.25 e1 e0^T; S k = 0.25 e1;
     * delta = 0.25 (3 - 0.25) e1 = 0.6875 e1; S' = 0.9375 e1 e0^T; y = 0.9375 e1. */
    op_case *c = gt_case("decode", 1, "Hg", (int64_t)1, "H", (int64_t)1, "K", (int64_t)64, "V", (int64_t)64, NULL);
    CHECK(c != NULL);
    if (!c) return;
    for (int i = 0; i < 6; i++) memset(c->t[i]->data, 0, tensor_nbytes(c->t[i]));
    tensor_set(c->t[0], 0, 1), tensor_set(c->t[1], 0, 1), tensor_set(c->t[2], 1, 3);
    tensor_set(c->t[3], 0, log(2.0)), tensor_set(c->t[4], 0, 0.25), tensor_set(c->t[5], 64, 0.5);
    for (int kind = 0; kind < 2; kind++) {
        double **o = gt_outs(c);
        CHECK(c->op->reference(c, (ref_kind)kind, o) == 0);
        for (int x = 0; x < 64; x++) CHECK_NEAR(o[6][x], x == 1 ? 0.9375 : 0.0, 1e-6);
        CHECK_NEAR(o[7][64], 0.9375, 1e-6);
        CHECK_NEAR(o[7][0], 0.0, 0);
        gt_outs_free(o);
    }
    op_case_free(c);
}

TEST(ref_op_descriptors) {
    for (int i = 0; i < NOPS; i++) {
        const op_desc *op = op_find(gdn_ops[i]);
        CHECK_MSG(op != NULL, "op %s is not registered", gdn_ops[i]);
        if (!op) continue;
        CHECK(op->nbufs <= OP_MAX_BUFS && op->ndims <= OP_MAX_DIMS);
        int64_t dim[OP_MAX_DIMS];
        for (int d = 0; d < op->ndims; d++) dim[d] = op->dims[d].def;
        char err[256] = "";
        CHECK_MSG(op->validate(dim, err, sizeof err) == 0, "%s defaults rejected: %s", op->name, err);
        CHECK(op->bytes(dim) > 0 && op->flops(dim) > 0);
        /* bad shapes are rejected with a message naming the flag */
        int iH = op_dim_index(op, "H"), iK = op_dim_index(op, "K"), iBT = op_dim_index(op, "BT");
        if (iH >= 0 && op_dim_index(op, "Hg") >= 0) {
            int64_t bad[OP_MAX_DIMS];
            memcpy(bad, dim, sizeof bad);
            bad[iH] = dim[op_dim_index(op, "Hg")] + 1;
            CHECK(op->validate(bad, err, sizeof err) != 0 && strstr(err, "--H") != NULL);
        }
        if (iK >= 0) {
            int64_t bad[OP_MAX_DIMS];
            memcpy(bad, dim, sizeof bad);
            bad[iK] = 96;
            CHECK(op->validate(bad, err, sizeof err) != 0 && strstr(err, "--K") != NULL);
        }
        if (iBT >= 0) {
            int64_t bad[OP_MAX_DIMS];
            memcpy(bad, dim, sizeof bad);
            bad[iBT] = 32;
            CHECK(op->validate(bad, err, sizeof err) != 0 && strstr(err, "--BT") != NULL);
        }
        /* a small case: launches bind real buffers with the ABI roles */
        op_case *c = gt_case(op->name, 1, "T", (int64_t)130, "H", (int64_t)4, "Hg", (int64_t)2, NULL);
        CHECK(c != NULL);
        if (!c) continue;
        int ns = op->nstages(c);
        CHECK(ns >= 1 && ns <= OP_MAX_STAGES);
        for (int st = 0; st < ns; st++) {
            op_launch l;
            CHECK(op->launch(c, st, &l) == 0);
            CHECK(l.shader && strncmp(l.shader, "shaders/gdn_", 12) == 0 && l.function && l.stage);
            CHECK(l.nbinds > 0 && l.nbinds <= OP_MAX_BINDS && l.nparams > 0 && l.params_index == l.nbinds);
            for (int b = 0; b < l.nbinds; b++) {
                CHECK(l.binds[b].index == b && l.binds[b].buf >= 0 && l.binds[b].buf < op->nbufs);
            }
            CHECK(l.grid[0] >= 1 && l.grid[1] >= 1 && l.grid[2] >= 1 && l.tg[0] >= 1);
            CHECK((uint64_t)l.tg[0] * l.tg[1] * l.tg[2] <= 1024);
        }
        op_launch extra;
        CHECK(op->launch(c, ns, &extra) != 0 || ns == 1);
        /* outputs are written by references; inputs are realistic (not all zero) */
        for (int b = 0; b < op->nbufs; b++) {
            if (op->bufs[b].role != BUF_IN) continue;
            double ss = 0;
            for (int64_t e = 0; e < tensor_numel(c->t[b]); e++) ss += fabs(tensor_get(c->t[b], e));
            CHECK_MSG(ss > 0, "%s input %s is all zero", op->name, op->bufs[b].name);
        }
        op_case_free(c);
    }
}

TEST(ref_chunk_fwd_launch_stages) {
    for (int64_t l2 = 0; l2 <= 1; l2++) {
        op_case *c = gt_case("chunk_fwd", 1, "T", (int64_t)100, "H", (int64_t)4, "Hg", (int64_t)2, "l2norm", l2, NULL);
        CHECK(c != NULL);
        if (!c) continue;
        static const char *const stages[] = {"l2norm", "cumsum", "kkt", "solve_tril", "wy", "chunk_h", "chunk_o"};
        CHECK_EQ_INT(c->op->nstages(c), 6 + l2);
        for (int st = 0; st < 6 + l2; st++) {
            op_launch l;
            CHECK(c->op->launch(c, st, &l) == 0);
            CHECK(strcmp(l.stage, stages[st + 1 - l2]) == 0);
            /* later stages read the normalised q/k scratch when l2norm is on */
            if (strcmp(l.stage, "kkt") == 0) CHECK_EQ_INT(l.binds[0].buf, bidx(c, l2 ? "k_l2" : "k"));
            if (strcmp(l.stage, "chunk_o") == 0) CHECK_EQ_INT(l.binds[0].buf, bidx(c, l2 ? "q_l2" : "q"));
        }
        op_case_free(c);
    }
}
