/* ir_target.h — moving a module's textual LLVM IR between targets: the canonical
 * middle end of the IR stage (ir_pass.h, sw_ir_pass.canonical).
 *
 * LLVM's optimisation pipeline is steered by its target (cost models, which
 * divisions it splits, how far it unrolls), so the same kernel optimised for x86-64
 * and for arm64 is not the same IR, and a pass that counts that IR's instructions
 * counts differently on each.  A pass that must see the same IR everywhere gets the
 * host front end's IR retargeted to one fixed target (SW_IR_CANONICAL_TRIPLE, its
 * CPU attributes removed), optimised for that target, and afterwards put back on the
 * host's target for the last, optimising run (compile.c). */
#ifndef GDN_SW_IR_TARGET_H
#define GDN_SW_IR_TARGET_H

#include <stddef.h>

#include "msl/msl_lex.h"

/* The target every host's counting IR is optimised for (clang's --target). */
#define SW_IR_CANONICAL_TRIPLE "x86_64-unknown-linux-gnu"

/* What a module says about its target: the datalayout and triple lines, and the
 * function attributes naming a CPU ("target-cpu", "target-features", "tune-cpu")
 * as its first attribute group that has them writes them. */
typedef struct sw_ir_target sw_ir_target;

/* The front end's target, read from its module; NULL with *err (malloc'd, one line)
 * when the text has no target triple. */
sw_ir_target *sw_ir_target_read(const char *text, size_t len, char **err);
void sw_ir_target_free(sw_ir_target *t);
/* t without its CPU attributes: a module put on it names no CPU, and the last clang
 * run's flags (-march, or the triple's default) choose one. */
void sw_ir_target_forget_cpu(sw_ir_target *t);

/* The module with no target of its own, for clang to optimise under
 * --target=SW_IR_CANONICAL_TRIPLE (which supplies that target's layout): no
 * datalayout or triple line, no CPU attributes, and no comdats — ELF's, which
 * Mach-O lacks, and which keep the inliner from folding a template's only call
 * (a kernel library is one translation unit: there is nothing for them to merge,
 * so they do not come back). */
void sw_ir_strip_target(const char *text, size_t len, msl_buf *out);

/* The module on target t: its datalayout and triple lines in place of the ones the
 * text has, and t's CPU attributes (any others removed) in every attribute group a
 * function definition or declaration (not an intrinsic's) names. */
void sw_ir_put_target(const char *text, size_t len, const sw_ir_target *t, msl_buf *out);

/* The functions `after` declares or defines that `before` does not, but for LLVM's
 * intrinsics: calls the middle end introduced (a library call the canonical target
 * has and this host may lack).  0 when each of them resolves in this process
 * (dlsym), -1 with *err naming the first that does not. */
int sw_ir_check_new_calls(const char *before, size_t nbefore, const char *after, size_t nafter, char **err);

#endif
