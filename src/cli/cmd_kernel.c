/* cmd_kernel.c — `gdnbench kernel CASE.json` and its flag form `gdnbench kernel
 * FILE.metal --function NAME ...` (../shared/spec/case.md): any kernel, any buffers;
 * `gdnbench validate CASE.json` and `gdnbench suite DIR` of case files.
 *
 * Both forms become one kc_case (src/kcase); `--print-case` prints it as the case
 * file it is.  Before anything else the case is checked whole — every key, every file
 * against what the case says of it, the source present — so bad input is one line
 * naming the key path and exit 2.  Then it runs on --backend sw or metal through the
 * run driver as an op run does (kernel_plan.h): the same sampling flags and timing
 * lines, a row per buffer with its binding and checks, the JSON report; exit 1 when
 * a check failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/capture_opts.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/kernel_opts.h"
#include "cli/kernel_plan.h"
#include "cli/sampling_opts.h"
#include "io/io_util.h"
#include "kcase/kcase.h"
#include "kcase/kcase_data.h"
#include "kcase/kcase_flags.h"
#include "report/junit.h"
#include "report/report_json.h"
#include "runner/backend.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"

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
            "  --seed N             seed of the random init patterns (default 1)\n"
            "  --json FILE|-        the JSON report (schema 1, with the case's \"case\" key)\n"
            "  --junit FILE|-       JUnit XML: a test case per case (validate: per schedule)\n"
            "  --dump DIR           save every buffer (inputs as given, outputs after the run) and each expectation\n"
            "                       (NAME.expected, float64) as DIR/kernel_<case name>.safetensors\n"
            "  --capture DIR        (--backend metal) record the first timed iteration of each case's dispatches\n"
            "                       as DIR/kernel-<case name>.gputrace for Xcode's GPU tools\n"
            "  --sw-checks none|fast|numerics|full, --sw-schedule inorder|reverse|random:SEED, --fast-math, --quiet\n"
            "  --sw-timeout SECONDS the software device's watchdog: a dispatch still running after this long is\n"
            "                       stopped and reported with its threads' lines (default %g; 0 = never)\n"
            "  --sw-max-findings N  distinct bugs the software device's checks show (default 5; the JSON has all)\n"
            "  --counters           (software device) one more run, counted exactly: device bytes, lines,\n"
            "                       coalescing, flops, simd lanes, barriers, atomics (JSON: counters)\n"
            "  --all-floors         with --counters, the table's floor for every chip (default: the range)\n"
            "every run starts from the same initial buffers and all must give the same bytes; how many runs:\n",
            backend_default_name(), SWMTL_DEFAULT_TIMEOUT_S);
    cli_print_sampling_help(f);
    fprintf(f,
            "dtypes: float32 float16 bfloat16 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool.\n"
            "The case file format is in the README (\"Your own kernel\").\n"
            "Exit 0 all good, 1 a check failed, 2 bad input.\n");
}

typedef struct kernel_args {
    const char *input;
    int print_case;
    const char *json, *junit, *dump, *capture;
    run_opts ro;
    sampling_flags given;
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

/* One flag that takes a value: 0, or -1 after printing the problem. */
static int take_value(kernel_args *a, int k, const char *flag, const char *v) {
    char err[512], *end;
    switch (k) {
    case 0: a->f.function = v; return 0;
    case 1: a->f.grid = v; return 0;
    case 2: a->f.threadgroups = v; return 0;
    case 3: a->f.threadgroup = v; return 0;
    case 4: return add_list(a->buffers, &a->f.nbuffers, flag, v);
    case 5: return add_list(a->expects, &a->f.nexpects, flag, v);
    case 6: return add_list(a->constants, &a->f.nconstants, flag, v);
    case 7: a->ro.backend = v; return 0;
    case 8:
        if (a->ro.seed = strtoull(v, &end, 0), *end || !*v || *v == '-') {
            fprintf(stderr, "gdnbench kernel: --seed %s: give a non-negative integer\n", v);
            return -1;
        }
        return 0;
    case 9: a->ro.sw_checks = v; return 0;
    case 10: a->ro.sw_schedule = v; return 0;
    case 11: a->json = v; return 0;
    case 12: a->dump = v; return 0;
    case 13: a->junit = v; return 0;
    default:
        if (!strcmp(flag, "--capture")) return a->capture = v, 0;
        /* the software device's watchdog and findings limit, parsed as an op run parses them */
        if (!strcmp(flag, "--sw-timeout") || !strcmp(flag, "--sw-max-findings"))
            return cli_parse_kernel_option(flag + 2, v, &a->ro, err, sizeof err) > 0
                       ? 0
                       : (fprintf(stderr, "gdnbench kernel: %s\n", err), -1);
        if (cli_parse_sampling_option(flag + 2, v, &a->ro, &a->given, err, sizeof err) > 0) return 0;
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        return -1;
    }
}

enum { MODE_RUN, MODE_VALIDATE };

/* Flags into a for the command `mode` (MODE_VALIDATE runs on the software device).
 * -1 after printing the problem, with *help 1 for --help (the usage goes to stdout),
 * 0 when the usage should follow on stderr, -1 when the one line says all (a flag
 * the backend cannot take, as an op run says it). */
static int parse_args(int argc, char **argv, int mode, kernel_args *a, int *help) {
    static const char *const value_flags[] = {
        "--function", "--grid",      "--threadgroups", "--threadgroup", "--buffer",   "--expect",
        "--constant", "--backend",   "--seed",         "--sw-checks",   "--sw-schedule", "--json",
        "--dump",     "--junit",     "--warmup",   "--iters",     "--max-time",     "--max-noise",   "--min-samples",
        "--sw-timeout", "--sw-max-findings", "--capture", NULL};
    memset(a, 0, sizeof *a);
    a->f.buffers = a->buffers;
    a->f.expects = a->expects;
    a->f.constants = a->constants;
    a->ro.backend = backend_default_name();
    a->ro.seed = 1;
    a->ro.check = CHECK_NONE; /* a case's checks are its own (kc_check_case) */
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) return *help = 1, -1;
        if (!strcmp(s, "--print-case")) { a->print_case = 1; continue; }
        if (!strcmp(s, "--quiet")) { a->ro.quiet = 1; continue; }
        if (!strcmp(s, "--fast-math")) { a->ro.fast_math = 1; continue; }
        if (!strcmp(s, "--counters")) { a->ro.counters = 1; continue; }
        if (!strcmp(s, "--all-floors")) { a->ro.all_floors = 1; continue; }
        int k = 0;
        while (value_flags[k] && strcmp(s, value_flags[k]) != 0) k++;
        if (value_flags[k] && i + 1 >= argc) {
            fprintf(stderr, "gdnbench kernel: %s needs a value\n", s);
            return -1;
        }
        if (value_flags[k]) {
            if (take_value(a, k, s, argv[++i]) < 0) return -1;
        } else if (s[0] == '-' || a->input) {
            fprintf(stderr, "gdnbench kernel: unknown option '%s' (see gdnbench kernel --help)\n", s);
            return -1;
        } else {
            a->input = s;
        }
    }
    char err[512];
    if (cli_finish_sampling(&a->ro, &a->given, err, sizeof err) < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        return -1;
    }
    if (!a->input) {
        fprintf(stderr, "gdnbench kernel: give a case file (CASE.json) or a kernel source (FILE.metal --function NAME ...)\n");
        return -1;
    }
    if (cli_capture_check_backend(a->capture, mode == MODE_VALIDATE ? "sw" : a->ro.backend, err, sizeof err) < 0) {
        fprintf(stderr, "gdnbench kernel: %s\n", err);
        return *help = -1, -1;
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

/* Writes kp's records as the JSON report --json names (one record: an object). */
static int write_report(const kernel_args *a, const kernel_plan *kp) {
    char err[512];
    int rc = report_write(a->json, kp->ptrs, kp->n, err, sizeof err);
    if (rc != 0) fprintf(stderr, "gdnbench kernel: --json %s: %s\n", a->json, err);
    return rc;
}

/* Runs the planned cases with a's options; writes the report.  The exit status. */
static int run_plan(kernel_plan *kp, const kernel_args *a) {
    char err[1024];
    kp->ro = a->ro;
    kp->dump_dir = a->dump;
    kp->capture_dir = a->capture;
    if (kernel_plan_run(kp, err, sizeof err) < 0) {
        fprintf(stderr, "gdnbench %s: %s\n", kp->cmd, err);
        return EXIT_BAD_INPUT;
    }
    int rc = cli_exit_status(driver_verdict(&kp->tally));
    if (a->json && write_report(a, kp) != 0) rc = EXIT_BAD_INPUT;
    if (a->junit) {
        char name[300];
        snprintf(name, sizeof name, "gdnbench %s", kp->cmd);
        if (junit_write_records(a->junit, name, kp->ptrs, kp->n, err, sizeof err) != 0) {
            fprintf(stderr, "gdnbench %s: --junit %s: %s\n", kp->cmd, a->junit, err);
            rc = EXIT_BAD_INPUT;
        }
    }
    return rc;
}

/* One run of c on the software device under a schedule and poison (validate): exact
 * runs, no timing lines.  EXIT_BAD_INPUT when it could not run (message printed);
 * else 0 with *rec and *r the run's record and checks (kp keeps them). */
static int validate_run(kernel_plan *kp, kc_case *c, const kernel_args *a, const char *schedule, int poison) {
    char err[1024];
    if (kernel_plan_init(kp, "validate", 1) < 0) return fprintf(stderr, "gdnbench validate: out of memory\n"), EXIT_BAD_INPUT;
    kp->cases[0] = c;
    kp->ro = a->ro;
    kp->ro.backend = "sw";
    kp->ro.sw_checks = "full";
    kp->ro.sw_schedule = schedule;
    kp->ro.adaptive = kp->ro.warmup_auto = 0;
    kp->ro.warmup = 0;
    kp->ro.iters = a->given.iters ? a->ro.iters : 3;
    kp->ro.quiet = 1;
    kp->poison = poison;
    int rc = kernel_plan_run(kp, err, sizeof err);
    kp->cases[0] = NULL; /* the caller's */
    if (rc < 0) fprintf(stderr, "gdnbench validate: %s\n", err);
    if (rc < 0 || !kp->res[0].prepared) return EXIT_BAD_INPUT;
    return 0;
}

/* `gdnbench validate CASE.json`: the case on the software device with full checks
 * under every fiber/threadgroup schedule validate uses for ops, then once more with
 * the outputs starting from a finite poison instead of the NaN one; each must pass
 * and every buffer must hold the same bytes as under the first. */
static int validate_case(kc_case *c, const kernel_args *a, junit_doc *ju) {
    static const char *const schedules[] = {"inorder", "reverse", "random:1", "random:2", "inorder"};
    static const char *const labels[] = {"inorder", "reverse", "random:1", "random:2", "poison 0x5a"};
    kernel_plan first, now;
    memset(&first, 0, sizeof first);
    memset(&now, 0, sizeof now);
    int status = EXIT_OK;
    char why[1024], name[300];
    printf("validate %s (%s): software device, checks full, 4 schedules and 2 poison patterns\n", c->name, c->path);
    for (int k = 0; k < 5 && status != EXIT_BAD_INPUT; k++) {
        kernel_plan *kp = k ? &now : &first;
        if (k) kernel_plan_free(&now);
        snprintf(name, sizeof name, "%s %s", c->name, labels[k]);
        if (validate_run(kp, c, a, schedules[k], k == 4 ? KC_POISON_FINITE : KC_POISON_NAN) != 0) {
            if (ju) junit_case(ju, "gdnbench.validate.kernel", name, 0, JUNIT_ERROR, "the case could not run", NULL);
            status = EXIT_BAD_INPUT;
            break;
        }
        const run_record *rec = kp->ptrs[0];
        const kc_result *r = &kp->res[0], *r0 = &first.res[0];
        int fault = rec->status == RUN_ERROR, fault0 = first.ptrs[0]->status == RUN_ERROR;
        const char *differs = NULL;
        for (int i = 0; k && !fault && !fault0 && i < r->nbufs && !differs; i++)
            if (r->bufs[i].hash != r0->bufs[i].hash) differs = r->bufs[i].name;
        int ok = rec->status == RUN_PASS && !differs;
        why[0] = '\0';
        if (fault) snprintf(why, sizeof why, "%s", rec->error);
        else if (differs && k == 4) snprintf(why, sizeof why, "'%s' differs from its bytes under the NaN poison: the "
                                             "kernel reads an output before writing it", differs);
        else if (differs) snprintf(why, sizeof why, "'%s' differs from its bytes under inorder: a race between threads",
                                   differs);
        else if (!ok) snprintf(why, sizeof why, "a check failed (run `gdnbench kernel %s --sw-schedule %s` for the "
                               "table)", c->path, schedules[k]);
        printf("  %-11s %s%s%s\n", labels[k], ok ? "PASS" : "FAIL", why[0] ? "  " : "", why);
        if (ju && junit_case(ju, "gdnbench.validate.kernel", name, 0, ok ? JUNIT_PASS : JUNIT_FAILURE, why, NULL)) {
            fprintf(stderr, "gdnbench validate: out of memory\n");
            status = EXIT_BAD_INPUT;
            break;
        }
        if (!ok) status = EXIT_CHECK_FAILED;
    }
    if (status != EXIT_BAD_INPUT) printf("%s\n", status == EXIT_OK ? "PASS" : "FAIL");
    kernel_plan_free(&first);
    kernel_plan_free(&now);
    return status;
}

static int kernel_main(int argc, char **argv, int mode) {
    kernel_args a;
    int help = 0;
    char err[1024];
    if (parse_args(argc, argv, mode, &a, &help) < 0) {
        if (help >= 0) usage(help ? stdout : stderr);
        return help > 0 ? EXIT_OK : EXIT_BAD_INPUT;
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
    } else if (mode == MODE_VALIDATE) {
        junit_doc *ju = a.junit ? junit_new("gdnbench validate") : NULL;
        rc = validate_case(c, &a, ju);
        if (a.junit && rc != EXIT_BAD_INPUT) {
            if (!ju || junit_write(ju, a.junit, err, sizeof err) != 0) {
                fprintf(stderr, "gdnbench validate: --junit %s: %s\n", a.junit, ju ? err : "out of memory");
                rc = EXIT_BAD_INPUT;
            }
        }
        junit_free(ju);
    } else {
        kernel_plan kp;
        if (kernel_plan_init(&kp, "kernel", 1) < 0) {
            fprintf(stderr, "gdnbench kernel: out of memory\n");
            kernel_plan_free(&kp);
            kc_free(c);
            return EXIT_BAD_INPUT;
        }
        kp.cases[0] = c;
        c = NULL; /* the plan's */
        rc = run_plan(&kp, &a);
        kernel_plan_free(&kp);
    }
    kc_free(c);
    return rc;
}

int cmd_kernel(int argc, char **argv) { return kernel_main(argc, argv, MODE_RUN); }

int cmd_kernel_validate(int argc, char **argv) { return kernel_main(argc, argv, MODE_VALIDATE); }

/* `gdnbench suite DIR`: every *.json case under DIR (sorted) on one backend, each
 * read when its turn comes; one verdict: 2 when a case could not run, 1 when one
 * failed, else 0. */
int cmd_kernel_suite(int argc, char **argv) {
    kernel_args a;
    int help = 0;
    if (parse_args(argc, argv, MODE_RUN, &a, &help) < 0) {
        if (help >= 0) usage(help ? stdout : stderr);
        return help > 0 ? EXIT_OK : EXIT_BAD_INPUT;
    }
    char **names = NULL;
    int n = 0;
    if (io_list_dir(a.input, ".json", &names, &n) < 0 || n == 0) {
        fprintf(stderr, "gdnbench suite: %s: %s\n", a.input, names || n ? "cannot be read" : "no *.json case files in it");
        io_free_names(names, n);
        return EXIT_BAD_INPUT;
    }
    io_sort_names(names, n);
    kernel_plan kp;
    int rc = EXIT_BAD_INPUT;
    if (kernel_plan_init(&kp, "suite", n) == 0) {
        kp.paths = names;
        for (int i = 0; i < n && names; i++) {
            char *path = io_path_join(a.input, names[i], "");
            if (!path) break;
            free(names[i]);
            names[i] = path;
        }
        rc = run_plan(&kp, &a);
        printf("suite %s: %d cases, %d passed, %d failed, %d could not run\n", a.input, n, kp.tally.npass,
               kp.tally.nfail, kp.tally.nerror + (n - kp.tally.npass - kp.tally.nfail - kp.tally.nerror));
    } else {
        fprintf(stderr, "gdnbench suite: out of memory\n");
        io_free_names(names, n);
    }
    kernel_plan_free(&kp);
    return rc;
}
