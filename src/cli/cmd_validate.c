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
#include "runner/validate_report.h"

#define DEFAULT_ULP_P99_MAX 4

typedef struct validate_cli {
    run_opts ro;
    validate_dims dims;
    const validate_profile *profiles[32];
    int nprofiles;              /* 0 = all */
    uint64_t seed;
    int ulp_p99_max;
    const char *json_path;
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
           "  --sw-max-findings N      distinct bugs of the device's checks shown per case (default 5;\n"
           "                           the JSON has all)\n"
           "  --quiet                  no table on stdout\n\n"
           "exit status: 0 every case passed or is unsupported, 1 a case failed, 2 bad input or could not run\n",
           DEFAULT_ULP_P99_MAX);
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
static int check_kernel_choice(const op_desc *op, backend *b, const validate_case_spec *specs, int nspecs,
                               const run_opts *o, char *err, size_t errlen) {
    if (!cli_has_kernel_choice(o)) return 0;
    const op_desc **ops = malloc(sizeof *ops * (size_t)nspecs);
    int64_t(*dims)[OP_MAX_DIMS] = malloc(sizeof *dims * (size_t)nspecs);
    int n = 0, rc = -1;
    if (!ops || !dims) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int k = 0; k < nspecs; k++) {
        char why[256];
        if (op->validate && op->validate(specs[k].dim, why, sizeof why) != 0) continue;
        ops[n] = op;
        memcpy(dims[n++], specs[k].dim, sizeof dims[0]);
    }
    rc = cli_check_kernel_choice(b, ops, (const int64_t(*)[OP_MAX_DIMS])dims, n, o, 1, err, errlen);
out:
    free(ops);
    free(dims);
    return rc;
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
        if (kopt > 0) continue;
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
            o->backend = val;
        } else if (strcmp(name, "json") == 0) {
            vc->json_path = val;
        } else {
            snprintf(err, errlen, "unknown option --%s for validate %s (see gdnbench validate %s --help)", name, op->name,
                     op->name);
            return -1;
        }
    }
    if (cli_check_kernel_options(o, err, errlen)) return -1;
    if (cli_has_kernel_choice(o) && !(backend_desc_find(o->backend)->caps & BACKEND_KERNELS)) {
        snprintf(err, errlen, "--%s needs the software device (--backend sw), not cpu", o->shader ? "shader" : "stage");
        return -1;
    }
    return 0;
}

int cmd_validate(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: gdnbench validate <op> [--shader FILE [--function NAME]] [--stage NAME=FILE[:FUNCTION]]\n"
                   "                                [dimension lists] [--json FILE]\n"
                   "       gdnbench validate <op> --help   the sweep, profiles and options\n");
        return argc < 2 ? EXIT_BAD_INPUT : EXIT_OK;
    }
    const op_desc *op = op_find(argv[1]);
    if (!op) {
        fprintf(stderr, "gdnbench: validate: unknown op '%s': see `gdnbench list`\n", argv[1]);
        return EXIT_BAD_INPUT;
    }
    char err[1024] = "";
    int status = EXIT_BAD_INPUT, ncases = 0, nspecs = 0;
    validate_cli *vc = calloc(1, sizeof *vc);
    validate_case_spec *specs = calloc(VALIDATE_MAX_CASES, sizeof *specs);
    validate_result *results = calloc(VALIDATE_MAX_CASES, sizeof *results);
    backend *b = NULL;
    if (!vc || !specs || !results) {
        snprintf(err, sizeof err, "out of memory");
        goto bad;
    }
    int p = parse_args(op, argc, argv, vc, err, sizeof err);
    if (p == 1) {
        status = EXIT_OK;
        goto done;
    }
    if (p < 0) goto bad;
    if (!op->launch && (backend_desc_find(vc->ro.backend)->caps & BACKEND_KERNELS)) {
        snprintf(err, sizeof err, "%s has no Metal kernel to validate", op->name);
        goto bad;
    }
    nspecs = validate_sweep(op, &vc->dims, vc->nprofiles ? vc->profiles : NULL, vc->nprofiles, vc->seed, specs,
                            VALIDATE_MAX_CASES, err, sizeof err);
    if (nspecs < 0) goto bad;
    if (nspecs == 0) {
        snprintf(err, sizeof err, "no case to run: the profiles given change none of %s's inputs", op->name);
        goto bad;
    }
    b = backend_open(vc->ro.backend, &vc->ro, err, sizeof err);
    if (!b) goto bad;
    if (check_kernel_choice(op, b, specs, nspecs, &vc->ro, err, sizeof err) != 0) goto bad;
    validate_ctx ctx = {op, b, vc->ro, vc->seed, vc->ulp_p99_max};
    int checks = backend_has(b, BACKEND_CHECKS), schedules = backend_has(b, BACKEND_SCHEDULES);
    if (!checks) ctx.ro.sw_checks = NULL;
    validate_report vr = {.op = op,
                          .backend = b->desc->name,
                          .self_references = b->self_references,
                          .device = b->device_name,
                          .checks = checks ? "full" : "none",
                          .seed = vc->seed,
                          .ulp_p99_max = vc->ulp_p99_max,
                          .nruns = schedules ? VALIDATE_NRUNS : 1,
                          .specs = specs,
                          .nspecs = nspecs,
                          .results = results,
                          .max_findings = run_max_findings(&vc->ro),
                          .status = RUN_PASS};
    validate_run_configs(vc->seed, vr.runs);
    if (!vc->quiet) validate_table_header(stdout, &vr, &vc->ro);
    int any_fail = 0, any_error = 0, any_pass = 0;
    for (int k = 0; k < nspecs; k++) {
        ctx.ro.check = specs[k].profile->check_f64 ? CHECK_BOTH : CHECK_PARITY;
        validate_run_case(&ctx, &specs[k], &results[k]);
        ncases = k + 1;
        vr.ncases = ncases;
        validate_status s = results[k].status;
        any_fail |= s == VAL_FAIL;
        any_error |= s == VAL_ERROR;
        any_pass |= s == VAL_PASS;
        if (!vc->quiet) validate_table_case(stdout, &vr, k);
        if (s == VAL_ERROR) {
            fprintf(stderr, "gdnbench: validate %s: %s\n", op->name, results[k].reason);
            break;
        }
    }
    vr.status = any_error ? RUN_ERROR : (any_fail || !any_pass) ? RUN_FAIL : RUN_PASS;
    if (!vc->quiet) validate_table_summary(stdout, &vr);
    if (!any_pass && !any_fail && !any_error)
        fprintf(stderr, "gdnbench: validate %s: every case is unsupported by the kernel: nothing was validated\n",
                op->name);
    if (vc->json_path && validate_write_json(vc->json_path, &vr, err, sizeof err) != 0) goto bad;
    status = any_error ? EXIT_BAD_INPUT : (any_fail || !any_pass) ? EXIT_CHECK_FAILED : EXIT_OK;
    goto done;
bad:
    fprintf(stderr, "gdnbench: %s\n", err);
    status = EXIT_BAD_INPUT;
done:
    for (int i = 0; i < ncases; i++) validate_result_free(&results[i]);
    if (b) b->destroy(b);
    free(results);
    free(specs);
    free(vc);
    return status;
}
