/* count_pass.c — the counting variant's IR pass (SW_INSTR_COUNT, count.h).
 *
 * Counts are per basic block of the optimised IR: the pass gives every block it
 * counts an id (is_counted: in module order), counts its executions inline where the
 * block starts (after its phis: count_block), and appends the static table the
 * runtime multiplies by those executions (sw_cnt_blocks: SW_CNT_COLS numbers a
 * block, count.h).  Memory: a plain load or store of a declared threadgroup
 * variable is static too (its bytes are its block's); any other load, store, atomic
 * and memcpy/memmove/memset of a pointer that is not computed from memory that is
 * never a buffer (the function's allocas, the library's globals, the runtime's:
 * pointer_root) is hooked with its address, width and static site.  A plain load or
 * store is classified inline (__swcnt.mem, below): in the threadgroup arena it adds
 * its bytes to the worker's sum, outside the granules the buffers occupy it is
 * dropped (the thread's own stack, the runtime's tables: sw_cnt_ctx), and one that
 * may be in a buffer is appended to the running thread's log (sw_rt_cnt_mem when the
 * log is full); atomics and ranges always call the runtime.
 *
 * The edited module is optimised again (sw_ir_pass.reoptimise): the helpers are
 * inlined and the kernel's values stay in registers around the rare calls (a call
 * per access spilled a dot product's accumulators: perf, attn_fwd counted).  The
 * static numbers are the IR's before the edit, and the counting code is memory
 * operations on memory the kernel cannot name and calls the optimiser cannot see
 * into, so no optimisation can change what it counts.
 *
 * What a block counts (the documented model, results/README.md):
 *   flops     fadd, fsub, fmul, fdiv, frem: 1 an element; llvm.fma / llvm.fmuladd: 2;
 *             by the element type (double counts as float); nothing else
 *             (comparisons, conversions, negation, math functions) is a flop;
 *   int ops   add, sub, mul, udiv, sdiv, urem, srem, shl, lshr, ashr, and, or, xor,
 *             icmp: 1 an element (address arithmetic in getelementptr is not one);
 *   insts     every instruction but phis, bitcasts and llvm.dbg / llvm.lifetime
 *             markers;
 *   barriers  calls of sw_rt_threadgroup_barrier and sw_rt_simd_sync. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/count.h"
#include "swmetal/exec.h"
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
/* The bytes of a scalar or vector type; 0 for another (an aggregate). */
static int known_bytes(ll_span t) {
    int lanes = 1;
    ll_scalar s = ll_type_scalar(t, &lanes);
    if (s == LL_S_I1 && lanes > 1) return (lanes + 7) / 8;
    return scalar_bytes(s) * lanes;
}

static void type_size(ll_span t, char *out, size_t n) {
    int b = known_bytes(t);
    if (b) snprintf(out, n, "%d", b);
    else snprintf(out, n, "ptrtoint (ptr getelementptr (%.*s, ptr null, i32 1) to i32)", (int)t.n, t.p);
}

static int name_has(ll_span fname, const char *w) {
    size_t n = strlen(w);
    for (size_t i = 0; i + n <= fname.n; i++)
        if (memcmp(fname.p + i, w, n) == 0) return 1;
    return 0;
}

/* The prelude's simdgroup matrix emulation: a lane's bookkeeping in its
 * simdgroup's product log (sw_mma_lane_record, sw_mma_lane_settle, sw_mma_lane_forget: out of line
 * in the counting variant), and the evaluation of the products (sw_mma_flush and all
 * it calls, such as the typed stores of the results and their conversions), which
 * one lane runs for the whole simdgroup.  None of it is the kernel's work: such a
 * function counts nothing (sw_rt_cnt_pause around sw_mma_flush, per thread: its
 * simd syncs switch threads), nor does a call of one; each lane's sw_rt_cnt_mma
 * counts its share of each product instead. */
static int is_collective(ll_span fname) { return name_has(fname, "sw_mma_") || name_has(fname, "8sw_store"); }

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
        /* sw_rt_tg_arg: the entry's unpacking of a threadgroup argument, as a marker */
        if (ll_span_starts(c, "@llvm.dbg.") || ll_span_starts(c, "@llvm.lifetime.") || is_collective(c) ||
            ll_span_eq(c, "@sw_rt_tg_arg"))
            return;
        if (ll_span_starts(c, "@llvm.fma.") || ll_span_starts(c, "@llvm.fmuladd.")) {
            s = ll_type_scalar(ll_inst_type(in), &lanes);
            row[flop_col(s)] += 2 * (uint64_t)lanes;
        }
        if (ll_span_eq(c, "@sw_rt_threadgroup_barrier")) row[SW_CNT_BAR_TG]++;
        if (ll_span_eq(c, "@sw_rt_simd_sync")) row[SW_CNT_BAR_SIMD]++;
        break;
    }
    default:
        /* a reinterpretation is no instruction, and x86-64's calling convention
         * leaves ones arm64's does not (an 8-byte vector passed as a double) */
        if (ll_span_starts(in->body, "bitcast ")) return;
        break;
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

/* Where an address computed in f comes from, when f says (pointer_root).
 *   ROOT_OWN: memory that is never a buffer nor threadgroup memory, so the runtime
 *     would drop an access there, and not hooking it saves the check: a thread's
 *     local variable (one of f's allocas: an address computed from a local cannot
 *     leave it without undefined behaviour; a pointer walking a local array was most
 *     of a matrix kernel's hook calls), the library's own data (a global, such as
 *     the prelude's lane tables), the runtime's (below).
 *   ROOT_THREADGROUP: a threadgroup variable (the front end's sw_rt_tg_alloc(_init),
 *     which returns its place in the threadgroup arena), threadgroup memory for the
 *     same reason: its plain accesses' bytes are their block's (SW_CNT_TG_LOAD/STORE),
 *     counted with the block's executions instead of by an inline check per access
 *     (most of a flash-attention kernel's hooks). */
enum { ROOT_UNKNOWN, ROOT_OWN, ROOT_THREADGROUP, ROOT_CYCLE /* back to the phi being resolved */ };

/* What a call that returns a pointer gives: the front end's threadgroup variable,
 * or the runtime's own memory (a thread's ids, its simd slots, its simdgroup's
 * product log: never a buffer, so the runtime would drop an access there). */
static int call_root(ll_span callee) {
    if (ll_span_eq(callee, "@sw_rt_tg_alloc_init") || ll_span_eq(callee, "@sw_rt_tg_alloc") ||
        ll_span_eq(callee, "@sw_rt_tg_arg"))
        return ROOT_THREADGROUP;
    if (ll_span_eq(callee, "@sw_rt_ids") || ll_span_eq(callee, "@sw_rt_mma_log") ||
        ll_span_starts(callee, "@sw_rt_simd_"))
        return ROOT_OWN;
    return ROOT_UNKNOWN;
}

static int pointer_root(const ll_module *m, const ll_func *f, ll_span ptr, ll_span phi, int depth);

/* f's parameters as its define line lists them: how many, and which is named v
 * (*at, -1 when none is). */
static int params_of(const ll_module *m, const ll_func *f, ll_span v, int *at) {
    ll_span t = ll_module_text(m);
    const char *p = f->name.p + f->name.n, *end = t.p + t.n;
    *at = -1;
    if (p >= end || *p != '(') return 0;
    int k = 0, depth = 0, any = 0;
    for (const char *q = p + 1; q < end && *q != '\n'; q++) {
        if (*q == '(' || *q == '[' || *q == '{' || *q == '<') depth++;
        else if ((*q == ')' || *q == ']' || *q == '}' || *q == '>') && depth-- == 0) break;
        else if (depth == 0 && *q == ',') k++;
        else if (*q == '%' && *at < 0 && (size_t)(end - q) > v.n && memcmp(q, v.p, v.n) == 0 &&
                 (q[v.n] == ',' || q[v.n] == ')'))
            *at = k;
        if (*q != ' ') any = 1;
    }
    return any ? k + 1 : 0;
}

/* The number of arguments of a call. */
static int call_args(const ll_inst *in) {
    int n = 0, ok = 1;
    while (ok) {
        ll_inst_operand(in, n, &ok);
        n += ok;
    }
    return n;
}

/* The root of parameter k of f (np parameters): the same at every call.  An indirect
 * call with as many arguments might be another call of f (a kernel's address is in
 * the library's threadgroup table, compared, never called; the product log's store
 * functions are called through pointers): then none is known. */
static int param_root(const ll_module *m, const ll_func *f, int k, int np, int depth) {
    int root = ROOT_UNKNOWN, calls = 0;
    for (int i = 0; i < ll_inst_count(m); i++) {
        const ll_inst *in = ll_inst_at(m, i);
        if (in->op != LL_CALL) continue;
        ll_span c = ll_inst_callee(in);
        if (c.n == 0 && call_args(in) == np) return ROOT_UNKNOWN;
        if (c.n != f->name.n || memcmp(c.p, f->name.p, c.n) != 0) continue;
        int ok;
        ll_span arg = ll_inst_operand(in, k, &ok);
        const ll_func *caller = ll_func_at(m, ll_block_at(m, in->block)->func);
        int r = ok ? pointer_root(m, caller, arg, (ll_span){arg.p, 0}, depth + 1) : ROOT_UNKNOWN;
        if (r != ROOT_THREADGROUP && r != ROOT_OWN) return ROOT_UNKNOWN;
        if (calls++ && r != root) return ROOT_UNKNOWN;
        root = r;
    }
    return root;
}

/* The root of ptr: an alloca, a threadgroup allocation, or a getelementptr or phi
 * of such (every incoming value the same root).  A phi's incoming value that leads
 * back to the phi (a pointer stepped round a loop: the phi itself, or a
 * getelementptr of it) adds nothing; cycles through other phis are not followed. */
static int pointer_root(const ll_module *m, const ll_func *f, ll_span ptr, ll_span phi, int depth) {
    if (ptr.n > 1 && ptr.p[0] == '@') return ROOT_OWN; /* the library's own data */
    if (ptr.n == 0 || ptr.p[0] != '%' || depth > 12) return ROOT_UNKNOWN;
    if (ptr.n == phi.n && memcmp(ptr.p, phi.p, phi.n) == 0) return ROOT_CYCLE;
    const ll_inst *in = defined_in(m, f, ptr);
    if (!in) {
        int k, np = params_of(m, f, ptr, &k);
        return k < 0 ? ROOT_UNKNOWN : param_root(m, f, k, np, depth);
    }
    if (in->op == LL_ALLOCA) return ROOT_OWN;
    if (in->op == LL_CALL) return call_root(ll_inst_callee(in));
    if (in->op == LL_GEP) return pointer_root(m, f, pointer_after_type(in), phi, depth + 1);
    if (in->op != LL_PHI) return ROOT_UNKNOWN;
    /* "phi ptr [ %a, %bb1 ], [ %b, %bb2 ]" */
    const char *p = in->body.p, *end = in->body.p + in->body.n;
    int root = ROOT_CYCLE;
    while ((p = memchr(p, '[', (size_t)(end - p))) != NULL) {
        const char *v = p + 1;
        while (v < end && *v == ' ') v++;
        const char *q = v;
        while (q < end && *q != ',' && *q != ' ') q++;
        int r = pointer_root(m, f, (ll_span){v, (size_t)(q - v)}, ptr, depth + 1);
        if (r == ROOT_UNKNOWN || (r != ROOT_CYCLE && root != ROOT_CYCLE && r != root)) return ROOT_UNKNOWN;
        if (r != ROOT_CYCLE) root = r;
        p = q;
    }
    return root == ROOT_CYCLE ? ROOT_UNKNOWN : root;
}

static int root_of(const ll_module *m, const ll_func *f, ll_span ptr) {
    return pointer_root(m, f, ptr, (ll_span){ptr.p, 0}, 0);
}

static int is_own(const ll_module *m, const ll_func *f, ll_span ptr) {
    return root_of(m, f, ptr) == ROOT_OWN;
}

/* The hook call before a memory instruction, or nothing for an access it cannot
 * be (a global, the thread's own local variable) or one it does not know: a plain
 * one through the inline classifier, an atomic straight to the runtime.  A plain
 * access of a threadgroup variable is counted in its block's row instead. */
static void hook_access(ll_module *m, int i, const ll_inst *in, const ll_func *f, uint32_t *site, uint64_t *row) {
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
    if (!ok || ptr.n == 0 || ptr.p[0] != '%' || type.n == 0) return;
    int root = root_of(m, f, ptr);
    if (root == ROOT_OWN) return;
    if (root == ROOT_THREADGROUP && kind == SW_CNT_AT_NONE && known_bytes(type)) {
        row[rw == SW_CNT_LOAD ? SW_CNT_TG_LOAD : SW_CNT_TG_STORE] += (uint64_t)known_bytes(type);
        return;
    }
    char size[512], line[1200];
    type_size(type, size, sizeof size);
    uint32_t word = (*site)++ << SW_CNT_SITE_SHIFT | (uint32_t)kind << 2 | (uint32_t)rw;
    if (kind == SW_CNT_AT_NONE)
        snprintf(line, sizeof line, "  call void @__swcnt.mem(ptr %%__swcnt.ctx, ptr %.*s, i32 %s, i32 %u)", (int)ptr.n,
                 ptr.p, size, word);
    else
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
    if (dst.n && dst.p[0] == '%' && !is_own(m, f, dst)) {
        snprintf(line, sizeof line, "  call void @sw_rt_cnt_range(ptr %.*s, i64 %.*s, i32 %u)", (int)dst.n, dst.p,
                 (int)len.n, len.p, (*site)++ << SW_CNT_SITE_SHIFT | SW_CNT_STORE);
        ll_insert_before(m, i, line);
    }
    if (copy && src.n && src.p[0] == '%' && !is_own(m, f, src)) {
        snprintf(line, sizeof line, "  call void @sw_rt_cnt_range(ptr %.*s, i64 %.*s, i32 %u)", (int)src.n, src.p,
                 (int)len.n, len.p, (*site)++ << SW_CNT_SITE_SHIFT | SW_CNT_LOAD);
        ll_insert_before(m, i, line);
    }
}

/* The prelude's float -> bfloat conversions (__truncsfbf2, __truncdfbf2): the
 * code generator calls them for an fptrunc, which counts as the one instruction it
 * is where it stands (as the C library's half conversions are not counted: on the
 * GPU a conversion is an instruction).  Counting their blocks would also count
 * whatever the code generator and the second optimisation decided about a pure
 * instruction: a speculated fptrunc ran them four times as often in attn_fwd. */
static int is_conversion(ll_span fname) { return ll_span_starts(fname, "@__trunc"); }


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

/* Whether an instruction of [from, to) calls fn. */
static int calls_in(const ll_module *m, int from, int to, const char *fn) {
    for (int i = from; i < to; i++)
        if (ll_inst_at(m, i)->op == LL_CALL && ll_span_eq(ll_inst_callee(ll_inst_at(m, i)), fn)) return 1;
    return 0;
}

/* Whether the module calls fn already (then clang declared it: the prelude's own
 * calls of sw_rt_cnt_pause). */
static int calls(const ll_module *m, const char *fn) { return calls_in(m, 0, ll_inst_count(m), fn); }

/* Whether f calls fn (a function's instructions are contiguous). */
static int func_calls(const ll_module *m, const ll_func *f, const char *fn) {
    if (f->nblocks == 0) return 0;
    const ll_block *last = ll_block_at(m, f->first_block + f->nblocks - 1);
    return calls_in(m, ll_block_at(m, f->first_block)->first_inst, last->first_inst + last->ninsts, fn);
}

/* A block's execution, counted inline where it starts (__swcnt.block, below: one
 * more in the running thread's row, and the block's id appended to the row's list
 * when it was the first).  A function finds the worker's sw_cnt_ctx once, in its
 * entry block, and the row in it: the row is the running thread's for the whole
 * call (a fiber switch inside a call returns to the same thread), except in a
 * function that pauses counting (sw_rt_cnt_pause: the prelude's simdgroup memo),
 * whose blocks read it each. */
static void count_block(ll_module *m, int first, int b, int nb, int entry, int reload) {
    msl_buf t = {0};
    if (entry)
        msl_buf_puts(&t, "  %__swcnt.ctx = call ptr @sw_rt_cnt_slot(ptr @sw_cnt_fallback)\n"
                         "  %__swcnt.row = load ptr, ptr %__swcnt.ctx\n");
    if (reload) {
        msl_buf_printf(&t, "  %%__swcnt.row%d = load ptr, ptr %%__swcnt.ctx\n", b);
        msl_buf_printf(&t, "  call void @__swcnt.block(ptr %%__swcnt.row%d, i64 %d, i64 %d)", b, b, nb);
    } else {
        msl_buf_printf(&t, "  call void @__swcnt.block(ptr %%__swcnt.row, i64 %d, i64 %d)", b, nb);
    }
    char *text = msl_buf_take(&t);
    ll_insert_before(m, first, text);
    free(text);
}

/* The inline helpers the pass's calls name.  A row is [nb counts][list length][the
 * listed block ids]: a block is listed once, when its count leaves 0, so that the
 * reduction costs what was executed, not the kernel's size (count.c). */
static void helpers(msl_buf *t) {
    msl_buf_puts(t, "define internal void @__swcnt.block(ptr %row, i64 %b, i64 %nb) alwaysinline {\n"
                    "entry:\n"
                    "  %p = getelementptr inbounds i32, ptr %row, i64 %b\n"
                    "  %o = load i32, ptr %p\n"
                    "  %n = add i32 %o, 1\n"
                    "  store i32 %n, ptr %p\n"
                    "  %first = icmp eq i32 %o, 0\n"
                    "  br i1 %first, label %list, label %done\n"
                    "list:\n"
                    "  %lp = getelementptr inbounds i32, ptr %row, i64 %nb\n"
                    "  %len = load i32, ptr %lp\n"
                    "  %len1 = add i32 %len, 1\n"
                    "  store i32 %len1, ptr %lp\n"
                    "  %at = zext i32 %len1 to i64\n"
                    "  %ep = getelementptr inbounds i32, ptr %lp, i64 %at\n"
                    "  %id = trunc i64 %b to i32\n"
                    "  store i32 %id, ptr %ep\n"
                    "  br label %done\n"
                    "done:\n"
                    "  ret void\n"
                    "}\n");
    /* a plain access (word's bit 0: a load, else a store): threadgroup bytes summed,
     * one in a buffer's granule appended raw to the running thread's log (count.h;
     * to the runtime when the log is full), anything else dropped */
    msl_buf_printf(t,
                   "define internal void @__swcnt.mem(ptr %%c, ptr %%p, i32 %%s, i32 %%w) alwaysinline {\n"
                   "entry:\n"
                   "  %%a = ptrtoint ptr %%p to i64\n"
                   "  %%arp = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%ar = load i64, ptr %%arp\n"
                   "  %%d = sub i64 %%a, %%ar\n"
                   "  %%tg = icmp ult i64 %%d, %d\n"
                   "  br i1 %%tg, label %%sum, label %%device\n"
                   "sum:\n"
                   "  %%isld = trunc i32 %%w to i1\n"
                   "  %%f = select i1 %%isld, i64 %zu, i64 %zu\n"
                   "  %%fp = getelementptr inbounds i8, ptr %%c, i64 %%f\n"
                   "  %%o = load i64, ptr %%fp\n"
                   "  %%s64 = zext i32 %%s to i64\n"
                   "  %%n = add i64 %%o, %%s64\n"
                   "  store i64 %%n, ptr %%fp\n"
                   "  ret void\n"
                   "device:\n"
                   "  %%bp = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%base = load i64, ptr %%bp\n"
                   "  %%np = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%ng = load i64, ptr %%np\n"
                   "  %%sp = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%sh = load i64, ptr %%sp\n"
                   "  %%rel = sub i64 %%a, %%base\n"
                   "  %%g = lshr i64 %%rel, %%sh\n"
                   "  %%inr = icmp ult i64 %%g, %%ng\n"
                   "  br i1 %%inr, label %%granule, label %%done\n"
                   "granule:\n"
                   "  %%mp = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%map = load ptr, ptr %%mp\n"
                   "  %%gb = lshr i64 %%g, 3\n"
                   "  %%bytep = getelementptr inbounds i8, ptr %%map, i64 %%gb\n"
                   "  %%byte = load i8, ptr %%bytep\n"
                   "  %%g8 = trunc i64 %%g to i8\n"
                   "  %%bit = and i8 %%g8, 7\n"
                   "  %%sb = lshr i8 %%byte, %%bit\n"
                   "  %%in = trunc i8 %%sb to i1\n"
                   "  br i1 %%in, label %%hook, label %%done\n"
                   "hook:\n"
                   "  %%lp = getelementptr inbounds i8, ptr %%c, i64 %zu\n"
                   "  %%log = load ptr, ptr %%lp\n"
                   "  %%nump = getelementptr inbounds i8, ptr %%log, i64 %zu\n"
                   "  %%num = load i32, ptr %%nump\n"
                   "  %%capp = getelementptr inbounds i8, ptr %%log, i64 %zu\n"
                   "  %%cap = load i32, ptr %%capp\n"
                   "  %%room = icmp ult i32 %%num, %%cap\n"
                   "  br i1 %%room, label %%append, label %%runtime\n"
                   "append:\n"
                   "  %%arr = load ptr, ptr %%log\n"
                   "  %%num64 = zext i32 %%num to i64\n"
                   "  %%e = getelementptr inbounds [%zu x i8], ptr %%arr, i64 %%num64\n"
                   "  %%site = lshr i32 %%w, %d\n"
                   "  store i32 %%site, ptr %%e\n"
                   "  %%bufp = getelementptr inbounds i8, ptr %%e, i64 %zu\n"
                   "  store i16 %d, ptr %%bufp\n"
                   "  %%rwp = getelementptr inbounds i8, ptr %%e, i64 %zu\n"
                   "  %%rw32 = and i32 %%w, 3\n"
                   "  %%rw = trunc i32 %%rw32 to i16\n"
                   "  store i16 %%rw, ptr %%rwp\n"
                   "  %%szp = getelementptr inbounds i8, ptr %%e, i64 %zu\n"
                   "  store i32 %%s, ptr %%szp\n"
                   "  %%offp = getelementptr inbounds i8, ptr %%e, i64 %zu\n"
                   "  store i64 %%a, ptr %%offp\n"
                   "  %%num1 = add i32 %%num, 1\n"
                   "  store i32 %%num1, ptr %%nump\n"
                   "  br label %%done\n"
                   "runtime:\n"
                   "  call void @sw_rt_cnt_mem(ptr %%p, i32 %%s, i32 %%w)\n"
                   "  br label %%done\n"
                   "done:\n"
                   "  ret void\n"
                   "}\n",
                   offsetof(sw_cnt_ctx, arena), SW_TG_MEM_LIMIT, offsetof(sw_cnt_ctx, tg_load),
                   offsetof(sw_cnt_ctx, tg_store), offsetof(sw_cnt_ctx, base), offsetof(sw_cnt_ctx, ngranules),
                   offsetof(sw_cnt_ctx, shift), offsetof(sw_cnt_ctx, granules), offsetof(sw_cnt_ctx, log),
                   offsetof(sw_cnt_log, n), offsetof(sw_cnt_log, cap), sizeof(sw_cnt_access), SW_CNT_SITE_SHIFT,
                   offsetof(sw_cnt_access, buf), (int16_t)SW_CNT_RAW, offsetof(sw_cnt_access, rw),
                   offsetof(sw_cnt_access, size), offsetof(sw_cnt_access, off));
}

/* The first optimisation inferred what each function touches (memory(none),
 * memory(read), memory(argmem: ...)).  Counting makes every instrumented function
 * write the worker's counters, so those facts are false now, and the second
 * optimisation would act on them: drop or merge calls of a memory(none) function,
 * hoist a memory(read) one out of a loop — counts changed (attn_fwd's integer
 * operations by 4.5% before this).  Every attribute group loses its memory(...)
 * but those only declarations use (intrinsics, the C library: not instrumented,
 * their facts hold). */
static int forget_memory_effects(ll_module *m) {
    ll_span t = ll_module_text(m);
    const char *end = t.p + t.n;
    enum { DECLARED = 1, DEFINED = 2 };
    int cap = 256;
    unsigned char *use = calloc((size_t)cap, 1);
    if (!use) return -1;
    for (const char *p = t.p; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        int kind = (size_t)(eol - p) > 8 && memcmp(p, "declare ", 8) == 0 ? DECLARED
                   : (size_t)(eol - p) > 7 && memcmp(p, "define ", 7) == 0  ? DEFINED : 0;
        int g = kind ? ll_line_attr_group((ll_span){p, (size_t)(eol - p)}) : -1;
        if (g >= cap) {
            int nc = g + 256;
            unsigned char *u = realloc(use, (size_t)nc);
            if (!u) {
                free(use);
                return -1;
            }
            memset(u + cap, 0, (size_t)(nc - cap));
            use = u;
            cap = nc;
        }
        if (g >= 0) use[g] |= (unsigned char)kind;
        p = eol + 1;
    }
    static const char key[] = "attributes #";
    for (const char *p = t.p; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if ((size_t)(eol - p) > sizeof key && memcmp(p, key, sizeof key - 1) == 0) {
            int g = atoi(p + sizeof key - 1);
            if (g < 0 || g >= cap || use[g] != DECLARED) {
                for (const char *q = p; q + 7 < eol; q++) {
                    if (memcmp(q, " memory(", 8) != 0) continue;
                    const char *close = memchr(q, ')', (size_t)(eol - q));
                    if (close) ll_replace_text(m, (ll_span){q, (size_t)(close + 1 - q)}, "");
                }
            }
        }
        p = eol + 1;
    }
    free(use);
    return 0;
}

/* A lane's share of a simdgroup product (the prelude's sw_rt_cnt_mma(type), type 0
 * float, 1 half, 2 bfloat): its flops are its block's, like any other instruction's,
 * and the call goes (the one instruction a product counts as stays counted).  A type
 * that is not a literal leaves the call, which counts the same at run time. */
static int fold_mma_count(ll_module *m, int i, const ll_inst *in, uint64_t *row) {
    if (in->op != LL_CALL || !ll_span_eq(ll_inst_callee(in), "@sw_rt_cnt_mma")) return 0;
    int ok;
    ll_span type = ll_inst_operand(in, 0, &ok);
    if (!ok || type.n != 1 || type.p[0] < '0' || type.p[0] > '2') return 0;
    int col = type.p[0] == '1' ? SW_CNT_HALF : type.p[0] == '2' ? SW_CNT_BFLOAT : SW_CNT_FLOAT;
    row[col] += SW_CNT_MMA_FLOPS / SW_SIMD_WIDTH;
    ll_replace(m, i, "  ; sw_rt_cnt_mma: counted with its block");
    return 1;
}

/* The line of the module's text holding p. */
static ll_span line_at(ll_span text, const char *p) {
    const char *a = p, *e = p, *end = text.p + text.n;
    while (a > text.p && a[-1] != '\n') a--;
    while (e < end && *e != '\n') e++;
    return (ll_span){a, (size_t)(e - a)};
}

/* The "attributes #g = { ... }" line, or an empty span. */
static ll_span attr_group_line(ll_span text, int g) {
    char key[32];
    int kn = snprintf(key, sizeof key, "attributes #%d = {", g);
    for (const char *p = text.p, *end = text.p + text.n; p < end;) {
        ll_span l = line_at(text, p);
        if (l.n > (size_t)kn && memcmp(l.p, key, (size_t)kn) == 0) return l;
        p = l.p + l.n + 1;
    }
    return (ll_span){text.p, 0};
}

/* Group g's attributes as a new group `to`: inlined always, memory facts dropped. */
static void put_inline_group(msl_buf *t, ll_span g, int to) {
    const char *open = memchr(g.p, '{', g.n), *close = g.p + g.n;
    while (close > g.p && close[-1] != '}') close--;
    msl_buf_printf(t, "attributes #%d = { alwaysinline", to);
    for (const char *p = open + 1; p < close - 1;) {
        while (p < close - 1 && *p == ' ') p++;
        const char *w = p;
        int quoted = 0, depth = 0;
        for (; p < close - 1 && (quoted || depth || *p != ' '); p++) {
            if (*p == '"') quoted = !quoted;
            else if (!quoted && *p == '(') depth++;
            else if (!quoted && *p == ')') depth--;
        }
        ll_span word = {w, (size_t)(p - w)};
        if (word.n && !ll_span_eq(word, "noinline") && !ll_span_starts(word, "memory("))
            msl_buf_printf(t, " %.*s", (int)word.n, word.p);
    }
    msl_buf_puts(t, " }\n");
}

/* The prelude's per-lane bookkeeping of simdgroup matrices (sw_mma_lane_*) is out
 * of line in the counting variant (noinline) only until this pass has run, so that
 * none of it is counted or hooked (is_collective).  Then each such function's
 * attribute group becomes a copy with alwaysinline for noinline, and the second
 * optimisation puts the bookkeeping back where it is called, uninstrumented: a
 * product costs a counted run what it costs the plain variant.  The copies are
 * numbered after the module's last group. */
static void inline_lane_bookkeeping(ll_module *m, msl_buf *t) {
    ll_span text = ll_module_text(m);
    int top = -1, from[16], nfrom = 0;
    for (const char *p = text.p, *end = text.p + text.n; p < end;) {
        ll_span l = line_at(text, p);
        if (ll_span_starts(l, "attributes #") && atoi(l.p + 12) > top) top = atoi(l.p + 12);
        p = l.p + l.n + 1;
    }
    for (int f = 0; f < ll_func_count(m); f++) {
        const ll_func *fn = ll_func_at(m, f);
        if (!name_has(fn->name, "sw_mma_lane_")) continue;
        ll_span line = line_at(text, fn->name.p), ref = ll_line_attr_ref(line);
        if (!ll_span_starts(line, "define ") || ref.n == 0) continue;
        int g = atoi(ref.p + 1), k = 0;
        while (k < nfrom && from[k] != g) k++;
        if (k == nfrom) {
            if (nfrom == 16 || attr_group_line(text, g).n == 0) continue; /* stays out of line: slower, same counts */
            from[nfrom++] = g;
        }
        char to[24];
        snprintf(to, sizeof to, "#%d", top + 1 + k);
        ll_replace_text(m, ref, to);
    }
    for (int k = 0; k < nfrom; k++) put_inline_group(t, attr_group_line(text, from[k]), top + 1 + k);
}

/* Whether f calls a function the module defines. */
static int calls_defined(const ll_module *m, const ll_func *f) {
    const ll_block *last = ll_block_at(m, f->first_block + f->nblocks - 1);
    for (int i = ll_block_at(m, f->first_block)->first_inst; i < last->first_inst + last->ninsts; i++) {
        ll_span c = ll_inst_callee(ll_inst_at(m, i));
        for (int g = 0; c.n && g < ll_func_count(m); g++)
            if (ll_func_at(m, g)->nblocks && ll_func_at(m, g)->name.n == c.n &&
                memcmp(ll_func_at(m, g)->name.p, c.p, c.n) == 0)
                return 1;
    }
    return 0;
}

/* A device entry of a kernel (msl_emit.c: sw_entry_N, and sw_range_N, which the
 * counting variant never runs): it unpacks a thread's arguments and calls the
 * kernel, which the counting variant keeps out of line (the prelude's invoke).  One
 * that calls no function of the module has the kernel in it after all: counted. */
static int is_entry(const ll_module *m, const ll_func *f) {
    return (ll_span_starts(f->name, "@sw_entry_") || ll_span_starts(f->name, "@sw_range_")) && calls_defined(m, f);
}

/* Whether the pass counts f's blocks: a collective function is not instrumented at
 * all (it counts nothing, and it touches only the simdgroup's product log and the
 * lanes' matrices), nor is a conversion or an entry.  Only counted blocks get an id,
 * so what the rest compiles to (which may differ by host) is not in the table. */
static int is_counted(const ll_module *m, const ll_func *f) {
    return f->nblocks && !is_collective(f->name) && !is_conversion(f->name) && !is_entry(m, f);
}

/* One function's blocks, ids id0 on: counted, and their accesses hooked. */
static void count_func(ll_module *m, const ll_func *f, int id0, int nb, uint64_t *rows, uint32_t *site) {
    int reload = func_calls(m, f, "@sw_rt_cnt_pause");
    for (int b = f->first_block; b < f->first_block + f->nblocks; b++) {
        const ll_block *blk = ll_block_at(m, b);
        int first = blk->first_inst, id = id0 + (b - f->first_block);
        uint64_t *row = rows + (size_t)id * SW_CNT_COLS;
        while (first < blk->first_inst + blk->ninsts && ll_inst_at(m, first)->op == LL_PHI) first++;
        /* the count first: the hooks use the entry block's ctx */
        count_block(m, first, id, nb, b == f->first_block, reload);
        for (int i = blk->first_inst; i < blk->first_inst + blk->ninsts; i++) {
            const ll_inst *in = ll_inst_at(m, i);
            count_inst(in, row);
            if (fold_mma_count(m, i, in, row)) continue;
            if (in->op == LL_CALL) hook_intrinsic(m, i, in, f, site);
            else hook_access(m, i, in, f, site, row);
        }
    }
}

static int run_count(ll_module *m, char **err) {
    int nb = 0;
    for (int f = 0; f < ll_func_count(m); f++)
        if (is_counted(m, ll_func_at(m, f))) nb += ll_func_at(m, f)->nblocks;
    int pause_declared = calls(m, "@sw_rt_cnt_pause");
    uint64_t *rows = calloc((size_t)(nb ? nb : 1) * SW_CNT_COLS, sizeof *rows);
    if (!rows) {
        *err = strdup("out of memory for the block table");
        return -1;
    }
    uint32_t site = 0;
    for (int f = 0, id = 0; f < ll_func_count(m); f++) {
        const ll_func *fn = ll_func_at(m, f);
        if (name_has(fn->name, "sw_mma_flush")) pause_around(m, fn);
        if (!is_counted(m, fn)) continue;
        count_func(m, fn, id, nb, rows, &site);
        id += fn->nblocks;
    }
    if (site >= (1u << (32 - SW_CNT_SITE_SHIFT))) {
        free(rows);
        *err = strdup("too many memory access sites to number");
        return -1;
    }
    if (forget_memory_effects(m) != 0) {
        free(rows);
        *err = strdup("out of memory reading the attribute groups");
        return -1;
    }
    msl_buf t = {0};
    /* the ctx and row blocks count into outside a counting worker's thread (a
     * library's static initialisers, on the host's thread): counted and never read */
    msl_buf_printf(&t, "\ndeclare ptr @sw_rt_cnt_slot(ptr)\ndeclare void @sw_rt_cnt_mem(ptr, i32, i32)\n"
                       "declare void @sw_rt_cnt_range(ptr, i64, i32)\n%s"
                       "@sw_cnt_scratch = internal global [%d x i32] zeroinitializer\n"
                       "@sw_cnt_fallback = internal global { ptr, [%zu x i64] } { ptr @sw_cnt_scratch, [%zu x i64] "
                       "zeroinitializer }\n"
                       "@sw_cnt_nblocks = constant i32 %d\n@sw_cnt_nsites = constant i32 %u\n",
                   pause_declared ? "" : "declare void @sw_rt_cnt_pause(i32)\n", 2 * nb + 2,
                   sizeof(sw_cnt_ctx) / 8 - 1, sizeof(sw_cnt_ctx) / 8 - 1, nb, site);
    helpers(&t);
    inline_lane_bookkeeping(m, &t);
    msl_buf_printf(&t, "@sw_cnt_blocks = constant [%d x i64] [", (nb ? nb : 1) * SW_CNT_COLS);
    for (int k = 0; k < (nb ? nb : 1) * SW_CNT_COLS; k++)
        msl_buf_printf(&t, "%si64 %llu", k ? ", " : "", (unsigned long long)rows[k]);
    msl_buf_puts(&t, "]\n");
    char *text = msl_buf_take(&t);
    ll_append(m, text);
    free(text);
    free(rows);
    return 0;
}

const sw_ir_pass sw_count_pass = {"count", 17, run_count, 1, 1};
