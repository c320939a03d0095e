/* test_kcase.c — the kernel case parser (src/kcase): every form of the spec's example
 * accepted and printed back to the same case; each kind of bad input one line naming
 * its key path; and a seeded mutation fuzz of the parser (JSON-aware edits and byte
 * edits of valid cases): every input is rejected with one line naming the case, or
 * accepted and printed to JSON that parses back to the same printed case.
 *
 * GDN_FUZZ_ITERS (default 100000) and GDN_FUZZ_SEED (default 1) control the fuzz; a
 * failure prints the seed and iteration and the input. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/rng.h"
#include "kcase/kcase.h"
#include "test.h"

static const char spec_example[] =
    "{\"case\": 1, \"name\": \"rms_norm_f32_4096\", \"source\": \"kernels/rms_norm.metal\", \"include\": [\".\"],\n"
    " \"define\": {\"N_READS\": \"4\"}, \"function\": \"rmsfloat32\", \"constants\": {\"has_w\": true, \"3\": 7},\n"
    " \"dispatch\": {\"threadgroups\": [8, 1, 1], \"threadgroup\": [1024, 1, 1], \"threadgroup_memory\": {\"0\": 128}},\n"
    " \"buffers\": {\n"
    "  \"x\": {\"dtype\": \"float32\", \"shape\": [8, 4096], \"init\": {\"normal\": [0, 1]}, \"readonly\": true},\n"
    "  \"w\": {\"file\": \"w.npy\"},\n"
    "  \"out\": {\"dtype\": \"float32\", \"shape\": [8, 4096], \"init\": \"poison\",\n"
    "          \"expect\": {\"file\": \"out.npy\", \"atol\": 1e-5, \"rtol\": 1e-5}},\n"
    "  \"eps\": {\"dtype\": \"float32\", \"value\": 1e-5},\n"
    "  \"axis_size\": {\"dtype\": \"uint32\", \"value\": 4096},\n"
    "  \"args\": {\"struct\": {\"ne00\": 4096, \"nb01\": 16384, \"nb\": [1, 2, 3]}, \"index\": 7}}}\n";

static const char sequence_case[] =
    "{\"case\": 1, \"source\": {\"text\": \"kernel void a() {}\"},\n"
    " \"dispatches\": [\n"
    "  {\"function\": \"pass1\", \"dispatch\": {\"grid\": [1024], \"threadgroup\": [256]}},\n"
    "  {\"function\": \"pass2\", \"constants\": {\"k\": 2.5}, \"dispatch\": {\"threadgroups\": [1], \"threadgroup\": [32, 2]},\n"
    "   \"bind\": {\"in\": \"partial\", \"out\": \"y\"}}],\n"
    " \"buffers\": {\"x\": {\"dtype\": \"bfloat16\", \"shape\": [1024], \"init\": {\"uniform\": [-1, 1]}},\n"
    "  \"partial\": {\"dtype\": \"float16\", \"shape\": [4], \"init\": {\"arange\": [0, 0.5]}},\n"
    "  \"y\": {\"dtype\": \"int64\", \"shape\": [], \"expect\": {\"value\": [3]}},\n"
    "  \"z\": {\"file\": \"z.npz\", \"tensor\": \"a\", \"expect\": {\"backend\": \"sw\", \"ulp\": 2, \"rel_l2\": 0.001}},\n"
    "  \"m\": {\"dtype\": \"bool\", \"value\": [true, false, 1]},\n"
    "  \"q\": {\"dtype\": \"int8\", \"shape\": [3], \"init\": {\"fill\": -3}}}}\n";

static const char mlx_case[] =
    "{\"case\": 1, \"mlx_metal_kernel\": {\"name\": \"myexp\", \"source\": \"uint e = thread_position_in_grid.x; "
    "out[e] = metal::exp(inp[e]);\", \"header\": \"\", \"input_names\": [\"inp\"], \"output_names\": [\"out\"],\n"
    " \"template\": {\"T\": \"float32\", \"N\": 4, \"B\": false}, \"ensure_row_contiguous\": true, \"atomic_outputs\": false},\n"
    " \"dispatch\": {\"grid\": [16, 1, 1], \"threadgroup\": [16, 1, 1]},\n"
    " \"buffers\": {\"inp\": {\"dtype\": \"float32\", \"shape\": [16], \"init\": {\"normal\": [0, 1]}},\n"
    "  \"out\": {\"dtype\": \"float32\", \"shape\": [16], \"init\": \"poison\"}}}\n";

/* Parse, print, parse the print, print again: both prints must be equal. */
static int round_trips(const char *text, size_t len, char *err, size_t errlen, char **printed) {
    kc_case *c = kc_parse(text, len, "t.json", ".", err, errlen);
    *printed = NULL;
    if (!c) return -1;
    char *p1 = kc_to_json(c);
    kc_free(c);
    if (!p1) return -2;
    kc_case *c2 = kc_parse(p1, strlen(p1), "t.json", ".", err, errlen);
    char *p2 = c2 ? kc_to_json(c2) : NULL;
    kc_free(c2);
    int same = p2 && strcmp(p1, p2) == 0;
    free(p2);
    *printed = p1;
    return same ? 0 : -2;
}

TEST(kcase_spec_forms_round_trip) {
    const char *cases[] = {spec_example, sequence_case, mlx_case};
    for (int i = 0; i < 3; i++) {
        char err[512] = "", *printed;
        int rc = round_trips(cases[i], strlen(cases[i]), err, sizeof err, &printed);
        CHECK_MSG(rc == 0, "case %d: rc %d: %s", i, rc, err);
        free(printed);
    }
    char err[256];
    kc_case *c = kc_parse(spec_example, strlen(spec_example), "x.json", ".", err, sizeof err);
    CHECK(c != NULL);
    if (!c) return;
    CHECK(strcmp(c->name, "rms_norm_f32_4096") == 0);
    CHECK_EQ_INT(c->nbufs, 6);
    CHECK_EQ_INT(c->launches[0].nconstants, 2);
    CHECK_EQ_INT(c->launches[0].constants[1].index, 3);
    CHECK(c->bufs[0].readonly && c->bufs[0].init == KC_INIT_NORMAL);
    CHECK(c->bufs[2].expect.kind == KC_EXPECT_FILE && c->bufs[2].expect.has == (KC_TOL_ATOL | KC_TOL_RTOL));
    CHECK(c->bufs[5].kind == KC_BUF_STRUCT && c->bufs[5].nfields == 3 && c->bufs[5].index == 7);
    CHECK(c->launches[0].dispatch.tgmem[0].bytes == 128);
    kc_free(c);
}

/* Each bad input: rejected with a message holding want. */
TEST(kcase_errors_name_the_key) {
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"out\": {\"dtype\": \"float32\", \"shape\": [4], \"expect\": {\"fille\": \"o.npy\"}}}}",
         "t.json: buffers.out.expect: unknown key \"fille\""},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"out\": {\"dtype\": \"float32\", \"shape\": [4], \"expect\": {\"file\": 3}}}}",
         "t.json: buffers.out.expect.file: must be a string, not a number"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [2048]},"
         " \"buffers\": {}}", "dispatch.threadgroup: is 2048 threads, over Metal's 1024"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1],"
         " \"threadgroup_memory\": {\"0\": 30000, \"1\": 4096}}, \"buffers\": {}}", "dispatch.threadgroup_memory: is 34096 bytes"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"n\": {\"dtype\": \"uint32\", \"value\": -1}}}", "buffers.n.value: -1 is not a uint32 value"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"n\": {\"dtype\": \"float33\", \"shape\": [1]}}}", "buffers.n.dtype: must be one of float32"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"a\": {\"struct\": {\"x\": 1}, \"expect\": {\"value\": 1}}}}", "buffers.a.expect: a \"struct\" buffer"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {\"a\": {\"dtype\": \"int32\", \"shape\": [2], \"readonly\": true, \"expect\": {\"value\": 1}}}}",
         "buffers.a.expect: a readonly buffer must stay unchanged"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"grid\": [1], \"threadgroup\": [1]},"
         " \"buffers\": {}, \"buffers\": {}}", "key \"buffers\" is given twice"},
        {"{\"case\": 2}", "t.json: case: must be an integer from 1 to 1"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatches\": [], \"buffers\": {}}",
         "t.json: function: goes inside each entry of \"dispatches\""},
        {"{\"case\": 1, \"source\": \"k.metal\", \"dispatches\": [{\"function\": \"f\", \"dispatch\": {\"grid\": [1],"
         " \"threadgroup\": [1]}, \"bind\": {\"p\": \"nope\"}}], \"buffers\": {}}",
         "dispatches[0].bind.p: \"nope\" is not a buffer of the case"},
        {"{\"case\": 1, \"source\": \"k.metal\", \"function\": \"f\", \"dispatch\": {\"threadgroup\": [1]}, \"buffers\": {}}",
         "t.json: dispatch: needs exactly one of \"grid\""},
        {"{\"case\": 1,\n \"source\": \"k.metal\",,\n}", "t.json:2:"},
        {"{\"case\": 1} x", "t.json:1:13: text after the case's closing brace"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[512] = "";
        kc_case *c = kc_parse(bad[i].text, strlen(bad[i].text), "t.json", ".", err, sizeof err);
        CHECK_MSG(c == NULL, "bad case %zu accepted", i);
        kc_free(c);
        CHECK_MSG(strstr(err, bad[i].want) != NULL, "bad case %zu: '%s' lacks '%s'", i, err, bad[i].want);
        CHECK_MSG(!strchr(err, '\n'), "bad case %zu: message of several lines", i);
    }
}

/* ---- fuzz ------------------------------------------------------------------- */

static uint64_t below(rng *r, uint64_t n) { return n ? rng_u64(r) % n : 0; }

static int count_nodes(const cJSON *x) {
    int n = 1;
    for (const cJSON *c = x->child; c; c = c->next) n += count_nodes(c);
    return n;
}

static cJSON *nth_node(cJSON *x, int *k) {
    if ((*k)-- == 0) return x;
    for (cJSON *c = x->child; c; c = c->next) {
        cJSON *f = nth_node(c, k);
        if (f) return f;
    }
    return NULL;
}

/* A value likely to reach a semantic check: edge numbers, names of keys and dtypes,
 * small arrays and objects. */
static cJSON *random_value(rng *r) {
    static const double nums[] = {0, 1, -1, 0.5, 31, 32, 1024, 1025, 32768, 4294967295.0, 4294967296.0, 1e300, -0.0, 7};
    static const char *const strs[] = {"float32", "bfloat16", "int64", "bool", "poison", "zeros", "sw", "x", "out",
                                       "", "a.npy", "b.npz", "f", "0"};
    switch (below(r, 7)) {
    case 0: return cJSON_CreateNumber(nums[below(r, sizeof nums / sizeof nums[0])]);
    case 1: return cJSON_CreateString(strs[below(r, sizeof strs / sizeof strs[0])]);
    case 2: return cJSON_CreateBool((int)below(r, 2));
    case 3: return cJSON_CreateNull();
    case 4: {
        double v[4] = {1, 2, 3, 4};
        return cJSON_CreateDoubleArray(v, (int)below(r, 5));
    }
    case 5: return cJSON_CreateObject();
    default: {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, strs[below(r, sizeof strs / sizeof strs[0])], cJSON_CreateNumber(nums[below(r, 14)]));
        return o;
    }
    }
}

static const char *const fuzz_keys[] = {"case", "name", "source", "function", "dispatch", "grid", "threadgroups",
                                        "threadgroup", "threadgroup_memory", "buffers", "dtype", "shape", "init", "file",
                                        "tensor", "value", "struct", "expect", "readonly", "index", "atol", "ulp",
                                        "backend", "bind", "constants", "dispatches", "text", "fill", "normal"};

/* Replaces the value of a random object member anywhere in the tree. */
static void json_replace_member(rng *r, cJSON *root) {
    int k = (int)below(r, (uint64_t)count_nodes(root) - 1) + 1;
    cJSON *n = nth_node(root, &k);
    if (!n || !n->child) return;
    int m = cJSON_GetArraySize(n);
    cJSON *c = cJSON_GetArrayItem(n, (int)below(r, (uint64_t)m));
    cJSON *v = c ? random_value(r) : NULL;
    if (v && !cJSON_ReplaceItemViaPointer(n, c, v)) cJSON_Delete(v);
}

/* One JSON-aware edit of root: replace a member's value, rename a key, delete or copy a
 * node. */
static void json_edit(rng *r, cJSON *root) {
    int k = (int)below(r, (uint64_t)count_nodes(root) - 1) + 1;
    cJSON *n = nth_node(root, &k);
    if (!n) return;
    switch (below(r, 4)) {
    case 0:
        json_replace_member(r, n);
        break;
    case 1:
        if (n->string) {
            const char *key = fuzz_keys[below(r, sizeof fuzz_keys / sizeof fuzz_keys[0])];
            char *s = malloc(strlen(key) + 1);
            if (s) {
                strcpy(s, key);
                cJSON_free(n->string);
                n->string = s;
            }
        }
        break;
    case 2:
        if (n->child) cJSON_Delete(cJSON_DetachItemViaPointer(n, n->child));
        break;
    default: {
        /* A member replaced through its pointer has no key (cJSON keeps none), and
         * cJSON refuses to add an item without one: the copy is then ours to free. */
        cJSON *copy = n->child ? cJSON_Duplicate(n->child, 1) : NULL;
        int added = copy && (cJSON_IsObject(n) ? n->child->string && cJSON_AddItemToObject(n, n->child->string, copy)
                                               : cJSON_AddItemToArray(n, copy));
        if (copy && !added) cJSON_Delete(copy);
        break;
    }
    }
}

static char *mutate(rng *r, const char *seed) {
    if (below(r, 3) == 0) { /* bytes */
        size_t len = strlen(seed);
        char *s = malloc(len + 9);
        if (!s) return NULL;
        memcpy(s, seed, len + 1);
        for (int i = 0; i < 1 + (int)below(r, 3) && len; i++) {
            size_t at = below(r, len);
            static const char bytes[] = "{}[],:\"0-1.e\\ atx";
            if (below(r, 2)) s[at] = bytes[below(r, sizeof bytes - 1)];
            else memmove(s + at, s + at + 1, len - at), len--;
        }
        return s;
    }
    cJSON *root = cJSON_Parse(seed);
    if (!root) return NULL;
    for (int i = 0; i < 1 + (int)below(r, 3); i++) {
        if (below(r, 2)) json_replace_member(r, root);
        else json_edit(r, root);
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

TEST(kcase_fuzz_parser) {
    const char *seeds[] = {spec_example, sequence_case, mlx_case};
    const char *it_env = getenv("GDN_FUZZ_ITERS"), *seed_env = getenv("GDN_FUZZ_SEED");
    long iters = it_env && *it_env ? strtol(it_env, NULL, 0) : 100000;
    long seed = seed_env && *seed_env ? strtol(seed_env, NULL, 0) : 1;
    rng r;
    rng_seed(&r, (uint64_t)seed);
    long accepted = 0, rejected = 0;
    for (long it = 0; it < iters && !test_failed(); it++) {
        char *in = mutate(&r, seeds[below(&r, 3)]);
        if (!in) continue;
        char err[768] = "", *printed = NULL;
        int rc = round_trips(in, strlen(in), err, sizeof err, &printed);
        if (rc == 0) accepted++;
        else if (rc == -1) {
            rejected++;
            CHECK_MSG(err[0] && !strchr(err, '\n') && strncmp(err, "t.json:", 7) == 0,
                      "seed %ld iteration %ld: bad rejection '%s' of: %s", seed, it, err, in);
        } else {
            CHECK_MSG(0, "seed %ld iteration %ld: accepted but does not round-trip (%s): %s\nprinted: %s", seed, it, err,
                      in, printed ? printed : "(null)");
        }
        free(printed);
        free(in);
    }
    printf("  kcase fuzz: %ld inputs, %ld accepted, %ld rejected\n", iters, accepted, rejected);
}
