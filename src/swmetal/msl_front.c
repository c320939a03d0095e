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

#include "msl/msl_cursor.h"
#include "swmetal/msl_front.h"

#define MAX_ATTR_ITEMS 8

typedef struct attr_item {
    char name[64];
    int arg_lo, arg_hi;          /* token range of the argument (original tokens); lo == hi: none */
} attr_item;

typedef struct attr_group {
    int start, end;              /* byte span of [[ ... ]] */
    int nitems;
    attr_item items[MAX_ATTR_ITEMS];
    int keep;                    /* only standard C++ attributes: leave in place */
} attr_group;

typedef struct edit {
    int start, end;
    char *text;                  /* NULL: blank the span */
    int order;                   /* among insertions at one position: -1 outermost opening, +1 outermost closing */
    int seq;                     /* creation order (ties) */
    int anchor;                  /* a zero-length mark, no text: 2k+1 (2k+2) records where
                                    kernel k's instantiation starts (ends) in the output */
} edit;

typedef struct kernel_template {
    char *name;                  /* unqualified function name */
    msl_kernel k;                /* bindings and position; host_name/callee unused */
} kernel_template;

typedef struct front {
    msl_lexed lx;                /* original tokens */
    msl_lexed c;                 /* a view of lx with each [[...]] group one token; c.match strict */
    char *ns_brace;              /* per token of c: 1 if this '{' opens a namespace / extern block */
    char *space_qual;            /* per token of c: 1 if an address space qualifying a member function */
    struct fn_ref {
        int body;                /* tk index of a kernel body's '{' */
        char *qname;             /* ::ns::f */
        char *ref;               /* &::ns::f or &::ns::f<T, N> (usable inside the body), NULL if none */
    } *fn_refs;
    int nfn_refs;
    char **vec_aliases;          /* names declared as vector types: using X = vec<T, 2>; typedef float4 X; */
    int nvec_aliases;
    attr_group *attrs;
    int nattrs;
    edit *edits;
    int nedits, capedits;
    kernel_template *templates;
    int ntemplates;
    msl_unit *u;
    char *err;
} front;

/* ---------------------------------------------------------------- helpers */

/* Shorthands over the shared token layer (msl/msl_cursor.h), on the collapsed tokens. */
static const char *tk_text(const front *f, int i) { return msl_tok_text(&f->c, i); }
static int tk_is(const front *f, int i, const char *s) { return msl_tok_is(&f->c, i, s); }
static int tk_ident(const front *f, int i) { return msl_tok_ident(&f->c, i); }
static char *tk_dup(const front *f, int i) { return msl_tok_dup(&f->c, i); }
static char *tk_range_dup(const front *f, int a, int b) { return msl_tok_span_dup(&f->c, a, b); }

/* An error at token i of f->c (msl_error_at: past the end, the last token).  The
 * first error is the one reported.  Returns -1. */
static int fail(front *f, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(front *f, int i, const char *fmt, ...) {
    if (f->err) return -1;
    va_list ap;
    va_start(ap, fmt);
    f->err = msl_verror_at(&f->c, i, fmt, ap);
    va_end(ap);
    return -1;
}

static int add_edit(front *f, int start, int end, char *text) {
    if (f->nedits == f->capedits) {
        int cap = f->capedits ? f->capedits * 2 : 64;
        edit *e = realloc(f->edits, sizeof *e * (size_t)cap);
        if (!e) {
            free(text);
            return fail(f, -1, "out of memory");
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
static int mark_instantiation(front *f, int first, int last) {
    int k = f->u->nkernels - 1;
    int lo = f->c.toks[first].start, hi = f->c.toks[last].start + f->c.toks[last].len;
    if (add_edit(f, lo, lo, NULL)) return -1;
    f->edits[f->nedits - 1].anchor = 2 * k + 1;
    f->edits[f->nedits - 1].order = -1000;
    if (add_edit(f, hi, hi, NULL)) return -1;
    f->edits[f->nedits - 1].anchor = 2 * k + 2;
    f->edits[f->nedits - 1].order = -1000;
    return 0;
}

static void blank_tok(front *f, int i) { add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, NULL); }

/* Parses an integer literal, optionally parenthesised, from original tokens [lo, hi). */
static int parse_int_arg(const front *f, int lo, int hi, long *out) {
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
static char *parse_string_arg(const front *f, int lo, int hi) {
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

static int is_standard_attr(const char *name) {
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
        if (!is_standard_attr(it->name)) g->keep = 0;
        if (p < k && !msl_tok_is(lx, p, ",")) {
            f->err = msl_error_at(lx, p, "expected ',' or ']]' in attribute list");
            return -1;
        }
        p++;
    }
    return k + 1;
}

static const attr_item *find_attr(const front *f, int tk_index, const char *name) {
    if (f->c.toks[tk_index].kind != MSL_TK_ATTR) return NULL;
    const attr_group *g = &f->attrs[f->c.toks[tk_index].attr];
    for (int i = 0; i < g->nitems; i++)
        if (strcmp(g->items[i].name, name) == 0) return &g->items[i];
    return NULL;
}

/* Builds f->c from the original tokens, one MSL_TK_ATTR per [[...]] group. */
static int collapse_attrs(front *f) {
    if (msl_lexed_view(&f->lx, &f->c)) return fail(f, -1, "out of memory");
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
            if (!f->attrs[t.attr].keep) add_edit(f, t.start, t.start + t.len, NULL);
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
        if (!err) return fail(f, -1, "out of memory");
        if (!f->err) f->err = err;
        else free(err);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------- kernel params */

typedef struct attr_name_map {
    const char *name;
    int attr;
} attr_name_map;

static const attr_name_map id_attrs[] = {
    {"thread_position_in_grid", SW_ATTR_THREAD_POSITION_IN_GRID},
    {"thread_position_in_threadgroup", SW_ATTR_THREAD_POSITION_IN_THREADGROUP},
    {"threadgroup_position_in_grid", SW_ATTR_THREADGROUP_POSITION_IN_GRID},
    {"threads_per_threadgroup", SW_ATTR_THREADS_PER_THREADGROUP},
    {"dispatch_threads_per_threadgroup", SW_ATTR_THREADS_PER_THREADGROUP},
    {"threadgroups_per_grid", SW_ATTR_THREADGROUPS_PER_GRID},
    {"threads_per_grid", SW_ATTR_THREADS_PER_GRID},
    {"thread_index_in_threadgroup", SW_ATTR_THREAD_INDEX_IN_THREADGROUP},
    {"simdgroup_index_in_threadgroup", SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP},
    {"thread_index_in_simdgroup", SW_ATTR_THREAD_INDEX_IN_SIMDGROUP},
    {"simdgroups_per_threadgroup", SW_ATTR_SIMDGROUPS_PER_THREADGROUP},
    {"dispatch_simdgroups_per_threadgroup", SW_ATTR_SIMDGROUPS_PER_THREADGROUP},
    {"threads_per_simdgroup", SW_ATTR_THREADS_PER_SIMDGROUP},
    {"thread_execution_width", SW_ATTR_THREAD_EXECUTION_WIDTH},
    {"thread_index_in_quadgroup", SW_ATTR_THREAD_INDEX_IN_QUADGROUP},
    {"quadgroup_index_in_threadgroup", SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP},
    {"quadgroups_per_threadgroup", SW_ATTR_QUADGROUPS_PER_THREADGROUP},
    {"dispatch_quadgroups_per_threadgroup", SW_ATTR_QUADGROUPS_PER_THREADGROUP},
    {NULL, 0},
};

/* One parameter in tk [a, b).  Appends its binding to k. */
static int parse_param(front *f, int a, int b, msl_kernel *k) {
    int first_attr = -1;
    for (int i = a; i < b; i++) {
        if (f->c.toks[i].kind == MSL_TK_ATTR) {
            first_attr = i;
            break;
        }
        if (f->c.match[i] > i) i = f->c.match[i];
    }
    int name = -1;
    for (int i = (first_attr >= 0 ? first_attr : b) - 1; i >= a; i--) {
        if (tk_is(f, i, "]") && f->c.match[i] >= a) {
            i = f->c.match[i];
            continue;
        }
        if (tk_ident(f, i)) name = i;
        break;
    }
    char *pname = name >= 0 ? tk_dup(f, name) : strdup("(unnamed)");
    if (!pname) return fail(f, a, "out of memory");
    msl_binding bind = {0, -1, pname, f->c.toks[name >= 0 ? name : a].line};
    for (int i = first_attr < 0 ? b : first_attr; i < b; i++) {
        if (f->c.toks[i].kind != MSL_TK_ATTR) continue;
        const attr_group *g = &f->attrs[f->c.toks[i].attr];
        for (int j = 0; j < g->nitems; j++) {
            const attr_item *it = &g->items[j];
            int kind = 0, index = -1;
            if (strcmp(it->name, "buffer") == 0 || strcmp(it->name, "threadgroup") == 0) {
                long v;
                kind = it->name[0] == 'b' ? SW_BIND_BUFFER : SW_BIND_THREADGROUP;
                if (parse_int_arg(f, it->arg_lo, it->arg_hi, &v) || v < 0 ||
                    v >= (kind == SW_BIND_BUFFER ? SW_MAX_BUFFERS : SW_MAX_TG_PARAMS)) {
                    fail(f, i, "[[%s(n)]] of parameter '%s' needs an index literal in 0..30", it->name, pname);
                    free(pname);
                    return -1;
                }
                index = (int)v;
            } else if (strcmp(it->name, "function_constant") == 0 || is_standard_attr(it->name)) {
                continue;   /* optional binding: the buffer is simply unbound when the constant is false */
            } else {
                for (const attr_name_map *m = id_attrs; m->name; m++)
                    if (strcmp(m->name, it->name) == 0) kind = SW_BIND_ATTR, index = m->attr;
                if (!kind) {
                    fail(f, i, "unknown attribute '%s' on kernel parameter '%s'", it->name, pname);
                    free(pname);
                    return -1;
                }
            }
            if (bind.kind) {
                fail(f, i, "kernel parameter '%s' has two binding attributes (second: '%s')", pname, it->name);
                free(pname);
                return -1;
            }
            bind.kind = kind;
            bind.index = index;
        }
    }
    if (!bind.kind) {
        /* no [[buffer(n)]]: Metal gives the parameter the next free index (parse_params);
         * a threadgroup pointer takes a threadgroup index */
        bind.kind = SW_BIND_BUFFER;
        for (int i = a; i < (first_attr < 0 ? b : first_attr); i++)
            if (tk_is(f, i, "threadgroup")) bind.kind = SW_BIND_THREADGROUP;
    }
    msl_binding *nb = realloc(k->bindings, sizeof *nb * (size_t)(k->nbindings + 1));
    if (!nb) {
        free(pname);
        return fail(f, a, "out of memory");
    }
    k->bindings = nb;
    k->bindings[k->nbindings++] = bind;
    return 0;
}

/* Parameters inside the parenthesis group starting at tk[lp]. */
static int parse_params(front *f, int lp, msl_kernel *k) {
    int rp = f->c.match[lp];
    if (rp == lp + 1 || (rp == lp + 2 && tk_is(f, lp + 1, "void"))) return 0;
    for (int a = lp + 1;;) {
        int e = msl_list_item_end(&f->c, a, rp);
        if (parse_param(f, a, e, k)) return -1;
        if (e >= rp) break;
        a = e + 1;
    }
    /* parameters without an index take the lowest free ones, in order */
    for (int j = 0; j < k->nbindings; j++) {
        msl_binding *bj = &k->bindings[j];
        if (bj->kind == SW_BIND_ATTR || bj->index >= 0) continue;
        int limit = bj->kind == SW_BIND_BUFFER ? SW_MAX_BUFFERS : SW_MAX_TG_PARAMS;
        for (int idx = 0; idx < limit && bj->index < 0; idx++) {
            int used = 0;
            for (int m = 0; m < k->nbindings && !used; m++)
                used = m != j && k->bindings[m].kind == bj->kind && k->bindings[m].index == idx;
            if (!used) bj->index = idx;
        }
        if (bj->index < 0)
            return fail(f, lp, "kernel parameter '%s' gets no index: more than 31 buffer (or threadgroup) parameters",
                        bj->param);
    }
    return 0;
}

/* -------------------------------------------------------- kernel records */

static void kernel_free(msl_kernel *k) {
    free(k->host_name);
    free(k->callee);
    free(k->file);
    for (int i = 0; i < k->nbindings; i++) free(k->bindings[i].param);
    free(k->bindings);
    *k = (msl_kernel){0};
}

static int copy_bindings(msl_kernel *dst, const msl_kernel *src) {
    if (src->nbindings == 0) return 0;
    dst->bindings = calloc((size_t)src->nbindings, sizeof *dst->bindings);
    if (!dst->bindings) return -1;
    for (int i = 0; i < src->nbindings; i++) {
        dst->bindings[i] = src->bindings[i];
        dst->bindings[i].param = strdup(src->bindings[i].param);
        if (!dst->bindings[i].param) return -1;
        dst->nbindings = i + 1;
    }
    return 0;
}

static int add_kernel(front *f, int at, msl_kernel *k) {
    for (int i = 0; i < f->u->nkernels; i++) {
        if (strcmp(f->u->kernels[i].host_name, k->host_name) == 0) {
            fail(f, at, "two kernels named '%s' (the first at line %d)", k->host_name, f->u->kernels[i].line);
            kernel_free(k);
            return -1;
        }
    }
    msl_kernel *nk = realloc(f->u->kernels, sizeof *nk * (size_t)(f->u->nkernels + 1));
    if (!nk) {
        kernel_free(k);
        return fail(f, at, "out of memory");
    }
    f->u->kernels = nk;
    f->u->kernels[f->u->nkernels++] = *k;
    *k = (msl_kernel){0};
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
    if (parse_int_arg(e->f, e->p, e->p + 1, &v) != 0) {
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

static int rewrite_function_constant(front *f, int ds, int end, int at) {
    const attr_item *it = find_attr(f, at, "function_constant");
    long index;
    if (eval_int_expr(f, it->arg_lo, it->arg_hi, &index) || index < 0 || index > 65535)
        return fail(f, at,
                    "[[function_constant(n)]] needs an index in 0..65535 (a literal or an expression of literals)");
    int name = at - 1;
    int c = ds;
    while (c < name && !tk_is(f, c, "constant")) c++;
    if (!tk_ident(f, name) || c + 1 >= name)
        return fail(f, at, "expected 'constant TYPE NAME [[function_constant(n)]];'");
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
        return fail(f, at, "out of memory");
    }
    int fctype = msl_fc_type_from_name(type, strlen(type));
    if (!fctype) {
        fail(f, c + 1, "function constant '%s' has type '%s'; supported: bool, int, uint, short, ushort, float, half",
             nm, type);
        free(type);
        free(nm);
        return -1;
    }
    if (at + 1 != end) {
        free(type);
        free(nm);
        return fail(f, at + 1, "expected ';' after [[function_constant(n)]]");
    }
    for (int i = 0; i < f->u->nconstants; i++) {
        if (f->u->constants[i].index == index || strcmp(f->u->constants[i].name, nm) == 0) {
            fail(f, name, "function constant '%s' repeats the name or index of '%s'", nm, f->u->constants[i].name);
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
        return fail(f, at, "out of memory");
    }
    f->u->constants = nc;
    f->u->constants[f->u->nconstants++] = (msl_constant){nm, (int)index, fctype, 0};
    return add_edit(f, f->c.toks[ds].start, f->c.toks[end].start + f->c.toks[end].len, repl);
}

/* ------------------------------------------------- namespace-scope walk */

/* Index of the function name before the parameter '(' at tk[lp] and, through
 * *name_start, the first token of a qualified / template-id name. */
static int function_name_before(const front *f, int lp, int lo, int *name_start) {
    int i = lp - 1;
    if (tk_is(f, i, ">")) {
        int depth = 0;
        for (; i >= lo; i--) {
            if (tk_is(f, i, ">")) depth++;
            else if (tk_is(f, i, "<") && --depth == 0) break;
            else if (tk_is(f, i, ")") || tk_is(f, i, "]")) i = f->c.match[i];
        }
        i--;
    }
    if (!tk_ident(f, i)) return -1;
    int name = i;
    while (tk_is(f, i - 1, "::") && tk_ident(f, i - 2)) i -= 2;
    if (tk_is(f, i - 1, "::")) i--;
    *name_start = i;
    return name;
}

static char *join_prefix(const char *ns, const char *name) {
    msl_buf b = {0};
    if (name[0] != ':') msl_buf_puts(&b, ns);
    msl_buf_puts(&b, name);
    return msl_buf_take(&b);
}

/* `*static_cast<void (*)(PARAMS)>(&callee)`: the specialization of template callee
 * whose parameters are those of tk[lp]'s list (attributes dropped), as an
 * expression that `&` turns into its address.  Malloc'd, NULL when out of memory. */
static char *instance_by_signature(const front *f, int lp, const char *callee) {
    msl_buf b = {0};
    msl_buf_puts(&b, "*static_cast<void (*)(");
    for (int j = lp + 1; j < f->c.match[lp]; j++) {
        if (f->c.toks[j].kind == MSL_TK_ATTR) continue;
        msl_buf_put(&b, tk_text(f, j), (size_t)f->c.toks[j].len);
        msl_buf_puts(&b, " ");
    }
    msl_buf_printf(&b, ")>(&%s)", callee);
    return msl_buf_take(&b);
}

/* A kernel definition's body: how its threadgroup variables name the kernel (see
 * rewrite_threadgroup_decl): &::ns::f, or &::ns::f<T, N, Ts...> for a template
 * whose header is tk[ds + 1 ..] (every parameter named, else no reference). */
static int record_kernel_body(front *f, int ds, int k, int body, int name, const char *ns) {
    char *base = tk_dup(f, name);
    char *qname = base ? join_prefix(ns, base) : NULL;
    free(base);
    if (!qname) return fail(f, name, "out of memory");
    msl_buf rb = {0};
    msl_buf_printf(&rb, "&%s", qname);
    int ok = 1;
    if (tk_is(f, ds, "template") && tk_is(f, ds + 1, "<")) {
        int close = k - 1; /* the header's '>' */
        msl_buf_puts(&rb, "<");
        int a = ds + 2, first = 1;
        for (int j = ds + 2; j <= close && ok; j++) {
            if (f->c.match[j] > j) {
                j = f->c.match[j];
                continue;
            }
            if (tk_is(f, j, "<")) {
                int after = msl_skip_angles(&f->c, j, close);
                if (after > 0) j = after - 1;
                continue;
            }
            if (j < close && !tk_is(f, j, ",")) continue;
            /* parameter [a, j): its name is the last identifier before any '=' */
            int nm = -1, pack = 0;
            for (int t = a; t < j && !tk_is(f, t, "="); t++) {
                if (tk_ident(f, t) && !tk_is(f, t, "typename") && !tk_is(f, t, "class")) nm = t;
                if (tk_is(f, t, ".") && tk_is(f, t + 1, ".") && tk_is(f, t + 2, ".")) pack = 1;
            }
            if (nm < 0) ok = 0;
            else msl_buf_printf(&rb, "%s%.*s%s", first ? "" : ", ", f->c.toks[nm].len, tk_text(f, nm), pack ? "..." : "");
            first = 0;
            a = j + 1;
        }
        msl_buf_puts(&rb, ">");
    }
    char *ref = msl_buf_take(&rb);
    if (!ok) {
        free(ref);
        ref = NULL;
    }
    struct fn_ref *nr = realloc(f->fn_refs, sizeof *nr * (size_t)(f->nfn_refs + 1));
    if (!nr) {
        free(qname);
        free(ref);
        return fail(f, name, "out of memory");
    }
    f->fn_refs = nr;
    f->fn_refs[f->nfn_refs++] = (struct fn_ref){body, qname, ref};
    return 0;
}

static int process_decl(front *f, int ds, int end, int body, const char *ns) {
    int k = ds;
    while (k < end && f->c.toks[k].kind == MSL_TK_DIRECTIVE) k++;
    if (k >= end) return 0;
    int is_template = 0, is_inst = 0, first = k;
    if (tk_is(f, k, "template")) {
        if (tk_is(f, k + 1, "<")) {
            int after = msl_skip_angles(&f->c, k + 1, end);
            if (after < 0) return 0;
            k = after;
            is_template = 1;
        } else {
            is_inst = 1;
            k++;
        }
    }
    int kernel = 0, fc_at = -1, lp = -1, decltype_at = -1;
    const attr_item *host = NULL;
    for (int i = k; i < end; i++) {
        if (f->c.toks[i].kind == MSL_TK_ATTR) {
            if (find_attr(f, i, "kernel")) kernel = 1;
            if (find_attr(f, i, "host_name")) host = find_attr(f, i, "host_name");
            if (find_attr(f, i, "function_constant")) fc_at = i;
            continue;
        }
        if (tk_is(f, i, "kernel")) {
            kernel = 1;
            blank_tok(f, i);
        }
        if (tk_is(f, i, "decltype") && decltype_at < 0) decltype_at = i;
        if (tk_is(f, i, "(") && lp < 0 && !tk_is(f, i - 1, "decltype")) lp = i;
        if (f->c.match[i] > i) i = f->c.match[i];
    }
    if (fc_at >= 0) return rewrite_function_constant(f, ds, end, fc_at);
    if (!kernel && !(is_inst && host)) return 0;

    msl_kernel kr = {0};
    kr.line = f->c.toks[k].line;
    kr.file = strdup(f->lx.files[f->c.toks[k].file]);
    if (!kr.file) return fail(f, k, "out of memory");
    if (host) {
        kr.host_name = parse_string_arg(f, host->arg_lo, host->arg_hi);
        if (!kr.host_name || !kr.host_name[0]) {
            kernel_free(&kr);
            return fail(f, k, "[[host_name(...)]] needs a string literal");
        }
    }
    int typedef_form = -1;
    if (is_inst && decltype_at < 0 && lp < 0 && tk_is(f, end - 1, ">")) {
        /* template [[host_name("x")]] kernel kernel_t f<A, B>;  (kernel_t: a typedef'd
         * function type, as ggml writes them): the template-id that ends the declaration */
        int depth = 0, j = end - 1;
        for (; j > k; j--) {
            if (tk_is(f, j, ">")) depth++;
            else if (tk_is(f, j, "<") && --depth == 0) break;
            else if (tk_is(f, j, ")") || tk_is(f, j, "]")) j = f->c.match[j];
        }
        if (j > k && tk_ident(f, j - 1)) {
            typedef_form = j - 1;
            while (tk_is(f, typedef_form - 1, "::") && tk_ident(f, typedef_form - 2)) typedef_form -= 2;
        }
    }
    if (is_inst && (decltype_at >= 0 || typedef_form >= 0)) {
        /* template [[host_name("x")]] [[kernel]] decltype(f<T, 64>) f<T, 64>; */
        int after = decltype_at >= 0 ? f->c.match[decltype_at + 1] + 1 : typedef_form;
        if (after >= end) {
            kernel_free(&kr);
            return fail(f, decltype_at, "expected the instantiated function after decltype(...)");
        }
        char *text = tk_range_dup(f, after, end - 1);
        kr.callee = text ? join_prefix(ns, text) : NULL;
        free(text);
        int base = after;
        for (int i = after; i < end && !tk_is(f, i, "<"); i++)
            if (tk_ident(f, i)) base = i;
        const kernel_template *tpl = NULL;
        for (int i = 0; i < f->ntemplates; i++)
            if ((size_t)f->c.toks[base].len == strlen(f->templates[i].name) &&
                memcmp(tk_text(f, base), f->templates[i].name, (size_t)f->c.toks[base].len) == 0)
                tpl = &f->templates[i];
        if (!tpl) {
            char *bn = tk_dup(f, base);
            fail(f, base, "no kernel template named '%s' is defined before this instantiation", bn);
            free(bn);
            kernel_free(&kr);
            return -1;
        }
        if (!kr.callee || copy_bindings(&kr, &tpl->k)) {
            kernel_free(&kr);
            return fail(f, k, "out of memory");
        }
        if (!kr.host_name) kr.host_name = tk_range_dup(f, after, end - 1);
        if (add_kernel(f, k, &kr)) return -1;
        return mark_instantiation(f, first, tk_is(f, end, ";") ? end : end - 1);
    }
    if (lp < 0) {
        kernel_free(&kr);
        return fail(f, k, "expected a kernel function declaration");
    }
    int name_start, name = function_name_before(f, lp, k, &name_start);
    if (name < 0) {
        kernel_free(&kr);
        return fail(f, lp, "expected the kernel's name before '('");
    }
    if (parse_params(f, lp, &kr)) {
        kernel_free(&kr);
        return -1;
    }
    if (is_inst) {
        /* older MLX style: template [[host_name("x")]] [[kernel]] void f<T>(params...); */
        char *text = tk_range_dup(f, name_start, lp - 1);
        kr.callee = text ? join_prefix(ns, text) : NULL;
        free(text);
        if (kr.callee && !tk_is(f, lp - 1, ">")) {
            /* no template arguments (`template [[kernel]] void f(const device float *x, ...);`):
             * deduced from the signature, as the address of f converted to its type */
            char *named = instance_by_signature(f, lp, kr.callee);
            free(kr.callee);
            kr.callee = named;
        }
        if (!kr.host_name) kr.host_name = tk_range_dup(f, name_start, lp - 1);
        if (!kr.callee || !kr.host_name) {
            kernel_free(&kr);
            return fail(f, k, "out of memory");
        }
        if (add_kernel(f, k, &kr)) return -1;
        return mark_instantiation(f, first, tk_is(f, end, ";") ? end : end - 1);
    }
    if (body < 0) {
        kernel_free(&kr);   /* a prototype: the definition is the one that counts */
        return 0;
    }
    if (record_kernel_body(f, ds, k, body, name, ns)) {
        kernel_free(&kr);
        return -1;
    }
    if (is_template) {
        kernel_template *t = realloc(f->templates, sizeof *t * (size_t)(f->ntemplates + 1));
        if (!t) {
            kernel_free(&kr);
            return fail(f, k, "out of memory");
        }
        f->templates = t;
        t[f->ntemplates].name = tk_dup(f, name);
        t[f->ntemplates].k = kr;
        f->ntemplates++;
        return 0;
    }
    char *fname = tk_dup(f, name);
    kr.callee = fname ? join_prefix(ns, fname) : NULL;
    if (!kr.host_name) kr.host_name = fname;
    else free(fname);
    if (!kr.callee || !kr.host_name) {
        kernel_free(&kr);
        return fail(f, k, "out of memory");
    }
    return add_kernel(f, k, &kr);
}

/* One declaration from tk[i]: through ';', or through a function body's '}'.
 * *body: the body's '{' or -1; *class_body: the '{' of a class defined in it or -1. */
static void decl_extent(const front *f, int i, int hi, int *body, int *end, int *class_body) {
    int saw_eq = 0, saw_class = 0, had_paren = 0, j = i;
    *body = *end = *class_body = -1;
    if (tk_is(f, j, "template") && tk_is(f, j + 1, "<")) {
        int after = msl_skip_angles(&f->c, j + 1, hi);
        if (after > 0) j = after;
    }
    for (; j < hi; j++) {
        if (tk_is(f, j, ";")) {
            *end = j;
            break;
        }
        if (tk_is(f, j, "{")) {
            if (!saw_eq && !saw_class && had_paren) {
                *body = j;
                *end = f->c.match[j];
                break;
            }
            if (saw_class && !saw_eq && *class_body < 0) *class_body = j;
            j = f->c.match[j];
            continue;
        }
        if (tk_is(f, j, "(") || tk_is(f, j, "[")) {
            had_paren |= tk_is(f, j, "(");
            j = f->c.match[j];
            continue;
        }
        if (tk_is(f, j, "=")) saw_eq = 1;
        if (tk_is(f, j, "struct") || tk_is(f, j, "class") || tk_is(f, j, "union") || tk_is(f, j, "enum"))
            saw_class = 1;
    }
    if (*end < 0) *end = hi - 1;
}

/* ------------------------------------------ address-space member qualifiers */

static int is_space_word(const front *f, int i) {
    return tk_is(f, i, "device") || tk_is(f, i, "threadgroup") || tk_is(f, i, "constant") || tk_is(f, i, "thread") ||
           tk_is(f, i, "threadgroup_imageblock");
}

/* tk[i] is ')'.  When what follows is a member function's qualifier list naming an
 * address space (`) const device {`, `) threadgroup :`), returns the index just
 * past that list, else -1. */
static int method_space_quals_end(const front *f, int i) {
    int j = i + 1, spaces = 0;
    while (tk_is(f, j, "const") || tk_is(f, j, "volatile") || is_space_word(f, j)) spaces += is_space_word(f, j++);
    if (!spaces || j >= f->c.ntoks) return -1;
    int open = f->c.match[i];
    if (open > 0 && (tk_is(f, open - 1, "decltype") || tk_is(f, open - 1, "alignas") || tk_is(f, open - 1, "(") ||
                     tk_is(f, open - 1, "sizeof") || tk_is(f, open - 1, "alignof") || tk_is(f, open - 1, "coherent")))
        return -1;
    if (f->c.toks[j].kind == MSL_TK_ATTR || tk_is(f, j, "{") || tk_is(f, j, ":") || tk_is(f, j, ";") ||
        tk_is(f, j, "=") || tk_is(f, j, "&") || tk_is(f, j, "&&") || tk_is(f, j, "->") || tk_is(f, j, "noexcept") ||
        tk_is(f, j, "override") || tk_is(f, j, "final"))
        return j;
    return -1;
}

/* `coherent(device)` (MSL 3.2: writes visible across threadgroups): every access
 * here is to plain shared memory, so the qualifier says nothing more. */
static void strip_coherent(front *f) {
    for (int i = 0; i + 1 < f->c.ntoks; i++)
        if (tk_is(f, i, "coherent") && tk_is(f, i + 1, "(") && f->c.match[i + 1] > 0 && !tk_is(f, i - 1, ".") &&
            !tk_is(f, i - 1, "->"))
            add_edit(f, f->c.toks[i].start, f->c.toks[f->c.match[i + 1]].start + 1, NULL);
}

/* What the software device cannot provide stops the compile with one line that
 * says so: textures and samplers, render stages. */
static int reject_unsupported(front *f) {
    static const char *textures[] = {"texture1d", "texture1d_array", "texture2d", "texture2d_array", "texture2d_ms",
                                     "texture2d_ms_array", "texture3d", "texturecube", "texturecube_array",
                                     "texture_buffer", "depth2d", "depth2d_array", "depth2d_ms", "depth2d_ms_array",
                                     "depthcube", "depthcube_array", NULL};
    for (int i = 0; i < f->c.ntoks; i++) {
        if (f->c.toks[i].kind == MSL_TK_ATTR) {
            static const char *stages[] = {"vertex", "fragment", "stage_in", "mesh", "object", NULL};
            for (int s = 0; stages[s]; s++)
                if (find_attr(f, i, stages[s]))
                    return fail(f, i,
                                "not supported by the software Metal device: render stages ([[%s]]); it runs "
                                "compute kernels only",
                                stages[s]);
            continue;
        }
        if (!tk_ident(f, i) || tk_is(f, i - 1, ".") || tk_is(f, i - 1, "->")) continue;
        if (tk_is(f, i + 1, "<")) {
            for (int t = 0; textures[t]; t++)
                if (tk_is(f, i, textures[t]))
                    return fail(f, i, "not supported by the software Metal device: textures (%s<...>)", textures[t]);
        }
        if ((tk_is(f, i, "sampler") && tk_ident(f, i + 1)) ||
            ((tk_is(f, i, "vertex") || tk_is(f, i, "fragment")) && tk_ident(f, i + 1) &&
             (i == 0 || tk_is(f, i - 1, ";") || tk_is(f, i - 1, "}") || f->c.toks[i - 1].kind == MSL_TK_DIRECTIVE))) {
            return fail(f, i, "not supported by the software Metal device: %s",
                        tk_is(f, i, "sampler") ? "samplers (textures)"
                                               : "render stages (vertex and fragment functions)");
        }
    }
    return 0;
}

/* C++ has no member functions qualified by an address space: the qualifier is
 * removed everywhere (an unqualified member function accepts objects in every
 * address space here; see prelude/metal_stdlib.h). */
static int strip_method_spaces(front *f) {
    f->space_qual = calloc((size_t)f->c.ntoks + 1, 1);
    if (!f->space_qual) return fail(f, -1, "out of memory");
    for (int i = 0; i < f->c.ntoks; i++) {
        if (!tk_is(f, i, ")")) continue;
        int end = method_space_quals_end(f, i);
        for (int j = i + 1; j < end; j++) {
            if (!is_space_word(f, j)) continue;
            f->space_qual[j] = 1;
            blank_tok(f, j);
        }
    }
    return f->err ? -1 : 0;
}

/* The members of a class body tk [lo, hi): variants of one member function that
 * differed only in the address space of `this` coincide once it is removed; one
 * is kept when they are the same token for token (MLX declares identical
 * thread/threadgroup/device/constant variants), else the compiler reports the
 * redeclaration.  Nested class bodies are visited too. */
static int dedupe_members(front *f, int lo, int hi) {
    char **keys = NULL;
    int nkeys = 0, i = lo;
    while (i < hi && !f->err) {
        if (f->c.toks[i].kind == MSL_TK_DIRECTIVE || tk_is(f, i, ";")) {
            i++;
            continue;
        }
        if ((tk_is(f, i, "public") || tk_is(f, i, "private") || tk_is(f, i, "protected")) && tk_is(f, i + 1, ":")) {
            i += 2;
            continue;
        }
        int body, end, class_body;
        decl_extent(f, i, hi, &body, &end, &class_body);
        if (class_body >= 0 && dedupe_members(f, class_body + 1, f->c.match[class_body])) break;
        int qualified = 0;
        for (int j = i; j <= end && !qualified; j++) qualified = f->space_qual[j];
        if (qualified) {
            msl_buf kb = {0};
            for (int j = i; j <= end; j++) {
                if (f->space_qual[j]) continue;
                msl_buf_put(&kb, tk_text(f, j), (size_t)f->c.toks[j].len);
                msl_buf_put(&kb, " ", 1);
            }
            char *key = msl_buf_take(&kb);
            char **nk = realloc(keys, sizeof *keys * (size_t)(nkeys + 1));
            if (!key || !nk) {
                free(key);
                if (nk) keys = nk;
                fail(f, i, "out of memory");
                break;
            }
            keys = nk;
            int dup = 0;
            for (int k = 0; k < nkeys && !dup; k++) dup = strcmp(keys[k], key) == 0;
            if (dup) {
                free(key);
                add_edit(f, f->c.toks[i].start, f->c.toks[end].start + f->c.toks[end].len, NULL);
            } else {
                keys[nkeys++] = key;
            }
        }
        i = end + 1;
    }
    for (int k = 0; k < nkeys; k++) free(keys[k]);
    free(keys);
    return f->err ? -1 : 0;
}

static int walk_ns(front *f, int lo, int hi, const char *ns) {
    int i = lo;
    while (i < hi && !f->err) {
        int ds = i;
        if (f->c.toks[i].kind == MSL_TK_DIRECTIVE || tk_is(f, i, ";")) {
            i++;
            continue;
        }
        int j = i;
        if (tk_is(f, j, "inline") && tk_is(f, j + 1, "namespace")) j++;
        if (tk_is(f, j, "namespace")) {
            msl_buf nb = {0};
            msl_buf_puts(&nb, ns);
            j++;
            while (tk_ident(f, j) || tk_is(f, j, "::")) {
                msl_buf_put(&nb, tk_text(f, j), (size_t)f->c.toks[j].len);
                j++;
            }
            if (tk_is(f, j, "{")) {
                if (j > i + 1 && !tk_is(f, j - 1, "::")) msl_buf_puts(&nb, "::");
                char *inner = msl_buf_take(&nb);
                if (!inner) return fail(f, j, "out of memory");
                f->ns_brace[j] = 1;
                /* anonymous namespace members are reachable unqualified from the file */
                int r = walk_ns(f, j + 1, f->c.match[j], tk_is(f, j - 1, "namespace") ? ns : inner);
                free(inner);
                if (r) return -1;
                i = f->c.match[j] + 1;
                continue;
            }
            free(msl_buf_take(&nb));
        }
        if (tk_is(f, i, "extern") && i + 2 < hi && f->c.toks[i + 1].kind == MSL_TK_STRING && tk_is(f, i + 2, "{")) {
            f->ns_brace[i + 2] = 1;
            if (walk_ns(f, i + 3, f->c.match[i + 2], ns)) return -1;
            i = f->c.match[i + 2] + 1;
            continue;
        }
        int body, end, class_body;
        decl_extent(f, i, hi, &body, &end, &class_body);
        if (class_body >= 0 && dedupe_members(f, class_body + 1, f->c.match[class_body])) return -1;
        if (process_decl(f, ds, body >= 0 ? body : end, body, ns)) return -1;
        i = end + 1;
    }
    return f->err ? -1 : 0;
}

/* ---------------------------------------------- function-scope threadgroup */

/* tk[i] is `threadgroup` at the start of a statement inside a function. */
static int rewrite_threadgroup_decl(front *f, int i, const char *kernel_ref) {
    int angle = 0, first = -1, j;
    for (j = i + 1; j < f->c.ntoks; j++) {
        if (tk_is(f, j, ";") || tk_is(f, j, "{") || tk_is(f, j, "}")) return 0;
        if ((tk_is(f, j, "alignas") || tk_is(f, j, "__attribute__")) && tk_is(f, j + 1, "(")) {
            j = f->c.match[j + 1];   /* the arena aligns to 16 bytes; larger alignments are not kept */
            continue;
        }
        if (tk_is(f, j, "(") && angle == 0) return 0;   /* not a plain variable */
        if ((tk_is(f, j, "*") || tk_is(f, j, "&")) && angle == 0) return 0; /* pointer / reference */
        if (tk_is(f, j, "<")) angle++;
        else if (tk_is(f, j, ">")) angle--;
        else if (f->c.match[j] > j) {
            j = f->c.match[j];
            continue;
        }
        if (tk_ident(f, j) && angle == 0 &&
            (tk_is(f, j + 1, "[") || tk_is(f, j + 1, ",") || tk_is(f, j + 1, ";") || tk_is(f, j + 1, "="))) {
            first = j;
            break;
        }
    }
    if (first < 0 || first == i + 1) return 0;
    /* the type as written, minus alignment specifiers */
    msl_buf tb = {0};
    int pos = f->c.toks[i + 1].start;
    for (int t = i + 1; t < first; t++) {
        if ((tk_is(f, t, "alignas") || tk_is(f, t, "__attribute__")) && tk_is(f, t + 1, "(")) {
            msl_buf_put(&tb, f->lx.text + pos, (size_t)(f->c.toks[t].start - pos));
            t = f->c.match[t + 1];
            pos = f->c.toks[t].start + 1;
        }
    }
    msl_buf_put(&tb, f->lx.text + pos, (size_t)(f->c.toks[first - 1].start + f->c.toks[first - 1].len - pos));
    char *type = msl_buf_take(&tb);
    if (!type) return fail(f, i, "out of memory");
    msl_buf out = {0};
    int d = first, end = -1;
    while (d < f->c.ntoks) {
        char *name = tk_dup(f, d);
        int k = d + 1;
        while (tk_is(f, k, "[")) k = f->c.match[k] + 1;
        char *dims = k > d + 1 ? tk_range_dup(f, d + 1, k - 1) : strdup("");
        while ((tk_is(f, k, "alignas") || tk_is(f, k, "__attribute__")) && tk_is(f, k + 1, "("))
            k = f->c.match[k + 1] + 1;
        if (!name || !dims) {
            free(name);
            free(dims);
            break;
        }
        char *init = NULL;
        if (tk_is(f, k, "=") || tk_is(f, k, "{")) {
            /* `threadgroup float buf[32] = {0};`: the group's first thread to get here
             * stores the value (sw_rt_tg_alloc_init), once per threadgroup */
            int a = tk_is(f, k, "=") ? k + 1 : k, e = a;
            while (e < f->c.ntoks && !tk_is(f, e, ",") && !tk_is(f, e, ";")) e = f->c.match[e] > e ? f->c.match[e] + 1 : e + 1;
            init = tk_range_dup(f, tk_is(f, k, "=") ? k : a, e - 1);
            k = e;
        }
        msl_buf_printf(&out, "using sw_tg_v_%s = %s %s; using sw_tg_t_%s = threadgroup sw_tg_v_%s; ", name, type, dims,
                       name, name);
        if (init)
            msl_buf_printf(&out, "const sw_tg_v_%s sw_tg_i_%s %s; ", name, name, init);
        msl_buf_printf(&out,
                       "sw_tg_t_%s &%s = *(sw_tg_t_%s *)(sw_rt_tg_alloc_init(sizeof(sw_tg_t_%s), alignof(sw_tg_t_%s) "
                       "< 16 ? 16 : alignof(sw_tg_t_%s), \"%s\", %d, %s%s)); ",
                       name, name, name, name, name, name, name, f->c.toks[d].line, init ? "&sw_tg_i_" : "nullptr",
                       init ? name : "");
        /* the kernel's static threadgroup memory, for the compile command: registered
         * at load time under the kernel's address (prelude: sw::tg_static) */
        if (kernel_ref)
            msl_buf_printf(&out,
                           "(void)::sw::tg_static<%s, sizeof(sw_tg_t_%s), (alignof(sw_tg_t_%s) < 16 ? 16 : "
                           "alignof(sw_tg_t_%s)), %d>::reg; ",
                           kernel_ref, name, name, name, f->c.toks[d].start);
        free(init);
        free(name);
        free(dims);
        if (tk_is(f, k, ";")) {
            end = k;
            break;
        }
        if (!tk_is(f, k, ",") || !tk_ident(f, k + 1)) {
            fail(f, k, "unsupported threadgroup declaration: expected ', name' or ';' here");
            break;
        }
        d = k + 1;
    }
    free(type);
    char *repl = msl_buf_take(&out);
    if (end < 0 || f->err) {
        free(repl);
        return fail(f, i, "unsupported threadgroup declaration");
    }
    if (!repl) return fail(f, i, "out of memory");
    return add_edit(f, f->c.toks[i].start, f->c.toks[end].start + f->c.toks[end].len, repl);
}

/* The reference to the kernel whose body opens at tk[brace], or NULL (not a kernel
 * body, no nameable reference, or an overloaded name: &f would be ambiguous). */
static const char *kernel_ref_of(const front *f, int brace) {
    for (int k = 0; k < f->nfn_refs; k++) {
        if (f->fn_refs[k].body != brace) continue;
        for (int o = 0; o < f->nfn_refs; o++)
            if (o != k && strcmp(f->fn_refs[o].qname, f->fn_refs[k].qname) == 0) return NULL;
        return f->fn_refs[k].ref;
    }
    return NULL;
}

static int rewrite_threadgroup_decls(front *f) {
    char *kind = malloc((size_t)f->c.ntoks + 1); /* stack of open brackets: 'n' namespace brace, 'b' other brace, 'p' paren */
    if (!kind) return fail(f, -1, "out of memory");
    int sp = 0, body_depth = -1;
    const char *ref = NULL;
    for (int i = 0; i < f->c.ntoks && !f->err; i++) {
        if (tk_is(f, i, "{")) {
            if (body_depth < 0 && (ref = kernel_ref_of(f, i)) != NULL) body_depth = sp;
            kind[sp++] = f->ns_brace[i] ? 'n' : 'b';
        } else if (tk_is(f, i, "(") || tk_is(f, i, "[")) {
            kind[sp++] = 'p';
        } else if (tk_is(f, i, "}") || tk_is(f, i, ")") || tk_is(f, i, "]")) {
            sp--;
            if (sp == body_depth) body_depth = -1, ref = NULL;
        } else if (tk_is(f, i, "threadgroup") && sp > 0 && kind[sp - 1] == 'b') {
            int before = i - 1;   /* `alignas(16) threadgroup float x[n];` starts at alignas */
            if (tk_is(f, before, ")") && tk_is(f, f->c.match[before] - 1, "alignas")) before = f->c.match[before] - 2;
            if (tk_is(f, before, ";") || tk_is(f, before, "{") || tk_is(f, before, "}") ||
                f->c.toks[before].kind == MSL_TK_ATTR || f->c.toks[before].kind == MSL_TK_DIRECTIVE) {
                int start = before + 1;
                if (start != i) {
                    /* blank the leading alignas(...) and rewrite from `threadgroup` */
                    add_edit(f, f->c.toks[start].start, f->c.toks[i].start, NULL);
                }
                rewrite_threadgroup_decl(f, i, body_depth >= 0 ? ref : NULL);
            }
        }
    }
    free(kind);
    return f->err ? -1 : 0;
}

/* -------------------------------------------------- vector constructors */

/* float4(a.xy, 0, 1) has no C++ meaning for ext vectors: rewrite the type name
 * into ::metal::sw_mk<float4> (one-argument forms too, so float4(int4) converts
 * values instead of reinterpreting bits).  `vec<T, N>(...)` likewise. */
static int is_vector_type_name(const char *s, int len) {
    static const char *elems[] = {"float", "half", "bfloat", "int", "uint", "short", "ushort",
                                  "char",  "uchar", "long",  "ulong", "bool", NULL};
    if (len > 7 && memcmp(s, "packed_", 7) == 0) {
        s += 7;
        len -= 7;
    }
    if (len < 2 || s[len - 1] < '2' || s[len - 1] > '4') return 0;
    for (int i = 0; elems[i]; i++)
        if ((int)strlen(elems[i]) == len - 1 && memcmp(s, elems[i], (size_t)len - 1) == 0) return 1;
    return 0;
}

/* tk[i] starts a vector type: float4, packed_half2, vec<...>, metal::vec<...>.
 * Returns the index just past it, or -1. */
static int vector_type_end(const front *f, int i) {
    if (tk_is(f, i, "metal") && tk_is(f, i + 1, "::")) i += 2;
    if (tk_ident(f, i) && is_vector_type_name(tk_text(f, i), f->c.toks[i].len)) return i + 1;
    if (tk_is(f, i, "vec") && tk_is(f, i + 1, "<")) return msl_skip_angles(&f->c, i + 1, f->c.ntoks);
    return -1;
}

/* Names declared as vector types (`using complex_T = vec<T, 2>;`, `typedef float4
 * F;`): `complex_T(a, b)` is a vector constructor too. */
static int collect_vector_aliases(front *f) {
    for (int i = 0; i < f->c.ntoks; i++) {
        int name = -1, e;
        if (tk_is(f, i, "using") && tk_ident(f, i + 1) && tk_is(f, i + 2, "=") && (e = vector_type_end(f, i + 3)) > 0 &&
            tk_is(f, e, ";"))
            name = i + 1;
        else if (tk_is(f, i, "typedef") && (e = vector_type_end(f, i + 1)) > 0 && tk_ident(f, e) && tk_is(f, e + 1, ";"))
            name = e;
        if (name < 0 || is_vector_type_name(tk_text(f, name), f->c.toks[name].len)) continue;
        char **na = realloc(f->vec_aliases, sizeof *na * (size_t)(f->nvec_aliases + 1));
        char *nm = tk_dup(f, name);
        if (!na || !nm) {
            free(nm);
            if (na) f->vec_aliases = na;
            return fail(f, i, "out of memory");
        }
        f->vec_aliases = na;
        f->vec_aliases[f->nvec_aliases++] = nm;
    }
    return 0;
}

static int is_vector_alias(const front *f, int i) {
    for (int k = 0; k < f->nvec_aliases; k++)
        if (tk_is(f, i, f->vec_aliases[k])) return 1;
    return 0;
}

/* MSL's half literal suffix: 1.5h -> ((half)1.5).  1 when rewritten. */
static int rewrite_half_literal(front *f, int i) {
    const char *s = tk_text(f, i);
    int n = f->c.toks[i].len;
    if (n < 2 || (s[n - 1] != 'h' && s[n - 1] != 'H')) return 0;
    int is_hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (is_hex) return 0;   /* hex digits cannot end in h; leave anything odd to the compiler */
    msl_buf b = {0};
    msl_buf_printf(&b, "((half)%.*s)", n - 1, s);
    char *t = msl_buf_take(&b);
    if (!t) return fail(f, i, "out of memory");
    return add_edit(f, f->c.toks[i].start, f->c.toks[i].start + n, t) ? -1 : 1;
}

/* ------------------------------------------------ conditional operands */

static int add_edit_ordered(front *f, int pos, const char *text, int order) {
    char *t = strdup(text);
    if (!t) return fail(f, -1, "out of memory");
    if (add_edit(f, pos, pos, t)) return -1;
    f->edits[f->nedits - 1].order = order;
    return 0;
}

/* c ? dev[i] : T(0) where dev points to a struct in device memory: clang finds
 * no common type for an address-space-qualified class lvalue and a plain one
 * (Metal's compiler copies the object).  Every operand goes through
 * ::metal::sw_cond_operand(), the identity except that such an object becomes a
 * copy in the default address space (prelude/metal_stdlib.h). */
static int rewrite_conditionals(front *f) {
    for (int q = 0; q < f->c.ntoks && !f->err; q++) {
        if (!tk_is(f, q, "?") || tk_is(f, q + 1, ":")) continue;
        /* the ':' of this '?' */
        int colon = -1, nest = 0, j;
        for (j = q + 1; j < f->c.ntoks; j++) {
            if (f->c.match[j] > j) {
                j = f->c.match[j];
                continue;
            }
            if (tk_is(f, j, ";") || tk_is(f, j, ",") || f->c.match[j] >= 0) break;   /* a closing bracket */
            if (tk_is(f, j, "?")) nest++;
            else if (tk_is(f, j, ":") && nest-- == 0) {
                colon = j;
                break;
            }
        }
        if (colon < 0 || colon == q + 1) continue;
        /* a ?: in a template argument list (`Foo<N, c ? A : B>`) holds constants, and its
         * end is a '>' this pass cannot tell from a comparison: left alone when an
         * unmatched '<' comes before it and a '>' after it in the same statement and
         * bracket (`a < b ? x : y;` is wrapped as usual) */
        int in_angles = 0, angle = 0;
        for (j = q - 1; j >= 0 && !in_angles; j--) {
            if (f->c.match[j] >= 0 && f->c.match[j] < j) {
                j = f->c.match[j];
                continue;
            }
            if (tk_is(f, j, ";") || tk_is(f, j, "{") || tk_is(f, j, "}") || f->c.match[j] > q) break;
            if (tk_is(f, j, ">")) angle++;
            else if (tk_is(f, j, "<") && angle-- == 0) in_angles = 1;
        }
        if (in_angles) {
            int closes = 0;
            for (j = colon + 1; j < f->c.ntoks && !closes; j++) {
                if (f->c.match[j] > j) {
                    j = f->c.match[j];
                    continue;
                }
                if (tk_is(f, j, ";") || tk_is(f, j, "{") || tk_is(f, j, "}") || (f->c.match[j] >= 0 && f->c.match[j] < q))
                    break;
                if (tk_is(f, j, ">")) closes = 1;
            }
            if (closes) continue;
        }
        /* the second operand runs to ',' ';' a closing bracket or an outer ':' */
        nest = 0;
        for (j = colon + 1; j < f->c.ntoks; j++) {
            if (f->c.match[j] > j) {
                j = f->c.match[j];
                continue;
            }
            if (tk_is(f, j, ";") || tk_is(f, j, ",") || f->c.match[j] >= 0 || f->c.toks[j].kind == MSL_TK_DIRECTIVE ||
                f->c.toks[j].kind == MSL_TK_ATTR)
                break;
            if (tk_is(f, j, "?")) nest++;
            else if (tk_is(f, j, ":") && nest-- == 0) break;
        }
        int end2 = j;
        if (end2 == colon + 1) continue;
        const char *open = "::metal::sw_cond_operand(";
        if (add_edit_ordered(f, f->c.toks[q + 1].start, open, -1) ||
            add_edit_ordered(f, f->c.toks[colon - 1].start + f->c.toks[colon - 1].len, ")", 1) ||
            add_edit_ordered(f, f->c.toks[colon + 1].start, open, -1) ||
            add_edit_ordered(f, f->c.toks[end2 - 1].start + f->c.toks[end2 - 1].len, ")", 1))
            return -1;
    }
    return f->err ? -1 : 0;
}

/* --------------------------------------------------- string arguments */

/* A string literal is in the constant address space in MSL: os_log("mlx", "x")
 * passes it to `constant char *` parameters.  As a call argument it becomes
 * ::metal::sw_str("..."), a `constant char *` (which also converts to a plain
 * const char *). */
static int rewrite_string_args(front *f) {
    for (int i = 1; i < f->c.ntoks && !f->err; i++) {
        if (f->c.toks[i].kind != MSL_TK_STRING || f->c.toks[i - 1].kind == MSL_TK_STRING) continue;
        if (!tk_is(f, i - 1, "(") && !tk_is(f, i - 1, ",")) continue;
        int last = i;
        while (last + 1 < f->c.ntoks && f->c.toks[last + 1].kind == MSL_TK_STRING) last++;
        if (!tk_is(f, last + 1, ",") && !tk_is(f, last + 1, ")")) continue;
        int open = i - 1;
        while (open >= 0 && !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
            open--;
        if (open < 1 || !tk_is(f, open, "(") || !(tk_ident(f, open - 1) || tk_is(f, open - 1, ">"))) continue;
        if (tk_is(f, open - 1, "static_assert") || tk_is(f, open - 1, "asm") || tk_is(f, open - 1, "__asm__") ||
            strncmp(tk_text(f, open - 1), "__builtin", 9) == 0 || tk_is(f, open - 1, "__attribute__") ||
            tk_is(f, open - 1, "deprecated") || tk_is(f, open - 1, "_Pragma"))
            continue;
        if (add_edit_ordered(f, f->c.toks[i].start, "::metal::sw_str(", -1) ||
            add_edit_ordered(f, f->c.toks[last].start + f->c.toks[last].len, ")", 1))
            return -1;
    }
    return f->err ? -1 : 0;
}

/* ------------------------------------------------ discarded atomic fetch-ops */

static const char *const fetch_ops[] = {"atomic_fetch_add_explicit", "atomic_fetch_sub_explicit",
                                        "atomic_fetch_min_explicit", "atomic_fetch_max_explicit",
                                        "atomic_fetch_and_explicit", "atomic_fetch_or_explicit",
                                        "atomic_fetch_xor_explicit"};

/* Tokens that end what came before a statement: ; { } else. */
static int opens_statement(const front *f, int p) {
    return p < 0 || tk_is(f, p, ";") || tk_is(f, p, "{") || tk_is(f, p, "}") || tk_is(f, p, "else");
}

/* An atomic fetch-op whose value nothing reads: a statement of its own
 *     [::][metal::]atomic_fetch_add_explicit(...);
 * after ; { } else, the head of an if/for/while, or a (void) cast at a statement's
 * start.  It becomes ::metal::sw_discard_atomic_fetch_add_explicit, which the device
 * may apply later, in threadgroup order (prelude/sw_sync.h, swmetal/atomics.c).  Any
 * other form keeps the plain name, whose value the kernel may read: correct, only
 * slower on several workers. */
static int rewrite_discarded_atomics(front *f) {
    for (int i = 0; i < f->c.ntoks && !f->err; i++) {
        if (!tk_ident(f, i) || !tk_is(f, i + 1, "(")) continue;
        size_t n = 0;
        while (n < sizeof fetch_ops / sizeof *fetch_ops && !tk_is(f, i, fetch_ops[n])) n++;
        if (n == sizeof fetch_ops / sizeof *fetch_ops) continue;
        int s = i;
        if (tk_is(f, s - 1, "::")) {
            s--;
            if (tk_is(f, s - 1, "metal")) {
                s--;
                if (tk_is(f, s - 1, "::")) s--;
            } else if (tk_ident(f, s - 1) || tk_is(f, s - 1, ">")) {
                continue; /* some other namespace's function */
            }
        }
        int p = s - 1, ok = opens_statement(f, p);
        if (!ok && tk_is(f, p, ")") && f->c.match[p] >= 0) {
            int o = f->c.match[p];
            if (tk_is(f, o - 1, "if") || tk_is(f, o - 1, "for") || tk_is(f, o - 1, "while")) ok = 1;
            else if (o == p - 2 && tk_is(f, o + 1, "void") && opens_statement(f, o - 1)) ok = 1;
        }
        int rp = f->c.match[i + 1];
        if (!ok || rp < 0 || !tk_is(f, rp + 1, ";")) continue;
        /* ...but not the condition of for (a; f(...); b), whose value is read, nor the
         * last statement of a statement expression ({ ...; f(...); }) */
        int open = s - 1;
        while (open >= 0 && !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
            open--;
        if (open >= 0 && !tk_is(f, open, "{")) continue;
        if (tk_is(f, rp + 2, "}") && tk_is(f, rp + 3, ")")) continue;
        msl_buf b = {0};
        msl_buf_printf(&b, "sw_discard_%s", fetch_ops[n]);
        char *t = msl_buf_take(&b);
        if (!t) return fail(f, i, "out of memory");
        if (add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
    }
    return f->err ? -1 : 0;
}

/* ------------------------------------------------ braced call arguments */

/* f({a, b, c}) where f takes a vector: clang cannot convert a braced list to an
 * ext_vector parameter (Metal's compiler can).  The list becomes
 * ::metal::sw_braced(a, b, c), an object that converts to a vector with that many
 * components, or to an aggregate the list initialises (prelude/metal_stdlib.h). */
static int rewrite_braced_args(front *f) {
    for (int i = 1; i < f->c.ntoks && !f->err; i++) {
        if (!tk_is(f, i, "{") || !(tk_is(f, i - 1, "(") || tk_is(f, i - 1, ","))) continue;
        int close = f->c.match[i];
        if (close < 0 || close == i + 1 || !(tk_is(f, close + 1, ",") || tk_is(f, close + 1, ")"))) continue;
        /* the enclosing bracket must be a call's '(' */
        int open = i - 1;
        while (open >= 0 && !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
            open--;
        if (open < 1 || !tk_is(f, open, "(")) continue;
        if (!(tk_ident(f, open - 1) || tk_is(f, open - 1, ">")) || tk_is(f, open - 1, "decltype") ||
            tk_is(f, open - 1, "sizeof") || tk_is(f, open - 1, "return") || tk_is(f, open - 1, "if") ||
            tk_is(f, open - 1, "while") || tk_is(f, open - 1, "for") || tk_is(f, open - 1, "switch"))
            continue;
        int statement = 0;
        for (int k = i + 1; k < close && !statement; k++) {
            if (f->c.match[k] > k && !tk_is(f, k, "{")) k = f->c.match[k];
            else statement = tk_is(f, k, ";");
        }
        if (statement) continue;
        char *o = strdup("::metal::sw_braced("), *c = strdup(")");
        if (!o || !c) {
            free(o);
            free(c);
            return fail(f, i, "out of memory");
        }
        add_edit(f, f->c.toks[i].start, f->c.toks[i].start + 1, o);
        add_edit(f, f->c.toks[close].start, f->c.toks[close].start + 1, c);
    }
    return f->err ? -1 : 0;
}

/* ------------------------------------------- array parameters in a space */

/* `constant const int64_t strides[2]` as a parameter is a pointer in C++ as in
 * MSL, but clang rejects the address space on the array type before it decays:
 * write it as the pointer it is, `(*strides)` (other dimensions stay). */
static int rewrite_array_params(front *f) {
    for (int lp = 0; lp < f->c.ntoks && !f->err; lp++) {
        if (!tk_is(f, lp, "(") || f->c.match[lp] < 0) continue;
        int rp = f->c.match[lp], a = lp + 1;
        for (int i = lp + 1; i <= rp; i++) {
            if (i < rp && f->c.match[i] > i && !tk_is(f, i, "[")) {
                i = f->c.match[i];
                continue;
            }
            if (i < rp && !tk_is(f, i, ",")) {
                if (tk_is(f, i, "[")) i = f->c.match[i];
                continue;
            }
            /* segment [a, i): SPACE ... name [n] ... */
            int has_space = 0, name = -1;
            for (int k = a; k < i; k++) has_space |= is_space_word(f, k) && !tk_is(f, k, "thread");
            if (has_space) {
                int k = a;
                while (k < i && !tk_is(f, k, "[")) {
                    if (tk_is(f, k, "(") || tk_is(f, k, "<") || tk_is(f, k, "=")) break;
                    k++;
                }
                if (k < i && tk_is(f, k, "[") && k > a && tk_ident(f, k - 1)) name = k - 1;
            }
            if (name >= 0) {
                int lb = name + 1, rb = f->c.match[lb];
                char *open = strdup("(*"), *close = strdup(")");
                if (!open || !close) {
                    free(open);
                    free(close);
                    return fail(f, name, "out of memory");
                }
                add_edit(f, f->c.toks[name].start, f->c.toks[name].start, open);
                add_edit(f, f->c.toks[lb].start, f->c.toks[rb].start + 1, close);   /* `[2]` -> `)` */
            }
            a = i + 1;
        }
    }
    return f->err ? -1 : 0;
}

static int is_fp16_name(const front *f, int i) { return tk_is(f, i, "half") || tk_is(f, i, "bfloat"); }

/* The end (exclusive) of the unary expression starting at tk[p] -- prefix
 * operators, a name, literal or parenthesised group, then [..] (..) .m ->m ++ --
 * -- or -1 when it is not one this pass understands. */
static int unary_operand_end(const front *f, int p) {
    while (tk_is(f, p, "-") || tk_is(f, p, "+") || tk_is(f, p, "!") || tk_is(f, p, "~") || tk_is(f, p, "*") ||
           tk_is(f, p, "&"))
        p++;
    if (p >= f->c.ntoks) return -1;
    if (tk_is(f, p, "(")) {
        p = f->c.match[p] + 1;
    } else if (f->c.toks[p].kind == MSL_TK_NUMBER || f->c.toks[p].kind == MSL_TK_CHAR) {
        p++;
    } else if (tk_ident(f, p) || tk_is(f, p, "::")) {
        if (tk_is(f, p, "::")) p++;
        while (tk_ident(f, p) && tk_is(f, p + 1, "::") && tk_ident(f, p + 2)) p += 2;
        if (!tk_ident(f, p)) return -1;
        p++;
    } else {
        return -1;
    }
    for (;;) {
        if (tk_is(f, p, "[") || tk_is(f, p, "(")) p = f->c.match[p] + 1;
        else if ((tk_is(f, p, ".") || tk_is(f, p, "->")) && tk_ident(f, p + 1)) p += 2;
        else break;
    }
    return p;
}

/* static_cast<...> at tk[lt] ('<'): is the target a plain scalar, a pointer or a
 * reference, which static_cast handles as MSL does? */
static int plain_cast_target(const front *f, int lt) {
    static const char *scalars[] = {"bool", "char", "short", "int", "long", "float", "double", "unsigned", "signed",
                                    "uchar", "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "int8_t", "int16_t",
                                    "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "const",
                                    "volatile", NULL};
    int gt = msl_skip_angles(&f->c, lt, f->c.ntoks);
    if (gt < 0) return 1;
    for (int j = lt + 1; j < gt - 1; j++) {
        if (tk_is(f, j, "*") || tk_is(f, j, "&") || tk_is(f, j, "&&")) return 1;
        int known = 0;
        for (int k = 0; scalars[k] && !known; k++) known = tk_is(f, j, scalars[k]);
        if (!known) return 0;
    }
    return 1;
}

/* (float4)h4, (half)b: clang's C-style cast between vectors reinterprets bits (or
 * is refused) and half <-> bfloat is refused; MSL converts the values.  Becomes
 * ::metal::sw_convert<float4>(h4).  Returns 1 when rewritten. */
static int rewrite_c_cast(front *f, int lp) {
    int t = lp + 1, rp = lp + 2;
    if (!tk_is(f, rp, ")") || !(is_vector_type_name(tk_text(f, t), f->c.toks[t].len) || is_fp16_name(f, t))) return 0;
    if (lp > 0 && (tk_ident(f, lp - 1) || tk_is(f, lp - 1, ">") || tk_is(f, lp - 1, ")") || tk_is(f, lp - 1, "]")))
        return 0;   /* sizeof(float4), f(half) in a declaration, ... */
    int end = unary_operand_end(f, rp + 1);
    if (end < 0) return 0;
    msl_buf b = {0};
    msl_buf_printf(&b, "::metal::sw_convert<%.*s>(", f->c.toks[t].len, tk_text(f, t));
    char *open = msl_buf_take(&b), *close = strdup(")");
    if (!open || !close) {
        free(open);
        free(close);
        return fail(f, lp, "out of memory");
    }
    add_edit(f, f->c.toks[lp].start, f->c.toks[rp].start + 1, open);
    int e = f->c.toks[end - 1].start + f->c.toks[end - 1].len;
    add_edit(f, e, e, close);
    return 1;
}

/* MSL has no double: a floating literal without a suffix is a float (1.5 -> 1.5f),
 * so `x * 0.5` rounds like the GPU's float arithmetic. */
static int rewrite_float_literal(front *f, int i) {
    const char *s = tk_text(f, i);
    int n = f->c.toks[i].len;
    int hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    int floating = 0;
    for (int k = 0; k < n; k++) {
        char c = s[k];
        if (c == '.' || (hex ? (c == 'p' || c == 'P') : (c == 'e' || c == 'E'))) floating = 1;
    }
    char last = s[n - 1];
    if (!floating || strchr("fFlLhH", last) || (!hex && !(last >= '0' && last <= '9') && last != '.')) return 0;
    msl_buf b = {0};
    msl_buf_printf(&b, "%.*sf", n, s);
    char *t = msl_buf_take(&b);
    if (!t) return fail(f, i, "out of memory");
    return add_edit(f, f->c.toks[i].start, f->c.toks[i].start + n, t);
}

/* Do the parentheses at tk[lp] hold parameter declarations (`float4 f(float x)`)
 * rather than expressions (`int2 v(0, row)`)? */
static int looks_like_params(const front *f, int lp) {
    static const char *decl_words[] = {"const", "device", "thread", "threadgroup", "constant", "volatile", "unsigned",
                                       "signed", "void", "bool", "char", "short", "int", "long", "float", "half",
                                       "bfloat", "uint", "ushort", "uchar", "ulong", NULL};
    int rp = f->c.match[lp];
    if (rp == lp + 1) return 1;
    for (int k = 0; decl_words[k]; k++)
        if (tk_is(f, lp + 1, decl_words[k])) return 1;
    if (is_vector_type_name(tk_text(f, lp + 1), f->c.toks[lp + 1].len) && tk_ident(f, lp + 2)) return 1;
    for (int j = lp + 1; j + 1 < rp; j++) {
        if (f->c.match[j] > j) {
            j = f->c.match[j];
            continue;
        }
        if (tk_ident(f, j) && tk_ident(f, j + 1)) return 1;
    }
    return 0;
}

/* `int2 offsets(0, row);` -- a vector direct-initialised with several values, which
 * clang refuses: `int2 offsets = ::metal::sw_mk<int2>(0, row);`.  tk[i] is the type
 * (a vector name or alias) at the start of a declaration. */
static int rewrite_vector_direct_init(front *f, int i) {
    int d = i + 1;
    while (tk_ident(f, d) && tk_is(f, d + 1, "(") && !looks_like_params(f, d + 1)) {
        msl_buf b = {0};
        msl_buf_printf(&b, " = ::metal::sw_mk<%.*s>", f->c.toks[i].len, tk_text(f, i));
        char *t = msl_buf_take(&b);
        if (!t) return fail(f, i, "out of memory");
        int at = f->c.toks[d].start + f->c.toks[d].len;
        if (add_edit(f, at, at, t)) return -1;
        int close = f->c.match[d + 1];
        if (!tk_is(f, close + 1, ",")) break;
        d = close + 2;
    }
    return 0;
}

static int rewrite_vector_constructors(front *f) {
    if (collect_vector_aliases(f)) return -1;
    for (int i = 0; i < f->c.ntoks && !f->err; i++) {
        if (f->c.toks[i].kind == MSL_TK_NUMBER) {
            if (rewrite_half_literal(f, i) == 0) rewrite_float_literal(f, i);
            continue;
        }
        if (tk_is(f, i, "(") && rewrite_c_cast(f, i)) {
            i += 2;
            continue;
        }
        /* static_cast<half>(b) of a bfloat b, static_cast<float4>(h4), static_cast<U>(x) of a
         * template parameter U: value conversions.  Casts to plain scalars, pointers and
         * references stay as written. */
        if (tk_is(f, i, "static_cast") && tk_is(f, i + 1, "<") && !tk_is(f, i - 1, "::") &&
            !plain_cast_target(f, i + 1)) {
            char *t = strdup("::metal::sw_static_cast");
            if (!t || add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
            continue;
        }
        if (!tk_ident(f, i)) continue;
        if (tk_is(f, i - 1, ".") || tk_is(f, i - 1, "->") || tk_is(f, i - 1, "operator")) continue;
        int qualified = tk_is(f, i - 1, "::");
        if (qualified && !tk_is(f, i - 2, "metal")) continue;
        if (is_fp16_name(f, i) && tk_is(f, i + 1, "(") && !tk_is(f, i - 1, "(")) {
            /* half(b) of a bfloat b: a value conversion, as in MSL */
            msl_buf b = {0};
            msl_buf_printf(&b, "%ssw_convert<%.*s>", qualified ? "" : "::metal::", f->c.toks[i].len, tk_text(f, i));
            char *t = msl_buf_take(&b);
            if (!t || add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
        } else if ((is_vector_type_name(tk_text(f, i), f->c.toks[i].len) || (!qualified && is_vector_alias(f, i))) &&
                   tk_ident(f, i + 1) && tk_is(f, i + 2, "(") &&
                   (tk_is(f, i - 1, ";") || tk_is(f, i - 1, "{") || tk_is(f, i - 1, "}") || tk_is(f, i - 1, "const") ||
                    tk_is(f, i - 1, "constexpr") || tk_is(f, i - 1, "thread") ||
                    (tk_is(f, i - 1, "(") && tk_is(f, i - 2, "for")))) {
            if (rewrite_vector_direct_init(f, i)) return -1;
        } else if ((is_vector_type_name(tk_text(f, i), f->c.toks[i].len) || (!qualified && is_vector_alias(f, i))) &&
                   tk_is(f, i + 1, "(")) {
            msl_buf b = {0};
            msl_buf_printf(&b, "%ssw_mk<%.*s>", qualified ? "" : "::metal::", f->c.toks[i].len, tk_text(f, i));
            char *t = msl_buf_take(&b);
            if (!t || add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
        } else if (tk_is(f, i, "vec") && tk_is(f, i + 1, "<")) {
            int after = msl_skip_angles(&f->c, i + 1, f->c.ntoks);
            if (after < 0 || !tk_is(f, after, "(")) continue;
            char *open = strdup(qualified ? "sw_mk<" : "::metal::sw_mk<"), *close = strdup(">");
            if (!open || !close) {
                free(open);
                free(close);
                return fail(f, i, "out of memory");
            }
            int end = f->c.toks[after - 1].start + f->c.toks[after - 1].len;
            add_edit(f, f->c.toks[i].start, f->c.toks[i].start, open);
            add_edit(f, end, end, close);
        }
    }
    return f->err ? -1 : 0;
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
    free(f->attrs);
    for (int i = 0; i < f->nedits; i++) free(f->edits[i].text);
    free(f->edits);
    for (int i = 0; i < f->ntemplates; i++) {
        free(f->templates[i].name);
        kernel_free(&f->templates[i].k);
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
    if (collapse_attrs(&f) == 0 && match_brackets(&f) == 0 && reject_unsupported(&f) == 0 &&
        strip_method_spaces(&f) == 0 && (strip_coherent(&f), 1) &&
        walk_ns(&f, 0, f.c.ntoks, "::") == 0 &&
        rewrite_threadgroup_decls(&f) == 0 && rewrite_vector_constructors(&f) == 0 &&
        rewrite_array_params(&f) == 0 && rewrite_braced_args(&f) == 0 && rewrite_string_args(&f) == 0 &&
        rewrite_conditionals(&f) == 0 && rewrite_discarded_atomics(&f) == 0) {
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
    for (int i = 0; i < u->nkernels; i++) kernel_free(&u->kernels[i]);
    free(u->kernels);
    for (int i = 0; i < u->nconstants; i++) free(u->constants[i].name);
    free(u->constants);
    *u = (msl_unit){0};
}
