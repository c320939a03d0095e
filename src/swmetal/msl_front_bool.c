/* msl_front_bool.c — MSL bool vectors take comparisons: `bool4 m = a < b;` and, later,
 * `m = a < b;` or `m &= a < b;`.  clang's vector comparison is an int vector of 0 / -1,
 * which a bool vector does not take (an error, not a wrong value), so the front end
 * wraps the right side in ::metal::sw_truth(...) (prelude: element != 0, a bool vector;
 * a bool vector stays itself).  The variable's type is known only where it is
 * declared, so assignments are rewritten within the declaring block alone, and a
 * redeclaration of the name inside it (after a type word or a comma) ends the search
 * there: a wrap of a float's assignment would be a silent 0/1. */
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front_internal.h"

int fe_is_bool_vector(const front *f, int i) {
    return tk_is(f, i, "bool2") || tk_is(f, i, "bool3") || tk_is(f, i, "bool4");
}

int fe_expr_end(const front *f, int p) {
    int e = p;
    while (e < f->c.ntoks && !tk_is(f, e, ",") && !tk_is(f, e, ";")) {
        int m = f->c.match[e];
        if (m >= 0 && m < e) break;   /* the closer of a group the expression is in */
        e = m > e ? m + 1 : e + 1;
    }
    return e;
}

int fe_wrap_truth(front *f, int p, int e) {
    char *open = strdup("::metal::sw_truth("), *close = strdup(")");
    if (!open || !close) {
        free(open);
        free(close);
        return fe_fail(f, p, "out of memory");
    }
    int end = f->c.toks[e - 1].start + f->c.toks[e - 1].len;
    fe_add_edit(f, f->c.toks[p].start, f->c.toks[p].start, open);
    fe_add_edit(f, end, end, close);
    return f->err ? -1 : 0;
}

/* The index of the '}' closing the block that holds token i (ntoks at file scope). */
static int block_end(const front *f, int i) {
    for (int j = i - 1; j >= 0; j--) {
        int m = f->c.match[j];
        if (m >= 0 && m < j) j = m;   /* a group closed before i: step over it */
        else if (tk_is(f, j, "{")) return m > j ? m : f->c.ntoks;
    }
    return f->c.ntoks;
}

/* Words that may stand before an assigned name without declaring it. */
static int is_statement_word(const front *f, int i) {
    return tk_is(f, i, "return") || tk_is(f, i, "else") || tk_is(f, i, "do");
}

/* Does the statement holding tk[k] (after a comma) start as a declaration, a type
 * word and a name (`float a, m = 2.5f`), rather than a comma expression (`j++, m ^= x`)? */
static int comma_declares(const front *f, int k) {
    int s = k - 1;
    for (; s > 0; s--) {
        int m = f->c.match[s - 1];
        if (m >= 0 && m < s - 1) s = m + 1;   /* step over a closed group */
        else if (tk_is(f, s - 1, ";") || tk_is(f, s - 1, "{") || tk_is(f, s - 1, "}") || tk_is(f, s - 1, "("))
            break;
    }
    return tk_ident(f, s) && !is_statement_word(f, s) && tk_ident(f, s + 1);
}

/* Assignments `name = ...` and `name &= ...` (| ^ too) between tk[from] and tk[end]. */
static int rewrite_assignments(front *f, int name, int from, int end) {
    for (int k = from; k < end && !f->err; k++) {
        if (!tk_ident(f, k) || !msl_tok_same(&f->c, k, name)) continue;
        if (tk_is(f, k - 1, ".") || tk_is(f, k - 1, "->") || tk_is(f, k - 1, "::")) continue;
        /* redeclared (`float m`, `float a, m`): not ours past here */
        if ((tk_ident(f, k - 1) && !is_statement_word(f, k - 1)) || (tk_is(f, k - 1, ",") && comma_declares(f, k)))
            return 0;
        int p = k + 1;
        if (tk_is(f, p, "&") || tk_is(f, p, "|") || tk_is(f, p, "^")) p++;
        if (!tk_is(f, p, "=") || tk_is(f, p + 1, "=")) continue;
        int e = fe_expr_end(f, p + 1);
        if (e > p + 1 && fe_wrap_truth(f, p + 1, e) < 0) return -1;
        k = e - 1;
    }
    return 0;
}

int fe_rewrite_bool_assignments(front *f, int i) {
    if (!fe_is_bool_vector(f, i) || !tk_ident(f, i + 1)) return 0;
    if (!(tk_is(f, i - 1, ";") || tk_is(f, i - 1, "{") || tk_is(f, i - 1, "}") || tk_is(f, i - 1, "const") ||
          tk_is(f, i - 1, "constexpr") || tk_is(f, i - 1, "thread") || tk_is(f, i - 1, "constant")))
        return 0;
    if (tk_is(f, i + 2, "(")) return 0;   /* a function returning a bool vector */
    int end = block_end(f, i);
    for (int d = i + 1; tk_ident(f, d);) {
        int p = d + 1, array = tk_is(f, p, "[");
        while (tk_is(f, p, "[") && f->c.match[p] > p) p = f->c.match[p] + 1;
        int e = tk_is(f, p, "=") ? fe_expr_end(f, p + 1) : p;
        /* bool4 m = a < b (a brace list stays as written) */
        if (!array && e > p + 1 && !tk_is(f, p + 1, "{") && fe_wrap_truth(f, p + 1, e) < 0) return -1;
        if (tk_is(f, e, "{") && f->c.match[e] > e) e = f->c.match[e] + 1;   /* bool4 m{...} */
        if (!array && rewrite_assignments(f, d, e, end) < 0) return -1;
        if (!tk_is(f, e, ",")) break;
        d = e + 1;
    }
    return f->err ? -1 : 0;
}
