/* commands.h — the subcommands cli.c dispatches to. Each returns an exit status. */
#ifndef GDN_COMMANDS_H
#define GDN_COMMANDS_H

#include "ops/op.h"

int cmd_run(const op_desc *op, int argc, char **argv);  /* gdnbench <op> ... */
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_suite(int argc, char **argv);  /* gdnbench suite NAME */
/* validate takes argv starting at its own name (argv[0] = "validate", argv[1] = op). */
int cmd_validate(int argc, char **argv);
/* compare and report take argv starting at their own name (argv[0] = "compare"). */
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* compile takes argv starting at its own name (argv[0] = "compile"). */
int cmd_compile(int argc, char **argv);
/* kernel takes argv starting at its own name (argv[0] = "kernel"). */
int cmd_kernel(int argc, char **argv);
/* validate CASE.json and suite DIR of kernel cases (argv[0] = "validate" / "suite"). */
int cmd_kernel_validate(int argc, char **argv);
int cmd_kernel_suite(int argc, char **argv);

#endif
