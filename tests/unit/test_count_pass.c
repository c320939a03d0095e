/* test_count_pass.c — the counting pass (src/swmetal/count_pass.c) on a small module
 * in clang 19's print format: what it leaves uncounted, and the facts of the first
 * optimisation it takes back before the second (ir_pass.h's reoptimise).  Whole
 * kernels' counts are tests/cli/test_counters.sh's. */
#include <stdlib.h>
#include <string.h>

#include "swmetal/count.h"
#include "swmetal/ir_pass.h"
#include "swmetal/llir.h"
#include "test.h"

static const char module_text[] =
    "define weak hidden bfloat @__truncsfbf2(float noundef %0) local_unnamed_addr #0 {\n"
    "  %2 = bitcast float %0 to i32\n"
    "  %3 = lshr i32 %2, 16\n"
    "  %4 = trunc i32 %3 to i16\n"
    "  %5 = bitcast i16 %4 to bfloat\n"
    "  ret bfloat %5\n"
    "}\n"
    "\n"
    "define void @kernel(ptr noundef %p, ptr noundef %q) local_unnamed_addr #1 {\n"
    "  %1 = load float, ptr %p, align 4\n"
    "  %2 = call float @llvm.fabs.f32(float %1)\n"
    "  %3 = fptrunc float %2 to bfloat\n"
    "  store bfloat %3, ptr %q, align 2\n"
    "  ret void\n"
    "}\n"
    "\n"
    "declare float @llvm.fabs.f32(float) #2\n"
    "\n"
    "attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(none) uwtable }\n"
    "attributes #1 = { mustprogress nofree norecurse nosync nounwind willreturn memory(argmem: readwrite) }\n"
    "attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }\n";

static char *counted(void) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    msl_buf out = {0};
    char *err = NULL;
    int rc = sw_ir_run_passes(module_text, strlen(module_text), p, 1, &out, &err);
    CHECK_MSG(rc == 0, "the pass failed: %s", err ? err : "?");
    free(err);
    return msl_buf_take(&out);
}

/* The text of the line that starts with prefix, or NULL. */
static char *line_of(const char *s, const char *prefix) {
    const char *p = strstr(s, prefix);
    if (!p) return NULL;
    size_t n = strcspn(p, "\n");
    char *l = malloc(n + 1);
    memcpy(l, p, n);
    l[n] = 0;
    return l;
}

/* The define of `kernel` through its closing brace. */
static char *body_of(const char *s, const char *define) {
    const char *p = strstr(s, define);
    if (!p) return NULL;
    const char *e = strstr(p, "\n}\n");
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *b = malloc(n + 1);
    memcpy(b, p, n);
    b[n] = 0;
    return b;
}

/* Column col of block b in the text of @sw_cnt_blocks; -1 when it has none. */
static long long table_at(const char *table, int b, int col) {
    const char *p = strchr(table, '=');
    p = p ? strchr(p, '[') : NULL;
    p = p ? strchr(p + 1, '[') : NULL; /* after the array type's */
    for (int k = 0; p && k <= b * SW_CNT_COLS + col; k++) {
        p = strstr(p, "i64 ");
        if (!p) return -1;
        p += 4;
        if (k == b * SW_CNT_COLS + col) return strtoll(p, NULL, 10);
    }
    return -1;
}

/* Its blocks are counted and its loads and stores hooked; the prelude's bfloat
 * conversion, which the code generator calls for an fptrunc, is neither. */
TEST(count_pass_counts_the_kernel_not_the_conversion_it_calls) {
    char *s = counted();
    char *k = body_of(s, "define void @kernel"), *t = body_of(s, "define weak hidden bfloat @__truncsfbf2");
    CHECK(k && t);
    if (!k || !t) {
        free(k);
        free(t);
        free(s);
        return;
    }
    CHECK_MSG(strstr(k, "@sw_rt_cnt_slot") && strstr(k, "@__swcnt.block"), "kernel not counted:\n%s", k);
    CHECK_MSG(strstr(k, "@__swcnt.mem(ptr %__swcnt.ctx, ptr %p, i32 4,"), "the load is not hooked:\n%s", k);
    CHECK_MSG(strstr(k, "@__swcnt.mem(ptr %__swcnt.ctx, ptr %q, i32 2,"), "the store is not hooked:\n%s", k);
    CHECK_MSG(!strstr(t, "__swcnt") && !strstr(t, "sw_rt_cnt"), "the conversion is instrumented:\n%s", t);
    free(k);
    free(t);
    free(s);
}

/* The second optimisation must not believe what the first inferred of a function
 * the pass made write the counters (memory(none) would let it drop or merge its
 * calls); an intrinsic's declaration keeps LLVM's facts. */
TEST(count_pass_takes_back_memory_facts_of_what_it_instruments) {
    char *s = counted();
    char *a0 = line_of(s, "attributes #0 = "), *a1 = line_of(s, "attributes #1 = "), *a2 = line_of(s, "attributes #2 = ");
    CHECK(a0 && a1 && a2);
    if (a0 && a1 && a2) {
        CHECK_MSG(!strstr(a0, "memory(") && strstr(a0, "willreturn uwtable }"), "%s", a0);
        CHECK_MSG(!strstr(a1, "memory(") && strstr(a1, "willreturn }"), "%s", a1);
        CHECK_MSG(strstr(a2, "willreturn memory(none) }"), "an intrinsic's facts went: %s", a2);
    }
    free(a0);
    free(a1);
    free(a2);
    free(s);
}

TEST(count_pass_asks_for_the_second_optimisation) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    CHECK(sw_ir_reoptimise(p, 1) == 1);
    extern const sw_ir_pass sw_ir_numerics_pass; /* what it inserted must reach the code as inserted */
    const sw_ir_pass *q[1] = {&sw_ir_numerics_pass};
    CHECK(sw_ir_reoptimise(q, 1) == 0);
}

/* A simdgroup product as the prelude writes it in the counting variant: a lane's
 * share of the flops (sw_rt_cnt_mma, type 2: bfloat) and its bookkeeping in the
 * product log, out of line (noinline) until the pass has run. */
static const char mma_text[] =
    "define linkonce_odr void @_ZN5metal18sw_mma_lane_forgetEPs(ptr noundef %0) local_unnamed_addr #0 {\n"
    "  %2 = load i16, ptr %0, align 2\n"
    "  %3 = icmp sgt i16 %2, -1\n"
    "  store i16 -1, ptr %0, align 2\n"
    "  ret void\n"
    "}\n"
    "\n"
    "define void @kernel(ptr noundef %m) local_unnamed_addr #1 {\n"
    "  call void @sw_rt_cnt_mma(i32 noundef 2) #2\n"
    "  call void @_ZN5metal18sw_mma_lane_forgetEPs(ptr noundef %m) #2\n"
    "  ret void\n"
    "}\n"
    "\n"
    "declare void @sw_rt_cnt_mma(i32 noundef) #1\n"
    "\n"
    "attributes #0 = { mustprogress noinline nounwind memory(argmem: readwrite) uwtable \"target-cpu\"=\"x86-64\" }\n"
    "attributes #1 = { nounwind }\n"
    "attributes #2 = { nounwind }\n";

/* The product's flops are its block's (32 bfloat flops a lane, the call gone) and it
 * counts as one instruction; the bookkeeping counts nothing, is not hooked, and
 * comes back inline for the second optimisation (its own group: alwaysinline, no
 * noinline, no memory facts). */
TEST(count_pass_counts_a_product_not_its_bookkeeping) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    msl_buf out = {0};
    char *err = NULL;
    int rc = sw_ir_run_passes(mma_text, strlen(mma_text), p, 1, &out, &err);
    CHECK_MSG(rc == 0, "the pass failed: %s", err ? err : "?");
    free(err);
    char *s = msl_buf_take(&out);
    char *k = body_of(s, "define void @kernel"), *f = body_of(s, "define linkonce_odr void @_ZN5metal18sw_mma_lane_forget");
    char *g = line_of(s, "attributes #3 = "), *table = line_of(s, "@sw_cnt_blocks = ");
    CHECK(k && f && g && table);
    if (k && f && g && table) {
        CHECK_MSG(!strstr(k, "call void @sw_rt_cnt_mma"), "the product's call stayed:\n%s", k);
        CHECK_MSG(!strstr(k, "@__swcnt.mem"), "a call of the bookkeeping is hooked:\n%s", k);
        CHECK_MSG(!strstr(f, "__swcnt") && !strstr(f, "sw_rt_cnt"), "the bookkeeping is instrumented:\n%s", f);
        CHECK_MSG(strstr(f, ") local_unnamed_addr #3 {"), "the bookkeeping keeps its group:\n%s", f);
        CHECK_MSG(strstr(g, "alwaysinline") && !strstr(g, "noinline") && !strstr(g, "memory(") &&
                      strstr(g, "\"target-cpu\"=\"x86-64\""),
                  "%s", g);
        /* blocks: the kernel's alone (the bookkeeping's have no id): bfloat 32, 2
         * instructions (the product, ret) */
        CHECK_MSG(strstr(table, "constant [9 x i64]") && table_at(table, 0, SW_CNT_BFLOAT) == 32 &&
                      table_at(table, 0, SW_CNT_FLOAT) == 0 && table_at(table, 0, SW_CNT_INSTS) == 2,
                  "%s", table);
        CHECK_EQ_INT(SW_CNT_COLS, 9);
    }
    free(k);
    free(f);
    free(g);
    free(table);
    free(s);
}

/* A kernel's threadgroup variable (the front end's sw_rt_tg_alloc_init) through a
 * getelementptr and a loop's phi: its plain accesses are its blocks' bytes, not
 * hooks; an atomic on it and an access of unknown memory are hooked. */
static const char tg_text[] =
    "define void @kernel(ptr noundef %d, i64 %n) local_unnamed_addr #0 {\n"
    "  %t = call ptr @sw_rt_tg_alloc_init(i64 noundef 4096, i64 noundef 16, ptr noundef null, i32 noundef 7, ptr noundef null)\n"
    "  br label %loop\n"
    "loop:\n"
    "  %p = phi ptr [ %t, %0 ], [ %q, %loop ]\n"
    "  %i = phi i64 [ 0, %0 ], [ %j, %loop ]\n"
    "  %v = load <2 x float>, ptr %p, align 8\n"
    "  %q = getelementptr inbounds i8, ptr %p, i64 8\n"
    "  store half 0xH3C00, ptr %q, align 2\n"
    "  %j = add i64 %i, 1\n"
    "  %c = icmp eq i64 %j, %n\n"
    "  br i1 %c, label %done, label %loop\n"
    "done:\n"
    "  %a = atomicrmw add ptr %t, i32 1 monotonic, align 4\n"
    "  %w = load float, ptr %d, align 4\n"
    "  ret void\n"
    "}\n"
    "\n"
    "declare ptr @sw_rt_tg_alloc_init(i64 noundef, i64 noundef, ptr noundef, i32 noundef, ptr noundef) #0\n"
    "\n"
    "attributes #0 = { nounwind }\n";

TEST(count_pass_counts_threadgroup_variables_by_block) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    msl_buf out = {0};
    char *err = NULL;
    int rc = sw_ir_run_passes(tg_text, strlen(tg_text), p, 1, &out, &err);
    CHECK_MSG(rc == 0, "the pass failed: %s", err ? err : "?");
    free(err);
    char *s = msl_buf_take(&out);
    char *k = body_of(s, "define void @kernel"), *table = line_of(s, "@sw_cnt_blocks = ");
    CHECK(k && table);
    if (k && table) {
        CHECK_MSG(!strstr(k, "__swcnt.ctx, ptr %p,") && !strstr(k, "__swcnt.ctx, ptr %q,"),
                  "a threadgroup access is hooked:\n%s", k);
        CHECK_MSG(strstr(k, "call void @sw_rt_cnt_mem(ptr %t, i32 4,"), "the atomic is not hooked:\n%s", k);
        CHECK_MSG(strstr(k, "call void @__swcnt.mem(ptr %__swcnt.ctx, ptr %d, i32 4,"), "the load of %%d:\n%s", k);
        /* blocks: entry, loop (8 bytes loaded, 2 stored), done */
        CHECK_MSG(table_at(table, 1, SW_CNT_TG_LOAD) == 8 && table_at(table, 1, SW_CNT_TG_STORE) == 2, "%s", table);
        CHECK_MSG(table_at(table, 0, SW_CNT_TG_LOAD) == 0 && table_at(table, 2, SW_CNT_TG_LOAD) == 0 &&
                      table_at(table, 2, SW_CNT_TG_STORE) == 0,
                  "%s", table);
    }
    free(k);
    free(table);
    free(s);
}

/* Memory that is never a buffer needs no hook (the library's globals, the runtime's
 * ids), and a threadgroup argument is known where the kernel uses it: the entry
 * (not counted) unpacks it through sw_rt_tg_arg and passes it to the kernel, whose
 * parameter then is threadgroup memory at its only call. */
static const char args_text[] =
    "@table = internal constant [4 x i32] [i32 1, i32 2, i32 3, i32 4]\n"
    "\n"
    "define void @kernel(ptr noundef %0, ptr noundef %1, i64 %2) local_unnamed_addr #0 {\n"
    "  %4 = getelementptr inbounds float, ptr %1, i64 %2\n"
    "  %5 = load float, ptr %4, align 4\n"
    "  %6 = getelementptr inbounds [4 x i32], ptr @table, i64 0, i64 %2\n"
    "  %7 = load i32, ptr %6, align 4\n"
    "  %8 = call ptr @sw_rt_ids()\n"
    "  %9 = load i32, ptr %8, align 4\n"
    "  store float %5, ptr %0, align 4\n"
    "  ret void\n"
    "}\n"
    "\n"
    "define void @sw_entry_0(ptr noundef %0) local_unnamed_addr #0 {\n"
    "  %2 = load ptr, ptr %0, align 8\n"
    "  %3 = getelementptr inbounds i8, ptr %0, i64 8\n"
    "  %4 = load ptr, ptr %3, align 8\n"
    "  %5 = call ptr @sw_rt_tg_arg(ptr noundef %4)\n"
    "  call void @kernel(ptr noundef %2, ptr noundef %5, i64 3)\n"
    "  ret void\n"
    "}\n"
    "\n"
    "declare ptr @sw_rt_ids() #0\n"
    "declare ptr @sw_rt_tg_arg(ptr noundef) #0\n"
    "\n"
    "attributes #0 = { nounwind }\n";

static char *counted_text(const char *text, size_t n) {
    const sw_ir_pass *p[1] = {&sw_count_pass};
    msl_buf out = {0};
    char *err = NULL;
    int rc = sw_ir_run_passes(text, n, p, 1, &out, &err);
    CHECK_MSG(rc == 0, "the pass failed: %s", err ? err : "?");
    free(err);
    return msl_buf_take(&out);
}

TEST(count_pass_knows_threadgroup_arguments_and_memory_that_is_no_buffer) {
    char *s = counted_text(args_text, strlen(args_text));
    char *k = body_of(s, "define void @kernel"), *table = line_of(s, "@sw_cnt_blocks = ");
    CHECK(k && table);
    if (k && table) {
        CHECK_MSG(!strstr(k, "__swcnt.ctx, ptr %4,") && !strstr(k, "__swcnt.ctx, ptr %6,") &&
                      !strstr(k, "__swcnt.ctx, ptr %8,"),
                  "hooked:\n%s", k);
        CHECK_MSG(strstr(k, "@__swcnt.mem(ptr %__swcnt.ctx, ptr %0, i32 4,"), "the store to %%0:\n%s", k);
        /* the kernel alone: 8 instructions, 4 threadgroup bytes loaded (the entry,
         * the device's unpacking of the arguments, is not counted) */
        CHECK_MSG(strstr(table, "constant [9 x i64]") && table_at(table, 0, SW_CNT_TG_LOAD) == 4 &&
                      table_at(table, 0, SW_CNT_INSTS) == 8,
                  "%s", table);
        char *e = body_of(s, "define void @sw_entry_0");
        CHECK_MSG(e && !strstr(e, "__swcnt"), "the entry is instrumented:\n%s", e ? e : s);
        free(e);
    }
    free(k);
    free(table);
    free(s);
    /* the kernel's address in a table, and an indirect call of its arity: its
     * parameter is no longer known */
    msl_buf m = {0};
    msl_buf_puts(&m, args_text);
    msl_buf_puts(&m, "define void @other(ptr %f, ptr %a, ptr %b) #0 {\n"
                     "  call void %f(ptr %a, ptr %b, i64 0)\n"
                     "  ret void\n"
                     "}\n");
    char *text = msl_buf_take(&m);
    s = counted_text(text, strlen(text));
    k = body_of(s, "define void @kernel");
    CHECK_MSG(k && strstr(k, "@__swcnt.mem(ptr %__swcnt.ctx, ptr %4, i32 4,"), "%s", k ? k : s);
    free(k);
    free(s);
    free(text);
}

/* An entry with the kernel inlined into it (it calls nothing the module defines) is
 * the kernel: counted. */
TEST(count_pass_counts_an_entry_that_holds_its_kernel) {
    static const char text[] = "define void @sw_entry_0(ptr noundef %0) local_unnamed_addr #0 {\n"
                               "  %2 = load ptr, ptr %0, align 8\n"
                               "  store float 1.000000e+00, ptr %2, align 4\n"
                               "  ret void\n"
                               "}\n"
                               "\n"
                               "attributes #0 = { nounwind }\n";
    char *s = counted_text(text, sizeof text - 1);
    char *e = body_of(s, "define void @sw_entry_0"), *table = line_of(s, "@sw_cnt_blocks = ");
    CHECK(e && table);
    if (e && table) {
        CHECK_MSG(strstr(e, "@__swcnt.block") && strstr(e, "__swcnt.ctx, ptr %2, i32 4,"), "%s", e);
        CHECK_MSG(table_at(table, 0, SW_CNT_INSTS) == 3, "%s", table);
    }
    free(e);
    free(table);
    free(s);
}
