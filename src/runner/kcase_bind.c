/* kcase_bind.c — a kernel case bound to its compiled kernel (kcase_bind.h). */
#include <stdio.h>
#include <string.h>

#include "runner/kcase_bind.h"

/* "x, w, out": the function's buffer parameters, for messages. */
static void param_list(const mtl_argument *args, int nargs, int kind, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind != kind) continue;
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", l ? ", " : "", args[i].name);
    }
    if (!out[0]) snprintf(out, n, "none");
}

/* The case buffer parameter a binds to: a "bind" of the launch, a buffer with that
 * "index", or the buffer of that name without one; -1 if none. */
static int buffer_for(const kc_case *c, const kc_launch *l, const mtl_argument *a) {
    for (int i = 0; i < l->nbinds; i++)
        if (strcmp(l->binds[i].param, a->name) == 0) return kc_find_buffer(c, l->binds[i].buffer);
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].index == a->index) return i;
    int i = kc_find_buffer(c, a->name);
    return i >= 0 && c->bufs[i].index < 0 ? i : -1;
}

static int tgmem_for(const kc_dispatch *d, int index) {
    for (int i = 0; i < d->ntgmem; i++)
        if (d->tgmem[i].index == index) return i;
    return -1;
}

/* "dispatch" or "dispatches[1].dispatch": where messages point. */
static void dispatch_key(const kc_case *c, int launch, char *out, size_t n) {
    if (c->sequence) snprintf(out, n, "dispatches[%d].dispatch", launch);
    else snprintf(out, n, "dispatch");
}

static int check_limits(const kc_case *c, int launch, const char *function, const mtl_argument *args, int nargs,
                        unsigned max_threads, char *err, size_t errlen) {
    const kc_dispatch *d = &c->launches[launch].dispatch;
    char key[64], names[512];
    dispatch_key(c, launch, key, sizeof key);
    uint64_t threads = (uint64_t)d->tg[0] * d->tg[1] * d->tg[2];
    if (max_threads && threads > max_threads) {
        snprintf(err, errlen, "%s: %s.threadgroup: %llu threads is over '%s''s maxTotalThreadsPerThreadgroup (%u): use at most %u",
                 c->path, key, (unsigned long long)threads, function, max_threads, max_threads);
        return -1;
    }
    for (int i = 0; i < d->ntgmem; i++) {
        int ok = 0;
        for (int k = 0; k < nargs && !ok; k++) ok = args[k].kind == MTL_ARG_THREADGROUP && args[k].index == d->tgmem[i].index;
        if (!ok) {
            param_list(args, nargs, MTL_ARG_THREADGROUP, names, sizeof names);
            snprintf(err, errlen, "%s: %s.threadgroup_memory.%d: '%s' has no [[threadgroup(%d)]] parameter "
                     "(its threadgroup parameters: %s): drop it", c->path, key, d->tgmem[i].index, function,
                     d->tgmem[i].index, names);
            return -1;
        }
    }
    return 0;
}

int kc_bind_launch(const kc_case *c, int launch, const char *function, const mtl_argument *args, int nargs,
                   unsigned max_threads, kc_binding *out, int *nout, char *err, size_t errlen) {
    const kc_launch *l = &c->launches[launch];
    char key[64], names[512];
    *nout = 0;
    if (check_limits(c, launch, function, args, nargs, max_threads, err, errlen) < 0) return -1;
    for (int k = 0; k < nargs; k++) {
        const mtl_argument *a = &args[k];
        kc_binding *b = &out[(*nout)++];
        memset(b, 0, sizeof *b);
        b->kind = a->kind;
        b->index = a->index;
        b->writable = !a->read_only;
        b->buffer = -1;
        b->arg = a;
        snprintf(b->param, sizeof b->param, "%s", a->name);
        if (a->kind == MTL_ARG_THREADGROUP) {
            int t = tgmem_for(&l->dispatch, a->index);
            dispatch_key(c, launch, key, sizeof key);
            if (t < 0) {
                snprintf(err, errlen, "%s: %s.threadgroup_memory: '%s' declares threadgroup parameter '%s' "
                         "[[threadgroup(%d)]]: give its length, \"%d\": BYTES", c->path, key, function, a->name,
                         a->index, a->index);
                return -1;
            }
            b->tg_bytes = l->dispatch.tgmem[t].bytes;
            continue;
        }
        if ((b->buffer = buffer_for(c, l, a)) < 0) {
            param_list(args, nargs, MTL_ARG_BUFFER, names, sizeof names);
            snprintf(err, errlen, "%s: buffers: parameter '%s' [[buffer(%d)]] of '%s' is not bound: add \"%s\" to "
                     "\"buffers\" (its buffer parameters: %s)", c->path, a->name, a->index, function, a->name, names);
            return -1;
        }
    }
    return 0;
}

int kc_bind_check_case(const kc_case *c, kc_binding *const *binds, const int *nbinds, int *writable, char *err,
                       size_t errlen) {
    for (int i = 0; i < c->nbufs; i++) {
        int used = 0;
        writable[i] = 0;
        for (int l = 0; l < c->nlaunches; l++)
            for (int k = 0; k < nbinds[l]; k++)
                if (binds[l][k].kind == MTL_ARG_BUFFER && binds[l][k].buffer == i) {
                    used = 1;
                    writable[i] |= binds[l][k].writable;
                }
        const kc_buffer *b = &c->bufs[i];
        if (!used) {
            snprintf(err, errlen, "%s: buffers.%s: the kernel has no buffer parameter of that name%s: drop it or "
                     "rename it to a parameter", c->path, b->name, b->index >= 0 ? " or index" : "");
            return -1;
        }
        if (b->expect.kind != KC_EXPECT_NONE && !writable[i]) {
            snprintf(err, errlen, "%s: buffers.%s.expect: the kernel cannot write %s (a const parameter): expect goes on "
                     "an output", c->path, b->name, b->name);
            return -1;
        }
    }
    return 0;
}
