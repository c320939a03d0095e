/* commands.h — subcommands implemented outside cli.c; cli.c dispatches
 * `gdnbench compare ...` and `gdnbench report ...` here with argv[0] = the
 * subcommand name.  Each returns the process exit status (cli.h). */
#ifndef GDN_COMMANDS_H
#define GDN_COMMANDS_H

/* gdnbench compare BASE NEW [--threshold PCT] [--alpha A] [--format table|markdown|json] */
int cmd_compare(int argc, char **argv);

/* gdnbench report DIR|FILE... [--out FILE.md] [--html FILE.html] */
int cmd_report(int argc, char **argv);

#endif
