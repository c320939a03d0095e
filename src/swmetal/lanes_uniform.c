/* lanes_uniform.c — the lanes rewrite, phase 2: which values are varying (can
 * differ between the lanes of a simdgroup).
 *
 * Reads the functions and statement trees (lanes_parse.c) and the kernels'
 * bindings (the per-lane id attributes seed it).  Writes L->decl (each use of a
 * local resolved to its declaration: scopes), and per function its locals,
 * memory pointers, varying names, varying parameters and return value, needs_fn
 * and vcalled; per statement, `varying` (an if's condition) and `masked` (a loop
 * that runs under the execution mask).  Flow-insensitive, to a fixpoint over the
 * whole library, so it errs only toward "varying". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/lanes.h"

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

int lv_is_varying_name(const lanes *L, const lv_fn *f, int tok) {
    return has_name(L, tok, f->vnames, f->nv);
}

static int is_mem_name(const lanes *L, const lv_fn *f, int tok) { return has_name(L, tok, f->mem, f->nmem); }

static void mark(lanes *L, lv_fn *f, int tok) {
    if (tok < 0 || lv_is_varying_name(L, f, tok)) return;
    if (lv_push_int(&f->vnames, &f->nv, &f->capv, tok) == 0) L->changed = 1;
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
int lv_is_lanes_view(const lanes *L, int i) {
    return is(L, i, "thread_elements") && (is(L, i - 1, ".") || is(L, i - 1, "->")) && is(L, i + 1, "(");
}

/* A `.thread_elements()` in the chain [lo, hi) (outside its indices and arguments,
 * which are only read): a store or member call there reaches the lanes' view,
 * per-lane storage inside the (uniform) matrix, not the matrix's value. */
static int has_lanes_view(const lanes *L, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (lv_is_lanes_view(L, i)) return 1;
        if ((is(L, i, "[") || is(L, i, "(")) && L->c.match[i] > i) i = L->c.match[i];
    }
    return 0;
}

static int expr_varying(const lanes *L, const lv_fn *f, int lo, int hi) {
    for (int i = lo; i < hi; i++) {
        if (lv_is_lanes_view(L, i)) return 1;
        if (!is_ident(L, i) || member_name(L, i)) continue;
        if (lv_is_varying_name(L, f, i)) return 1;
        if ((is(L, i + 1, "(") || is(L, i + 1, "<")) && (varying_builtin(L, i) || fn_returns_varying(L, i))) return 1;
    }
    return 0;
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
            int sub, deref, base = lv_chain_base(L, lo, i, &sub, &deref);
            if (base >= 0 && private_target(L, f, base) && !has_lanes_view(L, base, i + 1) &&
                (vctl || expr_varying(L, f, i + 2, L->c.match[i + 1])))
                mark(L, f, base);
            continue;
        }
        if (!is_ident(L, i) || member_name(L, i)) continue;
        int open = i + 1;
        if (is(L, open, "<") && lv_is_template_name(L, i)) {
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
void lv_note_mem_names(lanes *L, lv_fn *f) {
    for (int p = 0; p < f->nparams; p++)
        if (f->params[p].space && f->params[p].name >= 0) lv_push_int(&f->mem, &f->nmem, &f->capmem, f->params[p].name);
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

static void flow_simple(lanes *L, lv_fn *f, int lo, int hi, int vctl) {
    int tg_name;
    if (lv_tg_decl_stmt(L, lo, &tg_name)) {
        if (tg_name >= 0 && !is_mem_name(L, f, tg_name)) lv_push_int(&f->mem, &f->nmem, &f->capmem, tg_name);
        return;
    }
    int tyend = lv_decl_type_end(L, lo, hi);
    int start = lo;
    if (tyend > 0) {
        lv_decl d[32];
        int nd = lv_split_declarators(L, tyend, hi - 1, d, 32);
        int any = 0;
        for (int k = 0; k < nd; k++) {
            if (d[k].name < 0) continue;
            if (lv_is_varying_name(L, f, d[k].name)) any = 1;
            if (d[k].init_hi > d[k].init_lo && expr_varying(L, f, d[k].init_lo, d[k].init_hi)) any = 1;
        }
        int space = 0;
        for (int k = lo; k < tyend; k++) space |= is(L, k, "device") || is(L, k, "constant") || is(L, k, "threadgroup");
        for (int k = 0; k < nd; k++) {
            if (d[k].name < 0) continue;
            if (space && d[k].ptr && !is_mem_name(L, f, d[k].name))
                lv_push_int(&f->mem, &f->nmem, &f->capmem, d[k].name);
            if (!has_name(L, d[k].name, f->locals, f->nloc))
                lv_push_int(&f->locals, &f->nloc, &f->caploc, d[k].name);
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
        if (!lv_is_assign_op(L, i) && !incdec) continue;
        if (is_decl && is(L, i, "=")) continue; /* a declarator's initializer */
        int sub, deref, base;
        if (incdec && (is_ident(L, i + 1) || is(L, i + 1, "("))) {
            /* prefix: the chain after */
            int e = i + 1;
            while (e < hi && (is_ident(L, e) || is(L, e, ".") || is(L, e, "->") || is(L, e, "[")))
                e = is(L, e, "[") && L->c.match[e] > e ? L->c.match[e] + 1 : e + 1;
            base = lv_chain_base(L, i + 1, e, &sub, &deref);
        } else {
            base = lv_chain_base(L, start, i, &sub, &deref);
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
    if (lv_push_int(&sc->tok, &sc->n, &sc->cap, name) != 0) lv_reject(L, name, "out of memory");
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
    if (lv_tg_decl_stmt(L, lo, &tg_name)) {
        if (tg_name >= 0) declare(L, sc, tg_name);
        resolve_range(L, sc, lo, hi);
        return;
    }
    int tyend = lv_decl_type_end(L, lo, hi);
    if (tyend > 0) {
        resolve_range(L, sc, lo, tyend);
        lv_decl d[32];
        int nd = lv_split_declarators(L, tyend, hi - 1, d, 32);
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

void lv_resolve_function(lanes *L, const lv_fn *f) {
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
        if (lv_decl_type_end(L, st->a_lo, st->a_hi) > 0) {
            lv_reject(L, st->a_lo, "declaration in an if condition");
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
            lv_reject(L, st->a_lo, "switch on a varying value");
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
            lv_reject(L, st->lo, "break or continue outside a loop");
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

void lv_uniformity(lanes *L) {
    seed_kernels(L);
    for (int it = 0; it < 100; it++) {
        L->changed = 0;
        for (int fi = 0; fi < L->nfns && !L->why[0]; fi++) {
            lv_fn *f = &L->fns[fi];
            for (int p = 0; p < f->nparams; p++)
                if (f->params[p].varying && f->params[p].name >= 0) mark(L, f, f->params[p].name);
            for (int p = 0; p < f->nparams; p++)
                if (!f->params[p].varying && f->params[p].name >= 0 && lv_is_varying_name(L, f, f->params[p].name)) {
                    f->params[p].varying = 1;
                    L->changed = 1;
                }
            flow_ctx c = {0, 0, -1, -1};
            flow_stmt(L, f, f->body, c);
        }
        if (L->why[0] || !L->changed) break;
    }
}
