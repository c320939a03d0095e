/* test_ir_target.c — moving a module between targets (src/swmetal/ir_target.c) on
 * text in clang 19's print format: what the canonical middle end must not see (the
 * host's datalayout, triple, CPU attributes, comdats), what comes back for the last
 * run, and the check of library calls the middle end introduced.  (That whole
 * kernels' count tables agree across front ends: tests/cli/test_ir_canonical.sh.) */
#include <stdlib.h>
#include <string.h>

#include "swmetal/clang_step.h"
#include "swmetal/count.h"
#include "swmetal/ir_pass.h"
#include "swmetal/ir_target.h"
#include "swmetal/sw_compile.h"
#include "test.h"

static const char front_end[] =
    "; ModuleID = 'k.cpp'\n"
    "source_filename = \"k.cpp\"\n"
    "target datalayout = \"e-m:o-i64:64-i128:128-n32:64-S128-Fn32\"\n"
    "target triple = \"arm64-apple-macosx14.0.0\"\n"
    "\n"
    "$_Z1fv = comdat any\n"
    "@g = linkonce_odr global i32 0, comdat, align 4\n"
    "@h = linkonce_odr global i64 0, comdat($_Z1fv), align 8\n"
    "@s = private constant [9 x i8] c\"a comdat\\00\", align 1\n"
    "\n"
    "define linkonce_odr void @_Z1fv() #0 comdat {\n"
    "  %1 = call float @expf(float 1.0) #3\n"
    "  ret void\n"
    "}\n"
    "define internal void @init() #0 section \".text.startup\" comdat($_Z1fv) {\n"
    "  ret void\n"
    "}\n"
    "declare float @expf(float) #1\n"
    "declare float @llvm.fabs.f32(float) #2\n"
    "\n"
    "attributes #0 = { mustprogress nounwind ssp \"frame-pointer\"=\"non-leaf\" \"target-cpu\"=\"apple-m1\" "
    "\"target-features\"=\"+neon,+v8.5a\" \"tune-cpu\"=\"generic\" }\n"
    "attributes #1 = { nounwind \"target-cpu\"=\"apple-m1\" \"target-features\"=\"+neon,+v8.5a\" }\n"
    "attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }\n"
    "attributes #3 = { nounwind }\n";

static char *stripped(void) {
    msl_buf b = {0};
    sw_ir_strip_target(front_end, sizeof front_end - 1, &b);
    return msl_buf_take(&b);
}

TEST(ir_target_strip_leaves_no_target_cpu_or_comdat) {
    char *s = stripped();
    CHECK(s && !strstr(s, "target datalayout") && !strstr(s, "target triple"));
    CHECK(!strstr(s, "target-cpu") && !strstr(s, "target-features") && !strstr(s, "tune-cpu"));
    CHECK_MSG(!strstr(s, "$_Z1fv") && !strstr(s, "comdat,") && !strstr(s, "comdat {") && !strstr(s, "comdat("),
              "a comdat is left: %s", s);
    /* what is not the target's stays, byte for byte */
    CHECK(strstr(s, "attributes #0 = { mustprogress nounwind ssp \"frame-pointer\"=\"non-leaf\" }\n"));
    CHECK(strstr(s, "@g = linkonce_odr global i32 0, align 4\n"));
    CHECK(strstr(s, "@h = linkonce_odr global i64 0, align 8\n"));
    CHECK(strstr(s, "c\"a comdat\\00\""));
    CHECK(strstr(s, "define linkonce_odr void @_Z1fv() #0 {\n"));
    CHECK(strstr(s, "define internal void @init() #0 section \".text.startup\" {\n"));
    CHECK(strstr(s, "attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }\n"));
    free(s);
}

TEST(ir_target_put_back_gives_the_front_ends_target_to_functions) {
    char *err = NULL;
    sw_ir_target *t = sw_ir_target_read(front_end, sizeof front_end - 1, &err);
    CHECK(t && !err);
    if (!t) return;
    char *s = stripped();
    /* the middle end renumbers groups and writes its own target lines */
    msl_buf m = {0};
    msl_buf_puts(&m, "target datalayout = \"e-m:e-i64:64\"\ntarget triple = \"x86_64-unknown-linux-gnu\"\n");
    msl_buf_puts(&m, s);
    char *mid = msl_buf_take(&m);
    msl_buf b = {0};
    sw_ir_put_target(mid, strlen(mid), t, &b);
    char *back = msl_buf_take(&b);
    static const char cpu[] = " \"target-cpu\"=\"apple-m1\" \"target-features\"=\"+neon,+v8.5a\" \"tune-cpu\"=\"generic\"";
    CHECK(strstr(back, "target datalayout = \"e-m:o-i64:64-i128:128-n32:64-S128-Fn32\"\n"
                       "target triple = \"arm64-apple-macosx14.0.0\"\n"));
    CHECK(!strstr(back, "x86_64") && !strstr(back, "e-m:e-i64:64"));
    char want0[512], want1[256];
    snprintf(want0, sizeof want0, "attributes #0 = { mustprogress nounwind ssp \"frame-pointer\"=\"non-leaf\"%s }\n", cpu);
    snprintf(want1, sizeof want1, "attributes #1 = { nounwind%s }\n", cpu);
    CHECK_MSG(strstr(back, want0) && strstr(back, want1), "%s", back);
    /* an intrinsic's group and a call site's get no CPU */
    CHECK(strstr(back, "attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }\n"));
    CHECK(strstr(back, "attributes #3 = { nounwind }\n"));
    free(back);
    free(mid);
    free(s);
    sw_ir_target_free(t);
}

TEST(ir_target_read_needs_a_triple) {
    static const char no_triple[] = "define void @f() {\n  ret void\n}\n";
    char *err = NULL;
    CHECK(sw_ir_target_read(no_triple, sizeof no_triple - 1, &err) == NULL);
    CHECK(err && strstr(err, "triple"));
    free(err);
}

TEST(ir_target_new_calls_must_resolve_here) {
    static const char before[] = "declare float @expf(float)\ndefine void @k() {\n  ret void\n}\n";
    static const char known[] = "declare float @expf(float)\ndeclare float @llvm.exp2.f32(float)\n"
                                "declare double @sqrt(double)\ndefine void @k() {\n  ret void\n}\n";
    static const char unknown[] = "declare float @expf(float)\ndeclare void @gdn_no_such_libcall_f(ptr, ptr)\n";
    char *err = NULL;
    CHECK(sw_ir_check_new_calls(before, sizeof before - 1, known, sizeof known - 1, &err) == 0 && !err);
    CHECK(sw_ir_check_new_calls(before, sizeof before - 1, unknown, sizeof unknown - 1, &err) == -1);
    CHECK_MSG(err && strstr(err, "gdn_no_such_libcall_f") && !strchr(err, '\n'), "%s", err ? err : "(none)");
    free(err);
}

TEST(ir_target_the_count_pass_and_only_it_asks_for_the_canonical_middle_end) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    CHECK(sw_ir_canonical(p, 1) == 1);
    extern const sw_ir_pass sw_ir_numerics_pass;
    const sw_ir_pass *q[1] = {&sw_ir_numerics_pass};
    CHECK(sw_ir_canonical(q, 1) == 0);
    /* and the cache key says so: an object built the other way is never served */
    char sig[256];
    sw_ir_pass_signature(SW_INSTR_COUNT, sig, sizeof sig);
    CHECK_MSG(strstr(sig, "count:") && strstr(sig, "+canonical1"), "%s", sig);
}

/* The last run of a canonical build chooses the CPU (clang_step.c): the module put
 * back names none, and that run's flags are the plain variant's (this host's CPU,
 * the vectorisers), not the counting variant's scalar ones. */
TEST(ir_target_the_last_run_compiles_as_the_plain_variant) {
    char *err = NULL;
    sw_ir_target *t = sw_ir_target_read(front_end, sizeof front_end - 1, &err);
    CHECK(t && !err);
    if (!t) return;
    sw_ir_target_forget_cpu(t);
    char *s = stripped();
    msl_buf b = {0};
    sw_ir_put_target(s, strlen(s), t, &b);
    char *back = msl_buf_take(&b);
    CHECK(strstr(back, "target triple = \"arm64-apple-macosx14.0.0\"\n"));
    CHECK_MSG(!strstr(back, "target-cpu") && !strstr(back, "target-features") && !strstr(back, "tune-cpu"), "%s", back);
    free(back);
    free(s);
    sw_ir_target_free(t);

    const char *last[SW_CXX_MAX_FLAGS], *plain[SW_CXX_MAX_FLAGS], *counting[SW_CXX_MAX_FLAGS];
    int nl = sw_clang_flags(SW_INSTR_COUNT, BUILD_CODEGEN, last, SW_CXX_MAX_FLAGS);
    int np = sw_clang_flags(SW_INSTR_NONE, BUILD_RUN, plain, SW_CXX_MAX_FLAGS);
    int nc = sw_clang_flags(SW_INSTR_COUNT, BUILD_RUN, counting, SW_CXX_MAX_FLAGS);
    CHECK_EQ_INT(nl, np);
    for (int i = 0; i < nl && i < np; i++) CHECK_MSG(strcmp(last[i], plain[i]) == 0, "%s vs %s", last[i], plain[i]);
    int scalar = 0;
    for (int i = 0; i < nc; i++) scalar |= strcmp(counting[i], "-fno-vectorize") == 0;
    CHECK_MSG(scalar, "the counting variant's front end is not scalar");
}
