/* cli.h — command-line entry: subcommand dispatch and exit-status conventions.
 *
 * Exit status (cli.md): 0 all good; 1 ran but a check or comparison failed;
 * 2 bad input or could not run (one line on stderr naming the flag or file). */
#ifndef GDN_CLI_H
#define GDN_CLI_H

#include "runner/record.h"

enum { EXIT_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_BAD_INPUT = 2 };

/* The exit status of a verdict (runner/driver.h's driver_verdict). */
static inline int cli_exit_status(run_status verdict) {
    return verdict == RUN_ERROR ? EXIT_BAD_INPUT : verdict == RUN_FAIL ? EXIT_CHECK_FAILED : EXIT_OK;
}

int cli_main(int argc, char **argv);

#endif
