/* msl_front.c — the MSL pre-pass: finds kernels and function constants in
 * (preprocessed) MSL and rewrites the text so clang++ can compile it against the
 * prelude, without moving any line.
 *
 * Rewrites, each an edit of a byte span (replacement text + the span's newlines):
 *   [[...]] attributes        -> blanks (standard C++ ones are kept)
 *   `kernel` keyword          -> blank
 *   function-scope `threadgroup T a[n], b;` -> references into the threadgroup arena
 *   `constant T x [[function_constant(n)]];` -> a constexpr from SW_FC_DEF_n/SW_FC_VAL_n
 *   a statement atomic_fetch_*_explicit(...); -> sw_discard_atomic_fetch_*_explicit
 * Address-space words (device, constant, thread, threadgroup) stay: the prelude
 * defines them as macros. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front_internal.h"

/* An error at token i of f->c (msl_error_at: past the end, the last token).  The
 * first error is the one reported.  Returns -1. */
int fe_fail(front *f, int i, const char *fmt, ...) {
    if (f->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    f->err = msl_verror_at(&f->c, i, fmt, ap);
    va_end(ap);
    return -1;
}

int fe_add_edit(front *f, int start, int end, char *text) {
    if (f->nedits == f->capedits) {
        int cap = f->capedits ? f->capedits * 2 : 64;
        edit *e = realloc(f->edits, sizeof *e * (size_t)cap);
        if (!e) {
            free(text);
            return fe_fail(f, -1, "out of memory");
        }
        f->edits = e;
        f->capedits = cap;
    }
    f->edits[f->nedits] = (edit){start, end, text, 0, f->nedits, 0};
    f->nedits++;
    return 0;
}

/* Marks the explicit instantiation of the kernel just added, tk[first..last], so
 * that apply_edits records its span in the rewritten text.  Both marks sort before
 * any other insertion at their position (order), so they bound the declaration. */
int fe_mark_instantiation(front *f, int first, int last) {
    int k = f->u->nkernels - 1;
    int lo = f->c.toks[first].start, hi = f->c.toks[last].start + f->c.toks[last].len;
    if (fe_add_edit(f, lo, lo, NULL)) return -1;
    f->edits[f->nedits - 1].anchor = 2 * k + 1;
    f->edits[f->nedits - 1].order = -1000;
    if (fe_add_edit(f, hi, hi, NULL)) return -1;
    f->edits[f->nedits - 1].anchor = 2 * k + 2;
    f->edits[f->nedits - 1].order = -1000;
    return 0;
}

void fe_blank_tok(front *f, int i) {
    fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, NULL);
}

/* Parses an integer literal, optionally parenthesised, from original tokens [lo, hi). */
int fe_parse_int_arg(const front *f, int lo, int hi, long *out) {
    while (hi - lo >= 3 && msl_tok_is(&f->lx, lo, "(") && msl_tok_is(&f->lx, hi - 1, ")")) {
        lo++;
        hi--;
    }
    if (hi - lo != 1 || f->lx.toks[lo].kind != MSL_TK_NUMBER) return -1;
    const char *s = f->lx.text + f->lx.toks[lo].start;
    char *end;
    long v = strtol(s, &end, 0);
    while (end < s + f->lx.toks[lo].len && (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')) end++;
    if (end != s + f->lx.toks[lo].len) return -1;
    *out = v;
    return 0;
}

/* Concatenates the string literals in original tokens [lo, hi) (as the compiler
 * would after macro expansion: "steel_" "bf16" -> "steel_bf16").  NULL if some
 * token is not a plain string literal. */
char *fe_parse_string_arg(const front *f, int lo, int hi) {
    msl_buf b = {0};
    if (lo >= hi) return NULL;
    for (int i = lo; i < hi; i++) {
        const msl_tok *t = &f->lx.toks[i];
        if (t->kind != MSL_TK_STRING) {
            free(msl_buf_take(&b));
            return NULL;
        }
        const char *s = f->lx.text + t->start;
        for (int k = 1; k < t->len - 1; k++) {
            char c = s[k];
            if (c == '\\' && k + 1 < t->len - 1) {
                c = s[++k];
                if (c == 'n') c = '\n';
                else if (c == 't') c = '\t';
            }
            msl_buf_put(&b, &c, 1);
        }
    }
    msl_buf_put(&b, "", 0);
    return msl_buf_take(&b);
}

/* ------------------------------------------------------------ attributes */

int fe_is_standard_attr(const char *name) {
    static const char *std_attrs[] = {"maybe_unused", "nodiscard", "noreturn", "fallthrough", "deprecated",
                                      "likely",       "unlikely",  NULL};
    for (int i = 0; std_attrs[i]; i++)
        if (strcmp(name, std_attrs[i]) == 0) return 1;
    return 0;
}

/* Original tokens [i] and [i+1] are '[' '['.  Parses through the closing "]]",
 * records the group and returns the index of its last token, or -1. */
static int parse_attr_group(front *f, int i) {
    const msl_lexed *lx = &f->lx;
    int depth = 0, k = i + 2;
    for (; k < lx->ntoks; k++) {
        if (msl_tok_is(lx, k, "[") || msl_tok_is(lx, k, "(")) depth++;
        else if (msl_tok_is(lx, k, "]") || msl_tok_is(lx, k, ")")) {
            if (depth == 0) break;
            depth--;
        }
    }
    if (k + 1 >= lx->ntoks || !msl_tok_is(lx, k, "]") || !msl_tok_is(lx, k + 1, "]")) {
        f->err = msl_error_at(lx, i, "attribute list '[[' is not closed by ']]'");
        return -1;
    }
    attr_group *g = realloc(f->attrs, sizeof *g * (size_t)(f->nattrs + 1));
    if (!g) {
        f->err = strdup("out of memory");
        return -1;
    }
    f->attrs = g;
    g = &f->attrs[f->nattrs++];
    memset(g, 0, sizeof *g);
    g->start = lx->toks[i].start;
    g->end = lx->toks[k + 1].start + lx->toks[k + 1].len;
    g->keep = 1;
    int p = i + 2;
    while (p < k) {
        if (g->nitems == MAX_ATTR_ITEMS) {
            f->err = msl_error_at(lx, p, "more than %d attributes in one [[...]] list", MAX_ATTR_ITEMS);
            return -1;
        }
        attr_item *it = &g->items[g->nitems++];
        size_t nlen = 0;
        while (p < k && (lx->toks[p].kind == MSL_TK_IDENT || msl_tok_is(lx, p, "::"))) {
            size_t tl = (size_t)lx->toks[p].len;
            if (nlen + tl < sizeof it->name) {
                memcpy(it->name + nlen, lx->text + lx->toks[p].start, tl);
                nlen += tl;
            }
            p++;
        }
        it->name[nlen] = 0;
        if (nlen == 0) {
            f->err = msl_error_at(lx, p, "expected an attribute name");
            return -1;
        }
        it->arg_lo = it->arg_hi = p;
        if (p < k && msl_tok_is(lx, p, "(")) {
            int d = 0, q = p;
            for (; q < k; q++) {
                if (msl_tok_is(lx, q, "(")) d++;
                else if (msl_tok_is(lx, q, ")") && --d == 0) break;
            }
            it->arg_lo = p + 1;
            it->arg_hi = q;
            p = q + 1;
        }
        if (!fe_is_standard_attr(it->name)) g->keep = 0;
        if (p < k && !msl_tok_is(lx, p, ",")) {
            f->err = msl_error_at(lx, p, "expected ',' or ']]' in attribute list");
            return -1;
        }
        p++;
    }
    return k + 1;
}

const attr_item *fe_find_attr(const front *f, int tk_index, const char *name) {
    if (f->c.toks[tk_index].kind != MSL_TK_ATTR) return NULL;
    const attr_group *g = &f->attrs[f->c.toks[tk_index].attr];
    for (int i = 0; i < g->nitems; i++)
        if (strcmp(g->items[i].name, name) == 0) return &g->items[i];
    return NULL;
}

/* Builds f->c from the original tokens, one MSL_TK_ATTR per [[...]] group. */
static int collapse_attrs(front *f) {
    if (msl_lexed_view(&f->lx, &f->c)) return fe_fail(f, -1, "out of memory");
    f->c.ntoks = 0;
    for (int i = 0; i < f->lx.ntoks; i++) {
        if (msl_tok_is(&f->lx, i, "[") && msl_tok_is(&f->lx, i + 1, "[")) {
            int last = parse_attr_group(f, i);
            if (last < 0) return -1;
            msl_tok t = f->lx.toks[i];
            t.kind = MSL_TK_ATTR;
            t.attr = f->nattrs - 1;
            t.len = f->attrs[t.attr].end - t.start;
            f->c.toks[f->c.ntoks++] = t;
            if (!f->attrs[t.attr].keep) fe_add_edit(f, t.start, t.start + t.len, NULL);
            i = last;
            continue;
        }
        f->c.toks[f->c.ntoks++] = f->lx.toks[i];
    }
    return f->err ? -1 : 0;
}

/* --------------------------------------------------------------- brackets */

static int match_brackets(front *f) {
    f->ns_brace = calloc((size_t)f->c.ntoks + 1, 1);
    char *err = NULL;
    if (!f->ns_brace || msl_match_brackets(&f->c, 1, &err) != 0) {
        if (!err) return fe_fail(f, -1, "out of memory");
        if (!f->err) f->err = err;
        else free(err);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------ function constants */

int msl_fc_type_from_name(const char *name, size_t len) {
    static const struct {
        const char *name;
        int type;
    } map[] = {{"bool", SW_FC_BOOL},     {"int", SW_FC_INT},           {"int32_t", SW_FC_INT},
               {"uint", SW_FC_UINT},     {"uint32_t", SW_FC_UINT},     {"unsigned int", SW_FC_UINT},
               {"unsigned", SW_FC_UINT}, {"float", SW_FC_FLOAT},       {"half", SW_FC_HALF},
               {"short", SW_FC_SHORT},   {"int16_t", SW_FC_SHORT},     {"ushort", SW_FC_USHORT},
               {"uint16_t", SW_FC_USHORT}, {"unsigned short", SW_FC_USHORT}, {NULL, 0}};
    for (int i = 0; map[i].name; i++)
        if (strlen(map[i].name) == len && memcmp(map[i].name, name, len) == 0) return map[i].type;
    return 0;
}

const char *msl_fc_type_name(int type) {
    switch (type) {
    case SW_FC_BOOL: return "bool";
    case SW_FC_INT: return "int";
    case SW_FC_UINT: return "uint";
    case SW_FC_FLOAT: return "float";
    case SW_FC_HALF: return "half";
    case SW_FC_SHORT: return "short";
    case SW_FC_USHORT: return "ushort";
    default: return "?";
    }
}

/* Declaration tk [ds, end] (end = ';') carries [[function_constant(n)]] at tk[at]. */
/* An integer constant expression of literals in original tokens [*p, hi) (after
 * macro expansion: `[[function_constant(FC_MUL_MV + 1)]]` is `600 + 1`):
 * + - * / % << >> & | ^ ~ ! and parentheses, C precedence.  0, or -1. */
typedef struct int_expr {
    const front *f;
    int p, hi, bad;
} int_expr;

static long ie_binary(int_expr *e, int min_prec);

static int ie_is(const int_expr *e, const char *op) { return e->p < e->hi && msl_tok_is(&e->f->lx, e->p, op); }

static long ie_unary(int_expr *e) {
    const msl_lexed *lx = &e->f->lx;
    if (e->p >= e->hi) {
        e->bad = 1;
        return 0;
    }
    if (ie_is(e, "-") || ie_is(e, "+") || ie_is(e, "~") || ie_is(e, "!")) {
        char op = lx->text[lx->toks[e->p++].start];
        long v = ie_unary(e);
        return op == '-' ? -v : op == '~' ? ~v : op == '!' ? !v : v;
    }
    if (ie_is(e, "(")) {
        e->p++;
        long v = ie_binary(e, 0);
        if (!ie_is(e, ")")) e->bad = 1;
        e->p++;
        return v;
    }
    long v;
    if (fe_parse_int_arg(e->f, e->p, e->p + 1, &v) != 0) {
        e->bad = 1;
        return 0;
    }
    e->p++;
    return v;
}

static long ie_binary(int_expr *e, int min_prec) {
    static const struct {
        const char *op;
        int prec;
    } ops[] = {{"|", 1}, {"^", 2}, {"&", 3}, {"+", 5}, {"-", 5}, {"*", 6}, {"/", 6}, {"%", 6}, {NULL, 0}};
    long lhs = ie_unary(e);
    while (!e->bad && e->p < e->hi) {
        int prec = 0, shift = 0;
        const char *op = NULL;
        /* "<<" and ">>" are two tokens */
        if (ie_is(e, "<") && e->p + 1 < e->hi && msl_tok_is(&e->f->lx, e->p + 1, "<")) {
            shift = 1;
            prec = 4;
        } else if (ie_is(e, ">") && e->p + 1 < e->hi && msl_tok_is(&e->f->lx, e->p + 1, ">")) {
            shift = 2;
            prec = 4;
        } else {
            for (int i = 0; ops[i].op; i++)
                if (ie_is(e, ops[i].op)) op = ops[i].op, prec = ops[i].prec;
        }
        if (!prec || prec < min_prec) break;
        e->p += shift ? 2 : 1;
        long rhs = ie_binary(e, prec + 1);
        if (shift == 1) lhs = (rhs >= 0 && rhs < 63) ? lhs << rhs : 0;
        else if (shift == 2) lhs = (rhs >= 0 && rhs < 63) ? lhs >> rhs : 0;
        else if (op[0] == '|') lhs |= rhs;
        else if (op[0] == '^') lhs ^= rhs;
        else if (op[0] == '&') lhs &= rhs;
        else if (op[0] == '+') lhs += rhs;
        else if (op[0] == '-') lhs -= rhs;
        else if (op[0] == '*') lhs *= rhs;
        else if (rhs == 0) e->bad = 1;
        else if (op[0] == '/') lhs /= rhs;
        else lhs %= rhs;
    }
    return lhs;
}

static int eval_int_expr(const front *f, int lo, int hi, long *out) {
    int_expr e = {f, lo, hi, 0};
    long v = ie_binary(&e, 0);
    if (e.bad || e.p != hi) return -1;
    *out = v;
    return 0;
}

static int is_storage_word(const front *f, int i) {
    return tk_is(f, i, "static") || tk_is(f, i, "constexpr") || tk_is(f, i, "const") || tk_is(f, i, "constant") ||
           tk_is(f, i, "inline");
}

int fe_rewrite_function_constant(front *f, int ds, int end, int at) {
    const attr_item *it = fe_find_attr(f, at, "function_constant");
    long index;
    if (eval_int_expr(f, it->arg_lo, it->arg_hi, &index) || index < 0 || index > 65535)
        return fe_fail(f, at,
                    "[[function_constant(n)]] needs an index in 0..65535 (a literal or an expression of literals)");
    int name = at - 1;
    int c = ds;
    while (c < name && !tk_is(f, c, "constant")) c++;
    if (!tk_ident(f, name) || c + 1 >= name)
        return fe_fail(f, at, "expected 'constant TYPE NAME [[function_constant(n)]];'");
    /* type text: the tokens from the first after the storage words to the name,
     * joined by single spaces (`static constant constexpr bool x` -> "bool") */
    int t0 = ds;
    while (t0 < name && is_storage_word(f, t0)) t0++;
    msl_buf tb = {0};
    for (int i = t0; i < name; i++) {
        if (i > t0) msl_buf_puts(&tb, " ");
        msl_buf_put(&tb, tk_text(f, i), (size_t)f->c.toks[i].len);
    }
    char *type = msl_buf_take(&tb);
    char *nm = tk_dup(f, name);
    if (!type || !nm) {
        free(type);
        free(nm);
        return fe_fail(f, at, "out of memory");
    }
    int fctype = msl_fc_type_from_name(type, strlen(type));
    if (!fctype) {
        fe_fail(f, c + 1,
                "function constant '%s' has type '%s'; supported: bool, int, uint, short, ushort, float, half",
             nm, type);
        free(type);
        free(nm);
        return -1;
    }
    if (at + 1 != end) {
        free(type);
        free(nm);
        return fe_fail(f, at + 1, "expected ';' after [[function_constant(n)]]");
    }
    for (int i = 0; i < f->u->nconstants; i++) {
        if (f->u->constants[i].index == index || strcmp(f->u->constants[i].name, nm) == 0) {
            fe_fail(f, name, "function constant '%s' repeats the name or index of '%s'", nm, f->u->constants[i].name);
            free(type);
            free(nm);
            return -1;
        }
    }
    msl_buf rb = {0};
    msl_buf_printf(&rb,
                   "static constexpr %s %s = SW_FC_DEF_%ld ? static_cast<%s>(SW_FC_VAL_%ld) : %s{}; "
                   "static constexpr bool sw_fcdef_%s = SW_FC_DEF_%ld;",
                   type, nm, index, type, index, type, nm, index);
    free(type);
    char *repl = msl_buf_take(&rb);
    msl_constant *nc = realloc(f->u->constants, sizeof *nc * (size_t)(f->u->nconstants + 1));
    if (!repl || !nc) {
        free(repl);
        free(nm);
        if (nc) f->u->constants = nc;
        return fe_fail(f, at, "out of memory");
    }
    f->u->constants = nc;
    f->u->constants[f->u->nconstants++] = (msl_constant){nm, (int)index, fctype, 0};
    return fe_add_edit(f, f->c.toks[ds].start, f->c.toks[end].start + f->c.toks[end].len, repl);
}

/* ------------------------------------------------------------ apply edits */

/* At one position: insertions before replacements (a replacement consumes the
 * position), outer openings first and outer closings last, then the containing
 * edit first, then creation order. */
static int cmp_edit(const void *a, const void *b) {
    const edit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    int xz = x->end == x->start, yz = y->end == y->start;
    if (xz != yz) return xz ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    if ((y->end - y->start) != (x->end - x->start)) return (y->end - y->start) - (x->end - x->start);
    return x->seq - y->seq;
}

static char *apply_edits(front *f) {
    qsort(f->edits, (size_t)f->nedits, sizeof *f->edits, cmp_edit);
    const char *s = f->lx.text;
    size_t n = strlen(s);
    msl_buf b = {0};
    size_t pos = 0;
    for (int i = 0; i < f->nedits; i++) {
        const edit *e = &f->edits[i];
        if ((size_t)e->start < pos) continue; /* inside an edit already applied */
        msl_buf_put(&b, s + pos, (size_t)e->start - pos);
        pos = (size_t)e->start;
        if (e->anchor) {
            msl_kernel *k = &f->u->kernels[(e->anchor - 1) / 2];
            if (e->anchor % 2) k->inst_lo = (int)b.len;
            else k->inst_hi = (int)b.len;
            k->inst |= e->anchor % 2 ? 1 : 2;
            continue;
        }
        if (e->text) {
            msl_buf_puts(&b, e->text);
            for (int k = e->start; k < e->end; k++)
                if (s[k] == '\n') msl_buf_put(&b, "\n", 1);
        } else {
            for (int k = e->start; k < e->end; k++) msl_buf_put(&b, s[k] == '\n' ? "\n" : " ", 1);
        }
        pos = (size_t)e->end;
    }
    msl_buf_put(&b, s + pos, n - pos);
    return msl_buf_take(&b);
}

/* ------------------------------------------------------------------ API */

static void front_free(front *f) {
    msl_lexed_free(&f->c);
    msl_lexed_free(&f->lx);
    free(f->ns_brace);
    free(f->space_qual);
    for (int i = 0; i < f->nfn_refs; i++) {
        free(f->fn_refs[i].qname);
        free(f->fn_refs[i].ref);
    }
    free(f->fn_refs);
    for (int i = 0; i < f->nvec_aliases; i++) free(f->vec_aliases[i]);
    free(f->vec_aliases);
    for (int i = 0; i < f->ntype_params; i++) free(f->type_params[i]);
    free(f->type_params);
    free(f->attrs);
    for (int i = 0; i < f->nedits; i++) free(f->edits[i].text);
    free(f->edits);
    for (int i = 0; i < f->ntemplates; i++) {
        free(f->templates[i].name);
        fe_kernel_free(&f->templates[i].k);
    }
    free(f->templates);
}

/* Marks the constants the source tests with is_function_constant_defined(name). */
static void mark_tested_constants(front *f) {
    for (int i = 0; i + 3 < f->c.ntoks; i++) {
        if (!tk_is(f, i, "is_function_constant_defined") || !tk_is(f, i + 1, "(") || !tk_ident(f, i + 2)) continue;
        for (int c = 0; c < f->u->nconstants; c++)
            if (tk_is(f, i + 2, f->u->constants[c].name)) f->u->constants[c].tested = 1;
    }
}

int msl_front_parse(const char *text, const char *filename, msl_unit *out, char **err) {
    *out = (msl_unit){0};
    *err = NULL;
    front f = {0};
    f.u = out;
    if (msl_lex(text, filename, &f.lx, err)) return -1;
    if (collapse_attrs(&f) == 0 && match_brackets(&f) == 0 && fe_reject_unsupported(&f) == 0 &&
        fe_strip_method_spaces(&f) == 0 && (fe_strip_coherent(&f), 1) &&
        fe_walk_ns(&f, 0, f.c.ntoks, "::") == 0 &&
        fe_rewrite_threadgroup_decls(&f) == 0 && fe_rewrite_vector_constructors(&f) == 0 &&
        fe_rewrite_array_params(&f) == 0 && fe_rewrite_braced_args(&f) == 0 && fe_rewrite_string_args(&f) == 0 &&
        fe_rewrite_conditionals(&f) == 0 && fe_rewrite_discarded_atomics(&f) == 0) {
        mark_tested_constants(&f);
        out->text = apply_edits(&f);
        if (!out->text) f.err = strdup("out of memory while rewriting the MSL source");
    }
    if (f.err) {
        *err = f.err;
        f.err = NULL;
        front_free(&f);
        msl_unit_free(out);
        return -1;
    }
    front_free(&f);
    return 0;
}

void msl_unit_free(msl_unit *u) {
    free(u->text);
    for (int i = 0; i < u->nkernels; i++) fe_kernel_free(&u->kernels[i]);
    free(u->kernels);
    for (int i = 0; i < u->nconstants; i++) free(u->constants[i].name);
    free(u->constants);
    *u = (msl_unit){0};
}

