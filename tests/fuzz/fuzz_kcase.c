/* fuzz_kcase.c — libFuzzer target: kc_parse (kernel case files) on arbitrary bytes.
 * Built and run by tests/fuzz/run.sh.  A rejected input gets one line naming the
 * case; an accepted one prints to JSON that parses back to the same printed case. */
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[768] = "";
    kc_case *c = kc_parse((const char *)data, size, "fuzz.json", ".", err, sizeof err);
    if (!c) {
        if (!err[0] || strchr(err, '\n') || strncmp(err, "fuzz.json:", 10) != 0) abort();
        return 0;
    }
    char *p1 = kc_to_json(c);
    kc_free(c);
    if (!p1) abort();
    kc_case *c2 = kc_parse(p1, strlen(p1), "fuzz.json", ".", err, sizeof err);
    char *p2 = c2 ? kc_to_json(c2) : NULL;
    if (!p2 || strcmp(p1, p2) != 0) abort();
    kc_free(c2);
    free(p1);
    free(p2);
    return 0;
}
