/* testdata.h — the subcommands of gdnbench-testdata, the fixture writer and JSON/XML
 * reader of the CLI tests (tests/tools/testdata.c). Each takes the arguments after its
 * name and returns the exit status: 0 done, 2 bad arguments or input (one line on
 * stderr). */
#ifndef GDN_TESTDATA_H
#define GDN_TESTDATA_H

#include <stddef.h>

int reports_main(int argc, char **argv);
int torch_style_main(int argc, char **argv);
int json_query_main(int argc, char **argv);
int xml_check_main(int argc, char **argv);
int tensor_files_main(int argc, char **argv);

/* The whole file, NUL-terminated (*len bytes before the NUL), for the caller to free;
 * NULL with a message in err when it cannot be read. */
char *testdata_read_file(const char *path, size_t *len, char *err, size_t errlen);

#endif
