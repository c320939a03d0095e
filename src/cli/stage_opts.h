/* stage_opts.h — kernel choice per stage on the command line, shared by run,
 * validate and suite: parsing --stage NAME=FILE[:FUNCTION], checking every choice
 * against every shape before anything runs, and the per-op --help lines saying
 * which stage is the main one.  The rules are in runner/kernel_choice.h. */
#ifndef GDN_STAGE_OPTS_H
#define GDN_STAGE_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "runner/backend.h"
#include "runner/driver.h"
#include "runner/runner.h"

/* --stage NAME=FILE[:FUNCTION] (repeatable).  Returns 0 or -1 with err set. */
int cli_parse_stage_option(const char *val, run_opts *o, char *err, size_t errlen);

/* 1 when o chooses any kernel of the user's (--shader or --stage). */
int cli_has_kernel_choice(const run_opts *o);

/* Checks o's kernel choice for cases[0..n) on b: every --stage
 * name is a stage of some case, --function has a main stage to go to, every file
 * loads and defines what is asked of it.  `each_case`: every case must take its
 * main stage (or, without one, some stage) from --shader FILE when --shader is
 * given without --function (run, validate); otherwise (suite) some case must take
 * something from it.  Returns 0, or -1 with a one-line error naming the flag. */
int cli_check_kernel_choice(backend *b, const driver_case *cases, int n, const run_opts *o, int each_case, char *err,
                            size_t errlen);

/* The --help lines about op's stages at its default shape: which one is the main
 * stage (what --function replaces) and the names --stage accepts. */
void cli_print_stage_help(FILE *f, const op_desc *op);

#endif
