/* testdata.h — the subcommands of gdnbench-testdata, the fixture writer of the CLI
 * tests (tests/tools/testdata.c). Each takes the arguments after its name and
 * returns the exit status: 0 written, 2 bad arguments or input (one line on stderr). */
#ifndef GDN_TESTDATA_H
#define GDN_TESTDATA_H

int reports_main(int argc, char **argv);
int torch_style_main(int argc, char **argv);

#endif
