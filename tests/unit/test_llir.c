/* test_llir.c — the LLVM-IR reader and writer (src/swmetal/llir.c) on text in
 * clang 19's print format: structure, operands, types, and edits that land where
 * they are asked and nowhere else.  (Whole kernels round trip in
 * tests/cli/test_ir_stage.sh.) */
#include <stdlib.h>
#include <string.h>

#include "swmetal/ir_pass.h"
#include "swmetal/llir.h"
#include "swmetal/sw_compile.h"
#include "test.h"

static const char module_text[] =
    "; ModuleID = 'k.cpp'\n"
    "@g = internal global [4 x float] zeroinitializer, align 16\n"
    "\n"
    "define weak hidden bfloat @__truncsfbf2(float noundef %0) local_unnamed_addr #0 !dbg !8 {\n"
    "  %2 = bitcast float %0 to i32, !dbg !12\n"
    "  %3 = tail call float @llvm.fabs.f32(float %0), !dbg !13\n"
    "  %5 = icmp ugt i32 %2, 2139095040, !dbg !14\n"
    "  br i1 %5, label %6, label %10, !dbg !15\n"
    "\n"
    "6:                                                ; preds = %1\n"
    "  %7 = fadd fast <4 x float> %a, <float 1.0, float 2.0, float 3.0, float 4.0>, !dbg !16\n"
    "  %8 = fptrunc float %3 to half, !dbg !17\n"
    "  switch i32 %2, label %10 [\n"
    "    i32 0, label %6\n"
    "    i32 1, label %10\n"
    "  ]\n"
    "\n"
    "10:                                               ; preds = %1, %6\n"
    "  %11 = phi i32 [ %2, %1 ], [ 0, %6 ]\n"
    "  %12 = call float @llvm.fmuladd.f32(float %x, float noundef %y, float 1.000000e+00), !dbg !19\n"
    "  store half %8, ptr %p, align 2, !dbg !20, !tbaa !21\n"
    "  %13 = load <2 x bfloat>, ptr %q, align 4\n"
    "  ret bfloat %19, !dbg !27\n"
    "}\n"
    "\n"
    "declare float @llvm.fabs.f32(float)\n"
    "!8 = distinct !DISubprogram(name: \"f\")\n";

static ll_module *read_it(void) {
    ll_module *m = ll_module_read(module_text, strlen(module_text));
    CHECK(m != NULL);
    return m;
}

static int find(const ll_module *m, ll_opcode op) {
    for (int i = 0; i < ll_inst_count(m); i++)
        if (ll_inst_at(m, i)->op == op) return i;
    return -1;
}

TEST(llir_structure) {
    ll_module *m = read_it();
    CHECK_EQ_INT(ll_func_count(m), 1);
    CHECK(ll_span_eq(ll_func_at(m, 0)->name, "@__truncsfbf2"));
    CHECK_EQ_INT(ll_block_count(m), 3);
    CHECK(ll_span_eq(ll_block_at(m, 0)->label, ""));
    CHECK(ll_span_eq(ll_block_at(m, 1)->label, "6"));
    CHECK(ll_span_eq(ll_block_at(m, 2)->label, "10"));
    CHECK_EQ_INT(ll_block_at(m, 0)->ninsts, 4);
    CHECK_EQ_INT(ll_block_at(m, 1)->ninsts, 3); /* the switch and its cases are one */
    CHECK_EQ_INT(ll_block_at(m, 2)->ninsts, 5);
    CHECK_EQ_INT(ll_inst_count(m), 12);
    int sw = find(m, LL_SWITCH);
    CHECK(sw == 6);
    CHECK(ll_inst_at(m, sw)->text.p[ll_inst_at(m, sw)->text.n - 1] == ']');
    CHECK_EQ_INT(ll_inst_at(m, find(m, LL_PHI))->block, 2);
    ll_module_free(m);
}

TEST(llir_operands_and_types) {
    ll_module *m = read_it();
    int ok, lanes;
    const ll_inst *fadd = ll_inst_at(m, find(m, LL_FADD));
    CHECK(ll_span_eq(fadd->result, "%7"));
    CHECK_EQ_INT(fadd->dbg, 16);
    CHECK(ll_type_scalar(ll_inst_type(fadd), &lanes) == LL_S_FLOAT && lanes == 4);
    CHECK(ll_span_eq(ll_inst_operand(fadd, 0, &ok), "%a") && ok);
    CHECK(ll_span_starts(ll_inst_operand(fadd, 1, &ok), "<float 1.0,") && ok);
    ll_inst_operand(fadd, 2, &ok);
    CHECK(!ok);
    const ll_inst *tr = ll_inst_at(m, find(m, LL_FPTRUNC));
    CHECK(ll_span_eq(ll_inst_type(tr), "float") && ll_span_eq(ll_inst_dest_type(tr), "half"));
    CHECK(ll_span_eq(ll_inst_operand(tr, 0, &ok), "%3") && ok);
    const ll_inst *call = ll_inst_at(m, find(m, LL_CALL)); /* the tail call comes first */
    CHECK(ll_span_eq(ll_inst_callee(call), "@llvm.fabs.f32"));
    const ll_inst *fma = ll_inst_at(m, 8);
    CHECK(fma->op == LL_CALL && ll_span_eq(ll_inst_callee(fma), "@llvm.fmuladd.f32"));
    CHECK(ll_span_eq(ll_inst_type(fma), "float"));
    CHECK(ll_span_eq(ll_inst_operand(fma, 1, &ok), "%y") && ok);
    CHECK(ll_span_eq(ll_inst_operand(fma, 2, &ok), "1.000000e+00") && ok);
    ll_inst_operand(fma, 3, &ok);
    CHECK(!ok);
    const ll_inst *st = ll_inst_at(m, find(m, LL_STORE));
    CHECK(ll_type_scalar(ll_inst_type(st), &lanes) == LL_S_HALF && lanes == 1);
    CHECK(ll_span_eq(ll_inst_operand(st, 0, &ok), "%8") && ok);
    CHECK(ll_span_eq(ll_inst_operand(st, 1, &ok), "%p") && ok);
    const ll_inst *ld = ll_inst_at(m, find(m, LL_LOAD));
    CHECK(ll_type_scalar(ll_inst_type(ld), &lanes) == LL_S_BFLOAT && lanes == 2);
    CHECK_EQ_INT(ld->dbg, -1);
    CHECK(ll_inst_at(m, find(m, LL_ICMP))->op == LL_ICMP &&
          ll_span_eq(ll_inst_type(ll_inst_at(m, find(m, LL_ICMP))), "i32"));
    ll_module_free(m);
}

TEST(llir_write_unedited_is_identical) {
    ll_module *m = read_it();
    msl_buf out = {0};
    ll_module_write(m, &out);
    CHECK(out.len == strlen(module_text) && memcmp(out.p, module_text, out.len) == 0);
    free(msl_buf_take(&out));
    ll_module_free(m);
}

TEST(llir_edits_land_in_order) {
    ll_module *m = read_it();
    int fadd = find(m, LL_FADD), sw = find(m, LL_SWITCH);
    ll_insert_after(m, fadd, "  ; after-1");
    ll_insert_before(m, fadd, "  ; before");
    ll_insert_after(m, fadd, "  ; after-2");
    ll_insert_before(m, sw, "  ; before-switch");
    ll_append(m, "!99 = !{}\n");
    msl_buf out = {0};
    ll_module_write(m, &out);
    char *s = msl_buf_take(&out);
    const char *b = strstr(s, "; before\n"), *f = strstr(s, "%7 = fadd"), *a1 = strstr(s, "; after-1\n"),
               *a2 = strstr(s, "; after-2\n"), *bs = strstr(s, "; before-switch\n"), *swl = strstr(s, "  switch i32");
    CHECK(b && f && a1 && a2 && bs && swl);
    CHECK(b < f && f < a1 && a1 < a2 && a2 < bs && bs < swl);
    CHECK(strstr(s, "  ]\n\n10:") != NULL); /* nothing inside the switch */
    size_t n = strlen(s);
    CHECK(n > 10 && strcmp(s + n - 10, "!99 = !{}\n") == 0);
    CHECK(n == strlen(module_text) + strlen("  ; after-1\n  ; before\n  ; after-2\n  ; before-switch\n!99 = !{}\n"));
    free(s);
    ll_module_free(m);
}

TEST(llir_replace_writes_the_last_line_given) {
    ll_module *m = read_it();
    int phi = find(m, LL_PHI), fadd = find(m, LL_FADD);
    ll_replace(m, phi, "  %11 = phi i32 [ %2, %1 ], [ 0, %split ]");
    ll_insert_before(m, phi, "  ; before-phi");
    ll_replace(m, phi, "  %11 = phi i32 [ %2, %1 ], [ 0, %split2 ]");
    ll_insert_after(m, phi, "  ; after-phi");
    ll_insert_after(m, fadd, "  ; after-fadd");
    msl_buf out = {0};
    ll_module_write(m, &out);
    char *s = msl_buf_take(&out);
    CHECK(strstr(s, "  ; before-phi\n  %11 = phi i32 [ %2, %1 ], [ 0, %split2 ]\n  ; after-phi\n") != NULL);
    CHECK(strstr(s, "[ 0, %6 ]") == NULL && strstr(s, "%split ]") == NULL);
    CHECK(strstr(s, "!dbg !16\n  ; after-fadd\n") != NULL);
    CHECK(strlen(s) == strlen(module_text) + strlen("  ; before-phi\n  ; after-phi\n  ; after-fadd\n") + 5);
    free(s);
    ll_module_free(m);
}

/* The cache key of an instrumented variant names its passes, their versions and a
 * hash of the passes' sources (the Makefile's SW_IR_ID), so an edited pass whose
 * version was not bumped still never meets an object an older one made. */
TEST(ir_pass_signature_names_passes_and_their_sources) {
    char sig[256];
    sw_ir_pass_signature(SW_INSTR_NUMERICS, sig, sizeof sig);
    const char *at = strchr(sig, '@');
    CHECK_MSG(strncmp(sig, "numerics:", 9) == 0 && at != NULL, "signature %s", sig);
    CHECK_MSG(at && strlen(at + 1) == 32 && strspn(at + 1, "0123456789abcdef") == 32, "no source hash in %s", sig);
    sw_ir_pass_signature(SW_INSTR_NONE, sig, sizeof sig);
    CHECK_MSG(sig[0] == 0 || strncmp(sig, "roundtrip@", 10) == 0, "a plain variant: %s", sig);
}

/* Bytes outside the instructions (an attribute group's) replaced in place, beside
 * instruction edits; an overlapping second replacement loses to the first. */
TEST(llir_replace_text_outside_instructions) {
    static const char text[] = "define void @f() #0 {\n"
                               "  ret void\n"
                               "}\n"
                               "attributes #0 = { nounwind memory(none) uwtable }\n";
    ll_module *m = ll_module_read(text, strlen(text));
    CHECK(m != NULL);
    if (!m) return;
    ll_span t = ll_module_text(m);
    const char *mem = strstr(t.p, " memory(none)");
    ll_insert_before(m, 0, "  ; before-ret");
    ll_replace_text(m, (ll_span){mem, strlen(" memory(none)")}, "");
    ll_replace_text(m, (ll_span){mem + 1, 6}, "LOST");
    const char *def = strstr(t.p, "#0 {");
    ll_replace_text(m, (ll_span){def, 2}, "#7");
    msl_buf out = {0};
    ll_module_write(m, &out);
    char *s = msl_buf_take(&out);
    CHECK_MSG(strcmp(s, "define void @f() #7 {\n  ; before-ret\n  ret void\n}\nattributes #0 = { nounwind uwtable }\n") == 0,
              "got:\n%s", s);
    free(s);
    ll_module_free(m);
}
