/* test_sw_front_cache.c — the front end's result on disk (front_cache.c): what is
 * read back generates the same C++ as what was stored, and an entry cut short or
 * damaged in any byte is refused (and removed), never parsed into a unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/front_cache.h"
#include "swmetal/sw_files.h"
#include "test.h"

static const char *cache_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "struct Params { uint n; float scale; };\n"
    "constant bool has_bias [[function_constant(0)]];\n"
    "constant uint width [[function_constant(3)]];\n"
    "kernel void scale(device float *x [[buffer(0)]], constant Params &p [[buffer(1)]],\n"
    "                  threadgroup float *t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {\n"
    "    if (is_function_constant_defined(width)) x[i] *= p.scale;\n"
    "}\n"
    "template <typename T> [[kernel, max_total_threads_per_threadgroup(64)]]\n"
    "void copy(device T *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = a[i]; }\n"
    "template [[host_name(\"copy_f32\")]] [[kernel]] decltype(copy<float>) copy<float>;\n"
    "template [[host_name(\"copy_i32\")]] [[kernel]] decltype(copy<int>) copy<int>;\n";

/* A cache directory of its own under /tmp ("" when it cannot be made). */
static void temp_cache(char *dir, size_t n) {
    snprintf(dir, n, "/tmp/gdn-front-cache-XXXXXX");
    if (!mkdtemp(dir)) dir[0] = 0;
}

static void remove_dir(const char *dir) {
    char *argv[] = {"rm", "-rf", (char *)dir, NULL};
    sw_run_process(argv, NULL, NULL);
}

/* The parsed test source as a result to store (the caller frees it). */
static int make_result(sw_front_result *r) {
    *r = (sw_front_result){0};
    char *err = NULL;
    int rc = msl_front_parse(cache_src, "cache.metal", &r->unit, &err);
    CHECK_MSG(rc == 0, "parse: %s", err ? err : "");
    free(err);
    r->sync_free = r->unit.emit_range = 1;
    r->atomic_free = r->unit.atomic_free = 1;
    r->lanes_text = strdup("// lanes text\n");
    return rc;
}

static void result_free(sw_front_result *r) {
    msl_unit_free(&r->unit);
    free(r->lanes_text);
    free(r->lanes_why);
}

static const char *test_key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(sw_front_cache_round_trip_generates_the_same_cpp) {
    char dir[64];
    temp_cache(dir, sizeof dir);
    CHECK(dir[0] != 0);
    sw_front_result r, back;
    if (!dir[0] || make_result(&r) != 0) return;
    sw_front_store(dir, test_key, &r);
    CHECK_EQ_INT(sw_front_load(dir, test_key, &back), 1);
    sw_fc_value fc = {.index = 3, .type = SW_FC_UINT, .v.u = 7};
    for (int only = -1; only < r.unit.nkernels; only++) {
        char *err = NULL;
        char *a = msl_front_emit(&r.unit, &fc, 1, only, &err), *b = msl_front_emit(&back.unit, &fc, 1, only, &err);
        CHECK_MSG(a && b && strcmp(a, b) == 0, "the C++ of kernel %d differs after the round trip", only);
        free(a);
        free(b);
        free(err);
    }
    CHECK_EQ_INT(back.unit.nconstants, 2);
    CHECK(back.unit.nconstants == 2 && back.unit.constants[1].tested == 1 && back.unit.constants[0].tested == 0);
    CHECK(back.sync_free == 1 && back.atomic_free == 1 && back.lanes_why == NULL);
    CHECK(back.lanes_text && strcmp(back.lanes_text, r.lanes_text) == 0);
    /* another key finds nothing */
    sw_front_result none;
    CHECK_EQ_INT(sw_front_load(dir, "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", &none), 0);
    result_free(&back);
    result_free(&r);
    remove_dir(dir);
}

/* Every truncation and every one-byte change of a stored entry is refused, and
 * the entry removed (so the next run writes a good one). */
TEST(sw_front_cache_refuses_a_damaged_entry) {
    char dir[64], path[200];
    temp_cache(dir, sizeof dir);
    sw_front_result r, back;
    if (!dir[0] || make_result(&r) != 0) return;
    sw_front_store(dir, test_key, &r);
    snprintf(path, sizeof path, "%s/fe-%s.front", dir, test_key);
    size_t len = 0;
    char *good = sw_read_file(path, &len);
    CHECK(good && len > 100);
    int trusted = 0, kept = 0;
    for (size_t cut = 0; good && cut < len; cut++) {
        sw_write_file_atomic(path, good, cut);
        if (sw_front_load(dir, test_key, &back)) {
            trusted++;
            result_free(&back);
        }
        kept += access(path, F_OK) == 0;
    }
    CHECK_MSG(trusted == 0, "%d truncated entries were trusted", trusted);
    CHECK_MSG(kept == 0, "%d truncated entries were left in place", kept);
    for (size_t at = 0; good && at < len; at++) {
        good[at] ^= 0x20;
        sw_write_file_atomic(path, good, len);
        good[at] ^= 0x20;
        if (sw_front_load(dir, test_key, &back)) {
            trusted++;
            result_free(&back);
        }
    }
    CHECK_MSG(trusted == 0, "%d entries with one byte changed were trusted", trusted);
    /* the good bytes again: read */
    if (good) sw_write_file_atomic(path, good, len);
    CHECK_EQ_INT(sw_front_load(dir, test_key, &back), 1);
    result_free(&back);
    free(good);
    result_free(&r);
    remove_dir(dir);
}

TEST(sw_front_cache_alias_round_trip_and_damage) {
    char dir[64], path[200], vkey[65] = "";
    temp_cache(dir, sizeof dir);
    if (!dir[0]) return;
    const char *v = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
    sw_alias_store(dir, test_key, v);
    CHECK(sw_alias_load(dir, test_key, vkey) == 1 && strcmp(vkey, v) == 0);
    snprintf(path, sizeof path, "%s/vk-%s.vkey", dir, test_key);
    size_t len = 0;
    char *good = sw_read_file(path, &len);
    int trusted = 0;
    for (size_t at = 0; good && at < len; at++) {
        good[at] ^= 0x01;
        sw_write_file_atomic(path, good, len);
        good[at] ^= 0x01;
        trusted += sw_alias_load(dir, test_key, vkey);
    }
    CHECK_MSG(trusted == 0, "%d aliases with one byte changed were trusted", trusted);
    free(good);
    remove_dir(dir);
}
