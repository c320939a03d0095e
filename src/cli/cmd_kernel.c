/* cmd_kernel.c — `gdnbench kernel CASE.json` and its flag form `gdnbench kernel
 * FILE.metal --function NAME ...` (../shared/spec/case.md): any kernel, any buffers.
 *
 * Both forms become one kc_case (src/kcase); `--print-case` prints it as the case
 * file it is.  Before anything else the case is checked whole — every key, every file
 * against what the case says of it, the source present — so bad input is one line
 * naming the key path and exit 2.  Then it runs on --backend sw or metal
 * (runner/kcase_run.c): a table of every buffer's binding and checks, exit 1 when a
 * check failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "io/io_util.h"
#include "kcase/kcase.h"
#include "kcase/kcase_data.h"
#include "kcase/kcase_flags.h"
#include "metal/mtl.h"
#include "runner/backend.h"
#include "runner/kcase_run.h"
#include "runner/runner.h"

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
            "  --backend sw|metal   where it runs (default: %s)\n"
            "  --iters N            runs from the same inputs, all bitwise identical (default 3)\n"
            "  --seed N             seed of the random init patterns (default 1)\n"
            "  --sw-checks none|fast|full, --sw-schedule inorder|reverse|random:SEED, --fast-math, --quiet\n"
            "dtypes: float32 float16 bfloat16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool.\n"
            "The case file format is in the README (\"Your own kernel\").\n"
            "Exit 0 all good, 1 a check failed, 2 bad input.\n",
            backend_default_name());
}

typedef struct kernel_args {
    const char *input;
    int print_case, quiet, fast_math;
    const char *backend, *iters, *seed, *sw_checks, *sw_schedule;
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
    static const char *const value_flags[] = {"--function", "--grid",    "--threadgroups", "--threadgroup",
                                              "--buffer",   "--expect",  "--constant",     "--backend",
                                              "--iters",    "--seed",    "--sw-checks",    "--sw-schedule", NULL};
    memset(a, 0, sizeof *a);
    a->f.buffers = a->buffers;
    a->f.expects = a->expects;
    a->f.constants = a->constants;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) return *help = 1, -1;
        if (!strcmp(s, "--print-case")) { a->print_case = 1; continue; }
        if (!strcmp(s, "--quiet")) { a->quiet = 1; continue; }
        if (!strcmp(s, "--fast-math")) { a->fast_math = 1; continue; }
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
        case 7: a->backend = v; break;
        case 8: a->iters = v; break;
        case 9: a->seed = v; break;
        case 10: a->sw_checks = v; break;
        case 11: a->sw_schedule = v; break;
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

/* One buffer's row: binding, dtype, elements, what was checked, verdict. */
static void print_buffer(const kc_case *c, const kc_buf_result *b) {
    char bind[32], what[200];
    const kc_buffer *kb = &c->bufs[kc_find_buffer(c, b->name)];
    snprintf(bind, sizeof bind, "buffer(%d)", b->index);
    if (b->checked)
        snprintf(what, sizeof what, "expect: max_abs %.3g rel_l2 %.3g%s (atol %g rtol %g)", b->max_abs, b->rel_l2,
                 b->ulp >= 0 ? "" : "", b->atol, b->rtol);
    else if (b->readonly)
        snprintf(what, sizeof what, "readonly: %lld elements changed", (long long)b->changed);
    else if (b->writable)
        snprintf(what, sizeof what, "output: nan %lld inf %lld", (long long)b->nan, (long long)b->inf);
    else
        snprintf(what, sizeof what, "input");
    size_t l = strlen(what);
    if (b->writable && b->unwritten) snprintf(what + l, sizeof what - l, ", %lld unwritten", (long long)b->unwritten);
    l = strlen(what);
    if (b->checked && b->bad) snprintf(what + l, sizeof what - l, ", %lld bad, first at %lld", (long long)b->bad,
                                       (long long)b->first_bad);
    const char *dt = kb->kind == KC_BUF_STRUCT ? "struct" : kc_dtype_name(kb->has_dtype || kb->kind != KC_BUF_FILE ? kb->dtype : kb->dtype);
    printf("  %-12s %-11s %-9s %10lld  %-4s  %s\n", b->name, bind, dt, (long long)b->numel,
           b->pass ? "PASS" : "FAIL", what);
}

static int run_case(const kc_case *c, const kernel_args *a) {
    char err[1024];
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.backend = a->backend ? a->backend : backend_default_name();
    ro.sw_checks = a->sw_checks;
    ro.sw_schedule = a->sw_schedule;
    kc_run_opts o = {3, 1, a->fast_math};
    char *end;
    if (a->iters && ((o.iters = (int)strtol(a->iters, &end, 10)) < 1 || *end || o.iters > 1000)) {
        fprintf(stderr, "gdnbench kernel: --iters %s: give a count from 1 to 1000\n", a->iters);
        return EXIT_BAD_INPUT;
    }
    if (a->seed && (o.seed = strtoull(a->seed, &end, 0), *end || !*a->seed)) {
        fprintf(stderr, "gdnbench kernel: --seed %s: give a non-negative integer\n", a->seed);
        return EXIT_BAD_INPUT;
    }
    struct mtl_device *d = backend_open_device(ro.backend, &ro, err, sizeof err);
    if (!d) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        return EXIT_BAD_INPUT;
    }
    kc_result r;
    int rc = kc_run(d, c, &o, &r, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        mtl_device_free(d);
        return EXIT_BAD_INPUT;
    }
    printf("kernel case %s (%s) on %s [%s]: %d runs, median %.1f us, min %.1f us%s\n", c->name, c->path,
           mtl_device_name(d), ro.backend, r.iters, r.median_us, r.min_us,
           strcmp(ro.backend, "sw") == 0 ? " (emulated)" : "");
    for (int i = 0; i < r.nbufs; i++) print_buffer(c, &r.bufs[i]);
    if (r.fault[0]) printf("  the device failed the run: %s\n", r.fault);
    else printf("  determinism: %s\n", r.deterministic ? "bitwise identical across runs" : "FAIL: runs differ");
    printf("%s\n", r.pass ? "PASS" : "FAIL");
    mtl_device_free(d);
    return r.pass ? EXIT_OK : EXIT_CHECK_FAILED;
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
        rc = run_case(c, &a);
    }
    kc_free(c);
    return rc;
}
