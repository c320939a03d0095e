/* msl_front_decls.c — the front end's namespace-scope walk: kernels (their
 * parameters and bindings, explicit instantiations, host names), the function
 * constants declared on the way, and member functions' address spaces.
 *
 * Reads the collapsed tokens (f->c) and attribute groups (msl_front.c).  Writes
 * the unit's kernels (msl_unit.kernels) and edits: the `kernel` keyword blanked,
 * instantiations marked, repeated member declarations removed, member functions'
 * address-space qualifiers and coherent(...) blanked.  Rejects what the software
 * device cannot provide (textures, samplers, render stages). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front_internal.h"

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
    if (!pname) return fe_fail(f, a, "out of memory");
    msl_binding bind = {0, -1, pname, f->c.toks[name >= 0 ? name : a].line, NULL};
    /* the word before the parameter's & or *: its struct's name when it is one */
    for (int i = a + 1; i < (name >= 0 ? name : b); i++)
        if ((tk_is(f, i, "&") || tk_is(f, i, "*")) && tk_ident(f, i - 1)) {
            if (!(bind.type_word = tk_dup(f, i - 1))) {
                free(pname);
                return fe_fail(f, a, "out of memory");
            }
            break;
        }
    for (int i = first_attr < 0 ? b : first_attr; i < b; i++) {
        if (f->c.toks[i].kind != MSL_TK_ATTR) continue;
        const attr_group *g = &f->attrs[f->c.toks[i].attr];
        for (int j = 0; j < g->nitems; j++) {
            const attr_item *it = &g->items[j];
            int kind = 0, index = -1;
            if (strcmp(it->name, "buffer") == 0 || strcmp(it->name, "threadgroup") == 0) {
                long v;
                kind = it->name[0] == 'b' ? SW_BIND_BUFFER : SW_BIND_THREADGROUP;
                if (fe_parse_int_arg(f, it->arg_lo, it->arg_hi, &v) || v < 0 ||
                    v >= (kind == SW_BIND_BUFFER ? SW_MAX_BUFFERS : SW_MAX_TG_PARAMS)) {
                    fe_fail(f, i, "[[%s(n)]] of parameter '%s' needs an index literal in 0..30", it->name, pname);
                    free(pname);
                    free(bind.type_word);
                    return -1;
                }
                index = (int)v;
            } else if (strcmp(it->name, "function_constant") == 0 || fe_is_standard_attr(it->name)) {
                continue;   /* optional binding: the buffer is simply unbound when the constant is false */
            } else {
                for (const attr_name_map *m = id_attrs; m->name; m++)
                    if (strcmp(m->name, it->name) == 0) kind = SW_BIND_ATTR, index = m->attr;
                if (!kind) {
                    fe_fail(f, i, "unknown attribute '%s' on kernel parameter '%s'", it->name, pname);
                    free(pname);
                    free(bind.type_word);
                    return -1;
                }
            }
            if (bind.kind) {
                fe_fail(f, i, "kernel parameter '%s' has two binding attributes (second: '%s')", pname, it->name);
                free(pname);
                free(bind.type_word);
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
        free(bind.type_word);
        return fe_fail(f, a, "out of memory");
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
            return fe_fail(f, lp,
                           "kernel parameter '%s' gets no index: more than 31 buffer (or threadgroup) parameters",
                        bj->param);
    }
    return 0;
}

/* -------------------------------------------------------- kernel records */

void fe_kernel_free(msl_kernel *k) {
    free(k->host_name);
    free(k->callee);
    free(k->file);
    free(k->max_threads);
    for (int i = 0; i < k->nbindings; i++) {
        free(k->bindings[i].param);
        free(k->bindings[i].type_word);
    }
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
        dst->bindings[i].type_word = src->bindings[i].type_word ? strdup(src->bindings[i].type_word) : NULL;
        if (!dst->bindings[i].param || (src->bindings[i].type_word && !dst->bindings[i].type_word)) {
            free(dst->bindings[i].param);
            free(dst->bindings[i].type_word);
            return -1;
        }
        dst->nbindings = i + 1;
    }
    return 0;
}

static int add_kernel(front *f, int at, msl_kernel *k) {
    for (int i = 0; i < f->u->nkernels; i++) {
        if (strcmp(f->u->kernels[i].host_name, k->host_name) == 0) {
            fe_fail(f, at, "two kernels named '%s' (the first at line %d)", k->host_name, f->u->kernels[i].line);
            fe_kernel_free(k);
            return -1;
        }
    }
    msl_kernel *nk = realloc(f->u->kernels, sizeof *nk * (size_t)(f->u->nkernels + 1));
    if (!nk) {
        fe_kernel_free(k);
        return fe_fail(f, at, "out of memory");
    }
    f->u->kernels = nk;
    f->u->kernels[f->u->nkernels++] = *k;
    *k = (msl_kernel){0};
    return 0;
}

/* ------------------------------------------------- namespace-scope walk */

/* Index of the function name before the parameter '(' at tk[lp] and, through
 * *name_start, the first token of a qualified / template-id name. */
static int function_name_before(const front *f, int lp, int lo, int *name_start) {
    int i = lp - 1;
    if (tk_is(f, i, ">")) i = msl_angles_back(&f->c, i, lo - 1) - 1;
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
    if (!qname) return fe_fail(f, name, "out of memory");
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
            /* parameter [a, j): its name is the last identifier before any '=', outside
             * parentheses but for a function pointer's `(*name)` */
            int nm = -1, pack = 0;
            for (int t = a; t < j && !tk_is(f, t, "="); t++) {
                if (tk_is(f, t, "(") && f->c.match[t] > t) {
                    if (tk_is(f, t + 1, "*") && tk_ident(f, t + 2) && f->c.match[t] == t + 3) nm = t + 2;
                    t = f->c.match[t];
                    continue;
                }
                if (tk_ident(f, t) && !tk_is(f, t, "typename") && !tk_is(f, t, "class")) nm = t;
                if (tk_is(f, t, ".") && tk_is(f, t + 1, ".") && tk_is(f, t + 2, ".")) pack = 1;
            }
            if (nm < 0) ok = 0;
            else msl_buf_printf(&rb, "%s%.*s%s", first ? "" : ", ", f->c.toks[nm].len, tk_text(f, nm),
                                pack ? "..." : "");
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
        return fe_fail(f, name, "out of memory");
    }
    f->fn_refs = nr;
    f->fn_refs[f->nfn_refs++] = (struct fn_ref){body, qname, ref};
    return 0;
}

/* What the head of a namespace-scope declaration says (scan_decl_head). */
typedef struct decl_head {
    int first;                   /* first token after directives */
    int k;                       /* first token after template<...> or a bare `template` */
    int is_template, is_inst;    /* template<...> ...; template ... (an explicit instantiation) */
    int kernel;                  /* `kernel` or [[kernel]] */
    int fc_at;                   /* the [[function_constant(n)]] group, -1 */
    int lp;                      /* the first '(' (not decltype's), -1 */
    int decltype_at;             /* the first decltype, -1 */
    const attr_item *host;       /* [[host_name("x")]], NULL */
    const attr_item *max_threads; /* [[max_total_threads_per_threadgroup(N)]], NULL */
} decl_head;

/* Fills *h from tokens [ds, end) and blanks the `kernel` keyword.  Returns 0 for
 * an empty declaration or a template<...> that does not close. */
static int scan_decl_head(front *f, int ds, int end, decl_head *h) {
    int k = ds;
    while (k < end && f->c.toks[k].kind == MSL_TK_DIRECTIVE) k++;
    if (k >= end) return 0;
    *h = (decl_head){.first = k, .fc_at = -1, .lp = -1, .decltype_at = -1};
    if (tk_is(f, k, "template")) {
        if (tk_is(f, k + 1, "<")) {
            int after = msl_skip_angles(&f->c, k + 1, end);
            if (after < 0) return 0;
            k = after;
            h->is_template = 1;
        } else {
            h->is_inst = 1;
            k++;
        }
    }
    h->k = k;
    for (int i = k; i < end; i++) {
        if (f->c.toks[i].kind == MSL_TK_ATTR) {
            if (fe_find_attr(f, i, "kernel")) h->kernel = 1;
            if (fe_find_attr(f, i, "host_name")) h->host = fe_find_attr(f, i, "host_name");
            if (fe_find_attr(f, i, "max_total_threads_per_threadgroup"))
                h->max_threads = fe_find_attr(f, i, "max_total_threads_per_threadgroup");
            if (fe_find_attr(f, i, "function_constant")) h->fc_at = i;
            continue;
        }
        if (tk_is(f, i, "kernel")) {
            h->kernel = 1;
            fe_blank_tok(f, i);
        }
        if (tk_is(f, i, "decltype") && h->decltype_at < 0) h->decltype_at = i;
        if (tk_is(f, i, "(") && h->lp < 0 && !tk_is(f, i - 1, "decltype")) h->lp = i;
        if (f->c.match[i] > i) i = f->c.match[i];
    }
    return 1;
}

/* template [[host_name("x")]] kernel kernel_t f<A, B>;  (kernel_t: a typedef'd
 * function type, as ggml writes them): the first token of the template-id that
 * ends the declaration, or -1. */
static int typedef_instance(const front *f, int k, int end) {
    int j = msl_angles_back(&f->c, end - 1, k);
    if (!(j > k && tk_ident(f, j - 1))) return -1;
    int at = j - 1;
    while (tk_is(f, at - 1, "::") && tk_ident(f, at - 2)) at -= 2;
    return at;
}

/* template [[host_name("x")]] [[kernel]] decltype(f<T, 64>) f<T, 64>; (or the
 * typedef form): the instance takes the bindings of kernel template f.  Takes kr. */
static int add_typed_instance(front *f, msl_kernel *kr, const decl_head *h, int typedef_form, int end,
                              const char *ns) {
    int k = h->k, decltype_at = h->decltype_at;
    int after = decltype_at >= 0 ? f->c.match[decltype_at + 1] + 1 : typedef_form;
    if (after >= end) {
        fe_kernel_free(kr);
        return fe_fail(f, decltype_at, "expected the instantiated function after decltype(...)");
    }
    char *text = tk_range_dup(f, after, end - 1);
    kr->callee = text ? join_prefix(ns, text) : NULL;
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
        fe_fail(f, base, "no kernel template named '%s' is defined before this instantiation", bn);
        free(bn);
        fe_kernel_free(kr);
        return -1;
    }
    if (!kr->callee || copy_bindings(kr, &tpl->k)) {
        fe_kernel_free(kr);
        return fe_fail(f, k, "out of memory");
    }
    if (!kr->host_name) kr->host_name = tk_range_dup(f, after, end - 1);
    if (add_kernel(f, k, kr)) return -1;
    return fe_mark_instantiation(f, h->first, tk_is(f, end, ";") ? end : end - 1);
}

/* Older MLX style: template [[host_name("x")]] [[kernel]] void f<T>(params...);
 * with its parameters in kr.  Takes kr. */
static int add_signature_instance(front *f, msl_kernel *kr, const decl_head *h, int name_start, int end,
                                  const char *ns) {
    int k = h->k, lp = h->lp;
    char *text = tk_range_dup(f, name_start, lp - 1);
    kr->callee = text ? join_prefix(ns, text) : NULL;
    free(text);
    if (kr->callee && !tk_is(f, lp - 1, ">")) {
        /* no template arguments (`template [[kernel]] void f(const device float *x, ...);`):
         * deduced from the signature, as the address of f converted to its type */
        char *named = instance_by_signature(f, lp, kr->callee);
        free(kr->callee);
        kr->callee = named;
    }
    if (!kr->host_name) kr->host_name = tk_range_dup(f, name_start, lp - 1);
    if (!kr->callee || !kr->host_name) {
        fe_kernel_free(kr);
        return fe_fail(f, k, "out of memory");
    }
    if (add_kernel(f, k, kr)) return -1;
    return fe_mark_instantiation(f, h->first, tk_is(f, end, ";") ? end : end - 1);
}

/* A kernel declared with its parameters: an instantiation, a prototype (skipped),
 * a kernel template (kept for its instantiations) or a kernel.  Takes kr. */
static int add_declared_kernel(front *f, msl_kernel *kr, const decl_head *h, int ds, int end, int body,
                               const char *ns) {
    int k = h->k, lp = h->lp;
    if (lp < 0) {
        fe_kernel_free(kr);
        return fe_fail(f, k, "expected a kernel function declaration");
    }
    int name_start, name = function_name_before(f, lp, k, &name_start);
    if (name < 0) {
        fe_kernel_free(kr);
        return fe_fail(f, lp, "expected the kernel's name before '('");
    }
    if (parse_params(f, lp, kr)) {
        fe_kernel_free(kr);
        return -1;
    }
    if (h->is_inst) return add_signature_instance(f, kr, h, name_start, end, ns);
    if (body < 0) {
        fe_kernel_free(kr);   /* a prototype: the definition is the one that counts */
        return 0;
    }
    if (record_kernel_body(f, ds, k, body, name, ns)) {
        fe_kernel_free(kr);
        return -1;
    }
    if (h->is_template) {
        kernel_template *t = realloc(f->templates, sizeof *t * (size_t)(f->ntemplates + 1));
        if (!t) {
            fe_kernel_free(kr);
            return fe_fail(f, k, "out of memory");
        }
        f->templates = t;
        t[f->ntemplates].name = tk_dup(f, name);
        t[f->ntemplates].k = *kr;
        f->ntemplates++;
        return 0;
    }
    char *fname = tk_dup(f, name);
    kr->callee = fname ? join_prefix(ns, fname) : NULL;
    if (!kr->host_name) kr->host_name = fname;
    else free(fname);
    if (!kr->callee || !kr->host_name) {
        fe_kernel_free(kr);
        return fe_fail(f, k, "out of memory");
    }
    return add_kernel(f, k, kr);
}

/* An attribute's argument as source text (its original tokens, one space apart). */
static char *attr_arg_text(const front *f, const attr_item *a) {
    msl_buf b = {0};
    for (int i = a->arg_lo; i < a->arg_hi; i++)
        msl_buf_printf(&b, "%s%.*s", i > a->arg_lo ? " " : "", f->lx.toks[i].len, f->lx.text + f->lx.toks[i].start);
    return msl_buf_take(&b);
}

static int process_decl(front *f, int ds, int end, int body, const char *ns) {
    decl_head h;
    if (!scan_decl_head(f, ds, end, &h)) return 0;
    int k = h.k;
    if (h.fc_at >= 0) return fe_rewrite_function_constant(f, ds, end, h.fc_at);
    if (!h.kernel && !(h.is_inst && h.host)) return 0;

    msl_kernel kr = {0};
    kr.line = f->c.toks[k].line;
    kr.file = strdup(f->lx.files[f->c.toks[k].file]);
    if (!kr.file) return fe_fail(f, k, "out of memory");
    if (h.host) {
        kr.host_name = fe_parse_string_arg(f, h.host->arg_lo, h.host->arg_hi);
        if (!kr.host_name || !kr.host_name[0]) {
            fe_kernel_free(&kr);
            return fe_fail(f, k, "[[host_name(...)]] needs a string literal");
        }
    }
    if (h.max_threads && !h.is_template && !h.is_inst && h.max_threads->arg_lo < h.max_threads->arg_hi) {
        kr.max_threads = attr_arg_text(f, h.max_threads);
        if (!kr.max_threads) {
            fe_kernel_free(&kr);
            return fe_fail(f, k, "out of memory");
        }
    }
    int typedef_form = -1;
    if (h.is_inst && h.decltype_at < 0 && h.lp < 0 && tk_is(f, end - 1, ">"))
        typedef_form = typedef_instance(f, k, end);
    if (h.is_inst && (h.decltype_at >= 0 || typedef_form >= 0))
        return add_typed_instance(f, &kr, &h, typedef_form, end, ns);
    return add_declared_kernel(f, &kr, &h, ds, end, body, ns);
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

int fe_is_space_word(const front *f, int i) {
    return tk_is(f, i, "device") || tk_is(f, i, "threadgroup") || tk_is(f, i, "constant") || tk_is(f, i, "thread") ||
           tk_is(f, i, "threadgroup_imageblock");
}

/* tk[i] is ')'.  When what follows is a member function's qualifier list naming an
 * address space (`) const device {`, `) threadgroup :`), returns the index just
 * past that list, else -1. */
static int method_space_quals_end(const front *f, int i) {
    int j = i + 1, spaces = 0;
    while (tk_is(f, j, "const") || tk_is(f, j, "volatile") || fe_is_space_word(f, j))
        spaces += fe_is_space_word(f, j++);
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
void fe_strip_coherent(front *f) {
    for (int i = 0; i + 1 < f->c.ntoks; i++)
        if (tk_is(f, i, "coherent") && tk_is(f, i + 1, "(") && f->c.match[i + 1] > 0 && !tk_is(f, i - 1, ".") &&
            !tk_is(f, i - 1, "->"))
            fe_add_edit(f, f->c.toks[i].start, f->c.toks[f->c.match[i + 1]].start + 1, NULL);
}

/* What the software device cannot provide stops the compile with one line that
 * says so: textures and samplers, render stages, ray tracing, function tables,
 * imageblocks, indirect command buffers, the imageblock/ray/mesh address spaces;
 * and what MSL itself forbids but C++ would take (simdgroup matrices not 8x8). */
/* simdgroup_matrix<T, Cols, Rows> and make_filled_simdgroup_matrix<T, Cols[, Rows]> at
 * tk[i] with a literal size other than 8: MSL (§2.4's simdgroup matrix types, §6.7)
 * has 8x8 matrices only, so Apple's compiler refuses them too.  Sizes that are
 * template parameters are known only once instantiated (the prelude's static
 * assertion says the same there).  0, or -1 with the refusal. */
static int reject_simdgroup_matrix_size(front *f, int i) {
    int filled = tk_is(f, i, "make_filled_simdgroup_matrix");
    if ((!filled && !tk_is(f, i, "simdgroup_matrix")) || !tk_is(f, i + 1, "<")) return 0;
    int end = msl_skip_angles(&f->c, i + 1, f->c.ntoks);
    if (end < 0) return 0;
    int arg[3], n = 0, depth = 0;
    arg[n++] = i + 2;
    for (int j = i + 2; j < end - 1 && n < 3; j++) {
        if (tk_is(f, j, "<") || tk_is(f, j, "(")) depth++;
        if (tk_is(f, j, ">") || tk_is(f, j, ")")) depth--;
        if (depth == 0 && tk_is(f, j, ",")) arg[n++] = j + 1;
    }
    for (int a = 1; a < n; a++) {
        int t = arg[a];
        if (f->c.toks[t].kind != MSL_TK_NUMBER || !(tk_is(f, t + 1, ",") || t + 1 == end - 1)) continue;
        if (strtol(tk_text(f, t), NULL, 0) == 8) continue;
        char *text = tk_range_dup(f, i, end - 1);
        fe_fail(f, i, "not MSL: %s: simdgroup matrices are 8x8 only (simdgroup_matrix<T, 8, 8>, spec sections 2.4 "
                "and 6.7); split the product into 8x8 tiles", text ? text : "simdgroup_matrix");
        free(text);
        return -1;
    }
    return 0;
}

int fe_reject_unsupported(front *f) {
    static const char *textures[] = {"texture1d", "texture1d_array", "texture2d", "texture2d_array", "texture2d_ms",
                                     "texture2d_ms_array", "texture3d", "texturecube", "texturecube_array",
                                     "texture_buffer", "depth2d", "depth2d_array", "depth2d_ms", "depth2d_ms_array",
                                     "depthcube", "depthcube_array", NULL};
    /* library templates of features a CPU device has no counterpart for */
    static const struct {
        const char *name, *feature;
    } templates[] = {{"acceleration_structure", "ray tracing"},
                     {"intersector", "ray tracing"},
                     {"intersection_function_table", "ray tracing"},
                     {"visible_function_table", "function pointers"},
                     {"imageblock", "imageblocks (tile memory)"},
                     {NULL, NULL}};
    for (int i = 0; i < f->c.ntoks; i++) {
        if (f->c.toks[i].kind == MSL_TK_ATTR) {
            static const char *stages[] = {"vertex", "fragment", "stage_in", "mesh", "object", NULL};
            for (int s = 0; stages[s]; s++)
                if (fe_find_attr(f, i, stages[s]))
                    return fe_fail(f, i,
                                "not supported by the software Metal device: render stages ([[%s]]); it runs "
                                "compute kernels only",
                                stages[s]);
            continue;
        }
        if (!tk_ident(f, i) || tk_is(f, i - 1, ".") || tk_is(f, i - 1, "->")) continue;
        if (tk_is(f, i + 1, "<")) {
            if (reject_simdgroup_matrix_size(f, i) < 0) return -1;
            for (int t = 0; textures[t]; t++)
                if (tk_is(f, i, textures[t]))
                    return fe_fail(f, i, "not supported by the software Metal device: textures (%s<...>)", textures[t]);
            for (int t = 0; templates[t].name; t++)
                if (tk_is(f, i, templates[t].name))
                    return fe_fail(f, i, "not supported by the software Metal device: %s (%s<...>)",
                                   templates[t].feature, templates[t].name);
        }
        /* address spaces of tile memory, ray payloads and mesh payloads: memory this
         * device has no counterpart for (thread memory in their place would be a
         * silent wrong answer) */
        static const struct {
            const char *space, *feature;
        } spaces[] = {{"threadgroup_imageblock", "imageblocks (tile memory)"},
                      {"ray_data", "ray tracing"},
                      {"object_data", "mesh shading (object-to-mesh payloads)"},
                      {NULL, NULL}};
        for (int s = 0; spaces[s].space; s++)
            if (tk_is(f, i, spaces[s].space) && !tk_is(f, i - 1, "::"))
                return fe_fail(f, i, "not supported by the software Metal device: %s (the %s address space)",
                               spaces[s].feature, spaces[s].space);
        if (tk_is(f, i, "command_buffer") && tk_ident(f, i + 1))
            return fe_fail(f, i, "not supported by the software Metal device: indirect command buffers (command_buffer)");
        if ((tk_is(f, i, "sampler") && tk_ident(f, i + 1)) ||
            ((tk_is(f, i, "vertex") || tk_is(f, i, "fragment")) && tk_ident(f, i + 1) &&
             (i == 0 || tk_is(f, i - 1, ";") || tk_is(f, i - 1, "}") || f->c.toks[i - 1].kind == MSL_TK_DIRECTIVE))) {
            return fe_fail(f, i, "not supported by the software Metal device: %s",
                        tk_is(f, i, "sampler") ? "samplers (textures)"
                                               : "render stages (vertex and fragment functions)");
        }
    }
    return 0;
}

/* C++ has no member functions qualified by an address space: the qualifier is
 * removed everywhere (an unqualified member function accepts objects in every
 * address space here; see prelude/metal_stdlib.h). */
int fe_strip_method_spaces(front *f) {
    f->space_qual = calloc((size_t)f->c.ntoks + 1, 1);
    if (!f->space_qual) return fe_fail(f, -1, "out of memory");
    for (int i = 0; i < f->c.ntoks; i++) {
        if (!tk_is(f, i, ")")) continue;
        int end = method_space_quals_end(f, i);
        for (int j = i + 1; j < end; j++) {
            if (!fe_is_space_word(f, j)) continue;
            f->space_qual[j] = 1;
            fe_blank_tok(f, j);
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
                fe_fail(f, i, "out of memory");
                break;
            }
            keys = nk;
            int dup = 0;
            for (int k = 0; k < nkeys && !dup; k++) dup = strcmp(keys[k], key) == 0;
            if (dup) {
                free(key);
                fe_add_edit(f, f->c.toks[i].start, f->c.toks[end].start + f->c.toks[end].len, NULL);
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

int fe_walk_ns(front *f, int lo, int hi, const char *ns) {
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
                if (!inner) return fe_fail(f, j, "out of memory");
                f->ns_brace[j] = 1;
                /* anonymous namespace members are reachable unqualified from the file */
                int r = fe_walk_ns(f, j + 1, f->c.match[j], tk_is(f, j - 1, "namespace") ? ns : inner);
                free(inner);
                if (r) return -1;
                i = f->c.match[j] + 1;
                continue;
            }
            free(msl_buf_take(&nb));
        }
        if (tk_is(f, i, "extern") && i + 2 < hi && f->c.toks[i + 1].kind == MSL_TK_STRING && tk_is(f, i + 2, "{")) {
            f->ns_brace[i + 2] = 1;
            if (fe_walk_ns(f, i + 3, f->c.match[i + 2], ns)) return -1;
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
