/* lanes_parse.c — the lanes rewrite, phase 1: the library's structure.
 *
 * Reads the front end's rewritten text (msl_unit.text).  Writes L->c (tokens,
 * operators joined, brackets matched), the user type and template names, the
 * functions at namespace scope (name, parameters, body) and each body's statement
 * tree (L->st); rejects, with the reason, a library using what the rewrite cannot
 * run.  Also the syntax questions the later phases ask of a token range: where a
 * declaration's type ends, its declarators, a postfix chain's base. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/lanes.h"

int lv_lex(lanes *L, char **err) {
    if (msl_lex(L->text, "lanes", &L->c, err) != 0) return -1;
    msl_join_ops(&L->c);
    if (msl_match_brackets(&L->c, 0, err) != 0) {
        *err = strdup("out of memory");
        return -1;
    }
    L->decl = malloc(sizeof *L->decl * (size_t)(L->c.ntoks + 1));
    if (!L->decl) {
        *err = strdup("out of memory");
        return -1;
    }
    for (int i = 0; i <= L->c.ntoks; i++) L->decl[i] = -1;
    return 0;
}

/* ------------------------------------------------------------------ names */

/* The lanes library's simdgroup-matrix types and functions (sw_lanes.h). */
static const char *const matrix_types[] = {"simdgroup_matrix", "simdgroup_float8x8", "simdgroup_half8x8",
                                           "simdgroup_bfloat8x8", NULL};
static const char *const matrix_functions[] = {"simdgroup_load", "simdgroup_store", "simdgroup_multiply",
                                               "simdgroup_multiply_accumulate", NULL};

int lv_has_prefix(const lanes *L, int i, const char *p) {
    int n = (int)strlen(p);
    return is_ident(L, i) && tlen(L, i) > n && memcmp(ttext(L, i), p, (size_t)n) == 0;
}

int lv_is_one_of(const lanes *L, int i, const char *const *names) {
    for (int k = 0; names[k]; k++)
        if (is(L, i, names[k])) return 1;
    return 0;
}

static const char *const scalar_types[] = {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                           "half", "bfloat", "float", "size_t", "int8_t", "uint8_t", "int16_t",
                                           "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "unsigned",
                                           "signed", NULL};

/* float, float4, packed_float3, vec, metal-qualified or a user type. */
int lv_is_type_name(const lanes *L, int i) {
    if (!is_ident(L, i)) return 0;
    const char *s = ttext(L, i);
    int n = tlen(L, i);
    if (n > 7 && memcmp(s, "packed_", 7) == 0) {
        s += 7;
        n -= 7;
    }
    for (int k = 0; scalar_types[k]; k++) {
        int m = (int)strlen(scalar_types[k]);
        if (n >= m && memcmp(s, scalar_types[k], (size_t)m) == 0 &&
            (n == m || (n == m + 1 && s[m] >= '2' && s[m] <= '4')))
            return 1;
    }
    if (is(L, i, "vec")) return 1;
    /* `simdgroup_float8x8 m[4];` is a declaration, not the subscript of an unknown name */
    if (lv_is_one_of(L, i, matrix_types)) return 1;
    for (int k = 0; k < L->ntypes; k++)
        if (same_text(L, L->types[k], i)) return 1;
    return 0;
}

int lv_is_template_name(const lanes *L, int i) {
    if (!is_ident(L, i)) return 0;
    static const char *const known[] = {"as_type", "vec", "simdgroup_matrix", "static_cast", "reinterpret_cast",
                                        "const_cast", "numeric_limits", "is_same", "is_same_v", "sw_mk",
                                        "sw_convert", "sw_static_cast", "sw_fcast", "sw_ccast", NULL};
    for (int k = 0; known[k]; k++)
        if (is(L, i, known[k])) return 1;
    for (int k = 0; k < L->ntmpl; k++)
        if (same_text(L, L->tmpl[k], i)) return 1;
    return 0;
}

void lv_collect_names(lanes *L) {
    for (int i = 0; i < L->c.ntoks; i++) {
        if ((is(L, i, "struct") || is(L, i, "class") || is(L, i, "union") || is(L, i, "enum")) && is_ident(L, i + 1)) {
            int k = i + 1;
            if (is(L, k, "class") || is(L, k, "struct")) k++; /* enum class */
            if (is_ident(L, k)) lv_push_int(&L->types, &L->ntypes, &L->captypes, k);
        } else if (is(L, i, "using") && is_ident(L, i + 1) && is(L, i + 2, "=")) {
            lv_push_int(&L->types, &L->ntypes, &L->captypes, i + 1);
        } else if (is(L, i, "typedef")) {
            int k = i;
            while (k < L->c.ntoks && !is(L, k, ";")) {
                if (L->c.match[k] > k && (is(L, k, "(") || is(L, k, "{") || is(L, k, "["))) k = L->c.match[k];
                k++;
            }
            int name = k - 1;
            while (name > i && !is_ident(L, name)) name--;
            if (name > i) lv_push_int(&L->types, &L->ntypes, &L->captypes, name);
        } else if (is(L, i, "template") && is(L, i + 1, "<")) {
            int end = msl_skip_angles(&L->c, i + 1, L->c.ntoks);
            if (end < 0) continue;
            for (int k = i + 2; k < end; k++)
                if ((is(L, k, "typename") || is(L, k, "class")) && is_ident(L, k + 1))
                    lv_push_int(&L->types, &L->ntypes, &L->captypes, k + 1);
            /* the templated entity's name: the identifier before the first ( or { */
            for (int k = end; k < L->c.ntoks; k++) {
                if (is(L, k, "(") || is(L, k, "{") || is(L, k, ";")) {
                    int name = k - 1;
                    if (is(L, k, "{") || is(L, k, ";")) {
                        while (name > end && !is_ident(L, name)) name--;
                    }
                    if (is_ident(L, name)) lv_push_int(&L->tmpl, &L->ntmpl, &L->captmpl, name);
                    break;
                }
            }
        }
    }
}

/* Identifiers the lanes code cannot run, anywhere in the text. */
int lv_scan_unsupported(lanes *L) {
    static const char *const words[] = {"goto", "asm", "__asm__", "thread_local", "quad_sum", "quad_shuffle",
                                        "quad_shuffle_xor", "quad_broadcast", NULL};
    for (int i = 0; i < L->c.ntoks; i++) {
        if (!is_ident(L, i)) continue;
        const char *s = ttext(L, i);
        int n = tlen(L, i);
        for (int k = 0; words[k]; k++)
            if (is(L, i, words[k])) {
                lv_reject(L, i, "uses %s", words[k]);
                return -1;
            }
        int has_atomic = 0, allowed = 0;
        for (int k = 0; k + 6 <= n && !has_atomic; k++) has_atomic = memcmp(s + k, "atomic", 6) == 0;
        /* simdgroup_* names the lanes library provides */
        allowed |= lv_is_one_of(L, i, matrix_types) || lv_is_one_of(L, i, matrix_functions) ||
                   is(L, i, "simdgroup_barrier");
        /* the front end's function-scope threadgroup declarations (emitted raw) */
        allowed |= is(L, i, "sw_rt_tg_alloc") || is(L, i, "sw_rt_tg_alloc_init");
        if (allowed) continue;
        if (has_atomic || (n >= 15 && memcmp(s, "simdgroup_", 10) == 0) ||
            (n > 8 && memcmp(s, "__metal_", 8) == 0) || (n > 5 && memcmp(s, "quad_", 5) == 0) ||
            (n > 6 && memcmp(s, "sw_rt_", 6) == 0)) {
            lv_reject(L, i, "uses %.*s", n, s);
            return -1;
        }
    }
    return 0;
}

/* Lanes pay for themselves where a simdgroup's lanes meet: simd functions and
 * simdgroup matrices are a fiber switch per lane on fibers and a plain computation
 * here.  A library with barriers but no such call (threads that stage tiles and
 * compute on their own) runs as fast on fibers, a switch per thread per barrier,
 * and its per-lane loads through varying addresses (`*(float4 *)(tile + 4 * lane)`)
 * cost more as 32-wide data than as each thread's own load: such a library keeps
 * its fibers (wy: 1.15 s as lanes against 0.29 s on fibers). */
int lv_needs_collectives(lanes *L) {
    /* calls, not names: MLX-style kernels call their parameters simd_lane_id */
    for (int i = 0; i < L->c.ntoks; i++)
        if ((is(L, i + 1, "(") && (lv_has_prefix(L, i, "simd_") || is(L, i, "simdgroup_barrier"))) ||
            lv_is_one_of(L, i, matrix_types) || lv_is_one_of(L, i, matrix_functions))
            return 0;
    lv_reject(L, -1, "no simd function or simdgroup matrix: its threads gain nothing from running together");
    return -1;
}

/* ------------------------------------------------------------------ functions */

static int kernel_of(const lanes *L, int name) {
    for (int k = 0; k < L->u->nkernels; k++) {
        const char *callee = L->u->kernels[k].callee;
        /* "::f", "::ns::f", "::ns::f<T, 4>": the last unqualified name before any < */
        const char *end = strchr(callee, '<');
        if (!end) end = callee + strlen(callee);
        const char *b = end;
        while (b > callee && b[-1] != ':') b--;
        if ((int)(end - b) == tlen(L, name) && memcmp(b, ttext(L, name), (size_t)(end - b)) == 0) return k;
    }
    return -1;
}

static const char *const specifiers[] = {"static", "inline", "constexpr", "extern", "__inline", "__inline__",
                                         "METAL_FUNC", NULL};

/* The first token of a function's return type, scanning back from its name. */
static int decl_start(const lanes *L, int name) {
    int i = name - 1;
    while (i >= 0 && !is(L, i, ";") && !is(L, i, "}") && !is(L, i, "{") && L->c.toks[i].kind != MSL_TK_DIRECTIVE) {
        if (is(L, i, ")") && L->c.match[i] >= 0) i = L->c.match[i];
        i--;
    }
    i++;
    for (;;) {
        if (is(L, i, "template") && is(L, i + 1, "<")) {
            int e = msl_skip_angles(&L->c, i + 1, name);
            if (e < 0) return -1;
            i = e;
            continue;
        }
        if (is(L, i, "__attribute__") && is(L, i + 1, "(") && L->c.match[i + 1] > 0) {
            i = L->c.match[i + 1] + 1;
            continue;
        }
        int spec = 0;
        for (int k = 0; specifiers[k]; k++) spec |= is(L, i, specifiers[k]);
        if (!spec) break;
        i++;
    }
    return i;
}

static int parse_params(lanes *L, lv_fn *f) {
    int lo = f->params_open + 1, hi = f->params_close;
    if (lo == hi || (hi == lo + 1 && is(L, lo, "void"))) return 0;
    int cap = 8;
    f->params = calloc((size_t)cap, sizeof *f->params);
    if (!f->params) return -1;
    for (int s = lo; s < hi;) {
        int e = msl_list_item_end(&L->c, s, hi);
        if (f->nparams == cap) {
            cap *= 2;
            lv_param *p = realloc(f->params, sizeof *p * (size_t)cap);
            if (!p) return -1;
            f->params = p;
        }
        lv_param *p = &f->params[f->nparams++];
        memset(p, 0, sizeof *p);
        p->lo = s;
        p->hi = e;
        p->name = -1;
        int stop = e;
        for (int k = s; k < e; k++)
            if (is(L, k, "=")) {
                stop = k;
                break;
            }
        for (int k = stop - 1; k >= s; k--) {
            if (is(L, k, "]") && L->c.match[k] >= s) {
                k = L->c.match[k];
                continue;
            }
            if (is_ident(L, k)) {
                p->name = k;
                break;
            }
        }
        for (int k = s; k < stop; k++) {
            if (is(L, k, "*") || is(L, k, "&") || is(L, k, "&&")) p->ptr_or_ref = 1;
            if (is(L, k, "device") || is(L, k, "constant") || is(L, k, "threadgroup")) p->space = 1;
            if (is(L, k, "const") && !p->ptr_or_ref) p->is_const = 1;
        }
        s = e < hi ? e + 1 : e;
    }
    return 0;
}

/* A body the rewrite leaves as it is (a struct's member functions, an operator, an
 * out-of-line member): its simd calls would reach the fiber versions, some of which
 * synchronise through the executor (simd_ballot, simd_is_first, ...), and the others
 * would see a uniform value where the source had per-lane ones.  Refused. */
static int reject_simd_in(lanes *L, int lo, int hi, const char *what) {
    for (int k = lo; k < hi; k++)
        if (lv_has_prefix(L, k, "simd_")) {
            lv_reject(L, k, "%.*s in %s", tlen(L, k), ttext(L, k), what);
            return -1;
        }
    return 0;
}

/* Functions defined at namespace scope: `... name ( params ) [const] { body }`. */
int lv_find_functions(lanes *L) {
    int cap = 0;
    for (int i = 0; i < L->c.ntoks; i++) {
        if (is(L, i, "namespace")) {
            int k = i + 1;
            while (k < L->c.ntoks && !is(L, k, "{") && !is(L, k, ";")) k++;
            i = k; /* step into the namespace's block */
            continue;
        }
        if (is(L, i, "extern") && L->c.toks[i + 1].kind == MSL_TK_STRING && is(L, i + 2, "{")) {
            i += 2;
            continue;
        }
        if (!is(L, i, "{")) continue;
        int close = L->c.match[i];
        if (close < 0) return -1;
        int prev = i - 1;
        while (prev >= 0 && (is(L, prev, "const") || is(L, prev, "noexcept"))) prev--;
        if (prev < 0 || !is(L, prev, ")") || L->c.match[prev] < 1 || !is_ident(L, L->c.match[prev] - 1)) {
            /* a struct, an initializer, ...: not a function body */
            if (reject_simd_in(L, i, close, "a struct or other body the lanes rewrite does not reach") != 0) return -1;
            i = close;
            continue;
        }
        int open = L->c.match[prev], name = open - 1;
        if (is(L, name, "operator") || is(L, name - 1, "::") || is(L, name - 1, "operator")) {
            if (reject_simd_in(L, i, close, "an operator or out-of-line member function") != 0) return -1;
            i = close;
            continue;
        }
        if (L->nfns == cap) {
            cap = cap ? cap * 2 : 16;
            lv_fn *p = realloc(L->fns, sizeof *p * (size_t)cap);
            if (!p) return -1;
            L->fns = p;
        }
        lv_fn *f = &L->fns[L->nfns++];
        memset(f, 0, sizeof *f);
        f->name = name;
        f->params_open = open;
        f->params_close = prev;
        f->body_open = i;
        f->body_close = close;
        f->decl_lo = decl_start(L, name);
        f->kernel = kernel_of(L, name);
        f->is_void = f->decl_lo == name - 1 && is(L, name - 1, "void");
        if (f->decl_lo < 0 || parse_params(L, f) != 0) return -1;
        i = close;
    }
    return 0;
}

/* ------------------------------------------------------------------ statements */

static int new_stmt(lanes *L, int kind, int lo) {
    if (L->nst == L->capst) {
        int c = L->capst ? L->capst * 2 : 256;
        lv_stmt *p = realloc(L->st, sizeof *p * (size_t)c);
        if (!p) return -1;
        L->st = p;
        L->capst = c;
    }
    lv_stmt *s = &L->st[L->nst];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->lo = lo;
    s->body = s->els = s->first = s->next = -1;
    s->fn = L->cur_fn;
    return L->nst++;
}

/* End (exclusive) of the simple statement starting at i: its ';' at depth 0. */
static int simple_end(const lanes *L, int i, int limit) {
    for (; i < limit; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) i = L->c.match[i];
        else if (is(L, i, ";")) return i + 1;
    }
    return -1;
}

static int parse_paren(lanes *L, int i, int *lo, int *hi) {
    if (!is(L, i, "(") || L->c.match[i] < 0) {
        lv_reject(L, i, "expected (");
        return -1;
    }
    *lo = i + 1;
    *hi = L->c.match[i];
    return L->c.match[i] + 1;
}

/* Statement s (for, while, switch) ends with its body, which starts at token k. */
static int finish_with_body(lanes *L, int s, int k, int limit, int *next) {
    int nk, b = lv_parse_stmt(L, k, limit, &nk);
    if (b < 0) return -1;
    L->st[s].body = b;
    L->st[s].hi = nk;
    *next = nk;
    return s;
}

static int parse_compound(lanes *L, int i, int *next) {
    int close = L->c.match[i];
    int s = new_stmt(L, ST_COMPOUND, i);
    if (s < 0 || close < 0) return -1;
    int prev = -1;
    for (int k = i + 1; k < close;) {
        int nk, c = lv_parse_stmt(L, k, close, &nk);
        if (c < 0) return -1;
        if (prev < 0) L->st[s].first = c;
        else L->st[prev].next = c;
        prev = c;
        k = nk;
    }
    L->st[s].hi = close + 1;
    *next = close + 1;
    return s;
}

static int parse_if(lanes *L, int i, int limit, int *next) {
    int k;
    if (is(L, i + 1, "constexpr")) i++;
    int s = new_stmt(L, ST_IF, i);
    if (s < 0 || (k = parse_paren(L, i + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0) return -1;
    int nk, b = lv_parse_stmt(L, k, limit, &nk);
    if (b < 0) return -1;
    L->st[s].body = b;
    if (is(L, nk, "else")) {
        int e = lv_parse_stmt(L, nk + 1, limit, &nk);
        if (e < 0) return -1;
        L->st[s].els = e;
    }
    L->st[s].hi = nk;
    *next = nk;
    return s;
}

static int parse_for(lanes *L, int i, int limit, int *next) {
    int s = new_stmt(L, ST_FOR, i);
    int lo, hi, k;
    if (s < 0 || (k = parse_paren(L, i + 1, &lo, &hi)) < 0) return -1;
    int semi1 = -1, semi2 = -1;
    for (int q = lo; q < hi; q++) {
        if (L->c.match[q] > q && (is(L, q, "(") || is(L, q, "[") || is(L, q, "{"))) q = L->c.match[q];
        else if (is(L, q, ";")) {
            if (semi1 < 0) semi1 = q;
            else if (semi2 < 0) semi2 = q;
        } else if (is(L, q, ":") && semi1 < 0) {
            lv_reject(L, q, "range-based for");
            return -1;
        }
    }
    if (semi1 < 0 || semi2 < 0) {
        lv_reject(L, i, "for without two semicolons");
        return -1;
    }
    lv_stmt *st = &L->st[s];
    st->a_lo = lo, st->a_hi = semi1, st->b_lo = semi1 + 1, st->b_hi = semi2, st->c_lo = semi2 + 1, st->c_hi = hi;
    return finish_with_body(L, s, k, limit, next);
}

static int parse_do(lanes *L, int i, int limit, int *next) {
    int k, s = new_stmt(L, ST_DO, i);
    if (s < 0) return -1;
    int nk, b = lv_parse_stmt(L, i + 1, limit, &nk);
    if (b < 0) return -1;
    L->st[s].body = b;
    if (!is(L, nk, "while") || (k = parse_paren(L, nk + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0 || !is(L, k, ";")) {
        lv_reject(L, nk, "do without while (...);");
        return -1;
    }
    L->st[s].hi = k + 1;
    *next = k + 1;
    return s;
}

/* A statement that ends at its ';': return, break, continue, or a simple one
 * (lambdas and statement expressions refused). */
static int parse_simple(lanes *L, int i, int limit, int *next) {
    int e = simple_end(L, i, limit);
    if (e < 0) {
        lv_reject(L, i, "statement without ;");
        return -1;
    }
    int kind = is(L, i, "return") ? ST_RETURN : is(L, i, "break") ? ST_BREAK : is(L, i, "continue") ? ST_CONTINUE
                                                                                                      : ST_SIMPLE;
    int s = new_stmt(L, kind, i);
    if (s < 0) return -1;
    L->st[s].hi = e;
    if (kind == ST_RETURN) {
        L->st[s].a_lo = i + 1;
        L->st[s].a_hi = e - 1;
    }
    if (kind == ST_SIMPLE) {
        for (int q = i; q < e; q++) {
            if (is(L, q, "[") && (is(L, q + 1, "&") || is(L, q + 1, "=") || is(L, q + 1, "]")) &&
                !(q > i && (is_ident(L, q - 1) || is(L, q - 1, "]") || is(L, q - 1, ")")))) {
                lv_reject(L, q, "lambda");
                return -1;
            }
            if (is(L, q, "{") && q > i && is(L, q - 1, ")")) {
                lv_reject(L, q, "statement expression or lambda body");
                return -1;
            }
        }
    }
    *next = e;
    return s;
}

/* A statement of one token or up to a ':' (a directive, case/default, ';'). */
static int parse_short(lanes *L, int kind, int i, int hi, int *next) {
    int s = new_stmt(L, kind, i);
    if (s < 0) return -1;
    L->st[s].hi = hi;
    *next = hi;
    return s;
}

int lv_parse_stmt(lanes *L, int i, int limit, int *next) {
    if (i >= limit) {
        lv_reject(L, i, "statement expected");
        return -1;
    }
    if (L->c.toks[i].kind == MSL_TK_DIRECTIVE) return parse_short(L, ST_DIRECTIVE, i, i + 1, next);
    if (is(L, i, "{")) return parse_compound(L, i, next);
    if (is(L, i, "if")) return parse_if(L, i, limit, next);
    if (is(L, i, "for")) return parse_for(L, i, limit, next);
    if (is(L, i, "while") || is(L, i, "switch")) {
        int k, s = new_stmt(L, is(L, i, "while") ? ST_WHILE : ST_SWITCH, i);
        if (s < 0 || (k = parse_paren(L, i + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0) return -1;
        return finish_with_body(L, s, k, limit, next);
    }
    if (is(L, i, "do")) return parse_do(L, i, limit, next);
    if (is(L, i, "case") || is(L, i, "default")) {
        int k;
        for (k = i + 1; k < limit && !(is(L, k, ":")); k++)
            if (L->c.match[k] > k && is(L, k, "(")) k = L->c.match[k];
        return parse_short(L, ST_LABEL, i, k + 1, next);
    }
    if (is(L, i, ";")) return parse_short(L, ST_EMPTY, i, i + 1, next);
    return parse_simple(L, i, limit, next);
}

/* The first identifier of the postfix chain that ends just before `end` (an
 * assignment operator or ++/--): `s[i]` -> s, `a.x` -> a, `*p` -> p. */
int lv_chain_base(const lanes *L, int lo, int end, int *has_sub, int *has_deref) {
    int i = end - 1;
    *has_sub = 0;
    *has_deref = 0;
    while (i >= lo) {
        if ((is(L, i, "]") || is(L, i, ")")) && L->c.match[i] >= lo) {
            if (is(L, i, "]")) *has_sub = 1;
            i = L->c.match[i] - 1;
        } else if (is_ident(L, i) || is(L, i, ".") || is(L, i, "->") || is(L, i, "::")) {
            if (is(L, i, "->")) *has_deref = 1;
            i--;
        } else break;
    }
    int first = i + 1;
    if (is(L, i, "*")) *has_deref = 1;
    while (first < end && !is_ident(L, first)) first++;
    return first < end ? first : -1;
}

int lv_is_assign_op(const lanes *L, int i) {
    static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", NULL};
    for (int k = 0; ops[k]; k++)
        if (is(L, i, ops[k])) return 1;
    return 0;
}

/* A simple statement that declares: starts with a type (after qualifiers). */
int lv_decl_type_end(const lanes *L, int lo, int hi) {
    static const char *const quals[] = {"const", "constexpr", "static", "thread", "device", "constant", "threadgroup",
                                        "volatile", "typename", "register", NULL};
    int i = lo, any_qual = 0;
    for (;;) {
        int q = 0;
        for (int k = 0; quals[k]; k++) q |= is(L, i, quals[k]);
        if (!q) break;
        any_qual = 1;
        i++;
    }
    if (is(L, i, "auto")) return i + 1;
    if (is(L, i, "metal") && is(L, i + 1, "::")) i += 2;
    if (!lv_is_type_name(L, i) && !(any_qual && is_ident(L, i) && is_ident(L, i + 1))) return -1;
    /* unsigned int, long long */
    while (lv_is_type_name(L, i + 1) && (is(L, i, "unsigned") || is(L, i, "signed") || is(L, i, "long"))) i++;
    i++;
    if (is(L, i, "<")) {
        i = msl_skip_angles(&L->c, i, hi);
        if (i < 0) return -1;
    }
    while (is(L, i, "::") && is_ident(L, i + 1)) i += 2;
    for (;;) {
        int q = 0;
        for (int k = 0; quals[k]; k++) q |= is(L, i, quals[k]);
        if (!q) break;
        i++;
    }
    if (i >= hi || !(is_ident(L, i) || is(L, i, "*") || is(L, i, "&"))) return -1;
    return i;
}

/* Splits the declarators after the type; returns their count (at most max). */
int lv_split_declarators(const lanes *L, int tyend, int hi, lv_decl *d, int max) {
    int n = 0;
    for (int s = tyend; s < hi && n < max;) {
        int e = s;
        while (e < hi && !is(L, e, ",") && !is(L, e, ";")) {
            if (L->c.match[e] > e && (is(L, e, "(") || is(L, e, "[") || is(L, e, "{"))) e = L->c.match[e];
            e++;
        }
        lv_decl *x = &d[n++];
        memset(x, 0, sizeof *x);
        x->lo = s;
        x->hi = e;
        x->name = -1;
        int k = s;
        while (k < e && (is(L, k, "*") || is(L, k, "&") || is(L, k, "const") || is(L, k, "device") ||
                         is(L, k, "thread") || is(L, k, "constant"))) {
            if (is(L, k, "*") || is(L, k, "&")) x->ptr = 1;
            k++;
        }
        if (is_ident(L, k)) x->name = k++;
        while (is(L, k, "[") && L->c.match[k] > k) {
            x->array = 1;
            k = L->c.match[k] + 1;
        }
        if (is(L, k, "=")) {
            x->init_lo = k + 1;
            x->init_hi = e;
        } else if ((is(L, k, "{") || is(L, k, "(")) && L->c.match[k] > k) {
            x->init_lo = k + 1;
            x->init_hi = L->c.match[k];
        }
        s = e < hi && is(L, e, ",") ? e + 1 : hi;
    }
    return n;
}

/* One of the statements the front end writes for a function-scope threadgroup
 * variable (msl_front.c, rewrite_threadgroup_decl): `using sw_tg_v_x = T[n];`,
 * `using sw_tg_t_x = threadgroup sw_tg_v_x;`, `sw_tg_t_x &x = *(...)(sw_rt_tg_alloc..);`
 * and `(void)::sw::tg_static<...>::reg;`.  They stay as they are: the variable is
 * the simdgroup's reference into the threadgroup arena, uniform storage shared by
 * every lane (and every simdgroup), like a device pointer.  Returns 1 (and the
 * variable's token in *name, else -1), or 0 for any other statement. */
int lv_tg_decl_stmt(const lanes *L, int lo, int *name) {
    *name = -1;
    if (is(L, lo, "using") && lv_has_prefix(L, lo + 1, "sw_tg_")) return 1;
    if (lv_has_prefix(L, lo, "sw_tg_t_") && is(L, lo + 1, "&") && is_ident(L, lo + 2) && is(L, lo + 3, "=")) {
        *name = lo + 2;
        return 1;
    }
    if (is(L, lo, "(") && is(L, lo + 1, "void") && is(L, lo + 2, ")") && is(L, lo + 3, "::") && is(L, lo + 4, "sw") &&
        is(L, lo + 5, "::") && is(L, lo + 6, "tg_static"))
        return 1;
    return 0;
}
