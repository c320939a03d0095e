/* cmd_validate.c — `gdnbench validate <op> [options]`: the shape sweep, schedules,
 * stress inputs and tight bounds of issue 7, for our kernel or a third-party one.
 *
 * Parses the flags, builds the sweep (validate_sweep.c), opens the software device
 * with checks=full, runs every case (validate_exec.c), prints one line per case (and
 * the findings of failed ones) and writes the JSON.  Exit 0 only when every case that
 * ran passed (unsupported shapes are reported, not failures), 1 when a case failed,
 * 2 on bad input or when a case could not run at all (e.g. the kernel does not
 * compile: the sweep stops there, since every later case would fail the same way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/kernel_opts.h"
#include "cli/stage_opts.h"
#include "cli/validate_table.h"
#include "report/junit.h"
#include "report/validate_json.h"
#include "runner/driver.h"
#include "runner/validate_report.h"
#include "swmetal/swmetal.h"

#define DEFAULT_ULP_P99_MAX 4

typedef struct validate_cli {
    run_opts ro;
    validate_dims dims;
    const validate_profile *profiles[32];
    int nprofiles;              /* 0 = all */
    uint64_t seed;
    int ulp_p99_max;
    const char *json_path;
    const char *junit_path;     /* --junit FILE */
    int quiet;
} validate_cli;

static void print_help(const op_desc *op) {
    printf("usage: gdnbench validate %s [options]\n\n"
           "Runs %s on the software Metal device with checks=full (out-of-bounds, uninitialised\n"
           "threadgroup reads, races, divergent barriers) over a sweep of shapes and input profiles,\n"
           "each under %d run configurations (fiber schedule / threadgroup order):\n"
           "inorder/inorder, reverse/reverse, random:S/random:S+1, and a repeat of the first;\n"
           "outputs must be bitwise identical across them (kernels with atomics: within tolerance\n"
           "across schedules, identical in the repeat).\n"
           "The first run is judged against the f64 and bf16-parity references with the op's\n"
           "tolerances, plus a p99 bound in bf16 ulps vs parity that --atol/--rtol cannot loosen.\n\n"
           "default sweep (a dimension list below replaces that dimension's sweep):\n"
           "  T {1,2,3,BT-1,BT,BT+1,2BT-1,2BT+1,1000,4096}  B {1,3}  (Hg,H) {(1,2),(2,2),(2,4),(1,4),(3,6)}\n"
           "  K, V {64,128}  l2norm {0,1}; base B=1 T=BT+1 Hg=1 H=2 K=V=128; stress profiles at T=2BT+1\n"
           "  (decode prep: Hk/Hv pairs, Dk, Dv, N {1,2,3,16}; attention: Hkv/Hq pairs,\n"
           "   qL, kL {1,2,63,64,65,129}, causal {0,1}, D {64,128,256})\n\n"
           "dimensions of %s (each takes N, a list 1,2,3 or a range A..B:+S / A..B:xF):\n",
           op->name, op->name, VALIDATE_NRUNS, op->name);
    for (int i = 0; i < op->ndims; i++)
        printf("  --%-8s %s\n", op->dims[i].name, op->dims[i].help);
    printf("\ninput profiles (--profile LIST, default all that change %s's inputs):\n", op->name);
    for (int i = 0; i < validate_nprofiles; i++)
        printf("  %-15s %s%s\n", validate_profiles[i].name, validate_profiles[i].help,
               validate_profiles[i].check_f64 ? "" : " (judged vs bf16-parity only)");
    printf("\noptions:\n"
           "  --shader FILE --function NAME  validate a third-party kernel with the same ABI as the main\n"
           "                           stage; the other stages take FILE's kernels of their default names, else ours\n"
           "  --shader FILE            every stage FILE defines under its default name, the rest ours\n"
           "  --stage NAME=FILE[:FUNCTION]  one stage's kernel from FILE (repeatable; wins over --shader)\n"
           "  --constant ID=VALUE      function constant for the kernels from FILE (repeatable)\n"
           "  --include DIR, --define NAME[=VALUE]  include directory and macro for the kernels from FILE\n"
           "                           (repeatable)\n"
           "  --profile LIST           comma list of input profiles\n"
           "  --seed N                 input generator seed (default 0)\n"
           "  --atol X --rtol X        override every output's atol/rtol (rel_l2 and ulp bounds stay)\n"
           "  --ulp N                  p99 bound in ulps for bf16 outputs vs parity (default %d)\n"
           "  --backend sw|cpu         sw (default); cpu judges the parity reference itself against\n"
           "                           f64 under the same sweep (calibrates the f64 budgets)\n"
           "  --json FILE|-            write every case as JSON\n"
           "  --junit FILE|-           JUnit XML: a test case per case of the sweep\n"
           "  --sw-max-findings N      distinct bugs of the device's checks shown per case (default 5;\n"
           "                           the JSON has all)\n"
           "  --sw-timeout SECONDS     software device's watchdog: a dispatch still running after this\n"
           "                           long is stopped and reported with its threads' lines (default %g,\n"
           "                           far above any shipped op's; 0 = never)\n"
           "  --quiet                  no table on stdout\n\n"
           "exit status: 0 every case passed or is unsupported, 1 a case failed, 2 bad input or could not run\n",
           DEFAULT_ULP_P99_MAX, SWMTL_DEFAULT_TIMEOUT_S);
    cli_print_stage_help(stdout, op);
}

static int parse_profiles(validate_cli *vc, const char *val, char *err, size_t errlen) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", val);
    vc->nprofiles = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const validate_profile *p = validate_profile_find(tok);
        if (!p) {
            snprintf(err, errlen, "--profile '%s' is unknown: see gdnbench validate OP --help for the profiles", tok);
            return -1;
        }
        if (vc->nprofiles < (int)(sizeof vc->profiles / sizeof vc->profiles[0])) vc->profiles[vc->nprofiles++] = p;
    }
    if (vc->nprofiles == 0) {
        snprintf(err, errlen, "--profile needs at least one profile name");
        return -1;
    }
    return 0;
}

static int parse_dim(const op_desc *op, int di, const char *val, validate_cli *vc, char *err, size_t errlen) {
    int_list *l = malloc(sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = args_parse_int_list(op->dims[di].name, val, l, err, errlen);
    if (rc == 0 && l->n > VALIDATE_MAX_LIST) {
        snprintf(err, errlen, "--%s has %d values: validate takes at most %d per dimension", op->dims[di].name, l->n,
                 VALIDATE_MAX_LIST);
        rc = -1;
    }
    for (int k = 0; rc == 0 && k < l->n; k++) {
        if (l->v[k] < op->dims[di].min || l->v[k] > op->dims[di].max) {
            snprintf(err, errlen, "--%s %lld is out of range for %s: accepted %lld..%lld", op->dims[di].name,
                     (long long)l->v[k], op->name, (long long)op->dims[di].min, (long long)op->dims[di].max);
            rc = -1;
        }
        vc->dims.list[di][k] = l->v[k];
    }
    if (rc == 0) {
        vc->dims.given[di] = 1;
        vc->dims.n[di] = l->n;
    }
    free(l);
    return rc;
}

/* The kernel choice at every shape of the sweep the op accepts (the others are
 * reported as unsupported), checked before any case runs. */
static int check_kernel_choice(backend *b, const driver_case *cases, int ncases, const run_opts *o, char *err,
                               size_t errlen) {
    if (!cli_has_kernel_choice(o)) return 0;
    driver_case *ok = malloc(sizeof *ok * (size_t)ncases);
    if (!ok) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = 0;
    for (int k = 0; k < ncases; k++) {
        char why[256];
        const op_desc *op = cases[k].op;
        if (op->validate && op->validate(cases[k].dim, why, sizeof why) != 0) continue;
        ok[n++] = cases[k];
    }
    int rc = cli_check_kernel_choice(b, ok, n, o, 1, err, errlen);
    free(ok);
    return rc;
}

/* One option that is not a kernel option: a dimension list, the profiles, the seed,
 * the ulp bound, the backend, the JSON.  0, or -1 with err set (unknown included). */
static int parse_validate_option(const op_desc *op, const char *name, const char *val, validate_cli *vc, char *err,
                                 size_t errlen) {
    int di = op_dim_index(op, name);
    int64_t v64;
    if (di >= 0) {
        if (parse_dim(op, di, val, vc, err, errlen)) return -1;
    } else if (strcmp(name, "profile") == 0) {
        if (parse_profiles(vc, val, err, errlen)) return -1;
    } else if (strcmp(name, "seed") == 0) {
        if (args_parse_u64(name, val, &vc->seed, err, errlen)) return -1;
    } else if (strcmp(name, "ulp") == 0) {
        if (args_parse_int(name, val, &v64, err, errlen)) return -1;
        if (v64 < 0 || v64 > 4096) {
            snprintf(err, errlen, "--ulp %lld is out of range: accepted 0..4096", (long long)v64);
            return -1;
        }
        vc->ulp_p99_max = (int)v64;
    } else if (strcmp(name, "backend") == 0) {
        const backend_desc *d = backend_desc_find(val);
        if (!d || (d->kind != BACKEND_SW && d->kind != BACKEND_CPU)) {
            snprintf(err, errlen, "--backend '%s': validate runs on sw (the software device, with its checks) or "
                                  "cpu (the references against each other)", val);
            return -1;
        }
        vc->ro.backend = val;
    } else if (strcmp(name, "json") == 0) {
        vc->json_path = val;
    } else if (strcmp(name, "junit") == 0) {
        vc->junit_path = val;
    } else {
        snprintf(err, errlen, "unknown option --%s for validate %s (see gdnbench validate %s --help)", name, op->name,
                 op->name);
        return -1;
    }
    return 0;
}

/* argv[0] = "validate", argv[1] = op.  0, 1 for --help, -1 with err set. */
static int parse_args(const op_desc *op, int argc, char **argv, validate_cli *vc, char *err, size_t errlen) {
    run_opts *o = &vc->ro;
    o->backend = "sw";
    o->sw_checks = "full";
    o->warmup = 0;
    o->iters = 1;
    o->check = CHECK_BOTH;
    vc->ulp_p99_max = DEFAULT_ULP_P99_MAX;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(op);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s': options start with -- (see gdnbench validate %s --help)", a,
                     op->name);
            return -1;
        }
        char name[64];
        const char *val;
        static const char *const bare[] = {"quiet", NULL};
        if (cli_split_option(argc, argv, &i, bare, name, sizeof name, &val, err, errlen)) return -1;
        if (!val) {
            vc->quiet = 1;
            continue;
        }
        int kopt = cli_parse_kernel_option(name, val, o, err, errlen);
        if (kopt < 0) return -1;
        if (kopt == 0 && parse_validate_option(op, name, val, vc, err, errlen)) return -1;
    }
    if (cli_check_kernel_options(o, err, errlen)) return -1;
    if (cli_has_kernel_choice(o) && !(backend_desc_find(o->backend)->caps & BACKEND_KERNELS)) {
        snprintf(err, errlen, "--%s needs the software device (--backend sw), not cpu", o->shader ? "shader" : "stage");
        return -1;
    }
    return 0;
}

/* One validation: what the driver's hooks read and write. */
typedef struct validate_run {
    validate_cli *vc;
    validate_ctx ctx;
    validate_report vr;
    validate_case_spec *specs;
    validate_result *results;
    driver_case *cases;        /* the specs' shapes */
} validate_run;

/* The sweep; exit 2 when it is empty. */
static int plan_sweep(const op_desc *op, validate_run *v, char *err, size_t errlen) {
    validate_cli *vc = v->vc;
    int n = validate_sweep(op, &vc->dims, vc->nprofiles ? vc->profiles : NULL, vc->nprofiles, vc->seed, v->specs,
                           VALIDATE_MAX_CASES, err, errlen);
    if (n < 0) return -1;
    if (n == 0) {
        snprintf(err, errlen, "no case to run: the profiles given change none of %s's inputs", op->name);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        v->cases[k].op = op;
        memcpy(v->cases[k].dim, v->specs[k].dim, sizeof v->cases[k].dim);
    }
    v->vr.nspecs = n;
    return 0;
}

/* The report's header facts, from the opened backend. */
static void start_report(const op_desc *op, backend *b, validate_run *v) {
    validate_cli *vc = v->vc;
    v->ctx = (validate_ctx){op, b, vc->ro, vc->seed, vc->ulp_p99_max};
    int checks = backend_has(b, BACKEND_CHECKS), schedules = backend_has(b, BACKEND_SCHEDULES);
    if (!checks) v->ctx.ro.sw_checks = NULL;
    v->vr = (validate_report){.op = op,
                              .backend = b->desc->name,
                              .self_references = b->self_references,
                              .device = b->device_name,
                              .checks = checks ? "full" : "none",
                              .seed = vc->seed,
                              .ulp_p99_max = vc->ulp_p99_max,
                              .nruns = schedules ? VALIDATE_NRUNS : 1,
                              .specs = v->specs,
                              .nspecs = v->vr.nspecs,
                              .results = v->results,
                              .max_findings = run_max_findings(&vc->ro),
                              .status = RUN_PASS};
    validate_run_configs(vc->seed, v->vr.runs);
}

/* driver hook: one case of the sweep under every run configuration. */
static driver_outcome run_case(void *user, int k) {
    validate_run *v = user;
    v->ctx.ro.check = v->specs[k].profile->check_f64 ? CHECK_BOTH : CHECK_PARITY;
    validate_run_case(&v->ctx, &v->specs[k], &v->results[k]);
    v->vr.ncases = k + 1;
    switch (v->results[k].status) {
    case VAL_PASS: return DRIVER_PASS;
    case VAL_FAIL: return DRIVER_FAIL;
    case VAL_UNSUPPORTED: return DRIVER_SKIPPED;
    default: return DRIVER_ERROR;
    }
}

/* driver hook: the case's line; an error also on stderr (the sweep stops there). */
static void print_case(void *user, int k, driver_outcome out) {
    validate_run *v = user;
    if (!v->vc->quiet) validate_table_case(stdout, &v->vr, k);
    if (out == DRIVER_ERROR) fprintf(stderr, "gdnbench: validate %s: %s\n", v->ctx.op->name, v->results[k].reason);
}

/* --junit: a test case per case of the sweep. */
static int write_junit(const char *path, const validate_report *vr, char *err, size_t errlen) {
    char name[96];
    snprintf(name, sizeof name, "gdnbench validate %s", vr->op->name);
    junit_doc *d = junit_new(name);
    int rc = d && junit_add_validate(d, vr) == 0 ? junit_write(d, path, err, errlen) : -1;
    if (!d || (rc != 0 && !err[0])) snprintf(err, errlen, "out of memory while writing the JUnit report to %s", path);
    junit_free(d);
    return rc;
}

/* Runs the sweep on b, prints the summary, writes the JSON.  The exit status, or -1
 * with err set. */
static int run_sweep(const op_desc *op, backend *b, validate_run *v, char *err, size_t errlen) {
    start_report(op, b, v);
    if (!v->vc->quiet) validate_table_header(stdout, &v->vr, &v->vc->ro);
    driver_plan plan = {b, &v->ctx.ro, v->cases, v->vr.nspecs, NULL, 1};
    driver_hooks hooks = {.user = v, .run = run_case, .print = print_case};
    driver_tally t;
    driver_run(&plan, &hooks, &t, err, errlen);
    v->vr.status = driver_verdict(&t);
    if (!v->vc->quiet) validate_table_summary(stdout, &v->vr);
    if (!t.npass && !t.nfail && !t.nerror)
        fprintf(stderr, "gdnbench: validate %s: every case is unsupported by the kernel: nothing was validated\n",
                op->name);
    if (v->vc->json_path && validate_write_json(v->vc->json_path, &v->vr, err, errlen) != 0) return -1;
    if (v->vc->junit_path && write_junit(v->vc->junit_path, &v->vr, err, errlen) != 0) return -1;
    return cli_exit_status(v->vr.status);
}

static int usage(int argc, char **argv) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f, "usage: gdnbench validate <op> [--shader FILE [--function NAME]] [--stage NAME=FILE[:FUNCTION]]\n"
               "                                [dimension lists] [--json FILE] [--junit FILE]\n"
               "       gdnbench validate <op> --help   the sweep, profiles and options\n");
    return argc < 2 ? EXIT_BAD_INPUT : EXIT_OK;
}

int cmd_validate(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return usage(argc, argv);
    const op_desc *op = op_find(argv[1]);
    if (!op) {
        fprintf(stderr, "gdnbench: validate: unknown op '%s': see `gdnbench list`\n", argv[1]);
        return EXIT_BAD_INPUT;
    }
    char err[1024] = "";
    int status = EXIT_BAD_INPUT, p = -1;
    validate_run v = {.vc = calloc(1, sizeof *v.vc), .specs = calloc(VALIDATE_MAX_CASES, sizeof *v.specs),
                      .results = calloc(VALIDATE_MAX_CASES, sizeof *v.results),
                      .cases = calloc(VALIDATE_MAX_CASES, sizeof *v.cases)};
    backend *b = NULL;
    if (!v.vc || !v.specs || !v.results || !v.cases) snprintf(err, sizeof err, "out of memory");
    else p = parse_args(op, argc, argv, v.vc, err, sizeof err);
    if (p == 0 && !op->launch && (backend_desc_find(v.vc->ro.backend)->caps & BACKEND_KERNELS)) {
        snprintf(err, sizeof err, "%s has no Metal kernel to validate", op->name);
        p = -1;
    }
    if (p == 1) status = EXIT_OK;
    else if (p < 0 || plan_sweep(op, &v, err, sizeof err) != 0 ||
             !(b = backend_open(v.vc->ro.backend, &v.vc->ro, err, sizeof err)) ||
             check_kernel_choice(b, v.cases, v.vr.nspecs, &v.vc->ro, err, sizeof err) != 0 ||
             (status = run_sweep(op, b, &v, err, sizeof err)) < 0) {
        fprintf(stderr, "gdnbench: %s\n", err);
        status = EXIT_BAD_INPUT;
    }
    for (int i = 0; i < v.vr.ncases; i++) validate_result_free(&v.results[i]);
    if (b) b->destroy(b);
    free(v.results);
    free(v.specs);
    free(v.cases);
    free(v.vc);
    return status;
}
