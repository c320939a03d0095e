/* testdata.c — gdnbench-testdata: fixtures for the CLI tests, written without Python
 * (the project's rule: Python only under scripts/, for fixtures that need torch).
 *
 *   gdnbench-testdata reports OUT.json SPEC...     synthetic JSON reports (compare, report)
 *   gdnbench-testdata reports - < LINES
 *   gdnbench-testdata torch-style DUMP OUT [--deflate] SPEC...
 *                                                  safetensors / .npz files laid out as
 *                                                  torch and numpy write them (own data)
 *
 * See report_fixtures.c and torch_style.c for the SPEC languages. */
#include <stdio.h>
#include <string.h>

#include "tools/testdata.h"

static const char usage[] =
    "usage: gdnbench-testdata reports OUT.json SPEC [SPEC...]\n"
    "       gdnbench-testdata reports - < LINES        (each line: OUT.json|SPEC|SPEC...)\n"
    "       gdnbench-testdata torch-style DUMP.safetensors OUT [--deflate] NEW=OLD[:DTYPE][@SHAPE]...\n";

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "reports") == 0) return reports_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "torch-style") == 0) return torch_style_main(argc - 2, argv + 2);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "gdnbench-testdata: %s%s%s: the subcommands are reports and torch-style (--help shows usage)\n",
            argc >= 2 ? "unknown subcommand '" : "no subcommand", argc >= 2 ? argv[1] : "", argc >= 2 ? "'" : "");
    return 2;
}
