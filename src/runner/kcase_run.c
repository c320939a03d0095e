/* kcase_run.c — a kernel case run on a Metal device (kcase_run.h): compile, bind by
 * reflection, fill, run every launch in one command buffer `iters` times from the same
 * initial bytes, then check every buffer.  An mlx_metal_kernel case runs as the plain
 * case kc_mlx_lower makes of it.  Struct parameters are refused here in one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "kcase/kcase_data.h"
#include "msl/msl_include.h"
#include "runner/kcase_bind.h"
#include "runner/kcase_run.h"

typedef struct kc_state {
    mtl_library *lib;
    mtl_pipeline *pipe[64];
    kc_binding binds[64][MTL_MAX_ARGUMENTS];
    int nbinds[64];
    int writable[32];
    kc_tensor init[32];       /* each buffer's initial contents */
    mtl_buffer *buf[32];
    unsigned char *first[32]; /* the first run's bytes */
    int poison;               /* KC_POISON_* */
} kc_state;

static void state_free(kc_state *s, const kc_case *c) {
    for (int i = 0; i < c->nlaunches && i < 64; i++) mtl_pipeline_free(s->pipe[i]);
    mtl_library_free(s->lib);
    for (int i = 0; i < c->nbufs; i++) {
        kc_tensor_free(&s->init[i]);
        mtl_buffer_free(s->buf[i]);
        free(s->first[i]);
    }
}

static int compile(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_state *s, char *err, size_t errlen) {
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
        s->lib = mtl_library_new(d, source, src_path ? src_path : "case.metal", &opts, o->fast_math, msg, sizeof msg);
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
static int build_launch(mtl_device *d, const kc_case *c, int l, kc_state *s, char *err, size_t errlen) {
    const kc_launch *ln = &c->launches[l];
    mtl_constant consts[64];
    char msg[768];
    for (int i = 0; i < ln->nconstants && i < 64; i++) {
        memset(&consts[i], 0, sizeof consts[i]);
        consts[i].index = ln->constants[i].name ? -1 : ln->constants[i].index;
        snprintf(consts[i].name, sizeof consts[i].name, "%s", ln->constants[i].name ? ln->constants[i].name : "");
        snprintf(consts[i].value, sizeof consts[i].value, "%s", ln->constants[i].value);
    }
    s->pipe[l] = mtl_pipeline_new(d, s->lib, ln->function, consts, ln->nconstants, msg, sizeof msg);
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

/* The parameter a "struct" buffer is bound to (its first binding: every launch that
 * binds it reads the same bytes). */
static const mtl_argument *struct_arg(const kc_case *c, const kc_state *s, int i) {
    for (int l = 0; l < c->nlaunches; l++)
        for (int k = 0; k < s->nbinds[l]; k++)
            if (s->binds[l][k].kind == MTL_ARG_BUFFER && s->binds[l][k].buffer == i) return s->binds[l][k].arg;
    return NULL;
}

/* Every buffer's initial contents and its device buffer. */
static int make_buffers(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_state *s, char *err, size_t errlen) {
    char msg[512];
    for (int i = 0; i < c->nbufs; i++) {
        if (c->bufs[i].kind == KC_BUF_STRUCT) {
            if (kc_struct_contents(c, i, struct_arg(c, s, i), &s->init[i], err, errlen) < 0) return -1;
        } else if (kc_buffer_contents(c, i, o->seed, s->poison, s->writable[i], &s->init[i], err, errlen) < 0) {
            return -1;
        }
        s->buf[i] = mtl_buffer_new(d, s->init[i].nbytes ? s->init[i].nbytes : 4, msg, sizeof msg);
        if (!s->buf[i] || !(s->first[i] = malloc(s->init[i].nbytes + 1))) {
            snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, s->buf[i] ? "out of memory" : msg);
            return -1;
        }
    }
    return 0;
}

static int prepare(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_state *s, char *err, size_t errlen) {
    if (c->nbufs > 32 || c->nlaunches > 64) return snprintf(err, errlen, "%s: too many buffers or launches", c->path), -1;
    if (compile(d, c, o, s, err, errlen) < 0) return -1;
    for (int l = 0; l < c->nlaunches; l++)
        if (build_launch(d, c, l, s, err, errlen) < 0) return -1;
    kc_binding *per[64];
    for (int l = 0; l < c->nlaunches; l++) per[l] = s->binds[l];
    if (kc_bind_check_case(c, per, s->nbinds, s->writable, err, errlen) < 0) return -1;
    return make_buffers(d, c, o, s, err, errlen);
}

static void fill_dispatches(const kc_case *c, kc_state *s, mtl_dispatch *ds) {
    for (int l = 0; l < c->nlaunches; l++) {
        mtl_dispatch *x = &ds[l];
        const kc_dispatch *d = &c->launches[l].dispatch;
        memset(x, 0, sizeof *x);
        x->pipeline = s->pipe[l];
        for (int k = 0; k < s->nbinds[l]; k++) {
            const kc_binding *b = &s->binds[l][k];
            if (b->kind == MTL_ARG_THREADGROUP && x->ntgmem < 4) {
                x->tgmem[x->ntgmem].index = b->index;
                x->tgmem[x->ntgmem++].length = b->tg_bytes;
            } else if (b->kind == MTL_ARG_BUFFER && x->nbuffers < 31) {
                x->buffers[x->nbuffers].index = b->index;
                x->buffers[x->nbuffers++].buffer = s->buf[b->buffer];
            }
        }
        memcpy(x->grid, d->size, sizeof x->grid);
        memcpy(x->tg, d->tg, sizeof x->tg);
        x->threads = d->mode == KC_DISPATCH_GRID;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs the command buffer o->iters times; 0, or 1 with r->fault when the device
 * failed a run, or -1 with err. */
static int run_iters(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_state *s, kc_result *r, char *err,
                     size_t errlen) {
    mtl_dispatch ds[64];
    double us[256];
    char msg[1024];
    fill_dispatches(c, s, ds);
    r->deterministic = 1;
    for (int it = 0; it < o->iters; it++) {
        for (int i = 0; i < c->nbufs; i++)
            if (mtl_buffer_write(d, s->buf[i], s->init[i].data, s->init[i].nbytes, msg, sizeof msg) != 0)
                return snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, msg), -1;
        if (mtl_run(d, ds, c->nlaunches, &us[it < 256 ? it : 255], msg, sizeof msg) != 0) {
            snprintf(r->fault, sizeof r->fault, "%s", msg);
            return 1;
        }
        for (int i = 0; i < c->nbufs; i++) {
            size_t n = s->init[i].nbytes;
            unsigned char *now = it == 0 ? s->first[i] : malloc(n + 1);
            if (!now || mtl_buffer_read(d, s->buf[i], now, n, msg, sizeof msg) != 0) {
                if (it) free(now);
                return snprintf(err, errlen, "%s: buffers.%s: %s", c->path, c->bufs[i].name, now ? msg : "out of memory"), -1;
            }
            if (it && memcmp(now, s->first[i], n) != 0) r->deterministic = 0;
            if (it) free(now);
        }
    }
    int n = o->iters < 256 ? o->iters : 256;
    memcpy(r->samples, us, (size_t)n * sizeof *us);
    r->nsamples = n;
    qsort(us, (size_t)n, sizeof *us, cmp_double);
    r->min_us = us[0];
    r->median_us = us[n / 2];
    r->iters = o->iters;
    return 0;
}

/* Buffer i's checks on the first run's bytes. */
static void check_buffer(const kc_case *c, int i, kc_state *s, kc_buf_result *br, char *err, size_t errlen) {
    const kc_buffer *b = &c->bufs[i];
    const kc_tensor *t = &s->init[i];
    const unsigned char *out = s->first[i];
    snprintf(br->name, sizeof br->name, "%s", b->name);
    br->writable = s->writable[i];
    br->readonly = b->readonly;
    br->numel = t->numel;
    br->dtype = t->dtype;
    br->ulp = -1;
    br->first_bad = -1;
    br->hash = 1469598103934665603ull;
    for (size_t k = 0; k < t->nbytes; k++) br->hash = (br->hash ^ out[k]) * 1099511628211ull;
    br->index = -1;
    for (int l = 0; l < c->nlaunches && br->index < 0; l++)
        for (int k = 0; k < s->nbinds[l] && br->index < 0; k++)
            if (s->binds[l][k].kind == MTL_ARG_BUFFER && s->binds[l][k].buffer == i) br->index = s->binds[l][k].index;
    size_t es = kc_dtype_size(t->dtype);
    for (int64_t k = 0; b->readonly && k < t->numel; k++)
        br->changed += memcmp(out + (size_t)k * es, (const unsigned char *)t->data + (size_t)k * es, es) != 0;
    int poisoned = br->writable && (!b->has_init ? 1 : b->init == KC_INIT_POISON) && b->kind == KC_BUF_ARRAY;
    for (int64_t k = 0; br->writable && k < t->numel; k++) {
        if (poisoned && kc_is_poison(t->dtype, s->poison, out, k)) {
            br->unwritten++;
            continue;
        }
        double v = kc_load(t->dtype, out, (size_t)k);
        br->nan += v != v;
        br->inf += v == v && (v > 1.79e308 || v < -1.79e308);
    }
    br->pass = br->changed == 0 && br->unwritten == 0;
    double *ref = NULL;
    if (kc_expect_contents(c, i, t, &ref, err, errlen) == 0 && ref) {
        kc_buf_result m = *br;
        kc_check_expect(b, t->dtype, out, ref, t->numel, &m);
        m.pass = m.pass && br->pass;
        *br = m;
    } else if (br->writable) {
        br->pass = br->pass && br->nan == 0 && br->inf == 0;
    }
    free(ref);
}

/* An mlx_metal_kernel case runs as the plain case of its generated kernel. */
static int run_mlx(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_result *r, char *err, size_t errlen) {
    kc_case *L = kc_mlx_lower(c, o->seed, err, errlen);
    if (!L) return -1;
    kc_mlx *m = L->mlx;
    L->mlx = NULL;
    int rc = kc_run(d, L, o, r, err, errlen);
    L->mlx = m;
    kc_free(L);
    return rc;
}

int kc_run(mtl_device *d, const kc_case *c, const kc_run_opts *o, kc_result *r, char *err, size_t errlen) {
    if (c->mlx) return run_mlx(d, c, o, r, err, errlen);
    kc_state *s = calloc(1, sizeof *s);
    memset(r, 0, sizeof *r);
    if (!s) return snprintf(err, errlen, "out of memory"), -1;
    s->poison = o->poison ? o->poison : KC_POISON_NAN;
    int rc = prepare(d, c, o, s, err, errlen);
    if (rc == 0) rc = run_iters(d, c, o, s, r, err, errlen);
    if (rc == 0) {
        err[0] = '\0';
        r->nbufs = c->nbufs;
        r->pass = r->deterministic;
        for (int i = 0; i < c->nbufs && !err[0]; i++) {
            check_buffer(c, i, s, &r->bufs[i], err, errlen);
            r->pass = r->pass && r->bufs[i].pass;
        }
        if (err[0]) rc = -1;
    } else if (rc == 1) {
        r->pass = 0;
        rc = 0;
    }
    state_free(s, c);
    free(s);
    return rc;
}
