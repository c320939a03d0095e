/* msl_front_internal.h — private to the MSL front end (msl_front*.c): the pass's
 * state, the edits it makes, and what its files offer each other.
 *
 *   msl_front.c          the pass: attributes, brackets, function constants, the
 *                        edits applied, msl_front_parse
 *   msl_front_decls.c    namespace-scope declarations: kernels (parameters,
 *                        bindings, instantiations), member-function address spaces
 *   msl_front_rewrite.c  rewrites inside bodies and expressions: function-scope
 *                        threadgroup memory, vector constructors, conditional
 *                        operands, string and braced arguments, atomics */
#ifndef GDN_MSL_FRONT_INTERNAL_H
#define GDN_MSL_FRONT_INTERNAL_H

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
    char **type_params;          /* names declared `typename X` / `class X` in a template head */
    int ntype_params;
    attr_group *attrs;
    int nattrs;
    edit *edits;
    int nedits, capedits;
    kernel_template *templates;
    int ntemplates;
    msl_unit *u;
    char *err;
} front;

/* Shorthands over the shared token layer (msl/msl_cursor.h), on the collapsed tokens. */
static inline const char *tk_text(const front *f, int i) { return msl_tok_text(&f->c, i); }
static inline int tk_is(const front *f, int i, const char *s) { return msl_tok_is(&f->c, i, s); }
static inline int tk_ident(const front *f, int i) { return msl_tok_ident(&f->c, i); }
static inline char *tk_dup(const front *f, int i) { return msl_tok_dup(&f->c, i); }
static inline char *tk_range_dup(const front *f, int a, int b) { return msl_tok_span_dup(&f->c, a, b); }

/* ---- msl_front.c */

/* An error at token i of f->c (msl_error_at: past the end, the last token).  The
 * first error is the one reported.  Returns -1. */
int fe_fail(front *f, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Replaces bytes [start, end) with text (owned; NULL: blanks, newlines kept). */
int fe_add_edit(front *f, int start, int end, char *text);
int fe_mark_instantiation(front *f, int first, int last);
void fe_blank_tok(front *f, int i);
int fe_parse_int_arg(const front *f, int lo, int hi, long *out);
char *fe_parse_string_arg(const front *f, int lo, int hi);
int fe_is_standard_attr(const char *name);
const attr_item *fe_find_attr(const front *f, int tk_index, const char *name);
int fe_rewrite_function_constant(front *f, int ds, int end, int at);

/* ---- msl_front_decls.c */

void fe_kernel_free(msl_kernel *k);
int fe_is_space_word(const front *f, int i);
void fe_strip_coherent(front *f);
int fe_reject_unsupported(front *f);
int fe_strip_method_spaces(front *f);
int fe_walk_ns(front *f, int lo, int hi, const char *ns);

/* ---- msl_front_rewrite.c */

int fe_rewrite_threadgroup_decl(front *f, int i, const char *kernel_ref);
int fe_rewrite_threadgroup_decls(front *f);
int fe_rewrite_vector_constructors(front *f);
int fe_rewrite_array_params(front *f);
int fe_rewrite_braced_args(front *f);
int fe_rewrite_string_args(front *f);
int fe_rewrite_conditionals(front *f);
int fe_rewrite_discarded_atomics(front *f);

/* ---- msl_front_bool.c */

int fe_is_bool_vector(const front *f, int i);
/* The end of the expression at tk[p]: its ',' or ';', or the closer of its group. */
int fe_expr_end(const front *f, int p);
/* Wraps tokens [p, e) in ::metal::sw_truth(...); 0 or -1. */
int fe_wrap_truth(front *f, int p, int e);
/* tk[i] starts the declaration of bool vectors: their later assignments in the
 * block take comparisons (`m = a < b;`, `m &= a < b;`). */
int fe_rewrite_bool_assignments(front *f, int i);

#endif
