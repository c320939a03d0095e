/* mtl.h — a thin C API over Metal's Objective-C objects, sent as plain C messages.
 *
 * The same code drives any MTLDevice the caller hands it: a GPU on macOS
 * (MTLCreateSystemDefaultDevice) or a device that answers Metal's selectors in
 * software (src/swmetal).  Extras beyond Metal's API are asked for with optional
 * extension selectors (swmetal/swmetal.h documents them).  Every object made here
 * is released by the matching *_free; the ops layer never sees an `id`. */
#ifndef GDN_MTL_H
#define GDN_MTL_H

#include <stddef.h>
#include <stdint.h>

#include "core/finding.h"
#include "core/mtl_types.h"
#include "core/objc_call.h"

typedef struct mtl_device mtl_device;
typedef struct mtl_library mtl_library;
typedef struct mtl_pipeline mtl_pipeline;
typedef struct mtl_buffer mtl_buffer;

/* A function-constant value, as text: converted to the type the function declares
 * for that index (mtl_constant_encode); an index it does not declare gets the type
 * of the value's form ("true"/"false" bool, integer int, with '.'/'e' float). */
typedef struct mtl_constant {
    int index;       /* -1: the constant named by name */
    char value[32];
    char name[64];   /* read only when index is -1 */
} mtl_constant;

/* A constant's text as the bytes of MTLDataType `type` (MTL_DATA_TYPE_*: bool, char,
 * uchar, short, ushort, int, uint, half, float) into out (4 bytes suffice):
 * bool true/false/1/0, integers (decimal, 0x hex) in the type's range, half/float a
 * number within the type's range.  0, or -1 with why in err (a value that does not
 * fit, is not of the type's form, or a type none can be given for). */
int mtl_constant_encode(const char *text, unsigned long type, void *out, char *err, size_t errlen);
/* "bool", "ushort", ... for those types; NULL for any other. */
const char *mtl_data_type_name(unsigned long type);

/* Drives `device`, a reference (+1) to any MTLDevice, which this takes over (it is
 * released on failure too).  NULL with err set when device is nil or it cannot make
 * a command queue. */
mtl_device *mtl_device_new(id device, char *err, size_t errlen);
void mtl_device_free(mtl_device *d);
/* The MTLDevice itself (owned by d), for what a caller that made it asks of it. */
id mtl_device_object(const mtl_device *d);
const char *mtl_device_name(const mtl_device *d);
/* 1 when fast math (MTLCompileOptions) changes what the device computes: a GPU;
 * 0 when the device answers gdn_fastMathApplies with NO (it always computes as
 * with fast math off). */
int mtl_device_fast_math_applies(const mtl_device *d);

/* Compiles MSL source; filename names the source in diagnostics and, when it is
 * the file's path, is where its quoted #includes are looked for first.  opts
 * (may be NULL): include directories and -D macros.  The headers are inlined
 * before the source goes to the device (Metal takes no include path), see
 * msl/msl_include.h.  fast_math: let the compiler use fast math (Metal's
 * default; off here unless asked, since it can break ulp bounds). */
struct msl_source_opts;
mtl_library *mtl_library_new(mtl_device *d, const char *source, const char *filename,
                             const struct msl_source_opts *opts, int fast_math, char *err, size_t errlen);
/* 1 when the library was compiled with fast math in effect (asked for, and the
 * device has it). */
int mtl_library_fast_math(const mtl_library *l);
void mtl_library_free(mtl_library *l);
/* The library's functions by name (MTLLibrary.functionNames): the count, the i-th
 * name into buf (0, or -1 when i is out of range), and whether one is called
 * `function` (1) or not (0).  How a kernel choice learns what a file defines
 * before it builds a pipeline. */
int mtl_library_function_count(const mtl_library *l);
int mtl_library_function_name(const mtl_library *l, int i, char *buf, size_t n);
int mtl_library_has_function(const mtl_library *l, const char *function);

mtl_pipeline *mtl_pipeline_new(mtl_device *d, mtl_library *l, const char *function, const mtl_constant *consts,
                               int nconsts, char *err, size_t errlen);
void mtl_pipeline_free(mtl_pipeline *p);

/* A buffer or threadgroup-memory parameter of the pipeline's kernel, from the
 * device's pipeline reflection (mtl_reflect.c). */
#define MTL_MAX_ARGUMENTS 64
enum { MTL_ARG_BUFFER = 0, MTL_ARG_THREADGROUP = 1 };
/* A member of a struct parameter as the compiled kernel lays it out
 * (MTLStructMember; arrays from its MTLArrayType).  Members of a nested struct
 * (MTLStructMember.structType, or MTLArrayType.elementStructType for an array of
 * structs) follow their struct member in the list, with `parent` its index and
 * offsets from that struct's start: the list is the struct's tree in pre-order. */
#define MTL_MAX_STRUCT_FIELDS 64
typedef struct mtl_struct_field {
    char name[48];
    unsigned long offset;
    unsigned long data_type;   /* MTLDataType of the member, of its element for an array */
    unsigned long count;       /* array length, 0 when not an array */
    unsigned long stride;      /* array element bytes */
    int nested;                /* a struct (or array of structs, data_type 1): its members follow */
    int parent;                /* the struct member this is a member of; -1 at the top */
} mtl_struct_field;

typedef struct mtl_argument {
    char name[64];             /* the parameter's name in the source */
    int kind;                  /* MTL_ARG_* */
    int index;                 /* [[buffer(n)]] / [[threadgroup(n)]] */
    int read_only;             /* MTLArgumentAccessReadOnly: the kernel cannot write through it */
    unsigned long data_type;   /* MTLDataType of a buffer's element (1 struct, 0 unknown) */
    unsigned long struct_size; /* a struct buffer with a bufferStructType: bufferDataSize; 0: no layout */
    int nfields;               /* its members, nested ones included (-1: more than MTL_MAX_STRUCT_FIELDS) */
    mtl_struct_field fields[MTL_MAX_STRUCT_FIELDS];
} mtl_argument;
/* The pipeline's active arguments (*out valid while p lives): how many, or -1 when
 * the device gave no reflection (it does not answer
 * newComputePipelineStateWithFunction:options:reflection:error:). */
int mtl_pipeline_arguments(const mtl_pipeline *p, const mtl_argument **out);
/* Reads an MTLComputePipelineReflection's arguments into out (at most max): how many. */
int mtl_reflect_arguments(id reflection, mtl_argument *out, int max);
unsigned mtl_pipeline_max_threads(const mtl_pipeline *p);

/* Shared-storage buffer (CPU-visible contents). */
mtl_buffer *mtl_buffer_new(mtl_device *d, size_t length, char *err, size_t errlen);
/* GPU-private buffer (MTLStorageModePrivate): no CPU view on a real GPU, so it is
 * filled and read with mtl_buffer_write/read (a blit through a shared staging
 * buffer).  A device with only host memory gives its contents even so: there
 * write/read are plain copies. */
mtl_buffer *mtl_buffer_new_private(mtl_device *d, size_t length, char *err, size_t errlen);
void mtl_buffer_free(mtl_buffer *b);
/* NULL for a private buffer on a real GPU. */
void *mtl_buffer_contents(mtl_buffer *b);
size_t mtl_buffer_length(const mtl_buffer *b);
/* Copies n bytes from host memory into the buffer's start, or from its start out;
 * works for every storage mode.  Returns 0, or -1 with err set. */
int mtl_buffer_write(mtl_device *d, mtl_buffer *b, const void *src, size_t n, char *err, size_t errlen);
int mtl_buffer_read(mtl_device *d, mtl_buffer *b, void *dst, size_t n, char *err, size_t errlen);
/* n bytes rounded up to a multiple of 4: a blit's size (copyFromBuffer:...size: must
 * be one on macOS), and so a private buffer's allocation and every copy to or from it. */
size_t mtl_blit_length(size_t n);

/* One dispatch's arguments. */
typedef struct mtl_dispatch {
    mtl_pipeline *pipeline;
    int nbuffers;
    struct {
        int index;
        mtl_buffer *buffer;
        size_t offset;
        size_t repeat_stride; /* added to offset on each repeat */
    } buffers[31];
    int nbytes;
    struct {
        int index;
        const void *data;
        size_t length;   /* at most 4096: Metal's limit for setBytes */
    } bytes[31];
    int ntgmem;
    struct {
        int index;
        size_t length;
    } tgmem[4];
    uint32_t grid[3]; /* threadgroups per grid (threads when `threads` is set) */
    uint32_t tg[3];   /* threads per threadgroup */
    uint32_t repeat;  /* dispatched this many times in order (0 or 1: once) */
    int own_command_buffers; /* 1: each repeat committed in a command buffer of its own */
    int threads;      /* 1: grid[] counts threads (dispatchThreads:, the last threadgroups
                         partial); 0: threadgroups (dispatchThreadgroups:) */
} mtl_dispatch;

/* Encodes the dispatches into one command buffer (one compute encoder each, its
 * repeats inside it) — or, for a dispatch with own_command_buffers, one command
 * buffer per repeat — commits each as soon as it is encoded and waits for all.
 * *gpu_us = last GPUEndTime - first GPUStartTime over the command buffers.
 * Returns 0, or -1 with the command buffer's error text (kernel fault, check
 * diagnosis) in err. */
int mtl_run(mtl_device *d, const mtl_dispatch *ds, int n, double *gpu_us, char *err, size_t errlen);

#define MTL_MAX_TIMED_PASSES 64

/* What mtl_run_timed measured. */
typedef struct mtl_timing {
    double gpu_us;                 /* last GPUEndTime - first GPUStartTime */
    double gpu_start_s, gpu_end_s; /* those two, host seconds */
    /* Per dispatch entry, from timestamp counters sampled at the start and end of
     * its compute pass (0 when not asked for, unavailable, or unusable this run):
     * the pass's length, and its ends in seconds on the CPU timestamp clock of
     * sampleTimestamps:gpuTimestamp: (GPUStartTime's on a device whose timestamps
     * share that clock). */
    int nstages;
    double stage_us[MTL_MAX_TIMED_PASSES];
    double stage_start_s[MTL_MAX_TIMED_PASSES], stage_end_s[MTL_MAX_TIMED_PASSES];
} mtl_timing;

/* mtl_run, and with stage_counters (and mtl_device_stage_counters) every dispatch
 * entry in a compute pass of its own whose start and end are sampled into a counter
 * sample buffer, all in the same command buffer(s): per-stage GPU times from one
 * submission.  t->nstages == 0 afterwards means the samples could not be used (a
 * counter error value): time the stages another way. */
int mtl_run_timed(mtl_device *d, const mtl_dispatch *ds, int n, int stage_counters, mtl_timing *t, char *err,
                  size_t errlen);

/* 1 when the device samples the timestamp counter set at stage boundaries
 * (supportsCounterSampling: MTLCounterSamplingPointAtStageBoundary) and the sample
 * buffer could be made; else 0 with the reason in why. */
int mtl_device_stage_counters(mtl_device *d, char *why, size_t whylen);

/* MTLDevice.recommendedMaxWorkingSetSize in bytes; -1 when the device does not say. */
int64_t mtl_device_recommended_working_set(mtl_device *d);
/* The GPU families (of Apple7..Apple10, Metal3) supportsFamily: answers YES for,
 * into names[0..max); returns how many, or -1 when the device does not answer
 * supportsFamily:. */
int mtl_device_gpu_families(mtl_device *d, const char **names, int max);

/* Starts an MTLCaptureManager capture of the device into a .gputrace document at
 * path (MTL_CAPTURE_ENABLED=1 must be in the environment before the device was
 * created).  Returns 0, or -1 with err set (always on a device that answers
 * gdn_supportsGPUCapture with NO). */
int mtl_capture_start(mtl_device *d, const char *path, char *err, size_t errlen);
void mtl_capture_stop(mtl_device *d);

/* What the device's checks found in the last mtl_run that failed (a command
 * buffer's gdn_findings:, every distinct finding, with source lines): hands over
 * the array (free it) and returns its length; 0 with *out NULL when there is none
 * (always on a GPU). */
int mtl_device_take_findings(mtl_device *d, dev_finding **out);

#endif
