/* msl_front.h — internals of the MSL front end (source pre-pass), shared by
 * msl_front*.c (kernel discovery and rewrites), msl_emit.c (the generated C++),
 * the lanes rewrite (lanes*.c) and compile.c.  Tokens and the text buffer:
 * msl/msl_lex.h and msl/msl_cursor.h.
 *
 * Pipeline for one library:
 *   1. msl_expand_source (msl_include.h): inline the included headers between
 *      line markers, blank `#include <metal_*>`, so the preprocessor's output
 *      names .metal lines.
 *   2. clang -E (compile.c) expands the user's macros (MLX instantiates kernels
 *      through macros, so a pre-pass without a preprocessor would miss them).
 *   3. msl_front_parse on the preprocessed text: finds kernels, bindings and
 *      function constants, and rewrites the text in place without moving any line.
 *   4. msl_front_emit: the C++ of one variant (function-constant values, prelude
 *      include, rewritten text, one extern "C" entry per kernel, sw_kernels[]). */
#ifndef GDN_MSL_FRONT_H
#define GDN_MSL_FRONT_H

#include <stddef.h>

#include "msl/msl_lex.h"
#include "swmetal/sw_compile.h"

/* ---- what the pre-pass finds ---- */
typedef struct msl_binding {
    int kind;          /* sw_bind_kind */
    int index;         /* buffer / threadgroup index or sw_attr */
    char *param;
    int line;
    char *type_word;   /* the named type a buffer points to ("Params" of `constant Params &p`), or NULL */
} msl_binding;

typedef struct msl_kernel {
    char *host_name;   /* name the host asks for */
    char *callee;      /* C++ expression naming the function: "::f", "::ns::attn<bfloat, 64>" */
    char *file;        /* file of the declaration */
    int line;
    int nbindings;
    msl_binding *bindings;
    /* An explicit instantiation (`template [[host_name("x")]] ... f<T>;`): its span
     * in msl_unit.text, so that the C++ of one kernel can leave the others'
     * instantiations out.  inst == 3 when both ends are known. */
    int inst, inst_lo, inst_hi;
    /* [[max_total_threads_per_threadgroup(N)]]: N's text, a constant expression the
     * kernel table evaluates; NULL = none (or a template's, which may depend on its
     * parameters: not taken) */
    char *max_threads;
} msl_kernel;

typedef struct msl_constant {
    char *name;
    int index;         /* [[function_constant(index)]] */
    int type;          /* SW_FC_* */
    int tested;        /* the source calls is_function_constant_defined(name) */
} msl_constant;

typedef struct msl_unit {
    char *text;        /* rewritten preprocessed source, same lines as the input */
    msl_kernel *kernels;
    int nkernels;
    msl_constant *constants;
    int nconstants;
    int emit_range;    /* set by the caller: emit each kernel's sw_range_fn (sync-free text) */
    int atomic_free;   /* set by the caller: no atomics in the text (msl_sync.c), so the
                          prelude's device fences need not ask for a turn (atomics.c) */
} msl_unit;

/* Step 3.  `text` is (preprocessed) source; filename names it in errors until a
 * line marker says otherwise.  Returns 0, or -1 with *err set and *out zeroed. */
int msl_front_parse(const char *text, const char *filename, msl_unit *out, char **err);
void msl_unit_free(msl_unit *u);
/* Step 4.  only < 0: every kernel; else the C++ of kernel `only` alone (the other
 * kernels' explicit instantiations blanked, so clang neither instantiates nor
 * optimises them; plain kernel definitions stay, as ordinary functions). */
char *msl_front_emit(const msl_unit *u, const sw_fc_value *fcs, int nfcs, int only, char **err);

/* The lanes rewrite of u->text (lanes.c): the text with every function's
 * varying values as 32-lane data.  Returns it (malloc'd), or NULL with *why
 * (malloc'd) saying why the library cannot run that way. */
char *msl_lanes_rewrite(const msl_unit *u, char **why);
/* Step 4 for the lanes variant: `text` from msl_lanes_rewrite, one sw_lanes_N
 * entry per kernel and sw_lanes_kernels[] (sw_abi.h). */
char *msl_front_emit_lanes(const msl_unit *u, const char *text, const sw_fc_value *fcs, int nfcs, char **err);

/* 1 when the (preprocessed) text has no identifier that could reach a barrier or a
 * simd/quad function (msl_sync.c; conservative: 0 when unsure). */
int msl_text_sync_free(const char *text, const char *filename);
/* 1 when the (preprocessed) text has no identifier containing "atomic" (msl_sync.c). */
int msl_text_atomic_free(const char *text, const char *filename);

/* Function constant type names ("bool", "uint", ...) <-> SW_FC_*; 0 if unknown. */
int msl_fc_type_from_name(const char *name, size_t len);
const char *msl_fc_type_name(int type);

/* The struct definitions of a library's text, found in one pass (msl_emit_struct.c):
 * NULL when out of memory.  The text must outlive it. */
typedef struct msl_struct_defs msl_struct_defs;
msl_struct_defs *msl_struct_defs_find(const char *text);
void msl_struct_defs_free(msl_struct_defs *d);

/* Emits `alias` (the declaration of `type`, the C++ type the compiler measures) and
 * `static const sw_struct_layout SYM` for struct `name` (its definition read from
 * the text of defs for the member names):
 * 1, or 0 when the definition is missing, ambiguous or not one this reader follows
 * (msl_emit_struct.c). */
int msl_emit_struct_layout(msl_buf *b, const msl_struct_defs *defs, const char *name, const char *alias,
                           const char *type, const char *sym);

#endif
