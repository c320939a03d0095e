/* objc_device.c — the software device's Metal classes for resources: device,
 * MTLCompileOptions, MTLFunctionConstantValues, library, function, compute pipeline
 * state and buffer, plus the C entry points of swmetal.h for devices and libraries.
 *
 * Selector semantics follow Metal: new* return +1 objects; failures return nil and,
 * where the selector has an error: argument, an autoreleased NSError. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "swmetal/exec.h"
#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

#include "swmetal/checks.h"
#include "swmetal/exec_internal.h"

#define SW_ERROR_DOMAIN "SWMTLErrorDomain"

static Class device_class, options_class, constants_class, library_class, function_class, pipeline_class,
    buffer_class;

Class sw_mtl_buffer_class(void) { return buffer_class; }
Class sw_mtl_pipeline_class(void) { return pipeline_class; }

/* The file name a source names itself by: its first `#line 1 "name"` directive,
 * after the -D macros msl_expand_source puts first (Metal's API has no other place
 * for a file name).  Malloc'd; NULL when it names none (then "source.metal"). */
static char *source_name_of(const char *src) {
    const char *p = src;
    while (strncmp(p, "#define ", 8) == 0) {
        p = strchr(p, '\n');
        if (!p) return NULL;
        p++;
    }
    if (strncmp(p, "#line 1 \"", 9) != 0) return NULL;
    p += 9;
    size_t n = 0;
    char *name = malloc(strlen(p) + 1);
    if (!name) return NULL;
    for (; *p && *p != '"' && *p != '\n'; p++) {
        if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++; /* msl_include.c's put_quoted escapes */
        name[n++] = *p;
    }
    name[n] = '\0';
    if (*p != '"' || n == 0) {
        free(name);
        return NULL;
    }
    return name;
}

/* ---- MTLCompileOptions: accepted and recorded; fast math changes nothing on the
 * software device (its math is always the precise kind: gdn_fastMathApplies). ---- */

typedef struct sw_mtl_options {
    sw_obj base;
    BOOL fast_math;
    NSUInteger language_version;
    id macros;
} sw_mtl_options;

static void options_set_fast_math(id self, SEL cmd, BOOL on) { ((sw_mtl_options *)self)->fast_math = on; }
static BOOL options_fast_math(id self, SEL cmd) { return ((sw_mtl_options *)self)->fast_math; }
static void options_set_language_version(id self, SEL cmd, NSUInteger v) {
    ((sw_mtl_options *)self)->language_version = v;
}
static NSUInteger options_language_version(id self, SEL cmd) { return ((sw_mtl_options *)self)->language_version; }

static void options_set_macros(id self, SEL cmd, id macros) {
    sw_mtl_options *o = (sw_mtl_options *)self;
    sw_retain(macros);
    sw_release(o->macros);
    o->macros = macros;
}

static id options_macros(id self, SEL cmd) { return ((sw_mtl_options *)self)->macros; }

static id options_init(id self, SEL cmd) {
    ((sw_mtl_options *)self)->fast_math = 1; /* Metal's default */
    return self;
}

static void options_dealloc(id self, SEL cmd) {
    sw_release(((sw_mtl_options *)self)->macros);
    sw_obj_free(self);
}

static void options_methods(Class cls) {
    sw_method_add(cls, "init", SW_IMP(options_init), "@@:");
    sw_method_add(cls, "setFastMathEnabled:", SW_IMP(options_set_fast_math), "v@:C");
    sw_method_add(cls, "fastMathEnabled", SW_IMP(options_fast_math), "C@:");
    sw_method_add(cls, "setLanguageVersion:", SW_IMP(options_set_language_version), "v@:Q");
    sw_method_add(cls, "languageVersion", SW_IMP(options_language_version), "Q@:");
    sw_method_add(cls, "setPreprocessorMacros:", SW_IMP(options_set_macros), "v@:@");
    sw_method_add(cls, "preprocessorMacros", SW_IMP(options_macros), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(options_dealloc), "v@:");
}

/* ---- MTLFunctionConstantValues ---- */

typedef struct sw_mtl_constants {
    sw_obj base;
    sw_fc_value v[SW_MAX_FC_VALUES];
    int n;
    char bad[160];                  /* first value that could not be taken */
} sw_mtl_constants;

static void constants_set(id self, SEL cmd, const void *value, NSUInteger type, NSUInteger index) {
    sw_mtl_constants *c = (sw_mtl_constants *)self;
    sw_fc_value fc;
    memset(&fc, 0, sizeof fc);
    fc.index = (int)index;
    switch (type) {
    case MTL_DATA_TYPE_BOOL:
        fc.type = SW_FC_BOOL, fc.v.i = *(const unsigned char *)value != 0;
        break;
    case MTL_DATA_TYPE_INT:
        fc.type = SW_FC_INT, fc.v.i = *(const int32_t *)value;
        break;
    case MTL_DATA_TYPE_UINT:
        fc.type = SW_FC_UINT, fc.v.u = *(const uint32_t *)value;
        break;
    case MTL_DATA_TYPE_FLOAT:
        fc.type = SW_FC_FLOAT, fc.v.f = *(const float *)value;
        break;
    case MTL_DATA_TYPE_HALF:
        fc.type = SW_FC_HALF, fc.v.f = f16_to_f32(*(const uint16_t *)value);
        break;
    case MTL_DATA_TYPE_SHORT:
        fc.type = SW_FC_SHORT, fc.v.i = *(const int16_t *)value;
        break;
    case MTL_DATA_TYPE_USHORT:
        fc.type = SW_FC_USHORT, fc.v.u = *(const uint16_t *)value;
        break;
    default:
        if (!c->bad[0])
            snprintf(c->bad, sizeof c->bad,
                     "function constant %lu: MTLDataType %lu is not supported by the software device "
                     "(bool, int, uint, float, half, short, ushort are)",
                     (unsigned long)index, (unsigned long)type);
        return;
    }
    for (int i = 0; i < c->n; i++)
        if (c->v[i].index == fc.index) {
            c->v[i] = fc;
            return;
        }
    if (c->n < SW_MAX_FC_VALUES)
        c->v[c->n++] = fc;
    else if (!c->bad[0])
        snprintf(c->bad, sizeof c->bad, "more than %d function constants", SW_MAX_FC_VALUES);
}

static void constants_set_range(id self, SEL cmd, const void *values, NSUInteger type, NSRange range) {
    size_t size = type == MTL_DATA_TYPE_BOOL ? 1 : (type == MTL_DATA_TYPE_HALF || type == MTL_DATA_TYPE_SHORT || type == MTL_DATA_TYPE_USHORT) ? 2 : 4;
    for (NSUInteger i = 0; i < range.length; i++)
        constants_set(self, cmd, (const char *)values + i * size, type, range.location + i);
}

static void constants_methods(Class cls) {
    sw_method_add(cls, "setConstantValue:type:atIndex:", SW_IMP(constants_set), "v@:^vQQ");
    sw_method_add(cls, "setConstantValues:type:withRange:", SW_IMP(constants_set_range), "v@:^vQ{_NSRange=QQ}");
}

/* ---- library and function ---- */

/* Finds (and for a compiled library, compiles) kernel `name`. */
static int library_get_kernel(sw_mtl_library *l, const char *name, const sw_fc_value *fcs, int nfcs, int instr,
                              sw_kernel *out, char **err) {
    memset(out, 0, sizeof *out);
    if (l->native) {
        for (const sw_kernel_info *k = l->native; k->name; k++)
            if (strcmp(k->name, name) == 0) {
                out->info = k;
                return 0;
            }
        if (err) {
            *err = malloc(strlen(name) + 64);
            if (*err) sprintf(*err, "no kernel named '%s' in the library", name);
        }
        return -1;
    }
    /* The compiler side may compile and dlopen here: one variant at a time. */
    pthread_mutex_lock(&l->mu);
    int rc = sw_library_get_kernel(l->compiled, name, fcs, nfcs, instr, out, err);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* A value given as another type than the source declares (functionConstantsDictionary
 * says which) is refused, so a host that sends the wrong type finds out here and not
 * only on a GPU.  0, or -1 with the reason in msg. */
static int constants_match(const sw_mtl_library *l, const sw_mtl_constants *consts, char *msg, size_t n) {
    int ndecl = l->compiled ? sw_library_constant_count(l->compiled) : 0;
    for (int i = 0; i < consts->n; i++)
        for (int k = 0; k < ndecl; k++) {
            int index = 0, type = 0;
            const char *name = NULL;
            sw_library_constant(l->compiled, k, &index, &type, &name);
            if (index != consts->v[i].index || type == consts->v[i].type) continue;
            snprintf(msg, n, "function constant %d (%s) is declared %s but was given a value of type %s", index,
                     name ? name : "?", sw_fc_type_name(type), sw_fc_type_name(consts->v[i].type));
            return -1;
        }
    return 0;
}

static id function_new(id library, const char *name, const sw_mtl_constants *consts, id *error) {
    sw_mtl_library *l = (sw_mtl_library *)library;
    char mismatch[200];
    if (consts && (consts->bad[0] || constants_match(l, consts, mismatch, sizeof mismatch) != 0)) {
        sw_error_out(error, sw_error_new(SW_ERROR_DOMAIN, 1, consts->bad[0] ? consts->bad : mismatch));
        return nil;
    }
    sw_mtl_function *f = (sw_mtl_function *)sw_obj_new(function_class);
    if (!f) return nil;
    if (consts) {
        memcpy(f->fcs, consts->v, sizeof consts->v[0] * (size_t)consts->n);
        f->nfcs = consts->n;
    }
    char *msg = NULL;
    if (library_get_kernel(l, name, f->fcs, f->nfcs, SW_INSTR_NONE, &f->kernel, &msg) != 0) {
        sw_error_out(error, sw_error_new(SW_ERROR_DOMAIN, 2, msg ? msg : "cannot make the function"));
        free(msg);
        sw_obj_free((id)f);
        return nil;
    }
    f->library = sw_retain(library);
    f->name = sw_string_new(name);
    return (id)f;
}

static id library_new_function(id self, SEL cmd, id name) {
    const char *n = sw_string_utf8(name);
    return n ? function_new(self, n, NULL, NULL) : nil;
}

static id library_new_function_constants(id self, SEL cmd, id name, id constants, id *error) {
    const char *n = sw_string_utf8(name);
    if (!n) {
        sw_error_out(error, sw_error_new(SW_ERROR_DOMAIN, 1, "function name is nil"));
        return nil;
    }
    if (constants && !sw_is_kind(constants, constants_class)) {
        sw_error_out(error, sw_error_new(SW_ERROR_DOMAIN, 1, "constantValues is not an MTLFunctionConstantValues"));
        return nil;
    }
    return function_new(self, n, (const sw_mtl_constants *)constants, error);
}

static void library_dealloc(id self, SEL cmd) {
    sw_mtl_library *l = (sw_mtl_library *)self;
    if (l->compiled) {
        sw_library_free(l->compiled);
        pthread_mutex_destroy(&l->mu);
    }
    sw_obj_free(self);
}

/* The kernels a library defines (host names, as newFunctionWithName: takes them). */
static int library_kernel_count(id library) {
    const sw_mtl_library *l = (const sw_mtl_library *)library;
    if (!l) return 0;
    if (l->compiled) return sw_library_kernel_count(l->compiled);
    int n = 0;
    for (const sw_kernel_info *k = l->native; k && k->name; k++) n++;
    return n;
}

static const char *library_kernel_name(id library, int i) {
    const sw_mtl_library *l = (const sw_mtl_library *)library;
    if (!l || i < 0 || i >= library_kernel_count(library)) return NULL;
    return l->compiled ? sw_library_kernel_name(l->compiled, i) : l->native[i].name;
}

/* MTLLibrary.functionNames: an autoreleased NSArray of the kernels' host names. */
static id library_function_names(id self, SEL cmd) {
    int n = library_kernel_count(self);
    id *names = calloc(n > 0 ? (size_t)n : 1, sizeof *names);
    if (!names) return nil;
    int made = 0;
    for (; made < n; made++) {
        names[made] = sw_string_new(library_kernel_name(self, made));
        if (!names[made]) break;
    }
    id array = made == n ? sw_array_new(names, (NSUInteger)n) : nil;
    for (int i = 0; i < made; i++) sw_release(names[i]); /* the array holds its own references */
    free(names);
    return array;
}

static void library_methods(Class cls) {
    sw_method_add(cls, "functionNames", SW_IMP(library_function_names), "@@:");
    sw_method_add(cls, "newFunctionWithName:", SW_IMP(library_new_function), "@@:@");
    sw_method_add(cls, "newFunctionWithName:constantValues:error:", SW_IMP(library_new_function_constants),
                  "@@:@@^@");
    sw_method_add(cls, "dealloc", SW_IMP(library_dealloc), "v@:");
}

static id function_name(id self, SEL cmd) { return ((sw_mtl_function *)self)->name; }

static void function_dealloc(id self, SEL cmd) {
    sw_mtl_function *f = (sw_mtl_function *)self;
    sw_release(f->name);
    sw_release(f->library);
    sw_obj_free(self);
}

static void function_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(function_name), "@@:");
    sw_method_add(cls, "functionConstantsDictionary", SW_IMP(sw_function_constants_dictionary), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(function_dealloc), "v@:");
}

/* ---- pipeline ---- */

const char *sw_mtl_pipeline_name(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    return sw_string_utf8(f->name);
}

int sw_mtl_pipeline_entry(id pipeline, int instr, sw_entry_fn *entry, int *instrumented, char **err) {
    sw_mtl_pipeline *p = (sw_mtl_pipeline *)pipeline;
    sw_mtl_function *f = (sw_mtl_function *)p->function;
    sw_mtl_library *l = (sw_mtl_library *)f->library;
    *entry = f->kernel.info->entry;
    *instrumented = 0;
    /* C-entry libraries have no instrumented variant: they run plain. */
    if (instr == SW_INSTR_NONE || !l->compiled) return 0;
    int *have = instr == SW_INSTR_FULL ? &p->have_full : instr == SW_INSTR_COUNT ? &p->have_cnt : &p->have_num;
    sw_kernel *k = instr == SW_INSTR_FULL ? &p->full : instr == SW_INSTR_COUNT ? &p->cnt : &p->num;
    pthread_mutex_lock(&p->mu);
    int rc = 0;
    if (!*have) {
        rc = library_get_kernel(l, sw_string_utf8(f->name), f->fcs, f->nfcs, instr, k, err);
        if (rc == 0 && instr == SW_INSTR_COUNT) {
            const uint64_t *blocks = dlsym(k->dl, "sw_cnt_blocks");
            const int32_t *nb = dlsym(k->dl, "sw_cnt_nblocks"), *ns = dlsym(k->dl, "sw_cnt_nsites");
            if (!blocks || !nb || !ns) {
                *err = strdup("the counting variant of the kernel has no block table");
                rc = -1;
            } else {
                p->cnt_table = (sw_cnt_table){blocks, (uint32_t)*nb, (uint32_t)*ns};
            }
        }
        *have = rc == 0;
    }
    if (rc == 0) {
        *entry = k->info->entry;
        *instrumented = instr;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

const sw_cnt_table *sw_mtl_pipeline_count_table(id pipeline) {
    sw_mtl_pipeline *p = (sw_mtl_pipeline *)pipeline;
    return p->have_cnt ? &p->cnt_table : NULL;
}

sw_range_fn sw_mtl_pipeline_range(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    return f->kernel.sync_free ? f->kernel.info->range : NULL;
}

const sw_lanes_info *sw_mtl_pipeline_lanes(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    return f->kernel.lanes;
}

int sw_mtl_pipeline_sync_free(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    return f->kernel.sync_free;
}

int sw_mtl_pipeline_atomic_free(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    return f->kernel.atomic_free;
}

unsigned sw_mtl_pipeline_max_threads(id pipeline) {
    sw_mtl_function *f = (sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    unsigned n = f->kernel.info ? f->kernel.info->max_threads : 0;
    return n > 0 && n < SW_MAX_THREADS_PER_GROUP ? n : SW_MAX_THREADS_PER_GROUP;
}

static NSUInteger pipeline_max_threads(id self, SEL cmd) { return sw_mtl_pipeline_max_threads(self); }
static NSUInteger pipeline_width(id self, SEL cmd) { return SW_SIMD_WIDTH; }
/* Function-scope threadgroup arrays are only sized when the kernel runs. */
static NSUInteger pipeline_static_tg(id self, SEL cmd) { return 0; }

static void pipeline_dealloc(id self, SEL cmd) {
    sw_mtl_pipeline *p = (sw_mtl_pipeline *)self;
    sw_release(p->function);
    pthread_mutex_destroy(&p->mu);
    sw_obj_free(self);
}

static void pipeline_methods(Class cls) {
    sw_method_add(cls, "maxTotalThreadsPerThreadgroup", SW_IMP(pipeline_max_threads), "Q@:");
    sw_method_add(cls, "threadExecutionWidth", SW_IMP(pipeline_width), "Q@:");
    sw_method_add(cls, "staticThreadgroupMemoryLength", SW_IMP(pipeline_static_tg), "Q@:");
    sw_method_add(cls, "dealloc", SW_IMP(pipeline_dealloc), "v@:");
}

/* ---- buffer ---- */

static void *buffer_contents(id self, SEL cmd) { return ((sw_mtl_buffer *)self)->mem.data; }
static NSUInteger buffer_length(id self, SEL cmd) { return ((sw_mtl_buffer *)self)->mem.length; }
/* Shared storage: the host's writes are already visible. */
static void buffer_did_modify(id self, SEL cmd, NSRange range) {}

static void buffer_dealloc(id self, SEL cmd) {
    sw_guarded_free(&((sw_mtl_buffer *)self)->mem);
    sw_obj_free(self);
}

static void buffer_methods(Class cls) {
    sw_method_add(cls, "contents", SW_IMP(buffer_contents), "^v@:");
    sw_method_add(cls, "length", SW_IMP(buffer_length), "Q@:");
    sw_method_add(cls, "didModifyRange:", SW_IMP(buffer_did_modify), "v@:{_NSRange=QQ}");
    sw_method_add(cls, "dealloc", SW_IMP(buffer_dealloc), "v@:");
}

/* ---- device ---- */

typedef struct sw_mtl_device {
    sw_obj base;
    id name;
    int checks;                  /* SW_CHECKS_*: fixed, buffers are laid out for it */
    int counter_sampling;
    double timeout_s;            /* the watchdog's limit per dispatch (swmtl_options.timeout_s) */
    pthread_mutex_t mu;          /* guards schedule and counts: they change between command buffers */
    swmtl_schedule schedule;
    swmtl_counts *counts;        /* --counters: the session command buffers count into, or NULL */
} sw_mtl_device;

int sw_mtl_device_checks(id device) { return ((sw_mtl_device *)device)->checks; }

int sw_mtl_device_counter_sampling(id device) { return ((sw_mtl_device *)device)->counter_sampling; }

double sw_mtl_device_timeout(id device) { return ((sw_mtl_device *)device)->timeout_s; }

swmtl_schedule sw_mtl_device_schedule(id device) {
    sw_mtl_device *d = (sw_mtl_device *)device;
    pthread_mutex_lock(&d->mu);
    swmtl_schedule s = d->schedule;
    pthread_mutex_unlock(&d->mu);
    return s;
}

static id device_name(id self, SEL cmd) { return ((sw_mtl_device *)self)->name; }

static id device_new_buffer(id self, SEL cmd, NSUInteger length, NSUInteger options) {
    sw_mtl_buffer *b = (sw_mtl_buffer *)sw_obj_new(buffer_class);
    if (!b) return nil;
    if (sw_guarded_alloc(&b->mem, length, ((sw_mtl_device *)self)->checks) != 0) {
        sw_obj_free((id)b);
        return nil; /* Metal answers nil for length 0 or no memory */
    }
    return (id)b;
}

static id device_new_buffer_bytes(id self, SEL cmd, const void *bytes, NSUInteger length, NSUInteger options) {
    id b = device_new_buffer(self, cmd, length, options);
    if (b && bytes) memcpy(((sw_mtl_buffer *)b)->mem.data, bytes, length);
    return b;
}

static id device_new_library_native(const sw_kernel_info *kernels) {
    sw_mtl_library *l = (sw_mtl_library *)sw_obj_new(library_class);
    if (l) l->native = kernels;
    return (id)l;
}

/* MTLLibraryErrorDomain / MTLLibraryErrorCompileFailure as Metal reports them. */
static id device_new_library_source(id self, SEL cmd, id source, id options, id *error) {
    const char *src = sw_string_utf8(source);
    if (!src) {
        sw_error_out(error, sw_error_new("MTLLibraryErrorDomain", 3, "newLibraryWithSource: source is nil"));
        return nil;
    }
    char *msg = NULL;
    char *name = source_name_of(src);
    sw_library *compiled = sw_library_create(src, name ? name : "source.metal", &msg);
    free(name);
    if (!compiled) {
        sw_error_out(error, sw_error_new("MTLLibraryErrorDomain", 3, msg ? msg : "compilation failed"));
        free(msg);
        return nil;
    }
    sw_mtl_library *l = (sw_mtl_library *)sw_obj_new(library_class);
    if (!l) {
        sw_library_free(compiled);
        return nil;
    }
    l->compiled = compiled;
    pthread_mutex_init(&l->mu, NULL);
    return (id)l;
}

static id device_new_pipeline(id self, SEL cmd, id function, id *error) {
    if (!function || !sw_is_kind(function, function_class)) {
        sw_error_out(error, sw_error_new(SW_ERROR_DOMAIN, 1, "newComputePipelineStateWithFunction: needs a function "
                                                              "from this device's library"));
        return nil;
    }
    sw_mtl_pipeline *p = (sw_mtl_pipeline *)sw_obj_new(pipeline_class);
    if (!p) return nil;
    pthread_mutex_init(&p->mu, NULL);
    p->function = sw_retain(function);
    return (id)p;
}

static id device_new_queue(id self, SEL cmd) { return sw_mtl_queue_new(self); }

static MTLSize device_max_threads(id self, SEL cmd) {
    return (MTLSize){SW_MAX_THREADS_PER_GROUP, SW_MAX_THREADS_PER_GROUP, 64};
}

static NSUInteger device_max_tg_memory(id self, SEL cmd) { return SW_TG_MEM_LIMIT; }

static void device_dealloc(id self, SEL cmd) {
    pthread_mutex_destroy(&((sw_mtl_device *)self)->mu);
    sw_release(((sw_mtl_device *)self)->name);
    sw_obj_free(self);
}

/* Extension selectors (swmetal.h, "Extension selectors"): what a host asks with
 * respondsToSelector: as it asks for Metal's optional features. */
static Class device_ext_class_named(id self, SEL cmd, const char *metal_name) { return swmtl_class(metal_name); }
/* The prelude implements MSL's math as precise:: and kernels build with
 * -ffp-contract=off: there is no fast variant to switch to. */
static BOOL device_ext_fast_math_applies(id self, SEL cmd) { return NO; }
static BOOL device_ext_supports_gpu_capture(id self, SEL cmd) { return NO; }

static void device_methods(Class cls) {
    sw_method_add(cls, "gdn_metalClassNamed:", SW_IMP(device_ext_class_named), "#@:*");
    sw_method_add(cls, "gdn_fastMathApplies", SW_IMP(device_ext_fast_math_applies), "C@:");
    sw_method_add(cls, "gdn_supportsGPUCapture", SW_IMP(device_ext_supports_gpu_capture), "C@:");
    sw_method_add(cls, "name", SW_IMP(device_name), "@@:");
    sw_method_add(cls, "newBufferWithLength:options:", SW_IMP(device_new_buffer), "@@:QQ");
    sw_method_add(cls, "newBufferWithBytes:length:options:", SW_IMP(device_new_buffer_bytes), "@@:^vQQ");
    sw_method_add(cls, "newLibraryWithSource:options:error:", SW_IMP(device_new_library_source), "@@:@@^@");
    sw_method_add(cls, "newComputePipelineStateWithFunction:error:", SW_IMP(device_new_pipeline), "@@:@^@");
    sw_method_add(cls, "newCommandQueue", SW_IMP(device_new_queue), "@@:");
    sw_method_add(cls, "maxThreadsPerThreadgroup", SW_IMP(device_max_threads), "{MTLSize=QQQ}@:");
    sw_method_add(cls, "maxThreadgroupMemoryLength", SW_IMP(device_max_tg_memory), "Q@:");
    sw_method_add(cls, "dealloc", SW_IMP(device_dealloc), "v@:");
    sw_counters_device_methods(cls);
    sw_reflection_device_methods(cls);
}

/* ---- registration and C entry points ---- */

void sw_objc_register_metal(void) {
    Class root = sw_root_class();
    device_class = sw_class_register("SWMTLDevice", root, sizeof(sw_mtl_device), device_methods);
    /* SW names on every platform: on a Mac, Metal.framework owns the MTL names, and
     * one name everywhere means the host reaches these through swmtl_class() on
     * Linux too, so the path a Mac takes is the one the tests run. */
    options_class = sw_class_register("SWMTLCompileOptions", root, sizeof(sw_mtl_options), options_methods);
    constants_class = sw_class_register("SWMTLFunctionConstantValues", root, sizeof(sw_mtl_constants),
                                        constants_methods);
    library_class = sw_class_register("SWMTLLibrary", root, sizeof(sw_mtl_library), library_methods);
    function_class = sw_class_register("SWMTLFunction", root, sizeof(sw_mtl_function), function_methods);
    pipeline_class = sw_class_register("SWMTLComputePipelineState", root, sizeof(sw_mtl_pipeline), pipeline_methods);
    buffer_class = sw_class_register("SWMTLBuffer", root, sizeof(sw_mtl_buffer), buffer_methods);
    sw_objc_register_counters();
    sw_objc_register_commands();
    sw_objc_register_function_constants();
    sw_objc_register_reflection();
}

void swmtl_options_init(swmtl_options *o) {
    *o = (swmtl_options){
        .checks = (swmtl_checks)sw_checks_default(),
        .schedule = {.fibers = sw_schedule_default_fibers(), .groups = {SWMTL_ORDER_INORDER, 0}, .lanes = 1},
        .counter_sampling = 1,
        .timeout_s = SWMTL_DEFAULT_TIMEOUT_S,
    };
}

id swmtl_device_new(const swmtl_options *o) {
    swmtl_options defaults;
    if (!o) {
        swmtl_options_init(&defaults);
        o = &defaults;
    }
    sw_objc_init();
    sw_mtl_device *d = (sw_mtl_device *)sw_obj_new(device_class);
    if (!d) return nil;
    d->name = sw_string_new("gdnbench software device");
    d->checks = (int)o->checks;
    d->counter_sampling = o->counter_sampling != 0;
    d->timeout_s = o->timeout_s > 0 ? o->timeout_s : 0;
    d->schedule = o->schedule;
    pthread_mutex_init(&d->mu, NULL);
    return (id)d;
}

id swmtl_create_system_default_device(void) { return swmtl_device_new(NULL); }

int swmtl_device_set_counts(id device, swmtl_counts *c) {
    if (!device || !sw_is_kind(device, device_class)) return -1;
    sw_mtl_device *d = (sw_mtl_device *)device;
    pthread_mutex_lock(&d->mu);
    d->counts = c;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

swmtl_counts *sw_mtl_device_counts(id device) {
    sw_mtl_device *d = (sw_mtl_device *)device;
    pthread_mutex_lock(&d->mu);
    swmtl_counts *c = d->counts;
    pthread_mutex_unlock(&d->mu);
    return c;
}

int swmtl_device_set_schedule(id device, const swmtl_schedule *s) {
    if (!device || !sw_is_kind(device, device_class)) return -1;
    sw_mtl_device *d = (sw_mtl_device *)device;
    pthread_mutex_lock(&d->mu);
    d->schedule = *s;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

Class swmtl_class(const char *metal_name) {
    sw_objc_init();
    if (!metal_name) return Nil;
    if (strcmp(metal_name, "MTLCompileOptions") == 0) return options_class;
    if (strcmp(metal_name, "MTLFunctionConstantValues") == 0) return constants_class;
    return sw_counters_class(metal_name);
}

id swmtl_new_native_library(id device, const sw_kernel_info *kernels) {
    sw_objc_init();
    return device && kernels ? device_new_library_native(kernels) : nil;
}

int swmtl_can_compile(char *err, size_t errlen) {
    char *why = NULL;
    if (sw_compiler_info(NULL, NULL, &why) == 0) return 1;
    snprintf(err, errlen, "%s", why ? why : "no C++ compiler for the software Metal device (clang++ >= 17)");
    free(why);
    return 0;
}
