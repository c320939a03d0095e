/* cmd_kernel.c — `gdnbench kernel CASE.json` and its flag form `gdnbench kernel
 * FILE.metal --function NAME ...` (../shared/spec/case.md): any kernel, any buffers.
 *
 * Both forms become one kc_case (src/kcase); `--print-case` prints it as the case
 * file it is.  Before anything else the case is checked whole — every key, every file
 * against what the case says of it, the source present — so bad input is one line
 * naming the key path and exit 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "io/io_util.h"
#include "kcase/kcase.h"
#include "kcase/kcase_data.h"
#include "kcase/kcase_flags.h"

#define KERNEL_MAX_LIST 64

static void usage(FILE *f) {
    fprintf(f,
            "usage: gdnbench kernel CASE.json [--print-case]\n"
            "       gdnbench kernel FILE.metal --function NAME (--grid X[,Y,Z] | --threadgroups X[,Y,Z])\n"
            "                       --threadgroup X[,Y,Z] --buffer NAME=SPEC... [--expect NAME=FILE]...\n"
            "                       [--constant NAME=VALUE]... [--print-case]\n"
            "  --buffer NAME=SPEC   the kernel parameter NAME: a file (x.npy, x.npz:TENSOR, x.safetensors:TENSOR),\n"
            "                       an array dtype[d0,d1,...][:init] (init: zeros, poison, fill=V, arange=START,STEP,\n"
            "                       uniform=LO,HI, normal=MEAN,STD) or a scalar dtype:VALUE (uint32:4096)\n"
            "  --expect NAME=FILE   NAME's expected contents after the run\n"
            "  --print-case         print the case as a case file (JSON) and stop\n"
            "dtypes: float32 float16 bfloat16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool.\n"
            "The case file format is in the README (\"Your own kernel\").\n"
            "Exit 0 all good, 1 a check failed, 2 bad input.\n");
}

typedef struct kernel_args {
    const char *input;
    int print_case;
    kc_flags f;
    const char *buffers[KERNEL_MAX_LIST], *expects[KERNEL_MAX_LIST], *constants[KERNEL_MAX_LIST];
} kernel_args;

static int add_list(const char **list, int *n, const char *flag, const char *v) {
    if (*n == KERNEL_MAX_LIST) {
        fprintf(stderr, "gdnbench kernel: more than %d %s flags\n", KERNEL_MAX_LIST, flag);
        return -1;
    }
    list[(*n)++] = v;
    return 0;
}

/* Flags into a; -1 after printing the problem (or the usage for --help: *help set). */
static int parse_args(int argc, char **argv, kernel_args *a, int *help) {
    static const char *const value_flags[] = {"--function", "--grid", "--threadgroups", "--threadgroup",
                                              "--buffer",   "--expect", "--constant", NULL};
    memset(a, 0, sizeof *a);
    a->f.buffers = a->buffers;
    a->f.expects = a->expects;
    a->f.constants = a->constants;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) return *help = 1, -1;
        if (!strcmp(s, "--print-case")) { a->print_case = 1; continue; }
        int k = 0;
        while (value_flags[k] && strcmp(s, value_flags[k]) != 0) k++;
        if (value_flags[k] && i + 1 >= argc) {
            fprintf(stderr, "gdnbench kernel: %s needs a value\n", s);
            return -1;
        }
        const char *v = value_flags[k] ? argv[++i] : NULL;
        int rc = 0;
        switch (k) {
        case 0: a->f.function = v; break;
        case 1: a->f.grid = v; break;
        case 2: a->f.threadgroups = v; break;
        case 3: a->f.threadgroup = v; break;
        case 4: rc = add_list(a->buffers, &a->f.nbuffers, s, v); break;
        case 5: rc = add_list(a->expects, &a->f.nexpects, s, v); break;
        case 6: rc = add_list(a->constants, &a->f.nconstants, s, v); break;
        default:
            if (s[0] == '-' || a->input) {
                fprintf(stderr, "gdnbench kernel: unknown option '%s' (see gdnbench kernel --help)\n", s);
                return -1;
            }
            a->input = s;
        }
        if (rc < 0) return -1;
    }
    if (!a->input) {
        fprintf(stderr, "gdnbench kernel: give a case file (CASE.json) or a kernel source (FILE.metal --function NAME ...)\n");
        return -1;
    }
    return 0;
}

/* The case from a file or from the flags (which a case file does not take). */
static kc_case *load_case(const kernel_args *a, char *err, size_t errlen) {
    if (io_has_suffix(a->input, ".json")) {
        const kc_flags *f = &a->f;
        if (f->function || f->grid || f->threadgroups || f->threadgroup || f->nbuffers || f->nexpects || f->nconstants) {
            snprintf(err, errlen, "%s: a case file says everything itself: drop --function/--grid/--threadgroups/"
                     "--threadgroup/--buffer/--expect/--constant (or edit the case)", a->input);
            return NULL;
        }
        return kc_load_file(a->input, err, errlen);
    }
    kc_flags f = a->f;
    f.source = a->input;
    return kc_from_flags(&f, err, errlen);
}

int cmd_kernel(int argc, char **argv) {
    kernel_args a;
    int help = 0;
    char err[1024];
    if (parse_args(argc, argv, &a, &help) < 0) {
        usage(help ? stdout : stderr);
        return help ? EXIT_OK : EXIT_BAD_INPUT;
    }
    kc_case *c = load_case(&a, err, sizeof err);
    if (!c || kc_check_files(c, err, sizeof err) < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        kc_free(c);
        return EXIT_BAD_INPUT;
    }
    int rc = EXIT_OK;
    if (a.print_case) {
        char *text = kc_to_json(c);
        if (text) fputs(text, stdout);
        else fprintf(stderr, "gdnbench kernel: out of memory\n"), rc = EXIT_BAD_INPUT;
        free(text);
    } else {
        fprintf(stderr, "gdnbench kernel: %s: the case is well-formed, but this build cannot run kernel cases yet "
                "(issue 30): --print-case prints it\n", c->path);
        rc = EXIT_BAD_INPUT;
    }
    kc_free(c);
    return rc;
}
