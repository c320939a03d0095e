/* mtl.c — Metal objects driven from plain C through objc message sends.
 *
 * Ownership follows Apple's rules: objects from new... and alloc are ours (+1) and are
 * released in the *_free functions; everything else (command buffers, encoders,
 * strings, errors) is autoreleased, so each run is wrapped in an autorelease pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metal/mtl.h"
#include "metal/objc_call.h"

#include "swmetal/msl_include.h"
#include "swmetal/swmtl.h"

#if defined(__APPLE__)
extern id MTLCreateSystemDefaultDevice(void);
#endif

/* Apple's enum values. */
enum { MTL_RESOURCE_STORAGE_SHARED = 0, MTL_RESOURCE_STORAGE_PRIVATE = 2 << 4, MTL_CB_STATUS_ERROR = 5 };
enum { MTL_TYPE_FLOAT = 3, MTL_TYPE_INT = 29, MTL_TYPE_BOOL = 53 };

struct mtl_device {
    id device;
    id queue;
    int software;
    char name[128];
};

struct mtl_library {
    id library;
};

struct mtl_pipeline {
    id pipeline;
    unsigned max_threads;
};

struct mtl_buffer {
    id buffer;
    void *contents;
    size_t length;
};

static void release(id obj) {
    if (obj) MSG0(void, obj, "release");
}

static id pool_push(void) {
    id pool = MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc");
    return MSG0(id, pool, "init");
}

static void pool_pop(id pool) { MSG0(void, pool, "drain"); }

static id nsstring(const char *s) {
    return MSG1(id, objc_class_named("NSString"), "stringWithUTF8String:", const char *, s);
}

static const char *cstring(id s) { return s ? MSG0(const char *, s, "UTF8String") : NULL; }

/* Copies an NSError's description into err (first line only). */
static void error_text(id error, const char *what, char *err, size_t errlen) {
    const char *msg = error ? cstring(MSG0(id, error, "localizedDescription")) : NULL;
    snprintf(err, errlen, "%s%s%s", what, msg ? ": " : "", msg ? msg : "");
    for (char *p = err; *p; p++)
        if (*p == '\n') *p = ' ';
}

mtl_device *mtl_device_open(const char *kind, char *err, size_t errlen) {
    mtl_device *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (strcmp(kind, "metal") == 0) {
#if defined(__APPLE__)
        d->device = MTLCreateSystemDefaultDevice();
        if (!d->device) {
            snprintf(err, errlen, "--backend metal: no Metal device (MTLCreateSystemDefaultDevice returned nil)");
            free(d);
            return NULL;
        }
#else
        snprintf(err, errlen, "--backend metal needs macOS with Metal.framework; on this host use --backend sw (the software Metal device)");
        free(d);
        return NULL;
#endif
    } else {
        d->device = swmtl_create_system_default_device();
        d->software = 1;
        if (!d->device) {
            snprintf(err, errlen, "--backend sw: the software Metal device could not start (see the message above)");
            free(d);
            return NULL;
        }
    }
    id pool = pool_push();
    const char *name = cstring(MSG0(id, d->device, "name"));
    snprintf(d->name, sizeof d->name, "%s", name ? name : "unknown Metal device");
    pool_pop(pool);
    d->queue = MSG0(id, d->device, "newCommandQueue");
    if (!d->queue) {
        snprintf(err, errlen, "%s: newCommandQueue failed", d->name);
        release(d->device);
        free(d);
        return NULL;
    }
    return d;
}

void mtl_device_free(mtl_device *d) {
    if (!d) return;
    release(d->queue);
    release(d->device);
    free(d);
}

const char *mtl_device_name(const mtl_device *d) { return d->name; }

int mtl_device_is_software(const mtl_device *d) { return d->software; }

mtl_library *mtl_library_new(mtl_device *d, const char *source, const char *filename, const msl_source_opts *so,
                             char *err, size_t errlen) {
    /* headers inlined here, for both devices: a real GPU's newLibraryWithSource: has
     * no include path and no file to be relative to */
    char *xerr = NULL;
    char *expanded = msl_expand_source(source, filename, so, MSL_EXPAND_KEEP_SYSTEM, &xerr);
    if (!expanded) {
        snprintf(err, errlen, "%s", xerr ? xerr : "out of memory");
        free(xerr);
        return NULL;
    }
    mtl_library *l = calloc(1, sizeof *l);
    if (!l) {
        free(expanded);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    id pool = pool_push();
    id error = NULL;
    id src = nsstring(expanded);
    free(expanded);
    id opts = MSG0(id, MSG0(id, objc_class_named("MTLCompileOptions"), "alloc"), "init");
    /* Metal has no place for a file name; the software device takes it on the side so
     * its diagnostics say "kkt.metal:12:5". */
    if (d->software) swmtl_set_source_name(filename);
    l->library = MSG3(id, d->device, "newLibraryWithSource:options:error:", id, src, id, opts, id *, &error);
    release(opts);
    if (!l->library) {
        char what[300];
        snprintf(what, sizeof what, "%s does not compile", filename ? filename : "MSL source");
        error_text(error, what, err, errlen);
        pool_pop(pool);
        free(l);
        return NULL;
    }
    pool_pop(pool);
    return l;
}

void mtl_library_free(mtl_library *l) {
    if (!l) return;
    release(l->library);
    free(l);
}

/* "true"/"false" -> bool, integer -> int, else float. */
static void set_constant(id values, const mtl_constant *c) {
    const char *v = c->value;
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        unsigned char b = v[0] == 't';
        MSG3(void, values, "setConstantValue:type:atIndex:", const void *, &b, NSUInteger, MTL_TYPE_BOOL, NSUInteger,
             (NSUInteger)c->index);
    } else if (strpbrk(v, ".eE")) {
        float f = strtof(v, NULL);
        MSG3(void, values, "setConstantValue:type:atIndex:", const void *, &f, NSUInteger, MTL_TYPE_FLOAT, NSUInteger,
             (NSUInteger)c->index);
    } else {
        int i = (int)strtol(v, NULL, 0);
        MSG3(void, values, "setConstantValue:type:atIndex:", const void *, &i, NSUInteger, MTL_TYPE_INT, NSUInteger,
             (NSUInteger)c->index);
    }
}

mtl_pipeline *mtl_pipeline_new(mtl_device *d, mtl_library *l, const char *function, const mtl_constant *consts,
                               int nconsts, char *err, size_t errlen) {
    mtl_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    id pool = pool_push();
    id error = NULL, fn = NULL;
    if (nconsts > 0) {
        id values = MSG0(id, MSG0(id, objc_class_named("MTLFunctionConstantValues"), "alloc"), "init");
        for (int i = 0; i < nconsts; i++) set_constant(values, &consts[i]);
        fn = MSG3(id, l->library, "newFunctionWithName:constantValues:error:", id, nsstring(function), id, values, id *,
                  &error);
        release(values);
    } else {
        fn = MSG1(id, l->library, "newFunctionWithName:", id, nsstring(function));
    }
    if (!fn) {
        char what[200];
        snprintf(what, sizeof what, "kernel function '%s' not found in the shader (check --function)", function);
        error_text(error, what, err, errlen);
        goto fail;
    }
    p->pipeline = MSG2(id, d->device, "newComputePipelineStateWithFunction:error:", id, fn, id *, &error);
    release(fn);
    if (!p->pipeline) {
        char what[200];
        snprintf(what, sizeof what, "cannot build a pipeline for '%s'", function);
        error_text(error, what, err, errlen);
        goto fail;
    }
    p->max_threads = (unsigned)MSG0(NSUInteger, p->pipeline, "maxTotalThreadsPerThreadgroup");
    pool_pop(pool);
    return p;
fail:
    pool_pop(pool);
    free(p);
    return NULL;
}

void mtl_pipeline_free(mtl_pipeline *p) {
    if (!p) return;
    release(p->pipeline);
    free(p);
}

unsigned mtl_pipeline_max_threads(const mtl_pipeline *p) { return p->max_threads; }

static mtl_buffer *buffer_new(mtl_device *d, size_t length, int private_storage, char *err, size_t errlen) {
    mtl_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* The software device has only host memory: its private buffers are shared ones. */
    NSUInteger opts = private_storage && !d->software ? MTL_RESOURCE_STORAGE_PRIVATE : MTL_RESOURCE_STORAGE_SHARED;
    b->buffer = MSG2(id, d->device, "newBufferWithLength:options:", NSUInteger, (NSUInteger)(length ? length : 4),
                     NSUInteger, opts);
    if (!b->buffer) {
        snprintf(err, errlen, "%s: cannot allocate a %.1f MB buffer: reduce the shape", d->name, (double)length / 1e6);
        free(b);
        return NULL;
    }
    b->contents = opts == MTL_RESOURCE_STORAGE_PRIVATE ? NULL : MSG0(void *, b->buffer, "contents");
    b->length = length;
    return b;
}

mtl_buffer *mtl_buffer_new(mtl_device *d, size_t length, char *err, size_t errlen) {
    return buffer_new(d, length, 0, err, errlen);
}

mtl_buffer *mtl_buffer_new_private(mtl_device *d, size_t length, char *err, size_t errlen) {
    return buffer_new(d, length, 1, err, errlen);
}

/* One blit between a private buffer and a shared staging buffer, committed and
 * waited for. */
static int blit_copy(mtl_device *d, id from, id to, size_t n, char *err, size_t errlen) {
    id cb = MSG0(id, d->queue, "commandBuffer");
    id blit = MSG0(id, cb, "blitCommandEncoder");
    MSG5(void, blit, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:", id, from, NSUInteger, 0, id, to,
         NSUInteger, 0, NSUInteger, (NSUInteger)n);
    MSG0(void, blit, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    if ((NSInteger)MSG0(NSUInteger, cb, "status") == MTL_CB_STATUS_ERROR) {
        error_text(MSG0(id, cb, "error"), "the blit to or from a private buffer failed", err, errlen);
        return -1;
    }
    return 0;
}

static int buffer_transfer(mtl_device *d, mtl_buffer *b, void *host, size_t n, int to_device, char *err,
                           size_t errlen) {
    if (n > b->length) {
        snprintf(err, errlen, "internal error: %zu bytes do not fit a %zu-byte buffer", n, b->length);
        return -1;
    }
    if (n == 0) return 0;
    if (b->contents) {
        if (to_device) memcpy(b->contents, host, n);
        else memcpy(host, b->contents, n);
        return 0;
    }
    id pool = pool_push();
    id staging = MSG2(id, d->device, "newBufferWithLength:options:", NSUInteger, (NSUInteger)n, NSUInteger,
                      (NSUInteger)MTL_RESOURCE_STORAGE_SHARED);
    int rc = -1;
    if (!staging) {
        snprintf(err, errlen, "%s: cannot allocate a %.1f MB staging buffer for a private buffer", d->name,
                 (double)n / 1e6);
    } else {
        void *p = MSG0(void *, staging, "contents");
        if (to_device) memcpy(p, host, n);
        rc = to_device ? blit_copy(d, staging, b->buffer, n, err, errlen) : blit_copy(d, b->buffer, staging, n, err, errlen);
        if (rc == 0 && !to_device) memcpy(host, p, n);
        release(staging);
    }
    pool_pop(pool);
    return rc;
}

int mtl_buffer_write(mtl_device *d, mtl_buffer *b, const void *src, size_t n, char *err, size_t errlen) {
    return buffer_transfer(d, b, (void *)src, n, 1, err, errlen);
}

int mtl_buffer_read(mtl_device *d, mtl_buffer *b, void *dst, size_t n, char *err, size_t errlen) {
    return buffer_transfer(d, b, dst, n, 0, err, errlen);
}

void mtl_buffer_free(mtl_buffer *b) {
    if (!b) return;
    release(b->buffer);
    free(b);
}

void *mtl_buffer_contents(mtl_buffer *b) { return b->contents; }

size_t mtl_buffer_length(const mtl_buffer *b) { return b->length; }

static void encode_dispatch(id enc, const mtl_dispatch *x, uint32_t rep) {
    MSG1(void, enc, "setComputePipelineState:", id, x->pipeline->pipeline);
    for (int i = 0; i < x->nbuffers; i++)
        MSG3(void, enc, "setBuffer:offset:atIndex:", id, x->buffers[i].buffer->buffer, NSUInteger,
             (NSUInteger)(x->buffers[i].offset + (size_t)rep * x->buffers[i].repeat_stride), NSUInteger,
             (NSUInteger)x->buffers[i].index);
    for (int i = 0; i < x->nbytes; i++)
        MSG3(void, enc, "setBytes:length:atIndex:", const void *, x->bytes[i].data, NSUInteger,
             (NSUInteger)x->bytes[i].length, NSUInteger, (NSUInteger)x->bytes[i].index);
    for (int i = 0; i < x->ntgmem; i++)
        MSG2(void, enc, "setThreadgroupMemoryLength:atIndex:", NSUInteger, (NSUInteger)x->tgmem[i].length, NSUInteger,
             (NSUInteger)x->tgmem[i].index);
    MTLSize grid = {x->grid[0], x->grid[1], x->grid[2]};
    MTLSize tg = {x->tg[0], x->tg[1], x->tg[2]};
    MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, grid, MTLSize, tg);
}

int mtl_run(mtl_device *d, const mtl_dispatch *ds, int n, double *gpu_us, char *err, size_t errlen) {
    size_t ncb = 0, cap = 0;
    for (int k = 0; k < n; k++) cap += ds[k].own_command_buffers ? (ds[k].repeat ? ds[k].repeat : 1) : 1;
    id *cbs = calloc(cap ? cap : 1, sizeof *cbs);
    if (!cbs) {
        snprintf(err, errlen, "out of memory for %zu command buffers", cap);
        return -1;
    }
    id pool = pool_push();
    id cb = NULL;
    for (int k = 0; k < n; k++) {
        const mtl_dispatch *x = &ds[k];
        uint32_t reps = x->repeat ? x->repeat : 1;
        id enc = NULL;
        for (uint32_t r = 0; r < reps; r++) {
            if (!cb) cb = cbs[ncb++] = MSG0(id, d->queue, "commandBuffer");
            if (!enc) enc = MSG0(id, cb, "computeCommandEncoder");
            encode_dispatch(enc, x, r);
            if (x->own_command_buffers) {
                /* Committed at once so the GPU starts while the next one is encoded. */
                MSG0(void, enc, "endEncoding");
                MSG0(void, cb, "commit");
                cb = enc = NULL;
            }
        }
        if (enc) MSG0(void, enc, "endEncoding");
    }
    if (cb) MSG0(void, cb, "commit");
    int rc = 0;
    double first = 0, last = 0;
    for (size_t i = 0; i < ncb; i++) {
        MSG0(void, cbs[i], "waitUntilCompleted");
        if (rc == 0 && (NSInteger)MSG0(NSUInteger, cbs[i], "status") == MTL_CB_STATUS_ERROR) {
            error_text(MSG0(id, cbs[i], "error"), "the kernel failed on the device", err, errlen);
            rc = -1;
        }
        double t0 = MSG0(double, cbs[i], "GPUStartTime"), t1 = MSG0(double, cbs[i], "GPUEndTime");
        if (i == 0 || t0 < first) first = t0;
        if (i == 0 || t1 > last) last = t1;
    }
    *gpu_us = (last - first) * 1e6;
    pool_pop(pool);
    free(cbs);
    return rc;
}
