/* cmd_compile.c — `gdnbench compile FILE.metal [-I DIR]... [-D NAME[=VALUE]]...`:
 * what `xcrun metal -c` is on a Mac, on the software Metal device.
 *
 * Compiles the file as a library (front end, clang++, dlopen of the variant
 * without function constants) and lists each kernel by host name with its
 * bindings (index, element type, address space, access; [[threadgroup(n)]]
 * parameters, whose size the host sets, among them), the threadgroup memory its
 * body declares, and the library's function constants.  Exit 0 compiled, 1 did not compile (the
 * first error, mapped to the .metal file and line, on stderr; what the software
 * device cannot provide says so in one line), 2 bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "core/clock.h"
#include "core/file.h"
#include "msl/msl_include.h"
#include "swmetal/swmetal.h"

#define MAX_ERROR_LINES 20

static void usage(FILE *f) {
    fprintf(f,
            "usage: gdnbench compile FILE.metal [-I DIR]... [-D NAME[=VALUE]]... [--json FILE|-] [--quiet]\n"
            "  -I DIR, --include DIR       where quoted and angle #includes are looked for (after the\n"
            "                              including file's own directory for quoted ones)\n"
            "  -D NAME[=VALUE], --define   a macro, as with the compiler's -D\n"
            "  --json FILE|-               kernels, bindings and function constants as JSON\n"
            "Compiles FILE as a kernel library on the software Metal device (as `xcrun metal -c` would on\n"
            "a Mac) and lists each kernel with its bindings.\n"
            "Exit 0 compiled, 1 did not compile (first error on stderr), 2 bad input.\n");
}

/* ---- binding descriptions ------------------------------------------------- */

typedef struct binding_view {
    const char *kind;          /* "buffer", "threadgroup", "attribute" */
    char index[48];            /* "3", or the attribute's name */
    const char *name;
    char type[160];            /* element type */
    const char *space;         /* "device", "constant", "threadgroup", "thread" */
    const char *access;        /* "read", "read_write", "" for ids */
} binding_view;

static const char *attr_name(int a) {
    switch (a) {
    case SW_ATTR_THREAD_POSITION_IN_GRID: return "thread_position_in_grid";
    case SW_ATTR_THREAD_POSITION_IN_THREADGROUP: return "thread_position_in_threadgroup";
    case SW_ATTR_THREADGROUP_POSITION_IN_GRID: return "threadgroup_position_in_grid";
    case SW_ATTR_THREADS_PER_THREADGROUP: return "threads_per_threadgroup";
    case SW_ATTR_THREADGROUPS_PER_GRID: return "threadgroups_per_grid";
    case SW_ATTR_THREADS_PER_GRID: return "threads_per_grid";
    case SW_ATTR_THREAD_INDEX_IN_THREADGROUP: return "thread_index_in_threadgroup";
    case SW_ATTR_SIMDGROUP_INDEX_IN_THREADGROUP: return "simdgroup_index_in_threadgroup";
    case SW_ATTR_THREAD_INDEX_IN_SIMDGROUP: return "thread_index_in_simdgroup";
    case SW_ATTR_SIMDGROUPS_PER_THREADGROUP: return "simdgroups_per_threadgroup";
    case SW_ATTR_THREADS_PER_SIMDGROUP: return "threads_per_simdgroup";
    case SW_ATTR_THREAD_EXECUTION_WIDTH: return "thread_execution_width";
    case SW_ATTR_THREAD_INDEX_IN_QUADGROUP: return "thread_index_in_quadgroup";
    case SW_ATTR_QUADGROUP_INDEX_IN_THREADGROUP: return "quadgroup_index_in_threadgroup";
    case SW_ATTR_QUADGROUPS_PER_THREADGROUP: return "quadgroups_per_threadgroup";
    default: return "attribute";
    }
}

/* Replaces every occurrence of `from` in s (capacity n) by `to`. */
/* The parameter's element type, address space and access, as the software device
 * reads them from the compiled kernel (swmtl_binding_describe). */
static void describe_type(const sw_binding *b, binding_view *v) {
    swmtl_binding_type t;
    swmtl_binding_describe(b, &t);
    snprintf(v->type, sizeof v->type, "%s", t.element);
    v->space = t.space;
    v->access = t.read_only ? "read" : "read_write";
}

static void view_binding(const sw_binding *b, binding_view *v) {
    memset(v, 0, sizeof *v);
    v->name = b->param ? b->param : "";
    if (b->kind == SW_BIND_ATTR) {
        v->kind = "attribute";
        snprintf(v->index, sizeof v->index, "%s", attr_name(b->index));
        swmtl_type_clean(b->type, v->type, sizeof v->type);
        if (!v->type[0]) snprintf(v->type, sizeof v->type, "?");
        v->space = "thread";
        v->access = "";
        return;
    }
    v->kind = b->kind == SW_BIND_BUFFER ? "buffer" : "threadgroup";
    snprintf(v->index, sizeof v->index, "%d", b->index);
    describe_type(b, v);
    if (b->kind == SW_BIND_THREADGROUP) v->space = "threadgroup";
}

/* ---- output ---------------------------------------------------------------- */

static void print_table(const char *path, sw_library *lib, const sw_kernel_listing *ks, int nk, double secs) {
    int nc = sw_library_constant_count(lib);
    printf("%s: compiled, %d kernel%s, %d function constant%s (%.2f s)\n", path, nk, nk == 1 ? "" : "s", nc,
           nc == 1 ? "" : "s", secs);
    if (sw_library_is_per_kernel(lib))
        printf("(a large library: checked whole here; a pipeline compiles and optimises its kernel alone)\n");
    for (int k = 0; k < nk; k++) {
        const sw_kernel_info *ki = ks[k].info;
        printf("kernel %s (line %d)\n", ki->name, ki->line);
        for (int i = 0; i < ki->nbindings; i++) {
            binding_view v;
            view_binding(&ki->bindings[i], &v);
            if (strcmp(v.kind, "attribute") == 0)
                printf("  [[%s]]  %s  %s\n", v.index, v.name, v.type);
            else
                printf("  %s(%s)  %s  %s %s  %s\n", v.kind, v.index, v.name, v.space, v.type, v.access);
        }
        long tg = ks[k].tg_static_bytes;
        if (tg > 0) printf("  threadgroup memory: %ld bytes declared in the kernel\n", tg);
        else if (tg < 0) printf("  threadgroup memory: unknown\n");
    }
    for (int i = 0; i < nc; i++) {
        int index, type, required;
        const char *name;
        sw_library_constant_info(lib, i, &index, &type, &name, &required);
        printf("function constant %d: %s %s (%s)\n", index, sw_fc_type_name(type), name,
               required ? "required" : "optional: tested with is_function_constant_defined");
    }
}

static cJSON *json_report(const char *path, sw_library *lib, const sw_kernel_listing *ks, int nk, double secs) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "file", path);
    cJSON_AddStringToObject(root, "status", "compiled");
    cJSON_AddNumberToObject(root, "seconds", secs);
    cJSON_AddBoolToObject(root, "per_kernel", sw_library_is_per_kernel(lib));
    cJSON *karr = cJSON_AddArrayToObject(root, "kernels");
    for (int k = 0; k < nk; k++) {
        const sw_kernel_info *ki = ks[k].info;
        cJSON *jk = cJSON_CreateObject();
        cJSON_AddStringToObject(jk, "name", ki->name);
        cJSON_AddNumberToObject(jk, "line", ki->line);
        cJSON *barr = cJSON_AddArrayToObject(jk, "bindings");
        for (int i = 0; i < ki->nbindings; i++) {
            binding_view v;
            view_binding(&ki->bindings[i], &v);
            cJSON *jb = cJSON_CreateObject();
            cJSON_AddStringToObject(jb, "kind", v.kind);
            if (strcmp(v.kind, "attribute") == 0) cJSON_AddStringToObject(jb, "attribute", v.index);
            else cJSON_AddNumberToObject(jb, "index", ki->bindings[i].index);
            cJSON_AddStringToObject(jb, "name", v.name);
            cJSON_AddStringToObject(jb, "type", v.type);
            cJSON_AddStringToObject(jb, "address_space", v.space);
            if (v.access[0]) cJSON_AddStringToObject(jb, "access", v.access);
            cJSON_AddItemToArray(barr, jb);
        }
        long tg = ks[k].tg_static_bytes;
        if (tg >= 0) cJSON_AddNumberToObject(jk, "threadgroup_memory_bytes", (double)tg);
        else cJSON_AddNullToObject(jk, "threadgroup_memory_bytes");
        cJSON_AddItemToArray(karr, jk);
    }
    cJSON *carr = cJSON_AddArrayToObject(root, "function_constants");
    for (int i = 0; i < sw_library_constant_count(lib); i++) {
        int index, type, required;
        const char *name;
        sw_library_constant_info(lib, i, &index, &type, &name, &required);
        cJSON *jc = cJSON_CreateObject();
        cJSON_AddNumberToObject(jc, "index", index);
        cJSON_AddStringToObject(jc, "type", sw_fc_type_name(type));
        cJSON_AddStringToObject(jc, "name", name);
        cJSON_AddBoolToObject(jc, "required", required);
        cJSON_AddItemToArray(carr, jc);
    }
    return root;
}

static cJSON *json_failure(const char *path, const char *status, const char *error) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "file", path);
    cJSON_AddStringToObject(root, "status", status);
    cJSON_AddStringToObject(root, "error", error);
    return root;
}

static int write_json(const char *dest, cJSON *root) {
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return -1;
    int rc = 0;
    if (strcmp(dest, "-") == 0) {
        printf("%s\n", text);
    } else {
        FILE *f = fopen(dest, "w");
        if (!f || fprintf(f, "%s\n", text) < 0) rc = -1;
        if (f && fclose(f) != 0) rc = -1;
    }
    free(text);
    return rc;
}

/* The compiler's message from its first error, at most MAX_ERROR_LINES lines. */
static void print_error(const char *msg) {
    int lines = 0;
    const char *p = msg;
    while (*p && lines < MAX_ERROR_LINES) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(stderr, "%s%.*s\n", lines ? "  " : "gdnbench: compile: ", (int)n, p);
        lines++;
        p = nl ? nl + 1 : p + n;
    }
    if (*p) fprintf(stderr, "  ... (more compiler output left out)\n");
}

/* What the command line asks for. */
typedef struct compile_args {
    msl_source_opts so;
    const char *path, *json;
    int quiet, help;
} compile_args;

/* An option's value: -IDIR / -DNAME=V joined, --opt=V, or the next argument.  NULL
 * with err set when there is none. */
static const char *option_value(int argc, char **argv, int *i, char *err, size_t errlen) {
    const char *a = argv[*i];
    const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
    const char *val = NULL;
    if (a[1] != '-' && a[2]) val = a + 2;
    else if (eq) val = eq + 1;
    else if (*i + 1 < argc) val = argv[++*i];
    if (!val || !*val) {
        snprintf(err, errlen, "%s needs a value", a);
        return NULL;
    }
    return val;
}

/* Adds -I DIR or -D NAME[=VALUE] to the source options.  0, or -1 with err set. */
static int add_include_or_define(msl_source_opts *so, int is_inc, const char *val, char *err, size_t errlen) {
    if (is_inc) {
        if (so->ninclude_dirs == MSL_MAX_INCLUDE_DIRS) {
            snprintf(err, errlen, "more than %d include directories", MSL_MAX_INCLUDE_DIRS);
            return -1;
        }
        so->include_dirs[so->ninclude_dirs++] = val;
        return 0;
    }
    if (msl_check_define(val, err, errlen)) return -1;
    if (so->ndefines == MSL_MAX_DEFINES) {
        snprintf(err, errlen, "more than %d -D definitions", MSL_MAX_DEFINES);
        return -1;
    }
    so->defines[so->ndefines++] = val;
    return 0;
}

static int parse_compile_args(int argc, char **argv, compile_args *ca, char *err, size_t errlen) {
    memset(ca, 0, sizeof *ca);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            ca->help = 1;
            return 0;
        }
        if (strcmp(a, "--quiet") == 0) {
            ca->quiet = 1;
            continue;
        }
        int is_inc = strncmp(a, "-I", 2) == 0 || strcmp(a, "--include") == 0 || strncmp(a, "--include=", 10) == 0;
        int is_def = strncmp(a, "-D", 2) == 0 || strcmp(a, "--define") == 0 || strncmp(a, "--define=", 9) == 0;
        int is_json = strcmp(a, "--json") == 0 || strncmp(a, "--json=", 7) == 0;
        if (is_inc || is_def || is_json) {
            const char *val = option_value(argc, argv, &i, err, errlen);
            if (!val) return -1;
            if (is_json) ca->json = val;
            else if (add_include_or_define(&ca->so, is_inc, val, err, errlen)) return -1;
        } else if (a[0] == '-' && a[1]) {
            snprintf(err, errlen, "compile: unknown option %s (see gdnbench compile --help)", a);
            return -1;
        } else if (ca->path) {
            snprintf(err, errlen, "compile takes one .metal file; got %s and %s", ca->path, a);
            return -1;
        } else {
            ca->path = a;
        }
    }
    return 0;
}

/* A library that did not compile: the message (one line for a missing compiler or
 * an unsupported feature), the JSON when asked; the exit status. */
static int report_failure(const compile_args *ca, const char *m) {
    if (strstr(m, "clang++ >= 17")) {
        fprintf(stderr, "gdnbench: compile: %s\n", m);
        return EXIT_BAD_INPUT;
    }
    const char *unsupported = strstr(m, "not supported by the software Metal device");
    if (unsupported) {
        /* one line: the first one that says what is missing */
        const char *line = unsupported;
        while (line > m && line[-1] != '\n') line--;
        const char *nl = strchr(line, '\n');
        fprintf(stderr, "gdnbench: compile: %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
    } else {
        print_error(m);
    }
    if (ca->json && write_json(ca->json, json_failure(ca->path, unsupported ? "unsupported" : "failed", m)) != 0)
        fprintf(stderr, "gdnbench: compile: cannot write %s\n", ca->json);
    return EXIT_CHECK_FAILED;
}

/* Every kernel of the library built for listing, into ks[nk].  The exit status. */
static int list_kernels(sw_library *lib, sw_kernel_listing *ks, int nk) {
    if (!ks) {
        fprintf(stderr, "gdnbench: compile: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    for (int k = 0; k < nk; k++) {
        char *msg = NULL;
        if (sw_library_list_kernel(lib, sw_library_kernel_name(lib, k), &ks[k], &msg) != 0) {
            print_error(msg ? msg : "the kernel is missing from its compiled library");
            free(msg);
            return EXIT_CHECK_FAILED;
        }
    }
    return EXIT_OK;
}

int cmd_compile(int argc, char **argv) {
    compile_args ca;
    char err[512] = "";
    if (parse_compile_args(argc, argv, &ca, err, sizeof err) != 0) {
        fprintf(stderr, "gdnbench: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    if (ca.help || !ca.path) {
        usage(ca.help ? stdout : stderr);
        return ca.help ? EXIT_OK : EXIT_BAD_INPUT;
    }
    file_text ft;
    file_read_all(ca.path, FILE_NO_LIMIT, 0, &ft, NULL, 0);
    if (!ft.data) {
        fprintf(stderr, "gdnbench: compile: cannot read %s: give the path of a .metal file\n", ca.path);
        return EXIT_BAD_INPUT;
    }
    double t0 = clock_now_us();
    char *msg = NULL;
    sw_library *lib = sw_library_create_opts(ft.data, ca.path, &ca.so, &msg);
    free(ft.data);
    if (!lib) {
        int status = report_failure(&ca, msg ? msg : "compilation failed");
        free(msg);
        return status;
    }
    int nk = sw_library_kernel_count(lib);
    sw_kernel_listing *ks = calloc((size_t)(nk ? nk : 1), sizeof *ks);
    int status = list_kernels(lib, ks, nk);
    double secs = (clock_now_us() - t0) * 1e-6;
    if (status == EXIT_OK) {
        if (!ca.quiet && !(ca.json && strcmp(ca.json, "-") == 0)) print_table(ca.path, lib, ks, nk, secs);
        if (ca.json && write_json(ca.json, json_report(ca.path, lib, ks, nk, secs)) != 0) {
            fprintf(stderr, "gdnbench: compile: cannot write %s\n", ca.json);
            status = EXIT_BAD_INPUT;
        }
    }
    free(ks);
    sw_library_free(lib);
    return status;
}
