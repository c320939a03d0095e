/* msl_lanes.c — the lanes rewrite: the C++ of a library whose simdgroups run as
 * 32-wide data (prelude/sw_lanes.h) instead of 32 fibers.
 *
 * Why: a kernel whose lanes meet at simd_sum every few instructions spends most
 * of its time switching fibers, and its per-lane scalar code cannot use the host's
 * vector units.  Run a simdgroup's lanes together and both costs go: a reduction is
 * a loop over an array, and the lanes' arithmetic is a 32-wide loop clang
 * vectorises.  This is whole-function vectorisation (ISPC, POCL) done on the
 * source, with the C++ type system as the safety net:
 *
 *   1. Uniformity.  A local or parameter is *varying* when its value can differ
 *      between the lanes of a simdgroup: it is seeded by the per-lane id attributes
 *      (thread_index_in_simdgroup, thread_position_in_grid, ...) and spreads through
 *      assignments, calls (argument -> parameter, and back for pointer/reference
 *      parameters), returns, and assignments under control flow whose condition is
 *      varying.  Each use of a local is resolved to its declaration (scopes), and
 *      variables are tracked flow-insensitively (a fixpoint over the whole
 *      library), so the result errs only toward "varying".
 *   2. Rewrite.  Varying declarations become ::sw::lv::vary<T>; every subscript
 *      becomes ::sw::lv::ld/st (gather, masked scatter); casts become
 *      ::sw::lv::cast; ?:, && and || take lambdas so that each side runs only for
 *      the lanes that evaluate it; if/loops with varying conditions run under an
 *      execution mask (branch, loop); break, continue and return under varying
 *      control retire lanes (brk, cnt, fn<R>::ret).  Uniform conditions are wrapped
 *      in ::sw::lv::u(), which does not compile for a varying value.
 *   3. Safety.  Wherever the analysis is wrong about a value, the C++ does not
 *      compile (a vary<T> cannot become a T, nor a condition); the device then runs
 *      the library's fibers as before (compile.c).  Anything this pre-pass does not
 *      understand (atomics, quad functions, lambdas, goto, a varying switch, a
 *      barrier under varying control, ...) makes the library ineligible up front,
 *      with the reason kept for GDNBENCH_SW_DEBUG; so does a library with no simd
 *      function or simdgroup matrix (needs_collectives).
 *
 *   Threadgroup memory (the front end's function-scope declarations and
 *   [[threadgroup(n)]] pointers) is uniform storage, like device memory.  A
 *   threadgroup_barrier is the simdgroup's: exec.c runs each simdgroup of such a
 *   library on a fiber of its own, and the barrier must be reached under uniform
 *   control (in the kernel, or in a helper no varying control calls).  A
 *   simdgroup_matrix is uniform (sw_lanes.h keeps one 8x8 value); its
 *   thread_elements() is varying.
 *
 *   4. One difference from fibers, by design: simd functions called in divergent
 *      code whose lanes meet again at a later simd call.  Lanes reconverge at the
 *      end of the if or loop, as a GPU does (`if (lane >= 16) y = simd_sum(x);
 *      out = simd_sum(y);` adds 32 lanes the second time); the fiber executor
 *      resolves the lanes waiting at the lowest lane's call site first and may
 *      combine fewer.  gdnbench validate therefore runs every schedule on fibers
 *      (test_sw_lanes.c pins both results).
 *
 * The rewrite keeps every token's line: output is the input's tokens in order with
 * the whitespace (and line markers) between them, plus inserted text; only a
 * compound assignment through a subscript repeats its base and index. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl/msl_cursor.h"
#include "swmetal/msl_front.h"

#define LV_MAX_NAMES 4096

enum { ST_SIMPLE, ST_COMPOUND, ST_IF, ST_FOR, ST_WHILE, ST_DO, ST_SWITCH, ST_RETURN, ST_BREAK, ST_CONTINUE,
       ST_LABEL, ST_EMPTY, ST_DIRECTIVE };

typedef struct lv_stmt {
    int kind;
    int lo, hi;         /* token span of the whole statement [lo, hi) */
    int a_lo, a_hi;     /* if/while/switch/do: condition; for: init; return: value */
    int b_lo, b_hi;     /* for: condition */
    int c_lo, c_hi;     /* for: step */
    int body, els;      /* child statements (index), -1 if none */
    int first, next;    /* compound: first child; siblings */
    int masked;         /* loop: runs under the execution mask */
    int varying;        /* if: the condition is varying */
    int fn;             /* owning function */
} lv_stmt;

typedef struct lv_param {
    int lo, hi;         /* the declaration's tokens */
    int name;           /* token of its name, -1 if unnamed */
    int ptr_or_ref;     /* declared with * or & */
    int space;          /* device, constant or threadgroup */
    int is_const;       /* const before the first * or &: nothing is stored through it
                         * (`float *const p` is a constant pointer to writable floats) */
    int varying;
} lv_param;

typedef struct lv_fn {
    int name;           /* token of the function's name */
    int decl_lo;        /* first token of the return type (after template<...> and specifiers) */
    int params_open, params_close, body_open, body_close;
    lv_param *params;
    int nparams;
    int body;           /* statement index of the body */
    int ret_varying;
    int needs_fn;       /* some return is under varying control */
    int is_void;
    int kernel;         /* index into the unit's kernels, -1 */
    int vcalled;        /* called somewhere under varying control (or from such a function) */
    int *vnames;        /* varying variables: token indices (compared by same_var) */
    int nv, capv;
    int *mem;           /* names that are device/constant/threadgroup pointers */
    int nmem, capmem;
    int *locals;        /* names declared in the body */
    int nloc, caploc;
} lv_fn;

typedef struct lanes {
    const char *text;
    const msl_unit *u;
    msl_lexed c;        /* tokens, operators joined; c.match: matching brackets (lenient) */
    lv_stmt *st;
    int nst, capst;
    lv_fn *fns;
    int nfns;
    int *types;         /* token indices of user type names */
    int ntypes, captypes;
    int *tmpl;          /* token indices of template names */
    int ntmpl, captmpl;
    int changed;
    char why[256];      /* first reason the library is ineligible */
    msl_buf out;
    int pos;            /* output: end of the last source byte copied */
    int nlabels;
    int cur_fn;
    int *decl;          /* per token: the declaring token of the local or parameter it
                         * names (scopes resolved), -1 for anything else */
} lanes;

/* ------------------------------------------------------------------ tokens */

/* Shorthands over the shared token layer (msl/msl_cursor.h). */
static int tlen(const lanes *L, int i) { return L->c.toks[i].len; }
static const char *ttext(const lanes *L, int i) { return msl_tok_text(&L->c, i); }
static int is(const lanes *L, int i, const char *s) { return msl_tok_is(&L->c, i, s); }
static int is_ident(const lanes *L, int i) { return msl_tok_ident(&L->c, i); }
static int same_text(const lanes *L, int a, int b) { return msl_tok_same(&L->c, a, b); }

static void reject(lanes *L, int at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reject(lanes *L, int at, const char *fmt, ...) {
    if (L->why[0]) return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at >= 0 && at < L->c.ntoks) {
        int line = 1;
        for (int k = 0; k < L->c.toks[at].start; k++) line += L->text[k] == '\n';
        snprintf(L->why, sizeof L->why, "%s (text line %d)", msg, line);
    } else {
        snprintf(L->why, sizeof L->why, "%s", msg);
    }
}

static int lex_lanes(lanes *L, char **err) {
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

static int push_int(int **a, int *n, int *cap, int v) {
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        int *p = realloc(*a, sizeof *p * (size_t)c);
        if (!p) return -1;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

/* ------------------------------------------------------------------ names */

/* The lanes library's simdgroup-matrix types and functions (sw_lanes.h). */
static const char *const matrix_types[] = {"simdgroup_matrix", "simdgroup_float8x8", "simdgroup_half8x8",
                                           "simdgroup_bfloat8x8", NULL};
static const char *const matrix_functions[] = {"simdgroup_load", "simdgroup_store", "simdgroup_multiply",
                                               "simdgroup_multiply_accumulate", NULL};

static int has_prefix(const lanes *L, int i, const char *p) {
    int n = (int)strlen(p);
    return is_ident(L, i) && tlen(L, i) > n && memcmp(ttext(L, i), p, (size_t)n) == 0;
}

static int is_one_of(const lanes *L, int i, const char *const *names) {
    for (int k = 0; names[k]; k++)
        if (is(L, i, names[k])) return 1;
    return 0;
}

static const char *const scalar_types[] = {"bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                           "half", "bfloat", "float", "size_t", "int8_t", "uint8_t", "int16_t",
                                           "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "unsigned",
                                           "signed", NULL};

/* float, float4, packed_float3, vec, metal-qualified or a user type. */
static int is_type_name(const lanes *L, int i) {
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
    if (is_one_of(L, i, matrix_types)) return 1;
    for (int k = 0; k < L->ntypes; k++)
        if (same_text(L, L->types[k], i)) return 1;
    return 0;
}

static int is_template_name(const lanes *L, int i) {
    if (!is_ident(L, i)) return 0;
    static const char *const known[] = {"as_type", "vec", "simdgroup_matrix", "static_cast", "reinterpret_cast",
                                        "const_cast", "numeric_limits", "is_same", "is_same_v", "sw_mk",
                                        "sw_convert", "sw_static_cast", NULL};
    for (int k = 0; known[k]; k++)
        if (is(L, i, known[k])) return 1;
    for (int k = 0; k < L->ntmpl; k++)
        if (same_text(L, L->tmpl[k], i)) return 1;
    return 0;
}

static void collect_names(lanes *L) {
    for (int i = 0; i < L->c.ntoks; i++) {
        if ((is(L, i, "struct") || is(L, i, "class") || is(L, i, "union") || is(L, i, "enum")) && is_ident(L, i + 1)) {
            int k = i + 1;
            if (is(L, k, "class") || is(L, k, "struct")) k++; /* enum class */
            if (is_ident(L, k)) push_int(&L->types, &L->ntypes, &L->captypes, k);
        } else if (is(L, i, "using") && is_ident(L, i + 1) && is(L, i + 2, "=")) {
            push_int(&L->types, &L->ntypes, &L->captypes, i + 1);
        } else if (is(L, i, "typedef")) {
            int k = i;
            while (k < L->c.ntoks && !is(L, k, ";")) {
                if (L->c.match[k] > k && (is(L, k, "(") || is(L, k, "{") || is(L, k, "["))) k = L->c.match[k];
                k++;
            }
            int name = k - 1;
            while (name > i && !is_ident(L, name)) name--;
            if (name > i) push_int(&L->types, &L->ntypes, &L->captypes, name);
        } else if (is(L, i, "template") && is(L, i + 1, "<")) {
            int end = msl_skip_angles(&L->c, i + 1, L->c.ntoks);
            if (end < 0) continue;
            for (int k = i + 2; k < end; k++)
                if ((is(L, k, "typename") || is(L, k, "class")) && is_ident(L, k + 1))
                    push_int(&L->types, &L->ntypes, &L->captypes, k + 1);
            /* the templated entity's name: the identifier before the first ( or { */
            for (int k = end; k < L->c.ntoks; k++) {
                if (is(L, k, "(") || is(L, k, "{") || is(L, k, ";")) {
                    int name = k - 1;
                    if (is(L, k, "{") || is(L, k, ";")) {
                        while (name > end && !is_ident(L, name)) name--;
                    }
                    if (is_ident(L, name)) push_int(&L->tmpl, &L->ntmpl, &L->captmpl, name);
                    break;
                }
            }
        }
    }
}

/* Identifiers the lanes code cannot run, anywhere in the text. */
static int scan_unsupported(lanes *L) {
    static const char *const words[] = {"goto", "asm", "__asm__", "thread_local", "quad_sum", "quad_shuffle",
                                        "quad_shuffle_xor", "quad_broadcast", NULL};
    for (int i = 0; i < L->c.ntoks; i++) {
        if (!is_ident(L, i)) continue;
        const char *s = ttext(L, i);
        int n = tlen(L, i);
        for (int k = 0; words[k]; k++)
            if (is(L, i, words[k])) {
                reject(L, i, "uses %s", words[k]);
                return -1;
            }
        int has_atomic = 0, allowed = 0;
        for (int k = 0; k + 6 <= n && !has_atomic; k++) has_atomic = memcmp(s + k, "atomic", 6) == 0;
        /* simdgroup_* names the lanes library provides */
        allowed |= is_one_of(L, i, matrix_types) || is_one_of(L, i, matrix_functions) ||
                   is(L, i, "simdgroup_barrier");
        /* the front end's function-scope threadgroup declarations (emitted raw) */
        allowed |= is(L, i, "sw_rt_tg_alloc") || is(L, i, "sw_rt_tg_alloc_init");
        if (allowed) continue;
        if (has_atomic || (n >= 15 && memcmp(s, "simdgroup_", 10) == 0) ||
            (n > 8 && memcmp(s, "__metal_", 8) == 0) || (n > 5 && memcmp(s, "quad_", 5) == 0) ||
            (n > 6 && memcmp(s, "sw_rt_", 6) == 0)) {
            reject(L, i, "uses %.*s", n, s);
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
static int needs_collectives(lanes *L) {
    /* calls, not names: MLX-style kernels call their parameters simd_lane_id */
    for (int i = 0; i < L->c.ntoks; i++)
        if ((is(L, i + 1, "(") && (has_prefix(L, i, "simd_") || is(L, i, "simdgroup_barrier"))) ||
            is_one_of(L, i, matrix_types) || is_one_of(L, i, matrix_functions))
            return 0;
    reject(L, -1, "no simd function or simdgroup matrix: its threads gain nothing from running together");
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
        if (has_prefix(L, k, "simd_")) {
            reject(L, k, "%.*s in %s", tlen(L, k), ttext(L, k), what);
            return -1;
        }
    return 0;
}

/* Functions defined at namespace scope: `... name ( params ) [const] { body }`. */
static int find_functions(lanes *L) {
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

static int parse_stmt(lanes *L, int i, int limit, int *next);

static int parse_paren(lanes *L, int i, int *lo, int *hi) {
    if (!is(L, i, "(") || L->c.match[i] < 0) {
        reject(L, i, "expected (");
        return -1;
    }
    *lo = i + 1;
    *hi = L->c.match[i];
    return L->c.match[i] + 1;
}

/* Statement s (for, while, switch) ends with its body, which starts at token k. */
static int finish_with_body(lanes *L, int s, int k, int limit, int *next) {
    int nk, b = parse_stmt(L, k, limit, &nk);
    if (b < 0) return -1;
    L->st[s].body = b;
    L->st[s].hi = nk;
    *next = nk;
    return s;
}

static int parse_stmt(lanes *L, int i, int limit, int *next) {
    if (i >= limit) {
        reject(L, i, "statement expected");
        return -1;
    }
    if (L->c.toks[i].kind == MSL_TK_DIRECTIVE) {
        int s = new_stmt(L, ST_DIRECTIVE, i);
        if (s < 0) return -1;
        L->st[s].hi = i + 1;
        *next = i + 1;
        return s;
    }
    if (is(L, i, "{")) {
        int close = L->c.match[i];
        int s = new_stmt(L, ST_COMPOUND, i);
        if (s < 0 || close < 0) return -1;
        int prev = -1;
        for (int k = i + 1; k < close;) {
            int nk, c = parse_stmt(L, k, close, &nk);
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
    int s, k;
    if (is(L, i, "if")) {
        if (is(L, i + 1, "constexpr")) i++;
        s = new_stmt(L, ST_IF, i);
        if (s < 0 || (k = parse_paren(L, i + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0) return -1;
        int nk, b = parse_stmt(L, k, limit, &nk);
        if (b < 0) return -1;
        L->st[s].body = b;
        if (is(L, nk, "else")) {
            int e = parse_stmt(L, nk + 1, limit, &nk);
            if (e < 0) return -1;
            L->st[s].els = e;
        }
        L->st[s].hi = nk;
        *next = nk;
        return s;
    }
    if (is(L, i, "for")) {
        s = new_stmt(L, ST_FOR, i);
        int lo, hi;
        if (s < 0 || (k = parse_paren(L, i + 1, &lo, &hi)) < 0) return -1;
        int semi1 = -1, semi2 = -1;
        for (int q = lo; q < hi; q++) {
            if (L->c.match[q] > q && (is(L, q, "(") || is(L, q, "[") || is(L, q, "{"))) q = L->c.match[q];
            else if (is(L, q, ";")) {
                if (semi1 < 0) semi1 = q;
                else if (semi2 < 0) semi2 = q;
            } else if (is(L, q, ":") && semi1 < 0) {
                reject(L, q, "range-based for");
                return -1;
            }
        }
        if (semi1 < 0 || semi2 < 0) {
            reject(L, i, "for without two semicolons");
            return -1;
        }
        lv_stmt *st = &L->st[s];
        st->a_lo = lo, st->a_hi = semi1, st->b_lo = semi1 + 1, st->b_hi = semi2, st->c_lo = semi2 + 1, st->c_hi = hi;
        return finish_with_body(L, s, k, limit, next);
    }
    if (is(L, i, "while") || is(L, i, "switch")) {
        s = new_stmt(L, is(L, i, "while") ? ST_WHILE : ST_SWITCH, i);
        if (s < 0 || (k = parse_paren(L, i + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0) return -1;
        return finish_with_body(L, s, k, limit, next);
    }
    if (is(L, i, "do")) {
        s = new_stmt(L, ST_DO, i);
        if (s < 0) return -1;
        int nk, b = parse_stmt(L, i + 1, limit, &nk);
        if (b < 0) return -1;
        L->st[s].body = b;
        if (!is(L, nk, "while") || (k = parse_paren(L, nk + 1, &L->st[s].a_lo, &L->st[s].a_hi)) < 0 ||
            !is(L, k, ";")) {
            reject(L, nk, "do without while (...);");
            return -1;
        }
        L->st[s].hi = k + 1;
        *next = k + 1;
        return s;
    }
    if (is(L, i, "case") || is(L, i, "default")) {
        s = new_stmt(L, ST_LABEL, i);
        if (s < 0) return -1;
        for (k = i + 1; k < limit && !(is(L, k, ":")); k++)
            if (L->c.match[k] > k && is(L, k, "(")) k = L->c.match[k];
        L->st[s].hi = k + 1;
        *next = k + 1;
        return s;
    }
    if (is(L, i, ";")) {
        s = new_stmt(L, ST_EMPTY, i);
        if (s < 0) return -1;
        L->st[s].hi = i + 1;
        *next = i + 1;
        return s;
    }
    int e = simple_end(L, i, limit);
    if (e < 0) {
        reject(L, i, "statement without ;");
        return -1;
    }
    int kind = is(L, i, "return") ? ST_RETURN : is(L, i, "break") ? ST_BREAK : is(L, i, "continue") ? ST_CONTINUE
                                                                                                      : ST_SIMPLE;
    s = new_stmt(L, kind, i);
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
                reject(L, q, "lambda");
                return -1;
            }
            if (is(L, q, "{") && q > i && is(L, q - 1, ")")) {
                reject(L, q, "statement expression or lambda body");
                return -1;
            }
        }
    }
    *next = e;
    return s;
}

/* ------------------------------------------------------------------ uniformity */

/* Tokens a and b name the same variable: the same declaration where either was
 * resolved to one (resolve_function), else the same text (globals, and names the
 * resolver did not see declared). */
static int same_var(const lanes *L, int a, int b) {
    int da = L->decl[a], db = L->decl[b];
    if (da >= 0 || db >= 0) return da == db;
    return same_text(L, a, b);
}

static int has_name(const lanes *L, int tok, const int *set, int n) {
    for (int k = 0; k < n; k++)
        if (same_var(L, set[k], tok)) return 1;
    return 0;
}

static int is_varying_name(const lanes *L, const lv_fn *f, int tok) {
    return has_name(L, tok, f->vnames, f->nv);
}

static int is_mem_name(const lanes *L, const lv_fn *f, int tok) { return has_name(L, tok, f->mem, f->nmem); }

static void mark(lanes *L, lv_fn *f, int tok) {
    if (tok < 0 || is_varying_name(L, f, tok)) return;
    if (push_int(&f->vnames, &f->nv, &f->capv, tok) == 0) L->changed = 1;
}

/* simd functions whose result differs between lanes */
static int varying_builtin(const lanes *L, int i) {
    static const char *const names[] = {"simd_shuffle", "simd_shuffle_xor", "simd_shuffle_up", "simd_shuffle_down",
                                        "simd_shuffle_rotate_up", "simd_shuffle_rotate_down",
                                        "simd_shuffle_and_fill_up", "simd_shuffle_and_fill_down",
                                        "simd_prefix_inclusive_sum", "simd_prefix_exclusive_sum",
                                        "simd_prefix_inclusive_product", "simd_prefix_exclusive_product",
                                        "simd_is_first", NULL};
    for (int k = 0; names[k]; k++)
        if (is(L, i, names[k])) return 1;
    return 0;
}

static int fn_returns_varying(const lanes *L, int tok) {
    for (int k = 0; k < L->nfns; k++)
        if (L->fns[k].ret_varying && same_text(L, L->fns[k].name, tok)) return 1;
    return 0;
}

static int member_name(const lanes *L, int i) { return is(L, i - 1, ".") || is(L, i - 1, "->") || is(L, i + 1, "::"); }

/* `m.thread_elements()`: a simdgroup matrix's elements as the lanes hold them */
static int lanes_view(const lanes *L, int i) {
    return is(L, i, "thread_elements") && (is(L, i - 1, ".") || is(L, i - 1, "->")) && is(L, i + 1, "(");
}

/* A `.thread_elements()` in the chain [lo, hi) (outside its indices and arguments,
 * which are only read): a store or member call there reaches the lanes' view,
 * per-lane storage inside the (uniform) matrix, not the matrix's value. */
static int has_lanes_view(const lanes *L, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (lanes_view(L, i)) return 1;
        if ((is(L, i, "[") || is(L, i, "(")) && L->c.match[i] > i) i = L->c.match[i];
    }
    return 0;
}

static int expr_varying(const lanes *L, const lv_fn *f, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (lanes_view(L, i)) return 1;
        if (!is_ident(L, i) || member_name(L, i)) continue;
        if (is_varying_name(L, f, i)) return 1;
        if ((is(L, i + 1, "(") || is(L, i + 1, "<")) && (varying_builtin(L, i) || fn_returns_varying(L, i))) return 1;
    }
    return 0;
}

/* The first identifier of the postfix chain that ends just before `end` (an
 * assignment operator or ++/--): `s[i]` -> s, `a.x` -> a, `*p` -> p. */
static int chain_base(const lanes *L, int lo, int end, int *has_sub, int *has_deref) {
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

static int is_assign_op(const lanes *L, int i) {
    static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", NULL};
    for (int k = 0; ops[k]; k++)
        if (is(L, i, ops[k])) return 1;
    return 0;
}

/* A simple statement that declares: starts with a type (after qualifiers). */
static int decl_type_end(const lanes *L, int lo, int hi) {
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
    if (!is_type_name(L, i) && !(any_qual && is_ident(L, i) && is_ident(L, i + 1))) return -1;
    /* unsigned int, long long */
    while (is_type_name(L, i + 1) && (is(L, i, "unsigned") || is(L, i, "signed") || is(L, i, "long"))) i++;
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

typedef struct lv_decl {
    int name, lo, hi;   /* declarator tokens [lo, hi) */
    int init_lo, init_hi; /* initializer expression, empty if none */
    int ptr;            /* * or & in the declarator */
    int array;
} lv_decl;

/* Splits the declarators after the type; returns their count (at most max). */
static int split_declarators(const lanes *L, int tyend, int hi, lv_decl *d, int max) {
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

static int private_target(const lanes *L, const lv_fn *f, int base);

/* The first comma at depth 0 in [lo, hi), or -1. */
static int find_top_comma(const lanes *L, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) i = L->c.match[i];
        else if (is(L, i, ",")) return i;
    }
    return -1;
}

/* An argument [lo, hi) bound to a pointer/reference parameter that is stored
 * through: whatever private storage it names may change per lane.  Not only a
 * plain name: `&a[1]`, `a + 2`, `s.x` reach a or s too, so every local or
 * parameter named outside brackets is marked (a subscript's index is only read). */
static void mark_arg_storage(lanes *L, lv_fn *f, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "[") || (is(L, i, "(") && is_ident(L, i - 1)))) {
            i = L->c.match[i]; /* an index or a call's arguments: read, not bound */
            continue;
        }
        if (is_ident(L, i) && !member_name(L, i) && private_target(L, f, i)) mark(L, f, i);
    }
}

/* Calls to the library's functions in [lo, hi): arguments flow into parameters,
 * and pointer/reference parameters flow back into the local passed. */
static void flow_calls(lanes *L, lv_fn *f, int lo, int hi, int vctl) {
    for (int i = lo; i < hi; i++) {
        if (is_ident(L, i) && (is(L, i - 1, ".") || is(L, i - 1, "->")) && is(L, i + 1, "(") && L->c.match[i + 1] > i) {
            /* a member function call `s.f(...)`, `a[j].f(...)`: it may change the
             * object, which then differs between lanes under varying control or
             * with varying arguments (a struct local: vary<S> does not compile, and
             * the library runs as fibers) */
            int sub, deref, base = chain_base(L, lo, i, &sub, &deref);
            if (base >= 0 && private_target(L, f, base) && !has_lanes_view(L, base, i + 1) &&
                (vctl || expr_varying(L, f, i + 2, L->c.match[i + 1])))
                mark(L, f, base);
            continue;
        }
        if (!is_ident(L, i) || member_name(L, i)) continue;
        int open = i + 1;
        if (is(L, open, "<") && is_template_name(L, i)) {
            open = msl_skip_angles(&L->c, open, hi);
            if (open < 0) continue;
        }
        if (!is(L, open, "(") || L->c.match[open] < 0) continue;
        int close = L->c.match[open];
        /* metal functions that store through a reference argument (the second):
         * under varying control, or for varying lanes, its storage varies */
        if (is(L, i, "sincos") || is(L, i, "modf") || is(L, i, "frexp")) {
            int comma = find_top_comma(L, open + 1, close);
            if (comma > 0 && (vctl || expr_varying(L, f, open + 1, close))) mark_arg_storage(L, f, comma + 1, close);
        }
        for (int fi = 0; fi < L->nfns; fi++) {
            lv_fn *g = &L->fns[fi];
            if (!same_text(L, g->name, i)) continue;
            if ((vctl || f->vcalled) && !g->vcalled) {
                g->vcalled = 1;
                L->changed = 1;
            }
            int arg = 0;
            for (int s = open + 1; s < close && arg < g->nparams; arg++) {
                int e = s;
                while (e < close && !is(L, e, ",")) {
                    if (L->c.match[e] > e && (is(L, e, "(") || is(L, e, "[") || is(L, e, "{"))) e = L->c.match[e];
                    e++;
                }
                lv_param *p = &g->params[arg];
                int av = expr_varying(L, f, s, e);
                if (av && !p->varying) {
                    p->varying = 1;
                    L->changed = 1;
                }
                if (p->ptr_or_ref && !p->space && !p->is_const && (p->varying || vctl)) {
                    mark_arg_storage(L, f, s, e);
                    if (!p->varying) {
                        p->varying = 1;
                        L->changed = 1;
                    }
                }
                s = e < close ? e + 1 : e;
            }
        }
    }
}

/* Note the function's device/constant/threadgroup pointers (stores through them are
 * memory, not a change of the pointer). */
static void note_mem_names(lanes *L, lv_fn *f) {
    for (int p = 0; p < f->nparams; p++)
        if (f->params[p].space && f->params[p].name >= 0) push_int(&f->mem, &f->nmem, &f->capmem, f->params[p].name);
}

/* A store through base (base[i], *base, base->x, base.a[i]) changes the
 * function's own storage, so that base may become varying: a local array or
 * struct, or a parameter passed by value or through a non-const thread
 * pointer/reference.  Device memory, and const parameters, are not. */
static int private_target(const lanes *L, const lv_fn *f, int base) {
    if (is_mem_name(L, f, base)) return 0;
    if (has_name(L, base, f->locals, f->nloc)) return 1;
    for (int p = 0; p < f->nparams; p++) {
        const lv_param *pr = &f->params[p];
        if (pr->name < 0 || !same_var(L, pr->name, base)) continue;
        return !pr->space && !(pr->ptr_or_ref && pr->is_const);
    }
    return 0;
}

static void flow_assigns(lanes *L, lv_fn *f, int start, int hi, int vctl, int is_decl);

/* One of the statements the front end writes for a function-scope threadgroup
 * variable (msl_front.c, rewrite_threadgroup_decl): `using sw_tg_v_x = T[n];`,
 * `using sw_tg_t_x = threadgroup sw_tg_v_x;`, `sw_tg_t_x &x = *(...)(sw_rt_tg_alloc..);`
 * and `(void)::sw::tg_static<...>::reg;`.  They stay as they are: the variable is
 * the simdgroup's reference into the threadgroup arena, uniform storage shared by
 * every lane (and every simdgroup), like a device pointer.  Returns 1 (and the
 * variable's token in *name, else -1), or 0 for any other statement. */
static int tg_decl_stmt(const lanes *L, int lo, int *name) {
    *name = -1;
    if (is(L, lo, "using") && has_prefix(L, lo + 1, "sw_tg_")) return 1;
    if (has_prefix(L, lo, "sw_tg_t_") && is(L, lo + 1, "&") && is_ident(L, lo + 2) && is(L, lo + 3, "=")) {
        *name = lo + 2;
        return 1;
    }
    if (is(L, lo, "(") && is(L, lo + 1, "void") && is(L, lo + 2, ")") && is(L, lo + 3, "::") && is(L, lo + 4, "sw") &&
        is(L, lo + 5, "::") && is(L, lo + 6, "tg_static"))
        return 1;
    return 0;
}

static void flow_simple(lanes *L, lv_fn *f, int lo, int hi, int vctl) {
    int tg_name;
    if (tg_decl_stmt(L, lo, &tg_name)) {
        if (tg_name >= 0 && !is_mem_name(L, f, tg_name)) push_int(&f->mem, &f->nmem, &f->capmem, tg_name);
        return;
    }
    int tyend = decl_type_end(L, lo, hi);
    int start = lo;
    if (tyend > 0) {
        lv_decl d[32];
        int nd = split_declarators(L, tyend, hi - 1, d, 32);
        int any = 0;
        for (int k = 0; k < nd; k++) {
            if (d[k].name < 0) continue;
            if (is_varying_name(L, f, d[k].name)) any = 1;
            if (d[k].init_hi > d[k].init_lo && expr_varying(L, f, d[k].init_lo, d[k].init_hi)) any = 1;
        }
        int space = 0;
        for (int k = lo; k < tyend; k++) space |= is(L, k, "device") || is(L, k, "constant") || is(L, k, "threadgroup");
        for (int k = 0; k < nd; k++) {
            if (d[k].name < 0) continue;
            if (space && d[k].ptr && !is_mem_name(L, f, d[k].name))
                push_int(&f->mem, &f->nmem, &f->capmem, d[k].name);
            if (!has_name(L, d[k].name, f->locals, f->nloc))
                push_int(&f->locals, &f->nloc, &f->caploc, d[k].name);
            if (any) mark(L, f, d[k].name);
        }
        start = tyend;
    }
    flow_calls(L, f, start, hi, vctl);
    flow_assigns(L, f, start, hi, vctl, tyend > 0);
}

/* The assignments and ++/-- anywhere in [start, hi): a statement, or a condition
 * (`while (k++ < 3)` under varying control changes k in some lanes only). */
static void flow_assigns(lanes *L, lv_fn *f, int start, int hi, int vctl, int is_decl) {
    int rhs_varying = expr_varying(L, f, start, hi);
    for (int i = start; i < hi; i++) {
        int incdec = is(L, i, "++") || is(L, i, "--");
        if (!is_assign_op(L, i) && !incdec) continue;
        if (is_decl && is(L, i, "=")) continue; /* a declarator's initializer */
        int sub, deref, base;
        if (incdec && (is_ident(L, i + 1) || is(L, i + 1, "("))) {
            /* prefix: the chain after */
            int e = i + 1;
            while (e < hi && (is_ident(L, e) || is(L, e, ".") || is(L, e, "->") || is(L, e, "[")))
                e = is(L, e, "[") && L->c.match[e] > e ? L->c.match[e] + 1 : e + 1;
            base = chain_base(L, i + 1, e, &sub, &deref);
        } else {
            base = chain_base(L, start, i, &sub, &deref);
        }
        if (base < 0) continue;
        if ((sub || deref) && !private_target(L, f, base)) continue;
        if (has_lanes_view(L, base, i)) continue; /* m.thread_elements()[0] = x: a masked store */
        if ((rhs_varying && !incdec) || vctl) mark(L, f, base);
    }
}

/* ---- scopes ----
 * Each use of a local names its declaration (L->decl), so that two locals of one
 * name in different blocks (`for (uint i ...)` in two loops, one of them varying)
 * are two variables to the analysis.  Declarations are recognised as flow_simple
 * recognises them; a use of a name declared nowhere the resolver saw keeps
 * comparing by text. */
typedef struct scope_stack {
    int *tok;
    int n, cap;
} scope_stack;

static void declare(lanes *L, scope_stack *sc, int name) {
    L->decl[name] = name;
    /* unresolved uses would be other variables to the analysis: refuse instead */
    if (push_int(&sc->tok, &sc->n, &sc->cap, name) != 0) reject(L, name, "out of memory");
}

static void resolve_range(lanes *L, const scope_stack *sc, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (!is_ident(L, i) || member_name(L, i) || L->decl[i] >= 0) continue;
        for (int k = sc->n - 1; k >= 0; k--)
            if (same_text(L, sc->tok[k], i)) {
                L->decl[i] = sc->tok[k];
                break;
            }
    }
}

/* A simple statement [lo, hi) (its ; included): a declarator's name is in scope
 * from the declarator on (its own initializer included, as in C++). */
static void resolve_simple(lanes *L, scope_stack *sc, int lo, int hi) {
    int tg_name;
    if (tg_decl_stmt(L, lo, &tg_name)) {
        if (tg_name >= 0) declare(L, sc, tg_name);
        resolve_range(L, sc, lo, hi);
        return;
    }
    int tyend = decl_type_end(L, lo, hi);
    if (tyend > 0) {
        resolve_range(L, sc, lo, tyend);
        lv_decl d[32];
        int nd = split_declarators(L, tyend, hi - 1, d, 32);
        for (int k = 0; k < nd; k++) {
            if (d[k].name >= 0) declare(L, sc, d[k].name);
            resolve_range(L, sc, d[k].lo, d[k].hi);
        }
    }
    resolve_range(L, sc, lo, hi);
}

static void resolve_stmt(lanes *L, scope_stack *sc, int s) {
    if (s < 0) return;
    const lv_stmt *st = &L->st[s];
    int outer = sc->n;
    switch (st->kind) {
    case ST_SIMPLE: resolve_simple(L, sc, st->lo, st->hi); return;
    case ST_COMPOUND:
        for (int k = st->first; k >= 0; k = L->st[k].next) resolve_stmt(L, sc, k);
        break;
    case ST_IF:
        resolve_range(L, sc, st->a_lo, st->a_hi);
        resolve_stmt(L, sc, st->body);
        sc->n = outer;
        resolve_stmt(L, sc, st->els);
        break;
    case ST_FOR:
        if (st->a_hi > st->a_lo) resolve_simple(L, sc, st->a_lo, st->a_hi + 1);
        resolve_range(L, sc, st->b_lo, st->b_hi);
        resolve_range(L, sc, st->c_lo, st->c_hi);
        resolve_stmt(L, sc, st->body);
        break;
    case ST_WHILE:
    case ST_SWITCH:
        resolve_range(L, sc, st->a_lo, st->a_hi);
        resolve_stmt(L, sc, st->body);
        break;
    case ST_DO:
        resolve_stmt(L, sc, st->body);
        sc->n = outer;
        resolve_range(L, sc, st->a_lo, st->a_hi);
        break;
    case ST_RETURN: resolve_range(L, sc, st->a_lo, st->a_hi); break;
    default: resolve_range(L, sc, st->lo, st->hi); break;
    }
    sc->n = outer;
}

static void resolve_function(lanes *L, const lv_fn *f) {
    scope_stack sc = {NULL, 0, 0};
    for (int p = 0; p < f->nparams; p++)
        if (f->params[p].name >= 0) declare(L, &sc, f->params[p].name);
    resolve_stmt(L, &sc, f->body);
    free(sc.tok);
}

typedef struct flow_ctx {
    int vctl;        /* under varying control */
    int loop_vctl;   /* varying control entered inside the innermost loop */
    int loop;        /* innermost loop statement, -1 */
    int brk_target;  /* innermost loop or switch, -1 */
} flow_ctx;

static void flow_stmt(lanes *L, lv_fn *f, int s, flow_ctx c) {
    if (s < 0 || L->why[0]) return;
    lv_stmt *st = &L->st[s];
    switch (st->kind) {
    case ST_SIMPLE: flow_simple(L, f, st->lo, st->hi, c.vctl); break;
    case ST_COMPOUND:
        for (int k = st->first; k >= 0; k = L->st[k].next) flow_stmt(L, f, k, c);
        break;
    case ST_IF: {
        flow_calls(L, f, st->a_lo, st->a_hi, c.vctl);
        flow_assigns(L, f, st->a_lo, st->a_hi, c.vctl, 0);
        if (decl_type_end(L, st->a_lo, st->a_hi) > 0) {
            reject(L, st->a_lo, "declaration in an if condition");
            return;
        }
        int v = expr_varying(L, f, st->a_lo, st->a_hi);
        if (v != st->varying) {
            st->varying = v;
            L->changed = 1;
        }
        flow_ctx d = c;
        if (v) d.vctl = d.loop_vctl = 1;
        flow_stmt(L, f, st->body, d);
        flow_stmt(L, f, st->els, d);
        break;
    }
    case ST_FOR:
    case ST_WHILE:
    case ST_DO: {
        if (st->kind == ST_FOR) {
            if (st->a_hi > st->a_lo) flow_simple(L, f, st->a_lo, st->a_hi + 1, c.vctl);
        }
        int clo = st->kind == ST_FOR ? st->b_lo : st->a_lo, chi = st->kind == ST_FOR ? st->b_hi : st->a_hi;
        flow_calls(L, f, clo, chi, c.vctl);
        if (expr_varying(L, f, clo, chi) && !st->masked) {
            st->masked = 1;
            L->changed = 1;
        }
        flow_ctx d = c;
        d.loop = s;
        d.brk_target = s;
        d.loop_vctl = 0;
        if (st->masked) d.vctl = 1;
        flow_assigns(L, f, clo, chi, d.vctl, 0); /* the condition runs under the loop's mask */
        if (st->kind == ST_FOR && st->c_hi > st->c_lo) flow_simple(L, f, st->c_lo, st->c_hi + 1, d.vctl);
        flow_stmt(L, f, st->body, d);
        break;
    }
    case ST_SWITCH: {
        flow_calls(L, f, st->a_lo, st->a_hi, c.vctl);
        flow_assigns(L, f, st->a_lo, st->a_hi, c.vctl, 0);
        if (expr_varying(L, f, st->a_lo, st->a_hi)) {
            reject(L, st->a_lo, "switch on a varying value");
            return;
        }
        flow_ctx d = c;
        d.brk_target = s;
        flow_stmt(L, f, st->body, d);
        break;
    }
    case ST_RETURN:
        flow_calls(L, f, st->a_lo, st->a_hi, c.vctl);
        flow_assigns(L, f, st->a_lo, st->a_hi, c.vctl, 0);
        if ((c.vctl || expr_varying(L, f, st->a_lo, st->a_hi)) && !f->ret_varying && !f->is_void) {
            f->ret_varying = 1;
            L->changed = 1;
        }
        if (c.vctl && !f->needs_fn) {
            f->needs_fn = 1;
            L->changed = 1;
        }
        break;
    case ST_BREAK:
    case ST_CONTINUE:
        if (st->kind == ST_BREAK && c.brk_target >= 0 && L->st[c.brk_target].kind == ST_SWITCH) {
            break;
        }
        if (c.loop < 0) {
            reject(L, st->lo, "break or continue outside a loop");
            return;
        }
        if (c.loop_vctl && !L->st[c.loop].masked) {
            L->st[c.loop].masked = 1;
            L->changed = 1;
        }
        break;
    default: break;
    }
}

/* ------------------------------------------------------------------ output */

static void out_gap(lanes *L, int upto) {
    if (upto > L->pos) {
        msl_buf_put(&L->out, L->text + L->pos, (size_t)(upto - L->pos));
        L->pos = upto;
    }
}

static void out_tok(lanes *L, int i) {
    if (L->c.toks[i].start >= L->pos) {
        out_gap(L, L->c.toks[i].start);
        msl_buf_put(&L->out, ttext(L, i), (size_t)tlen(L, i));
        L->pos = L->c.toks[i].start + L->c.toks[i].len;
    } else if (L->c.toks[i].kind != MSL_TK_DIRECTIVE) {
        msl_buf_puts(&L->out, " "); /* a repeated token (compound store) */
        msl_buf_put(&L->out, ttext(L, i), (size_t)tlen(L, i));
    }
}

static void skip_tok(lanes *L, int i) {
    if (L->c.toks[i].start >= L->pos) {
        out_gap(L, L->c.toks[i].start);
        L->pos = L->c.toks[i].start + L->c.toks[i].len;
    }
}

static void out_s(lanes *L, const char *s) { msl_buf_puts(&L->out, s); }

static void emit_expr(lanes *L, int lo, int hi);

/* Tokens of [lo, hi) as they are (array bounds, template arguments, sizeof). */
static void emit_raw(lanes *L, int lo, int hi) {
    for (int i = lo; i < hi; i++) out_tok(L, i);
}

/* Top-level (depth 0) position of a token in [lo, hi), first or last. */
static int find_top(const lanes *L, int lo, int hi, const char *op, int last) {
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
    if (!is_type_name(L, k)) return -1;
    while (is_type_name(L, k + 1) && (is(L, k, "unsigned") || is(L, k, "signed") || is(L, k, "long"))) k++;
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
static int unary_end(const lanes *L, int i, int hi) {
    while (i < hi && (is(L, i, "-") || is(L, i, "+") || is(L, i, "!") || is(L, i, "~") || is(L, i, "*") ||
                      is(L, i, "&") || is(L, i, "++") || is(L, i, "--")))
        i++;
    if (is(L, i, "(") && L->c.match[i] > i) {
        int te = cast_type_end(L, i + 1, hi);
        if (te == L->c.match[i]) return unary_end(L, te + 1, hi); /* another cast */
        i = L->c.match[i] + 1;
    } else if (is_ident(L, i) || L->c.toks[i].kind == MSL_TK_NUMBER || L->c.toks[i].kind == MSL_TK_CHAR) {
        i++;
        while (is(L, i, "::") && is_ident(L, i + 1)) i += 2;
        if (is(L, i, "<") && is_template_name(L, i - 1)) {
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
static void emit_list(lanes *L, int lo, int hi) {
    for (int s = lo; s < hi;) {
        int e = find_top(L, s, hi, ",", 0);
        if (e < 0) e = hi;
        emit_expr(L, s, e);
        if (e < hi) out_tok(L, e);
        s = e + 1;
    }
}

/* A postfix chain's subscripts become ld(base, index), built left to right into
 * a separate buffer because the call opens before the base. */
static void emit_operand(lanes *L, int lo, int hi);

static void emit_expr(lanes *L, int lo, int hi) {
    if (lo >= hi || L->why[0]) return;
    int c = find_top(L, lo, hi, ",", 0);
    if (c >= 0) {
        emit_expr(L, lo, c);
        out_tok(L, c);
        emit_expr(L, c + 1, hi);
        return;
    }
    for (int i = lo; i < hi; i++) {
        if (L->c.match[i] > i && (is(L, i, "(") || is(L, i, "[") || is(L, i, "{"))) {
            i = L->c.match[i];
            continue;
        }
        if (is_assign_op(L, i)) {
            /* an assignment inside an expression (for steps, chained =): only to a plain name */
            int sub, deref;
            chain_base(L, lo, i, &sub, &deref);
            if (sub) {
                reject(L, i, "assignment through a subscript inside an expression");
                return;
            }
            emit_expr(L, lo, i);
            out_tok(L, i);
            emit_expr(L, i + 1, hi);
            return;
        }
    }
    int q = find_top(L, lo, hi, "?", 0);
    if (q >= 0) {
        int col = ternary_colon(L, q, hi);
        if (col < 0) {
            reject(L, q, "?: without :");
            return;
        }
        out_s(L, "::sw::lv::sel(");
        emit_expr(L, lo, q);
        skip_tok(L, q);
        out_s(L, ", [&]() { return (");
        emit_expr(L, q + 1, col);
        skip_tok(L, col);
        out_s(L, "); }, [&]() { return (");
        emit_expr(L, col + 1, hi);
        out_s(L, "); })");
        return;
    }
    const char *logic[2][2] = {{"||", "::sw::lv::lor("}, {"&&", "::sw::lv::land("}};
    for (int k = 0; k < 2; k++) {
        int op = find_top(L, lo, hi, logic[k][0], 1);
        if (op < 0) continue;
        out_s(L, logic[k][1]);
        emit_expr(L, lo, op);
        skip_tok(L, op);
        out_s(L, ", [&]() { return (");
        emit_expr(L, op + 1, hi);
        out_s(L, "); })");
        return;
    }
    /* binary operators and operands, left to right */
    int operand_next = 1; /* at the start, or after an operator: a `*` here is a dereference */
    for (int i = lo; i < hi;) {
        if (is(L, i, "*") && operand_next) {
            /* *p -> ld(p, 0): p may be a varying pointer (`*(device float4 *)(x + i)`) */
            int e = unary_end(L, i + 1, hi);
            skip_tok(L, i);
            out_s(L, "::sw::lv::ld(");
            emit_expr(L, i + 1, e);
            out_s(L, ", 0)");
            i = e;
            operand_next = 0;
            continue;
        }
        /* the fiber front end's constructors and casts (msl_front.c): ::metal::sw_mk<T>(...) */
        if (is(L, i, "::") && is(L, i + 1, "metal") && is(L, i + 2, "::") &&
            (is(L, i + 3, "sw_mk") || is(L, i + 3, "sw_convert") || is(L, i + 3, "sw_static_cast"))) {
            skip_tok(L, i);
            skip_tok(L, i + 1);
            skip_tok(L, i + 2);
            i += 3;
            continue;
        }
        if (is(L, i, "metal") && is(L, i + 1, "::") &&
            (is(L, i + 2, "sw_mk") || is(L, i + 2, "sw_convert") || is(L, i + 2, "sw_static_cast"))) {
            skip_tok(L, i);
            skip_tok(L, i + 1);
            i += 2;
            continue;
        }
        if (L->c.toks[i].kind == MSL_TK_PUNCT && !is(L, i, "(") && !is(L, i, "{") && !is(L, i, "::")) {
            out_tok(L, i++);
            operand_next = 1;
            continue;
        }
        if (is(L, i, "{") && L->c.match[i] > i) {
            out_tok(L, i);
            emit_list(L, i + 1, L->c.match[i]);
            out_tok(L, L->c.match[i]);
            i = L->c.match[i] + 1;
            operand_next = 0;
            continue;
        }
        int e = unary_end(L, i, hi);
        if (e <= i) e = i + 1;
        emit_operand(L, i, e);
        i = e;
        operand_next = 0;
    }
}

/* One operand: a (possibly cast or parenthesised) primary with its postfix chain. */
static void emit_operand(lanes *L, int lo, int hi) {
    int i = lo;
    if (is(L, i, "sizeof") || is(L, i, "alignof") || is(L, i, "alignas")) {
        emit_raw(L, lo, hi);
        return;
    }
    /* C-style cast: (T) operand */
    if (is(L, i, "(") && L->c.match[i] > i) {
        int te = cast_type_end(L, i + 1, hi);
        if (te > 0 && te == L->c.match[i] && te + 1 < hi) {
            skip_tok(L, i);
            out_s(L, "::sw::lv::cast<");
            emit_raw(L, i + 1, te);
            skip_tok(L, te);
            out_s(L, ">(");
            emit_expr(L, te + 1, hi);
            out_s(L, ")");
            return;
        }
    }
    /* postfix chain: compute how many ld( open before the primary */
    int nsub = 0;
    int p_end; /* end of the primary */
    int fcast = 0, scast = 0;
    if (is(L, i, "(") && L->c.match[i] > i) p_end = L->c.match[i] + 1;
    else if (is(L, i, "static_cast") && is(L, i + 1, "<")) {
        p_end = msl_skip_angles(&L->c, i + 1, hi);
        if (p_end < 0 || !is(L, p_end, "(")) {
            reject(L, i, "static_cast");
            return;
        }
        scast = 1;
    } else if (type_end(L, i, hi) > 0 && is(L, type_end(L, i, hi), "(")) {
        p_end = type_end(L, i, hi);
        fcast = 1;
    } else {
        p_end = i + 1;
        while (is(L, p_end, "::") && is_ident(L, p_end + 1)) p_end += 2;
        if (is(L, p_end, "<") && is_template_name(L, p_end - 1)) {
            int e = msl_skip_angles(&L->c, p_end, hi);
            if (e > 0) p_end = e;
        }
    }
    for (int k = p_end; k < hi;) {
        if (is(L, k, "[") && L->c.match[k] > k) nsub++;
        if ((is(L, k, "[") || is(L, k, "(")) && L->c.match[k] > k) k = L->c.match[k] + 1;
        else k++;
    }
    for (int k = 0; k < nsub; k++) out_s(L, "::sw::lv::ld(");
    /* prefix operators */
    int k = lo;
    if (is(L, k, "(") && !fcast && !scast) {
        out_tok(L, k);
        emit_expr(L, k + 1, L->c.match[k]);
        out_tok(L, L->c.match[k]);
        k = L->c.match[k] + 1;
    } else if (fcast) {
        out_s(L, "::sw::lv::cast<");
        emit_raw(L, lo, p_end);
        out_s(L, ">");
        k = p_end;
        out_tok(L, k);
        emit_list(L, k + 1, L->c.match[k]);
        out_tok(L, L->c.match[k]);
        k = L->c.match[k] + 1;
    } else if (scast) {
        skip_tok(L, lo);
        out_s(L, "::sw::lv::cast");
        emit_raw(L, lo + 1, p_end);
        k = p_end;
        out_tok(L, k);
        emit_expr(L, k + 1, L->c.match[k]);
        out_tok(L, L->c.match[k]);
        k = L->c.match[k] + 1;
    } else if (is(L, lo, "sw_mk") || is(L, lo, "sw_convert") || is(L, lo, "sw_static_cast")) {
        /* vectors and conversions of varying values: the lanes' cast (same bits;
         * sw_static_cast<T> is static_cast<T> but for half/bfloat and vector T,
         * which convert as sw_convert does, and so does cast) */
        skip_tok(L, lo);
        out_s(L, "::sw::lv::cast");
        emit_raw(L, lo + 1, p_end);
        k = p_end;
    } else {
        /* simd functions by their lanes name, `metal::simd_sum` too: the fiber
         * versions of some are plain functions that would synchronise through the
         * executor */
        int name = lo;
        if (p_end == lo + 3 && is(L, lo, "metal") && is(L, lo + 1, "::") && !is(L, lo - 1, "::")) name = lo + 2;
        if (p_end == name + 1 && (has_prefix(L, name, "simd_") || is(L, name, "simdgroup_barrier")) &&
            is(L, name + 1, "(") && (name > lo || !is(L, lo - 1, "::"))) {
            for (int q = lo; q < name; q++) skip_tok(L, q);
            out_gap(L, L->c.toks[name].start);
            out_s(L, "::sw::lv::");
            emit_raw(L, name, p_end);
        } else {
            emit_raw(L, lo, p_end);
        }
        k = p_end;
    }
    while (k < hi) {
        if (is(L, k, "[") && L->c.match[k] > k) {
            skip_tok(L, k);
            out_s(L, ", ");
            emit_expr(L, k + 1, L->c.match[k]);
            skip_tok(L, L->c.match[k]);
            out_s(L, ")");
            k = L->c.match[k] + 1;
        } else if (is(L, k, "(") && L->c.match[k] > k) {
            out_tok(L, k);
            emit_list(L, k + 1, L->c.match[k]);
            out_tok(L, L->c.match[k]);
            k = L->c.match[k] + 1;
        } else {
            out_tok(L, k++);
        }
    }
}

/* Rewrites a type at [lo, hi) of a varying declaration: the base type (after
 * qualifiers) goes inside vary<...>. */
static void emit_vary_type(lanes *L, int lo, int tyend) {
    static const char *const quals[] = {"const", "thread", "volatile", NULL};
    int i = lo;
    out_gap(L, L->c.toks[lo].start);
    for (;;) {
        int q = 0;
        for (int k = 0; quals[k]; k++) q |= is(L, i, quals[k]);
        if (!q) break;
        out_tok(L, i++);
    }
    int e = tyend;
    while (e > i && (is(L, e - 1, "const") || is(L, e - 1, "thread"))) e--;
    if (is(L, i, "auto")) {
        emit_raw(L, i, tyend);
        return;
    }
    out_gap(L, L->c.toks[i].start);
    out_s(L, "::sw::lv::vary<");
    emit_raw(L, i, e);
    out_s(L, ">");
    emit_raw(L, e, tyend);
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
        reject(L, lo, "varying auto declaration of this form");
        return;
    }
    char tmp[32];
    snprintf(tmp, sizeof tmp, "_sw_a%d", L->nlabels++);
    out_gap(L, L->c.toks[lo].start);
    for (int k = lo; k < d->init_lo; k++) skip_tok(L, k);
    out_s(L, "auto ");
    out_s(L, tmp);
    out_s(L, " = ");
    emit_expr(L, d->init_lo, d->init_hi);
    out_tok(L, hi - 1);
    out_s(L, " ");
    for (int k = lo; k < tyend; k++)
        if (!is(L, k, "auto")) {
            msl_buf_put(&L->out, ttext(L, k), (size_t)tlen(L, k));
            out_s(L, " ");
        }
    out_s(L, "::sw::lv::vary<::sw::lv::lane_t<decltype(");
    out_s(L, tmp);
    out_s(L, ")>> ");
    msl_buf_put(&L->out, ttext(L, d->name), (size_t)tlen(L, d->name));
    out_s(L, " = ");
    out_s(L, tmp);
    out_s(L, ";");
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
        out_s(L, pass == 0 ? "::sw::lv::st(" : "::sw::lv::ld(");
        if (ilo < 0) {
            emit_expr(L, blo, bhi);
            out_s(L, ", 0");
        } else {
            emit_operand(L, blo, bhi);
            if (pass == 0) skip_tok(L, bhi); /* [ */
            out_s(L, ", ");
            emit_expr(L, ilo, ihi);
            if (pass == 0) skip_tok(L, ihi); /* ] */
        }
        out_s(L, pass == 0 ? ", " : ") ");
        if (pass == 0) {
            int compound = op >= 0 && !is(L, op, "=");
            if (op >= 0) skip_tok(L, op);
            if (!compound && incdec < 0) break;
        }
    }
    if (incdec >= 0) {
        out_s(L, is(L, incdec, "++") ? "+ 1" : "- 1");
        if (incdec != lo) skip_tok(L, incdec);
    } else if (!is(L, op, "=")) {
        msl_buf_put(&L->out, ttext(L, op), (size_t)tlen(L, op) - 1);
        out_s(L, " (");
        emit_expr(L, op + 1, e);
        out_s(L, ")");
    } else {
        emit_expr(L, op + 1, e);
    }
    out_s(L, ")");
    out_tok(L, e);
}

static void emit_simple(lanes *L, lv_fn *f, int lo, int hi) {
    int tyend = decl_type_end(L, lo, hi);
    if (tyend > 0) {
        lv_decl d[32];
        int nd = split_declarators(L, tyend, hi - 1, d, 32);
        int vary = 0;
        for (int k = 0; k < nd; k++)
            if (d[k].name >= 0 && is_varying_name(L, f, d[k].name)) vary = 1;
        if (vary) {
            for (int k = lo; k < tyend; k++)
                if (is(L, k, "constexpr") || is(L, k, "static") || is(L, k, "device") || is(L, k, "constant") ||
                    is(L, k, "threadgroup")) {
                    reject(L, k, "varying %.*s declaration", tlen(L, k), ttext(L, k));
                    return;
                }
            /* `thread auto &e = m.thread_elements();`: a reference to the lanes'
             * view of a simdgroup matrix, which is a vary already */
            if (nd == 1 && d[0].ptr && d[0].init_hi > d[0].init_lo && lanes_view(L, d[0].init_hi - 3) &&
                is(L, d[0].init_hi - 1, ")") && find_top(L, lo, tyend, "auto", 0) >= 0) {
                emit_raw(L, lo, d[0].init_lo);
                emit_expr(L, d[0].init_lo, d[0].init_hi);
                emit_raw(L, d[0].init_hi, hi);
                return;
            }
            for (int k = 0; k < nd; k++)
                if (d[k].ptr) {
                    reject(L, d[k].lo, "varying pointer or reference local");
                    return;
                }
            for (int k = lo; k < tyend; k++)
                if (is(L, k, "auto")) {
                    emit_vary_auto(L, lo, tyend, d, nd, hi);
                    return;
                }
            emit_vary_type(L, lo, tyend);
        } else {
            emit_raw(L, lo, tyend);
        }
        for (int k = 0; k < nd; k++) {
            int init_lo = d[k].init_lo, init_hi = d[k].init_hi;
            if (init_hi <= init_lo) {
                emit_raw(L, d[k].lo, d[k].hi);
            } else {
                emit_raw(L, d[k].lo, init_lo);
                if (is(L, init_lo - 1, "{") || is(L, init_lo - 1, "(")) emit_list(L, init_lo, init_hi);
                else if (is(L, init_lo, "{") && L->c.match[init_lo] == init_hi - 1) {
                    out_tok(L, init_lo);
                    emit_list(L, init_lo + 1, init_hi - 1);
                    out_tok(L, init_hi - 1);
                } else emit_expr(L, init_lo, init_hi);
                emit_raw(L, init_hi, d[k].hi);
            }
            if (d[k].hi < hi - 1) out_tok(L, d[k].hi); /* , */
        }
        out_tok(L, hi - 1);
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
        if (is_assign_op(L, i)) {
            op = i;
            break;
        }
    }
    int incdec = -1;
    if (op < 0 && (is(L, e - 1, "++") || is(L, e - 1, "--"))) incdec = e - 1;
    if (op < 0 && (is(L, lo, "++") || is(L, lo, "--"))) incdec = lo;
    int llo = incdec == lo ? lo + 1 : lo, lhi = op >= 0 ? op : incdec >= 0 ? (incdec == lo ? e : incdec) : -1;
    if (lhi > llo + 1 && is(L, llo, "*") && unary_end(L, llo + 1, lhi) == lhi) {
        /* *p = v -> st(p, 0, v); *p op= v -> st(p, 0, ld(p, 0) op (v)) */
        for (int k = llo + 1; k < lhi; k++)
            if (is(L, k, "++") || is(L, k, "--") || is_assign_op(L, k)) {
                reject(L, k, "side effect in a stored-to pointer");
                return;
            }
        if (incdec == lo) skip_tok(L, lo);
        skip_tok(L, llo);
        emit_store(L, op, incdec, lo, e, llo + 1, lhi, -1, -1);
        return;
    }
    if (lhi > llo && is(L, lhi - 1, "]") && L->c.match[lhi - 1] > llo) {
        /* a[i][j] = v -> st(ld(a, i), j, v): ld of a uniform index hands out the row
         * itself (a varying one does not compile: fibers) */
        int ob = L->c.match[lhi - 1];
        for (int k = ob; k < lhi; k++)
            if (is(L, k, "++") || is(L, k, "--") || is_assign_op(L, k)) {
                reject(L, k, "side effect in a stored-to index");
                return;
            }
        if (incdec == lo) skip_tok(L, lo);
        emit_store(L, op, incdec, lo, e, llo, ob, ob + 1, lhi - 1);
        return;
    }
    emit_expr(L, lo, e);
    out_tok(L, e);
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
    if (c.jump == JUMP_BREAK) out_s(L, " if (!::sw::lv::any()) break;");
    else if (c.jump == JUMP_CONTINUE) out_s(L, " if (!::sw::lv::any()) continue;");
    else if (f->is_void) out_s(L, " if (!::sw::lv::any()) return;");
    else out_s(L, " if (!::sw::lv::any()) return _sw_F.result();");
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
    out_s(L, "{ do {");
    emit_ctx d = c;
    d.jump = JUMP_BREAK;
    int r = emit_stmt(L, f, s, d);
    if (r) emit_check(L, f, d);
    out_s(L, "} while (0); }");
    return r;
}

/* A statement used as the body of if/for/while: braces added when a check must
 * follow it inside. */
static int emit_body(lanes *L, lv_fn *f, int s, emit_ctx c) {
    out_s(L, "{");
    int r = emit_stmt(L, f, s, c);
    if (r) emit_check(L, f, c);
    out_s(L, "}");
    return r;
}

static void emit_cond(lanes *L, int lo, int hi, int varying) {
    if (varying) {
        emit_expr(L, lo, hi);
        return;
    }
    out_s(L, "::sw::lv::u(");
    emit_expr(L, lo, hi);
    out_s(L, ")");
}

static int emit_stmt(lanes *L, lv_fn *f, int s, emit_ctx c) {
    if (s < 0 || L->why[0]) return 0;
    lv_stmt *st = &L->st[s];
    int label = L->nlabels++;
    char buf[160];
    switch (st->kind) {
    case ST_DIRECTIVE:
    case ST_EMPTY:
    case ST_LABEL:
        emit_raw(L, st->lo, st->hi);
        return 0;
    case ST_SIMPLE: {
        int tg_name;
        if (tg_decl_stmt(L, st->lo, &tg_name)) {
            emit_raw(L, st->lo, st->hi);
            return 0;
        }
        /* A barrier is the simdgroup's (one fiber per simdgroup, exec.c): every lane
         * must be there, so never under varying control, nor in a function called
         * there. */
        for (int k = st->lo; k < st->hi; k++)
            if (is(L, k, "threadgroup_barrier") && (c.vctl || f->vcalled)) {
                reject(L, k, "threadgroup_barrier %s",
                       c.vctl ? "under varying control" : "in a function called under varying control");
                return 0;
            }
        emit_simple(L, f, st->lo, st->hi);
        return 0;
    }
    case ST_COMPOUND: {
        out_tok(L, st->lo);
        int any = 0;
        for (int k = st->first; k >= 0; k = L->st[k].next) {
            int r = emit_stmt(L, f, k, c);
            if (r) emit_check(L, f, c);
            any |= r;
        }
        out_tok(L, st->hi - 1);
        return any;
    }
    case ST_IF: {
        int body = st->body, els = st->els;
        if (st->varying) {
            snprintf(buf, sizeof buf, "{ ::sw::lv::branch _sw_b%d(", label);
            out_s(L, buf);
            skip_tok(L, st->lo - (is(L, st->lo, "constexpr") ? 1 : 0));
            skip_tok(L, st->lo);
            skip_tok(L, st->a_lo - 1);
            emit_expr(L, st->a_lo, st->a_hi);
            skip_tok(L, st->a_hi);
            snprintf(buf, sizeof buf, "); if (_sw_b%d.then_()) ", label);
            out_s(L, buf);
            emit_ctx d = c;
            d.vctl = 1;
            d.target_vctl = 1;
            int r = emit_branch_body(L, f, body, d);
            if (els >= 0) {
                skip_tok(L, L->st[body].hi);
                snprintf(buf, sizeof buf, " if (_sw_b%d.else_()) ", label);
                out_s(L, buf);
                r |= emit_branch_body(L, f, els, d);
            }
            out_s(L, " }");
            return r;
        }
        out_tok(L, st->lo); /* if, or the constexpr after it */
        out_tok(L, st->a_lo - 1);
        if (is(L, st->lo, "constexpr")) emit_expr(L, st->a_lo, st->a_hi);
        else emit_cond(L, st->a_lo, st->a_hi, 0);
        out_tok(L, st->a_hi);
        int r = emit_body(L, f, body, c);
        if (els >= 0) {
            out_tok(L, L->st[body].hi);
            r |= emit_body(L, f, els, c);
        }
        return r;
    }
    case ST_FOR:
    case ST_WHILE:
    case ST_DO: {
        emit_ctx d = c;
        d.loop = s;
        d.target = s;
        d.target_vctl = 0;
        d.jump = st->masked ? JUMP_CONTINUE : JUMP_BREAK;
        if (st->masked) d.vctl = 1;
        int r;
        if (!st->masked) {
            if (st->kind == ST_DO) {
                out_tok(L, st->lo);
                r = emit_body(L, f, st->body, d);
                int w = L->st[st->body].hi;
                out_tok(L, w);
                out_tok(L, w + 1);
                emit_cond(L, st->a_lo, st->a_hi, 0);
                emit_raw(L, st->a_hi, st->hi);
                return r;
            }
            out_tok(L, st->lo);
            out_tok(L, st->lo + 1);
            if (st->kind == ST_FOR) {
                if (st->a_hi > st->a_lo) emit_simple(L, f, st->a_lo, st->a_hi + 1);
                else out_tok(L, st->a_hi);
                if (st->b_hi > st->b_lo) emit_cond(L, st->b_lo, st->b_hi, 0);
                out_tok(L, st->b_hi);
                emit_expr(L, st->c_lo, st->c_hi);
                out_tok(L, st->c_hi);
            } else {
                emit_cond(L, st->a_lo, st->a_hi, 0);
                out_tok(L, st->a_hi);
            }
            r = emit_body(L, f, st->body, d);
            return r;
        }
        /* masked: { init; loop L; for (; L.test(c); L.next(), step) body } */
        out_s(L, "{ ");
        if (st->kind == ST_DO) {
            snprintf(buf, sizeof buf, "::sw::lv::loop _sw_l%d; ", label);
            out_s(L, buf);
            out_tok(L, st->lo);
            r = emit_body(L, f, st->body, d);
            int w = L->st[st->body].hi;
            out_tok(L, w);
            out_tok(L, w + 1);
            snprintf(buf, sizeof buf, "_sw_l%d.next(), _sw_l%d.test(", label, label);
            out_s(L, buf);
            emit_expr(L, st->a_lo, st->a_hi);
            out_s(L, ")");
            emit_raw(L, st->a_hi, st->hi);
            out_s(L, " }");
            return f->needs_fn && r; /* brk/cnt end here; a return inside: the caller checks */
        }
        skip_tok(L, st->lo);
        skip_tok(L, st->lo + 1);
        if (st->kind == ST_FOR) {
            if (st->a_hi > st->a_lo) emit_simple(L, f, st->a_lo, st->a_hi + 1);
            else skip_tok(L, st->a_hi);
        }
        snprintf(buf, sizeof buf, " ::sw::lv::loop _sw_l%d; for (; _sw_l%d.test(", label, label);
        out_s(L, buf);
        int clo = st->kind == ST_FOR ? st->b_lo : st->a_lo, chi = st->kind == ST_FOR ? st->b_hi : st->a_hi;
        if (chi > clo) emit_expr(L, clo, chi);
        else out_s(L, "true");
        if (st->kind == ST_FOR) skip_tok(L, st->b_hi);
        snprintf(buf, sizeof buf, "); _sw_l%d.next()", label);
        out_s(L, buf);
        if (st->kind == ST_FOR && st->c_hi > st->c_lo) {
            out_s(L, ", ");
            emit_expr(L, st->c_lo, st->c_hi);
        }
        skip_tok(L, st->kind == ST_FOR ? st->c_hi : st->a_hi);
        out_s(L, ") ");
        r = emit_body(L, f, st->body, d);
        out_s(L, " }");
        return f->needs_fn && r; /* a return inside: the caller checks */
    }
    case ST_SWITCH: {
        emit_ctx d = c;
        d.target = s;
        d.target_vctl = 0;
        d.jump = JUMP_BREAK;
        out_tok(L, st->lo);
        out_tok(L, st->a_lo - 1);
        emit_cond(L, st->a_lo, st->a_hi, 0);
        out_tok(L, st->a_hi);
        return emit_stmt(L, f, st->body, d);
    }
    case ST_RETURN: {
        if (!f->needs_fn) {
            out_tok(L, st->lo);
            emit_expr(L, st->a_lo, st->a_hi);
            out_tok(L, st->hi - 1);
            return 0;
        }
        skip_tok(L, st->lo);
        out_s(L, "{ _sw_F.ret(");
        emit_expr(L, st->a_lo, st->a_hi);
        out_s(L, ");");
        skip_tok(L, st->hi - 1);
        if (!c.vctl) out_s(L, f->is_void ? " return;" : " return _sw_F.result();");
        out_s(L, " }");
        return c.vctl;
    }
    case ST_BREAK:
    case ST_CONTINUE: {
        int to_switch = st->kind == ST_BREAK && c.target >= 0 && L->st[c.target].kind == ST_SWITCH;
        if (to_switch || c.loop < 0 || !L->st[c.loop].masked) {
            if (to_switch && c.target_vctl) {
                reject(L, st->lo, "break out of a switch under varying control");
                return 0;
            }
            emit_raw(L, st->lo, st->hi);
            return 0;
        }
        skip_tok(L, st->lo);
        out_s(L, st->kind == ST_BREAK ? "::sw::lv::brk()" : "::sw::lv::cnt()");
        out_tok(L, st->hi - 1);
        return 1;
    }
    }
    return 0;
}

/* ------------------------------------------------------------------ driver */

static int attr_varying(int attr) {
    return attr == SW_ATTR_THREAD_POSITION_IN_GRID || attr == SW_ATTR_THREAD_POSITION_IN_THREADGROUP ||
           attr == SW_ATTR_THREAD_INDEX_IN_THREADGROUP || attr == SW_ATTR_THREAD_INDEX_IN_SIMDGROUP ||
           attr == SW_ATTR_THREAD_INDEX_IN_QUADGROUP || attr == SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP;
}

static void seed_kernels(lanes *L) {
    for (int fi = 0; fi < L->nfns; fi++) {
        lv_fn *f = &L->fns[fi];
        if (f->kernel < 0) continue;
        const msl_kernel *k = &L->u->kernels[f->kernel];
        for (int b = 0; b < k->nbindings; b++) {
            if (k->bindings[b].kind != SW_BIND_ATTR || !attr_varying(k->bindings[b].index)) continue;
            for (int p = 0; p < f->nparams; p++) {
                int nm = f->params[p].name;
                if (nm >= 0 && (int)strlen(k->bindings[b].param) == tlen(L, nm) &&
                    memcmp(k->bindings[b].param, ttext(L, nm), (size_t)tlen(L, nm)) == 0)
                    f->params[p].varying = 1;
            }
        }
    }
}

static void emit_function(lanes *L, lv_fn *f) {
    /* return type */
    if (f->ret_varying) {
        int lo = f->decl_lo, name = f->name;
        for (int k = lo; k < name; k++)
            if (is(L, k, "auto") || is(L, k, "*") || is(L, k, "&")) {
                reject(L, k, "varying return of this type");
                return;
            }
        emit_vary_type(L, lo, name);
    }
    /* parameters */
    for (int p = 0; p < f->nparams; p++) {
        lv_param *pr = &f->params[p];
        if (!pr->varying) continue;
        if (pr->space) {
            reject(L, pr->lo, "varying device/constant/threadgroup pointer parameter");
            return;
        }
        int tyend = pr->name >= 0 ? pr->name : pr->hi;
        while (tyend > pr->lo && (is(L, tyend - 1, "*") || is(L, tyend - 1, "&") || is(L, tyend - 1, "const") ||
                                  is(L, tyend - 1, "thread")))
            tyend--;
        emit_vary_type(L, pr->lo, tyend);
    }
    out_tok(L, f->body_open);
    if (f->needs_fn) {
        /* the accumulator has the (rewritten) return type: its tokens again */
        out_s(L, " ::sw::lv::fn<");
        if (f->is_void) out_s(L, "void");
        else if (f->ret_varying) {
            out_s(L, "::sw::lv::vary<");
            for (int k = f->decl_lo; k < f->name; k++)
                if (!is(L, k, "const") && !is(L, k, "thread")) out_tok(L, k);
            out_s(L, ">");
        } else {
            for (int k = f->decl_lo; k < f->name; k++) out_tok(L, k);
        }
        out_s(L, "> _sw_F;");
    }
    emit_ctx c = {0, -1, -1, 0, JUMP_RETURN};
    lv_stmt *body = &L->st[f->body];
    for (int k = body->first; k >= 0; k = L->st[k].next)
        if (emit_stmt(L, f, k, c)) emit_check(L, f, c);
    if (f->needs_fn && !f->is_void) out_s(L, " return _sw_F.result();");
    out_tok(L, f->body_close);
}

char *msl_lanes_rewrite(const msl_unit *u, char **why) {
    lanes L;
    memset(&L, 0, sizeof L);
    L.text = u->text;
    L.u = u;
    char *err = NULL;
    char *result = NULL;
    *why = NULL;
    if (lex_lanes(&L, &err) != 0) {
        msl_lexed_free(&L.c);
        free(L.decl);
        *why = err;
        return NULL;
    }
    collect_names(&L);
    if (scan_unsupported(&L) != 0 || needs_collectives(&L) != 0) goto done;
    if (find_functions(&L) != 0) {
        reject(&L, -1, "could not find the functions"); /* (unless it said why) */
        goto done;
    }
    for (int fi = 0; fi < L.nfns && !L.why[0]; fi++) {
        L.cur_fn = fi;
        int next;
        L.fns[fi].body = parse_stmt(&L, L.fns[fi].body_open, L.fns[fi].body_close + 1, &next);
        if (L.fns[fi].body < 0 && !L.why[0]) reject(&L, L.fns[fi].body_open, "could not parse the body");
        if (L.why[0]) break;
        resolve_function(&L, &L.fns[fi]);
        note_mem_names(&L, &L.fns[fi]);
    }
    if (L.why[0]) goto done;
    seed_kernels(&L);
    for (int it = 0; it < 100; it++) {
        L.changed = 0;
        for (int fi = 0; fi < L.nfns && !L.why[0]; fi++) {
            lv_fn *f = &L.fns[fi];
            for (int p = 0; p < f->nparams; p++)
                if (f->params[p].varying && f->params[p].name >= 0) mark(&L, f, f->params[p].name);
            for (int p = 0; p < f->nparams; p++)
                if (!f->params[p].varying && f->params[p].name >= 0 && is_varying_name(&L, f, f->params[p].name)) {
                    f->params[p].varying = 1;
                    L.changed = 1;
                }
            flow_ctx c = {0, 0, -1, -1};
            flow_stmt(&L, f, f->body, c);
        }
        if (L.why[0] || !L.changed) break;
    }
    if (L.why[0]) goto done;
    /* same-name overloads and instantiations share one verdict per parameter */
    for (int fi = 0; fi < L.nfns; fi++) {
        lv_fn *f = &L.fns[fi];
        emit_function(&L, f);
        if (L.why[0]) goto done;
    }
    out_gap(&L, (int)strlen(L.text));
    result = msl_buf_take(&L.out);
    if (!result) reject(&L, -1, "out of memory");
done:
    if (!result) {
        free(L.out.p);
        *why = strdup(L.why[0] ? L.why : "not rewritten");
    }
    for (int fi = 0; fi < L.nfns; fi++) {
        free(L.fns[fi].params);
        free(L.fns[fi].vnames);
        free(L.fns[fi].mem);
        free(L.fns[fi].locals);
    }
    free(L.fns);
    free(L.st);
    msl_lexed_free(&L.c);
    free(L.decl);
    free(L.types);
    free(L.tmpl);
    return result;
}
