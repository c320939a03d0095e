/* lanes_emit_expr.c — the lanes rewrite, phase 3a: expressions, and the output
 * primitives the statement emitter (lanes_emit.c) shares.
 *
 * Reads the tokens of an expression and the uniformity verdicts (lanes_uniform.c).
 * Writes L->out: the source between tokens as it was, with subscripts turned
 * into ::sw::lv::ld, casts into ::sw::lv::cast, and ?:, && and || into lambdas
 * that run each side only for the lanes that evaluate it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/lanes.h"

/* ------------------------------------------------------------------ output */

void lv_out_gap(lanes *L, int upto) {
    if (upto > L->pos) {
        msl_buf_put(&L->out, L->text + L->pos, (size_t)(upto - L->pos));
        L->pos = upto;
    }
}

void lv_out_tok(lanes *L, int i) {
    if (L->c.toks[i].start >= L->pos) {
        lv_out_gap(L, L->c.toks[i].start);
        msl_buf_put(&L->out, ttext(L, i), (size_t)tlen(L, i));
        L->pos = L->c.toks[i].start + L->c.toks[i].len;
    } else if (L->c.toks[i].kind != MSL_TK_DIRECTIVE) {
        msl_buf_puts(&L->out, " "); /* a repeated token (compound store) */
        msl_buf_put(&L->out, ttext(L, i), (size_t)tlen(L, i));
    }
}

void lv_skip_tok(lanes *L, int i) {
    if (L->c.toks[i].start >= L->pos) {
        lv_out_gap(L, L->c.toks[i].start);
        L->pos = L->c.toks[i].start + L->c.toks[i].len;
    }
}

void lv_out_s(lanes *L, const char *s) { msl_buf_puts(&L->out, s); }


/* Tokens of [lo, hi) as they are (array bounds, template arguments, sizeof). */
void lv_emit_raw(lanes *L, int lo, int hi) {
    for (int i = lo; i < hi; i++) lv_out_tok(L, i);
}

/* Top-level (depth 0) position of a token in [lo, hi), first or last. */
int lv_find_top(const lanes *L, int lo, int hi, const char *op, int last) {
    int found = -1;
    for (int i = lo; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) {
            i = L->c.match[i];
            continue;
        }
        if (is(L, i, op)) {
            if (!last) return i;
            found = i;
        }
    }
    return found;
}

/* The ':' that closes the '?' at q (nested ?: counted). */
static int ternary_colon(const lanes *L, int q, int hi) {
    int depth = 0;
    for (int i = q + 1; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) {
            i = L->c.match[i];
            continue;
        }
        if (is(L, i, "?")) depth++;
        else if (is(L, i, ":")) {
            if (depth == 0) return i;
            depth--;
        }
    }
    return -1;
}

/* End of the type at i inside a cast (`float`, `metal::float4`, `vec<float, 2>`,
 * `unsigned int`), or -1. */
static int type_end(const lanes *L, int i, int hi) {
    int k = i;
    while (is(L, k, "const")) k++;
    if (is(L, k, "metal") && is(L, k + 1, "::")) k += 2;
    if (!lv_is_type_name(L, k)) return -1;
    while (lv_is_type_name(L, k + 1) && (is(L, k, "unsigned") || is(L, k, "signed") || is(L, k, "long"))) k++;
    k++;
    if (is(L, k, "<")) k = msl_skip_angles(&L->c, k, hi);
    return k;
}

/* End of the type of a C-style cast at i: a type_end type with address-space and
 * cv qualifiers and pointer declarators (`device const bfloat4 *`), or -1. */
static int cast_type_end(const lanes *L, int i, int hi) {
    static const char *const quals[] = {"const", "volatile", "device", "constant", "threadgroup", "thread", NULL};
    for (;;) {
        int q = 0;
        for (int k = 0; quals[k]; k++) q |= is(L, i, quals[k]);
        if (!q) break;
        i++;
    }
    int e = type_end(L, i, hi);
    if (e < 0) return -1;
    for (;;) {
        int q = is(L, e, "*");
        for (int k = 0; quals[k]; k++) q |= is(L, e, quals[k]);
        if (!q) break;
        e++;
    }
    return e;
}

/* End of the unary expression starting at i (the operand of a C-style cast). */
int lv_unary_end(const lanes *L, int i, int hi) {
    while (i < hi && (is(L, i, "-") || is(L, i, "+") || is(L, i, "!") || is(L, i, "~") || is(L, i, "*") ||
                      is(L, i, "&") || is(L, i, "++") || is(L, i, "--")))
        i++;
    if (is(L, i, "(") && L->c.match[i] > i) {
        int te = cast_type_end(L, i + 1, hi);
        if (te == L->c.match[i]) return lv_unary_end(L, te + 1, hi); /* another cast */
        i = L->c.match[i] + 1;
    } else if (is_ident(L, i) || L->c.toks[i].kind == MSL_TK_NUMBER || L->c.toks[i].kind == MSL_TK_CHAR) {
        i++;
        while (is(L, i, "::") && is_ident(L, i + 1)) i += 2;
        if (is(L, i, "<") && lv_is_template_name(L, i - 1)) {
            int e = msl_skip_angles(&L->c, i, hi);
            if (e > 0) i = e;
        }
    } else {
        return i + 1;
    }
    for (;;) {
        if ((is(L, i, "[") || is(L, i, "(")) && L->c.match[i] > i) i = L->c.match[i] + 1;
        else if ((is(L, i, ".") || is(L, i, "->")) && is_ident(L, i + 1)) i += 2;
        else if (is(L, i, "++") || is(L, i, "--")) i++;
        else break;
    }
    return i < hi ? i : hi;
}

/* Comma-separated list inside a bracket pair (arguments, initializer lists). */
void lv_emit_list(lanes *L, int lo, int hi) {
    for (int s = lo; s < hi;) {
        int e = lv_find_top(L, s, hi, ",", 0);
        if (e < 0) e = hi;
        lv_emit_expr(L, s, e);
        if (e < hi) lv_out_tok(L, e);
        s = e + 1;
    }
}

void lv_emit_expr(lanes *L, int lo, int hi) {
    if (lo >= hi || L->why[0]) return;
    int c = lv_find_top(L, lo, hi, ",", 0);
    if (c >= 0) {
        lv_emit_expr(L, lo, c);
        lv_out_tok(L, c);
        lv_emit_expr(L, c + 1, hi);
        return;
    }
    for (int i = lo; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) {
            i = L->c.match[i];
            continue;
        }
        if (lv_is_assign_op(L, i)) {
            /* an assignment inside an expression (for steps, chained =): only to a plain name */
            int sub, deref;
            lv_chain_base(L, lo, i, &sub, &deref);
            if (sub) {
                lv_reject(L, i, "assignment through a subscript inside an expression");
                return;
            }
            lv_emit_expr(L, lo, i);
            lv_out_tok(L, i);
            lv_emit_expr(L, i + 1, hi);
            return;
        }
    }
    int q = lv_find_top(L, lo, hi, "?", 0);
    if (q >= 0) {
        int col = ternary_colon(L, q, hi);
        if (col < 0) {
            lv_reject(L, q, "?: without :");
            return;
        }
        lv_out_s(L, "::sw::lv::sel(");
        lv_emit_expr(L, lo, q);
        lv_skip_tok(L, q);
        lv_out_s(L, ", [&]() { return (");
        lv_emit_expr(L, q + 1, col);
        lv_skip_tok(L, col);
        lv_out_s(L, "); }, [&]() { return (");
        lv_emit_expr(L, col + 1, hi);
        lv_out_s(L, "); })");
        return;
    }
    const char *logic[2][2] = {{"||", "::sw::lv::lor("}, {"&&", "::sw::lv::land("}};
    for (int k = 0; k < 2; k++) {
        int op = lv_find_top(L, lo, hi, logic[k][0], 1);
        if (op < 0) continue;
        lv_out_s(L, logic[k][1]);
        lv_emit_expr(L, lo, op);
        lv_skip_tok(L, op);
        lv_out_s(L, ", [&]() { return (");
        lv_emit_expr(L, op + 1, hi);
        lv_out_s(L, "); })");
        return;
    }
    /* binary operators and operands, left to right */
    int operand_next = 1; /* at the start, or after an operator: a `*` here is a dereference */
    for (int i = lo; i < hi;) {
        if (is(L, i, "*") && operand_next) {
            /* *p -> ld(p, 0): p may be a varying pointer (`*(device float4 *)(x + i)`) */
            int e = lv_unary_end(L, i + 1, hi);
            lv_skip_tok(L, i);
            lv_out_s(L, "::sw::lv::ld(");
            lv_emit_expr(L, i + 1, e);
            lv_out_s(L, ", 0)");
            i = e;
            operand_next = 0;
            continue;
        }
        /* the fiber front end's constructors and casts (msl_front.c): ::metal::sw_mk<T>(...) */
        if (is(L, i, "::") && is(L, i + 1, "metal") && is(L, i + 2, "::") &&
            (is(L, i + 3, "sw_mk") || is(L, i + 3, "sw_convert") || is(L, i + 3, "sw_static_cast") ||
             is(L, i + 3, "sw_fcast") || is(L, i + 3, "sw_ccast"))) {
            lv_skip_tok(L, i);
            lv_skip_tok(L, i + 1);
            lv_skip_tok(L, i + 2);
            i += 3;
            continue;
        }
        if (is(L, i, "metal") && is(L, i + 1, "::") &&
            (is(L, i + 2, "sw_mk") || is(L, i + 2, "sw_convert") || is(L, i + 2, "sw_static_cast") ||
             is(L, i + 2, "sw_fcast") || is(L, i + 2, "sw_ccast"))) {
            lv_skip_tok(L, i);
            lv_skip_tok(L, i + 1);
            i += 2;
            continue;
        }
        if (L->c.toks[i].kind == MSL_TK_PUNCT && !is(L, i, "(") && !is(L, i, "{") && !is(L, i, "::")) {
            lv_out_tok(L, i++);
            operand_next = 1;
            continue;
        }
        if (is(L, i, "{") && L->c.match[i] > i) {
            lv_out_tok(L, i);
            lv_emit_list(L, i + 1, L->c.match[i]);
            lv_out_tok(L, L->c.match[i]);
            i = L->c.match[i] + 1;
            operand_next = 0;
            continue;
        }
        int e = lv_unary_end(L, i, hi);
        if (e <= i) e = i + 1;
        lv_emit_operand(L, i, e);
        i = e;
        operand_next = 0;
    }
}

/* One operand: a (possibly cast or parenthesised) primary with its postfix chain. */
/* The end of the primary of the postfix chain at i: a parenthesis, a
 * static_cast<T>(...) (*scast), a functional cast T(...) (*fcast), or a name,
 * qualified or with template arguments.  -1 when refused (a static_cast without
 * its parenthesis). */
static int primary_end(lanes *L, int i, int hi, int *fcast, int *scast) {
    *fcast = *scast = 0;
    if (is(L, i, "(") && L->c.match[i] > i) return L->c.match[i] + 1;
    if (is(L, i, "static_cast") && is(L, i + 1, "<")) {
        int p_end = msl_skip_angles(&L->c, i + 1, hi);
        if (p_end < 0 || !is(L, p_end, "(")) {
            lv_reject(L, i, "static_cast");
            return -1;
        }
        *scast = 1;
        return p_end;
    }
    if (type_end(L, i, hi) > 0 && is(L, type_end(L, i, hi), "(")) {
        *fcast = 1;
        return type_end(L, i, hi);
    }
    int p_end = i + 1;
    while (is(L, p_end, "::") && is_ident(L, p_end + 1)) p_end += 2;
    if (is(L, p_end, "<") && lv_is_template_name(L, p_end - 1)) {
        int e = msl_skip_angles(&L->c, p_end, hi);
        if (e > 0) p_end = e;
    }
    return p_end;
}

/* The primary [lo, p_end) and, for a cast or a parenthesis, its arguments; returns
 * where the postfix operators start. */
static int emit_primary(lanes *L, int lo, int p_end, int fcast, int scast) {
    int k = lo;
    if (is(L, k, "(") && !fcast && !scast) {
        lv_out_tok(L, k);
        lv_emit_expr(L, k + 1, L->c.match[k]);
        lv_out_tok(L, L->c.match[k]);
        return L->c.match[k] + 1;
    }
    if (fcast) {
        lv_out_s(L, "::sw::lv::cast<");
        lv_emit_raw(L, lo, p_end);
        lv_out_s(L, ">");
        k = p_end;
        lv_out_tok(L, k);
        lv_emit_list(L, k + 1, L->c.match[k]);
        lv_out_tok(L, L->c.match[k]);
        return L->c.match[k] + 1;
    }
    if (scast) {
        lv_skip_tok(L, lo);
        lv_out_s(L, "::sw::lv::cast");
        lv_emit_raw(L, lo + 1, p_end);
        k = p_end;
        lv_out_tok(L, k);
        lv_emit_expr(L, k + 1, L->c.match[k]);
        lv_out_tok(L, L->c.match[k]);
        return L->c.match[k] + 1;
    }
    if (is(L, lo, "sw_mk") || is(L, lo, "sw_convert") || is(L, lo, "sw_static_cast") || is(L, lo, "sw_fcast") ||
        is(L, lo, "sw_ccast")) {
        /* vectors and conversions of varying values: the lanes' cast (same bits;
         * sw_static_cast<T> is static_cast<T> but for half/bfloat and vector T,
         * which convert as sw_convert does, and so does cast) */
        lv_skip_tok(L, lo);
        lv_out_s(L, "::sw::lv::cast");
        lv_emit_raw(L, lo + 1, p_end);
        return p_end;
    }
    /* simd functions by their lanes name, `metal::simd_sum` too: the fiber
     * versions of some are plain functions that would synchronise through the
     * executor */
    int name = lo;
    if (p_end == lo + 3 && is(L, lo, "metal") && is(L, lo + 1, "::") && !is(L, lo - 1, "::")) name = lo + 2;
    if (p_end == name + 1 && (lv_has_prefix(L, name, "simd_") || is(L, name, "simdgroup_barrier")) &&
        is(L, name + 1, "(") && (name > lo || !is(L, lo - 1, "::"))) {
        for (int q = lo; q < name; q++) lv_skip_tok(L, q);
        lv_out_gap(L, L->c.toks[name].start);
        lv_out_s(L, "::sw::lv::");
        lv_emit_raw(L, name, p_end);
    } else {
        lv_emit_raw(L, lo, p_end);
    }
    return p_end;
}

/* Postfix operators from k: each subscript closes one of the ld( opened before
 * the primary; calls take their arguments as lists. */
static void emit_postfix(lanes *L, int k, int hi) {
    while (k < hi) {
        if (is(L, k, "[") && L->c.match[k] > k) {
            lv_skip_tok(L, k);
            lv_out_s(L, ", ");
            lv_emit_expr(L, k + 1, L->c.match[k]);
            lv_skip_tok(L, L->c.match[k]);
            lv_out_s(L, ")");
            k = L->c.match[k] + 1;
        } else if (is(L, k, "(") && L->c.match[k] > k) {
            lv_out_tok(L, k);
            lv_emit_list(L, k + 1, L->c.match[k]);
            lv_out_tok(L, L->c.match[k]);
            k = L->c.match[k] + 1;
        } else {
            lv_out_tok(L, k++);
        }
    }
}

/* An operand: sizeof & co. as they are, a C-style cast as ::sw::lv::cast, else a
 * postfix chain whose subscripts become ld(base, index) (every ld( opens before
 * the primary, each subscript closes one). */
void lv_emit_operand(lanes *L, int lo, int hi) {
    int i = lo;
    if (is(L, i, "sizeof") || is(L, i, "alignof") || is(L, i, "alignas")) {
        lv_emit_raw(L, lo, hi);
        return;
    }
    /* C-style cast: (T) operand */
    if (is(L, i, "(") && L->c.match[i] > i) {
        int te = cast_type_end(L, i + 1, hi);
        if (te > 0 && te == L->c.match[i] && te + 1 < hi) {
            lv_skip_tok(L, i);
            lv_out_s(L, "::sw::lv::cast<");
            lv_emit_raw(L, i + 1, te);
            lv_skip_tok(L, te);
            lv_out_s(L, ">(");
            lv_emit_expr(L, te + 1, hi);
            lv_out_s(L, ")");
            return;
        }
    }
    /* postfix chain: compute how many ld( open before the primary */
    int fcast, scast;
    int p_end = primary_end(L, i, hi, &fcast, &scast);
    if (p_end < 0) return;
    int nsub = 0;
    for (int k = p_end; k < hi;) {
        if (is(L, k, "[") && L->c.match[k] > k) nsub++;
        if ((is(L, k, "[") || is(L, k, "(")) && L->c.match[k] > k) k = L->c.match[k] + 1;
        else k++;
    }
    for (int k = 0; k < nsub; k++) lv_out_s(L, "::sw::lv::ld(");
    emit_postfix(L, emit_primary(L, lo, p_end, fcast, scast), hi);
}
