/* ir_pass.h — passes over a variant's optimised LLVM IR (llir.h), run between
 * clang's optimisation pipeline and its code generation.
 *
 * A variant that needs one is built in two clang runs (compile.c): the C++ to
 * optimised textual IR (clang's own instrumentation, such as ThreadSanitizer's,
 * included), then — after the passes have edited the text — that IR to the shared
 * object.  A pass edits, it never optimises; the last run either emits the edited IR
 * as it is (LLVM's pipeline off: what a numeric check inserted reaches the machine
 * code as inserted) or, for a pass that asks (reoptimise), optimises it again first:
 * the counting pass's inline counters and hooks are ordinary memory operations and
 * calls, whose every dynamic effect any correct optimisation keeps, and its static
 * numbers were taken from the IR before the edit. */
#ifndef GDN_SW_IR_PASS_H
#define GDN_SW_IR_PASS_H

#include "swmetal/llir.h"

typedef struct sw_ir_pass {
    const char *name;     /* in errors: "the <name> pass: ..." */
    int version;          /* in every variant's cache key: bump when the output changes */
    /* Edits m; 0, or -1 with *err (malloc'd, one line). */
    int (*run)(ll_module *m, char **err);
    int reoptimise;       /* the last clang run optimises the edited IR (-O2) */
    /* The pass reads IR optimised for SW_IR_CANONICAL_TRIPLE (ir_target.h), the same
     * on every host: the front end's IR is retargeted, optimised for that target,
     * given to the passes and put back on the host's target for the last run. */
    int canonical;
} sw_ir_pass;

#define SW_IR_MAX_PASSES 8

/* The passes a variant with these SW_INSTR_* bits gets on this build, in the order
 * they run; returns how many (0: the variant is built in one clang run).
 * GDNBENCH_SW_IR_ROUNDTRIP=1 sends every variant through the IR stage (with its
 * passes, if any): a test that the reader and writer keep every kernel intact. */
int sw_ir_passes(int instr, const sw_ir_pass **out, int max);
int sw_ir_roundtrip(void);

/* Whether one of these passes asks the last run to optimise again; whether one
 * asks for the canonical middle end. */
int sw_ir_reoptimise(const sw_ir_pass *const *passes, int n);
int sw_ir_canonical(const sw_ir_pass *const *passes, int n);

/* "name:version,..." of those passes ("" for none; "roundtrip" when forced
 * through with none; "+canonical1" after a canonical pass's): what the cache key
 * holds. */
void sw_ir_pass_signature(int instr, char *out, size_t n);

/* Reads text as a module, runs the passes, writes the result: 0, or -1 with *err. */
int sw_ir_run_passes(const char *text, size_t len, const sw_ir_pass *const *passes, int n, msl_buf *out,
                     char **err);

#endif
