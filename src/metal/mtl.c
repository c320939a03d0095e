/* mtl.c — Metal objects driven from plain C through objc message sends.
 *
 * Ownership follows Apple's rules: objects from new... and alloc are ours (+1) and are
 * released in the *_free functions; everything else (command buffers, encoders,
 * strings, errors) is autoreleased, so each run is wrapped in an autorelease pool:
 * NSAutoreleasePool on every platform (where every device's autoreleased objects go).
 *
 * Any MTLDevice is driven the same way (the caller creates it: mtl_device_new).  What
 * a device offers beyond Metal's API (a command buffer's findings, its own classes
 * for the objects a host instantiates, fast math having no effect, no GPU capture)
 * is asked for with the gdn_* extension selectors documented in
 * src/swmetal/swmetal.h, through objc_responds (core/objc_call.h) as Metal's
 * optional features are; a device without them is taken to be a GPU.
 *
 * Every selector, argument type and enum value below is Metal's as declared in its
 * headers (MTLDevice.h, MTLCommandBuffer.h, MTLCounters.h, MTLComputePass.h,
 * MTLCaptureManager.h; metal-cpp's Metal/MTL*.hpp are a readable copy).  Metal's
 * headers are Objective-C, so the few C-level declarations needed are written out
 * here with Apple's prototypes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metal/mtl.h"

#include "core/objc_call.h"
#include "msl/msl_include.h"

#if defined(__APPLE__)
/* MTLCounters.h: MTL_EXTERN MTLCommonCounterSet const MTLCommonCounterSetTimestamp,
 * where MTLCommonCounterSet is NSString *. */
extern id const MTLCommonCounterSetTimestamp;
#endif

/* Apple's enum values. */
enum { MTL_RESOURCE_STORAGE_SHARED = 0, MTL_RESOURCE_STORAGE_PRIVATE = 2 << 4, MTL_CB_STATUS_ERROR = 5 };
/* Function constants read from one function's declarations. */
#define MTL_MAX_DECLARED_CONSTANTS 256
/* MTLMathMode and MTLMathFloatingPointFunctions (NSInteger; macOS 15). */
enum { MTL_MATH_MODE_SAFE = 0, MTL_MATH_MODE_FAST = 2 };
enum { MTL_MATH_FUNCTIONS_FAST = 0, MTL_MATH_FUNCTIONS_PRECISE = 1 };
/* MTLCounterSamplingPoint (NSUInteger), MTLStorageMode (NSUInteger),
 * MTLCaptureDestination (NSInteger). */
enum { MTL_COUNTER_SAMPLING_AT_STAGE_BOUNDARY = 0 };
enum { MTL_STORAGE_MODE_SHARED = 0 };
enum { MTL_CAPTURE_DESTINATION_GPU_TRACE_DOCUMENT = 2 };
/* MTLCounters.h: #define MTLCounterErrorValue ((uint64_t)~0ULL),
 * #define MTLCounterDontSample ((NSUInteger)-1). */
#define MTL_COUNTER_ERROR_VALUE (~(uint64_t)0)
#define MTL_COUNTER_DONT_SAMPLE ((NSUInteger)-1)

/* MTLGPUFamily (NSInteger) values gdnbench reports. */
static const struct {
    const char *name;
    NSInteger value;
} gpu_families[] = {
    {"Apple7", 1007}, {"Apple8", 1008}, {"Apple9", 1009}, {"Apple10", 1010}, {"Metal3", 5001},
};

struct mtl_device {
    id device;
    id queue;
    char name[128];
    /* Stage timestamps: probed on first use.  sample_buffer holds two samples per
     * pass (start and end of encoder) for up to MTL_MAX_TIMED_PASSES passes. */
    int counters_probed;
    id sample_buffer;
    char counters_why[200];
    dev_finding *findings;   /* of the last failed mtl_run (a device with gdn_findings:) */
    int nfindings;
};

struct mtl_library {
    id library;
    int fast_math; /* the code was compiled with fast math */
};

struct mtl_pipeline {
    id pipeline;
    unsigned max_threads;
    int nargs;                         /* -1: the device gave no reflection */
    mtl_argument args[MTL_MAX_ARGUMENTS];
};

struct mtl_buffer {
    id buffer;
    void *contents;
    size_t length;
};

static void release(id obj) {
    if (obj) MSG0(void, obj, "release");
}

static id pool_push(void) { return objc_pool_push(); }

static void pool_pop(id pool) { objc_pool_pop(pool); }

static id nsstring(const char *s) {
    return MSG1(id, objc_class_named("NSString"), "stringWithUTF8String:", const char *, s);
}

static const char *cstring(id s) { return s ? MSG0(const char *, s, "UTF8String") : NULL; }

/* Whether obj answers sel: the object itself is asked where it can be (a debug
 * layer's or capture's wrapper forwards), else its class (objc_call.h). */
static int responds(id obj, const char *sel) { return objc_responds(obj, sel); }

/* A class the host instantiates and hands to the device: the device's own when it
 * names one (gdn_metalClassNamed:; on a Mac the MTL names are Metal.framework's
 * classes, which only Metal's devices take), else Metal's. */
static id device_class(const mtl_device *d, const char *metal_name) {
    if (responds(d->device, "gdn_metalClassNamed:"))
        return (id)MSG1(Class, d->device, "gdn_metalClassNamed:", const char *, metal_name);
    return objc_class_named(metal_name);
}

/* A BOOL extension selector of the device; `otherwise` when it does not answer it. */
static int device_says(const mtl_device *d, const char *sel, int otherwise) {
    return responds(d->device, sel) ? MSG0(BOOL, d->device, sel) != 0 : otherwise;
}

/* Copies an NSError's description into err (first line only). */
static void error_text(id error, const char *what, char *err, size_t errlen) {
    const char *msg = error ? cstring(MSG0(id, error, "localizedDescription")) : NULL;
    snprintf(err, errlen, "%s%s%s", what, msg ? ": " : "", msg ? msg : "");
    for (char *p = err; *p; p++)
        if (*p == '\n') *p = ' ';
}

mtl_device *mtl_device_new(id device, char *err, size_t errlen) {
    if (!device) {
        snprintf(err, errlen, "no Metal device");
        return NULL;
    }
    mtl_device *d = calloc(1, sizeof *d);
    if (!d) {
        release(device);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->device = device;
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
    release(d->sample_buffer);
    release(d->queue);
    release(d->device);
    free(d->findings);
    free(d);
}

int mtl_device_take_findings(mtl_device *d, dev_finding **out) {
    *out = d->findings;
    int n = d->nfindings;
    d->findings = NULL;
    d->nfindings = 0;
    return n;
}

/* Keeps a copy of a failed command buffer's findings (gdn_findings:: what the
 * device's checks found). */
static void keep_findings(mtl_device *d, id cb) {
    int n = 0;
    const dev_finding *f =
        responds(cb, "gdn_findings:") ? MSG1(const dev_finding *, cb, "gdn_findings:", int *, &n) : NULL;
    free(d->findings);
    d->findings = NULL;
    d->nfindings = 0;
    if (!f || n <= 0) return;
    d->findings = malloc(sizeof *f * (size_t)n);
    if (!d->findings) return;
    memcpy(d->findings, f, sizeof *f * (size_t)n);
    d->nfindings = n;
}

id mtl_device_object(const mtl_device *d) { return d->device; }

const char *mtl_device_name(const mtl_device *d) { return d->name; }

int mtl_device_fast_math_applies(const mtl_device *d) { return device_says(d, "gdn_fastMathApplies", 1); }

/* Metal compiles with fast math unless told otherwise.  macOS 15 split the BOOL
 * fastMathEnabled into mathMode and mathFloatingPointFunctions (fast math off =
 * safe mode + the precise:: functions, as MSL's -fno-fast-math); macOS 14 has only
 * the BOOL. */
static void set_fast_math(id opts, int on) {
    if (responds(opts, "setMathMode:")) {
        MSG1(void, opts, "setMathMode:", NSInteger, on ? MTL_MATH_MODE_FAST : MTL_MATH_MODE_SAFE);
        MSG1(void, opts, "setMathFloatingPointFunctions:", NSInteger,
             on ? MTL_MATH_FUNCTIONS_FAST : MTL_MATH_FUNCTIONS_PRECISE);
    } else {
        MSG1(void, opts, "setFastMathEnabled:", BOOL, on ? 1 : 0);
    }
}

mtl_library *mtl_library_new(mtl_device *d, const char *source, const char *filename, const msl_source_opts *so,
                             int fast_math, char *err, size_t errlen) {
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
    id opts = MSG0(id, MSG0(id, device_class(d, "MTLCompileOptions"), "alloc"), "init");
    if (!opts) {
        snprintf(err, errlen, "%s: cannot create MTLCompileOptions", d->name);
        pool_pop(pool);
        free(l);
        return NULL;
    }
    set_fast_math(opts, fast_math);
    /* Metal has no place for a file name: the expanded source's #line 1 "file" is
     * where a device that reports source lines finds it. */
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
    l->fast_math = fast_math && mtl_device_fast_math_applies(d);
    pool_pop(pool);
    return l;
}

int mtl_library_fast_math(const mtl_library *l) { return l->fast_math; }

/* MTLLibrary.functionNames: an NSArray of NSString. */
int mtl_library_function_count(const mtl_library *l) {
    id pool = pool_push();
    id names = MSG0(id, l->library, "functionNames");
    int n = names ? (int)MSG0(NSUInteger, names, "count") : 0;
    pool_pop(pool);
    return n;
}

int mtl_library_function_name(const mtl_library *l, int i, char *buf, size_t n) {
    if (n == 0 || i < 0 || i >= mtl_library_function_count(l)) return -1;
    id pool = pool_push();
    id names = MSG0(id, l->library, "functionNames");
    const char *name = cstring(MSG1(id, names, "objectAtIndex:", NSUInteger, (NSUInteger)i));
    snprintf(buf, n, "%s", name ? name : "");
    pool_pop(pool);
    return name ? 0 : -1;
}

int mtl_library_has_function(const mtl_library *l, const char *function) {
    char name[256];
    int count = mtl_library_function_count(l);
    for (int i = 0; i < count; i++)
        if (mtl_library_function_name(l, i, name, sizeof name) == 0 && strcmp(name, function) == 0) return 1;
    return 0;
}

void mtl_library_free(mtl_library *l) {
    if (!l) return;
    release(l->library);
    free(l);
}

/* The function constants `fn` declares (MTLFunction.functionConstantsDictionary:
 * name -> MTLFunctionConstant), their indices and MTLDataTypes into idx/type; how
 * many (0 when the function does not say).  Apple's documentation: query the
 * nonspecialised function newFunctionWithName: returns; values for constants the
 * function does not use are ignored.  Inside the caller's pool. */
static int declared_constants(id fn, NSUInteger *idx, NSUInteger *type, const char **names, int max) {
    id dict = responds(fn, "functionConstantsDictionary") ? MSG0(id, fn, "functionConstantsDictionary") : NULL;
    id all = dict ? MSG0(id, dict, "allValues") : NULL;
    NSUInteger n = all ? MSG0(NSUInteger, all, "count") : 0;
    int k = 0;
    for (NSUInteger i = 0; i < n && k < max; i++) {
        id c = MSG1(id, all, "objectAtIndex:", NSUInteger, i);
        if (!c) continue;
        idx[k] = MSG0(NSUInteger, c, "index");
        id name = MSG0(id, c, "name");
        names[k] = name ? MSG0(const char *, name, "UTF8String") : NULL;
        type[k++] = MSG0(NSUInteger, c, "type");
    }
    return k;
}

/* Constant c given by name: the index and type the function declares for that name;
 * -1 with err listing the declared names when it has none of that name. */
static int set_constant(id values, const mtl_constant *c, const char *function, const NSUInteger *idx,
                        const NSUInteger *type, const char *const *names, int ntypes, char *err, size_t errlen);
static int set_named_constant(id values, const mtl_constant *c, const char *function, const NSUInteger *idx,
                              const NSUInteger *type, const char *const *names, int ntypes, char *err, size_t errlen) {
    char known[256] = "";
    for (int k = 0; k < ntypes; k++) {
        if (names[k] && strcmp(names[k], c->name) == 0) {
            mtl_constant by_index = *c;
            by_index.index = (int)idx[k];
            return set_constant(values, &by_index, function, idx, type, names, ntypes, err, errlen);
        }
        size_t l = strlen(known);
        snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", names[k] ? names[k] : "?");
    }
    snprintf(err, errlen, "function constant '%.63s': '%s' declares no constant of that name (it declares: %s)", c->name,
             function, ntypes ? known : "none");
    return -1;
}

/* Sets constant c as the type the function declares for its index (ntypes entries of
 * idx/type); an index it does not declare (Metal ignores its value) as the value's
 * form says: "true"/"false" bool, integer int, else float.  -1 with err set when the
 * value does not fit the declared type. */
static int set_constant(id values, const mtl_constant *c, const char *function, const NSUInteger *idx,
                        const NSUInteger *type, const char *const *names, int ntypes, char *err, size_t errlen) {
    const char *v = c->value;
    unsigned char bytes[8];
    NSUInteger t;
    int k = 0;
    if (c->index < 0) return set_named_constant(values, c, function, idx, type, names, ntypes, err, errlen);
    while (k < ntypes && idx[k] != (NSUInteger)c->index) k++;
    if (k < ntypes) {
        char why[200];
        t = type[k];
        if (mtl_constant_encode(v, t, bytes, why, sizeof why) != 0) {
            const char *tn = mtl_data_type_name(t);
            snprintf(err, errlen, "function constant %d=%s: '%s' declares it as %s: %s", c->index, v, function,
                     tn ? tn : "another type", why);
            return -1;
        }
    } else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
        t = MTL_DATA_TYPE_BOOL, bytes[0] = v[0] == 't';
    } else if (strpbrk(v, ".eE")) {
        float f = strtof(v, NULL);
        t = MTL_DATA_TYPE_FLOAT, memcpy(bytes, &f, sizeof f);
    } else {
        int i = (int)strtol(v, NULL, 0);
        t = MTL_DATA_TYPE_INT, memcpy(bytes, &i, sizeof i);
    }
    MSG3(void, values, "setConstantValue:type:atIndex:", const void *, bytes, NSUInteger, t, NSUInteger,
         (NSUInteger)c->index);
    return 0;
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
    int exists = 0; /* the function is in the library (its specialisation may still fail) */
    if (nconsts > 0) {
        /* the unspecialised function says what type each constant is */
        NSUInteger idx[MTL_MAX_DECLARED_CONSTANTS], type[MTL_MAX_DECLARED_CONSTANTS];
        const char *names[MTL_MAX_DECLARED_CONSTANTS];
        id plain = MSG1(id, l->library, "newFunctionWithName:", id, nsstring(function));
        int ntypes = plain ? declared_constants(plain, idx, type, names, MTL_MAX_DECLARED_CONSTANTS) : 0;
        exists = plain != NULL;
        release(plain);
        /* (no such function: asked again below, for the device's own error text) */
        id values = MSG0(id, MSG0(id, device_class(d, "MTLFunctionConstantValues"), "alloc"), "init");
        if (!values) {
            snprintf(err, errlen, "%s: cannot create MTLFunctionConstantValues", d->name);
            goto fail;
        }
        int ok = 1;
        for (int i = 0; i < nconsts && ok; i++)
            ok = set_constant(values, &consts[i], function, idx, type, names, ntypes, err, errlen) == 0;
        if (!ok) {
            release(values);
            goto fail;
        }
        fn = MSG3(id, l->library, "newFunctionWithName:constantValues:error:", id, nsstring(function), id, values, id *,
                  &error);
        release(values);
    } else {
        fn = MSG1(id, l->library, "newFunctionWithName:", id, nsstring(function));
    }
    if (!fn) {
        char what[200];
        if (exists) snprintf(what, sizeof what, "cannot specialise '%s' with its function constants", function);
        else snprintf(what, sizeof what, "kernel function '%s' not found in the shader (check --function)", function);
        error_text(error, what, err, errlen);
        goto fail;
    }
    p->nargs = -1;
    if (responds(d->device, "newComputePipelineStateWithFunction:options:reflection:error:")) {
        id reflection = NULL; /* autoreleased; MTLPipelineOptionArgumentInfo | BufferTypeInfo */
        p->pipeline = MSG4(id, d->device, "newComputePipelineStateWithFunction:options:reflection:error:", id, fn,
                           NSUInteger, 3, id *, &reflection, id *, &error);
        if (p->pipeline && reflection) p->nargs = mtl_reflect_arguments(reflection, p->args, MTL_MAX_ARGUMENTS);
    } else {
        p->pipeline = MSG2(id, d->device, "newComputePipelineStateWithFunction:error:", id, fn, id *, &error);
    }
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

int mtl_pipeline_arguments(const mtl_pipeline *p, const mtl_argument **out) {
    *out = p->args;
    return p->nargs;
}

unsigned mtl_pipeline_max_threads(const mtl_pipeline *p) { return p->max_threads; }

static mtl_buffer *buffer_new(mtl_device *d, size_t length, int private_storage, char *err, size_t errlen) {
    mtl_buffer *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    NSUInteger opts = private_storage ? MTL_RESOURCE_STORAGE_PRIVATE : MTL_RESOURCE_STORAGE_SHARED;
    /* a private buffer is only reached by blits, whose sizes are whole words */
    size_t alloc = private_storage ? mtl_blit_length(length) : length;
    b->buffer = MSG2(id, d->device, "newBufferWithLength:options:", NSUInteger, (NSUInteger)(alloc ? alloc : 4),
                     NSUInteger, opts);
    if (!b->buffer) {
        snprintf(err, errlen, "%s: cannot allocate a %.1f MB buffer: reduce the shape", d->name, (double)length / 1e6);
        free(b);
        return NULL;
    }
    /* NULL for a private buffer on a GPU (MTLBuffer.contents); a device with only host
     * memory gives its memory, and no blit is needed. */
    b->contents = MSG0(void *, b->buffer, "contents");
    b->length = length;
    return b;
}

mtl_buffer *mtl_buffer_new(mtl_device *d, size_t length, char *err, size_t errlen) {
    return buffer_new(d, length, 0, err, errlen);
}

mtl_buffer *mtl_buffer_new_private(mtl_device *d, size_t length, char *err, size_t errlen) {
    return buffer_new(d, length, 1, err, errlen);
}

size_t mtl_blit_length(size_t n) { return n > SIZE_MAX - 3 ? n : (n + 3) & ~(size_t)3; }

/* One blit between a private buffer and a shared staging buffer, committed and
 * waited for; n is a multiple of 4 (copyFromBuffer:...size: on macOS). */
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
    /* The blit moves whole words: the private buffer was allocated rounded up (buffer_new),
     * and a write whose last word is partly past n first reads that word back, so the
     * bytes after n keep their contents. */
    size_t words = mtl_blit_length(n);
    id pool = pool_push();
    id staging = MSG2(id, d->device, "newBufferWithLength:options:", NSUInteger, (NSUInteger)words, NSUInteger,
                      (NSUInteger)MTL_RESOURCE_STORAGE_SHARED);
    int rc = -1;
    if (!staging) {
        snprintf(err, errlen, "%s: cannot allocate a %.1f MB staging buffer for a private buffer", d->name,
                 (double)n / 1e6);
    } else {
        void *p = MSG0(void *, staging, "contents");
        rc = to_device && words != n ? blit_copy(d, b->buffer, staging, words, err, errlen) : 0;
        if (rc == 0 && to_device) memcpy(p, host, n);
        if (rc == 0)
            rc = to_device ? blit_copy(d, staging, b->buffer, words, err, errlen)
                           : blit_copy(d, b->buffer, staging, words, err, errlen);
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
    if (x->threads) MSG2(void, enc, "dispatchThreads:threadsPerThreadgroup:", MTLSize, grid, MTLSize, tg);
    else MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, grid, MTLSize, tg);
}

/* ---- stage timestamps: counter sampling at stage boundaries ---- */

/* Whether a counter set is the timestamp set: named MTLCommonCounterSetTimestamp
 * where Metal.framework declares it, or "timestamp" (its value, for a device that
 * does not link Metal's constant). */
static int is_timestamp_set(const char *name) {
    if (!name) return 0;
#if defined(__APPLE__)
    const char *metal = cstring(MTLCommonCounterSetTimestamp);
    if (metal && strcmp(name, metal) == 0) return 1;
#endif
    return strcmp(name, "timestamp") == 0;
}

static void probe_counters(mtl_device *d) {
    d->counters_probed = 1;
    id pool = pool_push();
    const char *why = NULL;
    id set = NULL;
    if (!responds(d->device, "supportsCounterSampling:") || !responds(d->device, "counterSets") ||
        !MSG1(BOOL, d->device, "supportsCounterSampling:", NSUInteger, (NSUInteger)MTL_COUNTER_SAMPLING_AT_STAGE_BOUNDARY)) {
        why = "the device cannot sample counters at stage boundaries";
        goto done;
    }
    id sets = MSG0(id, d->device, "counterSets");
    NSUInteger nsets = sets ? MSG0(NSUInteger, sets, "count") : 0;
    for (NSUInteger i = 0; i < nsets && !set; i++) {
        id candidate = MSG1(id, sets, "objectAtIndex:", NSUInteger, i);
        const char *name = candidate ? cstring(MSG0(id, candidate, "name")) : NULL;
        if (is_timestamp_set(name)) set = candidate;
    }
    if (!set) {
        why = "the device has no timestamp counter set";
        goto done;
    }
    id cls = device_class(d, "MTLCounterSampleBufferDescriptor");
    id desc = cls ? MSG0(id, MSG0(id, cls, "alloc"), "init") : NULL;
    if (!desc) {
        why = "cannot create an MTLCounterSampleBufferDescriptor";
        goto done;
    }
    MSG1(void, desc, "setCounterSet:", id, set);
    MSG1(void, desc, "setSampleCount:", NSUInteger, (NSUInteger)(2 * MTL_MAX_TIMED_PASSES));
    MSG1(void, desc, "setStorageMode:", NSUInteger, (NSUInteger)MTL_STORAGE_MODE_SHARED);
    MSG1(void, desc, "setLabel:", id, nsstring("gdnbench stage timestamps"));
    id error = NULL;
    d->sample_buffer = MSG2(id, d->device, "newCounterSampleBufferWithDescriptor:error:", id, desc, id *, &error);
    release(desc);
    if (!d->sample_buffer) error_text(error, "cannot make a counter sample buffer", d->counters_why, sizeof d->counters_why);
done:
    if (why) snprintf(d->counters_why, sizeof d->counters_why, "%s", why);
    pool_pop(pool);
}

int mtl_device_stage_counters(mtl_device *d, char *why, size_t whylen) {
    if (!d->counters_probed) probe_counters(d);
    if (!d->sample_buffer && why && whylen) snprintf(why, whylen, "%s", d->counters_why);
    return d->sample_buffer != NULL;
}

/* A compute encoder whose pass samples the timestamp counters into slots start and
 * end (MTL_COUNTER_DONT_SAMPLE: no sample there). */
static id sampled_encoder(mtl_device *d, id cb, NSUInteger start, NSUInteger end) {
    if (start == MTL_COUNTER_DONT_SAMPLE && end == MTL_COUNTER_DONT_SAMPLE) return MSG0(id, cb, "computeCommandEncoder");
    id pass = MSG0(id, device_class(d, "MTLComputePassDescriptor"), "computePassDescriptor");
    id attachments = pass ? MSG0(id, pass, "sampleBufferAttachments") : NULL;
    id a = attachments ? MSG1(id, attachments, "objectAtIndexedSubscript:", NSUInteger, (NSUInteger)0) : NULL;
    if (!a) return NULL;
    MSG1(void, a, "setSampleBuffer:", id, d->sample_buffer);
    MSG1(void, a, "setStartOfEncoderSampleIndex:", NSUInteger, start);
    MSG1(void, a, "setEndOfEncoderSampleIndex:", NSUInteger, end);
    return MSG1(id, cb, "computeCommandEncoderWithDescriptor:", id, pass);
}

/* Pass k's samples (slots 2k, 2k+1) into times.  GPU ticks become CPU nanoseconds
 * through the two sampleTimestamps:gpuTimestamp: pairs taken before encoding and
 * after completion (Apple's "Converting GPU timestamps into CPU time").  A sample
 * that is MTLCounterErrorValue, outside the two pairs (a slot not written this run
 * still holds an older run's value) or ends before it starts makes the whole
 * result unusable: returns -1 and the caller times stages another way. */
static int stage_times(mtl_device *d, int n, uint64_t c0, uint64_t g0, uint64_t c1, uint64_t g1, mtl_timing *t) {
    if (g1 <= g0 || c1 <= c0) return -1;
    size_t bytes = sizeof(uint64_t) * 2 * (size_t)n;
    NSRange range = {0, (NSUInteger)(2 * n)};
    id data = MSG1(id, d->sample_buffer, "resolveCounterRange:", NSRange, range);
    if (!data || MSG0(NSUInteger, data, "length") < bytes) return -1;
    uint64_t v[2 * MTL_MAX_TIMED_PASSES];
    memcpy(v, MSG0(const void *, data, "bytes"), bytes);
    double ns_per_tick = (double)(c1 - c0) / (double)(g1 - g0);
    for (int k = 0; k < n; k++) {
        uint64_t s = v[2 * k], e = v[2 * k + 1];
        if (s == MTL_COUNTER_ERROR_VALUE || e == MTL_COUNTER_ERROR_VALUE || s < g0 || e > g1 || e < s) return -1;
        t->stage_us[k] = (double)(e - s) * ns_per_tick * 1e-3;
        t->stage_start_s[k] = ((double)c0 + (double)(s - g0) * ns_per_tick) * 1e-9;
        t->stage_end_s[k] = ((double)c0 + (double)(e - g0) * ns_per_tick) * 1e-9;
    }
    t->nstages = n;
    return 0;
}

int mtl_run_timed(mtl_device *d, const mtl_dispatch *ds, int n, int stage_counters, mtl_timing *t, char *err,
                  size_t errlen) {
    memset(t, 0, sizeof *t);
    free(d->findings);
    d->findings = NULL;
    d->nfindings = 0;
    size_t ncb = 0, cap = 0;
    for (int k = 0; k < n; k++) cap += ds[k].own_command_buffers ? (ds[k].repeat ? ds[k].repeat : 1) : 1;
    id *cbs = calloc(cap ? cap : 1, sizeof *cbs);
    if (!cbs) {
        snprintf(err, errlen, "out of memory for %zu command buffers", cap);
        return -1;
    }
    int sample = stage_counters && n > 0 && n <= MTL_MAX_TIMED_PASSES && mtl_device_stage_counters(d, NULL, 0);
    uint64_t c0 = 0, g0 = 0, c1 = 0, g1 = 0;
    id pool = pool_push();
    if (sample) MSG2(void, d->device, "sampleTimestamps:gpuTimestamp:", uint64_t *, &c0, uint64_t *, &g0);
    id cb = NULL;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        const mtl_dispatch *x = &ds[k];
        uint32_t reps = x->repeat ? x->repeat : 1;
        id enc = NULL;
        for (uint32_t r = 0; r < reps; r++) {
            if (!cb) cb = cbs[ncb++] = MSG0(id, d->queue, "commandBuffer");
            if (!enc) {
                /* Pass k's start sample opens its first encoder, its end sample closes
                 * its last: one encoder in all, or one per command buffer. */
                int first = r == 0, last = !x->own_command_buffers || r + 1 == reps;
                enc = sample ? sampled_encoder(d, cb, first ? (NSUInteger)(2 * k) : MTL_COUNTER_DONT_SAMPLE,
                                               last ? (NSUInteger)(2 * k + 1) : MTL_COUNTER_DONT_SAMPLE)
                             : MSG0(id, cb, "computeCommandEncoder");
                if (!enc) {
                    snprintf(err, errlen, "%s: cannot create a compute encoder", d->name);
                    rc = -1;
                    break;
                }
            }
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
    double first = 0, last = 0;
    for (size_t i = 0; i < ncb; i++) {
        MSG0(void, cbs[i], "waitUntilCompleted");
        if (rc == 0 && (NSInteger)MSG0(NSUInteger, cbs[i], "status") == MTL_CB_STATUS_ERROR) {
            error_text(MSG0(id, cbs[i], "error"), "the kernel failed on the device", err, errlen);
            keep_findings(d, cbs[i]);
            rc = -1;
        }
        double t0 = MSG0(double, cbs[i], "GPUStartTime"), t1 = MSG0(double, cbs[i], "GPUEndTime");
        if (i == 0 || t0 < first) first = t0;
        if (i == 0 || t1 > last) last = t1;
    }
    t->gpu_us = (last - first) * 1e6;
    t->gpu_start_s = first;
    t->gpu_end_s = last;
    if (sample && rc == 0) {
        MSG2(void, d->device, "sampleTimestamps:gpuTimestamp:", uint64_t *, &c1, uint64_t *, &g1);
        if (stage_times(d, n, c0, g0, c1, g1, t) != 0) t->nstages = 0;
    }
    pool_pop(pool);
    free(cbs);
    return rc;
}

int mtl_run(mtl_device *d, const mtl_dispatch *ds, int n, double *gpu_us, char *err, size_t errlen) {
    mtl_timing t;
    int rc = mtl_run_timed(d, ds, n, 0, &t, err, errlen);
    *gpu_us = t.gpu_us;
    return rc;
}

/* ---- what the device says about itself ---- */

int64_t mtl_device_recommended_working_set(mtl_device *d) {
    if (!responds(d->device, "recommendedMaxWorkingSetSize")) return -1;
    uint64_t v = MSG0(uint64_t, d->device, "recommendedMaxWorkingSetSize");
    return v > 0 && v <= (uint64_t)INT64_MAX ? (int64_t)v : -1;
}

int mtl_device_gpu_families(mtl_device *d, const char **names, int max) {
    if (!responds(d->device, "supportsFamily:")) return -1;
    int n = 0;
    for (size_t i = 0; i < sizeof gpu_families / sizeof gpu_families[0]; i++)
        if (n < max && MSG1(BOOL, d->device, "supportsFamily:", NSInteger, gpu_families[i].value))
            names[n++] = gpu_families[i].name;
    return n;
}

/* ---- GPU capture ---- */

int mtl_capture_start(mtl_device *d, const char *path, char *err, size_t errlen) {
    if (!device_says(d, "gdn_supportsGPUCapture", 1)) {
        snprintf(err, errlen, "a GPU capture needs --backend metal (the %s has no GPU trace to record)", d->name);
        return -1;
    }
    id pool = pool_push();
    int rc = -1;
    id manager = MSG0(id, objc_class_named("MTLCaptureManager"), "sharedCaptureManager");
    id desc = NULL;
    if (!manager || !MSG1(BOOL, manager, "supportsDestination:", NSInteger,
                          (NSInteger)MTL_CAPTURE_DESTINATION_GPU_TRACE_DOCUMENT)) {
        snprintf(err, errlen, "Metal cannot capture to a .gputrace file here: MTL_CAPTURE_ENABLED=1 must be set before "
                              "the device is created (gdnbench does this for --capture)");
        goto done;
    }
    id cls = objc_class_named("MTLCaptureDescriptor");
    desc = cls ? MSG0(id, MSG0(id, cls, "alloc"), "init") : NULL;
    id url = MSG1(id, objc_class_named("NSURL"), "fileURLWithPath:", id, nsstring(path));
    if (!desc || !url) {
        snprintf(err, errlen, "cannot describe a GPU capture to %s", path);
        goto done;
    }
    MSG1(void, desc, "setCaptureObject:", id, d->device);
    MSG1(void, desc, "setDestination:", NSInteger, (NSInteger)MTL_CAPTURE_DESTINATION_GPU_TRACE_DOCUMENT);
    MSG1(void, desc, "setOutputURL:", id, url);
    id error = NULL;
    if (!MSG2(BOOL, manager, "startCaptureWithDescriptor:error:", id, desc, id *, &error)) {
        char what[300];
        snprintf(what, sizeof what, "cannot start a GPU capture to %s", path);
        error_text(error, what, err, errlen);
        goto done;
    }
    rc = 0;
done:
    release(desc);
    pool_pop(pool);
    return rc;
}

void mtl_capture_stop(mtl_device *d) {
    if (!device_says(d, "gdn_supportsGPUCapture", 1)) return;
    id pool = pool_push();
    MSG0(void, MSG0(id, objc_class_named("MTLCaptureManager"), "sharedCaptureManager"), "stopCapture");
    pool_pop(pool);
}
