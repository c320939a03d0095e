/* lanes.h — private to the lanes rewrite (lanes*.c): the state its phases share
 * and what each phase offers the next.  Why and how the rewrite works: lanes.c.
 *
 *   lanes_parse.c      tokens -> names, functions, statement tree (+ syntax queries)
 *   lanes_uniform.c    statement tree -> scopes, varying variables and parameters
 *   lanes_emit.c       statements and declarations -> rewritten text
 *   lanes_emit_expr.c  expressions -> rewritten text (and the output primitives)
 *   lanes.c            msl_lanes_rewrite: runs the phases in that order */
#ifndef GDN_SW_LANES_H
#define GDN_SW_LANES_H

#include "msl/msl_cursor.h"
#include "swmetal/msl_front.h"

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

/* Shorthands over the shared token layer (msl/msl_cursor.h). */
static inline int tlen(const lanes *L, int i) { return L->c.toks[i].len; }
static inline const char *ttext(const lanes *L, int i) { return msl_tok_text(&L->c, i); }
static inline int is(const lanes *L, int i, const char *s) { return msl_tok_is(&L->c, i, s); }
static inline int is_ident(const lanes *L, int i) { return msl_tok_ident(&L->c, i); }
static inline int same_text(const lanes *L, int a, int b) { return msl_tok_same(&L->c, a, b); }

typedef struct lv_decl {
    int name, lo, hi;   /* declarator tokens [lo, hi) */
    int init_lo, init_hi; /* initializer expression, empty if none */
    int ptr;            /* * or & in the declarator */
    int array;
} lv_decl;

/* ---- lanes.c: shared by every phase */

/* Records the first reason the library is ineligible (later ones are dropped),
 * with the text line of token `at` (-1: none). */
void lv_reject(lanes *L, int at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int lv_push_int(int **a, int *n, int *cap, int v);

/* ---- lanes_parse.c */

/* L->c (operators joined, brackets matched) and L->decl (all -1) from L->text. */
int lv_lex(lanes *L, char **err);
void lv_collect_names(lanes *L);
int lv_scan_unsupported(lanes *L);
int lv_needs_collectives(lanes *L);
int lv_find_functions(lanes *L);
/* The statement at token i (before limit): its index in L->st, *next past it; -1. */
int lv_parse_stmt(lanes *L, int i, int limit, int *next);
int lv_has_prefix(const lanes *L, int i, const char *p);
int lv_is_one_of(const lanes *L, int i, const char *const *names);
int lv_is_type_name(const lanes *L, int i);
int lv_is_template_name(const lanes *L, int i);
int lv_chain_base(const lanes *L, int lo, int end, int *has_sub, int *has_deref);
int lv_is_assign_op(const lanes *L, int i);
int lv_decl_type_end(const lanes *L, int lo, int hi);
int lv_split_declarators(const lanes *L, int tyend, int hi, lv_decl *d, int max);
int lv_tg_decl_stmt(const lanes *L, int lo, int *name);

/* ---- lanes_uniform.c */

void lv_resolve_function(lanes *L, const lv_fn *f);
void lv_note_mem_names(lanes *L, lv_fn *f);
/* Seeds the kernels' per-lane parameters and spreads "varying" to a fixpoint. */
void lv_uniformity(lanes *L);
int lv_is_varying_name(const lanes *L, const lv_fn *f, int tok);
int lv_is_lanes_view(const lanes *L, int i);

/* ---- lanes_emit_expr.c */

void lv_out_gap(lanes *L, int upto);
void lv_out_tok(lanes *L, int i);
void lv_skip_tok(lanes *L, int i);
void lv_out_s(lanes *L, const char *s);
void lv_emit_raw(lanes *L, int lo, int hi);
void lv_emit_list(lanes *L, int lo, int hi);
void lv_emit_expr(lanes *L, int lo, int hi);
void lv_emit_operand(lanes *L, int lo, int hi);
int lv_find_top(const lanes *L, int lo, int hi, const char *op, int last);
int lv_unary_end(const lanes *L, int i, int hi);

/* ---- lanes_emit.c */

void lv_emit_function(lanes *L, lv_fn *f);

#endif
