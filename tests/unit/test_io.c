/* test_io.c — fixture I/O: round trips for every dtype and format, the real mlx-native
 * fixtures, op-buffer name matching, and one test per kind of corrupt input (each
 * must fail with a one-line message naming the file and the tensor). */
#include <math.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "io/fixture.h"
#include "io/mlxfix.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "io_test_util.h"
#include "test.h"

static const dtype all_dtypes[] = {DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32, DT_U32};
#define NDTYPES 6

/* One tensor per dtype plus a scalar and an empty one. */
static int make_tensor_zoo(tensor **ts) {
    static const int64_t shapes[NDTYPES][3] = {{2, 3, 5}, {1, 7, 4}, {3, 3, 1}, {4, 2, 2}, {5, 1, 3}, {2, 2, 2}};
    int n = 0;
    for (int i = 0; i < NDTYPES; i++) {
        char name[32];
        snprintf(name, sizeof name, "t_%s", dtype_name(all_dtypes[i]));
        ts[n++] = io_test_tensor(name, all_dtypes[i], 3, shapes[i], 42);
    }
    ts[n++] = io_test_tensor("scalar", DT_F32, 0, NULL, 7);
    ts[n++] = io_test_tensor("empty", DT_BF16, 2, (int64_t[]){0, 5}, 7);
    return n;
}

static void free_all(tensor **ts, int n) {
    for (int i = 0; i < n; i++) tensor_free(ts[i]);
}

/* The error is one line, mentions every needle. */
static void check_message(const char *err, const char *needle1, const char *needle2) {
    CHECK_MSG(err[0] != 0, "empty error message");
    CHECK_MSG(strchr(err, '\n') == NULL, "multi-line message: %s", err);
    CHECK_MSG(!needle1 || strstr(err, needle1), "'%s' not in: %s", needle1, err);
    CHECK_MSG(!needle2 || strstr(err, needle2), "'%s' not in: %s", needle2, err);
}

TEST(io_safetensors_round_trip_every_dtype) {
    tensor *ts[16];
    int n = make_tensor_zoo(ts);
    io_meta meta[2] = {{"T", "128"}, {"note", "quote \" backslash \\ newline \n end"}};
    uint8_t *buf;
    size_t len;
    char err[512];
    CHECK(safetensors_serialize(ts, n, meta, 2, &buf, &len, err, sizeof err) == 0);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    CHECK_EQ_INT((8 + hlen) % 8, 0);
    io_set set = {0};
    CHECK_MSG(safetensors_parse_mem(buf, len, "mem.safetensors", &set, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(set.n, n);
    for (int i = 0; i < n && i < set.n; i++) CHECK_MSG(io_test_same(ts[i], set.e[i].t), "tensor %d differs", i);
    CHECK(set.nmeta == 2 && strcmp(io_set_meta(&set, "note"), meta[1].value) == 0);
    io_set_clear(&set);
    free(buf);

    char dir[256], path[512];
    io_test_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/zoo.safetensors", dir);
    CHECK(fixture_write_safetensors_meta(path, ts, n, meta, 2, err, sizeof err) == 0);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        CHECK(strcmp(fixture_format(f), "safetensors") == 0);
        CHECK_EQ_INT(fixture_count(f), n);
        for (int i = 0; i < n; i++) CHECK(io_test_same(ts[i], fixture_get(f, ts[i]->name)));
        int64_t T = 0;
        CHECK(fixture_param(f, "T", &T) == 0 && T == 128);
        CHECK(fixture_param(f, "note", &T) != 0);
        fixture_free(f);
    }
    /* a directory holding exactly one safetensors file opens it */
    f = fixture_open(dir, err, sizeof err);
    CHECK_MSG(f && fixture_count(f) == n, "%s", err);
    fixture_free(f);
    io_test_rmdir(dir);
    free_all(ts, n);
}

TEST(io_npy_round_trip_every_dtype) {
    tensor *ts[16];
    int n = make_tensor_zoo(ts);
    char err[512], dir[256], path[512];
    for (int i = 0; i < n; i++) {
        uint8_t *buf;
        size_t len;
        CHECK(npy_serialize(ts[i], &buf, &len, err, sizeof err) == 0);
        uint16_t hl = (uint16_t)(buf[8] | buf[9] << 8);
        CHECK_EQ_INT((10 + hl) % 64, 0);
        CHECK(buf[10 + hl - 1] == '\n');
        tensor *t = NULL;
        CHECK_MSG(npy_parse_mem(buf, len, "mem.npy", ts[i]->name, &t, err, sizeof err) == 0, "%s", err);
        CHECK(io_test_same(ts[i], t));
        tensor_free(t);
        free(buf);
    }
    io_test_tmpdir(dir, sizeof dir);
    CHECK(fixture_write_npy_dir(dir, ts, n, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/t_bf16.npy", dir);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f && fixture_count(f) == 1 && io_test_same(ts[1], fixture_at(f, 0)), "%s", err);
    fixture_free(f);
    f = fixture_open(dir, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        CHECK(strcmp(fixture_format(f), "npy-dir") == 0);
        CHECK_EQ_INT(fixture_count(f), n);
        for (int i = 0; i < n; i++) CHECK_MSG(io_test_same(ts[i], fixture_get(f, ts[i]->name)), "%s", ts[i]->name);
        fixture_free(f);
    }
    io_test_rmdir(dir);
    free_all(ts, n);
}

/* Headers as other writers produce them: v2/v3, double quotes, other key order,
 * no trailing comma, '|V2' for bf16. */
static int parse_npy_text(int major, const char *dict, size_t nbytes, tensor **out, char *err, size_t errlen) {
    uint8_t buf[512];
    size_t dl = strlen(dict), pre = major == 1 ? 10 : 12;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) buf[8 + i] = (uint8_t)(dl >> (8 * i));
    memcpy(buf + pre, dict, dl);
    memset(buf + pre + dl, 0x3c, nbytes); /* any bytes: 0x3c3c is a finite half/bf16 */
    return npy_parse_mem(buf, pre + dl + nbytes, "hand.npy", "x", out, err, errlen);
}

TEST(io_npy_header_variants) {
    char err[512];
    tensor *t = NULL;
    CHECK_MSG(parse_npy_text(2, "{\"shape\": (3, 2), \"fortran_order\": False, \"descr\": \"<f4\"}\n", 24, &t, err,
                             sizeof err) == 0, "%s", err);
    CHECK(t && t->dtype == DT_F32 && t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 2);
    tensor_free(t);
    t = NULL;
    CHECK_MSG(parse_npy_text(3, "{'descr': '|V2', 'fortran_order': False, 'shape': (5,), }  \n", 10, &t, err,
                             sizeof err) == 0, "%s", err);
    CHECK(t && t->dtype == DT_BF16 && t->ndim == 1 && t->shape[0] == 5);
    tensor_free(t);
    t = NULL;
    CHECK_MSG(parse_npy_text(1, "{'descr':'<f2','fortran_order':False,'shape':()}", 2, &t, err, sizeof err) == 0,
              "%s", err);
    CHECK(t && t->dtype == DT_F16 && t->ndim == 0);
    tensor_free(t);
}

TEST(io_npy_rejects_unsupported_headers) {
    static const struct {
        const char *dict, *needle;
        size_t nbytes;
    } bad[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "big-endian", 8},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (2,), }", "'=f4'", 8},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", "'<i8'", 16},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", "Fortran", 16},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", "structured", 8},
        {"{'descr': '<f4', 'shape': (2,), }", "'fortran_order'", 8},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "extra", 8},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1), }", "dims", 4},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "shape", 8},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "shape", 8},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "needs 8 data bytes but the file has 7", 7},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "trailing", 9},
        {"['descr', '<f4']", "dict", 8},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[512] = "";
        tensor *t = NULL;
        CHECK_MSG(parse_npy_text(1, bad[i].dict, bad[i].nbytes, &t, err, sizeof err) != 0, "accepted %s", bad[i].dict);
        CHECK(t == NULL);
        check_message(err, "hand.npy", "tensor 'x'");
        check_message(err, bad[i].needle, NULL);
    }
    uint8_t junk[32] = "\x93NUMPY\x04\x00";
    char err[256];
    tensor *t = NULL;
    CHECK(npy_parse_mem(junk, sizeof junk, "v4.npy", "x", &t, err, sizeof err) != 0 && t == NULL);
    check_message(err, "v4.npy", "version 4.0");
    CHECK(npy_parse_mem("PK\x03\x04", 4, "zip.npy", "x", &t, err, sizeof err) != 0 && t == NULL);
    check_message(err, "zip.npy", "magic");
}

/* --- corrupt safetensors, built by hand around one header --- */
static int parse_st(const char *header, size_t data_len, uint64_t hlen_override, io_set *set, char *err, size_t errlen) {
    size_t hl = strlen(header);
    uint8_t *buf = calloc(1, 8 + hl + data_len + 1);
    uint64_t hlen = hlen_override ? hlen_override : hl;
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(hlen >> (8 * i));
    memcpy(buf + 8, header, hl);
    int rc = safetensors_parse_mem(buf, 8 + hl + data_len, "bad.safetensors", set, err, errlen);
    free(buf);
    return rc;
}

TEST(io_safetensors_corrupt_inputs) {
    static const struct {
        const char *header;
        size_t data_len;
        uint64_t hlen;
        const char *needle1, *needle2;
    } bad[] = {
        /* truncated data: offsets run past the end */
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12, 0, "tensor 'k'", "truncated"},
        /* header length beyond the file */
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 1000000, "header length", "truncated"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, UINT64_MAX, "header length", NULL},
        /* overlapping tensors */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         12, 0, "tensor 'b'", "overlap tensor 'a'"},
        /* unsupported / wrong dtype strings */
        {"{\"k\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, 0, "tensor 'k'", "dtype I64"},
        {"{\"k\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0, "tensor 'k'", "dtype f32"},
        /* shape x dtype size != byte count */
        {"{\"k\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, 0, "tensor 'k'", "needs 6 bytes"},
        /* begin > end, negative, fractional, missing fields */
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}", 8, 0, "tensor 'k'", "data_offsets"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, 0, "tensor 'k'", "shape entry 0"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, 0, "tensor 'k'", "shape entry 0"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, 0, "tensor 'k'", "data_offsets"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, 0, "tensor 'k'", "7 dims"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, 0, "tensor 'k'",
         "too large"},
        /* duplicate name, bad metadata, malformed JSON, trailing garbage */
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         8, 0, "tensor 'k'", "twice"},
        {"{\"__metadata__\":{\"T\":128},\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, 0,
         "__metadata__", "'T'"},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4, 0, "malformed", NULL},
        {"{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}xx", 4, 0, "unexpected bytes", NULL},
        {"[1,2]", 0, 0, "not an object", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[512] = "";
        io_set set = {0};
        CHECK_MSG(parse_st(bad[i].header, bad[i].data_len, bad[i].hlen, &set, err, sizeof err) != 0,
                  "case %zu accepted", i);
        CHECK_MSG(set.n == 0 && set.nmeta == 0, "case %zu left tensors behind", i);
        check_message(err, "bad.safetensors", bad[i].needle1);
        check_message(err, bad[i].needle2, NULL);
        io_set_clear(&set);
    }
    char err[256];
    io_set set = {0};
    CHECK(safetensors_parse_mem("\x10\0\0", 3, "short.safetensors", &set, err, sizeof err) != 0);
    check_message(err, "short.safetensors", "too short");
}

/* Files on disk through fixture_open: the message names the path and the tensor. */
TEST(io_fixture_open_corrupt_files) {
    char dir[256], path[512], err[512];
    io_test_tmpdir(dir, sizeof dir);
    tensor *ts[2] = {io_test_tensor("q", DT_BF16, 2, (int64_t[]){4, 8}, 1),
                     io_test_tensor("beta", DT_F32, 1, (int64_t[]){4}, 1)};
    uint8_t *buf;
    size_t len;
    CHECK(safetensors_serialize(ts, 2, NULL, 0, &buf, &len, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/cut.safetensors", dir);
    io_test_write(path, buf, len - 3); /* truncated in the last tensor */
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "cut.safetensors", "tensor 'beta'");
    free(buf);

    CHECK(npy_serialize(ts[0], &buf, &len, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/q.npy", dir);
    io_test_write(path, buf, len - 1);
    f = fixture_open(path, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "q.npy", "tensor 'q'");
    check_message(err, "truncated", NULL);
    /* the npy directory fails as a whole when one file is bad */
    f = fixture_open(dir, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "q.npy", "tensor 'q'");
    free(buf);

    snprintf(path, sizeof path, "%s/nothing-here", dir);
    f = fixture_open(path, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "nothing-here", "no such file");
    snprintf(path, sizeof path, "%s/garbage.bin", dir);
    io_test_write(path, "hello world", 11);
    f = fixture_open(path, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "garbage.bin", "not a fixture");
    io_test_rmdir(dir);
    tensor_free(ts[0]);
    tensor_free(ts[1]);
}

TEST(io_nan_reported_only_when_asked) {
    char dir[256], path[512], err[512];
    io_test_tmpdir(dir, sizeof dir);
    tensor *t = io_test_tensor("o", DT_BF16, 2, (int64_t[]){3, 4}, 5);
    tensor_set(t, 6, NAN);
    tensor_set(t, 9, INFINITY);
    snprintf(path, sizeof path, "%s/nan.safetensors", dir);
    CHECK(fixture_write_safetensors(path, &t, 1, err, sizeof err) == 0);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err); /* loading succeeds: NaN is data, not corruption */
    if (f) {
        CHECK(fixture_check_all_finite(f, err, sizeof err) != 0);
        check_message(err, "nan.safetensors", "tensor 'o'");
        check_message(err, "2 of 12", "first at [1,2]");
        fixture_free(f);
    }
    tensor *ok = io_test_tensor("k", DT_F32, 1, (int64_t[]){5}, 5);
    CHECK(fixture_check_finite(ok, NULL, err, sizeof err) == 0);
    tensor_free(ok);
    tensor_free(t);
    io_test_rmdir(dir);
}

/* --- mlx-native sets: the real ones, and corrupt copies made in a temp dir --- */
static int mlx_dir(char *buf, size_t n) {
    const char *root = getenv("GDNBENCH_ROOT");
    snprintf(buf, n, "%s/../shared/fixtures/mlx-native", root ? root : ".");
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* Independently of the loader: every "file" of the meta.json tables (or, for an
 * untabled set, every PREFIX_input_* / PREFIX_*_ref file) has the byte count of the
 * tensor loaded from it. */
static void check_bin_sizes(const char *dir, const char *prefix, const fixture *f) {
    char path[1024], err[256], *json;
    size_t len;
    snprintf(path, sizeof path, "%s/%s_meta.json", dir, prefix);
    CHECK(io_read_small_file(path, 1 << 20, &json, &len, err, sizeof err) == 0);
    cJSON *root = cJSON_Parse(json);
    free(json);
    CHECK(root != NULL);
    int checked = 0;
    const char *tables[2] = {"inputs", "outputs"};
    for (int r = 0; r < 2; r++) {
        const cJSON *tab = cJSON_GetObjectItem(root, tables[r]);
        for (const cJSON *e = tab ? tab->child : NULL; e; e = e->next) {
            const tensor *t = fixture_get(f, e->string);
            const cJSON *ins = cJSON_GetObjectItem(root, "inputs");
            if (r == 1 && ins && cJSON_GetObjectItem(ins, e->string)) { /* an output named like an input */
                char ref[64];
                snprintf(ref, sizeof ref, "%s_ref", e->string);
                t = fixture_get(f, ref);
            }
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", dir, cJSON_GetObjectItem(e, "file")->valuestring);
            CHECK_MSG(t && stat(path, &st) == 0 && (size_t)st.st_size == tensor_nbytes(t), "%s: %s", prefix, e->string);
            checked++;
        }
    }
    if (!checked)
        for (int j = 0; j < fixture_count(f); j++) {
            const tensor *t = fixture_at(f, j);
            struct stat st;
            if (fixture_role_at(f, j) == IO_ROLE_INPUT)
                snprintf(path, sizeof path, "%s/%s_input_%s.bin", dir, prefix, t->name);
            else
                snprintf(path, sizeof path, "%s/%s_%s_ref.bin", dir, prefix, t->name);
            CHECK_MSG(stat(path, &st) == 0 && (size_t)st.st_size == tensor_nbytes(t), "%s: %s", prefix, t->name);
            checked++;
        }
    CHECK_MSG(checked == fixture_count(f), "%s: %d files for %d tensors", prefix, checked, fixture_count(f));
    cJSON_Delete(root);
}

TEST(io_mlx_native_real_fixtures_load) {
    char dir[512], err[512];
    if (mlx_dir(dir, sizeof dir) != 0) SKIP("mlx-native fixtures not found at %s", dir);
    char **sets;
    int n;
    CHECK(mlxfix_list_sets(dir, &sets, &n, err, sizeof err) == 0);
    CHECK_MSG(n >= 6, "only %d sets", n);
    int tensors = 0;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_meta.json", dir, sets[i]);
        fixture *f = fixture_open(path, err, sizeof err);
        CHECK_MSG(f != NULL, "%s", err);
        if (!f) continue;
        CHECK(strcmp(fixture_format(f), "mlx-native") == 0);
        int64_t B = 0, T = 0;
        CHECK_MSG(fixture_param(f, "B", &B) == 0 && B >= 1, "%s: B", sets[i]);
        CHECK_MSG(fixture_param(f, "T", &T) == 0 && T >= 1, "%s: T", sets[i]);
        for (int j = 0; j < fixture_count(f); j++) {
            const tensor *t = fixture_at(f, j);
            CHECK(fixture_role_at(f, j) != IO_ROLE_UNKNOWN);
            CHECK(t->ndim >= 1 && tensor_numel(t) >= 1);
            tensors++;
        }
        check_bin_sizes(dir, sets[i], f);
        CHECK_MSG(fixture_check_all_finite(f, err, sizeof err) == 0, "%s", err);
        fixture_free(f);
    }
    io_free_names(sets, n);
    CHECK(tensors >= 30);
}

TEST(io_mlx_native_real_fixture_details) {
    char dir[512], path[1024], err[512];
    if (mlx_dir(dir, sizeof dir) != 0) SKIP("mlx-native fixtures not found at %s", dir);
    /* DIR/PREFIX without the _meta.json suffix */
    snprintf(path, sizeof path, "%s/gated_delta_net_kkt", dir);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        const tensor *A = fixture_get(f, "A");
        CHECK(A && A->dtype == DT_F32 && A->ndim == 4 && A->shape[0] == 1 && A->shape[1] == 128 && A->shape[2] == 4 &&
              A->shape[3] == 64);
        const tensor *k = fixture_get(f, "k");
        CHECK(k && k->dtype == DT_BF16 && k->shape[2] == 2 && k->shape[3] == 128);
        double atol = -1, rtol = -1;
        CHECK_EQ_INT(fixture_tolerance(f, "A", &atol, &rtol), 3);
        CHECK_NEAR(atol, 0.005, 1e-12);
        CHECK_NEAR(rtol, 0.02, 1e-12);
        int64_t seed = 0, K = 0;
        CHECK(fixture_param(f, "seed", &seed) == 0 && seed == 12648430);
        CHECK(fixture_param(f, "K", &K) == 0 && K == 128);
        /* strict lower triangle: A[b, t, h, j] == 0 for j >= t % 64 */
        int zeros = 1;
        for (int64_t t = 0; t < 128; t++)
            for (int64_t j = t % 64; j < 64; j++) zeros &= tensor_get(A, (t * 4 + 0) * 64 + j) == 0.0;
        CHECK(zeros);
        fixture_free(f);
    }
    snprintf(path, sizeof path, "%s/gated_delta_net_chunk_meta.json", dir);
    f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        double atol = -1, rtol = -1;
        CHECK_EQ_INT(fixture_tolerance(f, "final_state", &atol, &rtol), 3); /* keys are final_atol/final_rtol */
        CHECK_NEAR(atol, 0.005, 1e-12);
        const tensor *h = fixture_get(f, "h");
        CHECK(h && h->ndim == 5 && h->shape[1] == 2);
        CHECK(fixture_get(f, "H") == NULL); /* exact lookup */
        fixture_free(f);
    }
    snprintf(path, sizeof path, "%s/chunk_gated_delta_rule_fwd_meta.json", dir);
    f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        double scale = 0, atol = -1, rtol = -1;
        int64_t l2 = -1, Hv = 0;
        CHECK(fixture_param_f64(f, "scale", &scale) == 0);
        CHECK_NEAR(scale, 1.0 / sqrt(128.0), 1e-12);
        CHECK(fixture_param(f, "scale", &Hv) != 0); /* not an integer */
        CHECK(fixture_param(f, "use_qk_l2norm_in_kernel", &l2) == 0 && l2 == 1);
        CHECK(fixture_param(f, "H", &Hv) == 0 && Hv == 4);
        CHECK(fixture_meta(f, "fla_reference") != NULL);
        /* final_state has an atol but no rtol in this set; o has both */
        CHECK_EQ_INT(fixture_tolerance(f, "final_state", &atol, &rtol), 1);
        CHECK(rtol == -1);
        CHECK_EQ_INT(fixture_tolerance(f, "o", &atol, &rtol), 3);
        CHECK_NEAR(rtol, 0.05, 1e-12);
        CHECK_EQ_INT(fixture_tolerance(f, "q", &atol, &rtol), 0);
        fixture_free(f);
    }
    /* the untabled set: files found by name, f32 [B,T,H,BT] */
    snprintf(path, sizeof path, "%s/chunk_tri_solve_invert_meta.json", dir);
    f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        CHECK_EQ_INT(fixture_count(f), 2);
        const tensor *a = fixture_get(f, "a_strict"), *ai = fixture_get(f, "a_inv");
        CHECK(a && a->dtype == DT_F32 && a->ndim == 4 && a->shape[0] == 4 && a->shape[1] == 64 && a->shape[3] == 64);
        CHECK(ai && ai->ndim == 4);
        int64_t seed = 0;
        CHECK(fixture_param(f, "seed", &seed) == 0 && seed == 0xC0FFEE);
        op_buf A_buf = {.name = "A", .role = BUF_IN, .dtype = DT_F32, .fixture_names = "A,a_strict"};
        op_buf Ai_buf = {.name = "Ai", .role = BUF_OUT, .dtype = DT_F32, .fixture_names = "Ai,a_inv,A_inv"};
        const tensor *m = NULL;
        CHECK(fixture_match_op_buf(f, &A_buf, &m) == 0 && m == a);
        CHECK(fixture_match_op_buf(f, &Ai_buf, &m) == 0 && m == ai);
        fixture_free(f);
    }
    /* the directory holds several sets: the error lists them */
    f = fixture_open(dir, err, sizeof err);
    CHECK(f == NULL);
    check_message(err, "gated_delta_net_kkt_meta.json", "chunk_tri_solve_invert_meta.json");
    check_message(err, "6 mlx-native fixture sets", NULL);
}

TEST(io_match_op_buf_names) {
    char dir[512], path[1024], err[512];
    if (mlx_dir(dir, sizeof dir) != 0) SKIP("mlx-native fixtures not found at %s", dir);
    snprintf(path, sizeof path, "%s/chunk_gated_delta_rule_fwd_meta.json", dir);
    fixture *f = fixture_open(path, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (!f) return;
    extern const op_desc op_cumsum;
    const tensor *m = NULL;
    /* cumsum's g buffer lists g_log_decay among its fixture names */
    CHECK(fixture_match_op_buf(f, &op_cumsum.bufs[0], &m) == 0 && m && strcmp(m->name, "g_log_decay") == 0);
    CHECK(fixture_match_op_buf(f, &op_cumsum.bufs[1], &m) != 0); /* no g_cumsum in this set */
    op_buf final_buf = {.name = "final", .role = BUF_OUT, .dtype = DT_F32, .fixture_names = "final,final_state"};
    CHECK(fixture_match_op_buf(f, &final_buf, &m) == 0 && m && strcmp(m->name, "final_state") == 0);
    op_buf Q = {.name = "Q", .role = BUF_IN, .dtype = DT_BF16, .fixture_names = NULL}; /* case-insensitive fallback */
    CHECK(fixture_match_op_buf(f, &Q, &m) == 0 && m && strcmp(m->name, "q") == 0);
    fixture_free(f);

    /* input_NAME / NAME_ref file naming in an npy directory */
    char tmp[256];
    io_test_tmpdir(tmp, sizeof tmp);
    tensor *ts[3] = {io_test_tensor("input_k", DT_BF16, 1, (int64_t[]){4}, 1),
                     io_test_tensor("o_ref", DT_BF16, 1, (int64_t[]){4}, 1),
                     io_test_tensor("state", DT_F32, 1, (int64_t[]){4}, 1)};
    CHECK(fixture_write_npy_dir(tmp, ts, 3, err, sizeof err) == 0);
    f = fixture_open(tmp, err, sizeof err);
    CHECK_MSG(f != NULL, "%s", err);
    if (f) {
        op_buf k = {.name = "k", .role = BUF_IN, .dtype = DT_BF16};
        op_buf o = {.name = "o", .role = BUF_OUT, .dtype = DT_BF16, .fixture_names = "o"};
        op_buf v = {.name = "v", .role = BUF_IN, .dtype = DT_BF16, .fixture_names = "v,value"};
        CHECK(fixture_match_op_buf(f, &k, &m) == 0 && strcmp(m->name, "input_k") == 0);
        CHECK(fixture_match_op_buf(f, &o, &m) == 0 && strcmp(m->name, "o_ref") == 0);
        CHECK(fixture_match_op_buf(f, &v, &m) != 0);
        for (int i = 0; i < fixture_count(f); i++) {
            const char *nm = fixture_at(f, i)->name;
            io_role want = strcmp(nm, "input_k") == 0 ? IO_ROLE_INPUT : strcmp(nm, "o_ref") == 0 ? IO_ROLE_OUTPUT
                                                                                                : IO_ROLE_UNKNOWN;
            CHECK_MSG(fixture_role_at(f, i) == want, "role of %s", nm);
        }
        fixture_free(f);
    }
    for (int i = 0; i < 3; i++) tensor_free(ts[i]);
    io_test_rmdir(tmp);
}

/* Copies the kkt set into a temp dir with one file changed. */
static void copy_kkt_set(const char *src, const char *dst) {
    static const char *files[] = {"gated_delta_net_kkt_meta.json", "gated_delta_net_kkt_input_k.bin",
                                  "gated_delta_net_kkt_input_beta.bin", "gated_delta_net_kkt_input_g.bin",
                                  "gated_delta_net_kkt_A_ref.bin"};
    for (int i = 0; i < 5; i++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", src, files[i]);
        snprintf(b, sizeof b, "%s/%s", dst, files[i]);
        char *buf;
        size_t len;
        char err[256];
        if (io_read_small_file(a, 1 << 20, &buf, &len, err, sizeof err) != 0) {
            test_fail(__FILE__, __LINE__, "%s", err);
            return;
        }
        io_test_write(b, buf, len);
        free(buf);
    }
}

static void rewrite_meta(const char *dir, const char *from, const char *to) {
    char path[1024], err[256], *buf;
    size_t len;
    snprintf(path, sizeof path, "%s/gated_delta_net_kkt_meta.json", dir);
    CHECK(io_read_small_file(path, 1 << 20, &buf, &len, err, sizeof err) == 0);
    char *at = strstr(buf, from);
    CHECK_MSG(at != NULL, "'%s' not in meta", from);
    if (at) {
        FILE *f = fopen(path, "wb");
        fwrite(buf, 1, (size_t)(at - buf), f);
        fputs(to, f);
        fputs(at + strlen(from), f);
        fclose(f);
    }
    free(buf);
}

TEST(io_mlx_native_corrupt_sets) {
    char src[512], err[512];
    if (mlx_dir(src, sizeof src) != 0) SKIP("mlx-native fixtures not found at %s", src);
    static const struct {
        const char *file;   /* NULL: edit the meta */
        const char *from, *to;
        long truncate_to;   /* for a .bin, -1: delete it */
        const char *needle1, *needle2;
    } cases[] = {
        {"gated_delta_net_kkt_input_beta.bin", NULL, NULL, 100, "tensor 'beta'", "is 100 bytes"},
        {"gated_delta_net_kkt_A_ref.bin", NULL, NULL, -1, "tensor 'A'", "missing"},
        {NULL, "\"dtype\": \"f32\",\n      \"file\": \"gated_delta_net_kkt_input_g.bin\"",
         "\"dtype\": \"q4\",\n      \"file\": \"gated_delta_net_kkt_input_g.bin\"", 0, "tensor 'g'", "\"q4\""},
        {NULL, "\"version\":", "\"version\" ", 0, "malformed JSON", NULL},
        {NULL, "\"file\": \"gated_delta_net_kkt_input_k.bin\"", "\"file\": \"../etc/passwd\"", 0, "tensor 'k'",
         "plain file name"},
        {NULL, "      \"shape\": [\n        1,\n        128,\n        2,\n        128\n      ]",
         "      \"shape\": [1, 128, 2, -128]", 0, "tensor 'k'", "shape entry 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char dir[256], path[1024];
        io_test_tmpdir(dir, sizeof dir);
        copy_kkt_set(src, dir);
        if (cases[i].file) {
            snprintf(path, sizeof path, "%s/%s", dir, cases[i].file);
            if (cases[i].truncate_to < 0)
                CHECK(unlink(path) == 0);
            else
                CHECK(truncate(path, cases[i].truncate_to) == 0);
        } else {
            rewrite_meta(dir, cases[i].from, cases[i].to);
        }
        fixture *f = fixture_open(dir, err, sizeof err);
        CHECK_MSG(f == NULL, "case %zu accepted", i);
        fixture_free(f);
        check_message(err, "gated_delta_net_kkt_meta.json", cases[i].needle1);
        check_message(err, cases[i].needle2, NULL);
        io_test_rmdir(dir);
    }
}
