/* count_pass.c — the counting variant's IR pass (SW_INSTR_COUNT, count.h).
 *
 * Counts are per basic block of the optimised IR: the pass gives every block of the
 * module an id (its index in the module), counts its executions inline where the
 * block starts (after its phis: count_block), and appends the static table the
 * runtime multiplies by those executions (sw_cnt_blocks: SW_CNT_COLS numbers a
 * block, count.h).  Memory is dynamic: every load, store, atomic and
 * memcpy/memmove/memset of a pointer that is neither a global nor computed from
 * the function's own allocas (is_local) reports its address, width and static
 * site to sw_rt_cnt_mem / sw_rt_cnt_range, and the runtime keeps those that land in a bound buffer or in
 * threadgroup memory (everything else is the thread's own stack or the runtime's).
 *
 * What a block counts (the documented model, results/README.md):
 *   flops     fadd, fsub, fmul, fdiv, frem: 1 an element; llvm.fma / llvm.fmuladd: 2;
 *             by the element type (double counts as float); nothing else
 *             (comparisons, conversions, negation, math functions) is a flop;
 *   int ops   add, sub, mul, udiv, sdiv, urem, srem, shl, lshr, ashr, and, or, xor,
 *             icmp: 1 an element (address arithmetic in getelementptr is not one);
 *   insts     every instruction but phis and llvm.dbg / llvm.lifetime markers;
 *   barriers  calls of sw_rt_threadgroup_barrier and sw_rt_simd_sync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/count.h"
#include "swmetal/ir_pass.h"

static int scalar_bytes(ll_scalar s) {
    switch (s) {
    case LL_S_HALF: case LL_S_BFLOAT: case LL_S_I16: return 2;
    case LL_S_FLOAT: case LL_S_I32: return 4;
    case LL_S_DOUBLE: case LL_S_I64: case LL_S_PTR: return 8;
    case LL_S_I8: case LL_S_I1: return 1;
    default: return 0;
    }
}

/* The bytes a value of this type occupies when loaded or stored, as IR text: a
 * number, or LLVM's own size-of constant for an aggregate. */
static void type_size(ll_span t, char *out, size_t n) {
    int lanes = 1;
    ll_scalar s = ll_type_scalar(t, &lanes);
    if (s == LL_S_I1 && lanes > 1) snprintf(out, n, "%d", (lanes + 7) / 8);
    else if (scalar_bytes(s)) snprintf(out, n, "%d", scalar_bytes(s) * lanes);
    else snprintf(out, n, "ptrtoint (ptr getelementptr (%.*s, ptr null, i32 1) to i32)", (int)t.n, t.p);
}

/* Flops of one element of this type go to column 0 (float, double), 1 (half) or 2 (bfloat). */
static int flop_col(ll_scalar s) { return s == LL_S_HALF ? SW_CNT_HALF : s == LL_S_BFLOAT ? SW_CNT_BFLOAT : SW_CNT_FLOAT; }

static void count_inst(const ll_inst *in, uint64_t *row) {
    int lanes = 1;
    ll_scalar s;
    switch (in->op) {
    case LL_PHI: return;
    case LL_FADD: case LL_FSUB: case LL_FMUL: case LL_FDIV: case LL_FREM:
        s = ll_type_scalar(ll_inst_type(in), &lanes);
        row[flop_col(s)] += (uint64_t)lanes;
        break;
    case LL_ADD: case LL_SUB: case LL_MUL: case LL_SDIV: case LL_UDIV: case LL_SREM: case LL_UREM:
    case LL_SHL: case LL_LSHR: case LL_ASHR: case LL_AND: case LL_OR: case LL_XOR: case LL_ICMP:
        ll_type_scalar(ll_inst_type(in), &lanes);
        row[SW_CNT_INT] += (uint64_t)lanes;
        break;
    case LL_CALL: {
        ll_span c = ll_inst_callee(in);
        if (ll_span_starts(c, "@llvm.dbg.") || ll_span_starts(c, "@llvm.lifetime.")) return;
        if (ll_span_starts(c, "@llvm.fma.") || ll_span_starts(c, "@llvm.fmuladd.")) {
            s = ll_type_scalar(ll_inst_type(in), &lanes);
            row[flop_col(s)] += 2 * (uint64_t)lanes;
        }
        if (ll_span_eq(c, "@sw_rt_threadgroup_barrier")) row[SW_CNT_BAR_TG]++;
        if (ll_span_eq(c, "@sw_rt_simd_sync")) row[SW_CNT_BAR_SIMD]++;
        break;
    }
    default: break;
    }
    row[SW_CNT_INSTS]++;
}

/* The pointer operand's text of a load, atomicrmw or cmpxchg: after the first
 * top-level ", ptr " (the value type may itself be an aggregate holding commas). */
static ll_span pointer_after_type(const ll_inst *in) {
    const char *p = in->body.p, *end = in->body.p + in->body.n;
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '(' || *p == '[' || *p == '{' || *p == '<') depth++;
        else if (*p == ')' || *p == ']' || *p == '}' || *p == '>') depth--;
        else if (depth == 0 && *p == ',' && (size_t)(end - p) > 6 && memcmp(p, ", ptr ", 6) == 0) break;
    }
    if (p >= end) return (ll_span){in->body.p, 0};
    const char *v = p + 6, *q = v;
    while (q < end && *q != ',' && *q != ' ') q++;
    return (ll_span){v, (size_t)(q - v)};
}

/* The atomic kind of an atomicrmw (SW_CNT_AT_*), from the word after its flags. */
static int rmw_kind(const ll_inst *in) {
    static const struct {
        const char *w;
        int k;
    } kinds[] = {{"xchg ", SW_CNT_AT_EXCHANGE}, {"add ", SW_CNT_AT_ADD},  {"fadd ", SW_CNT_AT_ADD},
                 {"sub ", SW_CNT_AT_SUB},       {"fsub ", SW_CNT_AT_SUB}, {"and ", SW_CNT_AT_AND},
                 {"or ", SW_CNT_AT_OR},         {"xor ", SW_CNT_AT_XOR},  {"max ", SW_CNT_AT_MAX},
                 {"umax ", SW_CNT_AT_MAX},      {"fmax ", SW_CNT_AT_MAX}, {"min ", SW_CNT_AT_MIN},
                 {"umin ", SW_CNT_AT_MIN},      {"fmin ", SW_CNT_AT_MIN}};
    const char *b = strstr(in->body.p, "atomicrmw ");
    if (!b || b >= in->body.p + in->body.n) return SW_CNT_AT_OTHER;
    b += strlen("atomicrmw ");
    if (strncmp(b, "volatile ", 9) == 0) b += 9;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(b, kinds[i].w, strlen(kinds[i].w)) == 0) return kinds[i].k;
    return SW_CNT_AT_OTHER;
}

static int has_word(const ll_inst *in, const char *w) {
    size_t n = strlen(w);
    for (const char *p = in->body.p; p + n <= in->body.p + in->body.n; p++)
        if (memcmp(p, w, n) == 0) return 1;
    return 0;
}

/* The instruction of f that defines the value named v, or NULL (an argument, a
 * global). */
static const ll_inst *defined_in(const ll_module *m, const ll_func *f, ll_span v) {
    for (int b = f->first_block; b < f->first_block + f->nblocks; b++) {
        const ll_block *blk = ll_block_at(m, b);
        for (int i = blk->first_inst; i < blk->first_inst + blk->ninsts; i++) {
            const ll_inst *in = ll_inst_at(m, i);
            if (in->result.n == v.n && memcmp(in->result.p, v.p, v.n) == 0) return in;
        }
    }
    return NULL;
}

/* Whether ptr is one of f's own allocas or an address computed from them (a
 * getelementptr off one, a phi of such): a local variable of the thread, never
 * device or threadgroup memory (an address computed from a local variable cannot
 * leave it without undefined behaviour), so the runtime would drop the access;
 * not hooking it saves the call (a pointer walking a local array was most of a
 * matrix kernel's hook calls).  A phi's own name among its incoming values (a
 * pointer stepped round a loop) adds nothing; longer cycles are not followed. */
static int is_local(const ll_module *m, const ll_func *f, ll_span ptr, int depth) {
    if (ptr.n == 0 || ptr.p[0] != '%' || depth > 12) return 0;
    const ll_inst *in = defined_in(m, f, ptr);
    if (!in) return 0;
    if (in->op == LL_ALLOCA) return 1;
    if (in->op == LL_GEP) return is_local(m, f, pointer_after_type(in), depth + 1);
    if (in->op != LL_PHI) return 0;
    /* "phi ptr [ %a, %bb1 ], [ %b, %bb2 ]" */
    const char *p = in->body.p, *end = in->body.p + in->body.n;
    int any = 0;
    while ((p = memchr(p, '[', (size_t)(end - p))) != NULL) {
        const char *v = p + 1;
        while (v < end && *v == ' ') v++;
        const char *q = v;
        while (q < end && *q != ',' && *q != ' ') q++;
        ll_span inc = {v, (size_t)(q - v)};
        if (!(inc.n == ptr.n && memcmp(inc.p, ptr.p, ptr.n) == 0) && !is_local(m, f, inc, depth + 1)) return 0;
        any = 1;
        p = q;
    }
    return any;
}

/* The hook call before a memory instruction, or nothing for an access it cannot
 * be (a global, the thread's own local variable) or one it does not know. */
static void hook_access(ll_module *m, int i, const ll_inst *in, const ll_func *f, uint32_t *site) {
    ll_span ptr = {in->body.p, 0}, type = ll_inst_type(in);
    int rw = 0, kind = SW_CNT_AT_NONE, ok = 1;
    if (in->op == LL_LOAD) {
        ptr = pointer_after_type(in);
        rw = SW_CNT_LOAD;
        if (has_word(in, "load atomic ")) kind = SW_CNT_AT_LOAD;
    } else if (in->op == LL_STORE) {
        ptr = ll_inst_operand(in, 1, &ok);
        rw = SW_CNT_STORE;
        if (has_word(in, "store atomic ")) kind = SW_CNT_AT_STORE;
    } else if (in->op == LL_ATOMICRMW || in->op == LL_CMPXCHG) {
        /* "atomicrmw add ptr %p, i32 %v" / "cmpxchg ptr %p, i32 %a, i32 %b": the type is the value's */
        const char *p = strstr(in->body.p, "ptr ");
        if (!p || p >= in->body.p + in->body.n) return;
        const char *v = p + 4, *q = v;
        while (q < in->body.p + in->body.n && *q != ',') q++;
        ptr = (ll_span){v, (size_t)(q - v)};
        const char *t = q + 2, *te = t;
        int depth = 0;
        for (; te < in->body.p + in->body.n; te++) {
            if (*te == '<' || *te == '{' || *te == '[') depth++;
            else if (*te == '>' || *te == '}' || *te == ']') depth--;
            else if (depth == 0 && *te == ' ') break;
        }
        type = (ll_span){t, (size_t)(te - t)};
        rw = SW_CNT_LOAD | SW_CNT_STORE;
        kind = in->op == LL_CMPXCHG ? SW_CNT_AT_CMPXCHG : rmw_kind(in);
    } else {
        return;
    }
    if (!ok || ptr.n == 0 || ptr.p[0] != '%' || type.n == 0 || is_local(m, f, ptr, 0)) return;
    char size[512], line[1200];
    type_size(type, size, sizeof size);
    uint32_t word = (*site)++ << SW_CNT_SITE_SHIFT | (uint32_t)kind << 2 | (uint32_t)rw;
    snprintf(line, sizeof line, "  call void @sw_rt_cnt_mem(ptr %.*s, i32 %s, i32 %u)", (int)ptr.n, ptr.p, size, word);
    ll_insert_before(m, i, line);
}

/* llvm.memcpy / memmove (source read, destination written) and llvm.memset. */
static void hook_intrinsic(ll_module *m, int i, const ll_inst *in, const ll_func *f, uint32_t *site) {
    ll_span c = ll_inst_callee(in);
    int copy = ll_span_starts(c, "@llvm.memcpy.") || ll_span_starts(c, "@llvm.memmove.");
    int set = ll_span_starts(c, "@llvm.memset.");
    if (!copy && !set) return;
    int ok0 = 0, ok1 = 0, ok2 = 0;
    ll_span dst = ll_inst_operand(in, 0, &ok0), src = ll_inst_operand(in, 1, &ok1), len = ll_inst_operand(in, 2, &ok2);
    if (!ok0 || !ok1 || !ok2) return;
    char line[600];
    if (dst.n && dst.p[0] == '%' && !is_local(m, f, dst, 0)) {
        snprintf(line, sizeof line, "  call void @sw_rt_cnt_range(ptr %.*s, i64 %.*s, i32 %u)", (int)dst.n, dst.p,
                 (int)len.n, len.p, (*site)++ << SW_CNT_SITE_SHIFT | SW_CNT_STORE);
        ll_insert_before(m, i, line);
    }
    if (copy && src.n && src.p[0] == '%' && !is_local(m, f, src, 0)) {
        snprintf(line, sizeof line, "  call void @sw_rt_cnt_range(ptr %.*s, i64 %.*s, i32 %u)", (int)src.n, src.p,
                 (int)len.n, len.p, (*site)++ << SW_CNT_SITE_SHIFT | SW_CNT_LOAD);
        ll_insert_before(m, i, line);
    }
}

static int name_has(ll_span fname, const char *w) {
    size_t n = strlen(w);
    for (size_t i = 0; i + n <= fname.n; i++)
        if (memcmp(fname.p + i, w, n) == 0) return 1;
    return 0;
}

/* The prelude's evaluation of a simdgroup's matrix products (sw_mma_flush and all it
 * calls, such as the typed stores of the results and their conversions): one lane
 * computes them for the whole simdgroup, so they count nothing (sw_rt_cnt_pause
 * around sw_mma_flush, per thread: its simd syncs switch threads); each lane's
 * sw_rt_cnt_mma counts its share of each product instead. */
static int is_collective(ll_span fname) { return name_has(fname, "sw_mma_") || name_has(fname, "8sw_store"); }

/* The prelude's simdgroup_multiply(_accumulate) write a lane's operands into its
 * simdgroup's product log and never touch a buffer: their loads and stores are not
 * hooked (a third of a matrix kernel's hook calls). */
static int touches_no_buffer(ll_span fname) { return name_has(fname, "simdgroup_multiply"); }

static void pause_around(ll_module *m, const ll_func *f) {
    for (int b = f->first_block; b < f->first_block + f->nblocks; b++) {
        const ll_block *blk = ll_block_at(m, b);
        for (int i = blk->first_inst; i < blk->first_inst + blk->ninsts; i++) {
            const ll_inst *in = ll_inst_at(m, i);
            if (b == f->first_block && i == blk->first_inst) ll_insert_before(m, i, "  call void @sw_rt_cnt_pause(i32 1)");
            if (in->op == LL_RET) ll_insert_before(m, i, "  call void @sw_rt_cnt_pause(i32 -1)");
        }
    }
}

/* Whether the module calls fn already (then clang declared it: the prelude's own
 * calls of sw_rt_cnt_pause). */
static int calls(const ll_module *m, const char *fn) {
    for (int i = 0; i < ll_inst_count(m); i++)
        if (ll_inst_at(m, i)->op == LL_CALL && ll_span_eq(ll_inst_callee(ll_inst_at(m, i)), fn)) return 1;
    return 0;
}

/* A block's execution, counted inline (a hook call per block was a third of a
 * counted run): the function loads its slot once (sw_rt_cnt_slot: where the worker
 * keeps the running thread's row, count.c), each block adds one to its count in the
 * row and, without a branch (a new block would renumber the module's), appends its
 * id to the row's list of touched blocks, the list's length growing only when the
 * count was 0.  A row is [nb counts][list length][nb + 1 ids]: the store at the
 * list's end is always in bounds, and overwritten unless the length grew. */
static void count_block(ll_module *m, int first, int b, int nb, int entry) {
    static const char *const tmpl =
        "  %R# = load ptr, ptr %__swcnt.slot\n"
        "  %P# = getelementptr inbounds i32, ptr %R#, i64 #\n"
        "  %O# = load i32, ptr %P#\n"
        "  %N# = add i32 %O#, 1\n"
        "  store i32 %N#, ptr %P#\n"
        "  %Z# = icmp eq i32 %O#, 0\n"
        "  %W# = zext i1 %Z# to i32\n"
        "  %L# = getelementptr inbounds i32, ptr %R#, i64 $\n"
        "  %M# = load i32, ptr %L#\n"
        "  %K# = add i32 %M#, %W#\n"
        "  store i32 %K#, ptr %L#\n"
        "  %X# = zext i32 %M# to i64\n"
        "  %I# = getelementptr inbounds i32, ptr %L#, i64 %X#\n"
        "  %J# = getelementptr inbounds i32, ptr %I#, i64 1\n"
        "  store i32 #, ptr %J#";
    msl_buf t = {0};
    if (entry) msl_buf_puts(&t, "  %__swcnt.slot = call ptr @sw_rt_cnt_slot(ptr @sw_cnt_fallback)\n");
    for (const char *p = tmpl; *p; p++) {
        if (*p == '#') msl_buf_printf(&t, "%d", b);
        else if (*p == '$') msl_buf_printf(&t, "%d", nb);
        else if (*p == '%' && p[1] >= 'A' && p[1] <= 'Z') msl_buf_printf(&t, "%%__swcnt.%c", *++p);
        else msl_buf_printf(&t, "%c", *p);
    }
    char *text = msl_buf_take(&t);
    ll_insert_before(m, first, text);
    free(text);
}

static int run_count(ll_module *m, char **err) {
    int nb = ll_block_count(m);
    int pause_declared = calls(m, "@sw_rt_cnt_pause");
    uint64_t *rows = calloc((size_t)(nb ? nb : 1) * SW_CNT_COLS, sizeof *rows);
    if (!rows) {
        *err = strdup("out of memory for the block table");
        return -1;
    }
    uint32_t site = 0;
    for (int f = 0; f < ll_func_count(m); f++)
        if (name_has(ll_func_at(m, f)->name, "sw_mma_flush")) pause_around(m, ll_func_at(m, f));
    for (int b = 0; b < nb; b++) {
        const ll_block *blk = ll_block_at(m, b);
        /* a collective function is not hooked at all: it counts nothing, and it
         * touches only the simdgroup's product log and the lanes' matrices */
        if (is_collective(ll_func_at(m, blk->func)->name)) continue;
        int first = -1, hook = !touches_no_buffer(ll_func_at(m, blk->func)->name);
        for (int i = blk->first_inst; i < blk->first_inst + blk->ninsts; i++) {
            const ll_inst *in = ll_inst_at(m, i);
            if (first < 0 && in->op != LL_PHI) first = i;
            count_inst(in, rows + (size_t)b * SW_CNT_COLS);
            if (!hook) continue;
            if (in->op == LL_CALL) hook_intrinsic(m, i, in, ll_func_at(m, blk->func), &site);
            else hook_access(m, i, in, ll_func_at(m, blk->func), &site);
        }
        if (first >= 0) count_block(m, first, b, nb, b == ll_func_at(m, blk->func)->first_block);
    }
    if (site >= (1u << (32 - SW_CNT_SITE_SHIFT))) {
        free(rows);
        *err = strdup("too many memory access sites to number");
        return -1;
    }
    msl_buf t = {0};
    /* the row blocks count into outside a counting worker's thread (a library's
     * static initialisers, on the host's thread): counted and never read */
    msl_buf_printf(&t, "\ndeclare ptr @sw_rt_cnt_slot(ptr)\ndeclare void @sw_rt_cnt_mem(ptr, i32, i32)\n"
                       "declare void @sw_rt_cnt_range(ptr, i64, i32)\n%s"
                       "@sw_cnt_scratch = internal global [%d x i32] zeroinitializer\n"
                       "@sw_cnt_fallback = internal global ptr @sw_cnt_scratch\n"
                       "@sw_cnt_nblocks = constant i32 %d\n@sw_cnt_nsites = constant i32 %u\n"
                       "@sw_cnt_blocks = constant [%d x i64] [",
                   pause_declared ? "" : "declare void @sw_rt_cnt_pause(i32)\n", 2 * nb + 2, nb, site,
                   (nb ? nb : 1) * SW_CNT_COLS);
    for (int k = 0; k < (nb ? nb : 1) * SW_CNT_COLS; k++)
        msl_buf_printf(&t, "%si64 %llu", k ? ", " : "", (unsigned long long)rows[k]);
    msl_buf_puts(&t, "]\n");
    char *text = msl_buf_take(&t);
    ll_append(m, text);
    free(text);
    free(rows);
    return 0;
}

const sw_ir_pass sw_count_pass = {"count", 8, run_count};
