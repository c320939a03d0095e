/* cmd_suite.c — `gdnbench suite NAME`: a named, versioned set of cases.
 *
 * Suites are data (the table below): each case is an op and dimension overrides on
 * top of the op's defaults.  The version is bumped whenever a suite's cases change,
 * so `compare` never pairs results of different case sets by accident.  A case may
 * carry a smaller size for the software device (sw_dims) or run only on a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/kernel_opts.h"
#include "cli/sampling_opts.h"
#include "cli/stage_opts.h"
#include "cli/table.h"
#include "report/junit.h"
#include "report/report_json.h"
#include "runner/driver.h"
#include "runner/machine.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"

typedef struct suite_case {
    const char *op;
    const char *dims;    /* "T=512 Hg=16 H=32" */
    /* On an emulated device (the software Metal device runs kernels thousands of
     * times slower than a GPU): sw_dims, when set, overrides dims with a size it
     * finishes in seconds; gpu_only cases are left out there. */
    const char *sw_dims;
    int gpu_only;
} suite_case;

typedef struct suite {
    const char *name;
    int version;
    const char *summary;
    const suite_case *cases;
} suite;

static const suite_case qwen35_cases[] = {
    {"chunk_fwd", "B=1 T=512 Hg=16 H=32 K=128 V=128", NULL, 0},
    {"chunk_fwd", "B=1 T=2048 Hg=16 H=32 K=128 V=128", NULL, 1},
    {"chunk_fwd", "B=1 T=4096 Hg=16 H=32 K=128 V=128", NULL, 1},
    {"chunk_fwd", "B=1 T=16384 Hg=16 H=32 K=128 V=128", NULL, 1},
    {"decode", "B=1 Hg=16 H=32 K=128 V=128", NULL, 0},
    {"prep_step", "B=1 Hk=16 Hv=32 Dk=128 Dv=128", NULL, 0},
    {"prep_step", "B=8 Hk=16 Hv=32 Dk=128 Dv=128", NULL, 0},
    {"decode_seq", "B=1 Hk=16 Hv=32 Dk=128 Dv=128 N=16", NULL, 0},
    {"decode_seq_steps", "B=1 Hk=16 Hv=32 Dk=128 Dv=128 N=16", NULL, 0},
    {NULL, NULL, NULL, 0},
};

/* Full-attention layers of Qwen3.5/3.6-class models (Hq=16, Hkv=2, D=256): prefill,
 * chunked prefill and decode against a 4096-token cache, training backward; plus a
 * D=64 MHA pair for comparison with other kernels. */
static const suite_case attn_cases[] = {
    {"attn_fwd", "B=1 Hq=16 Hkv=2 qL=512 kL=512 D=256 causal=1", NULL, 0},
    {"attn_fwd", "B=1 Hq=16 Hkv=2 qL=2048 kL=2048 D=256 causal=1", NULL, 0},
    {"attn_fwd", "B=1 Hq=16 Hkv=2 qL=4096 kL=4096 D=256 causal=1", NULL, 0},
    {"attn_fwd", "B=1 Hq=16 Hkv=2 qL=128 kL=4096 D=256 causal=1", NULL, 0},
    {"attn_fwd", "B=1 Hq=16 Hkv=2 qL=1 kL=4096 D=256 causal=1", NULL, 0},
    {"attn_bwd", "B=1 Hq=16 Hkv=2 qL=512 kL=512 D=256 causal=1", NULL, 0},
    {"attn_bwd", "B=1 Hq=16 Hkv=2 qL=2048 kL=2048 D=256 causal=1", NULL, 0},
    {"attn_fwd", "B=1 Hq=8 Hkv=8 qL=1024 kL=1024 D=64 causal=0", NULL, 0},
    {"attn_bwd", "B=1 Hq=8 Hkv=8 qL=1024 kL=1024 D=64 causal=0", NULL, 0},
    {NULL, NULL, NULL, 0},
};

static const suite_case smoke_cases[] = {
    {"cumsum", "B=1 T=100 H=4", NULL, 0},
    {"kkt", "B=1 T=100 Hg=2 H=4 K=64", NULL, 0},
    {"solve_tril", "B=1 T=100 Hg=2 H=4 K=64", NULL, 0},
    {"wy", "B=1 T=100 Hg=2 H=4 K=64 V=64", NULL, 0},
    {"chunk_h", "B=1 T=100 Hg=2 H=4 K=64 V=64", NULL, 0},
    {"chunk_o", "B=1 T=100 Hg=2 H=4 K=64 V=64", NULL, 0},
    {"chunk_fwd", "B=1 T=100 Hg=2 H=4 K=64 V=64", NULL, 0},
    {"recurrent", "B=1 T=100 Hg=2 H=4 K=64 V=64", NULL, 0},
    {"decode", "B=1 Hg=2 H=4 K=64 V=64", NULL, 0},
    {NULL, NULL, NULL, 0},
};

/* What a Metal kernel author wants to know about a chip (README "Measuring your
 * chip"); sizes are for a real GPU, sw_dims keep the software device in seconds. */
static const suite_case micro_cases[] = {
    {"micro.dispatch", "N=1 percb=0", NULL, 0},
    {"micro.dispatch", "N=10 percb=0", NULL, 0},
    {"micro.dispatch", "N=100 percb=0", NULL, 0},
    {"micro.dispatch", "N=1000 percb=0", NULL, 0},
    {"micro.dispatch", "N=1 percb=1", NULL, 0},
    {"micro.dispatch", "N=10 percb=1", NULL, 0},
    {"micro.dispatch", "N=100 percb=1", NULL, 0},
    {"micro.dispatch", "N=1000 percb=1", NULL, 0},
    {"micro.copy", "MB=1 vec=1 storage=0", NULL, 0},
    {"micro.copy", "MB=1 vec=4 storage=0", NULL, 0},
    {"micro.copy", "MB=64 vec=1 storage=0", "MB=2", 0},
    {"micro.copy", "MB=64 vec=4 storage=0", "MB=2", 0},
    {"micro.copy", "MB=64 vec=4 storage=1", "MB=2", 0},
    {"micro.copy", "MB=1024 vec=1 storage=0", "MB=4", 0},
    {"micro.copy", "MB=1024 vec=4 storage=0", "MB=4", 0},
    {"micro.copy", "MB=1024 vec=4 storage=1", "MB=4", 0},
    {"micro.reduce", "N=16384 mode=0 items=4", "N=256", 0},
    {"micro.reduce", "N=16384 mode=1 items=4", "N=256", 0},
    {"micro.reduce", "N=16384 mode=2 items=4", "N=256", 0},
    {"micro.alu", "type=0 mma=0 groups=4096 steps=240", "groups=2", 0},
    {"micro.alu", "type=1 mma=0 groups=4096 steps=240", "groups=2", 0},
    {"micro.alu", "type=2 mma=0 groups=4096 steps=240", "groups=2", 0},
    {"micro.alu", "type=0 mma=1 groups=1024 steps=240", "groups=1 steps=16", 0},
    {"micro.alu", "type=1 mma=1 groups=1024 steps=240", "groups=1 steps=16", 0},
    {"micro.alu", "type=2 mma=1 groups=1024 steps=240", "groups=1 steps=16", 0},
    {"micro.tgmem", "stride=1 groups=4096 rounds=4096", "groups=16 rounds=1024", 0},
    {"micro.tgmem", "stride=2 groups=4096 rounds=4096", "groups=16 rounds=1024", 0},
    {"micro.tgmem", "stride=32 groups=4096 rounds=4096", "groups=16 rounds=1024", 0},
    {"micro.tgmem", "stride=33 groups=4096 rounds=4096", "groups=16 rounds=1024", 0},
    {"micro.decode_ctx", "ctx=1024 mode=0 H=32 Hkv=8", "H=8", 0},
    {"micro.decode_ctx", "ctx=131072 mode=0 H=32 Hkv=8", "H=8", 0},
    {"micro.decode_ctx", "ctx=1024 mode=1 H=32 Hkv=8", "ctx=256 H=4 Hkv=1", 0},
    {"micro.decode_ctx", "ctx=4096 mode=1 H=32 Hkv=8", "ctx=1024 H=4 Hkv=1", 0},
    {"micro.decode_ctx", "ctx=16384 mode=1 H=32 Hkv=8", NULL, 1},
    {"micro.decode_ctx", "ctx=65536 mode=1 H=32 Hkv=8", NULL, 1},
    {"micro.decode_ctx", "ctx=131072 mode=1 H=32 Hkv=8", NULL, 1},
    {NULL, NULL, NULL, 0},
};

static const suite suites[] = {
    {"qwen35", 2, "GDN layers of Qwen3.5/3.6-class models: prefill T 512..16384 and decode, B=1 Hg=16 H=32 K=V=128",
     qwen35_cases},
    {"attn", 1, "full-attention layers (Hq=16 Hkv=2 D=256): prefill, decode vs a 4K cache, backward", attn_cases},
    {"smoke", 1, "every GDN op at a tiny shape with a tail chunk (seconds)", smoke_cases},
    {"micro", 1, "micro-benchmarks of the chip: dispatch, copy, reduce, alu, tgmem, decode_ctx (small sizes on sw)",
     micro_cases},
    {NULL, 0, NULL, NULL},
};

static void print_suites(FILE *f) {
    for (const suite *s = suites; s->name; s++) {
        int n = 0;
        while (s->cases[n].op) n++;
        fprintf(f, "  %-8s v%d, %2d cases: %s\n", s->name, s->version, n, s->summary);
    }
}

/* Applies "K=V ..." overrides to dim[] (already holding the defaults). */
static int apply_dims(const op_desc *op, const char *spec, int64_t *dim, char *err, size_t errlen) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        int d = op_dim_index(op, tok);
        if (d < 0) {
            snprintf(err, errlen, "suite case %s: op has no dimension %s", op->name, tok);
            return -1;
        }
        if (args_parse_int(tok, eq + 1, &dim[d], err, errlen)) return -1;
    }
    return 0;
}

/* The dims of a case: the op's defaults, the case's overrides, then on an emulated
 * device its sw_dims. */
static int case_dims(const op_desc *op, const suite_case *sc, int emulated, int64_t *dim, char *err, size_t errlen) {
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    if (apply_dims(op, sc->dims, dim, err, errlen)) return -1;
    if (emulated && sc->sw_dims && apply_dims(op, sc->sw_dims, dim, err, errlen)) return -1;
    return 0;
}

/* The options of a suite run. */
typedef struct suite_cli {
    run_opts o;
    const char *json_dir, *name;
    const char *junit_path;    /* --junit FILE */
} suite_cli;

static void print_help(void) {
    printf("usage: gdnbench suite NAME [--backend B] [--json DIR] [--junit FILE] [--iters N] [--warmup N] [--quiet]\n"
           "                          [--max-time S] [--max-noise P] [--min-samples N] [--fast-math]\n"
           "                          [--shader FILE] [--stage NAME=FILE[:FUNCTION]] [--constant ID=VALUE]\n"
           "                          [--sw-timeout SECONDS] [--counters]\n\n"
           "--shader FILE runs, in every case, the stages FILE defines under their default names (ours\n"
           "otherwise); --stage replaces one stage (e.g. kkt) wherever a case runs it.  Each case's table\n"
           "and JSON say which file and function every stage ran.  --sw-timeout is the software device's\n"
           "watchdog per dispatch (default %g s; 0 = never).  --counters counts every case exactly on the\n"
           "software device, --all-floors prints every chip's floor (see gdnbench run --help).\n\nsuites:\n",
           SWMTL_DEFAULT_TIMEOUT_S);
    print_suites(stdout);
}

/* argv[2..]: 0, 1 for --help (printed), -1 with err set. */
static int parse_args(int argc, char **argv, suite_cli *sc, char *err, size_t errlen) {
    run_opts *o = &sc->o;
    sampling_flags given = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int sopt;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help();
            return 1;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--fast-math") == 0) {
            o->fast_math = 1;
        } else if (strcmp(a, "--counters") == 0) {
            o->counters = 1;
        } else if (strcmp(a, "--all-floors") == 0) {
            o->all_floors = 1;
        } else if (a[0] != '-') {
            if (sc->name) {
                snprintf(err, errlen, "suite: one suite name at a time ('%s' and '%s')", sc->name, a);
                return -1;
            }
            sc->name = a;
        } else if (i + 1 >= argc) {
            snprintf(err, errlen, "%s needs a value", a);
            return -1;
        } else if (strcmp(a, "--json") == 0) {
            sc->json_dir = argv[++i];
        } else if (strcmp(a, "--junit") == 0) {
            sc->junit_path = argv[++i];
        } else if (strcmp(a, "--backend") == 0) {
            o->backend = argv[++i];
        } else if (strcmp(a, "--function") == 0) {
            snprintf(err, errlen, "--function names one kernel, but a suite runs several ops: choose a stage's kernel "
                                  "with --stage STAGE=FILE:%s", argv[i + 1]);
            return -1;
        } else if (strcmp(a, "--shader") == 0 || strcmp(a, "--stage") == 0 || strcmp(a, "--constant") == 0) {
            if (cli_parse_kernel_option(a + 2, argv[i + 1], o, err, errlen) < 0) return -1;
            i++;
        } else if (strncmp(a, "--", 2) == 0 && (sopt = cli_parse_sampling_option(a + 2, argv[i + 1], o, &given, err,
                                                                                   errlen)) != 0) {
            if (sopt < 0) return -1;
            i++;
        } else {
            snprintf(err, errlen, "suite: unknown option %s (see gdnbench suite --help)", a);
            return -1;
        }
    }
    return cli_finish_sampling(o, &given, err, errlen) ? -1 : 0;
}

static const suite *find_suite(const char *name) {
    for (const suite *x = suites; x->name && name; x++)
        if (strcmp(x->name, name) == 0) return x;
    char names[128] = "";
    for (const suite *x = suites; x->name; x++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", x->name);
    fprintf(stderr, "gdnbench: suite '%s' is unknown: use one of %s (gdnbench suite --help)\n", name ? name : "",
            names);
    return NULL;
}

/* One suite run: what the driver's hooks read and write. */
typedef struct suite_run {
    const suite *s;
    suite_cli *sc;
    backend *b;
    driver_case *cases;        /* the cases that run on this device, in order */
    int n, skipped;            /* skipped: GPU-only cases left out on an emulated device */
    run_record *recs;
    run_record **ptrs;
    int progress;              /* a progress line on stderr (a terminal, not --quiet) */
    double t0;                 /* seconds, for the progress line */
} suite_run;

/* Refusals that need no device: ops this build lacks, the --json directory, a
 * kernel choice on a backend without kernels. */
static int check_suite(const suite_run *sr, char *err, size_t errlen) {
    for (const suite_case *sc = sr->s->cases; sc->op; sc++) {
        if (!op_find(sc->op)) {
            snprintf(err, errlen, "suite %s needs op %s, which this build lacks", sr->s->name, sc->op);
            return -1;
        }
    }
    const char *dir = sr->sc->json_dir;
    if (dir && mkdir(dir, 0777) != 0 && access(dir, W_OK) != 0) {
        snprintf(err, errlen, "--json %s: cannot create or write the directory", dir);
        return -1;
    }
    const run_opts *o = &sr->sc->o;
    const backend_desc *kind = backend_desc_find(o->backend); /* NULL: backend_open says so */
    if (cli_has_kernel_choice(o) && kind && !(kind->caps & BACKEND_KERNELS)) {
        snprintf(err, errlen, "--%s needs a Metal backend (--backend sw or metal), not cpu",
                 o->shader ? "shader" : "stage");
        return -1;
    }
    return 0;
}

/* The cases on the opened device (the software device gets the cases' sw_dims and
 * leaves GPU-only ones out), their kernel choice checked. */
static int plan_cases(suite_run *sr, char *err, size_t errlen) {
    int emulated = backend_has(sr->b, BACKEND_EMULATED);
    for (const suite_case *sc = sr->s->cases; sc->op; sc++) {
        if (emulated && sc->gpu_only) {
            sr->skipped++;
            continue;
        }
        driver_case *dc = &sr->cases[sr->n++];
        dc->op = op_find(sc->op);
        if (case_dims(dc->op, sc, emulated, dc->dim, err, errlen)) return -1;
    }
    return cli_check_kernel_choice(sr->b, sr->cases, sr->n, &sr->sc->o, 0, err, errlen);
}

/* driver hook: the progress line, then the case's generated inputs. */
static op_case *make_case(void *user, int k, const driver_case *dc, char *err, size_t errlen, int *stop) {
    suite_run *sr = user;
    if (sr->progress) {
        char shape[256];
        table_shape_str(dc->op, dc->dim, shape, sizeof shape);
        fprintf(stderr, "\r[%d/%d] %s %s (%.0f s elapsed)   ", k + 1, sr->n, dc->op->name, shape,
                (clock_now_us() * 1e-6) - sr->t0);
    }
    return op_case_new(dc->op, dc->dim, sr->sc->o.seed, err, errlen);
}

/* driver hook: an error on stderr, the case's table row. */
static void print_case(void *user, int k, driver_outcome out) {
    suite_run *sr = user;
    const op_desc *op = sr->cases[k].op;
    const run_record *r = sr->ptrs[k];
    if (r->status == RUN_ERROR) {
        char shape[256];
        table_shape_str(op, sr->cases[k].dim, shape, sizeof shape);
        fprintf(stderr, "gdnbench: suite %s case %d/%d (%s %s): %s\n", sr->s->name, k + 1, sr->n, op->name, shape,
                r->error);
    }
    if (sr->sc->o.quiet) return;
    if (sr->progress) fprintf(stderr, "\r\033[K");
    printf("\n[%d/%d] %s", k + 1, sr->n, op->name);
    table_print_record(stdout, r);
    fflush(stdout);
}

/* Runs the cases, writes the report, prints the summary.  The exit status, or -1
 * with err set. */
static int run_suite(suite_run *sr, char *err, size_t errlen) {
    const run_opts *o = &sr->sc->o;
    err[0] = 0; /* each case's error is printed with it; the exit path prints only setup errors */
    if (!o->quiet) { /* once nothing can be refused any more: a refusal prints nothing on stdout */
        char runs[256];
        cli_sampling_desc(o, runs, sizeof runs);
        printf("suite %s on %s: %s\n", sr->s->name, sr->b->device_name, runs);
        rec_machine now;
        machine_sample(&now, sr->b);
        table_print_machine(stdout, &now);
    }
    sr->progress = !o->quiet && isatty(2);
    sr->t0 = clock_now_us() * 1e-6;
    driver_plan plan = {sr->b, o, sr->cases, sr->n, sr->ptrs, 0};
    driver_hooks hooks = {.user = sr, .make_case = make_case, .print = print_case};
    driver_tally tally;
    int nrec = driver_run(&plan, &hooks, &tally, err, errlen);
    if (sr->progress) fprintf(stderr, "\r\033[K");
    if (sr->sc->json_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/suite-%s-v%d-%s.json", sr->sc->json_dir, sr->s->name, sr->s->version,
                 sr->b->desc->name);
        if (report_write(path, sr->ptrs, nrec, err, errlen) != 0) return -1;
        if (!o->quiet) printf("\nwrote %s\n", path);
    }
    if (sr->sc->junit_path) {
        char name[96];
        snprintf(name, sizeof name, "gdnbench suite %s", sr->s->name);
        if (junit_write_records(sr->sc->junit_path, name, sr->ptrs, nrec, err, errlen) != 0) return -1;
    }
    run_status verdict = driver_verdict(&tally);
    table_print_checks_hint(stderr, sr->b, o, NULL, tally.nfail);
    if (!o->quiet) {
        printf("\nsuite %s v%d: %d cases, %s\n", sr->s->name, sr->s->version, sr->n,
               verdict == RUN_ERROR ? "some could not run" : verdict == RUN_FAIL ? "some checks FAILED" : "all passed");
        if (backend_has(sr->b, BACKEND_EMULATED))
            printf("emulated device: small sizes, timings of the software device (not of a GPU); %d GPU-only "
                   "case%s left out\n", sr->skipped, sr->skipped == 1 ? "" : "s");
    }
    return cli_exit_status(verdict);
}

int cmd_suite(int argc, char **argv) {
    char err[512] = "";
    suite_cli sc = {.o = {.backend = backend_default_name(), .check = CHECK_BOTH}};
    int p = parse_args(argc, argv, &sc, err, sizeof err);
    if (p != 0) {
        if (p < 0) fprintf(stderr, "gdnbench: %s\n", err);
        return p < 0 ? EXIT_BAD_INPUT : EXIT_OK;
    }
    suite_run sr = {.s = find_suite(sc.name), .sc = &sc};
    if (!sr.s) return EXIT_BAD_INPUT;
    int ncases = 0, status = EXIT_BAD_INPUT;
    while (sr.s->cases[ncases].op) ncases++;
    sr.cases = calloc((size_t)ncases, sizeof *sr.cases);
    sr.recs = calloc((size_t)ncases, sizeof *sr.recs);
    sr.ptrs = calloc((size_t)ncases, sizeof *sr.ptrs);
    if (!sr.cases || !sr.recs || !sr.ptrs) snprintf(err, sizeof err, "out of memory");
    for (int k = 0; sr.ptrs && k < ncases; k++) sr.ptrs[k] = &sr.recs[k];
    if (!err[0] && check_suite(&sr, err, sizeof err) == 0 &&
        (sr.b = backend_open(sc.o.backend, &sc.o, err, sizeof err)) && plan_cases(&sr, err, sizeof err) == 0)
        status = run_suite(&sr, err, sizeof err);
    if (status < 0 || (status == EXIT_BAD_INPUT && err[0])) fprintf(stderr, "gdnbench: %s\n", err);
    if (status < 0) status = EXIT_BAD_INPUT;
    for (int i = 0; sr.recs && i < ncases; i++) run_record_free(&sr.recs[i]);
    if (sr.b) sr.b->destroy(sr.b);
    free(sr.cases);
    free(sr.recs);
    free(sr.ptrs);
    return status;
}
