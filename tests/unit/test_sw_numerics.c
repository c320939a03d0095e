/* test_sw_numerics.c — the numeric checks' pieces (src/swmetal/numerics.c,
 * ir_numerics.c; issue 32 item 1) that run without a kernel: the numerics
 * variant's flags, binary16 and bfloat16 values in findings, and the IR pass's
 * edits of a module written here.  Kernels of each finding kind run
 * through the CLI in tests/cli/test_numerics.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/cxx.h"
#include "swmetal/ir_pass.h"
#include "swmetal/numerics.h"
#include "swmetal/sw_compile.h"
#include "test.h"


static int has_flag(const char **f, int n, const char *prefix) {
    for (int i = 0; i < n; i++)
        if (strncmp(f[i], prefix, strlen(prefix)) == 0) return 1;
    return 0;
}

TEST(sw_numerics_variant_flags) {
    const char *f[SW_CXX_MAX_FLAGS];
    int n = sw_cxx_kernel_flags(SW_INSTR_NUMERICS, 0, f, SW_CXX_MAX_FLAGS);
    CHECK(has_flag(f, n, "-fsanitize=signed-integer-overflow,integer-divide-by-zero,shift-exponent,float-cast-overflow,"
                         "implicit-integer-truncation"));
    CHECK(has_flag(f, n, "-DSW_NUMERICS=1"));
    CHECK(has_flag(f, n, "-fsanitize-recover=all"));
    CHECK(!has_flag(f, n, "-fsanitize=thread"));
    n = sw_cxx_kernel_flags(SW_INSTR_FULL, 0, f, SW_CXX_MAX_FLAGS); /* full = memory hooks + numerics */
    CHECK(has_flag(f, n, "-fsanitize=thread") && has_flag(f, n, "-DSW_NUMERICS=1"));
    n = sw_cxx_kernel_flags(SW_INSTR_TSAN, 1, f, SW_CXX_MAX_FLAGS);
    CHECK(has_flag(f, n, "-fsanitize=thread") && !has_flag(f, n, "-DSW_NUMERICS"));
    n = sw_cxx_kernel_flags(SW_INSTR_NONE, 0, f, SW_CXX_MAX_FLAGS); /* fast runs: no check at all */
    CHECK(!has_flag(f, n, "-fsanitize") && !has_flag(f, n, "-DSW_NUMERICS"));
}

TEST(sw_numerics_fp16_values) {
    CHECK(sw_num_fp16_value(0x7bff, 0) == 65504.0);
    CHECK(sw_num_fp16_value(0x3c00, 0) == 1.0);
    CHECK(sw_num_fp16_value(0x0001, 0) == ldexp(1, -24));
    CHECK(sw_num_fp16_value(0xc000, 0) == -2.0);
    CHECK(isinf(sw_num_fp16_value(0x7c00, 0)) && isnan(sw_num_fp16_value(0x7e00, 0)));
    CHECK(sw_num_fp16_value(0x3f80, 1) == 1.0);
    CHECK(sw_num_fp16_value(0x7f7f, 1) == ldexp(255, 120));
}

/* The numerics IR pass (ir_numerics.c) on clang 19's print format: a check after
 * each operation that can make Inf or NaN (scalar and vector, conversions, math
 * calls), none after those that cannot, the check's call at the operation's line,
 * and a phi whose predecessor block was split naming the block that now ends it. */
static const char pass_module[] =
    "define void @k(ptr %0, float %1) #0 !dbg !5 {\n"
    "  %3 = fadd float %1, 1.000000e+00, !dbg !10\n"
    "  br label %4\n"
    "\n"
    "4:                                                ; preds = %4, %2\n"
    "  %5 = phi float [ %3, %2 ], [ %9, %4 ]\n"
    "  %6 = fmul <4 x float> zeroinitializer, <float 1.0, float 2.0, float 3.0, float 4.0>, !dbg !11\n"
    "  %7 = fptrunc float %5 to half, !dbg !12\n"
    "  %8 = tail call float @llvm.exp.f32(float %5), !dbg !13\n"
    "  %9 = tail call float @llvm.fabs.f32(float %8), !dbg !14\n"
    "  %10 = fneg float %9\n"
    "  %11 = tail call float @powf(float %9, float %10), !dbg !15\n"
    "  br i1 true, label %4, label %12\n"
    "\n"
    "12:\n"
    "  ret void\n"
    "}\n";

TEST(sw_numerics_pass_checks_what_can_overflow) {
    extern const sw_ir_pass sw_ir_numerics_pass;
    const sw_ir_pass *p[1] = {&sw_ir_numerics_pass};
    msl_buf out = {0};
    char *err = NULL;
    CHECK_EQ_INT(sw_ir_run_passes(pass_module, strlen(pass_module), p, 1, &out, &err), 0);
    char *s = msl_buf_take(&out);
    if (!s) return;
    int calls = 0;
    for (const char *q = strstr(s, "call void @sw_rt_num_fp("); q; q = strstr(q + 1, "call void @sw_rt_num_fp(")) calls++;
    CHECK_EQ_INT(calls, 1 + 4 + 1 + 1 + 1); /* fadd, 4 lanes of fmul, fptrunc, exp, powf; not fabs, fneg */
    char want[128];
    /* fadd: SW_NUMF_FADD, float in and out (3), 2 operands; at its line */
    snprintf(want, sizeof want, "i32 %d, i32 1, double %%swn.0.ad0, double %%swn.0.bd0, double 0.000000e+00, double %%swn.0.rd0), !dbg !10",
             SW_NUMF_FADD | 3 << 8 | 3 << 12 | 2 << 16);
    CHECK(strstr(s, want) != NULL);
    CHECK(strstr(s, "%swn.1.a3 = extractelement <4 x float> zeroinitializer, i32 3") != NULL);
    CHECK(strstr(s, "%swn.1.ok0 = icmp eq i4 %swn.1.vb, -1") != NULL);
    CHECK(strstr(s, "%swn.1.l2 = extractelement <4 x i1> %swn.1.p, i32 2") != NULL); /* lane 2 reports if it is one */
    snprintf(want, sizeof want, "@sw_rt_num_fp(i32 %d,", SW_NUMF_TRUNC | 3 << 8 | 1 << 12 | 1 << 16);
    CHECK(strstr(s, want) != NULL);
    CHECK(strstr(s, "%swn.2.m = and i16 %swn.2.b, 32767") != NULL); /* half's bits */
    snprintf(want, sizeof want, "@sw_rt_num_fp(i32 %d,", SW_NUMF_POW | 3 << 8 | 3 << 12 | 2 << 16);
    CHECK(strstr(s, want) != NULL);
    /* the entry block (%2, after two unnamed arguments) and block 4 were split */
    CHECK(strstr(s, "phi float [ %3, %swn.0.c ], [ %9, %swn.4.c ]") != NULL);
    CHECK(strstr(s, "swn.4.c:\n  br i1 true, label %4, label %12") != NULL);
    const char *decl = strstr(s, "declare void @sw_rt_num_fp(");
    CHECK(decl && !strstr(decl + 1, "declare void @sw_rt_num_fp("));
    free(s);
}

/* d != 0 ? x / d : 0, its division speculated by the optimiser: checked at the
 * select, only where the select picks the quotient. */
TEST(sw_numerics_pass_checks_speculated_at_the_select) {
    extern const sw_ir_pass sw_ir_numerics_pass;
    static const char text[] = "define float @f(float %0, float %1) {\n"
                               "  %3 = fcmp une float %1, 0.000000e+00\n"
                               "  %4 = fdiv float %0, %1, !dbg !7\n"
                               "  %5 = select i1 %3, float %4, float 0.000000e+00\n"
                               "  ret float %5\n"
                               "}\n";
    const sw_ir_pass *p[1] = {&sw_ir_numerics_pass};
    msl_buf out = {0};
    char *err = NULL;
    CHECK_EQ_INT(sw_ir_run_passes(text, strlen(text), p, 1, &out, &err), 0);
    char *s = msl_buf_take(&out);
    if (!s) return;
    const char *sel = strstr(s, "%5 = select"), *test = strstr(s, "%swn.0.b = bitcast float %4 to i32");
    CHECK(sel && test && sel < test); /* after the select, not after the fdiv */
    CHECK(strstr(s, "%swn.0.n = xor i1 %3, true") && strstr(s, "%swn.0.ok = or i1 %swn.0.ok0, %swn.0.n"));
    CHECK(strstr(s, "br i1 %swn.0.ok, label %swn.0.c, label %swn.0.s, !dbg !7, !prof !3999999990") != NULL);
    free(s);
}

/* A module without float operations is written back as read. */
TEST(sw_numerics_pass_leaves_integer_code) {
    extern const sw_ir_pass sw_ir_numerics_pass;
    static const char text[] = "define i32 @f(i32 %0) {\n  %2 = add i32 %0, 1\n  ret i32 %2\n}\n";
    const sw_ir_pass *p[1] = {&sw_ir_numerics_pass};
    msl_buf out = {0};
    char *err = NULL;
    CHECK_EQ_INT(sw_ir_run_passes(text, strlen(text), p, 1, &out, &err), 0);
    char *s = msl_buf_take(&out);
    CHECK(s && strcmp(s, text) == 0);
    free(s);
}
