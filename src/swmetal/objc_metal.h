/* objc_metal.h — instance layouts of the software device's Metal classes, shared by
 * objc_device.c (device, library, function, pipeline, buffer) and objc_command.c
 * (queue, command buffer, encoder). */
#ifndef GDN_SW_OBJC_METAL_H
#define GDN_SW_OBJC_METAL_H

#include <pthread.h>

#include "core/mtl_types.h"
#include "swmetal/checks.h"
#include "swmetal/count.h"
#include "swmetal/objc_base.h"
#include "swmetal/sw_compile.h"

/* MTLCommandBufferStatus numbers as Apple's (MTLDataType's: core/mtl_types.h). */
enum {
    MTLCommandBufferStatusNotEnqueued = 0,
    MTLCommandBufferStatusEnqueued = 1,
    MTLCommandBufferStatusCommitted = 2,
    MTLCommandBufferStatusScheduled = 3,
    MTLCommandBufferStatusCompleted = 4,
    MTLCommandBufferStatusError = 5
};

#define SW_MAX_FC_VALUES 64

typedef struct sw_mtl_library {
    sw_obj base;
    const sw_kernel_info *native;   /* C entries (swmtl_new_native_library), or NULL */
    sw_library *compiled;           /* from newLibraryWithSource:, or NULL */
    pthread_mutex_t mu;             /* serialises variant compiles of `compiled` */
} sw_mtl_library;

typedef struct sw_mtl_function {
    sw_obj base;
    id library;                     /* retained */
    id name;                        /* NSString */
    sw_fc_value fcs[SW_MAX_FC_VALUES];
    int nfcs;
    sw_kernel kernel;               /* the plain variant */
} sw_mtl_function;

typedef struct sw_mtl_pipeline {
    sw_obj base;
    id function;                    /* retained */
    pthread_mutex_t mu;             /* guards the lazily compiled check variants */
    int have_full;
    sw_kernel full;                 /* SW_INSTR_FULL */
    int have_num;
    sw_kernel num;                  /* SW_INSTR_NUMERICS */
    int have_cnt;
    sw_kernel cnt;                  /* SW_INSTR_COUNT */
    sw_cnt_table cnt_table;         /* what the counting variant's library holds */
} sw_mtl_pipeline;

typedef struct sw_mtl_buffer {
    sw_obj base;
    sw_guarded mem;
} sw_mtl_buffer;

Class sw_mtl_buffer_class(void);

/* A device's settings (swmetal.h's options): its checks mode (SW_CHECKS_*, fixed),
 * whether it samples counters, its watchdog limit (0 = none) and its schedule now. */
int sw_mtl_device_checks(id device);
int sw_mtl_device_counter_sampling(id device);
double sw_mtl_device_timeout(id device);
swmtl_schedule sw_mtl_device_schedule(id device);
/* The counting session of the device's command buffers (swmtl_device_set_counts), or NULL. */
swmtl_counts *sw_mtl_device_counts(id device);
/* The counting variant's table of a pipeline whose entry was asked for SW_INSTR_COUNT. */
const sw_cnt_table *sw_mtl_pipeline_count_table(id pipeline);
Class sw_mtl_pipeline_class(void);

/* The entry to run for a pipeline: the variant instrumented as `instr` asks
 * (SW_INSTR_*, compiled on first use) when one exists; *instrumented = the
 * SW_INSTR_* bits of the entry given (0: the plain variant).  Returns 0, or -1 with
 * *err (malloc'd). */
int sw_mtl_pipeline_entry(id pipeline, int instr, sw_entry_fn *entry, int *instrumented, char **err);
const char *sw_mtl_pipeline_name(id pipeline);
/* maxTotalThreadsPerThreadgroup: the kernel's [[max_total_threads_per_threadgroup(N)]]
 * when it gives a smaller N, else the device's SW_MAX_THREADS_PER_GROUP. */
unsigned sw_mtl_pipeline_max_threads(id pipeline);
/* 1 when the pipeline's kernel never synchronises its threads (run as plain loops). */
int sw_mtl_pipeline_sync_free(id pipeline);
/* 1 when the pipeline's library uses no atomics (no threadgroup-order bookkeeping). */
int sw_mtl_pipeline_atomic_free(id pipeline);
/* The kernel's plain variant's sw_range_fn when it is sync-free, else NULL. */
sw_range_fn sw_mtl_pipeline_range(id pipeline);
/* Its lanes entry (lanes.c), NULL when it has none. */
const sw_lanes_info *sw_mtl_pipeline_lanes(id pipeline);

/* objc_command.c */
id sw_mtl_queue_new(id device);
void sw_objc_register_commands(void);

/* An autoreleased read-only NSArray of the given objects (each retained by it):
 * what counterSets, counters and a library's functionNames return. */
id sw_array_new(const id *items, NSUInteger n);

/* objc_function_constants.c: -[MTLFunction functionConstantsDictionary] (the
 * library's declarations) and the classes it returns. */
id sw_function_constants_dictionary(id self, SEL cmd);
void sw_objc_register_function_constants(void);

/* objc_reflection.c: newComputePipelineStateWithFunction:options:reflection:error: and
 * the MTLComputePipelineReflection / MTLArgument classes it returns. */
void sw_objc_register_reflection(void);
void sw_reflection_device_methods(Class device_class);
/* objc_struct_type.c: an MTLStructType of a measured struct (+1 reference, nil when
 * out of memory), and its classes. */
id sw_struct_type_new(const sw_struct_layout *l);
void sw_objc_register_struct_types(void);

/* objc_counters.c: counter sets, sample buffers and compute pass descriptors. */
void sw_objc_register_counters(void);
void sw_counters_device_methods(Class device_class);
Class sw_counters_class(const char *metal_name);
/* A GPU timestamp (the device's ticks) for a time on sw_exec_now()'s clock. */
uint64_t sw_gpu_timestamp(double t_s);
int sw_is_sample_buffer(id obj);
NSUInteger sw_sample_buffer_count(id sample_buffer);
/* Stores value in slot index (ignored when out of range). */
void sw_sample_buffer_store(id sample_buffer, NSUInteger index, uint64_t value);
int sw_is_compute_pass(id obj);
/* Attachment i of a compute pass descriptor: 1 with its sample buffer and the
 * start/end-of-encoder indices when it names a sample buffer, else 0. */
int sw_pass_attachment(id pass, int i, id *sample_buffer, NSUInteger *start, NSUInteger *end);
#define SW_PASS_SAMPLE_ATTACHMENTS 4         /* sampleBufferAttachments slots */
NSUInteger sw_counter_dont_sample(void); /* MTLCounterDontSample */

#endif
