/* msl_front_rewrite.c — the front end's rewrites inside bodies and expressions,
 * each an edit of the text (msl_front.c applies them) that keeps every line.
 *
 * Reads the collapsed tokens (f->c) and the kernels the walk found
 * (msl_front_decls.c).  Writes edits: function-scope threadgroup declarations
 * as references into the threadgroup arena, vector constructors and casts the
 * prelude's types accept, conditional operands, string and braced arguments,
 * arrays in an address space, discarded atomic fetch-ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front_internal.h"

/* ---------------------------------------------- function-scope threadgroup */

/* tk[i] is `threadgroup` at the start of a statement inside a function. */
int fe_rewrite_threadgroup_decl(front *f, int i, const char *kernel_ref) {
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
    if (!type) return fe_fail(f, i, "out of memory");
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
            while (e < f->c.ntoks && !tk_is(f, e, ",") && !tk_is(f, e, ";"))
                e = f->c.match[e] > e ? f->c.match[e] + 1 : e + 1;
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
            fe_fail(f, k, "unsupported threadgroup declaration: expected ', name' or ';' here");
            break;
        }
        d = k + 1;
    }
    free(type);
    char *repl = msl_buf_take(&out);
    if (end < 0 || f->err) {
        free(repl);
        return fe_fail(f, i, "unsupported threadgroup declaration");
    }
    if (!repl) return fe_fail(f, i, "out of memory");
    return fe_add_edit(f, f->c.toks[i].start, f->c.toks[end].start + f->c.toks[end].len, repl);
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

int fe_rewrite_threadgroup_decls(front *f) {
    /* stack of open brackets: 'n' namespace brace, 'b' other brace, 'p' paren */
    char *kind = malloc((size_t)f->c.ntoks + 1);
    if (!kind) return fe_fail(f, -1, "out of memory");
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
                    fe_add_edit(f, f->c.toks[start].start, f->c.toks[i].start, NULL);
                }
                fe_rewrite_threadgroup_decl(f, i, body_depth >= 0 ? ref : NULL);
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
        else if (tk_is(f, i, "typedef") && (e = vector_type_end(f, i + 1)) > 0 && tk_ident(f, e) &&
                 tk_is(f, e + 1, ";"))
            name = e;
        if (name < 0 || is_vector_type_name(tk_text(f, name), f->c.toks[name].len)) continue;
        char **na = realloc(f->vec_aliases, sizeof *na * (size_t)(f->nvec_aliases + 1));
        char *nm = tk_dup(f, name);
        if (!na || !nm) {
            free(nm);
            if (na) f->vec_aliases = na;
            return fe_fail(f, i, "out of memory");
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

/* Names of template type parameters (`template <typename T, class TC = float>`):
 * `(TC) x` may be a vector conversion once TC is known, which only the compiler
 * can tell, so such casts go through ::metal::sw_ccast. */
static int collect_type_params(front *f) {
    for (int i = 0; i + 1 < f->c.ntoks; i++) {
        if (!tk_is(f, i, "template") || !tk_is(f, i + 1, "<")) continue;
        int end = msl_skip_angles(&f->c, i + 1, f->c.ntoks);
        for (int j = i + 2; end > 0 && j + 1 < end; j++) {
            if (!(tk_is(f, j, "typename") || tk_is(f, j, "class")) || !tk_ident(f, j + 1)) continue;
            if (!(tk_is(f, j + 2, ",") || tk_is(f, j + 2, "=") || j + 2 == end - 1)) continue;
            char **na = realloc(f->type_params, sizeof *na * (size_t)(f->ntype_params + 1));
            char *nm = tk_dup(f, j + 1);
            if (!na || !nm) {
                free(nm);
                if (na) f->type_params = na;
                return fe_fail(f, j, "out of memory");
            }
            f->type_params = na;
            f->type_params[f->ntype_params++] = nm;
        }
    }
    return 0;
}

static int is_type_param(const front *f, int i) {
    for (int k = 0; k < f->ntype_params; k++)
        if (tk_is(f, i, f->type_params[k])) return 1;
    return 0;
}

/* Is tk[i] a comparison operator (< > <= >= == !=) at the top level of an
 * expression?  `<` of a template's arguments (`f<4>(x)`) and shifts are not. */
static int comparison_at(const front *f, int i, int *skip_to) {
    *skip_to = i;
    if (tk_is(f, i, "<") && tk_ident(f, i - 1)) {
        int gt = msl_skip_angles(&f->c, i, f->c.ntoks);
        if (gt > 0 && (tk_is(f, gt, "(") || tk_is(f, gt, "::"))) {
            *skip_to = gt - 1;
            return 0;
        }
    }
    if (tk_is(f, i, "<") || tk_is(f, i, ">")) {
        const char *c = tk_is(f, i, "<") ? "<" : ">";
        return !tk_is(f, i - 1, c) && !tk_is(f, i + 1, c) && !tk_is(f, i - 1, "-");
    }
    if (tk_is(f, i, "=") && tk_is(f, i + 1, "="))
        return !tk_is(f, i - 1, "=") && !tk_is(f, i - 1, "!") && !tk_is(f, i - 1, "<") && !tk_is(f, i - 1, ">");
    return tk_is(f, i, "!") && tk_is(f, i + 1, "=");
}

/* The arguments of the group at tk[lp] that are comparisons (`T(x > 0)`,
 * `float4(a < b)`) are MSL bool vectors, which clang makes int vectors of 0/-1:
 * each becomes ::metal::sw_truth(arg), a bool vector, so the conversion gives 1. */
static int wrap_truth_args(front *f, int lp) {
    int rp = f->c.match[lp], a = lp + 1, found = 0;
    for (int j = lp + 1; j <= rp && !f->err; j++) {
        if (j < rp && f->c.match[j] > j && !tk_is(f, j, "<")) {
            j = f->c.match[j];
            continue;
        }
        if (j == rp || tk_is(f, j, ",")) {
            if (found && j > a) {
                char *open = strdup("::metal::sw_truth("), *close = strdup(")");
                if (!open || !close) {
                    free(open);
                    free(close);
                    return fe_fail(f, lp, "out of memory");
                }
                int e = f->c.toks[j - 1].start + f->c.toks[j - 1].len;
                fe_add_edit(f, f->c.toks[a].start, f->c.toks[a].start, open);
                fe_add_edit(f, e, e, close);
            }
            a = j + 1;
            found = 0;
            continue;
        }
        int skip;
        if (comparison_at(f, j, &skip)) found = 1;
        j = skip;
    }
    return f->err ? -1 : 0;
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
    if (!t) return fe_fail(f, i, "out of memory");
    return fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + n, t) ? -1 : 1;
}

/* ------------------------------------------------ conditional operands */

static int add_edit_ordered(front *f, int pos, const char *text, int order) {
    char *t = strdup(text);
    if (!t) return fe_fail(f, -1, "out of memory");
    if (fe_add_edit(f, pos, pos, t)) return -1;
    f->edits[f->nedits - 1].order = order;
    return 0;
}

/* c ? dev[i] : T(0) where dev points to a struct in device memory: clang finds
 * no common type for an address-space-qualified class lvalue and a plain one
 * (Metal's compiler copies the object).  Every operand goes through
 * ::metal::sw_cond_operand(), the identity except that such an object becomes a
 * copy in the default address space (prelude/metal_stdlib.h). */
int fe_rewrite_conditionals(front *f) {
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
                if (tk_is(f, j, ";") || tk_is(f, j, "{") || tk_is(f, j, "}") ||
                    (f->c.match[j] >= 0 && f->c.match[j] < q))
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

/* Is tk[i] inside `__attribute__((name("text")))` (visibility, section, ...), whose
 * arguments the compiler wants as string literals? tk[open] is the '(' around it. */
static int in_gnu_attribute(const front *f, int open, int i) {
    for (int q = open - 1; q >= 0 && q >= open - 4; q--)
        if ((tk_is(f, q, "__attribute__") || tk_is(f, q, "__attribute")) && tk_is(f, q + 1, "(") &&
            f->c.match[q + 1] > i)
            return 1;
    return 0;
}

/* A string literal is in the constant address space in MSL: os_log("mlx", "x")
 * passes it to `constant char *` parameters.  As a call argument it becomes
 * ::metal::sw_str("..."), a `constant char *` (which also converts to a plain
 * const char *). */
int fe_rewrite_string_args(front *f) {
    for (int i = 1; i < f->c.ntoks && !f->err; i++) {
        if (f->c.toks[i].kind != MSL_TK_STRING || f->c.toks[i - 1].kind == MSL_TK_STRING) continue;
        if (!tk_is(f, i - 1, "(") && !tk_is(f, i - 1, ",")) continue;
        int last = i;
        while (last + 1 < f->c.ntoks && f->c.toks[last + 1].kind == MSL_TK_STRING) last++;
        if (!tk_is(f, last + 1, ",") && !tk_is(f, last + 1, ")")) continue;
        int open = i - 1;
        while (open >= 0 &&
               !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
            open--;
        if (open < 1 || !tk_is(f, open, "(") || !(tk_ident(f, open - 1) || tk_is(f, open - 1, ">"))) continue;
        if (tk_is(f, open - 1, "static_assert") || tk_is(f, open - 1, "asm") || tk_is(f, open - 1, "__asm__") ||
            strncmp(tk_text(f, open - 1), "__builtin", 9) == 0 || tk_is(f, open - 1, "__attribute__") ||
            tk_is(f, open - 1, "deprecated") || tk_is(f, open - 1, "_Pragma") || in_gnu_attribute(f, open, i))
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
int fe_rewrite_discarded_atomics(front *f) {
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
        while (open >= 0 &&
               !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
            open--;
        if (open >= 0 && !tk_is(f, open, "{")) continue;
        if (tk_is(f, rp + 2, "}") && tk_is(f, rp + 3, ")")) continue;
        msl_buf b = {0};
        msl_buf_printf(&b, "sw_discard_%s", fetch_ops[n]);
        char *t = msl_buf_take(&b);
        if (!t) return fe_fail(f, i, "out of memory");
        if (fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
    }
    return f->err ? -1 : 0;
}

/* ------------------------------------------------ braced call arguments */

/* f({a, b, c}) where f takes a vector: clang cannot convert a braced list to an
 * ext_vector parameter (Metal's compiler can).  The list becomes
 * ::metal::sw_braced(a, b, c), an object that converts to a vector with that many
 * components, or to an aggregate the list initialises (prelude/metal_stdlib.h). */
int fe_rewrite_braced_args(front *f) {
    for (int i = 1; i < f->c.ntoks && !f->err; i++) {
        if (!tk_is(f, i, "{") || !(tk_is(f, i - 1, "(") || tk_is(f, i - 1, ","))) continue;
        int close = f->c.match[i];
        if (close < 0 || close == i + 1 || !(tk_is(f, close + 1, ",") || tk_is(f, close + 1, ")"))) continue;
        /* the enclosing bracket must be a call's '(' */
        int open = i - 1;
        while (open >= 0 &&
               !(f->c.match[open] > i && (tk_is(f, open, "(") || tk_is(f, open, "[") || tk_is(f, open, "{"))))
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
            return fe_fail(f, i, "out of memory");
        }
        fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + 1, o);
        fe_add_edit(f, f->c.toks[close].start, f->c.toks[close].start + 1, c);
    }
    return f->err ? -1 : 0;
}

/* ------------------------------------------- array parameters in a space */

/* `constant const int64_t strides[2]` as a parameter is a pointer in C++ as in
 * MSL, but clang rejects the address space on the array type before it decays:
 * write it as the pointer it is, `(*strides)` (other dimensions stay). */
int fe_rewrite_array_params(front *f) {
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
            for (int k = a; k < i; k++) has_space |= fe_is_space_word(f, k) && !tk_is(f, k, "thread");
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
                    return fe_fail(f, name, "out of memory");
                }
                fe_add_edit(f, f->c.toks[name].start, f->c.toks[name].start, open);
                fe_add_edit(f, f->c.toks[lb].start, f->c.toks[rb].start + 1, close);   /* `[2]` -> `)` */
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
    if (!tk_is(f, rp, ")") || !tk_ident(f, t)) return 0;
    const char *conv = "sw_convert";
    if (is_type_param(f, t) || is_vector_alias(f, t)) conv = "sw_ccast";
    else if (!(is_vector_type_name(tk_text(f, t), f->c.toks[t].len) || is_fp16_name(f, t))) return 0;
    if (lp > 0 && (tk_ident(f, lp - 1) || tk_is(f, lp - 1, ">") || tk_is(f, lp - 1, ")") || tk_is(f, lp - 1, "]")))
        return 0;   /* sizeof(float4), f(half) in a declaration, ... */
    int end = unary_operand_end(f, rp + 1);
    if (end < 0) return 0;
    msl_buf b = {0};
    msl_buf_printf(&b, "::metal::%s<%.*s>(", conv, f->c.toks[t].len, tk_text(f, t));
    char *open = msl_buf_take(&b), *close = strdup(")");
    if (!open || !close) {
        free(open);
        free(close);
        return fe_fail(f, lp, "out of memory");
    }
    fe_add_edit(f, f->c.toks[lp].start, f->c.toks[rp].start + 1, open);
    int e = f->c.toks[end - 1].start + f->c.toks[end - 1].len;
    fe_add_edit(f, e, e, close);
    if (tk_is(f, rp + 1, "(") && f->c.match[rp + 1] == end - 1 && wrap_truth_args(f, rp + 1)) return -1;
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
    if (!t) return fe_fail(f, i, "out of memory");
    return fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + n, t);
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
        if (!t) return fe_fail(f, i, "out of memory");
        int at = f->c.toks[d].start + f->c.toks[d].len;
        if (fe_add_edit(f, at, at, t)) return -1;
        int close = f->c.match[d + 1];
        if (!tk_is(f, close + 1, ",")) break;
        d = close + 2;
    }
    return 0;
}

/* `#pragma unroll (MIN(a, b))`: the preprocessed text keeps a pragma's argument as
 * written, so a macro in it is undeclared by then.  The count is only a hint: a
 * pragma whose argument calls something is dropped (the loop unrolls as the
 * compiler chooses), and the same line keeps its number. */
static int drop_unroll_with_call(front *f, int i) {
    const char *s = tk_text(f, i);
    int n = f->c.toks[i].len, k = 1;
    while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
    if (n - k < 6 || memcmp(s + k, "pragma", 6) != 0) return 0;
    k += 6;
    while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
    if (n - k < 6 || memcmp(s + k, "unroll", 6) != 0) return 0;
    const char *open = memchr(s + k, '(', (size_t)(n - k));
    if (!open || !memchr(open + 1, '(', (size_t)(s + n - open - 1))) return 0;
    char *t = strdup("");
    return !t || fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + n, t) ? -1 : 1;
}

/* Does the brace group at tk[lb] hold anything but number literals?  Lists of
 * literals (`float4 c = {1, 2}`) mean the same in C++ and stay as written. */
static int brace_has_names(const front *f, int lb) {
    for (int j = lb + 1; j < f->c.match[lb]; j++)
        if (f->c.toks[j].kind == MSL_TK_IDENT) return 1;
    return 0;
}

/* The brace group at tk[lb] initialises one vector of type tk[ty]: becomes
 * ::metal::sw_brace<T>(...), which takes vectors as their elements in order
 * (`float4 v = {p.xy, q.xy}`, which C++ refuses) and pads with zeros. */
static int brace_to_call(front *f, int ty, int lb) {
    msl_buf b = {0};
    msl_buf_printf(&b, "%s::metal::sw_brace<%.*s>(", tk_ident(f, lb - 1) ? " = " : "", f->c.toks[ty].len,
                   tk_text(f, ty));
    char *open = msl_buf_take(&b), *close = strdup(")");
    if (!open || !close) {
        free(open);
        free(close);
        return fe_fail(f, lb, "out of memory");
    }
    int rb = f->c.match[lb];
    fe_add_edit(f, f->c.toks[lb].start, f->c.toks[lb].start + 1, open);
    fe_add_edit(f, f->c.toks[rb].start, f->c.toks[rb].start + 1, close);
    return f->err ? -1 : 0;
}

/* `float4 v = {a.xy, b}, w[2] = {{x, y}, {z}};` -- tk[i] is the vector type at the
 * start of a declaration: each braced initialiser of one vector (an array's
 * elements too) that names something becomes a sw_brace call. */
static int rewrite_vector_brace_init(front *f, int i) {
    int d = i + 1;
    while (tk_ident(f, d)) {
        int p = d + 1, array = 0;
        while (tk_is(f, p, "[") && f->c.match[p] > p) {
            p = f->c.match[p] + 1;
            array = 1;
        }
        int eq = tk_is(f, p, "=");
        if (eq) p++;
        if (!tk_is(f, p, "{") || f->c.match[p] < p) return 0;
        int rb = f->c.match[p];
        if (!array && brace_has_names(f, p) && brace_to_call(f, i, p)) return -1;
        for (int j = p + 1; array && j < rb; j++) {
            if (tk_is(f, j, "{") && f->c.match[j] > j && brace_has_names(f, j) && brace_to_call(f, i, j)) return -1;
            if (f->c.match[j] > j) j = f->c.match[j];
        }
        if (!tk_is(f, rb + 1, ",")) return 0;
        d = rb + 2;
    }
    return 0;
}

int fe_rewrite_vector_constructors(front *f) {
    if (collect_vector_aliases(f) || collect_type_params(f)) return -1;
    for (int i = 0; i < f->c.ntoks && !f->err; i++) {
        if (f->c.toks[i].kind == MSL_TK_DIRECTIVE) {
            if (drop_unroll_with_call(f, i) < 0) return -1;
            continue;
        }
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
            if (!t || fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
            continue;
        }
        if (!tk_ident(f, i)) continue;
        if (tk_is(f, i - 1, ".") || tk_is(f, i - 1, "->") || tk_is(f, i - 1, "operator")) continue;
        int qualified = tk_is(f, i - 1, "::");
        if (qualified && !tk_is(f, i - 2, "metal")) continue;
        if (fe_rewrite_bool_assignments(f, i) < 0) return -1;
        if (is_fp16_name(f, i) && tk_is(f, i + 1, "(") && !tk_is(f, i - 1, "(")) {
            /* half(b) of a bfloat b: a value conversion, as in MSL */
            msl_buf b = {0};
            msl_buf_printf(&b, "%ssw_convert<%.*s>", qualified ? "" : "::metal::", f->c.toks[i].len, tk_text(f, i));
            char *t = msl_buf_take(&b);
            if (!t || fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
        } else if ((is_vector_type_name(tk_text(f, i), f->c.toks[i].len) || (!qualified && is_vector_alias(f, i))) &&
                   tk_ident(f, i + 1) && tk_is(f, i + 2, "(") &&
                   (tk_is(f, i - 1, ";") || tk_is(f, i - 1, "{") || tk_is(f, i - 1, "}") || tk_is(f, i - 1, "const") ||
                    tk_is(f, i - 1, "constexpr") || tk_is(f, i - 1, "thread") ||
                    (tk_is(f, i - 1, "(") && tk_is(f, i - 2, "for")))) {
            if (rewrite_vector_direct_init(f, i)) return -1;
        } else if ((is_vector_type_name(tk_text(f, i), f->c.toks[i].len) || (!qualified && is_vector_alias(f, i))) &&
                   tk_ident(f, i + 1) && (tk_is(f, i + 2, "=") || tk_is(f, i + 2, "{") || tk_is(f, i + 2, "[")) &&
                   (tk_is(f, i - 1, ";") || tk_is(f, i - 1, "{") || tk_is(f, i - 1, "}") || tk_is(f, i - 1, "const") ||
                    tk_is(f, i - 1, "constexpr") || tk_is(f, i - 1, "thread") || tk_is(f, i - 1, "constant"))) {
            if (rewrite_vector_brace_init(f, i)) return -1;
        } else if ((is_vector_type_name(tk_text(f, i), f->c.toks[i].len) || (!qualified && is_vector_alias(f, i))) &&
                   tk_is(f, i + 1, "(")) {
            msl_buf b = {0};
            msl_buf_printf(&b, "%ssw_mk<%.*s>", qualified ? "" : "::metal::", f->c.toks[i].len, tk_text(f, i));
            char *t = msl_buf_take(&b);
            if (!t || fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
            if (wrap_truth_args(f, i + 1)) return -1;
        } else if (!qualified && is_type_param(f, i) && tk_is(f, i + 1, "(") && !tk_is(f, i + 2, "&") &&
                   !tk_is(f, i + 2, "*") && !tk_is(f, i - 1, "typename") && !tk_is(f, i - 1, "class")) {
            /* T(x) of a template parameter T: a vector constructor or conversion once T is known */
            msl_buf b = {0};
            msl_buf_printf(&b, "::metal::sw_fcast<%.*s>", f->c.toks[i].len, tk_text(f, i));
            char *t = msl_buf_take(&b);
            if (!t || fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start + f->c.toks[i].len, t)) return -1;
            if (wrap_truth_args(f, i + 1)) return -1;
        } else if (tk_is(f, i, "vec") && tk_is(f, i + 1, "<")) {
            int after = msl_skip_angles(&f->c, i + 1, f->c.ntoks);
            if (after < 0 || !tk_is(f, after, "(")) continue;
            char *open = strdup(qualified ? "sw_mk<" : "::metal::sw_mk<"), *close = strdup(">");
            if (!open || !close) {
                free(open);
                free(close);
                return fe_fail(f, i, "out of memory");
            }
            int end = f->c.toks[after - 1].start + f->c.toks[after - 1].len;
            fe_add_edit(f, f->c.toks[i].start, f->c.toks[i].start, open);
            fe_add_edit(f, end, end, close);
        }
    }
    return f->err ? -1 : 0;
}
