/* main.c — the gdnbench binary: hands the command line to the CLI layer. */
#include "cli/cli.h"

int main(int argc, char **argv) { return cli_main(argc, argv); }
