/* clang_step.h — the clang runs of one variant's build (clang_step.c), for
 * compile.c: how a variant is built, one run, and the IR stage (ir_pass.h). */
#ifndef GDN_SW_CLANG_STEP_H
#define GDN_SW_CLANG_STEP_H

#include <stdint.h>

#include "swmetal/compile_stats.h"
#include "swmetal/cxx.h"
#include "swmetal/ir_pass.h"

/* How a variant is built:
 *   BUILD_RUN      the kernels as they run: -O2, instrumented as asked;
 *   BUILD_LISTING  every kernel at -O0, for the compile command's table of a large
 *                  library (bindings and static threadgroup memory come from the
 *                  loaded object; optimising thousands of instantiations is what
 *                  takes clang minutes);
 *   BUILD_CHECK    clang -fsyntax-only over every kernel: what creating a large
 *                  library costs (errors surface there, as on Metal); only a marker
 *                  file is cached;
 *   BUILD_LANES    the lanes variant (lanes.c) as it runs;
 *   BUILD_CODEGEN  the last run of a canonical build (IR in: clang_step.c): the
 *                  plain variant's code generation for this host. */
enum { BUILD_RUN, BUILD_LISTING, BUILD_CHECK, BUILD_LANES, BUILD_CODEGEN };

/* One run of a build, as sw_clang_step takes it. */
typedef struct build_step {
    const sw_cxx *cc;
    int instr, mode;
    const char *incl;        /* "-I<prelude dir>" */
    const char *tmp_base;    /* the output's temporary name: trace and stderr go beside it */
    const char *key;         /* the variant's key */
} build_step;

/* This host's flags for a build mode and instrumentation: how many went to flags. */
int sw_clang_flags(int instr, int mode, const char **flags, int max);

/* clang's message from its stderr file, or "<what> failed without a message". */
char *sw_clang_message(const char *stderr_path, const char *what);

/* A clang process started (sw_compile_invocations counts them). */
void sw_clang_invoked(void);

/* One clang run: b's flags, `extra`, "-o out" (none when NULL), the input.  0; 1
 * when the compiler rejected the C++ (*err its message); 2 when it could not run
 * or write (*err says why). */
int sw_clang_step(const build_step *b, const char *const *extra, int nextra, const char *out, const char *in,
                  sw_clang_times *times, double *wall, char **err);

/* The IR stage: cpp_path through the passes into tmp_so.  Returns as sw_clang_step. */
int sw_clang_through_ir(const build_step *b, const sw_ir_pass *const *passes, int npasses, const char *cpp_path,
                        const char *tmp_so, sw_clang_times *times, double *wall, char **err);

#endif
