/* lanes_emit.c — the lanes rewrite, phase 3b: declarations, stores, statements
 * and functions.
 *
 * Reads the statement trees (lanes_parse.c) and the uniformity verdicts
 * (lanes_uniform.c).  Writes L->out: varying declarations as ::sw::lv::vary<T>,
 * stores through subscripts as ::sw::lv::st, if/loops with varying conditions
 * under an execution mask (branch, loop), break/continue/return under varying
 * control as lanes retiring, and each function's signature with its varying
 * parameters and return type.  Expressions: lanes_emit_expr.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/lanes.h"

/* Rewrites a type at [lo, hi) of a varying declaration: the base type (after
 * qualifiers) goes inside vary<...>. */
static void emit_vary_type(lanes *L, int lo, int tyend) {
    static const char *const quals[] = {"const", "thread", "volatile", NULL};
    int i = lo;
    lv_out_gap(L, L->c.toks[lo].start);
    for (;;) {
        int q = 0;
        for (int k = 0; quals[k]; k++) q |= is(L, i, quals[k]);
        if (!q) break;
        lv_out_tok(L, i++);
    }
    int e = tyend;
    while (e > i && (is(L, e - 1, "const") || is(L, e - 1, "thread"))) e--;
    if (is(L, i, "auto")) {
        lv_emit_raw(L, i, tyend);
        return;
    }
    lv_out_gap(L, L->c.toks[i].start);
    lv_out_s(L, "::sw::lv::vary<");
    lv_emit_raw(L, i, e);
    lv_out_s(L, ">");
    lv_emit_raw(L, e, tyend);
}

/* A varying `auto` declaration: `auto` alone would deduce a uniform T from a
 * uniform initialiser (or from simd_sum(x), which the analysis counts as varying),
 * and later masked assignments would then change every lane.  So the value is
 * deduced into a temporary and the name declared as the vary of its lane type:
 *   const auto x = e;  ->  auto _sw_aN = e; const vary<lane_t<decltype(_sw_aN)>> x = _sw_aN;
 * (C++17: no lambda, which ?: && || bring, may appear inside decltype itself.) */
static void emit_vary_auto(lanes *L, int lo, int tyend, const lv_decl *d, int nd, int hi) {
    if (nd != 1 || d->ptr || d->init_hi <= d->init_lo || !is(L, d->init_lo - 1, "=") ||
        (is(L, lo - 1, "(") && is(L, lo - 2, "for"))) {
        lv_reject(L, lo, "varying auto declaration of this form");
        return;
    }
    char tmp[32];
    snprintf(tmp, sizeof tmp, "_sw_a%d", L->nlabels++);
    lv_out_gap(L, L->c.toks[lo].start);
    for (int k = lo; k < d->init_lo; k++) lv_skip_tok(L, k);
    lv_out_s(L, "auto ");
    lv_out_s(L, tmp);
    lv_out_s(L, " = ");
    lv_emit_expr(L, d->init_lo, d->init_hi);
    lv_out_tok(L, hi - 1);
    lv_out_s(L, " ");
    for (int k = lo; k < tyend; k++)
        if (!is(L, k, "auto")) {
            msl_buf_put(&L->out, ttext(L, k), (size_t)tlen(L, k));
            lv_out_s(L, " ");
        }
    lv_out_s(L, "::sw::lv::vary<::sw::lv::lane_t<decltype(");
    lv_out_s(L, tmp);
    lv_out_s(L, ")>> ");
    msl_buf_put(&L->out, ttext(L, d->name), (size_t)tlen(L, d->name));
    lv_out_s(L, " = ");
    lv_out_s(L, tmp);
    lv_out_s(L, ";");
}

/* A store statement ending at e (its ;): base[index] (index [ilo, ihi)) or *base
 * (ilo < 0) with `=` or `op=` at op, or ++/-- at incdec (lo: prefix), becomes
 *   st(base, index, v)  or  st(base, index, ld(base, index) op (v))
 * (the target read again for a compound assignment).  The tokens before base (a
 * prefix ++, the *) are already skipped; the output follows the source tokens in
 * order the first time (the emitter copies the text between them). */
static void emit_store(lanes *L, int op, int incdec, int lo, int e, int blo, int bhi, int ilo, int ihi) {
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: st(base, index, ...; pass 1: ld(base, index) for a compound store */
        lv_out_s(L, pass == 0 ? "::sw::lv::st(" : "::sw::lv::ld(");
        if (ilo < 0) {
            lv_emit_expr(L, blo, bhi);
            lv_out_s(L, ", 0");
        } else {
            lv_emit_operand(L, blo, bhi);
            if (pass == 0) lv_skip_tok(L, bhi); /* [ */
            lv_out_s(L, ", ");
            lv_emit_expr(L, ilo, ihi);
            if (pass == 0) lv_skip_tok(L, ihi); /* ] */
        }
        lv_out_s(L, pass == 0 ? ", " : ") ");
        if (pass == 0) {
            int compound = op >= 0 && !is(L, op, "=");
            if (op >= 0) lv_skip_tok(L, op);
            if (!compound && incdec < 0) break;
        }
    }
    if (incdec >= 0) {
        lv_out_s(L, is(L, incdec, "++") ? "+ 1" : "- 1");
        if (incdec != lo) lv_skip_tok(L, incdec);
    } else if (!is(L, op, "=")) {
        msl_buf_put(&L->out, ttext(L, op), (size_t)tlen(L, op) - 1);
        lv_out_s(L, " (");
        lv_emit_expr(L, op + 1, e);
        lv_out_s(L, ")");
    } else {
        lv_emit_expr(L, op + 1, e);
    }
    lv_out_s(L, ")");
    lv_out_tok(L, e);
}

static void emit_simple(lanes *L, lv_fn *f, int lo, int hi) {
    int tyend = lv_decl_type_end(L, lo, hi);
    if (tyend > 0) {
        lv_decl d[32];
        int nd = lv_split_declarators(L, tyend, hi - 1, d, 32);
        int vary = 0;
        for (int k = 0; k < nd; k++)
            if (d[k].name >= 0 && lv_is_varying_name(L, f, d[k].name)) vary = 1;
        if (vary) {
            for (int k = lo; k < tyend; k++)
                if (is(L, k, "constexpr") || is(L, k, "static") || is(L, k, "device") || is(L, k, "constant") ||
                    is(L, k, "threadgroup")) {
                    lv_reject(L, k, "varying %.*s declaration", tlen(L, k), ttext(L, k));
                    return;
                }
            /* `thread auto &e = m.thread_elements();`: a reference to the lanes'
             * view of a simdgroup matrix, which is a vary already */
            if (nd == 1 && d[0].ptr && d[0].init_hi > d[0].init_lo && lv_is_lanes_view(L, d[0].init_hi - 3) &&
                is(L, d[0].init_hi - 1, ")") && lv_find_top(L, lo, tyend, "auto", 0) >= 0) {
                lv_emit_raw(L, lo, d[0].init_lo);
                lv_emit_expr(L, d[0].init_lo, d[0].init_hi);
                lv_emit_raw(L, d[0].init_hi, hi);
                return;
            }
            for (int k = 0; k < nd; k++)
                if (d[k].ptr) {
                    lv_reject(L, d[k].lo, "varying pointer or reference local");
                    return;
                }
            for (int k = lo; k < tyend; k++)
                if (is(L, k, "auto")) {
                    emit_vary_auto(L, lo, tyend, d, nd, hi);
                    return;
                }
            emit_vary_type(L, lo, tyend);
        } else {
            lv_emit_raw(L, lo, tyend);
        }
        for (int k = 0; k < nd; k++) {
            int init_lo = d[k].init_lo, init_hi = d[k].init_hi;
            if (init_hi <= init_lo) {
                lv_emit_raw(L, d[k].lo, d[k].hi);
            } else {
                lv_emit_raw(L, d[k].lo, init_lo);
                if (is(L, init_lo - 1, "{") || is(L, init_lo - 1, "(")) lv_emit_list(L, init_lo, init_hi);
                else if (is(L, init_lo, "{") && L->c.match[init_lo] == init_hi - 1) {
                    lv_out_tok(L, init_lo);
                    lv_emit_list(L, init_lo + 1, init_hi - 1);
                    lv_out_tok(L, init_hi - 1);
                } else lv_emit_expr(L, init_lo, init_hi);
                lv_emit_raw(L, init_hi, d[k].hi);
            }
            if (d[k].hi < hi - 1) lv_out_tok(L, d[k].hi); /* , */
        }
        lv_out_tok(L, hi - 1);
        return;
    }
    /* expression statement: a store through a subscript becomes st() */
    int e = hi - 1; /* ; */
    int op = -1;
    for (int i = lo; i < e; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) {
            i = L->c.match[i];
            continue;
        }
        if (lv_is_assign_op(L, i)) {
            op = i;
            break;
        }
    }
    int incdec = -1;
    if (op < 0 && (is(L, e - 1, "++") || is(L, e - 1, "--"))) incdec = e - 1;
    if (op < 0 && (is(L, lo, "++") || is(L, lo, "--"))) incdec = lo;
    int llo = incdec == lo ? lo + 1 : lo, lhi = op >= 0 ? op : incdec >= 0 ? (incdec == lo ? e : incdec) : -1;
    if (lhi > llo + 1 && is(L, llo, "*") && lv_unary_end(L, llo + 1, lhi) == lhi) {
        /* *p = v -> st(p, 0, v); *p op= v -> st(p, 0, ld(p, 0) op (v)) */
        for (int k = llo + 1; k < lhi; k++)
            if (is(L, k, "++") || is(L, k, "--") || lv_is_assign_op(L, k)) {
                lv_reject(L, k, "side effect in a stored-to pointer");
                return;
            }
        if (incdec == lo) lv_skip_tok(L, lo);
        lv_skip_tok(L, llo);
        emit_store(L, op, incdec, lo, e, llo + 1, lhi, -1, -1);
        return;
    }
    if (lhi > llo && is(L, lhi - 1, "]") && L->c.match[lhi - 1] > llo) {
        /* a[i][j] = v -> st(ld(a, i), j, v): ld of a uniform index hands out the row
         * itself (a varying one does not compile: fibers) */
        int ob = L->c.match[lhi - 1];
        for (int k = ob; k < lhi; k++)
            if (is(L, k, "++") || is(L, k, "--") || lv_is_assign_op(L, k)) {
                lv_reject(L, k, "side effect in a stored-to index");
                return;
            }
        if (incdec == lo) lv_skip_tok(L, lo);
        emit_store(L, op, incdec, lo, e, llo, ob, ob + 1, lhi - 1);
        return;
    }
    lv_emit_expr(L, lo, e);
    lv_out_tok(L, e);
}

/* Where the test for an empty mask jumps: once every lane of a construct has
 * retired, the rest of it is skipped.  A varying branch's body is wrapped in
 * `do { } while (0)` for that, so that its lanes' retiring does not end the
 * statements the other lanes still run after the branch. */
enum { JUMP_RETURN, JUMP_CONTINUE, JUMP_BREAK };

typedef struct emit_ctx {
    int vctl;       /* varying control */
    int loop;       /* innermost loop statement (-1) */
    int target;     /* innermost loop or switch (-1): where a source break goes */
    int target_vctl; /* a varying if entered since that target began: a plain break
                      * there would end the switch for every lane (and a varying
                      * branch's do { } while (0) would take it) */
    int jump;       /* JUMP_*: what the empty-mask test does here */
} emit_ctx;

/* Emits statement s; returns 1 when lanes may have retired inside it and not come
 * back at its end (a return under varying control, or brk/cnt of an enclosing loop),
 * so that the caller tests for an empty mask. */
static int emit_stmt(lanes *L, lv_fn *f, int s, emit_ctx c);

static void emit_check(lanes *L, lv_fn *f, emit_ctx c) {
    if (c.jump == JUMP_BREAK) lv_out_s(L, " if (!::sw::lv::any()) break;");
    else if (c.jump == JUMP_CONTINUE) lv_out_s(L, " if (!::sw::lv::any()) continue;");
    else if (f->is_void) lv_out_s(L, " if (!::sw::lv::any()) return;");
    else lv_out_s(L, " if (!::sw::lv::any()) return _sw_F.result();");
}

/* The statement contains a return, break or continue (it may retire lanes). */
static int may_retire(const lanes *L, int s) {
    for (int i = L->st[s].lo; i < L->st[s].hi; i++)
        if (is(L, i, "return") || is(L, i, "break") || is(L, i, "continue")) return 1;
    return 0;
}

static int emit_body(lanes *L, lv_fn *f, int s, emit_ctx c);

/* The body of a varying branch. */
static int emit_branch_body(lanes *L, lv_fn *f, int s, emit_ctx c) {
    if (!may_retire(L, s)) return emit_body(L, f, s, c);
    lv_out_s(L, "{ do {");
    emit_ctx d = c;
    d.jump = JUMP_BREAK;
    int r = emit_stmt(L, f, s, d);
    if (r) emit_check(L, f, d);
    lv_out_s(L, "} while (0); }");
    return r;
}

/* A statement used as the body of if/for/while: braces added when a check must
 * follow it inside. */
static int emit_body(lanes *L, lv_fn *f, int s, emit_ctx c) {
    lv_out_s(L, "{");
    int r = emit_stmt(L, f, s, c);
    if (r) emit_check(L, f, c);
    lv_out_s(L, "}");
    return r;
}

static void emit_cond(lanes *L, int lo, int hi, int varying) {
    if (varying) {
        lv_emit_expr(L, lo, hi);
        return;
    }
    lv_out_s(L, "::sw::lv::u(");
    lv_emit_expr(L, lo, hi);
    lv_out_s(L, ")");
}

static int emit_simple_stmt(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx c) {
    int tg_name;
    if (lv_tg_decl_stmt(L, st->lo, &tg_name)) {
        lv_emit_raw(L, st->lo, st->hi);
        return 0;
    }
    /* A barrier is the simdgroup's (one fiber per simdgroup, exec.c): every lane
     * must be there, so never under varying control, nor in a function called
     * there. */
    for (int k = st->lo; k < st->hi; k++)
        if (is(L, k, "threadgroup_barrier") && (c.vctl || f->vcalled)) {
            lv_reject(L, k, "threadgroup_barrier %s",
                      c.vctl ? "under varying control" : "in a function called under varying control");
            return 0;
        }
    emit_simple(L, f, st->lo, st->hi);
    return 0;
}

static int emit_compound(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx c) {
    lv_out_tok(L, st->lo);
    int any = 0;
    for (int k = st->first; k >= 0; k = L->st[k].next) {
        int r = emit_stmt(L, f, k, c);
        if (r) emit_check(L, f, c);
        any |= r;
    }
    lv_out_tok(L, st->hi - 1);
    return any;
}

/* A varying condition: { branch _sw_bN(cond); if (then_()) body if (else_()) els } */
static int emit_if(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx c, int label) {
    char buf[160];
    int body = st->body, els = st->els;
    if (st->varying) {
        snprintf(buf, sizeof buf, "{ ::sw::lv::branch _sw_b%d(", label);
        lv_out_s(L, buf);
        lv_skip_tok(L, st->lo - (is(L, st->lo, "constexpr") ? 1 : 0));
        lv_skip_tok(L, st->lo);
        lv_skip_tok(L, st->a_lo - 1);
        lv_emit_expr(L, st->a_lo, st->a_hi);
        lv_skip_tok(L, st->a_hi);
        snprintf(buf, sizeof buf, "); if (_sw_b%d.then_()) ", label);
        lv_out_s(L, buf);
        emit_ctx d = c;
        d.vctl = 1;
        d.target_vctl = 1;
        int r = emit_branch_body(L, f, body, d);
        if (els >= 0) {
            lv_skip_tok(L, L->st[body].hi);
            snprintf(buf, sizeof buf, " if (_sw_b%d.else_()) ", label);
            lv_out_s(L, buf);
            r |= emit_branch_body(L, f, els, d);
        }
        lv_out_s(L, " }");
        return r;
    }
    lv_out_tok(L, st->lo); /* if, or the constexpr after it */
    lv_out_tok(L, st->a_lo - 1);
    if (is(L, st->lo, "constexpr")) lv_emit_expr(L, st->a_lo, st->a_hi);
    else emit_cond(L, st->a_lo, st->a_hi, 0);
    lv_out_tok(L, st->a_hi);
    int r = emit_body(L, f, body, c);
    if (els >= 0) {
        lv_out_tok(L, L->st[body].hi);
        r |= emit_body(L, f, els, c);
    }
    return r;
}

/* A loop all lanes run together: as written, with uniform conditions. */
static int emit_plain_loop(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx d) {
    if (st->kind == ST_DO) {
        lv_out_tok(L, st->lo);
        int r = emit_body(L, f, st->body, d);
        int w = L->st[st->body].hi;
        lv_out_tok(L, w);
        lv_out_tok(L, w + 1);
        emit_cond(L, st->a_lo, st->a_hi, 0);
        lv_emit_raw(L, st->a_hi, st->hi);
        return r;
    }
    lv_out_tok(L, st->lo);
    lv_out_tok(L, st->lo + 1);
    if (st->kind == ST_FOR) {
        if (st->a_hi > st->a_lo) emit_simple(L, f, st->a_lo, st->a_hi + 1);
        else lv_out_tok(L, st->a_hi);
        if (st->b_hi > st->b_lo) emit_cond(L, st->b_lo, st->b_hi, 0);
        lv_out_tok(L, st->b_hi);
        lv_emit_expr(L, st->c_lo, st->c_hi);
        lv_out_tok(L, st->c_hi);
    } else {
        emit_cond(L, st->a_lo, st->a_hi, 0);
        lv_out_tok(L, st->a_hi);
    }
    return emit_body(L, f, st->body, d);
}

/* A loop under the execution mask: { init; loop L; for (; L.test(c); L.next(), step) body } */
static int emit_masked_loop(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx d, int label) {
    char buf[160];
    int r;
    lv_out_s(L, "{ ");
    if (st->kind == ST_DO) {
        snprintf(buf, sizeof buf, "::sw::lv::loop _sw_l%d; ", label);
        lv_out_s(L, buf);
        lv_out_tok(L, st->lo);
        r = emit_body(L, f, st->body, d);
        int w = L->st[st->body].hi;
        lv_out_tok(L, w);
        lv_out_tok(L, w + 1);
        snprintf(buf, sizeof buf, "_sw_l%d.next(), _sw_l%d.test(", label, label);
        lv_out_s(L, buf);
        lv_emit_expr(L, st->a_lo, st->a_hi);
        lv_out_s(L, ")");
        lv_emit_raw(L, st->a_hi, st->hi);
        lv_out_s(L, " }");
        return f->needs_fn && r; /* brk/cnt end here; a return inside: the caller checks */
    }
    lv_skip_tok(L, st->lo);
    lv_skip_tok(L, st->lo + 1);
    if (st->kind == ST_FOR) {
        if (st->a_hi > st->a_lo) emit_simple(L, f, st->a_lo, st->a_hi + 1);
        else lv_skip_tok(L, st->a_hi);
    }
    snprintf(buf, sizeof buf, " ::sw::lv::loop _sw_l%d; for (; _sw_l%d.test(", label, label);
    lv_out_s(L, buf);
    int clo = st->kind == ST_FOR ? st->b_lo : st->a_lo, chi = st->kind == ST_FOR ? st->b_hi : st->a_hi;
    if (chi > clo) lv_emit_expr(L, clo, chi);
    else lv_out_s(L, "true");
    if (st->kind == ST_FOR) lv_skip_tok(L, st->b_hi);
    snprintf(buf, sizeof buf, "); _sw_l%d.next()", label);
    lv_out_s(L, buf);
    if (st->kind == ST_FOR && st->c_hi > st->c_lo) {
        lv_out_s(L, ", ");
        lv_emit_expr(L, st->c_lo, st->c_hi);
    }
    lv_skip_tok(L, st->kind == ST_FOR ? st->c_hi : st->a_hi);
    lv_out_s(L, ") ");
    r = emit_body(L, f, st->body, d);
    lv_out_s(L, " }");
    return f->needs_fn && r; /* a return inside: the caller checks */
}

static int emit_loop(lanes *L, lv_fn *f, int s, emit_ctx c, int label) {
    const lv_stmt *st = &L->st[s];
    emit_ctx d = c;
    d.loop = s;
    d.target = s;
    d.target_vctl = 0;
    d.jump = st->masked ? JUMP_CONTINUE : JUMP_BREAK;
    if (st->masked) d.vctl = 1;
    return st->masked ? emit_masked_loop(L, f, st, d, label) : emit_plain_loop(L, f, st, d);
}

static int emit_switch(lanes *L, lv_fn *f, int s, emit_ctx c) {
    const lv_stmt *st = &L->st[s];
    emit_ctx d = c;
    d.target = s;
    d.target_vctl = 0;
    d.jump = JUMP_BREAK;
    lv_out_tok(L, st->lo);
    lv_out_tok(L, st->a_lo - 1);
    emit_cond(L, st->a_lo, st->a_hi, 0);
    lv_out_tok(L, st->a_hi);
    return emit_stmt(L, f, st->body, d);
}

static int emit_return(lanes *L, lv_fn *f, const lv_stmt *st, emit_ctx c) {
    if (!f->needs_fn) {
        lv_out_tok(L, st->lo);
        lv_emit_expr(L, st->a_lo, st->a_hi);
        lv_out_tok(L, st->hi - 1);
        return 0;
    }
    lv_skip_tok(L, st->lo);
    lv_out_s(L, "{ _sw_F.ret(");
    lv_emit_expr(L, st->a_lo, st->a_hi);
    lv_out_s(L, ");");
    lv_skip_tok(L, st->hi - 1);
    if (!c.vctl) lv_out_s(L, f->is_void ? " return;" : " return _sw_F.result();");
    lv_out_s(L, " }");
    return c.vctl;
}

/* break/continue: as written, or lanes retiring from a masked loop (brk, cnt). */
static int emit_break_continue(lanes *L, const lv_stmt *st, emit_ctx c) {
    int to_switch = st->kind == ST_BREAK && c.target >= 0 && L->st[c.target].kind == ST_SWITCH;
    if (to_switch || c.loop < 0 || !L->st[c.loop].masked) {
        if (to_switch && c.target_vctl) {
            lv_reject(L, st->lo, "break out of a switch under varying control");
            return 0;
        }
        lv_emit_raw(L, st->lo, st->hi);
        return 0;
    }
    lv_skip_tok(L, st->lo);
    lv_out_s(L, st->kind == ST_BREAK ? "::sw::lv::brk()" : "::sw::lv::cnt()");
    lv_out_tok(L, st->hi - 1);
    return 1;
}

static int emit_stmt(lanes *L, lv_fn *f, int s, emit_ctx c) {
    if (s < 0 || L->why[0]) return 0;
    const lv_stmt *st = &L->st[s];
    int label = L->nlabels++; /* numbered in source order, before the children */
    switch (st->kind) {
    case ST_DIRECTIVE:
    case ST_EMPTY:
    case ST_LABEL: lv_emit_raw(L, st->lo, st->hi); return 0;
    case ST_SIMPLE: return emit_simple_stmt(L, f, st, c);
    case ST_COMPOUND: return emit_compound(L, f, st, c);
    case ST_IF: return emit_if(L, f, st, c, label);
    case ST_FOR:
    case ST_WHILE:
    case ST_DO: return emit_loop(L, f, s, c, label);
    case ST_SWITCH: return emit_switch(L, f, s, c);
    case ST_RETURN: return emit_return(L, f, st, c);
    case ST_BREAK:
    case ST_CONTINUE: return emit_break_continue(L, st, c);
    }
    return 0;
}

void lv_emit_function(lanes *L, lv_fn *f) {
    /* return type */
    if (f->ret_varying) {
        int lo = f->decl_lo, name = f->name;
        for (int k = lo; k < name; k++)
            if (is(L, k, "auto") || is(L, k, "*") || is(L, k, "&")) {
                lv_reject(L, k, "varying return of this type");
                return;
            }
        emit_vary_type(L, lo, name);
    }
    /* parameters */
    for (int p = 0; p < f->nparams; p++) {
        lv_param *pr = &f->params[p];
        if (!pr->varying) continue;
        if (pr->space) {
            lv_reject(L, pr->lo, "varying device/constant/threadgroup pointer parameter");
            return;
        }
        int tyend = pr->name >= 0 ? pr->name : pr->hi;
        while (tyend > pr->lo && (is(L, tyend - 1, "*") || is(L, tyend - 1, "&") || is(L, tyend - 1, "const") ||
                                  is(L, tyend - 1, "thread")))
            tyend--;
        emit_vary_type(L, pr->lo, tyend);
    }
    lv_out_tok(L, f->body_open);
    if (f->needs_fn) {
        /* the accumulator has the (rewritten) return type: its tokens again */
        lv_out_s(L, " ::sw::lv::fn<");
        if (f->is_void) lv_out_s(L, "void");
        else if (f->ret_varying) {
            lv_out_s(L, "::sw::lv::vary<");
            for (int k = f->decl_lo; k < f->name; k++)
                if (!is(L, k, "const") && !is(L, k, "thread")) lv_out_tok(L, k);
            lv_out_s(L, ">");
        } else {
            for (int k = f->decl_lo; k < f->name; k++) lv_out_tok(L, k);
        }
        lv_out_s(L, "> _sw_F;");
    }
    emit_ctx c = {0, -1, -1, 0, JUMP_RETURN};
    lv_stmt *body = &L->st[f->body];
    for (int k = body->first; k >= 0; k = L->st[k].next)
        if (emit_stmt(L, f, k, c)) emit_check(L, f, c);
    if (f->needs_fn && !f->is_void) lv_out_s(L, " return _sw_F.result();");
    lv_out_tok(L, f->body_close);
}
