/* kernel_opts.h — the options every kernel-running command shares (run, validate):
 * which kernel (--shader, --function, --constant) and how strictly it is checked
 * (--atol, --rtol), parsed one way everywhere. */
#ifndef GDN_KERNEL_OPTS_H
#define GDN_KERNEL_OPTS_H

#include <stddef.h>

#include "runner/runner.h"

/* Splits argv[*i] ("--name=value", "--name value" or a bare "--flag") into name and
 * value, advancing *i past a separate value.  Flags in `bare` (a NULL-terminated list)
 * take no value (*val = NULL).  Returns 0, or -1 with err set. */
int cli_split_option(int argc, char **argv, int *i, const char *const *bare, char *name, size_t namelen,
                     const char **val, char *err, size_t errlen);

/* Handles --shader, --function, --stage, --constant, --include, --define, --atol,
 * --rtol and --sw-max-findings (distinct findings of the software device's checks
 * shown per case).  Returns 1 when name was one of them (and was valid), 0 when it
 * is not a kernel option, -1 on a bad value (err set). */
int cli_parse_kernel_option(const char *name, const char *val, run_opts *o, char *err, size_t errlen);

/* --function needs --shader (--shader alone is fine).  Returns 0 or -1 (err set). */
int cli_check_kernel_options(const run_opts *o, char *err, size_t errlen);

#endif
