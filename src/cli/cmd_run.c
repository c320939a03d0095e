/* cmd_run.c — `gdnbench <op> [options]`: run one op over one or more shapes.
 *
 * Parses the op's dimension flags (lists and ranges expand to every combination)
 * and the measurement flags, validates every shape before running anything, then
 * runs each case on the chosen backend, prints the table and writes the JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/kernel_opts.h"
#include "cli/sampling_opts.h"
#include "cli/stage_opts.h"
#include "cli/table.h"
#include "io/report_gbench.h"
#include "io/report_json.h"
#include "io/fixture.h"
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
           "  --shader FILE --function NAME  run a third-party kernel with the same ABI as the main stage;\n"
           "                           the other stages take FILE's kernels of their default names, else ours\n"
           "  --shader FILE            every stage FILE defines under its default name, the rest ours\n"
           "  --stage NAME=FILE[:FUNCTION]  one stage's kernel from FILE (repeatable; wins over --shader)\n"
           "  --constant ID=VALUE      function constant for the kernels from FILE (repeatable)\n"
           "  --include DIR, --define NAME[=VALUE]  include directory and macro for the kernels from FILE\n"
           "                           (repeatable)\n"
           "  --sw-checks none|fast|full, --sw-schedule inorder|reverse|random:SEED  software device\n"
           "  --fast-math              compile kernels with Metal's fast math (default off: it can\n"
           "                           break the ulp bounds; no effect on the software device)\n"
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
           "  --quiet                  no table on stdout\n",
           backend_default_name());
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
        if (strncmp(a, "--", 2) != 0) {
            snprintf(err, errlen, "unexpected argument '%s': options start with -- (see gdnbench %s --help)", a, op->name);
            return -1;
        }
        char name[64];
        const char *val = NULL;
        static const char *const bare[] = {"quiet", "fast-math", NULL};
        if (cli_split_option(argc, argv, &i, bare, name, sizeof name, &val, err, errlen)) return -1;
        if (!val) {
            *(strcmp(name, "quiet") == 0 ? &o->quiet : &o->fast_math) = 1;
            continue;
        }
        int kopt = cli_parse_kernel_option(name, val, o, err, errlen);
        if (kopt < 0) return -1;
        if (kopt > 0) continue;
        int sopt = cli_parse_sampling_option(name, val, o, &given, err, errlen);
        if (sopt < 0) return -1;
        if (sopt > 0) continue;
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
                snprintf(err, errlen, "--format '%s' is unknown for a run: use json (schema 1) or gbench (Google Benchmark JSON)", val);
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
    }
    if (cli_finish_sampling(o, &given, err, errlen)) return -1;
    if (cli_check_kernel_options(o, err, errlen)) return -1;
    if (rc->capture_dir && strcmp(o->backend, "metal") != 0) {
        snprintf(err, errlen, "--capture needs --backend metal: a GPU capture records a real GPU's work, and this run "
                              "uses --backend %s", o->backend);
        return -1;
    }
    if (rc->nmaps && !rc->fixture_path) {
        snprintf(err, errlen, "--map %s=%s renames a fixture's tensor: give the file with --fixture PATH", rc->maps[0].from,
                 rc->maps[0].to);
        return -1;
    }
    if (cli_has_kernel_choice(o) && strcmp(o->backend, "cpu") == 0) {
        snprintf(err, errlen, "--%s needs a Metal backend (--backend sw or metal), not cpu", o->shader ? "shader" : "stage");
        return -1;
    }
    return 0;
}

/* DIR/OP-B1_T4096_....gputrace: where --capture records a case. */
static void capture_path(const char *dir, const op_desc *op, const int64_t *dim, char *out, size_t n) {
    size_t off = (size_t)snprintf(out, n, "%s/%s-", dir, op->name);
    for (int i = 0; i < op->ndims && off < n; i++)
        off += (size_t)snprintf(out + off, n - off, "%s%s%lld", i ? "_" : "", op->dims[i].name, (long long)dim[i]);
    if (off < n) snprintf(out + off, n - off, ".gputrace");
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
static int expand_cases(const op_desc *op, const run_cli *rc, int64_t (*out)[OP_MAX_DIMS], int max, char *err,
                        size_t errlen) {
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
        for (int i = op->ndims - 1; i >= 0; i--) {
            out[k][i] = rc->dims[i].v[r % rc->dims[i].n];
            r /= rc->dims[i].n;
        }
    }
    return (int)total;
}

int cmd_run(const op_desc *op, int argc, char **argv) {
    char err[512] = "";
    run_cli *rc = calloc(1, sizeof *rc);
    fixture_plan *plan = calloc(1, sizeof *plan);
    rec_fixture *notes = calloc(1, sizeof *notes);
    int64_t(*shapes)[OP_MAX_DIMS] = calloc(MAX_CASES, sizeof *shapes);
    run_record *recs = NULL;
    run_record **rec_ptrs = NULL;
    backend *b = NULL;
    fixture *fx = NULL;
    int status = EXIT_BAD_INPUT, ncases = 0, nrec = 0;
    if (!rc || !shapes || !plan || !notes) {
        fprintf(stderr, "gdnbench: out of memory\n");
        goto done;
    }
    int p = parse_run_args(op, argc, argv, rc, err, sizeof err);
    if (p == 1) {
        status = EXIT_OK;
        goto done;
    }
    if (p < 0) goto bad;
    if (rc->fixture_path) {
        fx = fixture_open(rc->fixture_path, err, sizeof err);
        if (!fx) goto bad;
        if (fixture_plan_make(fx, op, rc->maps, rc->nmaps, plan, err, sizeof err) != 0) goto bad;
        for (int i = 0; i < op->ndims; i++) {
            if (plan->dim_source[i] == FIXDIM_NONE) continue;
            if (rc->dim_given[i] && (rc->dims[i].n != 1 || rc->dims[i].v[0] != plan->dim[i])) {
                snprintf(err, sizeof err, "--%s contradicts the fixture %s, which has %s=%lld (%s %s): drop the flag",
                         op->dims[i].name, rc->fixture_path, op->dims[i].name, (long long)plan->dim[i],
                         plan->dim_source[i] == FIXDIM_META ? "its parameter" : "from tensor", plan->dim_from[i]);
                goto bad;
            }
            rc->dims[i].n = 1;
            rc->dims[i].v[0] = plan->dim[i];
        }
    }
    ncases = expand_cases(op, rc, shapes, MAX_CASES, err, sizeof err);
    if (ncases < 0) goto bad;
    if (fx && ncases != 1) {
        snprintf(err, sizeof err, "--fixture runs one shape: give single values, not lists, for the dimensions");
        goto bad;
    }
    /* Every shape is validated before anything runs: a bad one in a list is exit 2. */
    for (int k = 0; k < ncases; k++) {
        for (int i = 0; i < op->ndims; i++) {
            if (shapes[k][i] < op->dims[i].min || shapes[k][i] > op->dims[i].max) {
                snprintf(err, sizeof err, "--%s %lld is out of range for %s: accepted %lld..%lld", op->dims[i].name,
                         (long long)shapes[k][i], op->name, (long long)op->dims[i].min, (long long)op->dims[i].max);
                goto bad;
            }
        }
        if (op->validate && op->validate(shapes[k], err, sizeof err)) goto bad;
    }
    /* Metal reads this when the device is created. */
    if (rc->capture_dir) setenv("MTL_CAPTURE_ENABLED", "1", 1);
    b = backend_open(rc->opts.backend, &rc->opts, err, sizeof err);
    if (!b) goto bad;
    if (rc->capture_dir) {
        if (mkdir(rc->capture_dir, 0777) != 0 && errno != EEXIST) {
            snprintf(err, sizeof err, "--capture %s: cannot create the directory: %s", rc->capture_dir, strerror(errno));
            goto bad;
        }
        /* Metal refuses to overwrite a trace: say so before anything runs. */
        for (int k = 0; k < ncases; k++) {
            char path[4096];
            struct stat st;
            capture_path(rc->capture_dir, op, shapes[k], path, sizeof path);
            if (stat(path, &st) == 0) {
                snprintf(err, sizeof err, "--capture: %.300s already exists: remove it or capture into another "
                                          "directory", path);
                goto bad;
            }
        }
    }
    /* The kernel choice of every shape is checked before anything runs. */
    if (cli_has_kernel_choice(&rc->opts)) {
        const op_desc **ops = malloc(sizeof *ops * (size_t)ncases);
        if (!ops) {
            snprintf(err, sizeof err, "out of memory");
            goto bad;
        }
        for (int k = 0; k < ncases; k++) ops[k] = op;
        int bad_choice = cli_check_kernel_choice(b, ops, (const int64_t(*)[OP_MAX_DIMS])shapes, ncases, &rc->opts, 1,
                                                 err, sizeof err);
        free(ops);
        if (bad_choice) goto bad;
    }
    recs = calloc((size_t)ncases, sizeof *recs);
    rec_ptrs = calloc((size_t)ncases, sizeof *rec_ptrs);
    if (!recs || !rec_ptrs) {
        snprintf(err, sizeof err, "out of memory");
        goto bad;
    }
    int any_fail = 0, any_error = 0;
    for (int k = 0; k < ncases; k++) {
        op_case *c = op_case_new(op, shapes[k], rc->opts.seed, err, sizeof err);
        if (c && fx) {
            fixture_plan_notes(fx, plan, op, shapes[k], notes);
            if (fixture_bind_inputs(fx, plan, c, notes, err, sizeof err) != 0) {
                op_case_free(c);
                goto bad;
            }
        }
        /* After the fixture is bound: a file that cannot be used prints nothing. */
        if (k == 0 && !rc->opts.quiet) {
            char runs[256];
            cli_sampling_desc(&rc->opts, runs, sizeof runs);
            table_print_header(stdout, op, b->name, b->device_name, b->emulated, runs, (unsigned long long)rc->opts.seed);
            rec_machine now;
            machine_sample(&now, b);
            table_print_machine(stdout, &now);
        }
        if (c && fx && !rc->opts.quiet) print_fixture_notes(stdout, op, fx, plan, notes, shapes[k], rc->dim_given);
        run_record *r = &recs[nrec];
        rec_ptrs[nrec++] = r;
        if (!c) {
            memset(r, 0, sizeof *r);
            r->op = op;
            memcpy(r->dim, shapes[k], sizeof r->dim);
            snprintf(r->status, sizeof r->status, "error");
            snprintf(r->error, sizeof r->error, "%s", err);
            snprintf(r->device.backend, sizeof r->device.backend, "%s", b->name);
            any_error = 1;
        } else {
            char trace[4096];
            if (rc->capture_dir) {
                capture_path(rc->capture_dir, op, shapes[k], trace, sizeof trace);
                rc->opts.capture_path = trace;
            }
            if (runner_run_case(b, c, &rc->opts, r) != 0) any_error = 1;
            rc->opts.capture_path = NULL;
            if (rc->capture_dir && strcmp(r->status, "error") != 0 && !rc->opts.quiet)
                printf("GPU capture of the first timed iteration: %s (open it in Xcode; that iteration's time "
                       "includes the capture)\n", trace);
            if (fx) r->fixture = *notes;
            if (fx && strcmp(r->status, "error") != 0 &&
                !fixture_check_outputs(fx, plan, c, rc->opts.has_atol, rc->opts.atol, rc->opts.has_rtol, rc->opts.rtol,
                                       r))
                snprintf(r->status, sizeof r->status, "fail");
            if (b->release_case) b->release_case(b);
            if (rc->dump_dir && strcmp(r->status, "error") != 0) {
                char path[4096];
                if (dump_case(rc->dump_dir, c, path, sizeof path, err, sizeof err) != 0) {
                    op_case_free(c);
                    goto bad;
                }
                if (!rc->opts.quiet) printf("dumped %s\n", path);
            }
            op_case_free(c);
        }
        if (strcmp(r->status, "fail") == 0) any_fail = 1;
        if (!rc->opts.quiet) {
            table_print_record(stdout, r);
            table_print_findings(stdout, r, run_max_findings(&rc->opts));
        }
        if (strcmp(r->status, "error") == 0) fprintf(stderr, "gdnbench: %s: %s\n", op->name, r->error);
        fflush(stdout);
    }
    if (rc->json_path) {
        int gbench = rc->format && strcmp(rc->format, "gbench") == 0;
        if ((gbench ? report_gbench_write : report_write)(rc->json_path, rec_ptrs, nrec, err, sizeof err) != 0) goto bad;
    }
    status = any_error ? EXIT_BAD_INPUT : any_fail ? EXIT_CHECK_FAILED : EXIT_OK;
    goto done;
bad:
    fprintf(stderr, "gdnbench: %s\n", err);
    status = EXIT_BAD_INPUT;
done:
    for (int i = 0; i < nrec; i++) run_record_free(&recs[i]);
    free(recs);
    free(rec_ptrs);
    if (b) b->destroy(b);
    fixture_free(fx);
    free(shapes);
    free(plan);
    free(notes);
    free(rc);
    return status;
}
