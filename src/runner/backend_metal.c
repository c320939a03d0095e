/* backend_metal.c — the `metal` and `sw` backends: run an op's kernels through Metal.
 *
 * One code path for both: src/metal/mtl.c talks to a real GPU (macOS) or to the
 * software Metal device.  Per case: every tensor of the op gets a shared buffer,
 * inputs are uploaded once, outputs and scratch buffers are poisoned before every
 * run, all stages go into one command buffer (total time from GPUStartTime/
 * GPUEndTime).  A multi-stage op's per-stage times come from the same submission:
 * each stage is a compute pass whose start and end sample the device's timestamp
 * counters (mtl_run_timed) — on Apple GPUs and on the software device.  A device
 * without counter sampling at stage boundaries, or a run whose samples are
 * unusable, falls back to running each stage again in a command buffer of its own
 * (GPUStartTime/GPUEndTime per stage), and the report says which it was.
 * A stage may ask for several dispatches (op_launch.repeat), each in a command buffer
 * of its own if it says so, and a buffer may ask for private storage
 * (op_case.private_bufs): it is then filled and read back through blits. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/embedded.h"
#include "core/sha256.h"
#include "core/strutil.h"
#include "metal/mtl.h"
#include "runner/backend.h"
#include "runner/backend_device.h"
#include "runner/check.h"
#include "runner/kernel_choice.h"
#include "runner/runner.h"
#include "runner/shader_source.h"
#include "msl/msl_include.h"
#include "swmetal/swmetal.h"

#define MAX_LIBS 8
#define MAX_PIPES 32

typedef struct lib_entry {
    char path[PATH_MAX];
    char display[PATH_MAX];
    char sha256[65];
    mtl_library *lib;
} lib_entry;

typedef struct pipe_entry {
    char path[PATH_MAX];
    char function[128];
    char constants[256]; /* "200=true,301=false": one pipeline per constant set */
    mtl_pipeline *pipe;
} pipe_entry;

typedef struct metal_state {
    mtl_device *dev;                   /* the backend's device (b->device) */
    const run_opts *opts;
    lib_entry libs[MAX_LIBS];
    int nlibs;
    pipe_entry pipes[MAX_PIPES];
    int npipes;
    /* per case */
    mtl_buffer *bufs[OP_MAX_BUFS];
    int nstages;
    op_launch launch[OP_MAX_STAGES];
    stage_kernel kern[OP_MAX_STAGES];  /* which file and function each dispatch runs */
    int any_theirs;                    /* some dispatch runs a user's kernel */
    int main_stage;                    /* dispatch the record's `kernel` describes */
    mtl_pipeline *stage_pipe[OP_MAX_STAGES];
    tensor *poison[OP_MAX_BUFS];
    tensor *inout_start[OP_MAX_BUFS]; /* a BUF_INOUT tensor's original input */
    int counters_failed;          /* this case's counter samples were unusable once */
    char counters_why[200];       /* why stage times are not from counters */
} metal_state;

static lib_entry *find_library(metal_state *s, const char *path) {
    for (int i = 0; i < s->nlibs; i++)
        if (strcmp(s->libs[i].path, path) == 0) return &s->libs[i];
    return NULL;
}

/* path is a kernel file the user named (--shader FILE, --stage NAME=FILE). */
static int is_users_file(const run_opts *o, const char *path) {
    if (o->shader && strcmp(path, o->shader) == 0) return 1;
    for (int i = 0; i < o->nstage_choices; i++)
        if (strcmp(path, o->stage_choices[i].file) == 0) return 1;
    return 0;
}

static mtl_library *get_library(metal_state *s, const char *path, char *err, size_t errlen) {
    lib_entry *known = find_library(s, path);
    if (known) return known->lib;
    if (s->nlibs >= MAX_LIBS) {
        snprintf(err, errlen, "too many shader files in one run (max %d)", MAX_LIBS);
        return NULL;
    }
    shader_source src;
    if (shader_source_load(path, &src, err, errlen) != 0) return NULL;
    /* --include/--define belong to the user's files (--shader, --stage), not to our own shaders */
    const msl_source_opts *so = is_users_file(s->opts, path) ? &s->opts->source : NULL;
    mtl_library *lib = mtl_library_new(s->dev, src.text, src.display_path, so, s->opts->fast_math, err, errlen);
    lib_entry *e = &s->libs[s->nlibs];
    snprintf(e->path, sizeof e->path, "%s", path);
    str_copy(e->display, sizeof e->display, src.display_path);
    if (src.embedded) strncat(e->display, " (embedded)", sizeof e->display - strlen(e->display) - 1);
    /* the kernel is the file and the headers it includes: hash them all */
    if (!lib || msl_source_sha256(src.text, src.display_path, so, e->sha256, err, errlen) != 0) {
        shader_source_free(&src);
        mtl_library_free(lib);
        return NULL;
    }
    shader_source_free(&src);
    e->lib = lib;
    s->nlibs++;
    return lib;
}

/* kernel_lookup_fn over the libraries of this backend: compiles FILE once. */
static int metal_lookup(void *ctx, const char *path, const char *function, char *names, size_t nameslen, char *err,
                        size_t errlen) {
    metal_state *s = ctx;
    if (!get_library(s, path, err, errlen)) return -1;
    const mtl_library *lib = find_library(s, path)->lib;
    if (mtl_library_has_function(lib, function)) return 1;
    if (names && nameslen) {
        size_t off = 0;
        char name[256];
        names[0] = 0;
        for (int i = 0; i < mtl_library_function_count(lib) && off + 1 < nameslen; i++) {
            if (mtl_library_function_name(lib, i, name, sizeof name) != 0) continue;
            int w = snprintf(names + off, nameslen - off, "%s%s", off ? ", " : "", name);
            if (w < 0 || (size_t)w >= nameslen - off) break;
            off += (size_t)w;
        }
    }
    return 0;
}

/* Fills the backend's view of a resolved kernel: display path and hash of its file. */
static void describe_file(metal_state *s, stage_kernel *k) {
    lib_entry *e = find_library(s, k->path);
    str_copy(k->display, sizeof k->display, e ? e->display : k->path);
    str_copy(k->sha256, sizeof k->sha256, e ? e->sha256 : "");
}

/* The launch's own function constants (e.g. attention's align_Q/do_causal), with
 * --constant flags overriding entries of the same index when they apply to this
 * dispatch (kernel_choice.h: to the user's kernels, or to ours when all are ours). */
static int launch_constants(const metal_state *s, const op_launch *l, int user_constants, mtl_constant *consts) {
    int n = 0;
    for (int i = 0; i < l->nconstants && n < RUN_MAX_CONSTANTS; i++, n++) {
        consts[n].index = l->constants[i].index;
        snprintf(consts[n].value, sizeof consts[n].value, "%s", l->constants[i].value);
    }
    for (int i = 0; user_constants && i < s->opts->nconstants; i++) {
        int k = 0;
        while (k < n && consts[k].index != s->opts->constants[i].index) k++;
        if (k == n && n == RUN_MAX_CONSTANTS) break;
        if (k == n) n++;
        consts[k].index = s->opts->constants[i].index;
        snprintf(consts[k].value, sizeof consts[k].value, "%s", s->opts->constants[i].value);
    }
    return n;
}

static mtl_pipeline *get_pipeline(metal_state *s, const char *path, const char *function, const op_launch *l,
                                  int user_constants, char *err, size_t errlen) {
    mtl_constant consts[RUN_MAX_CONSTANTS];
    int nconsts = launch_constants(s, l, user_constants, consts);
    char key[256] = "";
    for (int i = 0; i < nconsts; i++) {
        size_t used = strlen(key);
        snprintf(key + used, sizeof key - used, "%d=%s,", consts[i].index, consts[i].value);
    }
    for (int i = 0; i < s->npipes; i++)
        if (strcmp(s->pipes[i].path, path) == 0 && strcmp(s->pipes[i].function, function) == 0 &&
            strcmp(s->pipes[i].constants, key) == 0)
            return s->pipes[i].pipe;
    if (s->npipes >= MAX_PIPES) {
        snprintf(err, errlen, "too many kernels in one run (max %d)", MAX_PIPES);
        return NULL;
    }
    mtl_library *lib = get_library(s, path, err, errlen);
    if (!lib) return NULL;
    mtl_pipeline *p = mtl_pipeline_new(s->dev, lib, function, consts, nconsts, err, errlen);
    if (!p) return NULL;
    pipe_entry *e = &s->pipes[s->npipes++];
    snprintf(e->path, sizeof e->path, "%s", path);
    snprintf(e->function, sizeof e->function, "%s", function);
    snprintf(e->constants, sizeof e->constants, "%s", key);
    e->pipe = p;
    return p;
}

static void metal_release_case(backend *b) {
    metal_state *s = b->state;
    for (int i = 0; i < OP_MAX_BUFS; i++) {
        mtl_buffer_free(s->bufs[i]);
        s->bufs[i] = NULL;
        tensor_free(s->poison[i]);
        s->poison[i] = NULL;
        tensor_free(s->inout_start[i]);
        s->inout_start[i] = NULL;
    }
    s->nstages = 0;
}

static int metal_prepare(backend *b, op_case *c, const run_opts *o, char *err, size_t errlen) {
    metal_state *s = b->state;
    const op_desc *op = c->op;
    metal_release_case(b);
    s->opts = o;
    s->counters_failed = 0;
    if (!op->launch || !op->nstages) {
        snprintf(err, errlen, "%s has no Metal kernel; use --backend cpu", op->name);
        return -1;
    }
    s->nstages = op->nstages(c);
    if (s->nstages < 1 || s->nstages > OP_MAX_STAGES) {
        snprintf(err, errlen, "internal error: %s reports %d stages", op->name, s->nstages);
        return -1;
    }
    for (int st = 0; st < s->nstages; st++) {
        if (op->launch(c, st, &s->launch[st]) != 0) {
            snprintf(err, errlen, "%s has no Metal kernel for stage %d; use --backend cpu", op->name, st);
            return -1;
        }
    }
    if (kernel_choice_resolve(op, s->launch, s->nstages, o, metal_lookup, s, s->kern, err, errlen) != 0) return -1;
    s->any_theirs = 0;
    for (int st = 0; st < s->nstages; st++) s->any_theirs |= s->kern[st].origin != KERNEL_OURS;
    s->main_stage = kernel_choice_main(op, s->launch, s->nstages);
    if (s->main_stage < 0) s->main_stage = 0;
    for (int st = 0; st < s->nstages; st++) {
        op_launch *l = &s->launch[st];
        stage_kernel *k = &s->kern[st];
        const char *fn = k->function;
        s->stage_pipe[st] = get_pipeline(s, k->path, fn, l, k->origin != KERNEL_OURS || !s->any_theirs, err, errlen);
        if (!s->stage_pipe[st]) return -1;
        describe_file(s, k);
        unsigned threads = l->tg[0] * l->tg[1] * l->tg[2];
        unsigned maxt = mtl_pipeline_max_threads(s->stage_pipe[st]);
        if (maxt && threads > maxt) {
            snprintf(err, errlen, "%s: %u threads per threadgroup exceed the pipeline's limit of %u", fn, threads, maxt);
            return -1;
        }
    }
    for (int i = 0; i < op->nbufs; i++) {
        size_t n = tensor_nbytes(c->t[i]);
        int private_storage = (c->private_bufs >> i) & 1u;
        s->bufs[i] = private_storage ? mtl_buffer_new_private(s->dev, n, err, errlen)
                                     : mtl_buffer_new(s->dev, n, err, errlen);
        if (!s->bufs[i]) return -1;
        buf_role r = op->bufs[i].role;
        if (r == BUF_IN) {
            if (mtl_buffer_write(s->dev, s->bufs[i], c->t[i]->data, n, err, errlen)) return -1;
        } else if (r == BUF_OUT || r == BUF_SCRATCH) {
            s->poison[i] = tensor_new_like(c->t[i], c->t[i]->name, c->t[i]->dtype);
            if (!s->poison[i]) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            /* accumulators (atomic adds) start from the zeros tensor_new gave */
            if (!(op->zero_init_bufs & (1u << i))) poison_tensor(s->poison[i]);
        } else if (r == BUF_INOUT) {
            /* Every run, the re-runs that time stages included, starts from it. */
            s->inout_start[i] = tensor_clone(c->t[i]);
            if (!s->inout_start[i]) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    }
    /* A repeated dispatch must stay inside its buffers at its last repeat. */
    for (int st = 0; st < s->nstages; st++) {
        const op_launch *l = &s->launch[st];
        uint32_t reps = l->repeat ? l->repeat : 1;
        for (int i = 0; i < l->nbinds; i++) {
            size_t last = (size_t)(reps - 1) * l->binds[i].repeat_stride;
            if (last > 0 && last >= tensor_nbytes(c->t[l->binds[i].buf])) {
                snprintf(err, errlen, "internal error: %s stage %s repeat %u starts buffer %s past its end", op->name,
                         l->stage, reps - 1, op->bufs[l->binds[i].buf].name);
                return -1;
            }
        }
    }
    return 0;
}

static void fill_dispatch(metal_state *s, int st, mtl_dispatch *d) {
    const op_launch *l = &s->launch[st];
    memset(d, 0, sizeof *d);
    d->pipeline = s->stage_pipe[st];
    for (int i = 0; i < l->nbinds; i++) {
        d->buffers[d->nbuffers].index = l->binds[i].index;
        d->buffers[d->nbuffers].buffer = s->bufs[l->binds[i].buf];
        d->buffers[d->nbuffers].offset = (size_t)l->binds[i].offset;
        d->buffers[d->nbuffers].repeat_stride = l->binds[i].repeat_stride;
        d->nbuffers++;
    }
    if (l->params_index >= 0 && l->nparams > 0) {
        d->bytes[0].index = l->params_index;
        d->bytes[0].data = l->params;
        d->bytes[0].length = sizeof(uint32_t) * (size_t)l->nparams;
        d->nbytes = 1;
    }
    for (int i = 0; i < l->ntgmem; i++) {
        d->tgmem[i].index = l->tgmem[i].index;
        d->tgmem[i].length = l->tgmem[i].bytes;
    }
    d->ntgmem = l->ntgmem;
    memcpy(d->grid, l->grid, sizeof d->grid);
    memcpy(d->tg, l->tg, sizeof d->tg);
    d->repeat = l->repeat;
    d->own_command_buffers = l->own_command_buffers;
}

/* Fills the device buffers a run starts from: poison in outputs and scratch, the
 * original input in in-place (BUF_INOUT) tensors. */
static int reset_buffers(metal_state *s, op_case *c, char *err, size_t errlen) {
    for (int i = 0; i < c->op->nbufs; i++) {
        if (s->poison[i] &&
            mtl_buffer_write(s->dev, s->bufs[i], s->poison[i]->data, tensor_nbytes(s->poison[i]), err, errlen))
            return -1;
        if (s->inout_start[i] && mtl_buffer_write(s->dev, s->bufs[i], s->inout_start[i]->data,
                                                  tensor_nbytes(s->inout_start[i]), err, errlen))
            return -1;
    }
    return 0;
}

static int metal_run_once(backend *b, op_case *c, backend_timing *t, char *err, size_t errlen) {
    metal_state *s = b->state;
    const op_desc *op = c->op;
    if (reset_buffers(s, c, err, errlen)) return -1;
    mtl_dispatch ds[OP_MAX_STAGES];
    for (int st = 0; st < s->nstages; st++) fill_dispatch(s, st, &ds[st]);
    int counters = s->nstages > 1 && !s->counters_failed &&
                   mtl_device_stage_counters(s->dev, s->counters_why, sizeof s->counters_why);
    mtl_timing mt;
    double w0 = clock_now_us();
    if (mtl_run_timed(s->dev, ds, s->nstages, counters, &mt, err, errlen) != 0) return -1;
    t->wall_us = clock_now_us() - w0;
    t->gpu_us = mt.gpu_us;
    t->nstages = s->nstages;
    t->stage_method = STAGE_TIMING_NONE;
    t->stage_why = NULL;
    if (s->nstages == 1) t->stage_us[0] = t->gpu_us;
    if (counters && mt.nstages == s->nstages) {
        for (int st = 0; st < s->nstages; st++) t->stage_us[st] = mt.stage_us[st];
        t->stage_method = STAGE_TIMING_COUNTERS;
    } else if (counters) {
        s->counters_failed = 1;
        snprintf(s->counters_why, sizeof s->counters_why,
                 "a run's counter samples were unusable (an error value, or outside the run)");
    }
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if ((r == BUF_OUT || r == BUF_INOUT || r == BUF_SCRATCH) &&
            mtl_buffer_read(s->dev, s->bufs[i], c->t[i]->data, tensor_nbytes(c->t[i]), err, errlen))
            return -1;
    }
    if (s->nstages > 1 && t->stage_method != STAGE_TIMING_COUNTERS) {
        /* Each stage again in a command buffer of its own, from the state the real
         * run started in (accumulators from zero); the outputs above stay those of
         * the one-submission run. */
        if (reset_buffers(s, c, err, errlen)) return -1;
        for (int st = 0; st < s->nstages; st++)
            if (mtl_run(s->dev, &ds[st], 1, &t->stage_us[st], err, errlen) != 0) return -1;
        t->stage_method = STAGE_TIMING_SEPARATE;
        t->stage_why = s->counters_why;
    }
    return 0;
}

/* --counters on the software device: the stages once more in one submission, every
 * dispatch counted (counters.h); buffers named after the op's. */
static rec_counters *metal_count_once(backend *b, op_case *c, char *err, size_t errlen) {
    metal_state *s = b->state;
    id dev = mtl_device_object(s->dev);
    swmtl_counts *cs = swmtl_counts_new();
    rc_names *names = calloc(REC_MAX_COUNTED_DISPATCHES, sizeof *names);
    rec_counters *out = NULL;
    if (!cs || !names) {
        snprintf(err, errlen, "out of memory for the counters");
        goto done;
    }
    int nd = 0;
    mtl_dispatch ds[OP_MAX_STAGES];
    for (int st = 0; st < s->nstages; st++) {
        fill_dispatch(s, st, &ds[st]);
        const op_launch *l = &s->launch[st];
        for (uint32_t r = 0; r < (l->repeat ? l->repeat : 1) && nd < REC_MAX_COUNTED_DISPATCHES; r++, nd++) {
            names[nd].stage = l->stage;
            for (int i = 0; i < l->nbinds; i++)
                if (l->binds[i].index >= 0 && l->binds[i].index < RC_MAX_BUFFERS)
                    names[nd].buffer[l->binds[i].index] = c->op->bufs[l->binds[i].buf].name;
        }
    }
    if (reset_buffers(s, c, err, errlen) || swmtl_device_set_counts(dev, cs) != 0) goto done;
    double gpu_us;
    int rc = mtl_run(s->dev, ds, s->nstages, &gpu_us, err, errlen);
    swmtl_device_set_counts(dev, NULL);
    if (rc != 0) goto done;
    if (swmtl_counts_error(cs)) {
        snprintf(err, errlen, "%s", swmtl_counts_error(cs));
        goto done;
    }
    out = rec_counters_from_session(cs, names, nd);
    if (!out) snprintf(err, errlen, "out of memory for the counters");
done:
    free(names);
    swmtl_counts_free(cs);
    return out;
}

static void metal_describe(backend *b, op_case *c, int st, op_launch *l) {
    metal_state *s = b->state;
    *l = s->launch[st];
    l->shader = s->kern[st].path;
    l->function = s->kern[st].function;
}

static const stage_kernel *metal_stage_kernel(backend *b, int st) {
    metal_state *s = b->state;
    return st >= 0 && st < s->nstages ? &s->kern[st] : NULL;
}

static int metal_check_kernels(backend *b, const op_case *c, const run_opts *o, stage_kernel *out, char *err,
                               size_t errlen) {
    metal_state *s = b->state;
    s->opts = o; /* user files are compiled here, with the run's options */
    op_launch *ls = malloc(sizeof *ls * OP_MAX_STAGES);
    if (!ls) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = kernel_choice_launches(c->op, c->dim, ls, err, errlen);
    if (n > 0 && kernel_choice_resolve(c->op, ls, n, o, metal_lookup, s, out, err, errlen) != 0) n = -1;
    for (int st = 0; st < n; st++) {
        /* ours are loaded when they run; a user's file is loaded already */
        if (out[st].origin != KERNEL_OURS) describe_file(s, &out[st]);
        else str_copy(out[st].display, sizeof out[st].display, out[st].path);
    }
    free(ls);
    return n;
}

static void metal_fill_kernel(backend *b, run_record *rec) {
    metal_state *s = b->state;
    if (s->nstages < 1) return;
    /* The record's kernel is the main stage's (the first stage when the op has none). */
    int m = s->main_stage;
    const stage_kernel *k = &s->kern[m];
    str_copy(rec->kernel.source, sizeof rec->kernel.source, k->display);
    str_copy(rec->kernel.sha256, sizeof rec->kernel.sha256, k->sha256);
    str_copy(rec->kernel.function, sizeof rec->kernel.function, k->function);
    rec->kernel.theirs = k->origin != KERNEL_OURS;
    const lib_entry *e = find_library(s, k->path);
    if (e && e->lib) {
        rec->kernel.fast_math_known = 1;
        rec->kernel.fast_math = mtl_library_fast_math(e->lib);
    }
    if (s->opts->fast_math && !mtl_device_fast_math_applies(s->dev))
        run_record_warn(rec, "--fast-math has no effect on the software device: it always computes as with fast math "
                             "off");
    /* The constants that stage's pipeline was built with: the launch's own,
     * overridden or extended by --constant where it applies. */
    mtl_constant consts[RUN_MAX_CONSTANTS];
    int n = launch_constants(s, &s->launch[m], k->origin != KERNEL_OURS || !s->any_theirs, consts);
    rec->kernel.nconstants = 0;
    for (int i = 0; i < n && i < REC_MAX_CONSTANTS; i++) {
        rec->kernel.constants[i].index = consts[i].index;
        str_copy(rec->kernel.constants[i].value, sizeof rec->kernel.constants[i].value, consts[i].value);
        rec->kernel.nconstants++;
    }
}

static void metal_destroy(backend *b) {
    metal_state *s = b->state;
    metal_release_case(b);
    for (int i = 0; i < s->npipes; i++) mtl_pipeline_free(s->pipes[i].pipe);
    for (int i = 0; i < s->nlibs; i++) mtl_library_free(s->libs[i].lib);
    backend_device_free(b);
}

backend *backend_metal_open(mtl_device *dev, backend_kind kind, char *err, size_t errlen) {
    backend *b = backend_device_new(dev, kind, sizeof(metal_state), err, errlen);
    if (!b) return NULL;
    metal_state *s = b->state;
    s->dev = dev;
    b->prepare = metal_prepare;
    b->run_once = metal_run_once;
    b->describe = metal_describe;
    b->fill_kernel = metal_fill_kernel;
    b->check_kernels = metal_check_kernels;
    b->stage_kernel = metal_stage_kernel;
    b->release_case = metal_release_case;
    b->count_once = backend_has(b, BACKEND_COUNTERS) ? metal_count_once : NULL;
    b->destroy = metal_destroy;
    return b;
}
