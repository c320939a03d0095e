/* json_query.c — `gdnbench-testdata json`: read values out of a JSON file, so the CLI
 * tests can check gdnbench's JSON reports from the shell without Python.
 *
 *   gdnbench-testdata json FILE EXPR [EXPR...]
 *
 * An EXPR is a path from the document's root, made of steps:
 *   .KEY   the member KEY of an object (KEY runs to the next '.', '[' or '#')
 *   [N]    element N (from 0) of an array
 *   []     every element of an array, in order (the rest of the path applies to each)
 *   #      the number of elements of an array or object, or a string's length in
 *          bytes; only as the last step
 *   .      alone: the root itself
 * e.g. `.pairs[0].verdict`, `[].op`, `.kernel.constants[].index`, `.cases#`.
 * Every value the EXPRs select is printed on a line of its own, EXPR by EXPR: strings
 * raw, integers as integers, other numbers in the fewest digits that read back
 * exactly, true, false and null as words, objects and arrays as compact JSON (cJSON's
 * printer).  A file that does not parse, or a path that does not exist (a missing key,
 * an index past the end, a step on the wrong type), is one line on stderr and exit
 * status 2, nothing on stdout.
 * Keys holding '.', '[' or '#' cannot be named: gdnbench's reports have none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tools/testdata.h"

/* Integers as integers, else the fewest significant digits that read back as exactly x
 * (cJSON's printer allows a small error; a test comparing numbers wants the value). */
static void print_number(FILE *out, double x) {
    char text[64];
    if (x > -1e15 && x < 1e15 && x == (double)(long long)x) { /* an integer: 200, not 2e+02 */
        fprintf(out, "%lld\n", (long long)x);
        return;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x) break;
    }
    fprintf(out, "%s\n", text);
}

/* Walks EXPR from node.  With out NULL it only checks that the path exists (so a bad
 * path prints nothing at all); otherwise it prints what it selects. */
static int walk(const cJSON *node, const char *expr, const char *step, FILE *out, char *err, size_t errlen) {
    if (step == expr && strcmp(expr, ".") == 0) step++; /* "." = the root */
    if (*step == '\0') {
        if (!out) return 0;
        if (cJSON_IsString(node)) {
            fprintf(out, "%s\n", node->valuestring);
        } else if (cJSON_IsNumber(node)) {
            print_number(out, node->valuedouble);
        } else {
            char *text = cJSON_PrintUnformatted(node);
            if (!text) {
                snprintf(err, errlen, "out of memory printing %s", expr);
                return -1;
            }
            fprintf(out, "%s\n", text);
            cJSON_free(text);
        }
        return 0;
    }
    int at = (int)(step - expr);
    if (*step == '#') {
        if (step[1] != '\0') {
            snprintf(err, errlen, "'%s': '#' (a length) must be the last step (at column %d)", expr, at + 1);
            return -1;
        }
        long n;
        if (cJSON_IsArray(node) || cJSON_IsObject(node)) n = cJSON_GetArraySize(node);
        else if (cJSON_IsString(node)) n = (long)strlen(node->valuestring);
        else {
            snprintf(err, errlen, "'%s': '#' at column %d applies to an array, object or string, found %s", expr,
                     at + 1, cJSON_IsNumber(node) ? "a number" : "true, false or null");
            return -1;
        }
        if (out) fprintf(out, "%ld\n", n);
        return 0;
    }
    if (*step == '.') {
        const char *key = step + 1;
        size_t len = strcspn(key, ".[#");
        if (len == 0) {
            snprintf(err, errlen, "'%s': empty key at column %d", expr, at + 1);
            return -1;
        }
        if (!cJSON_IsObject(node)) {
            snprintf(err, errlen, "'%s': .%.*s at column %d: not an object there", expr, (int)len, key, at + 1);
            return -1;
        }
        const cJSON *child = NULL;
        cJSON_ArrayForEach(child, node) {
            if (child->string && strlen(child->string) == len && memcmp(child->string, key, len) == 0) break;
        }
        if (!child) {
            snprintf(err, errlen, "'%s': no key '%.*s' at column %d", expr, (int)len, key, at + 1);
            return -1;
        }
        return walk(child, expr, key + len, out, err, errlen);
    }
    if (*step == '[') {
        const char *close = strchr(step, ']');
        if (!close) {
            snprintf(err, errlen, "'%s': '[' at column %d has no ']'", expr, at + 1);
            return -1;
        }
        if (!cJSON_IsArray(node)) {
            snprintf(err, errlen, "'%s': [%.*s] at column %d: not an array there", expr, (int)(close - step - 1),
                     step + 1, at + 1);
            return -1;
        }
        if (close == step + 1) { /* [] */
            const cJSON *el;
            cJSON_ArrayForEach(el, node) {
                if (walk(el, expr, close + 1, out, err, errlen) != 0) return -1;
            }
            return 0;
        }
        long index = 0;
        for (const char *c = step + 1; c < close; c++) {
            if (*c < '0' || *c > '9' || index > 100000000) {
                snprintf(err, errlen, "'%s': [%.*s] at column %d: an index is digits (or [] for every element)", expr,
                         (int)(close - step - 1), step + 1, at + 1);
                return -1;
            }
            index = index * 10 + (*c - '0');
        }
        int size = cJSON_GetArraySize(node);
        if (index >= size) {
            snprintf(err, errlen, "'%s': index %ld at column %d is past the end (the array has %d elements)", expr,
                     index, at + 1, size);
            return -1;
        }
        return walk(cJSON_GetArrayItem(node, (int)index), expr, close + 1, out, err, errlen);
    }
    snprintf(err, errlen, "'%s': a step starts with '.', '[' or '#', found '%c' at column %d", expr, *step, at + 1);
    return -1;
}

int json_query_main(int argc, char **argv) {
    if (argc < 2) {
        fputs("gdnbench-testdata json: usage: gdnbench-testdata json FILE EXPR [EXPR...] (--help for the path syntax)\n",
              stderr);
        return 2;
    }
    const char *path = argv[0];
    char err[512];
    size_t len = 0;
    char *text = testdata_read_file(path, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, "gdnbench-testdata json: %s\n", err);
        return 2;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root || strlen(text) != len) {
        size_t off = root ? strlen(text) : (end ? (size_t)(end - text) : 0);
        fprintf(stderr, "gdnbench-testdata json: %s: not valid JSON (at byte %zu)\n", path, off);
        cJSON_Delete(root);
        free(text);
        return 2;
    }
    int rc = 0;
    for (int i = 1; i < argc && rc == 0; i++) { /* check every path before printing any */
        if (walk(root, argv[i], argv[i], NULL, err, sizeof err) != 0) {
            fprintf(stderr, "gdnbench-testdata json: %s: %s\n", path, err);
            rc = 2;
        }
    }
    for (int i = 1; i < argc && rc == 0; i++) {
        if (walk(root, argv[i], argv[i], stdout, err, sizeof err) != 0) {
            fprintf(stderr, "gdnbench-testdata json: %s: %s\n", path, err);
            rc = 2;
        }
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}
