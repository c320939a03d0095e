/* ir_numerics.c — the numeric checks' IR pass (ir_pass.h, for SW_INSTR_NUMERICS):
 * where a kernel's floating-point operation or narrowing conversion makes Inf or
 * NaN, it calls numerics.c's sw_rt_num_fp with the operands and the result.
 *
 * Why an IR pass and not the FPU: Apple's arm64 cores (and most Arm cores) do not
 * trap on floating-point exceptions, so the x86-64 traps this replaces caught
 * nothing on the machines the kernels are written on.  One mechanism on every host
 * gives the same findings on x86-64 and arm64 (the README's numeric checks say what
 * it costs).
 *
 * What is checked, after clang's optimiser (so vectorised code is checked as it
 * runs, every lane): fadd, fsub, fmul, fdiv, frem; fptrunc to half, bfloat and
 * float; and calls of the math functions that can overflow or leave their domain
 * (fma, sqrt, exp, log, pow, ... as LLVM intrinsics or libm calls).  fneg, fabs,
 * min/max and the like cannot make Inf or NaN of finite values; float -> integer
 * conversions are clang's float-cast-overflow check's, before optimisation.
 *
 * The fast path is a test of the result's exponent bits (a bitcast, an and, a
 * compare and a branch); only a result that is Inf or NaN goes to the slow block,
 * which passes each lane's operands and result, widened to double, to the run
 * time — that decides whether the operands were finite (numerics.c).  The slow
 * block's call carries the operation's !dbg, so its return address names the
 * operation's .metal line like every other finding.
 *
 * Splitting a block moves its terminator into the last new block: phis of its
 * successors that name it are rewritten to name that block (ll_replace).
 *
 * Speculation: the check sits where the optimiser left the operation.  An
 * operation hoisted out of a branch (SimplifyCFG's speculation of a cheap
 * fadd/fmul into a select, LICM out of a conditional loop body) is checked even
 * when the source would not have executed it; the README says so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/ir_pass.h"
#include "swmetal/numerics.h"

/* sw_rt_num_fp's codes carry ll_scalar numbers: numerics.c names them so */
_Static_assert(LL_S_HALF == 1 && LL_S_BFLOAT == 2 && LL_S_FLOAT == 3 && LL_S_DOUBLE == 4, "numerics.c's scalar names");

/* One operation to check. */
typedef struct site {
    int fn;                  /* SW_NUMF_* */
    ll_scalar in_s, out_s;
    int lanes;
    ll_span in_type, out_type;
    int nops;
    ll_span ops[3];
} site;

static const char *const scalar_name[] = {[LL_S_HALF] = "half", [LL_S_BFLOAT] = "bfloat", [LL_S_FLOAT] = "float",
                                          [LL_S_DOUBLE] = "double"};

static int is_fp(ll_scalar s) { return s == LL_S_HALF || s == LL_S_BFLOAT || s == LL_S_FLOAT || s == LL_S_DOUBLE; }

/* The math function a callee is: "@llvm.exp.f32" or "@llvm.exp.v4f32", "@expf"
 * (float) or "@exp" (double); SW_NUMF_* or 0. */
static int math_fn(ll_span callee) {
    char name[32];
    const char *p = callee.p + 1;
    size_t n = callee.n ? callee.n - 1 : 0;
    int intrinsic = n > 5 && memcmp(p, "llvm.", 5) == 0;
    if (intrinsic) {
        p += 5, n -= 5;
        const char *dot = memchr(p, '.', n);
        if (!dot) return 0;
        n = (size_t)(dot - p);
    }
    if (n == 0 || n >= sizeof name) return 0;
    memcpy(name, p, n);
    name[n] = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int f = 1; f < SW_NUMF_COUNT; f++) {
            const char *fnm = sw_num_fn_name(f);
            if (!fnm || f == SW_NUMF_TRUNC || (!intrinsic && f == SW_NUMF_FMULADD)) continue;
            if (strcmp(name, fnm) == 0) return f >= SW_NUMF_FIRST_CALL ? f : 0;
        }
        /* libm's float variants end in 'f' */
        if (intrinsic || n < 2 || name[n - 1] != 'f') return 0;
        name[--n] = 0;
    }
    return 0;
}

/* The operation at in as a site; 0 when it is none the pass checks. */
static int site_of(const ll_inst *in, site *s) {
    memset(s, 0, sizeof *s);
    if (!in->result.n) return 0;
    static const int binop[LL_OPCODE_COUNT] = {[LL_FADD] = SW_NUMF_FADD, [LL_FSUB] = SW_NUMF_FSUB,
                                              [LL_FMUL] = SW_NUMF_FMUL, [LL_FDIV] = SW_NUMF_FDIV,
                                              [LL_FREM] = SW_NUMF_FREM};
    if (binop[in->op]) {
        s->fn = binop[in->op], s->nops = 2;
    } else if (in->op == LL_FPTRUNC) {
        s->fn = SW_NUMF_TRUNC, s->nops = 1;
    } else if (in->op == LL_CALL) {
        s->fn = math_fn(ll_inst_callee(in));
        if (!s->fn) return 0;
        s->nops = sw_num_fn_arity(s->fn);
    } else {
        return 0;
    }
    int in_lanes;
    s->in_type = ll_inst_type(in);
    s->out_type = ll_inst_dest_type(in);
    s->in_s = ll_type_scalar(s->in_type, &in_lanes);
    s->out_s = ll_type_scalar(s->out_type, &s->lanes);
    if (!is_fp(s->in_s) || !is_fp(s->out_s) || in_lanes != s->lanes) return 0;
    for (int k = 0; k < s->nops; k++) {
        int ok;
        s->ops[k] = ll_inst_operand(in, k, &ok);
        if (!ok) return 0;
    }
    return 1;
}

/* A check moved to a select that picks the operation's result: it fires only in
 * the lanes where the select picks it (cond, or its negation for the false arm). */
typedef struct guard {
    ll_span cond;            /* "%c" or "<4 x i1> ..." value */
    int cond_lanes;          /* 1: one i1 for every lane */
    int false_arm;
} guard;

static int name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '$' || c == '-';
}

/* A select's three operands, each "<type> <value>": the value spans and the
 * condition's type.  0 when the line is not that shape. */
static int select_parts(const ll_inst *in, ll_span val[3], ll_span *cond_type) {
    ll_span b = in->body;
    const char *p = b.p, *end = b.p + b.n;
    p += 6; /* "select" */
    while (p < end && *p == ' ') p++;
    while (p < end && (ll_span_starts((ll_span){p, (size_t)(end - p)}, "fast ") ||
                       ll_span_starts((ll_span){p, (size_t)(end - p)}, "nnan ") ||
                       ll_span_starts((ll_span){p, (size_t)(end - p)}, "ninf ") ||
                       ll_span_starts((ll_span){p, (size_t)(end - p)}, "nsz "))) {
        while (p < end && *p != ' ') p++;
        while (p < end && *p == ' ') p++;
    }
    for (int k = 0; k < 3; k++) {
        const char *start = p;
        int depth = 0;
        while (p < end && !(depth == 0 && *p == ',')) {
            if (*p == '<' || *p == '(' || *p == '[' || *p == '{') depth++;
            else if (*p == '>' || *p == ')' || *p == ']' || *p == '}') depth--;
            p++;
        }
        const char *e = p;
        while (e > start && e[-1] == ' ') e--;
        const char *v = e; /* the value: the last top-level word */
        depth = 0;
        while (v > start && !(depth == 0 && v[-1] == ' ')) {
            if (v[-1] == '>' || v[-1] == ')') depth++;
            else if (v[-1] == '<' || v[-1] == '(') depth--;
            v--;
        }
        if (v == start) return 0;
        val[k] = (ll_span){v, (size_t)(e - v)};
        if (k == 0) {
            const char *t = start;
            while (t < v && *t == ' ') t++;
            *cond_type = (ll_span){t, (size_t)(v - 1 - t)};
        }
        if (k < 2) {
            if (p >= end) return 0;
            p++;
            while (p < end && *p == ' ') p++;
        }
    }
    return 1;
}

/* Whether text uses the value called name ("%12") as a whole word. */
static int uses(ll_span text, ll_span name) {
    for (const char *q = text.p; q + name.n <= text.p + text.n; q++) {
        q = memchr(q, '%', (size_t)(text.p + text.n - q));
        if (!q || q + name.n > text.p + text.n) return 0;
        if (memcmp(q, name.p, name.n) == 0 && (q + name.n == text.p + text.n || !name_char(q[name.n]))) return 1;
    }
    return 0;
}

#define MAX_SELECTS 4

/* The selects that are the only users of instruction at's result, with the arm
 * each takes it in; 0 when anything else uses it (it is checked where it is). */
static int only_selected(const ll_module *m, const ll_func *f, int at, int sel[MAX_SELECTS],
                         guard g[MAX_SELECTS]) {
    ll_span name = ll_inst_at(m, at)->result;
    const ll_block *first = ll_block_at(m, f->first_block), *lastb = ll_block_at(m, f->first_block + f->nblocks - 1);
    int n = 0;
    for (int i = first->first_inst; i < lastb->first_inst + lastb->ninsts; i++) {
        if (i == at) continue;
        const ll_inst *u = ll_inst_at(m, i);
        if (!uses(u->body, name)) continue;
        ll_span val[3], ct;
        if (u->op != LL_SELECT || n == MAX_SELECTS || !select_parts(u, val, &ct)) return 0;
        int arm = ll_span_eq(val[1], "") ? 0 : (val[1].n == name.n && memcmp(val[1].p, name.p, name.n) == 0) ? 1
                  : (val[2].n == name.n && memcmp(val[2].p, name.p, name.n) == 0)                               ? 2
                                                                                                                 : 0;
        if (!arm || uses(val[0], name)) return 0;
        int lanes;
        ll_type_scalar(ct, &lanes);
        sel[n] = i;
        g[n++] = (guard){val[0], lanes, arm == 2};
    }
    return n;
}

/* The integer view of a float type's bits: width, the mask without the sign, and
 * the smallest magnitude that is Inf or NaN. */
static void bits_of(ll_scalar s, int *width, const char **mask, const char **limit) {
    switch (s) {
    case LL_S_HALF: *width = 16, *mask = "32767", *limit = "31744"; return;
    case LL_S_BFLOAT: *width = 16, *mask = "32767", *limit = "32640"; return;
    case LL_S_FLOAT: *width = 32, *mask = "2147483647", *limit = "2139095040"; return;
    default: *width = 64, *mask = "9223372036854775807", *limit = "9218868437227405312"; return;
    }
}

/* An integer constant as an operand (the operation names its type once): "v",
 * or "<iW v, iW v, ...>" for a vector; appended to out. */
static void splat(char *out, size_t n, int lanes, int width, const char *v) {
    size_t used = strlen(out);
    if (lanes == 1) {
        snprintf(out + used, n - used, "%s", v);
        return;
    }
    for (int k = 0; k < lanes && used < n; k++) {
        snprintf(out + used, n - used, "%si%d %s", k ? ", " : "<", width, v);
        used += strlen(out + used);
    }
    if (used < n) snprintf(out + used, n - used, ">");
}

static void dbg_suffix(char *out, size_t n, int dbg) {
    if (dbg >= 0) snprintf(out, n, ", !dbg !%d", dbg);
    else out[0] = 0;
}

/* Lane k of value v (type ty, scalar s) as a double: the name or constant to use. */
static void lane_double(ll_module *m, int at, int id, const char *tag, int lanes, ll_span ty, ll_scalar s,
                        ll_span v, int k, char *out, size_t n) {
    char line[SW_NUM_LINE], val[64];
    if (lanes > 1) {
        snprintf(line, sizeof line, "  %%swn.%d.%s%d = extractelement %.*s %.*s, i32 %d", id, tag, k, (int)ty.n,
                 ty.p, (int)v.n, v.p, k);
        ll_insert_after(m, at, line);
        snprintf(val, sizeof val, "%%swn.%d.%s%d", id, tag, k);
    } else {
        snprintf(val, sizeof val, "%.*s", (int)(v.n < 60 ? v.n : 60), v.p);
    }
    if (s == LL_S_DOUBLE) {
        snprintf(out, n, "%s", val);
        return;
    }
    snprintf(line, sizeof line, "  %%swn.%d.%sd%d = fpext %s %s to double", id, tag, k, scalar_name[s], val);
    ll_insert_after(m, at, line);
    snprintf(out, n, "%%swn.%d.%sd%d", id, tag, k);
}

/* The result's test: returns the name (after "%swn.<id>.") of the i1 that is 1
 * when every lane the check covers is finite. */
static const char *emit_test(ll_module *m, int at, const ll_inst *in, const site *st, int id, const guard *g,
                             char skip[128]) {
    int width;
    const char *mask, *limit;
    bits_of(st->out_s, &width, &mask, &limit);
    char ity[48], line[SW_NUM_LINE];
    if (st->lanes > 1) snprintf(ity, sizeof ity, "<%d x i%d>", st->lanes, width);
    else snprintf(ity, sizeof ity, "i%d", width);
    snprintf(line, sizeof line, "  %%swn.%d.b = bitcast %.*s %.*s to %s", id, (int)st->out_type.n, st->out_type.p,
             (int)in->result.n, in->result.p, ity);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "  %%swn.%d.m = and %s %%swn.%d.b, ", id, ity, id);
    splat(line, sizeof line, st->lanes, width, mask);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "  %%swn.%d.%s = icmp ult %s %%swn.%d.m, ", id, st->lanes > 1 ? "v0" : "ok0", ity,
             id);
    splat(line, sizeof line, st->lanes, width, limit);
    ll_insert_after(m, at, line);
    /* a guard: lanes the select does not pick count as fine (cond for the false
     * arm, its negation for the true arm) */
    int glanes = g ? g->cond_lanes : 0;
    char bty[32];
    snprintf(bty, sizeof bty, glanes > 1 ? "<%d x i1>" : "i1", glanes);
    if (g && !g->false_arm) {
        snprintf(line, sizeof line, "  %%swn.%d.n = xor %s %.*s, ", id, bty, (int)g->cond.n, g->cond.p);
        splat(line, sizeof line, glanes, 1, "true");
        ll_insert_after(m, at, line);
    }
    if (g && g->false_arm) snprintf(skip, 128, "%.*s", (int)(g->cond.n < 120 ? g->cond.n : 120), g->cond.p);
    else snprintf(skip, 128, "%%swn.%d.n", id);
    const char *v = "v0", *ok = "ok0";
    if (g && glanes > 1) { /* lane by lane, before the lanes are reduced */
        snprintf(line, sizeof line, "  %%swn.%d.v = or <%d x i1> %%swn.%d.v0, %s", id, glanes, id, skip);
        ll_insert_after(m, at, line);
        v = "v";
    }
    if (st->lanes > 1) {
        snprintf(line, sizeof line, "  %%swn.%d.vb = bitcast <%d x i1> %%swn.%d.%s to i%d", id, st->lanes, id, v,
                 st->lanes);
        ll_insert_after(m, at, line);
        snprintf(line, sizeof line, "  %%swn.%d.ok0 = icmp eq i%d %%swn.%d.vb, -1", id, st->lanes, id);
        ll_insert_after(m, at, line);
    }
    if (g && glanes == 1) {
        snprintf(line, sizeof line, "  %%swn.%d.ok = or i1 %%swn.%d.ok0, %s", id, id, skip);
        ll_insert_after(m, at, line);
        ok = "ok";
    }
    return ok;
}

/* v's bits: %swn.<id>.<tag>m, the magnitude (v's type ty, scalar sc). */
static void magnitude(ll_module *m, int at, int id, const char *tag, int lanes, ll_span ty, ll_scalar sc, ll_span v,
                      char ity[48], int *width_out, const char **limit) {
    int width;
    const char *mask;
    bits_of(sc, &width, &mask, limit);
    *width_out = width;
    char line[SW_NUM_LINE];
    if (lanes > 1) snprintf(ity, 48, "<%d x i%d>", lanes, width);
    else snprintf(ity, 48, "i%d", width);
    snprintf(line, sizeof line, "  %%swn.%d.%sb = bitcast %.*s %.*s to %s", id, tag, (int)ty.n, ty.p, (int)v.n, v.p,
             ity);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "  %%swn.%d.%sm = and %s %%swn.%d.%sb, ", id, tag, ity, id, tag);
    splat(line, sizeof line, lanes, width, mask);
    ll_insert_after(m, at, line);
}

/* In the slow block: %swn.<id>.p, the lanes that may be findings (the result is
 * Inf or NaN, and the operands all finite, or the result NaN and no operand NaN;
 * a guard's lanes only where its select picks the result).  So an operation on
 * -Inf (a mask) or NaN costs a few more compares, not a call per lane. */
static void emit_filter(ll_module *m, int at, const ll_inst *in, const site *st, int id, const guard *g,
                        const char *skip) {
    static const char *const tags[3] = {"a", "b", "c"};
    char line[SW_NUM_LINE], ity[48], bty[32];
    const char *limit;
    int L = st->lanes;
    snprintf(bty, sizeof bty, L > 1 ? "<%d x i1>" : "i1", L);
    char fin[32] = "", nan[32] = "";
    for (int o = 0; o < st->nops; o++) {
        int w;
        magnitude(m, at, id, tags[o], L, st->in_type, st->in_s, st->ops[o], ity, &w, &limit);
        snprintf(line, sizeof line, "  %%swn.%d.%sf = icmp ult %s %%swn.%d.%sm, ", id, tags[o], ity, id, tags[o]);
        splat(line, sizeof line, L, w, limit);
        ll_insert_after(m, at, line);
        snprintf(line, sizeof line, "  %%swn.%d.%sn = icmp ugt %s %%swn.%d.%sm, ", id, tags[o], ity, id, tags[o]);
        splat(line, sizeof line, L, w, limit);
        ll_insert_after(m, at, line);
        if (o) {
            snprintf(line, sizeof line, "  %%swn.%d.f%d = and %s %s, %%swn.%d.%sf", id, o, bty, fin, id, tags[o]);
            ll_insert_after(m, at, line);
            snprintf(line, sizeof line, "  %%swn.%d.n%d = or %s %s, %%swn.%d.%sn", id, o, bty, nan, id, tags[o]);
            ll_insert_after(m, at, line);
            snprintf(fin, sizeof fin, "%%swn.%d.f%d", id, o);
            snprintf(nan, sizeof nan, "%%swn.%d.n%d", id, o);
        } else {
            snprintf(fin, sizeof fin, "%%swn.%d.af", id);
            snprintf(nan, sizeof nan, "%%swn.%d.an", id);
        }
    }
    int width;
    const char *mask;
    bits_of(st->out_s, &width, &mask, &limit);
    if (L > 1) snprintf(ity, sizeof ity, "<%d x i%d>", L, width);
    else snprintf(ity, sizeof ity, "i%d", width);
    static const char *const steps[] = {
        "  %%swn.%d.rn = icmp ugt %s %%swn.%d.m, ", /* the result is NaN */
        "  %%swn.%d.rf = icmp uge %s %%swn.%d.m, ", /* Inf or NaN */
    };
    for (int k = 0; k < 2; k++) {
        snprintf(line, sizeof line, steps[k], id, ity, id);
        splat(line, sizeof line, L, width, limit);
        ll_insert_after(m, at, line);
    }
    snprintf(line, sizeof line, "  %%swn.%d.nn = xor %s %s, ", id, bty, nan);
    splat(line, sizeof line, L, 1, "true");
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "  %%swn.%d.p2 = and %s %%swn.%d.rn, %%swn.%d.nn", id, bty, id, id);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "  %%swn.%d.p1 = or %s %s, %%swn.%d.p2", id, bty, fin, id);
    ll_insert_after(m, at, line);
    const char *last = "p3";
    snprintf(line, sizeof line, "  %%swn.%d.p3 = and %s %%swn.%d.p1, %%swn.%d.rf", id, bty, id, id);
    ll_insert_after(m, at, line);
    if (g && g->cond_lanes > 1) {
        snprintf(line, sizeof line, "  %%swn.%d.ns = xor %s %s, ", id, bty, skip);
        splat(line, sizeof line, L, 1, "true");
        ll_insert_after(m, at, line);
        snprintf(line, sizeof line, "  %%swn.%d.p = and %s %%swn.%d.p3, %%swn.%d.ns", id, bty, id, id);
        ll_insert_after(m, at, line);
        last = "p";
    } else if (g) {
        snprintf(line, sizeof line, "  %%swn.%d.p = select i1 %s, %s %s, %s %%swn.%d.p3", id, skip, bty,
                 L > 1 ? "zeroinitializer" : "false", bty, id);
        ll_insert_after(m, at, line);
        last = "p";
    }
    if (L > 1) {
        snprintf(line, sizeof line, "  %%swn.%d.pb = bitcast %s %%swn.%d.%s to i%d", id, bty, id, last, L);
        ll_insert_after(m, at, line);
        snprintf(line, sizeof line, "  %%swn.%d.any = icmp ne i%d %%swn.%d.pb, 0", id, L, id);
    } else {
        snprintf(line, sizeof line, "  %%swn.%d.any = and i1 %%swn.%d.%s, true", id, id, last);
    }
    ll_insert_after(m, at, line);
    if (strcmp(last, "p")) {
        snprintf(line, sizeof line, "  %%swn.%d.p = and %s %%swn.%d.%s, ", id, bty, id, last);
        splat(line, sizeof line, L, 1, "true");
        ll_insert_after(m, at, line);
    }
    (void)in;
}

/* The branch weights of the checks' branches: the slow block is cold, so code
 * generation lays it out of the kernel's hot path.  Numbered metadata need not be
 * dense: these numbers are far above any clang gives a kernel. */
#define LIKELY "3999999990"
#define UNLIKELY "3999999991"

/* The test, the slow block's filter and its calls after instruction at; the
 * block goes on in "swn.<id>.c". */
static void emit_check(ll_module *m, int at, const ll_inst *in, const site *st, int id, const guard *g) {
    char dbg[32], line[SW_NUM_LINE], skip[128] = "";
    dbg_suffix(dbg, sizeof dbg, in->dbg);
    const char *ok = emit_test(m, at, in, st, id, g, skip);
    snprintf(line, sizeof line, "  br i1 %%swn.%d.%s, label %%swn.%d.c, label %%swn.%d.s%s, !prof !%s", id, ok, id, id,
             dbg, LIKELY);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "swn.%d.s:", id);
    ll_insert_after(m, at, line);
    emit_filter(m, at, in, st, id, g, skip);
    snprintf(line, sizeof line, "  br i1 %%swn.%d.any, label %%swn.%d.r, label %%swn.%d.c%s, !prof !%s", id, id, id,
             dbg, UNLIKELY);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "swn.%d.r:", id);
    ll_insert_after(m, at, line);
    int code = st->fn | (int)st->in_s << 8 | (int)st->out_s << 12 | st->nops << 16;
    static const char *const tags[3] = {"a", "b", "c"};
    for (int k = 0; k < st->lanes; k++) {
        char ops[3][80] = {"0.000000e+00", "0.000000e+00", "0.000000e+00"}, res[80], live[64] = "1";
        for (int o = 0; o < st->nops; o++)
            lane_double(m, at, id, tags[o], st->lanes, st->in_type, st->in_s, st->ops[o], k, ops[o], sizeof ops[o]);
        lane_double(m, at, id, "r", st->lanes, st->out_type, st->out_s, in->result, k, res, sizeof res);
        if (st->lanes > 1) {
            snprintf(line, sizeof line, "  %%swn.%d.l%d = extractelement <%d x i1> %%swn.%d.p, i32 %d", id, k,
                     st->lanes, id, k);
            ll_insert_after(m, at, line);
            snprintf(line, sizeof line, "  %%swn.%d.z%d = zext i1 %%swn.%d.l%d to i32", id, k, id, k);
            ll_insert_after(m, at, line);
            snprintf(live, sizeof live, "%%swn.%d.z%d", id, k);
        }
        snprintf(line, sizeof line,
                 "  call void @sw_rt_num_fp(i32 %d, i32 %s, double %s, double %s, double %s, double %s)%s", code, live,
                 ops[0], ops[1], ops[2], res, dbg);
        ll_insert_after(m, at, line);
    }
    snprintf(line, sizeof line, "  br label %%swn.%d.c%s", id, dbg);
    ll_insert_after(m, at, line);
    snprintf(line, sizeof line, "swn.%d.c:", id);
    ll_insert_after(m, at, line);
}

/* ---- the blocks split: their successors' phis ---- */

/* How a phi names block b: "%label", or the entry block's number, which follows
 * the function's unnamed arguments ("define ... (ptr %0, i32 %1) {": %2). */
static void block_ref(const ll_module *m, int b, char *out, size_t n) {
    const ll_block *bl = ll_block_at(m, b);
    if (bl->label.n) {
        snprintf(out, n, "%%%.*s", (int)bl->label.n, bl->label.p);
        return;
    }
    const char *p = bl->label.p; /* the define line */
    int args = 0;
    for (; *p && *p != '\n'; p++)
        if (p[0] == '%' && p[1] >= '0' && p[1] <= '9') args++;
    snprintf(out, n, "%%%d", args);
}

/* Every ", <from> ]" of text as ", <to> ]": a new malloc'd line. */
static char *rename_incoming(const char *text, const char *from, const char *to) {
    char pat[200], rep[200];
    snprintf(pat, sizeof pat, ", %s ]", from);
    snprintf(rep, sizeof rep, ", %s ]", to);
    size_t lp = strlen(pat), lr = strlen(rep), count = 0;
    for (const char *q = strstr(text, pat); q; q = strstr(q + lp, pat)) count++;
    char *out = malloc(strlen(text) + count * (lr > lp ? lr - lp : 0) + 1);
    if (!out) abort(); /* as llir.c's edits: out of memory is not recoverable here */
    char *w = out;
    const char *q = text;
    for (const char *hit; (hit = strstr(q, pat)); q = hit + lp) {
        memcpy(w, q, (size_t)(hit - q));
        w += hit - q;
        memcpy(w, rep, lr);
        w += lr;
    }
    strcpy(w, q);
    return out;
}

/* The block of function f whose label is ref ("%5", "%for.body"), or -1. */
static int block_named(const ll_module *m, const ll_func *f, const char *ref, size_t n) {
    for (int b = f->first_block + 1; b < f->first_block + f->nblocks; b++) {
        ll_span l = ll_block_at(m, b)->label;
        if (l.n + 1 == n && memcmp(l.p, ref + 1, l.n) == 0) return b;
    }
    return -1;
}

/* Block b now ends in block "last": the phis of its successors say so.  phi[i]
 * holds instruction i's text as rewritten so far (NULL: unchanged). */
static void fix_successors(const ll_module *m, const ll_func *f, int b, const char *last, char **phi) {
    const ll_block *bl = ll_block_at(m, b);
    if (!bl->ninsts) return;
    char from[160];
    block_ref(m, b, from, sizeof from);
    ll_span t = ll_inst_at(m, bl->first_inst + bl->ninsts - 1)->text;
    for (size_t i = 0; i + 7 < t.n; i++) {
        if (memcmp(t.p + i, "label %", 7) != 0) continue;
        const char *r = t.p + i + 6;
        size_t n = 1;
        while (r + n < t.p + t.n && r[n] != ',' && r[n] != ' ' && r[n] != '\n') n++;
        int s = block_named(m, f, r, n);
        if (s < 0) continue;
        const ll_block *sb = ll_block_at(m, s);
        for (int k = sb->first_inst; k < sb->first_inst + sb->ninsts && ll_inst_at(m, k)->op == LL_PHI; k++) {
            if (!phi[k]) {
                ll_span pt = ll_inst_at(m, k)->text;
                phi[k] = malloc(pt.n + 1);
                if (!phi[k]) abort();
                memcpy(phi[k], pt.p, pt.n);
                phi[k][pt.n] = 0;
            }
            char *nt = rename_incoming(phi[k], from, last);
            free(phi[k]);
            phi[k] = nt;
        }
    }
}

/* ---- the pass ---- */

static int skip_func(ll_span name) {
    /* the prelude's float -> bfloat helpers: the conversion is checked at the kernel's fptrunc */
    return ll_span_starts(name, "@__trunc");
}

/* A check that waits for its select. */
typedef struct deferred {
    int sel, op;
    site st;
    guard g;
} deferred;

typedef struct dlist {
    deferred *d;
    int n, cap;
} dlist;

static void deferred_add(dlist *l, int sel, int op, const site *st, const guard *g) {
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 16;
        deferred *d = realloc(l->d, (size_t)nc * sizeof *d);
        if (!d) abort(); /* as llir.c's edits */
        l->d = d, l->cap = nc;
    }
    l->d[l->n++] = (deferred){sel, op, *st, *g};
}

/* The checks of one function's block b; returns the id of the last (the block
 * then ends in "swn.<id>.c"), or -1. */
static int check_block(ll_module *m, int b, const dlist *dq, int *id) {
    const ll_block *bl = ll_block_at(m, b);
    int last = -1;
    for (int i = bl->first_inst; i < bl->first_inst + bl->ninsts; i++) {
        site st;
        int deferred_op = 0;
        for (int k = 0; k < dq->n; k++) {
            if (dq->d[k].op == i) deferred_op = 1;
            if (dq->d[k].sel != i) continue;
            emit_check(m, i, ll_inst_at(m, dq->d[k].op), &dq->d[k].st, *id, &dq->d[k].g);
            last = (*id)++;
        }
        if (deferred_op || !site_of(ll_inst_at(m, i), &st)) continue;
        emit_check(m, i, ll_inst_at(m, i), &st, *id, NULL);
        last = (*id)++;
    }
    return last;
}

static int run(ll_module *m, char **err) {
    (void)err;
    int ninsts = ll_inst_count(m), id = 0;
    char **phi = calloc((size_t)ninsts + 1, sizeof *phi);
    if (!phi) abort();
    dlist dq = {0};
    for (int fi = 0; fi < ll_func_count(m); fi++) {
        const ll_func *f = ll_func_at(m, fi);
        if (skip_func(f->name) || f->nblocks == 0) continue;
        /* operations only a select uses (the optimiser's speculation of both arms
         * of a ?:): checked at the select, in the lanes it picks them */
        dq.n = 0;
        const ll_block *b0 = ll_block_at(m, f->first_block), *bn = ll_block_at(m, f->first_block + f->nblocks - 1);
        for (int i = b0->first_inst; i < bn->first_inst + bn->ninsts; i++) {
            site st;
            int sel[MAX_SELECTS];
            guard g[MAX_SELECTS];
            if (!site_of(ll_inst_at(m, i), &st)) continue;
            int ns = only_selected(m, f, i, sel, g);
            for (int k = 0; k < ns; k++) deferred_add(&dq, sel[k], i, &st, &g[k]);
        }
        for (int b = f->first_block; b < f->first_block + f->nblocks; b++) {
            int last = check_block(m, b, &dq, &id);
            if (last < 0) continue;
            char name[32];
            snprintf(name, sizeof name, "%%swn.%d.c", last);
            fix_successors(m, f, b, name, phi);
        }
    }
    free(dq.d);
    for (int i = 0; i < ninsts; i++) {
        if (phi[i]) ll_replace(m, i, phi[i]);
        free(phi[i]);
    }
    free(phi);
    if (id)
        ll_append(m, "\ndeclare void @sw_rt_num_fp(i32, i32, double, double, double, double)\n"
                     "!" LIKELY " = !{!\"branch_weights\", i32 1048575, i32 1}\n"
                     "!" UNLIKELY " = !{!\"branch_weights\", i32 1, i32 1048575}\n");
    return 0;
}

const sw_ir_pass sw_ir_numerics_pass = {"numerics", 3, run, 0, 0};
