/* test_fixture_plan.c — fixtures by shape and name (runner/fixture_bind.c): the ops'
 * symbolic shapes agree with what their setup allocates, dimensions come from the
 * tensors' shapes, contradictions and bad --map targets are refused naming both
 * sides, f32 inputs of a bf16 buffer are rounded to nearest even. */
#include <string.h>

#include "io/fixture.h"
#include "io_test_util.h"
#include "runner/fixture_bind.h"
#include "test.h"

/* Small dimensions every op accepts: the defaults shrunk where a name says so. */
static void small_dims(const op_desc *op, int64_t *dim) {
    static const struct {
        const char *name;
        int64_t v;
    } small[] = {{"B", 1}, {"T", 65}, {"Hg", 1}, {"H", 2}, {"K", 64}, {"V", 64}, {"Hq", 2}, {"Hkv", 1}, {"qL", 33},
                 {"kL", 33}, {"D", 64}, {"Hk", 1}, {"Hv", 2}, {"Dk", 32}, {"Dv", 32}, {"N", 2}};
    for (int i = 0; i < op->ndims; i++) {
        dim[i] = op->dims[i].def;
        for (size_t k = 0; k < sizeof small / sizeof small[0]; k++)
            if (strcmp(op->dims[i].name, small[k].name) == 0) dim[i] = small[k].v;
    }
}

/* An axis of a shape spec at dim[]: a size, a dimension, or a sum of products of
 * them ("2*Hk*Dk+Hv*Dv"); -1 for a name that is no dimension of op. */
static int64_t axis_value(const op_desc *op, const int64_t *dim, const char *a) {
    int64_t sum = 0;
    for (const char *q = a; *q;) {
        size_t tl = strcspn(q, "+");
        int64_t prod = 1;
        for (const char *r = q; r < q + tl;) {
            size_t fl = strcspn(r, "*+");
            char f[48];
            snprintf(f, sizeof f, "%.*s", (int)fl, r);
            int di = op_dim_index(op, f);
            if (f[0] >= '0' && f[0] <= '9') prod *= strtoll(f, NULL, 10);
            else if (di >= 0) prod *= dim[di];
            else return -1;
            r += fl + (r[fl] == '*');
        }
        sum += prod;
        q += tl + (q[tl] == '+');
    }
    return sum;
}

TEST(op_shapes_match_what_setup_allocates) {
    int described = 0;
    for (int i = 0; op_table[i]; i++) {
        const op_desc *op = op_table[i];
        if (!op->shapes) continue;
        int64_t dim[OP_MAX_DIMS] = {0};
        char err[256];
        small_dims(op, dim);
        op_case *c = op_case_new(op, dim, 1, err, sizeof err);
        CHECK_MSG(c != NULL, "%s: %s", op->name, err);
        if (!c) continue;
        described++;
        for (int b = 0; b < op->nbufs; b++) {
            const char *spec = op->shapes[b];
            if (!spec) continue;
            const tensor *t = c->t[b];
            int ax = 0;
            for (const char *q = spec; *q; ax++) {
                size_t l = strcspn(q, ",");
                char a[48];
                snprintf(a, sizeof a, "%.*s", (int)l, q);
                q += l + (q[l] == ',');
                if (ax >= t->ndim || strcmp(a, "*") == 0) continue;
                int64_t want = axis_value(op, dim, a);
                CHECK_MSG(want == t->shape[ax], "%s %s axis %d (%s): setup has %lld, shapes say %lld", op->name,
                          op->bufs[b].name, ax, a, (long long)t->shape[ax], (long long)want);
            }
            CHECK_MSG(ax == t->ndim, "%s %s: shapes has %d axes, setup %d", op->name, op->bufs[b].name, ax, t->ndim);
        }
        op_case_free(c);
    }
    CHECK(described >= 14);
}

/* A kkt fixture the way a torch user saves one: names of their own, k in f32, no
 * parameters.  Returns the opened fixture (dir receives the file). */
static fixture *torch_kkt(const char *dir, int64_t beta_T, const float *kvals, int nk) {
    tensor *ts[3] = {tensor_new("k", DT_F32, 4, (int64_t[]){1, 70, 1, 64}),
                     tensor_new("beta", DT_F32, 3, (int64_t[]){1, beta_T, 2}),
                     tensor_new("g_cum", DT_F32, 3, (int64_t[]){1, 70, 2})};
    for (int i = 0; i < nk; i++) ((float *)ts[0]->data)[i] = kvals[i];
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/kkt_T%lld.safetensors", dir, (long long)beta_T);
    CHECK_MSG(fixture_write_safetensors(path, ts, 3, err, sizeof err) == 0, "%s", err);
    for (int i = 0; i < 3; i++) tensor_free(ts[i]);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    return f;
}

TEST(fixture_dims_come_from_tensor_shapes) {
    char dir[256], err[512];
    io_test_tmpdir(dir, sizeof dir);
    const op_desc *kkt = op_find("kkt");
    fixture_map map;
    CHECK(fixture_map_parse("g_cum=g", &map, err, sizeof err) == 0);
    fixture *f = torch_kkt(dir, 70, NULL, 0);
    fixture_plan p;
    if (f) {
        CHECK_MSG(fixture_plan_make(f, kkt, &map, 1, &p, err, sizeof err) == 0, "%s", err);
        static const struct {
            const char *dim;
            int64_t v;
            const char *from;
        } want[] = {{"B", 1, "k"}, {"T", 70, "k"}, {"Hg", 1, "k"}, {"H", 2, "beta"}, {"K", 64, "k"}};
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            int di = op_dim_index(kkt, want[k].dim);
            CHECK_MSG(p.dim_source[di] == FIXDIM_TENSOR && p.dim[di] == want[k].v &&
                          strcmp(p.dim_from[di], want[k].from) == 0,
                      "%s: source %d value %lld from %s", want[k].dim, p.dim_source[di], (long long)p.dim[di],
                      p.dim_from[di]);
        }
        CHECK_EQ_INT(p.dim_source[op_dim_index(kkt, "BT")], FIXDIM_NONE); /* no A in the file */
        CHECK_EQ_INT(p.nignored, 0);
        /* without the map, g has no tensor and g_cum is listed as unbound */
        CHECK(fixture_plan_make(f, kkt, NULL, 0, &p, err, sizeof err) != 0);
        CHECK_MSG(strstr(err, "input 'g'") && strstr(err, "g_cum") && strstr(err, "--map"), "%s", err);
        fixture_map bad;
        CHECK(fixture_map_parse("g_cum=gg", &bad, err, sizeof err) == 0);
        CHECK(fixture_plan_make(f, kkt, &bad, 1, &p, err, sizeof err) != 0);
        CHECK_MSG(strstr(err, "--map g_cum=gg") && strstr(err, "no buffer 'gg'"), "%s", err);
        CHECK(fixture_map_parse("gcum=g", &bad, err, sizeof err) == 0);
        CHECK(fixture_plan_make(f, kkt, &bad, 1, &p, err, sizeof err) != 0);
        CHECK_MSG(strstr(err, "no tensor 'gcum'"), "%s", err);
        CHECK(fixture_map_parse("nobuffer", &bad, err, sizeof err) != 0);
        fixture_free(f);
    }
    /* beta says T=69 where k says 70: refused, naming both */
    f = torch_kkt(dir, 69, NULL, 0);
    if (f) {
        CHECK(fixture_plan_make(f, kkt, &map, 1, &p, err, sizeof err) != 0);
        CHECK_MSG(strstr(err, "'k'") && strstr(err, "'beta'") && strstr(err, "disagree on T (70 vs 69)"), "%s", err);
        fixture_free(f);
    }
    io_test_rmdir(dir);
}

TEST(fixture_f32_into_bf16_rounds_to_nearest_even) {
    char dir[256], err[512];
    io_test_tmpdir(dir, sizeof dir);
    /* bf16 keeps 7 fraction bits: 1 + 2^-8 is a tie that goes to even (1), 1 + 3*2^-8
     * one that goes up (1 + 2^-6); truncation would give 1 and 1 + 2^-7. */
    const float vals[] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-8f + 0x1p-20f, 3.0f};
    const uint16_t want[] = {0x3f80, 0x3f82, 0xbf82, 0x3f81, 0x4040};
    fixture *f = torch_kkt(dir, 70, vals, 5);
    const op_desc *kkt = op_find("kkt");
    fixture_map map;
    fixture_plan p;
    fixture_map_parse("g_cum=g", &map, err, sizeof err);
    int64_t dim[OP_MAX_DIMS];
    small_dims(kkt, dim);
    dim[op_dim_index(kkt, "T")] = 70;
    op_case *c = op_case_new(kkt, dim, 1, err, sizeof err);
    rec_fixture notes;
    if (f && c && fixture_plan_make(f, kkt, &map, 1, &p, err, sizeof err) == 0) {
        memset(&notes, 0, sizeof notes);
        CHECK_MSG(fixture_bind_inputs(f, &p, c, &notes, err, sizeof err) == 0, "%s", err);
        const uint16_t *k = c->t[0]->data;
        for (int i = 0; i < 5; i++) CHECK_MSG(k[i] == want[i], "k[%d] = 0x%04x, want 0x%04x", i, k[i], want[i]);
        CHECK_EQ_INT(notes.nconverted, 1);
        CHECK(strcmp(notes.converted[0].from, "f32") == 0 && strcmp(notes.converted[0].to, "bf16") == 0);
    } else {
        CHECK_MSG(0, "setup failed: %s", err);
    }
    op_case_free(c);
    fixture_free(f);
    io_test_rmdir(dir);
}
