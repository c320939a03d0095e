/* kernel_choice.h — which kernel each dispatch of an op runs: ours, or one from the
 * user's files (--shader FILE [--function NAME], --stage NAME=FILE[:FUNCTION]).
 *
 * Rules, per dispatch, first match wins:
 *   1. a --stage choice naming the dispatch's stage or role (the last one given):
 *      FILE's FUNCTION, or FILE's kernel of the stage's default name; FILE must
 *      define it;
 *   2. --shader FILE with --function NAME, on the op's main stage (op->main_stage):
 *      FILE's NAME, which FILE must define;
 *   3. --shader FILE: FILE's kernel of the stage's default name, when FILE defines it;
 *   4. ours: the op's own file (shaders/...) and default name.
 * --constant applies to the dispatches whose kernel comes from a user's file; when
 * none does (no --shader or --stage), to ours.
 *
 * Backends resolve through a lookup that says whether a file defines a function
 * (src/runner/backend_metal.c asks the compiled library); the CLI checks names and
 * the whole choice for every shape before anything runs (src/cli/stage_opts.c). */
#ifndef GDN_KERNEL_CHOICE_H
#define GDN_KERNEL_CHOICE_H

#include <limits.h>
#include <stddef.h>

#include "ops/op.h"
#include "runner/runner.h"

typedef enum kernel_origin {
    KERNEL_OURS = 0,     /* the op's own kernel */
    KERNEL_STAGE,        /* --stage NAME=FILE[:FUNCTION] */
    KERNEL_FUNCTION,     /* --shader FILE --function NAME, on the main stage */
    KERNEL_SHADER        /* --shader FILE, by the stage's default name */
} kernel_origin;

typedef struct stage_kernel {
    char path[1024];           /* the file to load: the user's, or ours ("shaders/x.metal") */
    char function[128];
    kernel_origin origin;
    /* filled by the backend once the file is loaded */
    char display[256];         /* what reports call the file ("... (embedded)" for ours built in) */
    char sha256[65];
} stage_kernel;

/* 1 when FILE defines FUNCTION, 0 when not (names, if not NULL, then gets the
 * functions FILE does define, comma-separated), -1 when FILE cannot be read or does
 * not compile (err set). */
typedef int (*kernel_lookup_fn)(void *ctx, const char *path, const char *function, char *names, size_t nameslen,
                                char *err, size_t errlen);

/* Index of the first dispatch of the case's main stage among its launches, or -1
 * when it has none (several stages and op->main_stage names none of them). */
int kernel_choice_main(const op_desc *op, const op_launch *ls, int n);
/* 1 when dispatch s belongs to the main stage. */
int kernel_choice_is_main(const op_desc *op, const op_launch *ls, int n, int s);

/* Fills out[0..n) for the case's launches ls[0..n) under o.  Returns 0, or -1 with a
 * one-line error naming the flag and the fix (a function FILE lacks, a file that
 * does not compile). */
int kernel_choice_resolve(const op_desc *op, const op_launch *ls, int n, const run_opts *o, kernel_lookup_fn lookup,
                          void *ctx, stage_kernel *out, char *err, size_t errlen);

/* "cumsum, kkt, solve_tril, ..., cast_dK, cast_dV (role cast)": the names --stage
 * accepts for these launches. */
void kernel_choice_stage_names(const op_launch *ls, int n, char *buf, size_t len);

/* 1 when name is a stage or role of one of the launches. */
int kernel_choice_has_stage(const op_launch *ls, int n, const char *name);

/* The launches of op at dim, computed from the dimensions alone (op.h: launch()
 * never reads tensors).  Returns the count, or -1 with err set. */
int kernel_choice_launches(const op_desc *op, const int64_t *dim, op_launch *ls, char *err, size_t errlen);

#endif
