/* testdata.c — gdnbench-testdata: fixtures for the CLI tests, written without Python
 * (the project's rule: Python only under scripts/, for fixtures that need torch).
 *
 *   gdnbench-testdata reports OUT.json SPEC...     synthetic JSON reports (compare, report)
 *   gdnbench-testdata reports - < LINES
 *   gdnbench-testdata torch-style DUMP OUT [--deflate] SPEC...
 *                                                  safetensors / .npz files laid out as
 *                                                  torch and numpy write them (own data)
 *
 *   gdnbench-testdata json FILE EXPR...          values out of a JSON file (a report),
 *                                                one per line: checks without Python
 *   gdnbench-testdata xml FILE [TAG]             is FILE well-formed XML; its root and
 *                                                the text of its TAG elements
 *
 * See report_fixtures.c and torch_style.c for the SPEC languages, json_query.c for the
 * path syntax and xml_check.c for what "well-formed" covers here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/testdata.h"

static const char usage[] =
    "usage: gdnbench-testdata reports OUT.json SPEC [SPEC...]\n"
    "       gdnbench-testdata reports - < LINES        (each line: OUT.json|SPEC|SPEC...)\n"
    "       gdnbench-testdata torch-style DUMP.safetensors OUT [--deflate] NEW=OLD[:DTYPE][@SHAPE]...\n"
    "       gdnbench-testdata json FILE EXPR [EXPR...]   EXPR: .KEY [N] [] (every element) # (length), e.g. .pairs[0].verdict\n"
    "       gdnbench-testdata xml FILE [TAG]\n"
    "       gdnbench-testdata tensors OUT.npy|OUT.safetensors NAME:DTYPE:SHAPE:VALUES...\n";

char *testdata_read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break; /* end of file or an error (ferror below) */
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int read_error = ferror(f);
    fclose(f);
    if (!buf || read_error) {
        snprintf(err, errlen, "%s: %s", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "reports") == 0) return reports_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "torch-style") == 0) return torch_style_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "json") == 0) return json_query_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "xml") == 0) return xml_check_main(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "tensors") == 0) return tensor_files_main(argc - 2, argv + 2);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "gdnbench-testdata: %s%s%s: the subcommands are reports, torch-style, json, xml and tensors (--help shows usage)\n",
            argc >= 2 ? "unknown subcommand '" : "no subcommand", argc >= 2 ? argv[1] : "", argc >= 2 ? "'" : "");
    return 2;
}
