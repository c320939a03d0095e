/* cli.c — subcommand dispatch. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "ops/op.h"

int cli_main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "compare") == 0) return cmd_compare(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "report") == 0) return cmd_report(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "list") == 0) {
        for (int i = 0; op_table[i]; i++) printf("%-12s %s\n", op_table[i]->name, op_table[i]->summary);
        return EXIT_OK;
    }
    fprintf(stderr, "gdnbench: usage: gdnbench list\n");
    return EXIT_BAD_INPUT;
}
