/* kcase_run.c — kernel cases as op_cases, and the backend that runs them
 * (kcase_run.h): prepare compiles, binds by reflection and fills the case's buffers;
 * each run_once writes every buffer's initial bytes ("value"s that fit go by setBytes,
 * which copies them at each encoding), runs every launch in one command buffer and
 * reads back the buffers the kernel may write (and the readonly ones)
 * into the case's tensors.  Warmup, sampling and the determinism check are the
 * runner's (runner.c), as for an op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "io/io_util.h"
#include "msl/msl_include.h"
#include "runner/backend_device.h"
#include "runner/kcase_bind.h"
#include "runner/kcase_job.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"

const op_desc kc_record_op = {.name = "kernel", .group = "case", .summary = "a kernel case file"};

/* ---- the case as an op_case ---- */

static int job_nstages(const op_case *oc) { return kc_job_of(oc)->c->nlaunches; }

static void job_free(op_case *oc) {
    kc_job *j = kc_job_of(oc);
    if (!j) return;
    for (int i = 0; i < KC_MAX_BUFS; i++) kc_tensor_free(&j->init[i]);
    kc_free(j->lowered);
    free(j);
    oc->priv = NULL;
}

op_case *kc_op_case_new(const kc_case *c, uint64_t seed, int poison, char *err, size_t errlen) {
    op_case *oc = calloc(1, sizeof *oc);
    kc_job *j = calloc(1, sizeof *j);
    if (!oc || !j) {
        free(oc);
        free(j);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    j->source = j->c = c;
    j->poison = poison ? poison : KC_POISON_NAN;
    j->op = kc_record_op;
    j->op.bufs = j->bufs;
    j->op.nstages = job_nstages;
    j->op.cleanup = job_free;
    oc->op = &j->op;
    oc->seed = seed;
    oc->priv = j;
    if (c->mlx && !(j->lowered = kc_mlx_lower(c, seed, err, errlen))) {
        op_case_free(oc);
        return NULL;
    }
    if (j->lowered) j->c = j->lowered; /* its mlx part is only what it was made from */
    if (j->c->nbufs > KC_MAX_BUFS || j->c->nlaunches > KC_MAX_LAUNCHES) {
        snprintf(err, errlen, "%s: at most %d buffers and %d launches", c->path, KC_MAX_BUFS, KC_MAX_LAUNCHES);
        op_case_free(oc);
        return NULL;
    }
    return oc;
}

const kc_case *kc_op_case_source(const op_case *oc) { return kc_job_of(oc)->source; }
const kc_case *kc_op_case_plain(const op_case *oc) { return kc_job_of(oc)->c; }

/* ---- the backend ---- */

typedef struct kc_state {
    mtl_device *dev;            /* the backend's device (b->device) */
    /* the case prepared (released by kc_release) */
    mtl_library *lib;
    mtl_pipeline *pipe[KC_MAX_LAUNCHES];
    kc_binding binds[KC_MAX_LAUNCHES][MTL_MAX_ARGUMENTS];
    int nbinds[KC_MAX_LAUNCHES];
    mtl_buffer *buf[KC_MAX_BUFS];
    mtl_dispatch ds[KC_MAX_LAUNCHES];
    char stage_name[KC_MAX_LAUNCHES][8];
    int nlaunches, nbufs;
} kc_state;

static void kc_release(backend *b) {
    kc_state *s = b->state;
    for (int i = 0; i < s->nlaunches; i++) mtl_pipeline_free(s->pipe[i]);
    mtl_library_free(s->lib);
    for (int i = 0; i < s->nbufs; i++) mtl_buffer_free(s->buf[i]);
    mtl_device *dev = s->dev;
    memset(s, 0, sizeof *s);
    s->dev = dev;
}

static int compile(kc_state *s, const kc_case *c, int fast_math, char *err, size_t errlen) {
    msl_source_opts opts;
    char *paths[MSL_MAX_INCLUDE_DIRS] = {0}, *defs[MSL_MAX_DEFINES] = {0}, *text = NULL, *src_path = NULL;
    memset(&opts, 0, sizeof opts);
    int rc = -1;
    for (int i = 0; i < c->nincludes && i < MSL_MAX_INCLUDE_DIRS; i++) opts.include_dirs[opts.ninclude_dirs++] = paths[i] = kc_path(c, c->includes[i]);
    for (int i = 0; i < c->ndefines && i < MSL_MAX_DEFINES; i++) {
        size_t n = strlen(c->defines[i].name) + strlen(c->defines[i].value) + 2;
        if ((defs[i] = malloc(n))) snprintf(defs[i], n, "%s=%s", c->defines[i].name, c->defines[i].value);
        opts.defines[opts.ndefines++] = defs[i];
    }
    size_t len;
    char msg[768];
    if (c->source_path) {
        src_path = kc_path(c, c->source_path);
        if (src_path && io_read_small_file(src_path, 64u << 20, &text, &len, msg, sizeof msg) < 0)
            snprintf(err, errlen, "%s: source: %s", c->path, msg);
    }
    const char *source = c->source_path ? text : c->source_text;
    if (source) {
        s->lib = mtl_library_new(s->dev, source, src_path ? src_path : "case.metal", &opts, fast_math, msg, sizeof msg);
        if (!s->lib) snprintf(err, errlen, "%s: source: %s", c->path, msg);
        rc = s->lib ? 0 : -1;
    }
    for (int i = 0; i < MSL_MAX_INCLUDE_DIRS; i++) free(paths[i]);
    for (int i = 0; i < MSL_MAX_DEFINES; i++) free(defs[i]);
    free(text);
    free(src_path);
    return rc;
}

/* Launch l's pipeline with its constants, bound to the case's buffers. */
static int build_launch(kc_state *s, const kc_case *c, int l, char *err, size_t errlen) {
    const kc_launch *ln = &c->launches[l];
    mtl_constant consts[64];
    char msg[768];
    for (int i = 0; i < ln->nconstants && i < 64; i++) {
        memset(&consts[i], 0, sizeof consts[i]);
        consts[i].index = ln->constants[i].name ? -1 : ln->constants[i].index;
        snprintf(consts[i].name, sizeof consts[i].name, "%s", ln->constants[i].name ? ln->constants[i].name : "");
        snprintf(consts[i].value, sizeof consts[i].value, "%s", ln->constants[i].value);
    }
    s->pipe[l] = mtl_pipeline_new(s->dev, s->lib, ln->function, consts, ln->nconstants, msg, sizeof msg);
    if (!s->pipe[l]) {
        char key[48];
        if (c->sequence) snprintf(key, sizeof key, "dispatches[%d].function", l);
        else snprintf(key, sizeof key, "function");
        snprintf(err, errlen, "%s: %s: %s", c->path, key, msg);
        return -1;
    }
    const mtl_argument *args;
    int nargs = mtl_pipeline_arguments(s->pipe[l], &args);
    if (nargs < 0) {
        snprintf(err, errlen, "%s: the device gives no pipeline reflection: parameters cannot be bound by name", c->path);
        return -1;
    }
    return kc_bind_launch(c, l, ln->function, args, nargs, mtl_pipeline_max_threads(s->pipe[l]), s->binds[l],
                          &s->nbinds[l], err, errlen);
}

/* The first binding of buffer i: its parameter (a "struct" buffer is laid out by
 * it: every launch that binds it reads the same bytes) and its index. */
static const kc_binding *first_binding(const kc_state *s, int i) {
    for (int l = 0; l < s->nlaunches; l++)
        for (int k = 0; k < s->nbinds[l]; k++)
            if (s->binds[l][k].kind == MTL_ARG_BUFFER && s->binds[l][k].buffer == i) return &s->binds[l][k];
    return NULL;
}

/* Every buffer's initial contents and its device buffer. */
static int make_buffers(kc_state *s, kc_job *j, uint64_t seed, char *err, size_t errlen) {
    const kc_case *c = j->c;
    char msg[512];
    for (int i = 0; i < c->nbufs; i++) {
        const kc_binding *first = first_binding(s, i);
        j->index[i] = first ? first->index : -1;
        if (c->bufs[i].kind == KC_BUF_STRUCT) {
            if (kc_struct_contents(c, i, first ? first->arg : NULL, &j->init[i], err, errlen) < 0) return -1;
        } else if (kc_buffer_contents(c, i, seed, j->poison, j->writable[i], &j->init[i], err, errlen) < 0) {
            return -1;
        }
        s->nbufs = i + 1;
        j->by_bytes[i] = (c->bufs[i].kind == KC_BUF_VALUE || c->bufs[i].kind == KC_BUF_STRUCT) && !j->writable[i] &&
                         j->init[i].nbytes > 0 && j->init[i].nbytes <= KC_SET_BYTES_MAX;
        if (j->by_bytes[i]) continue;
        s->buf[i] = mtl_buffer_new(s->dev, j->init[i].nbytes ? j->init[i].nbytes : 4, msg, sizeof msg);
        if (!s->buf[i]) return snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, msg), -1;
    }
    return 0;
}

/* The buffers read back after each run (what the kernel may write, and readonly
 * inputs) as the job's op buffers and the case's tensors: their bytes, in 32-bit
 * words (the runner hashes and --dump writes bytes; the checks read them as the
 * case's dtype). */
static int make_tensors(kc_job *j, op_case *oc, char *err, size_t errlen) {
    const kc_case *c = j->c;
    j->op.nbufs = 0;
    for (int i = 0; i < c->nbufs; i++) {
        j->slot[i] = -1;
        if ((!j->writable[i] && !c->bufs[i].readonly) || j->by_bytes[i]) continue; /* setBytes copies: never changed */
        if (j->op.nbufs == OP_MAX_BUFS) {
            snprintf(err, errlen, "%s: buffers: at most %d buffers may be written or readonly (this case has more)",
                     c->path, OP_MAX_BUFS);
            return -1;
        }
        int k = j->op.nbufs++;
        j->bufs[k] = (op_buf){.name = c->bufs[i].name, .role = BUF_OUT, .dtype = DT_U32};
        int64_t words = (int64_t)((j->init[i].nbytes + 3) / 4);
        if (!(oc->t[k] = tensor_new(c->bufs[i].name, DT_U32, 1, &words))) {
            snprintf(err, errlen, "%s: buffers.%s: out of memory", c->path, c->bufs[i].name);
            return -1;
        }
        j->slot[i] = k;
    }
    return 0;
}

static void fill_dispatches(kc_state *s, const kc_job *j) {
    const kc_case *c = j->c;
    for (int l = 0; l < c->nlaunches; l++) {
        mtl_dispatch *x = &s->ds[l];
        const kc_dispatch *d = &c->launches[l].dispatch;
        memset(x, 0, sizeof *x);
        x->pipeline = s->pipe[l];
        for (int k = 0; k < s->nbinds[l]; k++) {
            const kc_binding *b = &s->binds[l][k];
            if (b->kind == MTL_ARG_THREADGROUP && x->ntgmem < 4) {
                x->tgmem[x->ntgmem].index = b->index;
                x->tgmem[x->ntgmem++].length = b->tg_bytes;
            } else if (b->kind == MTL_ARG_BUFFER && j->by_bytes[b->buffer] && x->nbytes < 31) {
                x->bytes[x->nbytes].index = b->index;
                x->bytes[x->nbytes].data = j->init[b->buffer].data;
                x->bytes[x->nbytes++].length = j->init[b->buffer].nbytes;
            } else if (b->kind == MTL_ARG_BUFFER && x->nbuffers < 31) {
                x->buffers[x->nbuffers].index = b->index;
                x->buffers[x->nbuffers++].buffer = s->buf[b->buffer];
            }
        }
        memcpy(x->grid, d->size, sizeof x->grid);
        memcpy(x->tg, d->tg, sizeof x->tg);
        x->threads = d->mode == KC_DISPATCH_GRID;
        snprintf(s->stage_name[l], sizeof s->stage_name[l], "%u", (unsigned)l % 1000000u); /* l < KC_MAX_LAUNCHES */
    }
}

static int kc_prepare(backend *b, op_case *oc, const run_opts *o, char *err, size_t errlen) {
    kc_state *s = b->state;
    kc_job *j = kc_job_of(oc);
    const kc_case *c = j->c;
    kc_release(b);
    if (compile(s, c, o->fast_math, err, errlen) < 0) return -1;
    s->nlaunches = c->nlaunches;
    for (int l = 0; l < c->nlaunches; l++)
        if (build_launch(s, c, l, err, errlen) < 0) return -1;
    kc_binding *per[KC_MAX_LAUNCHES];
    for (int l = 0; l < c->nlaunches; l++) per[l] = s->binds[l];
    if (kc_bind_check_case(c, per, s->nbinds, j->writable, err, errlen) < 0) return -1;
    if (make_buffers(s, j, oc->seed, err, errlen) < 0 || make_tensors(j, oc, err, errlen) < 0) return -1;
    fill_dispatches(s, j);
    j->prepared = 1;
    return 0;
}

/* Every buffer from its initial bytes, the launches in one command buffer, the
 * read-back buffers into the case's tensors. */
static int kc_run_once(backend *b, op_case *oc, backend_timing *t, char *err, size_t errlen) {
    kc_state *s = b->state;
    kc_job *j = kc_job_of(oc);
    const kc_case *c = j->c;
    char msg[1024];
    for (int i = 0; i < c->nbufs; i++)
        if (s->buf[i] && mtl_buffer_write(s->dev, s->buf[i], j->init[i].data, j->init[i].nbytes, msg, sizeof msg) != 0)
            return snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, msg), -1;
    double t0 = clock_now_us();
    if (mtl_run(s->dev, s->ds, c->nlaunches, &t->gpu_us, err, errlen) != 0) return -1;
    t->wall_us = clock_now_us() - t0;
    for (int i = 0; i < c->nbufs; i++) {
        if (j->slot[i] < 0) continue;
        if (mtl_buffer_read(s->dev, s->buf[i], oc->t[j->slot[i]]->data, j->init[i].nbytes, msg, sizeof msg) != 0)
            return snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, msg), -1;
    }
    return 0;
}

/* --counters (software device): the launches once more, every dispatch counted
 * (counters.h); buffers named after the case's. */
static rec_counters *kc_count_once(backend *b, op_case *oc, char *err, size_t errlen) {
    kc_state *s = b->state;
    kc_job *j = kc_job_of(oc);
    const kc_case *c = j->c;
    id dev = mtl_device_object(s->dev);
    swmtl_counts *cs = swmtl_counts_new();
    rc_names names[KC_MAX_LAUNCHES];
    memset(names, 0, sizeof names);
    rec_counters *out = NULL;
    char msg[1024];
    if (!cs) {
        snprintf(err, errlen, "out of memory for the counters");
        return NULL;
    }
    for (int l = 0; l < c->nlaunches; l++) {
        names[l].stage = s->stage_name[l];
        for (int k = 0; k < s->nbinds[l]; k++) {
            const kc_binding *x = &s->binds[l][k];
            if (x->kind == MTL_ARG_BUFFER && !j->by_bytes[x->buffer] && x->index >= 0 && x->index < RC_MAX_BUFFERS)
                names[l].buffer[x->index] = c->bufs[x->buffer].name;
        }
    }
    for (int i = 0; i < c->nbufs; i++)
        if (s->buf[i] && mtl_buffer_write(s->dev, s->buf[i], j->init[i].data, j->init[i].nbytes, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, msg);
            goto done;
        }
    if (swmtl_device_set_counts(dev, cs) != 0) {
        snprintf(err, errlen, "this device cannot count");
        goto done;
    }
    double gpu_us;
    int rc = mtl_run(s->dev, s->ds, c->nlaunches, &gpu_us, err, errlen);
    swmtl_device_set_counts(dev, NULL);
    if (rc != 0) goto done;
    if (swmtl_counts_error(cs)) snprintf(err, errlen, "%s", swmtl_counts_error(cs));
    else if (!(out = rec_counters_from_session(cs, names, c->nlaunches)))
        snprintf(err, errlen, "out of memory for the counters");
done:
    swmtl_counts_free(cs);
    return out;
}

static void kc_describe(backend *b, op_case *oc, int st, op_launch *l) {
    kc_state *s = b->state;
    const kc_case *c = kc_job_of(oc)->c;
    const kc_dispatch *d = &c->launches[st].dispatch;
    memset(l, 0, sizeof *l);
    l->stage = s->stage_name[st];
    l->function = c->launches[st].function;
    memcpy(l->grid, d->size, sizeof l->grid);
    memcpy(l->tg, d->tg, sizeof l->tg);
    for (int k = 0; k < d->ntgmem && k < 4; k++) {
        l->tgmem[k].index = d->tgmem[k].index;
        l->tgmem[k].bytes = d->tgmem[k].bytes;
        l->ntgmem = k + 1;
    }
    l->repeat = 1;
}

op_case *kc_reference_run(backend *ref, const op_case *oc, const run_opts *o, char *err, size_t errlen) {
    const kc_job *j = kc_job_of(oc);
    op_case *r = kc_op_case_new(j->source, oc->seed, j->poison, err, errlen);
    if (!r) return NULL;
    backend_timing t;
    memset(&t, 0, sizeof t);
    char why[1024];
    int rc = ref->prepare(ref, r, o, why, sizeof why);
    if (rc == 0) rc = ref->run_once(ref, r, &t, why, sizeof why);
    ref->release_case(ref);
    if (rc != 0) {
        snprintf(err, errlen, "the %s device's reference run failed: %.900s", ref->desc->name, why);
        op_case_free(r);
        return NULL;
    }
    return r;
}

static void kc_fill_kernel(backend *b, run_record *rec) {
    kc_state *s = b->state;
    if (!s->lib) return;
    rec->kernel.fast_math_known = 1;
    rec->kernel.fast_math = mtl_library_fast_math(s->lib);
}

static void kc_destroy(backend *b) {
    kc_release(b);
    backend_device_free(b);
}

backend *kc_backend_on_device(mtl_device *dev, backend_kind kind, char *err, size_t errlen) {
    backend *b = backend_device_new(dev, kind, sizeof(kc_state), err, errlen);
    if (!b) return NULL;
    ((kc_state *)b->state)->dev = dev;
    b->prepare = kc_prepare;
    b->run_once = kc_run_once;
    b->describe = kc_describe;
    b->fill_kernel = kc_fill_kernel;
    b->count_once = backend_has(b, BACKEND_COUNTERS) ? kc_count_once : NULL;
    b->release_case = kc_release;
    b->destroy = kc_destroy;
    return b;
}

backend *kc_backend_open(const char *name, const run_opts *o, char *err, size_t errlen) {
    mtl_device *dev = backend_open_device(name, o, err, errlen);
    return dev ? kc_backend_on_device(dev, backend_desc_find(name)->kind, err, errlen) : NULL;
}
