/* cmd_run.c — `gdnbench <op> [options]`: run one op over one or more shapes.
 *
 * Parses the op's dimension flags (lists and ranges expand to every combination)
 * and the measurement flags, validates every shape before running anything, then
 * runs each case on the chosen backend, prints the table and writes the JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/capture_opts.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/kernel_opts.h"
#include "cli/sampling_opts.h"
#include "cli/stage_opts.h"
#include "cli/table.h"
#include "io/fixture.h"
#include "report/report_gbench.h"
#include "report/junit.h"
#include "report/report_json.h"
#include "runner/driver.h"
#include "runner/dump.h"
#include "runner/fixture_bind.h"
#include "runner/machine.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"

#define MAX_CASES 4096

typedef struct run_cli {
    run_opts opts;
    int_list dims[OP_MAX_DIMS];
    int dim_given[OP_MAX_DIMS];
    const char *json_path;
    const char *junit_path;    /* --junit FILE */
    const char *format;        /* json (default) | gbench: what --json writes */
    const char *fixture_path;  /* --fixture PATH */
    fixture_map maps[FIXTURE_MAX_MAPS]; /* --map FILE_NAME=BUFFER */
    int nmaps;
    const char *dump_dir;      /* --dump DIR */
    const char *capture_dir;   /* --capture DIR */
} run_cli;

static void print_op_help(const op_desc *op) {
    printf("usage: gdnbench %s [options]\n\n%s\n\ndimensions (each takes N, a list 1,2,3 or a range A..B:+S / A..B:xF):\n",
           op->name, op->summary);
    for (int i = 0; i < op->ndims; i++) {
        const op_dim *d = &op->dims[i];
        printf("  --%-8s %-40s default %-6lld range %lld..%lld%s%s\n", d->name, d->help, (long long)d->def,
               (long long)d->min, (long long)d->max, d->alias ? "  alias --" : "", d->alias ? d->alias : "");
    }
    printf("\nbuffers (kernel ABI):\n");
    for (int i = 0; i < op->nbufs; i++) {
        const op_buf *b = &op->bufs[i];
        static const char *roles[] = {"in", "out", "inout", "scratch"};
        printf("  %-10s %-7s %-5s", b->name, roles[b->role], dtype_name(b->dtype));
        if (b->role == BUF_OUT || b->role == BUF_INOUT)
            printf("  tolerance vs f64: atol %.3g rtol %.3g rel_l2 %.3g; vs bf16-parity: atol %.3g rtol %.3g rel_l2 %.3g",
                   b->tol[REF_F64].atol, b->tol[REF_F64].rtol, b->tol[REF_F64].rel_l2, b->tol[REF_PARITY].atol,
                   b->tol[REF_PARITY].rtol, b->tol[REF_PARITY].rel_l2);
        printf("\n");
    }
    printf("\noptions:\n"
           "  --backend cpu|sw|metal   where the op runs (default %s)\n"
           "  --seed N                 input generator seed (default 0)\n"
           "  --check f64|parity|both|none   references to check against (default both)\n"
           "  --atol X --rtol X        override every output's tolerance\n"
           "  --json FILE|-            write the JSON report (schema 1)\n"
           "  --format json|gbench     what --json writes: our schema 1 or Google Benchmark JSON\n"
           "  --junit FILE|-           JUnit XML: a test case per shape (for CI test reports)\n"
           "  --shader FILE --function NAME  run a third-party kernel with the same ABI as the main stage;\n"
           "                           the other stages take FILE's kernels of their default names, else ours\n"
           "  --shader FILE            every stage FILE defines under its default name, the rest ours\n"
           "  --stage NAME=FILE[:FUNCTION]  one stage's kernel from FILE (repeatable; wins over --shader)\n"
           "  --constant ID=VALUE      function constant for the kernels from FILE (repeatable)\n"
           "  --include DIR, --define NAME[=VALUE]  include directory and macro for the kernels from FILE\n"
           "                           (repeatable)\n"
           "  --sw-checks none|fast|numerics|full, --sw-schedule inorder|reverse|random:SEED  software device\n"
           "                           (numerics: Inf/NaN from finite values, overflowing conversions, signed\n"
           "                           overflow, division by zero, shifts, 8/16-bit wraps; full: all checks)\n"
           "  --sw-timeout SECONDS     software device's watchdog: a dispatch still running after this\n"
           "                           long is stopped and reported with its threads' lines (default %g,\n"
           "                           far above any shipped op's; 0 = never)\n"
           "  --fast-math              compile kernels with Metal's fast math (default off: it can\n"
           "                           break the ulp bounds; no effect on the software device)\n"
           "  --counters               (software device) one more run after the timed ones, counting\n"
           "                           exactly: device bytes requested and distinct, 128-byte lines,\n"
           "                           coalescing, flops, simd lanes, barriers, atomics (JSON: counters)\n"
           "  --all-floors             with --counters, the table's floor model for every chip of the\n"
           "                           chip table (default: this machine's chip and the range; the JSON\n"
           "                           always has every chip)\n"
           "  --sw-max-findings N      distinct bugs the software device's checks show per case (default 5;\n"
           "                           the JSON report has all)\n"
           "  --dtype bf16             element type (the GDN kernels are bf16)\n"
           "  --fixture PATH           inputs (and expected outputs) from a .safetensors, .npy, .npz (numpy.savez)\n"
           "                           file, a directory of .npy, or an mlx-native *_meta.json set; the shape comes\n"
           "                           from its parameters or else its tensors' shapes\n"
           "  --map FILE_NAME=BUFFER   bind the fixture's tensor FILE_NAME to the op's buffer BUFFER (repeatable)\n"
           "  --dump DIR               save inputs, outputs and references as safetensors\n"
           "  --capture DIR            (--backend metal) record the first timed iteration of each shape\n"
           "                           as DIR/OP-SHAPE.gputrace for Xcode's GPU tools\n"
           "  --quiet                  no table on stdout\n"
           "  --verbose, -v            what compiling the kernels cost (software device), per variant\n"
           "                           and phase, on stderr\n",
           backend_default_name(), SWMTL_DEFAULT_TIMEOUT_S);
    printf("\nhow many runs:\n");
    cli_print_sampling_help(stdout);
    cli_print_stage_help(stdout, op);
}

static int parse_check(const char *s, int *out) {
    if (strcmp(s, "f64") == 0) *out = CHECK_F64;
    else if (strcmp(s, "parity") == 0 || strcmp(s, "bf16-parity") == 0) *out = CHECK_PARITY;
    else if (strcmp(s, "both") == 0) *out = CHECK_BOTH;
    else if (strcmp(s, "none") == 0) *out = CHECK_NONE;
    else return -1;
    return 0;
}

/* One option of a run that is neither a kernel nor a sampling option: a dimension of
 * op, where the inputs come from, what is written, the backend and its checks.
 * Returns 0, or -1 with err set (an unknown option included). */
static int parse_run_option(const op_desc *op, const char *name, const char *val, run_cli *rc, char *err,
                            size_t errlen) {
    run_opts *o = &rc->opts;
    int di = op_dim_index(op, name);
    uint64_t u64;
    if (di >= 0) {
        if (args_parse_int_list(name, val, &rc->dims[di], err, errlen)) return -1;
        rc->dim_given[di] = 1;
    } else if (strcmp(name, "seed") == 0) {
        if (args_parse_u64(name, val, &u64, err, errlen)) return -1;
        o->seed = u64;
    } else if (strcmp(name, "json") == 0) {
        rc->json_path = val;
    } else if (strcmp(name, "junit") == 0) {
        rc->junit_path = val;
    } else if (strcmp(name, "fixture") == 0) {
        rc->fixture_path = val;
    } else if (strcmp(name, "map") == 0) {
        if (rc->nmaps >= FIXTURE_MAX_MAPS) {
            snprintf(err, errlen, "--map given more than %d times: one per buffer", FIXTURE_MAX_MAPS);
            return -1;
        }
        if (fixture_map_parse(val, &rc->maps[rc->nmaps], err, errlen)) return -1;
        rc->nmaps++;
    } else if (strcmp(name, "dump") == 0) {
        rc->dump_dir = val;
    } else if (strcmp(name, "capture") == 0) {
        rc->capture_dir = val;
    } else if (strcmp(name, "format") == 0) {
        if (strcmp(val, "json") && strcmp(val, "gbench")) {
            snprintf(err, errlen,
                     "--format '%s' is unknown for a run: use json (schema 1) or gbench (Google Benchmark JSON)", val);
            return -1;
        }
        rc->format = val;
    } else if (strcmp(name, "backend") == 0) {
        o->backend = val;
    } else if (strcmp(name, "check") == 0) {
        if (parse_check(val, &o->check)) {
            snprintf(err, errlen, "--check '%s' is unknown: use f64, parity, both or none", val);
            return -1;
        }
    } else if (strcmp(name, "sw-checks") == 0) {
        swmtl_checks checks;
        if (swmtl_parse_checks(val, &checks, "--sw-checks", err, errlen) != 0) return -1;
        o->sw_checks = val;
    } else if (strcmp(name, "sw-schedule") == 0) {
        swmtl_order order;
        if (swmtl_parse_order(val, &order, "--sw-schedule", err, errlen) != 0) return -1;
        o->sw_schedule = val;
    } else if (strcmp(name, "dtype") == 0) {
        if (strcmp(val, "bf16") != 0) {
            snprintf(err, errlen, "--dtype '%s' is not supported by %s: its kernels take bf16 (--dtype bf16)", val,
                     op->name);
            return -1;
        }
    } else {
        snprintf(err, errlen, "unknown option --%s for %s (see gdnbench %s --help)", name, op->name, op->name);
        return -1;
    }
    return 0;
}

/* The options that only make sense together, once all are parsed. */
static int check_run_args(const run_cli *rc, char *err, size_t errlen) {
    const run_opts *o = &rc->opts;
    if (cli_check_kernel_options(o, err, errlen)) return -1;
    const backend_desc *kind = backend_desc_find(o->backend); /* NULL: backend_open says so */
    if (cli_capture_check_backend(rc->capture_dir, o->backend, err, errlen)) return -1;
    if (rc->nmaps && !rc->fixture_path) {
        snprintf(err, errlen, "--map %s=%s renames a fixture's tensor: give the file with --fixture PATH",
                 rc->maps[0].from, rc->maps[0].to);
        return -1;
    }
    if (cli_has_kernel_choice(o) && kind && !(kind->caps & BACKEND_KERNELS)) {
        snprintf(err, errlen, "--%s needs a Metal backend (--backend sw or metal), not cpu",
                 o->shader ? "shader" : "stage");
        return -1;
    }
    return 0;
}

/* Parses argv[2..] for op; returns 0, 1 for --help (printed), or -1 with err set. */
static int parse_run_args(const op_desc *op, int argc, char **argv, run_cli *rc, char *err, size_t errlen) {
    run_opts *o = &rc->opts;
    sampling_flags given = {0};
    o->backend = backend_default_name();
    o->check = CHECK_BOTH;
    for (int i = 0; i < op->ndims; i++) {
        rc->dims[i].n = 1;
        rc->dims[i].v[0] = op->dims[i].def;
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_op_help(op);
            return 1;
        }
        if (strcmp(a, "-v") == 0) {
            o->verbose = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s': options start with -- (see gdnbench %s --help)", a, op->name);
            return -1;
        }
        char name[64];
        const char *val = NULL;
        static const char *const bare[] = {"quiet", "fast-math", "verbose", "counters", "all-floors", NULL};
        if (cli_split_option(argc, argv, &i, bare, name, sizeof name, &val, err, errlen)) return -1;
        if (!val) {
            *(strcmp(name, "quiet") == 0     ? &o->quiet
              : strcmp(name, "verbose") == 0 ? &o->verbose
              : strcmp(name, "counters") == 0 ? &o->counters
              : strcmp(name, "all-floors") == 0 ? &o->all_floors
                                             : &o->fast_math) = 1;
            continue;
        }
        int kopt = cli_parse_kernel_option(name, val, o, err, errlen);
        if (kopt < 0) return -1;
        if (kopt > 0) continue;
        int sopt = cli_parse_sampling_option(name, val, o, &given, err, errlen);
        if (sopt < 0) return -1;
        if (sopt > 0) continue;
        if (parse_run_option(op, name, val, rc, err, errlen)) return -1;
    }
    if (cli_finish_sampling(o, &given, err, errlen)) return -1;
    return check_run_args(rc, err, errlen);
}

/* DIR/OP-B1_T4096_....gputrace: where --capture records a case. */
static void capture_path(const char *dir, const op_desc *op, const int64_t *dim, char *out, size_t n) {
    char stem[512];
    size_t off = (size_t)snprintf(stem, sizeof stem, "%s-", op->name);
    for (int i = 0; i < op->ndims && off < sizeof stem; i++)
        off += (size_t)snprintf(stem + off, sizeof stem - off, "%s%s%lld", i ? "_" : "", op->dims[i].name,
                                (long long)dim[i]);
    cli_capture_path(dir, stem, out, n);
}

/* What the run took from the fixture, once, before its table: where each dimension
 * came from, what nothing fixed, tensors bound to nothing, conversions. */
static void print_fixture_notes(FILE *f, const op_desc *op, const fixture *fx, const fixture_plan *p,
                                const rec_fixture *notes, const int64_t *dim, const int *dim_given) {
    fprintf(f, "\nfixture %s (%s, %d tensors)\n", fixture_path(fx), fixture_format(fx), fixture_count(fx));
    for (int src = FIXDIM_META; src <= FIXDIM_TENSOR; src++) {
        int any = 0;
        for (int i = 0; i < op->ndims; i++) {
            if (p->dim_source[i] != (fixture_dim_source)src) continue;
            fprintf(f, "%s%s=%lld", any ? ", " : src == FIXDIM_META ? "  from its parameters: " : "  from tensor shapes: ",
                    op->dims[i].name, (long long)p->dim[i]);
            if (src == FIXDIM_TENSOR) fprintf(f, " (%s)", p->dim_from[i]);
            any = 1;
        }
        if (any) fprintf(f, "\n");
    }
    int any = 0;
    for (int i = 0; i < op->ndims; i++) {
        if (p->dim_source[i] != FIXDIM_NONE) continue;
        fprintf(f, "%s%s=%lld (%s%s)", any ? ", " : "  not fixed by the file: ", op->dims[i].name, (long long)dim[i],
                dim_given[i] ? "--" : "the default", dim_given[i] ? op->dims[i].name : "");
        any = 1;
    }
    if (any) fprintf(f, "\n");
    if (p->nignored)
        fprintf(f, "  ignored: %s (%d tensor%s matching no input or output of %s; --map FILE_NAME=BUFFER binds one)\n",
                p->ignored, p->nignored, p->nignored == 1 ? "" : "s", op->name);
    for (int i = 0; i < notes->nconverted; i++)
        fprintf(f, "  converted: %s %s -> %s for %s (%s)\n", notes->converted[i].tensor, notes->converted[i].from,
                notes->converted[i].to, notes->converted[i].buffer,
                strcmp(notes->converted[i].to, "bf16") == 0 ? "rounded to nearest even" : "exact");
}

/* Expands the dimension lists into every combination (last dimension fastest). */
static int expand_cases(const op_desc *op, const run_cli *rc, driver_case *out, int max, char *err, size_t errlen) {
    long long total = 1;
    for (int i = 0; i < op->ndims; i++) {
        total *= rc->dims[i].n;
        if (total > max) {
            snprintf(err, errlen, "the dimension lists expand to more than %d shapes: narrow them", max);
            return -1;
        }
    }
    for (long long k = 0; k < total; k++) {
        long long r = k;
        out[k].op = op;
        for (int i = op->ndims - 1; i >= 0; i--) {
            out[k].dim[i] = rc->dims[i].v[r % rc->dims[i].n];
            r /= rc->dims[i].n;
        }
    }
    return (int)total;
}

/* One `gdnbench <op>` invocation: what the driver's hooks read and write. */
typedef struct run_cmd {
    const op_desc *op;
    run_cli *rc;
    fixture *fx;               /* --fixture, or NULL */
    fixture_plan *plan;
    rec_fixture *notes;
    backend *b;
    driver_case *cases;
    int ncases;
    run_record *recs;
    run_record **rec_ptrs;
    char trace[4096];          /* the --capture path of the case running */
} run_cmd;

/* --fixture: the file, what it binds, and the dimensions it fixes (a dimension flag
 * that says otherwise is an error). */
static int load_fixture(run_cmd *rm, char *err, size_t errlen) {
    run_cli *rc = rm->rc;
    const op_desc *op = rm->op;
    rm->fx = fixture_open(rc->fixture_path, err, errlen);
    if (!rm->fx) return -1;
    fixture_plan *plan = rm->plan;
    if (fixture_plan_make(rm->fx, op, rc->maps, rc->nmaps, plan, err, errlen) != 0) return -1;
    for (int i = 0; i < op->ndims; i++) {
        if (plan->dim_source[i] == FIXDIM_NONE) continue;
        if (rc->dim_given[i] && (rc->dims[i].n != 1 || rc->dims[i].v[0] != plan->dim[i])) {
            snprintf(err, errlen, "--%s contradicts the fixture %s, which has %s=%lld (%s %s): drop the flag",
                     op->dims[i].name, rc->fixture_path, op->dims[i].name, (long long)plan->dim[i],
                     plan->dim_source[i] == FIXDIM_META ? "its parameter" : "from tensor", plan->dim_from[i]);
            return -1;
        }
        rc->dims[i].n = 1;
        rc->dims[i].v[0] = plan->dim[i];
    }
    return 0;
}

/* The shapes to run: every combination of the lists, each checked before anything
 * runs (a bad one in a list is exit 2). */
static int plan_cases(run_cmd *rm, char *err, size_t errlen) {
    if (rm->rc->fixture_path && load_fixture(rm, err, errlen) != 0) return -1;
    rm->ncases = expand_cases(rm->op, rm->rc, rm->cases, MAX_CASES, err, errlen);
    if (rm->ncases < 0) return -1;
    if (rm->fx && rm->ncases != 1) {
        snprintf(err, errlen, "--fixture runs one shape: give single values, not lists, for the dimensions");
        return -1;
    }
    return driver_check_shapes(rm->cases, rm->ncases, err, errlen);
}

/* --capture DIR: the directory exists and no case's trace is there yet (Metal refuses
 * to overwrite one: say so before anything runs). */
static int check_capture_dir(const run_cmd *rm, char *err, size_t errlen) {
    const char *dir = rm->rc->capture_dir;
    if (cli_capture_dir(dir, err, errlen)) return -1;
    for (int k = 0; k < rm->ncases; k++) {
        char path[4096];
        capture_path(dir, rm->op, rm->cases[k].dim, path, sizeof path);
        if (cli_capture_unused(path, err, errlen)) return -1;
    }
    return 0;
}

/* The backend, and every case's kernel choice on it, before anything runs. */
static int open_backend(run_cmd *rm, char *err, size_t errlen) {
    run_cli *rc = rm->rc;
    /* Metal reads this when the device is created. */
    if (rc->capture_dir) cli_capture_enable();
    rm->b = backend_open(rc->opts.backend, &rc->opts, err, errlen);
    if (!rm->b) return -1;
    if (rc->capture_dir && check_capture_dir(rm, err, errlen) != 0) return -1;
    return cli_check_kernel_choice(rm->b, rm->cases, rm->ncases, &rc->opts, 1, err, errlen);
}

/* driver hook: generated inputs, or the fixture's. */
static op_case *make_case(void *user, int k, const driver_case *dc, char *err, size_t errlen, int *stop) {
    run_cmd *rm = user;
    op_case *c = op_case_new(dc->op, dc->dim, rm->rc->opts.seed, err, errlen);
    if (!c || !rm->fx) return c;
    fixture_plan_notes(rm->fx, rm->plan, dc->op, dc->dim, rm->notes);
    if (fixture_bind_inputs(rm->fx, rm->plan, c, rm->notes, err, errlen) != 0) {
        op_case_free(c);
        *stop = 1;
        return NULL;
    }
    return c;
}

/* driver hook: the header once the first case's inputs exist (a file that cannot be
 * used prints nothing), the fixture's notes, the case's capture path. */
static void before_case(void *user, int k, const op_case *c, run_opts *o) {
    run_cmd *rm = user;
    if (k == 0 && !o->quiet) {
        char runs[256];
        cli_sampling_desc(o, runs, sizeof runs);
        table_print_header(stdout, rm->op, rm->b, runs, (unsigned long long)o->seed);
        rec_machine now;
        machine_sample(&now, rm->b);
        table_print_machine(stdout, &now);
    }
    if (c && rm->fx && !o->quiet)
        print_fixture_notes(stdout, rm->op, rm->fx, rm->plan, rm->notes, rm->cases[k].dim, rm->rc->dim_given);
    if (rm->rc->capture_dir) {
        capture_path(rm->rc->capture_dir, rm->op, rm->cases[k].dim, rm->trace, sizeof rm->trace);
        o->capture_path = rm->trace;
    }
}

/* driver hook: the capture's note, the fixture's expected outputs, --dump. */
static int after_case(void *user, int k, op_case *c, run_record *r, char *err, size_t errlen) {
    run_cmd *rm = user;
    const run_opts *o = &rm->rc->opts;
    if (rm->rc->capture_dir && r->status != RUN_ERROR && !o->quiet) cli_capture_note(rm->trace);
    if (rm->fx) r->fixture = *rm->notes;
    if (rm->fx && r->status != RUN_ERROR &&
        !fixture_check_outputs(rm->fx, rm->plan, c, o->has_atol, o->atol, o->has_rtol, o->rtol, r))
        r->status = RUN_FAIL;
    if (rm->rc->dump_dir && r->status != RUN_ERROR) {
        char path[4096];
        if (dump_case(rm->rc->dump_dir, c, path, sizeof path, err, errlen) != 0) return -1;
        if (!o->quiet) printf("dumped %s\n", path);
    }
    return 0;
}

/* driver hook: the case's table row and findings; an error also on stderr. */
static void print_case(void *user, int k, driver_outcome out) {
    run_cmd *rm = user;
    const run_record *r = rm->rec_ptrs[k];
    if (!rm->rc->opts.quiet) {
        table_print_record(stdout, r);
        table_print_findings(stdout, r, run_max_findings(&rm->rc->opts));
    }
    if (rm->rc->opts.verbose) table_print_compile(stderr, r);
    if (r->status == RUN_ERROR) fprintf(stderr, "gdnbench: %s: %s\n", rm->op->name, r->error);
    fflush(stdout);
}

/* Runs the planned cases; writes the report.  The exit status, or -1 with err set. */
static int run_cases(run_cmd *rm, char *err, size_t errlen) {
    rm->recs = calloc((size_t)rm->ncases, sizeof *rm->recs);
    rm->rec_ptrs = calloc((size_t)rm->ncases, sizeof *rm->rec_ptrs);
    if (!rm->recs || !rm->rec_ptrs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < rm->ncases; k++) rm->rec_ptrs[k] = &rm->recs[k];
    driver_plan plan = {rm->b, &rm->rc->opts, rm->cases, rm->ncases, rm->rec_ptrs, 0};
    driver_hooks hooks = {.user = rm, .make_case = make_case, .before = before_case, .after = after_case,
                          .print = print_case};
    driver_tally tally;
    int n = driver_run(&plan, &hooks, &tally, err, errlen);
    if (n < 0) return -1;
    const char *json = rm->rc->json_path;
    if (json) {
        int gbench = rm->rc->format && strcmp(rm->rc->format, "gbench") == 0;
        if ((gbench ? report_gbench_write : report_write)(json, rm->rec_ptrs, n, err, errlen) != 0) return -1;
    }
    if (rm->rc->junit_path) {
        char name[96];
        snprintf(name, sizeof name, "gdnbench %s", rm->op->name);
        if (junit_write_records(rm->rc->junit_path, name, rm->rec_ptrs, n, err, errlen) != 0) return -1;
    }
    table_print_checks_hint(stderr, rm->b, &rm->rc->opts, rm->op->name, tally.nfail);
    return cli_exit_status(driver_verdict(&tally));
}

int cmd_run(const op_desc *op, int argc, char **argv) {
    char err[512] = "";
    run_cmd rm = {.op = op};
    rm.rc = calloc(1, sizeof *rm.rc);
    rm.plan = calloc(1, sizeof *rm.plan);
    rm.notes = calloc(1, sizeof *rm.notes);
    rm.cases = calloc(MAX_CASES, sizeof *rm.cases);
    int status = EXIT_BAD_INPUT, p = 0;
    if (!rm.rc || !rm.cases || !rm.plan || !rm.notes) {
        fprintf(stderr, "gdnbench: out of memory\n");
        goto done;
    }
    p = parse_run_args(op, argc, argv, rm.rc, err, sizeof err);
    if (p == 1) status = EXIT_OK;
    else if (p < 0 || plan_cases(&rm, err, sizeof err) != 0 || open_backend(&rm, err, sizeof err) != 0 ||
             (status = run_cases(&rm, err, sizeof err)) < 0) {
        fprintf(stderr, "gdnbench: %s\n", err);
        status = EXIT_BAD_INPUT;
    }
done:
    for (int i = 0; rm.recs && i < rm.ncases; i++) run_record_free(&rm.recs[i]);
    free(rm.recs);
    free(rm.rec_ptrs);
    if (rm.b) rm.b->destroy(rm.b);
    fixture_free(rm.fx);
    free(rm.cases);
    free(rm.plan);
    free(rm.notes);
    free(rm.rc);
    return status;
}
