/* test_io_fuzz.c — seeded mutation fuzzing of the three fixture parsers, in memory.
 *
 * Valid inputs are produced by our own writers (safetensors, .npy) or built here
 * (mlx-native meta.json + an in-memory table of .bin files), then mutated: bit flips,
 * interesting bytes, inserts, deletes, truncation, header-length fields set to
 * extremes, numbers in the JSON replaced by edge values, splices from other inputs.
 * Every input must be rejected with a one-line message and nothing left in the
 * output, or accepted self-consistently: sane names/shapes/dtypes, data that fits in
 * the input, and a write -> read round trip that reproduces it exactly.
 *
 * GDN_FUZZ_ITERS (default 100000 per parser) and GDN_FUZZ_SEED (default 1) control
 * the run; a failure prints the seed and iteration so it can be replayed. */
#include <time.h>

#include <cjson/cJSON.h>

#include "core/rng.h"
#include "io/mlxfix.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "io_test_util.h"
#include "test.h"

#define MAX_SEEDS 16
#define FUZZ_MAX_INPUT (1 << 16)

typedef struct corpus {
    uint8_t *data[MAX_SEEDS];
    size_t len[MAX_SEEDS];
    int n;
} corpus;

static void corpus_add(corpus *c, uint8_t *data, size_t len) {
    if (c->n < MAX_SEEDS) {
        c->data[c->n] = data;
        c->len[c->n++] = len;
    } else {
        free(data);
    }
}

static void corpus_free(corpus *c) {
    for (int i = 0; i < c->n; i++) free(c->data[i]);
}

static long env_long(const char *name, long def) {
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 0) : def;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What to do to the length field at the start of a format's header. */
typedef struct len_field {
    size_t off, width; /* bytes at off..off+width-1, little-endian; width 0 = none */
} len_field;

static uint64_t below(rng *r, uint64_t n) { return n ? rng_u64(r) % n : 0; }

/* One mutation of buf (len bytes, capacity FUZZ_MAX_INPUT) in place; returns the new length. */
static size_t mutate_once(rng *r, uint8_t *buf, size_t len, const corpus *c, len_field lf) {
    static const uint8_t interesting[] = {0, 1, 0x7f, 0x80, 0xff, '"', '{', '}', '[', ']', ',', ':',
                                          '0', '9', '-', 'e', '.', '\\', '\'', '(', ')', 'T', 'F', ' '};
    static const char *const numbers[] = {"0",          "-1",         "1.5",      "4294967296", "9007199254740993",
                                          "1e308",      "-0",         "65",       "18446744073709551615",
                                          "2147483648", "NaN",        "1e-400",   "123456789012345678901234567890"};
    switch (below(r, 10)) {
    case 0: /* bit flip */
        if (len) buf[below(r, len)] ^= (uint8_t)(1u << below(r, 8));
        return len;
    case 1: /* interesting byte */
        if (len) buf[below(r, len)] = interesting[below(r, sizeof interesting)];
        return len;
    case 2: { /* insert 1..8 random bytes */
        size_t k = 1 + below(r, 8), at = below(r, len + 1);
        if (len + k > FUZZ_MAX_INPUT) return len;
        memmove(buf + at + k, buf + at, len - at);
        for (size_t i = 0; i < k; i++) buf[at + i] = (uint8_t)rng_u64(r);
        return len + k;
    }
    case 3: { /* delete 1..16 bytes */
        if (!len) return len;
        size_t at = below(r, len), k = 1 + below(r, 16);
        if (k > len - at) k = len - at;
        memmove(buf + at, buf + at + k, len - at - k);
        return len - k;
    }
    case 4: /* truncate */
        return below(r, len + 1);
    case 5: { /* header length field to an extreme */
        if (!lf.width || len < lf.off + lf.width) return len;
        uint64_t cur = 0;
        for (size_t i = 0; i < lf.width; i++) cur |= (uint64_t)buf[lf.off + i] << (8 * i);
        uint64_t choices[] = {0, 1, cur + 1, cur - 1, len, len - lf.off - lf.width, UINT64_MAX, (uint64_t)1 << 63,
                              (uint64_t)1 << 32, 0xffff, rng_u64(r)};
        uint64_t v = choices[below(r, sizeof choices / sizeof choices[0])];
        for (size_t i = 0; i < lf.width; i++) buf[lf.off + i] = (uint8_t)(v >> (8 * i));
        return len;
    }
    case 6: { /* splice a range from another seed */
        int which = (int)below(r, (uint64_t)c->n);
        const uint8_t *o = c->data[which];
        size_t olen = c->len[which];
        if (!olen || !len) return len;
        size_t from = below(r, olen), k = 1 + below(r, olen - from), at = below(r, len);
        if (k > len - at) k = len - at;
        memcpy(buf + at, o + from, k);
        return len;
    }
    case 7: { /* duplicate a range inside */
        if (len < 2) return len;
        size_t from = below(r, len), k = 1 + below(r, 32), at = below(r, len);
        if (k > len - from) k = len - from;
        if (len + k > FUZZ_MAX_INPUT) return len;
        memmove(buf + at + k, buf + at, len - at);
        memmove(buf + at, buf + (from >= at ? from + k : from), k);
        return len + k;
    }
    default: { /* replace a run of digits with an edge-case number */
        if (!len) return len;
        size_t start = below(r, len);
        while (start < len && !(buf[start] >= '0' && buf[start] <= '9')) start++;
        if (start == len) return len;
        size_t end = start;
        while (end < len && ((buf[end] >= '0' && buf[end] <= '9') || buf[end] == '.')) end++;
        const char *num = numbers[below(r, sizeof numbers / sizeof numbers[0])];
        size_t nl = strlen(num);
        if (len - (end - start) + nl > FUZZ_MAX_INPUT) return len;
        memmove(buf + start + nl, buf + end, len - end);
        memcpy(buf + start, num, nl);
        return len - (end - start) + nl;
    }
    }
}

static size_t make_mutant(rng *r, const corpus *c, uint8_t *buf, len_field lf) {
    int s = (int)below(r, (uint64_t)c->n);
    memcpy(buf, c->data[s], c->len[s]);
    size_t len = c->len[s];
    int k = 1 + (int)below(r, 4);
    for (int i = 0; i < k; i++) len = mutate_once(r, buf, len, c, lf);
    return len;
}

/* Structure-aware mutation of a safetensors header: edits that keep the JSON valid
 * and the numbers plausible (shifted or copied data_offsets, a changed dim with a
 * matching end, another dtype, a duplicated name) reach the semantic checks that
 * byte-level mutations rarely get past.  Returns the new length (len if unchanged). */
static size_t mutate_safetensors_header(rng *r, uint8_t *buf, size_t len) {
    if (len < 8) return len;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    if (hlen > len - 8) return len;
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hlen);
    if (!root) return len;
    cJSON *ents[32];
    int n = 0;
    for (cJSON *e = root->child; e && n < 32; e = e->next)
        if (strcmp(e->string, "__metadata__") != 0 && cJSON_GetObjectItem(e, "data_offsets")) ents[n++] = e;
    if (n == 0) {
        cJSON_Delete(root);
        return len;
    }
    cJSON *e = ents[below(r, (uint64_t)n)], *o = ents[below(r, (uint64_t)n)];
    cJSON *offs = cJSON_GetObjectItem(e, "data_offsets");
    static const char *const dts[] = {"F32", "BF16", "F16", "F64", "I32", "U32", "I64", "U8", "F8_E4M3", ""};
    double b = offs->child ? offs->child->valuedouble : 0, en = offs->child && offs->child->next ? offs->child->next->valuedouble : 0;
    double delta = (double)((int64_t)below(r, 17) - 8) * (below(r, 2) ? 1 : 2);
    switch (below(r, 6)) {
    case 0: /* shift the range */
        cJSON_ReplaceItemInArray(offs, 0, cJSON_CreateNumber(b + delta));
        cJSON_ReplaceItemInArray(offs, 1, cJSON_CreateNumber(en + delta));
        break;
    case 1: /* share another tensor's range */
        cJSON_ReplaceItemInObject(e, "data_offsets", cJSON_Duplicate(cJSON_GetObjectItem(o, "data_offsets"), 1));
        break;
    case 2: /* another dtype */
        cJSON_ReplaceItemInObject(e, "dtype", cJSON_CreateString(dts[below(r, 10)]));
        break;
    case 3: { /* grow or shrink the first dim, moving end to match */
        cJSON *shape = cJSON_GetObjectItem(e, "shape");
        if (cJSON_GetArraySize(shape) > 0 && cJSON_IsNumber(shape->child)) {
            double d0 = shape->child->valuedouble, step = d0 > 0 ? (en - b) / d0 : 4;
            double nd = d0 + (double)((int64_t)below(r, 5) - 2);
            cJSON_ReplaceItemInArray(shape, 0, cJSON_CreateNumber(nd));
            cJSON_ReplaceItemInArray(offs, 1, cJSON_CreateNumber(b + nd * step));
        }
        break;
    }
    case 4: /* end moved alone */
        cJSON_ReplaceItemInArray(offs, 1, cJSON_CreateNumber(en + delta));
        break;
    default: /* a second tensor under an existing name */
        cJSON_AddItemToObject(root, o->string, cJSON_Duplicate(e, 1));
        break;
    }
    char *h = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!h) return len;
    size_t nh = strlen(h), data = len - 8 - (size_t)hlen;
    if (8 + nh + data > FUZZ_MAX_INPUT) {
        free(h);
        return len;
    }
    memmove(buf + 8 + nh, buf + 8 + hlen, data);
    memcpy(buf + 8, h, nh);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)nh >> (8 * i));
    free(h);
    return 8 + nh + data;
}

/* Checks a rejection: one line, something said. */
static int rejection_ok(const char *err) { return err[0] && !strchr(err, '\n') && !strchr(err, '\r'); }

/* A tensor a parser accepted: sane header, data readable in full. */
static int tensor_sane(const tensor *t, uint64_t input_len) {
    size_t nl = strnlen(t->name, TENSOR_NAME_MAX);
    if (nl == 0 || nl >= TENSOR_NAME_MAX || t->dtype >= DT_COUNT || t->ndim < 0 || t->ndim > TENSOR_MAX_DIMS)
        return 0;
    uint64_t nb;
    if (io_shape_bytes(t->dtype, t->ndim, t->shape, &nb) != 0 || nb > input_len || !t->data) return 0;
    volatile uint8_t sum = 0;
    for (uint64_t i = 0; i < nb; i++) sum ^= ((const uint8_t *)t->data)[i];
    (void)sum;
    return 1;
}

static int sets_equal(const io_set *a, const io_set *b) {
    if (a->n != b->n || a->nmeta != b->nmeta) return 0;
    for (int i = 0; i < a->n; i++)
        if (!io_test_same(a->e[i].t, b->e[i].t)) return 0;
    for (int i = 0; i < a->nmeta; i++) {
        const char *v = io_set_meta(b, a->meta[i].key);
        if (!v || strcmp(v, a->meta[i].value) != 0) return 0;
    }
    return 1;
}

/* An independent look at an accepted safetensors input: every tensor's data_offsets
 * lie in the data section, no two overlap, and the tensor holds exactly those bytes. */
static int safetensors_matches_input(const uint8_t *buf, size_t len, const io_set *set) {
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)hlen);
    if (!root) return 0;
    uint64_t data = 8 + hlen, lo[64], hi[64];
    int ok = set->n <= 64;
    for (int i = 0; i < set->n && ok; i++) {
        const tensor *t = set->e[i].t;
        const cJSON *offs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, t->name),
                                                             "data_offsets");
        ok = cJSON_GetArraySize(offs) == 2;
        if (!ok) break;
        lo[i] = (uint64_t)offs->child->valuedouble;
        hi[i] = (uint64_t)offs->child->next->valuedouble;
        ok = lo[i] <= hi[i] && hi[i] <= len - data && hi[i] - lo[i] == tensor_nbytes(t) &&
             memcmp(t->data, buf + data + lo[i], (size_t)(hi[i] - lo[i])) == 0;
        for (int j = 0; j < i && ok; j++) ok = lo[i] == hi[i] || lo[j] == hi[j] || hi[j] <= lo[i] || hi[i] <= lo[j];
    }
    cJSON_Delete(root);
    return ok;
}

typedef struct fuzz_stats {
    long runs, accepted;
} fuzz_stats;

static void report(const char *what, fuzz_stats st, double t0, long seed) {
    printf("  fuzz %s: %ld inputs (%ld accepted, %ld rejected) in %.2f s, seed %ld\n", what, st.runs, st.accepted,
           st.runs - st.accepted, now_s() - t0, seed);
}

/* --- safetensors --- */
static void safetensors_seeds(corpus *c) {
    static const dtype dts[] = {DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32, DT_U32};
    tensor *ts[8];
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        ts[i] = io_test_tensor(name, dts[i], 2, (int64_t[]){2, 1 + i}, 3);
    }
    ts[6] = io_test_tensor("scalar", DT_F32, 0, NULL, 3);
    ts[7] = io_test_tensor("empty", DT_BF16, 3, (int64_t[]){1, 0, 4}, 3);
    io_meta meta[2] = {{"B", "1"}, {"inputs", "t0,t1"}};
    int variants[4][2] = {{0, 8}, {0, 1}, {1, 6}, {5, 8}};
    for (int v = 0; v < 4; v++) {
        uint8_t *buf;
        size_t len;
        char err[256];
        int lo = variants[v][0], hi = variants[v][1];
        if (safetensors_serialize(ts + lo, hi - lo, meta, v % 2 ? 0 : 2, &buf, &len, err, sizeof err) == 0)
            corpus_add(c, buf, len);
    }
    for (int i = 0; i < 8; i++) tensor_free(ts[i]);
}

TEST(io_fuzz_safetensors) {
    long iters = env_long("GDN_FUZZ_ITERS", 100000), seed = env_long("GDN_FUZZ_SEED", 1);
    corpus c = {0};
    safetensors_seeds(&c);
    CHECK_EQ_INT(c.n, 4);
    uint8_t *buf = malloc(FUZZ_MAX_INPUT);
    rng r;
    rng_stream(&r, (uint64_t)seed, "fuzz-safetensors");
    fuzz_stats st = {0};
    double t0 = now_s();
    char err[512];
    for (long it = 0; it < iters && !test_failed(); it++) {
        size_t len;
        if (below(&r, 3) == 0) { /* a third of the inputs get structured header edits */
            int sd = (int)below(&r, (uint64_t)c.n);
            memcpy(buf, c.data[sd], c.len[sd]);
            len = mutate_safetensors_header(&r, buf, c.len[sd]);
            if (below(&r, 2)) len = mutate_safetensors_header(&r, buf, len);
        } else {
            len = make_mutant(&r, &c, buf, (len_field){0, 8});
        }
        io_set set = {0};
        err[0] = 0;
        st.runs++;
        if (safetensors_parse_mem(buf, len, "fuzz.safetensors", &set, err, sizeof err) != 0) {
            CHECK_MSG(rejection_ok(err) && set.n == 0 && set.nmeta == 0, "seed %ld it %ld: bad rejection: %s", seed,
                      it, err);
            continue;
        }
        st.accepted++;
        uint64_t total = 0;
        tensor *ts[64];
        int ok = set.n <= 64;
        for (int i = 0; i < set.n && ok; i++) {
            ok = tensor_sane(set.e[i].t, len);
            total += tensor_nbytes(set.e[i].t);
            ts[i] = set.e[i].t;
        }
        ok = ok && total <= len - 8 && safetensors_matches_input(buf, len, &set);
        CHECK_MSG(ok, "seed %ld it %ld: accepted an inconsistent file", seed, it);
        /* writing what we read and reading it back gives the same set */
        uint8_t *again;
        size_t again_len;
        io_set set2 = {0};
        CHECK_MSG(ok && safetensors_serialize(ts, set.n, set.meta, set.nmeta, &again, &again_len, err, sizeof err) == 0 &&
                      safetensors_parse_mem(again, again_len, "again", &set2, err, sizeof err) == 0 &&
                      sets_equal(&set, &set2),
                  "seed %ld it %ld: round trip differs: %s", seed, it, err);
        if (ok) free(again);
        io_set_clear(&set2);
        io_set_clear(&set);
    }
    report("safetensors", st, t0, seed);
    CHECK(st.accepted > 0 && st.accepted < st.runs); /* the mutator reaches both outcomes */
    free(buf);
    corpus_free(&c);
}

/* --- npy --- */
static void npy_seeds(corpus *c) {
    static const dtype dts[] = {DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32, DT_U32};
    for (int i = 0; i < 6; i++) {
        tensor *t = io_test_tensor("x", dts[i], i % 3 + 1, (int64_t[]){3, 2, 2}, 9);
        uint8_t *buf;
        size_t len;
        char err[256];
        if (npy_serialize(t, &buf, &len, err, sizeof err) == 0) corpus_add(c, buf, len);
        tensor_free(t);
    }
    /* a v2 header and a 0-d array, as other writers produce them */
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n";
    size_t dl = strlen(dict);
    uint8_t *b = malloc(12 + dl + 4);
    memcpy(b, "\x93NUMPY\x02\x00", 8);
    for (int i = 0; i < 4; i++) b[8 + i] = (uint8_t)(dl >> (8 * i));
    memcpy(b + 12, dict, dl);
    memcpy(b + 12 + dl, "\x00\x00\x80\x3f", 4);
    corpus_add(c, b, 12 + dl + 4);
}

TEST(io_fuzz_npy) {
    long iters = env_long("GDN_FUZZ_ITERS", 100000), seed = env_long("GDN_FUZZ_SEED", 1);
    corpus c = {0};
    npy_seeds(&c);
    CHECK_EQ_INT(c.n, 7);
    uint8_t *buf = malloc(FUZZ_MAX_INPUT);
    rng r;
    rng_stream(&r, (uint64_t)seed, "fuzz-npy");
    fuzz_stats st = {0};
    double t0 = now_s();
    char err[512];
    for (long it = 0; it < iters && !test_failed(); it++) {
        /* the length field is 2 bytes in v1, 4 in v2/v3: mutate whichever this input has */
        size_t len = make_mutant(&r, &c, buf, (len_field){8, below(&r, 2) ? 2 : 4});
        tensor *t = NULL;
        err[0] = 0;
        st.runs++;
        if (npy_parse_mem(buf, len, "fuzz.npy", "x", &t, err, sizeof err) != 0) {
            CHECK_MSG(rejection_ok(err) && t == NULL, "seed %ld it %ld: bad rejection: %s", seed, it, err);
            continue;
        }
        st.accepted++;
        /* the data is the tail of the input, exactly */
        int ok = tensor_sane(t, len) && tensor_nbytes(t) + 10 <= len &&
                 memcmp(t->data, buf + len - tensor_nbytes(t), tensor_nbytes(t)) == 0;
        uint8_t *again;
        size_t again_len;
        tensor *t2 = NULL;
        CHECK_MSG(ok && npy_serialize(t, &again, &again_len, err, sizeof err) == 0 &&
                      npy_parse_mem(again, again_len, "again", "x", &t2, err, sizeof err) == 0 &&
                      io_test_same(t, t2),
                  "seed %ld it %ld: inconsistent accept or round trip: %s", seed, it, err);
        if (ok) free(again);
        tensor_free(t2);
        tensor_free(t);
    }
    report("npy", st, t0, seed);
    CHECK(st.accepted > 0 && st.accepted < st.runs);
    free(buf);
    corpus_free(&c);
}

/* --- mlx-native: the meta.json is mutated, the .bin table stays valid --- */
static const char fz_meta[] =
    "{\"version\": \"fuzz\", \"seed\": \"0x00C0FFEE\", \"B\": 1, \"T\": 8, \"Hg\": 2, \"H\": 2, \"K\": 4, \"BT\": 8,"
    " \"scale\": 0.5, \"flag\": true,"
    " \"inputs\": {\"k\": {\"shape\": [1, 8, 2, 4], \"dtype\": \"bf16\", \"file\": \"fz_input_k.bin\"},"
    "            \"beta\": {\"shape\": [1, 8, 2], \"dtype\": \"f32\", \"file\": \"fz_input_beta.bin\"},"
    "            \"s\": {\"shape\": [2, 2], \"dtype\": \"float32\"}},"
    " \"outputs\": {\"A\": {\"shape\": [1, 8, 2, 8], \"dtype\": \"f32\", \"file\": \"fz_A_ref.bin\"},"
    "             \"s\": {\"shape\": [16], \"dtype\": \"u32\"}},"
    " \"tolerance\": {\"A_atol\": 0.005, \"A_rtol\": 0.02, \"_note\": \"x\"}}";
static const char fzu_meta[] = "{\"B\": 1, \"T\": 8, \"H\": 2, \"BT\": 8, \"seed\": \"0x1\"}";

TEST(io_fuzz_mlx_native_meta) {
    long iters = env_long("GDN_FUZZ_ITERS", 100000), seed = env_long("GDN_FUZZ_SEED", 1);
    static uint8_t k[128], beta[64], A[512], s_in[16], s_ref[64], ua[512], uref[512], other[64];
    for (size_t i = 0; i < sizeof k; i++) k[i] = (uint8_t)i;
    const mlxfix_mem_file files[] = {
        {"fz_input_k.bin", k, sizeof k},          {"fz_input_beta.bin", beta, sizeof beta},
        {"fz_A_ref.bin", A, sizeof A},            {"fz_input_s.bin", s_in, sizeof s_in},
        {"fz_s_ref.bin", s_ref, sizeof s_ref},    {"fzu_input_a.bin", ua, sizeof ua},
        {"fzu_a_ref.bin", uref, sizeof uref},     {"fzu_x_meta.json", "{}", 2},
        {"fzu_x_input_q.bin", other, sizeof other}, {"fzu_odd_ref.bin", other, 6},
    };
    mlxfix_mem_table table = {files, 9}; /* fzu_odd_ref.bin (6 bytes) only in the second table */
    mlxfix_mem_table table_odd = {files, 10};
    mlxfix_files fs = mlxfix_mem_files(&table), fs_odd = mlxfix_mem_files(&table_odd);
    char err[512];

    /* the unmutated inputs load as designed */
    io_set set = {0};
    CHECK_MSG(mlxfix_parse(fz_meta, sizeof fz_meta - 1, "fz_meta.json", &fs, &set, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(set.n, 5);
    CHECK(io_set_find(&set, "s_ref") >= 0 && set.e[io_set_find(&set, "s_ref")].role == IO_ROLE_OUTPUT);
    CHECK(io_set_meta(&set, "A_atol") && strcmp(io_set_meta(&set, "flag"), "true") == 0);
    io_set_clear(&set);
    CHECK_MSG(mlxfix_parse(fzu_meta, sizeof fzu_meta - 1, "fzu_meta.json", &fs, &set, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_INT(set.n, 2); /* fzu_x_input_q.bin belongs to the set fzu_x */
    CHECK(set.n == 2 && set.e[0].t->ndim == 4);
    io_set_clear(&set);
    CHECK(mlxfix_parse(fzu_meta, sizeof fzu_meta - 1, "fzu_meta.json", &fs_odd, &set, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "tensor 'odd'") && strstr(err, "whole number of f32"), "%s", err);

    corpus c = {0};
    corpus_add(&c, (uint8_t *)strdup(fz_meta), sizeof fz_meta - 1);
    corpus_add(&c, (uint8_t *)strdup(fzu_meta), sizeof fzu_meta - 1);
    uint8_t *buf = malloc(FUZZ_MAX_INPUT);
    rng r;
    rng_stream(&r, (uint64_t)seed, "fuzz-mlx");
    fuzz_stats st = {0};
    double t0 = now_s();
    for (long it = 0; it < iters && !test_failed(); it++) {
        size_t len = make_mutant(&r, &c, buf, (len_field){0, 0});
        const char *name = below(&r, 2) ? "fz_meta.json" : "fzu_meta.json";
        io_set out = {0};
        err[0] = 0;
        st.runs++;
        if (mlxfix_parse((const char *)buf, len, name, &fs, &out, err, sizeof err) != 0) {
            CHECK_MSG(rejection_ok(err) && out.n == 0 && out.nmeta == 0, "seed %ld it %ld: bad rejection: %s", seed, it,
                      err);
            continue;
        }
        st.accepted++;
        int ok = 1;
        for (int i = 0; i < out.n && ok; i++) {
            const tensor *t = out.e[i].t;
            /* each tensor is exactly one of the files of the table */
            int sized = 0;
            for (int j = 0; j < table.n; j++)
                sized |= files[j].len == tensor_nbytes(t) && memcmp(files[j].data, t->data, files[j].len) == 0;
            ok = tensor_sane(t, 512) && sized && out.e[i].role != IO_ROLE_UNKNOWN && io_set_find(&out, t->name) == i;
        }
        CHECK_MSG(ok && out.n > 0, "seed %ld it %ld: accepted an inconsistent set", seed, it);
        io_set_clear(&out);
    }
    report("mlx-native meta", st, t0, seed);
    CHECK(st.accepted > 0 && st.accepted < st.runs);
    free(buf);
    corpus_free(&c);
}
