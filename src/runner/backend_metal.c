/* backend_metal.c — the `metal` and `sw` backends: run an op's kernels through Metal.
 *
 * One code path for both: src/metal/mtl.c talks to a real GPU (macOS) or to the
 * software Metal device.  Per case: every tensor of the op gets a shared buffer,
 * inputs are uploaded once, outputs and scratch buffers are poisoned before every
 * run, all stages go into one command buffer (total time from GPUStartTime/
 * GPUEndTime); multi-stage ops then run each stage in its own command buffer for the
 * per-stage times (Metal gives timestamps per command buffer, not per dispatch).
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
#include "runner/check.h"
#include "runner/runner.h"
#include "runner/shader_source.h"
#include "swmetal/msl_include.h"

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
    mtl_device *dev;
    const run_opts *opts;
    lib_entry libs[MAX_LIBS];
    int nlibs;
    pipe_entry pipes[MAX_PIPES];
    int npipes;
    /* per case */
    mtl_buffer *bufs[OP_MAX_BUFS];
    int nstages;
    op_launch launch[OP_MAX_STAGES];
    mtl_pipeline *stage_pipe[OP_MAX_STAGES];
    char stage_function[OP_MAX_STAGES][128];
    tensor *poison[OP_MAX_BUFS];
} metal_state;

static lib_entry *find_library(metal_state *s, const char *path) {
    for (int i = 0; i < s->nlibs; i++)
        if (strcmp(s->libs[i].path, path) == 0) return &s->libs[i];
    return NULL;
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
    /* --include/--define belong to the user's --shader, not to our own shaders */
    const msl_source_opts *so =
        s->opts && s->opts->shader && strcmp(path, s->opts->shader) == 0 ? &s->opts->source : NULL;
    mtl_library *lib = mtl_library_new(s->dev, src.text, src.display_path, so, err, errlen);
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

/* The launch's own function constants (e.g. attention's align_Q/do_causal), with
 * --constant flags overriding entries of the same index. */
static int launch_constants(const metal_state *s, const op_launch *l, mtl_constant *consts) {
    int n = 0;
    for (int i = 0; i < l->nconstants && n < RUN_MAX_CONSTANTS; i++, n++) {
        consts[n].index = l->constants[i].index;
        snprintf(consts[n].value, sizeof consts[n].value, "%s", l->constants[i].value);
    }
    for (int i = 0; i < s->opts->nconstants; i++) {
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
                                  char *err, size_t errlen) {
    mtl_constant consts[RUN_MAX_CONSTANTS];
    int nconsts = launch_constants(s, l, consts);
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
    }
    s->nstages = 0;
}

static int metal_prepare(backend *b, op_case *c, const run_opts *o, char *err, size_t errlen) {
    metal_state *s = b->state;
    const op_desc *op = c->op;
    metal_release_case(b);
    s->opts = o;
    if (!op->launch || !op->nstages) {
        snprintf(err, errlen, "%s has no Metal kernel; use --backend cpu", op->name);
        return -1;
    }
    s->nstages = op->nstages(c);
    if (s->nstages < 1 || s->nstages > OP_MAX_STAGES) {
        snprintf(err, errlen, "internal error: %s reports %d stages", op->name, s->nstages);
        return -1;
    }
    if (o->function && s->nstages > 1) {
        snprintf(err, errlen, "--function names one kernel but %s runs %d stages: put every stage's kernel, under its "
                              "default name, in the --shader file and omit --function", op->name, s->nstages);
        return -1;
    }
    for (int st = 0; st < s->nstages; st++) {
        op_launch *l = &s->launch[st];
        if (op->launch(c, st, l) != 0) {
            snprintf(err, errlen, "%s has no Metal kernel for stage %d; use --backend cpu", op->name, st);
            return -1;
        }
        const char *path = o->shader ? o->shader : l->shader;
        const char *fn = o->function ? o->function : l->function;
        snprintf(s->stage_function[st], sizeof s->stage_function[st], "%s", fn);
        s->stage_pipe[st] = get_pipeline(s, path, fn, l, err, errlen);
        if (!s->stage_pipe[st]) return -1;
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

static int metal_run_once(backend *b, op_case *c, backend_timing *t, char *err, size_t errlen) {
    metal_state *s = b->state;
    const op_desc *op = c->op;
    for (int i = 0; i < op->nbufs; i++) {
        if (s->poison[i] &&
            mtl_buffer_write(s->dev, s->bufs[i], s->poison[i]->data, tensor_nbytes(s->poison[i]), err, errlen))
            return -1;
        if (op->bufs[i].role == BUF_INOUT &&
            mtl_buffer_write(s->dev, s->bufs[i], c->t[i]->data, tensor_nbytes(c->t[i]), err, errlen))
            return -1;
    }
    mtl_dispatch ds[OP_MAX_STAGES];
    for (int st = 0; st < s->nstages; st++) fill_dispatch(s, st, &ds[st]);
    double w0 = clock_now_us();
    if (mtl_run(s->dev, ds, s->nstages, &t->gpu_us, err, errlen) != 0) return -1;
    t->wall_us = clock_now_us() - w0;
    t->nstages = s->nstages;
    if (s->nstages == 1) {
        t->stage_us[0] = t->gpu_us;
    } else {
        /* Reset outputs first: accumulators must start from zero again. */
        for (int i = 0; i < op->nbufs; i++)
            if (s->poison[i]) memcpy(mtl_buffer_contents(s->bufs[i]), s->poison[i]->data, tensor_nbytes(s->poison[i]));
        for (int st = 0; st < s->nstages; st++)
            if (mtl_run(s->dev, &ds[st], 1, &t->stage_us[st], err, errlen) != 0) return -1;
    }
    for (int i = 0; i < op->nbufs; i++) {
        buf_role r = op->bufs[i].role;
        if ((r == BUF_OUT || r == BUF_INOUT || r == BUF_SCRATCH) &&
            mtl_buffer_read(s->dev, s->bufs[i], c->t[i]->data, tensor_nbytes(c->t[i]), err, errlen))
            return -1;
    }
    return 0;
}

static void metal_describe(backend *b, op_case *c, int st, op_launch *l) {
    metal_state *s = b->state;
    *l = s->launch[st];
    l->function = s->stage_function[st];
}

static void metal_fill_kernel(backend *b, run_record *rec) {
    metal_state *s = b->state;
    if (s->nstages < 1) return;
    const char *path = s->opts->shader ? s->opts->shader : s->launch[0].shader;
    lib_entry *e = find_library(s, path);
    str_copy(rec->kernel.source, sizeof rec->kernel.source, e ? e->display : path);
    snprintf(rec->kernel.sha256, sizeof rec->kernel.sha256, "%s", e ? e->sha256 : "");
    str_copy(rec->kernel.function, sizeof rec->kernel.function, s->stage_function[0]);
    /* The constants the first stage's pipeline was built with: the launch's own,
     * overridden or extended by --constant. */
    mtl_constant consts[RUN_MAX_CONSTANTS];
    int n = launch_constants(s, &s->launch[0], consts);
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
    mtl_device_free(s->dev);
    free(s);
    free(b);
}

backend *backend_metal_open(const char *kind, char *err, size_t errlen) {
    mtl_device *dev = mtl_device_open(kind, err, errlen);
    if (!dev) return NULL;
    backend *b = calloc(1, sizeof *b);
    metal_state *s = calloc(1, sizeof *s);
    if (!b || !s) {
        free(b);
        free(s);
        mtl_device_free(dev);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->dev = dev;
    b->name = mtl_device_is_software(dev) ? "sw" : "metal";
    b->emulated = mtl_device_is_software(dev);
    snprintf(b->device_name, sizeof b->device_name, "%s", mtl_device_name(dev));
    b->gpu_cores = -1;
    b->prepare = metal_prepare;
    b->run_once = metal_run_once;
    b->describe = metal_describe;
    b->fill_kernel = metal_fill_kernel;
    b->release_case = metal_release_case;
    b->destroy = metal_destroy;
    b->state = s;
    return b;
}
