/* test_sw_front.c — the MSL pre-pass alone (no compiler): kernel discovery,
 * bindings, rewrites, function constants and error positions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/msl_front.h"
#include "msl/msl_include.h"
#include "test.h"

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static const msl_kernel *find_kernel(const msl_unit *u, const char *name) {
    for (int i = 0; i < u->nkernels; i++)
        if (strcmp(u->kernels[i].host_name, name) == 0) return &u->kernels[i];
    return NULL;
}

/* Runs the pre-pass on src; a failure is the test's, with the pre-pass's message.
 * Returns 0 when u holds the result (the caller frees it). */
static int parse_ok(const char *src, const char *name, msl_unit *u) {
    char *err = NULL;
    int rc = msl_front_parse(src, name, u, &err);
    CHECK_MSG(rc == 0, "%s: parse failed: %s", name, err ? err : "");
    free(err);
    return rc;
}

static const char *discovery_src =
    "#include <metal_stdlib>\n"                                                        /* 1 */
    "using namespace metal;\n"                                                         /* 2 */
    "kernel void plain(device const float *a [[buffer(0)]],\n"                         /* 3 */
    "                  device float *b [[ buffer(5) ]],\n"                             /* 4 */
    "                  uint3 gid [[thread_position_in_grid]]) { b[gid.x] = a[0]; }\n"  /* 5 */
    "[[kernel]] void attr_form(threadgroup float *t [[threadgroup(2)]],\n"             /* 6 */
    "    ushort lane [[thread_index_in_simdgroup]]) {}\n"                              /* 7 */
    "template <typename T, int D = 4>\n"                                               /* 8 */
    "[[kernel]] void templ(device T *x [[buffer(1)]], uint i [[thread_index_in_threadgroup]]) {}\n" /* 9 */
    "template [[host_name(\"templ_\" \"f32\")]] [[kernel]] decltype(templ<float, 64>) templ<float, 64>;\n" /* 10 */
    "namespace inner { kernel void nested(device int *o [[buffer(3)]]) {} }\n"          /* 11 */
    "template [[host_name(\"old_style\")]] [[kernel]] void templ<half>(device half *x [[buffer(1)]],\n" /* 12 */
    "    uint i [[thread_index_in_threadgroup]]);\n"                                   /* 13 */
    "void not_a_kernel(device float *p) {}\n";                                         /* 14 */

TEST(sw_front_finds_kernels_and_bindings) {
    msl_unit u;
    if (parse_ok(discovery_src, "disc.metal", &u)) return;
    CHECK_EQ_INT(u.nkernels, 5);
    const msl_kernel *k = find_kernel(&u, "plain");
    CHECK(k != NULL);
    if (k) {
        CHECK(strcmp(k->callee, "::plain") == 0);
        CHECK_EQ_INT(k->line, 3);
        CHECK_EQ_INT(k->nbindings, 3);
        CHECK_EQ_INT(k->bindings[0].kind, SW_BIND_BUFFER);
        CHECK_EQ_INT(k->bindings[0].index, 0);
        CHECK(strcmp(k->bindings[0].param, "a") == 0);
        CHECK_EQ_INT(k->bindings[1].index, 5);
        CHECK_EQ_INT(k->bindings[1].line, 4);
        CHECK_EQ_INT(k->bindings[2].kind, SW_BIND_ATTR);
        CHECK_EQ_INT(k->bindings[2].index, SW_ATTR_THREAD_POSITION_IN_GRID);
        CHECK(strcmp(k->bindings[2].param, "gid") == 0);
    }
    k = find_kernel(&u, "attr_form");
    CHECK(k && k->nbindings == 2 && k->bindings[0].kind == SW_BIND_THREADGROUP && k->bindings[0].index == 2 &&
          k->bindings[1].index == SW_ATTR_THREAD_INDEX_IN_SIMDGROUP);
    k = find_kernel(&u, "templ_f32");
    CHECK(k != NULL);
    if (k) {
        CHECK(strcmp(k->callee, "::templ<float, 64>") == 0);
        CHECK_EQ_INT(k->line, 10);
        CHECK(k->nbindings == 2 && k->bindings[0].index == 1 && strcmp(k->bindings[1].param, "i") == 0);
    }
    k = find_kernel(&u, "nested");
    CHECK(k && strcmp(k->callee, "::inner::nested") == 0 && k->bindings[0].index == 3);
    k = find_kernel(&u, "old_style");
    CHECK(k && strcmp(k->callee, "::templ<half>") == 0 && k->nbindings == 2);
    CHECK(find_kernel(&u, "not_a_kernel") == NULL);
    /* attributes and `kernel` are blanked in place: no line moves */
    CHECK_EQ_INT(count_lines(u.text), count_lines(discovery_src));
    CHECK(strstr(u.text, "[[") == NULL);
    CHECK(strstr(u.text, "kernel void") == NULL);
    CHECK(strstr(u.text, "#include <metal_stdlib>") != NULL); /* removed by msl_expand_source, not here */
    msl_unit_free(&u);
}

TEST(sw_front_every_id_attribute) {
    static const struct {
        const char *name;
        int attr;
    } attrs[] = {
        {"thread_position_in_grid", SW_ATTR_THREAD_POSITION_IN_GRID},
        {"thread_position_in_threadgroup", SW_ATTR_THREAD_POSITION_IN_THREADGROUP},
        {"threadgroup_position_in_grid", SW_ATTR_THREADGROUP_POSITION_IN_GRID},
        {"threads_per_threadgroup", SW_ATTR_THREADS_PER_THREADGROUP},
        {"threadgroups_per_grid", SW_ATTR_THREADGROUPS_PER_GRID},
        {"threads_per_grid", SW_ATTR_THREADS_PER_GRID},
        {"thread_index_in_threadgroup", SW_ATTR_THREAD_INDEX_IN_THREADGROUP},
        {"simdgroup_index_in_threadgroup", SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP},
        {"thread_index_in_simdgroup", SW_ATTR_THREAD_INDEX_IN_SIMDGROUP},
        {"simdgroups_per_threadgroup", SW_ATTR_SIMDGROUPS_PER_THREADGROUP},
        {"threads_per_simdgroup", SW_ATTR_THREADS_PER_SIMDGROUP},
        {"thread_execution_width", SW_ATTR_THREAD_EXECUTION_WIDTH},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, "kernel void k(uint2 v [[%s]], ushort s [[ %s ]]) {}\n", attrs[i].name,
                 attrs[i].name);
        msl_unit u;
        char *err = NULL;
        int rc = msl_front_parse(src, "a.metal", &u, &err);
        CHECK_MSG(rc == 0, "%s: %s", attrs[i].name, err ? err : "");
        if (rc) {
            free(err);
            continue;
        }
        CHECK(u.nkernels == 1 && u.kernels[0].nbindings == 2);
        CHECK_EQ_INT(u.kernels[0].bindings[0].kind, SW_BIND_ATTR);
        CHECK_EQ_INT(u.kernels[0].bindings[0].index, attrs[i].attr);
        CHECK_EQ_INT(u.kernels[0].bindings[1].index, attrs[i].attr);
        msl_unit_free(&u);
    }
}

static const char *tg_src = "kernel void k(device float *o [[buffer(0)]]) {\n"          /* 1 */
                            "    threadgroup float tile[64][65], row[8];\n"              /* 2 */
                            "    threadgroup atomic_uint counter;\n"                     /* 3 */
                            "    threadgroup float *p = &tile[0][0];\n"                  /* 4 */
                            "    threadgroup\n"                                          /* 5 */
                            "        vec<float, 4> v4[2];\n"                             /* 6 */
                            "    o[0] = tile[1][2] + row[0] + p[0];\n"                   /* 7 */
                            "    alignas(16) threadgroup half hx[4]; threadgroup alignas(8) uint ux[2];\n" /* 8 */
                            "}\n";

TEST(sw_front_threadgroup_rewrite) {
    msl_unit u;
    if (parse_ok(tg_src, "tg.metal", &u)) return;
    CHECK_EQ_INT(count_lines(u.text), count_lines(tg_src));
    CHECK(strstr(u.text, "using sw_tg_v_tile = float [64][65]; using sw_tg_t_tile = threadgroup sw_tg_v_tile; "
                         "sw_tg_t_tile &tile = *(sw_tg_t_tile *)(sw_rt_tg_alloc_init(sizeof(sw_tg_t_tile), "
                         "alignof(sw_tg_t_tile) < 16 ? 16 : alignof(sw_tg_t_tile), \"tile\", 2, nullptr));") != NULL);
    CHECK(strstr(u.text, "using sw_tg_v_row = float [8];") != NULL);
    CHECK(strstr(u.text, "using sw_tg_v_counter = atomic_uint ;") != NULL);
    CHECK(strstr(u.text, "\"counter\", 3, nullptr)") != NULL);
    CHECK(strstr(u.text, "threadgroup float *p = &tile[0][0];") != NULL); /* pointers stay */
    CHECK(strstr(u.text, "using sw_tg_v_v4 = vec<float, 4> [2];") != NULL);
    CHECK(strstr(u.text, "\"v4\", 6, nullptr)") != NULL);
    CHECK(strstr(u.text, "using sw_tg_v_hx = half [4];") != NULL);
    CHECK(strstr(u.text, "using sw_tg_v_ux =  uint [2];") != NULL);
    CHECK(strstr(u.text, "alignas") == NULL);
    /* the two-line declaration keeps its newline, so line 7 is still line 7 */
    const char *l7 = u.text;
    for (int i = 1; i < 7; i++) l7 = strchr(l7, '\n') + 1;
    CHECK(strncmp(l7, "    o[0] = tile[1][2]", 21) == 0);
    msl_unit_free(&u);
}

TEST(sw_front_function_constants) {
    const char *src = "constant bool has_mask [[function_constant(300)]];\n"
                      "constant uint  block  [[function_constant(7)]];\n"
                      "constant half  hs     [[function_constant(8)]];\n"
                      "constant bool derived = is_function_constant_defined(has_mask) && has_mask;\n"
                      "kernel void k(device float *o [[buffer(0)]]) { if (has_mask) o[0] = block; }\n";
    msl_unit u;
    if (parse_ok(src, "fc.metal", &u)) return;
    CHECK_EQ_INT(u.nconstants, 3);
    CHECK(u.constants[0].index == 300 && u.constants[0].type == SW_FC_BOOL &&
          strcmp(u.constants[0].name, "has_mask") == 0);
    CHECK(u.constants[1].index == 7 && u.constants[1].type == SW_FC_UINT);
    CHECK(u.constants[2].index == 8 && u.constants[2].type == SW_FC_HALF);
    CHECK(strstr(u.text, "static constexpr bool has_mask = SW_FC_DEF_300 ? static_cast<bool>(SW_FC_VAL_300) : "
                         "bool{}; static constexpr bool sw_fcdef_has_mask = SW_FC_DEF_300;") != NULL);
    CHECK_EQ_INT(count_lines(u.text), count_lines(src));

    sw_fc_value vals[2] = {{.index = 300, .type = SW_FC_BOOL, .v.u = 1}, {.index = 8, .type = SW_FC_FLOAT, .v.f = 1.5}};
    char *err = NULL;
    char *cpp = msl_front_emit(&u, vals, 2, -1, &err);
    CHECK_MSG(cpp != NULL, "emit failed: %s", err ? err : "");
    free(err);
    if (cpp) {
        CHECK(strstr(cpp, "#define SW_FC_DEF_300 1\n#define SW_FC_VAL_300 true\n") != NULL);
        CHECK(strstr(cpp, "#define SW_FC_DEF_7 0\n") != NULL);       /* not supplied: undefined, value-initialised */
        CHECK(strstr(cpp, "#define SW_FC_VAL_8 (0x1.8p+0)\n") != NULL);
        CHECK(strstr(cpp, "#include \"metal_stdlib.h\"") != NULL);
        CHECK(strstr(cpp, "extern \"C\" const int sw_abi_version = SW_ABI_VERSION;") != NULL);
        free(cpp);
    }
    msl_unit_free(&u);
}

TEST(sw_front_vector_constructors) {
    const char *src = "kernel void k(device float4 *o [[buffer(0)]]) {\n"
                      "  float2 a = float2(1, 2);\n"
                      "  o[0] = float4(a.xy, metal::float2(3.0f), 4);\n"
                      "  o[1] = vec<float, 4>(0); o[2].xy = a; o[3] = float4(half4(a.x));\n"
                      "  o[4] = float4(0.5h, 2h, 1e-3h, 0x10);\n"
                      "}\n";
    msl_unit u;
    if (parse_ok(src, "v.metal", &u)) return;
    CHECK(strstr(u.text, "float2 a = ::metal::sw_mk<float2>(1, 2);") != NULL);
    CHECK(strstr(u.text, "o[0] = ::metal::sw_mk<float4>(a.xy, metal::sw_mk<float2>(3.0f), 4);") != NULL);
    CHECK(strstr(u.text, "o[1] = ::metal::sw_mk<vec<float, 4>>(0);") != NULL);
    CHECK(strstr(u.text, "::metal::sw_mk<float4>(::metal::sw_mk<half4>(a.x))") != NULL);
    CHECK(strstr(u.text, "::metal::sw_mk<float4>(((half)0.5), ((half)2), ((half)1e-3), 0x10)") != NULL);
    msl_unit_free(&u);
}

/* Atomic fetch-ops whose value nothing reads become sw_discard_* (the device may apply
 * them later, in threadgroup order); every form whose value may be read keeps its name. */
TEST(sw_front_discarded_atomic_fetch_ops) {
    const char *src = "kernel void k(device atomic_float *f [[buffer(0)]], device atomic_uint *u [[buffer(1)]],\n"
                      "              device float *o [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
                      "  atomic_fetch_add_explicit(&f[0], 1.0f, memory_order_relaxed);\n"
                      "  metal::atomic_fetch_max_explicit(&f[1], 2.0f, memory_order_relaxed);\n"
                      "  if (i > 3) ::metal::atomic_fetch_sub_explicit(&f[2], 3.0f, memory_order_relaxed);\n"
                      "  else atomic_fetch_min_explicit(&f[3], 4.0f, memory_order_relaxed);\n"
                      "  for (uint j = 0; j < 2; j++) atomic_fetch_or_explicit(&u[0], j, memory_order_relaxed);\n"
                      "  (void)atomic_fetch_xor_explicit(&u[1], 5u, memory_order_relaxed);\n"
                      "  { atomic_fetch_and_explicit(&u[2], 6u, memory_order_relaxed); }\n"
                      "  o[0] = atomic_fetch_add_explicit(&f[4], 7.0f, memory_order_relaxed);\n"
                      "  o[1] = (float)atomic_fetch_add_explicit(&f[5], 8.0f, memory_order_relaxed);\n"
                      "  o[2] = max(atomic_fetch_max_explicit(&f[6], 9.0f, memory_order_relaxed), 1.0f);\n"
                      "  for (uint j = 0; j < 2; atomic_fetch_add_explicit(&u[3], 1u, memory_order_relaxed)) j++;\n"
                      "  o[3] = i ? atomic_fetch_add_explicit(&f[7], 1.0f, memory_order_relaxed) : 0.0f;\n"
                      "  for (uint n = 0; atomic_fetch_sub_explicit(&u[4], 1u, memory_order_relaxed); ) n++;\n"
                      "  o[4] = ({ o[5] = 1; atomic_fetch_add_explicit(&f[8], 1.0f, memory_order_relaxed); });\n"
                      "}\n";
    msl_unit u;
    if (parse_ok(src, "a.metal", &u)) return;
    CHECK(strstr(u.text, "\n  sw_discard_atomic_fetch_add_explicit(&f[0], 1.0f,") != NULL);
    CHECK(strstr(u.text, "\n  metal::sw_discard_atomic_fetch_max_explicit(&f[1],") != NULL);
    CHECK(strstr(u.text, "if (i > 3) ::metal::sw_discard_atomic_fetch_sub_explicit(&f[2],") != NULL);
    CHECK(strstr(u.text, "else sw_discard_atomic_fetch_min_explicit(&f[3],") != NULL);
    CHECK(strstr(u.text, "j++) sw_discard_atomic_fetch_or_explicit(&u[0],") != NULL);
    CHECK(strstr(u.text, "(void)sw_discard_atomic_fetch_xor_explicit(&u[1],") != NULL);
    CHECK(strstr(u.text, "{ sw_discard_atomic_fetch_and_explicit(&u[2],") != NULL);
    CHECK(strstr(u.text, "o[0] = atomic_fetch_add_explicit(&f[4],") != NULL);
    CHECK(strstr(u.text, "o[1] = (float)atomic_fetch_add_explicit(&f[5],") != NULL);
    CHECK(strstr(u.text, "max(atomic_fetch_max_explicit(&f[6],") != NULL);
    CHECK(strstr(u.text, "j < 2; atomic_fetch_add_explicit(&u[3],") != NULL);
    CHECK(strstr(u.text, "sw_discard_atomic_fetch_add_explicit(&f[7],") == NULL);
    CHECK(strstr(u.text, "n = 0; atomic_fetch_sub_explicit(&u[4],") != NULL);
    CHECK(strstr(u.text, "o[5] = 1; atomic_fetch_add_explicit(&f[8],") != NULL);
    /* the rename moves no line */
    int lines = 0, src_lines = 0;
    for (const char *c = u.text; *c; c++) lines += *c == '\n';
    for (const char *c = src; *c; c++) src_lines += *c == '\n';
    CHECK_EQ_INT(lines, src_lines);
    msl_unit_free(&u);
}

/* A library without atomics tells the prelude so: its device fences compile to nothing. */
TEST(sw_front_emit_marks_atomic_free_text) {
    const char *src = "kernel void k(device float *o [[buffer(0)]]) {\n"
                      "  threadgroup_barrier(mem_flags::mem_device); o[0] = 1; }\n";
    msl_unit u;
    if (parse_ok(src, "f.metal", &u)) return;
    for (int free_of = 0; free_of < 2; free_of++) {
        u.atomic_free = free_of;
        char *err = NULL;
        char *cpp = msl_front_emit(&u, NULL, 0, -1, &err);
        CHECK_MSG(cpp != NULL, "emit failed: %s", err ? err : "");
        free(err);
        if (!cpp) continue;
        char *def = strstr(cpp, "#define SW_ATOMIC_FREE 1\n"), *inc = strstr(cpp, "#include \"metal_stdlib.h\"");
        CHECK_MSG(free_of ? def && inc && def < inc : !def, "atomic_free %d: define %s", free_of,
                  def ? "present" : "absent");
        free(cpp);
    }
    msl_unit_free(&u);
}

static void expect_error(const char *src, const char *want_prefix, const char *want_text) {
    msl_unit u;
    char *err = NULL;
    int rc = msl_front_parse(src, "bad.metal", &u, &err);
    CHECK_MSG(rc == -1, "expected an error containing '%s'", want_text);
    if (rc == 0) {
        msl_unit_free(&u);
        return;
    }
    CHECK_MSG(err && strncmp(err, want_prefix, strlen(want_prefix)) == 0, "error '%s' does not start with '%s'",
              err ? err : "(null)", want_prefix);
    CHECK_MSG(err && strstr(err, want_text), "error '%s' lacks '%s'", err ? err : "(null)", want_text);
    free(err);
}

TEST(sw_front_error_positions) {
    expect_error("kernel void k(device float *o [[buffer(0)]]) {\n"
                 "  if (o[0] > 0) {\n"
                 "    o[0] = 1;\n"
                 "}\n",
                 "bad.metal:1:46: error: ", "'{' is never closed");
    expect_error("kernel void k(device float *o [[buffer(0)]]) {\n"
                 "  o[0] = (1 + 2];\n"
                 "}\n",
                 "bad.metal:2:16: error: ", "']' does not close the '(' opened at line 2");
    expect_error("kernel void k(device float *o [[buffer(0)]],\n"
                 "              uint gid [[thread_position_in_mesh]]) {}\n",
                 "bad.metal:2:24: error: ", "unknown attribute 'thread_position_in_mesh' on kernel parameter 'gid'");
    expect_error("kernel void k(device float *o [[buffer(99)]]) {}\n", "bad.metal:1:31: error: ", "0..30");
    expect_error("constant double d [[function_constant(1)]];\n", "bad.metal:1:10: error: ", "type 'double'");
    expect_error("kernel void k(device float *o [[buffer(0)]]) {}\nkernel void k(device float *o [[buffer(0)]]) {}\n",
                 "bad.metal:2:1: error: ", "two kernels named 'k' (the first at line 1)");
    expect_error("kernel void k(device float *o [[buffer(0)]]) { const char *s = \"abc; }\n",
                 "bad.metal:1:64: error: ", "missing terminating");
    /* line markers (from clang -E) move the reported position */
    expect_error("# 40 \"user.metal\"\nkernel void k(uint gid [[thread_position_in_mesh]]) {}\n",
                 "user.metal:40:24: error: ", "unknown attribute");
}

TEST(sw_front_prepare_source_strips_metal_includes) {
    char *err = NULL;
    char *out = msl_expand_source("#include <metal_stdlib>\n  #  include <metal_simdgroup_matrix>\n"
                                  "#include \"mine.h\"\n/* #include <metal_x> */ int x;\n",
                                  "we\"ird.metal", NULL, MSL_EXPAND_SOFTWARE, &err);
    CHECK(out != NULL);
    if (!out) return;
    CHECK(strcmp(out, "#line 1 \"we\\\"ird.metal\"\n\n  \n#include \"mine.h\"\n/* #include <metal_x> */ int x;\n") ==
          0);
    free(out);
}

/* #pragma once inside a false #if must not hide the header from a later include;
 * an include that is not found is left for the compiler; -D comes first. */
TEST(sw_front_expand_includes) {
    char dir[] = "/tmp/gdnbench-incl-XXXXXX";
    if (!mkdtemp(dir)) SKIP("cannot create a temporary directory");
    char hpath[128], mpath[128];
    snprintf(hpath, sizeof hpath, "%s/h.h", dir);
    snprintf(mpath, sizeof mpath, "%s/m.metal", dir);
    FILE *f = fopen(hpath, "w");
    if (f) {
        fputs("#pragma once\nint from_h;\n", f);
        fclose(f);
    }
    const char *src = "#if 0\n#include \"h.h\"\n#endif\n#include \"h.h\"\n#include \"h.h\"\n#include \"nowhere.h\"\n";
    msl_source_opts o = {.defines = {"A=1", "B"}, .ndefines = 2};
    char *err = NULL;
    char *out = msl_expand_source(src, mpath, &o, MSL_EXPAND_SOFTWARE, &err);
    CHECK_MSG(out != NULL, "%s", err ? err : "");
    if (out) {
        CHECK(strncmp(out, "#define A 1\n#define B 1\n#line 1 \"", 33) == 0);
        /* inlined under the #if 0 and after it, each guarded: the preprocessor keeps the second */
        int n = 0;
        for (const char *p = out; (p = strstr(p, "int from_h;")) != NULL; p++) n++;
        CHECK_EQ_INT(n, 2);
        CHECK(strstr(out, "#ifndef __SW_ONCE_0\n#define __SW_ONCE_0\n#line 1 ") != NULL);
        CHECK(strstr(out, "#include \"nowhere.h\"") != NULL);
        CHECK(strstr(out, "#line 5 ") != NULL); /* back in m.metal after the include on line 4 */
    }
    free(out);
    free(err);
    unlink(hpath);
    rmdir(dir);
}

/* Struct layout tables in the generated C++ (msl_emit_struct.c): a struct defined
 * once gets one, by `struct NAME {` or by C's `typedef struct {...} NAME;`; a name
 * defined twice (two namespaces) gets none, since the compiler alone knows which
 * one the kernel takes. */
TEST(sw_front_struct_tables_from_one_definition) {
    const char *src = "struct P { uint n; float s; };\n"
                      "typedef struct { int a; int b; } T;\n"
                      "namespace x { struct Q { int q; }; }\n"
                      "namespace y { struct Q { float q; }; }\n"
                      "kernel void k(constant P &p [[buffer(0)]], constant T &t [[buffer(1)]],\n"
                      "              constant x::Q &q [[buffer(2)]], device float *o [[buffer(3)]]) {}\n";
    msl_unit u;
    if (parse_ok(src, "tables.metal", &u)) return;
    char *err = NULL;
    char *cpp = msl_front_emit(&u, NULL, 0, -1, &err);
    CHECK(cpp != NULL);
    if (cpp) {
        CHECK(strstr(cpp, "static const sw_struct_layout sw_struct_0_0 = {\"P\"") != NULL);
        CHECK(strstr(cpp, "{\"s\", offsetof(sw_struct_type_0_0, s)") != NULL);
        CHECK(strstr(cpp, "static const sw_struct_layout sw_struct_0_1 = {\"T\"") != NULL);
        CHECK(strstr(cpp, "sw_struct_0_2") == NULL);
        CHECK(strstr(cpp, "sw_struct_0_3") == NULL);
    }
    free(cpp);
    free(err);
    msl_unit_free(&u);
}
