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
#include "io/report_json.h"
#include "runner/machine.h"
#include "runner/runner.h"

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

int cmd_suite(int argc, char **argv) {
    char err[512] = "";
    const char *json_dir = NULL, *name = NULL;
    run_opts o = {.backend = backend_default_name(), .check = CHECK_BOTH};
    sampling_flags given = {0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int sopt;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: gdnbench suite NAME [--backend B] [--json DIR] [--iters N] [--warmup N] [--quiet]\n"
                   "                          [--max-time S] [--max-noise P] [--min-samples N] [--fast-math]\n"
                   "                          [--shader FILE] [--stage NAME=FILE[:FUNCTION]] [--constant ID=VALUE]\n\n"
                   "--shader FILE runs, in every case, the stages FILE defines under their default names (ours\n"
                   "otherwise); --stage replaces one stage (e.g. kkt) wherever a case runs it.  Each case's table\n"
                   "and JSON say which file and function every stage ran.\n\nsuites:\n");
            print_suites(stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--quiet") == 0) {
            o.quiet = 1;
        } else if (strcmp(a, "--fast-math") == 0) {
            o.fast_math = 1;
        } else if (a[0] != '-') {
            if (name) {
                snprintf(err, sizeof err, "suite: one suite name at a time ('%s' and '%s')", name, a);
                goto bad;
            }
            name = a;
        } else if (i + 1 >= argc) {
            snprintf(err, sizeof err, "%s needs a value", a);
            goto bad;
        } else if (strcmp(a, "--json") == 0) {
            json_dir = argv[++i];
        } else if (strcmp(a, "--backend") == 0) {
            o.backend = argv[++i];
        } else if (strcmp(a, "--function") == 0) {
            snprintf(err, sizeof err, "--function names one kernel, but a suite runs several ops: choose a stage's kernel "
                                      "with --stage STAGE=FILE:%s", argv[i + 1]);
            goto bad;
        } else if (strcmp(a, "--shader") == 0 || strcmp(a, "--stage") == 0 || strcmp(a, "--constant") == 0) {
            if (cli_parse_kernel_option(a + 2, argv[i + 1], &o, err, sizeof err) < 0) goto bad;
            i++;
        } else if (strncmp(a, "--", 2) == 0 &&
                   (sopt = cli_parse_sampling_option(a + 2, argv[i + 1], &o, &given, err, sizeof err)) != 0) {
            if (sopt < 0) goto bad;
            i++;
        } else {
            snprintf(err, sizeof err, "suite: unknown option %s (see gdnbench suite --help)", a);
            goto bad;
        }
    }
    if (cli_finish_sampling(&o, &given, err, sizeof err)) goto bad;
    const suite *s = NULL;
    for (const suite *x = suites; x->name && name; x++)
        if (strcmp(x->name, name) == 0) s = x;
    if (!s) {
        char names[128] = "";
        for (const suite *x = suites; x->name; x++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", x->name);
        fprintf(stderr, "gdnbench: suite '%s' is unknown: use one of %s (gdnbench suite --help)\n", name ? name : "",
                names);
        return EXIT_BAD_INPUT;
    }
    int ncases = 0;
    while (s->cases[ncases].op) ncases++;
    int64_t(*dims)[OP_MAX_DIMS] = calloc((size_t)ncases, sizeof *dims);
    const suite_case **run_cases = calloc((size_t)ncases, sizeof *run_cases);
    run_record *recs = calloc((size_t)ncases, sizeof *recs);
    run_record **ptrs = calloc((size_t)ncases, sizeof *ptrs);
    backend *b = NULL;
    int status = EXIT_BAD_INPUT, nrec = 0, any_fail = 0, any_error = 0, n = 0, skipped = 0;
    if (!dims || !run_cases || !recs || !ptrs) {
        snprintf(err, sizeof err, "out of memory");
        goto out;
    }
    for (int k = 0; k < ncases; k++) {
        if (!op_find(s->cases[k].op)) {
            snprintf(err, sizeof err, "suite %s needs op %s, which this build lacks", s->name, s->cases[k].op);
            goto out;
        }
    }
    if (json_dir && mkdir(json_dir, 0777) != 0 && access(json_dir, W_OK) != 0) {
        snprintf(err, sizeof err, "--json %s: cannot create or write the directory", json_dir);
        goto out;
    }
    const backend_desc *kind = backend_desc_find(o.backend); /* NULL: backend_open says so */
    if (cli_has_kernel_choice(&o) && kind && !(kind->caps & BACKEND_KERNELS)) {
        snprintf(err, sizeof err, "--%s needs a Metal backend (--backend sw or metal), not cpu", o.shader ? "shader" : "stage");
        goto out;
    }
    b = backend_open(o.backend, &o, err, sizeof err);
    if (!b) goto out;
    /* Sizes depend on the device: the software device gets the cases' sw_dims. */
    for (int k = 0; k < ncases; k++) {
        if (backend_has(b, BACKEND_EMULATED) && s->cases[k].gpu_only) {
            skipped++;
            continue;
        }
        if (case_dims(op_find(s->cases[k].op), &s->cases[k], backend_has(b, BACKEND_EMULATED), dims[n], err, sizeof err)) goto out;
        run_cases[n++] = &s->cases[k];
    }
    if (cli_has_kernel_choice(&o)) {
        const op_desc **ops = malloc(sizeof *ops * (size_t)(n ? n : 1));
        if (!ops) {
            snprintf(err, sizeof err, "out of memory");
            goto out;
        }
        for (int k = 0; k < n; k++) ops[k] = op_find(run_cases[k]->op);
        int bad_choice = cli_check_kernel_choice(b, ops, (const int64_t(*)[OP_MAX_DIMS])dims, n, &o, 0, err, sizeof err);
        free(ops);
        if (bad_choice) goto out;
    }
    /* Printed once nothing can be refused any more: a refusal prints nothing on stdout. */
    if (!o.quiet) {
        char runs[256];
        cli_sampling_desc(&o, runs, sizeof runs);
        printf("suite %s on %s: %s\n", s->name, b->device_name, runs);
        rec_machine now;
        machine_sample(&now, b);
        table_print_machine(stdout, &now);
    }
    int progress = !o.quiet && isatty(2);
    double t0 = (clock_now_us() * 1e-6);
    for (int k = 0; k < n; k++) {
        const op_desc *op = op_find(run_cases[k]->op);
        char shape[256];
        table_shape_str(op, dims[k], shape, sizeof shape);
        if (progress) fprintf(stderr, "\r[%d/%d] %s %s (%.0f s elapsed)   ", k + 1, n, op->name, shape, (clock_now_us() * 1e-6) - t0);
        run_record *r = &recs[nrec];
        ptrs[nrec++] = r;
        op_case *c = op_case_new(op, dims[k], o.seed, err, sizeof err);
        if (!c) {
            r->op = op;
            memcpy(r->dim, dims[k], sizeof r->dim);
            r->status = RUN_ERROR;
            snprintf(r->error, sizeof r->error, "%s", err);
            snprintf(r->device.backend, sizeof r->device.backend, "%s", b->desc->name);
        } else {
            runner_run_case(b, c, &o, r);
            if (b->release_case) b->release_case(b);
            op_case_free(c);
        }
        any_fail |= r->status == RUN_FAIL;
        if (r->status == RUN_ERROR) {
            any_error = 1;
            fprintf(stderr, "gdnbench: suite %s case %d/%d (%s %s): %s\n", s->name, k + 1, n, op->name, shape, r->error);
        }
        err[0] = 0; /* reported above; the exit path prints only setup errors */
        if (!o.quiet) {
            if (progress) fprintf(stderr, "\r\033[K");
            printf("\n[%d/%d] %s", k + 1, n, op->name);
            table_print_record(stdout, r);
            fflush(stdout);
        }
    }
    if (progress) fprintf(stderr, "\r\033[K");
    if (json_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/suite-%s-v%d-%s.json", json_dir, s->name, s->version, b->desc->name);
        if (report_write(path, ptrs, nrec, err, sizeof err) != 0) goto out;
        if (!o.quiet) printf("\nwrote %s\n", path);
    }
    if (!o.quiet) {
        printf("\nsuite %s v%d: %d cases, %s\n", s->name, s->version, n,
               any_error ? "some could not run" : any_fail ? "some checks FAILED" : "all passed");
        if (backend_has(b, BACKEND_EMULATED))
            printf("emulated device: small sizes, timings of the software device (not of a GPU); %d GPU-only "
                   "case%s left out\n", skipped, skipped == 1 ? "" : "s");
    }
    status = any_error ? EXIT_BAD_INPUT : any_fail ? EXIT_CHECK_FAILED : EXIT_OK;
out:
    if (status == EXIT_BAD_INPUT && err[0]) fprintf(stderr, "gdnbench: %s\n", err);
    for (int i = 0; i < nrec; i++) run_record_free(&recs[i]);
    if (b) b->destroy(b);
    free(dims);
    free(run_cases);
    free(recs);
    free(ptrs);
    return status;
bad:
    fprintf(stderr, "gdnbench: %s\n", err);
    return EXIT_BAD_INPUT;
}
