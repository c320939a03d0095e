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
#include "report/report_json.h"
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
            "  --json FILE|-        the JSON report (schema 1, with the case's \"case\" key)\n"
            "  --sw-checks none|fast|numerics|full, --sw-schedule inorder|reverse|random:SEED, --fast-math, --quiet\n"
            "dtypes: float32 float16 bfloat16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool.\n"
            "The case file format is in the README (\"Your own kernel\").\n"
            "Exit 0 all good, 1 a check failed, 2 bad input.\n",
            backend_default_name());
}

typedef struct kernel_args {
    const char *input;
    int print_case, quiet, fast_math;
    const char *backend, *iters, *seed, *sw_checks, *sw_schedule, *json;
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
                                              "--iters",    "--seed",    "--sw-checks",    "--sw-schedule",
                                              "--json",     NULL};
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
        case 12: a->json = v; break;
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
static void print_buffer(const kc_buf_result *b) {
    char bind[32], what[256];
    snprintf(bind, sizeof bind, "buffer(%d)", b->index);
    if (b->checked) {
        snprintf(what, sizeof what, "expect: max_abs %.3g rel_l2 %.3g", b->max_abs, b->rel_l2);
        size_t l = strlen(what);
        if (b->ulp >= 0) snprintf(what + l, sizeof what - l, " ulp %.0f", b->ulp);
        l = strlen(what);
        snprintf(what + l, sizeof what - l, " (atol %g rtol %g%s)", b->atol, b->rtol,
                 b->ulp_max >= 0 ? " or ulp" : "");
    } else if (b->readonly) {
        snprintf(what, sizeof what, "readonly: %lld elements changed", (long long)b->changed);
    } else if (b->writable) {
        snprintf(what, sizeof what, "output: nan %lld inf %lld", (long long)b->nan, (long long)b->inf);
    } else {
        snprintf(what, sizeof what, "input");
    }
    size_t l = strlen(what);
    if (b->writable && b->unwritten) snprintf(what + l, sizeof what - l, ", %lld unwritten", (long long)b->unwritten);
    l = strlen(what);
    if (b->checked && b->bad)
        snprintf(what + l, sizeof what - l, ", %lld bad, first at %lld", (long long)b->bad, (long long)b->first_bad);
    printf("  %-12s %-11s %-9s %10lld  %-4s  %s\n", b->name, bind, kc_dtype_name(b->dtype), (long long)b->numel,
           b->pass ? "PASS" : "FAIL", what);
}

/* Runs c once on a device of a's backend, with the software device's checks and
 * schedule given (NULL: a's); prints its table unless quiet.  EXIT_*; r filled. */
static int run_on(const kc_case *c, const kernel_args *a, const char *checks, const char *schedule, int poison,
                  int quiet, kc_result *r, run_record *rec) {
    char err[1024];
    run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.backend = a->backend ? a->backend : backend_default_name();
    ro.sw_checks = checks ? checks : a->sw_checks;
    ro.sw_schedule = schedule ? schedule : a->sw_schedule;
    kc_run_opts o = {3, 1, a->fast_math, poison};
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
    int rc = kc_run(d, c, &o, r, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        mtl_device_free(d);
        return EXIT_BAD_INPUT;
    }
    if (rec && kc_fill_record(c, r, mtl_device_name(d), ro.backend, o.seed, rec, err, sizeof err) < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        mtl_device_free(d);
        return EXIT_BAD_INPUT;
    }
    if (!quiet) {
        printf("kernel case %s (%s) on %s [%s]: %d runs, median %.1f us, min %.1f us%s\n", c->name, c->path,
               mtl_device_name(d), ro.backend, r->iters, r->median_us, r->min_us,
               strcmp(ro.backend, "sw") == 0 ? " (emulated)" : "");
        for (int i = 0; i < r->nbufs; i++) print_buffer(&r->bufs[i]);
        if (r->fault[0]) printf("  the device failed the run: %s\n", r->fault);
        else printf("  determinism: %s\n", r->deterministic ? "bitwise identical across runs" : "FAIL: runs differ");
        printf("%s\n", r->pass ? "PASS" : "FAIL");
    }
    mtl_device_free(d);
    return r->pass ? EXIT_OK : EXIT_CHECK_FAILED;
}

/* Runs c with a's options; with rec, fills it for the JSON report. */
static int run_case(const kc_case *c, const kernel_args *a, run_record *rec) {
    kc_result *r = malloc(sizeof *r);
    if (!r) return EXIT_BAD_INPUT;
    int rc = run_on(c, a, NULL, NULL, 0, a->quiet, r, rec);
    free(r);
    return rc;
}

/* Writes recs[0..n) as the JSON report --json names (one record: an object). */
static int write_report(const kernel_args *a, run_record *recs, int n) {
    char err[512];
    run_record **p = calloc((size_t)(n ? n : 1), sizeof *p);
    if (!p) return -1;
    for (int i = 0; i < n; i++) p[i] = &recs[i];
    int rc = report_write(a->json, p, n, err, sizeof err);
    if (rc != 0) fprintf(stderr, "gdnbench kernel: --json %s: %s\n", a->json, err);
    free(p);
    return rc;
}

/* `gdnbench validate CASE.json`: the case on the software device with full checks
 * under every fiber/threadgroup schedule validate uses for ops, then once more with
 * the outputs starting from a finite poison instead of the NaN one; each must pass
 * and every buffer must hold the same bytes as under the first. */
static int validate_case(const kc_case *c, const kernel_args *a) {
    static const char *const schedules[] = {"inorder", "reverse", "random:1", "random:2", "inorder"};
    static const char *const labels[] = {"inorder", "reverse", "random:1", "random:2", "poison 0x5a"};
    kc_result *r = calloc(2, sizeof *r);
    if (!r) return EXIT_BAD_INPUT;
    int status = EXIT_OK;
    kernel_args sw = *a;
    sw.backend = "sw";
    printf("validate %s (%s): software device, checks full, 4 schedules and 2 poison patterns\n", c->name, c->path);
    for (int k = 0; k < 5; k++) {
        kc_result *now = &r[k ? 1 : 0];
        int rc = run_on(c, &sw, "full", schedules[k], k == 4 ? KC_POISON_FINITE : KC_POISON_NAN, 1, now, NULL);
        if (rc == EXIT_BAD_INPUT) {
            status = rc;
            break;
        }
        const char *differs = NULL;
        for (int i = 0; k && !now->fault[0] && !r[0].fault[0] && i < now->nbufs && !differs; i++)
            if (now->bufs[i].hash != r[0].bufs[i].hash) differs = now->bufs[i].name;
        int ok = now->pass && !differs;
        printf("  %-11s %s", labels[k], ok ? "PASS" : "FAIL");
        if (now->fault[0]) printf("  %s", now->fault);
        else if (differs && k == 4) printf("  '%s' differs from its bytes under the NaN poison: the kernel reads an output "
                                           "before writing it", differs);
        else if (differs) printf("  '%s' differs from its bytes under inorder: a race between threads", differs);
        else if (!now->pass) printf("  a check failed (run `gdnbench kernel %s --sw-schedule %s` for the table)", c->path,
                                    schedules[k]);
        printf("\n");
        if (!ok) status = EXIT_CHECK_FAILED;
    }
    if (status != EXIT_BAD_INPUT) printf("%s\n", status == EXIT_OK ? "PASS" : "FAIL");
    free(r);
    return status;
}

enum { MODE_RUN, MODE_VALIDATE };

static int kernel_main(int argc, char **argv, int mode) {
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
        run_record *rec = a.json && mode == MODE_RUN ? calloc(1, sizeof *rec) : NULL;
        rc = mode == MODE_VALIDATE ? validate_case(c, &a) : run_case(c, &a, rec);
        if (rec && rc != EXIT_BAD_INPUT && write_report(&a, rec, 1) != 0) rc = EXIT_BAD_INPUT;
        if (rec) run_record_free(rec);
        free(rec);
    }
    kc_free(c);
    return rc;
}

int cmd_kernel(int argc, char **argv) { return kernel_main(argc, argv, MODE_RUN); }

int cmd_kernel_validate(int argc, char **argv) { return kernel_main(argc, argv, MODE_VALIDATE); }

/* `gdnbench suite DIR`: every *.json case under DIR (sorted), one table each, one
 * verdict: 2 when a case could not run, 1 when one failed, else 0. */
int cmd_kernel_suite(int argc, char **argv) {
    kernel_args a;
    int help = 0;
    char err[1024];
    if (parse_args(argc, argv, &a, &help) < 0) {
        usage(help ? stdout : stderr);
        return help ? EXIT_OK : EXIT_BAD_INPUT;
    }
    char **names = NULL;
    int n = 0, npass = 0, nfail = 0, nerror = 0;
    if (io_list_dir(a.input, ".json", &names, &n) < 0 || n == 0) {
        fprintf(stderr, "gdnbench suite: %s: %s\n", a.input, names || n ? "cannot be read" : "no *.json case files in it");
        io_free_names(names, n);
        return EXIT_BAD_INPUT;
    }
    io_sort_names(names, n);
    run_record *recs = a.json ? calloc((size_t)n, sizeof *recs) : NULL;
    int nrecs = 0;
    for (int i = 0; i < n; i++) {
        char *path = io_path_join(a.input, names[i], "");
        kc_case *c = path ? kc_load_file(path, err, sizeof err) : NULL;
        int rc = EXIT_BAD_INPUT;
        if (!c || kc_check_files(c, err, sizeof err) < 0) fprintf(stderr, "gdnbench suite: %s\n", path ? err : "out of memory");
        else rc = run_case(c, &a, recs ? &recs[nrecs] : NULL);
        if (recs && rc != EXIT_BAD_INPUT) nrecs++;
        npass += rc == EXIT_OK;
        nfail += rc == EXIT_CHECK_FAILED;
        nerror += rc == EXIT_BAD_INPUT;
        kc_free(c);
        free(path);
    }
    io_free_names(names, n);
    if (recs && write_report(&a, recs, nrecs) != 0) nerror++;
    for (int i = 0; recs && i < nrecs; i++) run_record_free(&recs[i]);
    free(recs);
    printf("suite %s: %d cases, %d passed, %d failed, %d could not run\n", a.input, n, npass, nfail, nerror);
    return nerror ? EXIT_BAD_INPUT : nfail ? EXIT_CHECK_FAILED : EXIT_OK;
}
