/* objc_counters.c — GPU timestamps on the software Metal device: Metal's counter
 * API (MTLCounters.h, MTLComputePass.h) answered from the device's own clock.
 *
 * What the host sees is Metal's: the device lists one counter set, "timestamp"
 * (MTLCommonCounterSetTimestamp), answers supportsCounterSampling: YES for
 * MTLCounterSamplingPointAtStageBoundary only, makes counter sample buffers from an
 * MTLCounterSampleBufferDescriptor, and a compute pass made from an
 * MTLComputePassDescriptor whose sampleBufferAttachments name a sample buffer has
 * the command buffer store a timestamp when the pass starts and when it ends
 * (objc_command.c queues those samples as commands between the dispatches, so they
 * are taken on the queue thread in execution order).  resolveCounterRange: returns
 * the samples as MTLCounterResultTimestamp (one uint64_t each); a slot never written
 * holds MTLCounterErrorValue.  sampleTimestamps:gpuTimestamp: pairs a CPU timestamp
 * (nanoseconds) with a GPU timestamp taken at the same moment.
 *
 * The clock is the executor's (sw_exec_now, the one GPUStartTime/GPUEndTime use).
 * GPU timestamps count half-nanoseconds of it and CPU timestamps nanoseconds, so a
 * host that took GPU ticks for nanoseconds, instead of converting them through
 * sampleTimestamps:gpuTimestamp: as Apple documents, gets times off by 2x here. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec.h"
#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

/* Apple's values (MTLCounters.h, MTLDevice.h, MTLComputePass.h). */
#define SW_COUNTER_ERROR_VALUE (~(uint64_t)0)
#define SW_COUNTER_DONT_SAMPLE ((NSUInteger)-1)
enum { SW_SAMPLING_AT_STAGE_BOUNDARY = 0 };
enum { SW_COUNTER_SAMPLE_BUFFER_ERROR_INVALID = 1 };
#define SW_MAX_COUNTER_SAMPLES (1u << 20)
#define SW_GPU_TICKS_PER_S 2e9
#define SW_CPU_TICKS_PER_S 1e9

static Class array_class, data_class, counter_class, counter_set_class, sample_desc_class, sample_buffer_class,
    pass_class, attachment_array_class, attachment_class;

uint64_t sw_gpu_timestamp(double t_s) { return (uint64_t)(t_s * SW_GPU_TICKS_PER_S + 0.5); }

static uint64_t cpu_timestamp(double t_s) { return (uint64_t)(t_s * SW_CPU_TICKS_PER_S + 0.5); }

/* ---- a read-only array (what counterSets and counters return) ---- */

typedef struct sw_array {
    sw_obj base;
    NSUInteger n;
    id *items; /* retained */
} sw_array;

id sw_array_new(const id *items, NSUInteger n) {
    sw_array *a = (sw_array *)sw_obj_new(array_class);
    if (!a) return nil;
    a->items = calloc(n ? n : 1, sizeof *a->items);
    if (!a->items) {
        sw_obj_free((id)a);
        return nil;
    }
    for (NSUInteger i = 0; i < n; i++) a->items[i] = sw_retain(items[i]);
    a->n = n;
    return sw_autorelease((id)a);
}

static NSUInteger array_count(id self, SEL cmd) { return ((sw_array *)self)->n; }

static id array_object_at(id self, SEL cmd, NSUInteger i) {
    sw_array *a = (sw_array *)self;
    return i < a->n ? a->items[i] : nil;
}

static void array_dealloc(id self, SEL cmd) {
    sw_array *a = (sw_array *)self;
    for (NSUInteger i = 0; i < a->n; i++) sw_release(a->items[i]);
    free(a->items);
    sw_obj_free(self);
}

static void array_methods(Class cls) {
    sw_method_add(cls, "count", SW_IMP(array_count), "Q@:");
    sw_method_add(cls, "objectAtIndex:", SW_IMP(array_object_at), "@@:Q");
    sw_method_add(cls, "objectAtIndexedSubscript:", SW_IMP(array_object_at), "@@:Q");
    sw_method_add(cls, "dealloc", SW_IMP(array_dealloc), "v@:");
}

/* ---- resolved data (NSData's bytes/length) ---- */

typedef struct sw_data {
    sw_obj base;
    void *bytes;
    NSUInteger length;
} sw_data;

static const void *data_bytes(id self, SEL cmd) { return ((sw_data *)self)->bytes; }
static NSUInteger data_length(id self, SEL cmd) { return ((sw_data *)self)->length; }

static void data_dealloc(id self, SEL cmd) {
    free(((sw_data *)self)->bytes);
    sw_obj_free(self);
}

static void data_methods(Class cls) {
    sw_method_add(cls, "bytes", SW_IMP(data_bytes), "^v@:");
    sw_method_add(cls, "length", SW_IMP(data_length), "Q@:");
    sw_method_add(cls, "dealloc", SW_IMP(data_dealloc), "v@:");
}

/* ---- MTLCounter and MTLCounterSet ---- */

typedef struct sw_named {
    sw_obj base;
    id name;     /* NSString */
    id counters; /* counter set only: array of MTLCounter */
} sw_named;

static id named_name(id self, SEL cmd) { return ((sw_named *)self)->name; }
static id named_counters(id self, SEL cmd) { return ((sw_named *)self)->counters; }

static void named_dealloc(id self, SEL cmd) {
    sw_release(((sw_named *)self)->name);
    sw_release(((sw_named *)self)->counters);
    sw_obj_free(self);
}

static void counter_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(named_name), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(named_dealloc), "v@:");
}

static void counter_set_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(named_name), "@@:");
    sw_method_add(cls, "counters", SW_IMP(named_counters), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(named_dealloc), "v@:");
}

/* The timestamp counter set: "timestamp" holding the one counter "GPUTimestamp"
 * (MTLCommonCounterSetTimestamp, MTLCommonCounterTimestamp).  Autoreleased. */
static id timestamp_counter_set(void) {
    sw_named *counter = (sw_named *)sw_obj_new(counter_class);
    sw_named *set = (sw_named *)sw_obj_new(counter_set_class);
    id counters = nil;
    if (counter) {
        counter->name = sw_string_new("GPUTimestamp");
        id one = (id)counter;
        counters = sw_array_new(&one, 1);
        sw_release((id)counter);
    }
    if (!set || !counters) {
        if (set) sw_obj_free((id)set);
        return nil;
    }
    set->name = sw_string_new("timestamp");
    set->counters = sw_retain(counters);
    return sw_autorelease((id)set);
}

/* ---- MTLCounterSampleBufferDescriptor ---- */

typedef struct sw_sample_desc {
    sw_obj base;
    id counter_set; /* retained */
    id label;       /* retained */
    NSUInteger storage_mode, sample_count;
} sw_sample_desc;

static id desc_counter_set(id self, SEL cmd) { return ((sw_sample_desc *)self)->counter_set; }
static id desc_label(id self, SEL cmd) { return ((sw_sample_desc *)self)->label; }
static NSUInteger desc_storage_mode(id self, SEL cmd) { return ((sw_sample_desc *)self)->storage_mode; }
static NSUInteger desc_sample_count(id self, SEL cmd) { return ((sw_sample_desc *)self)->sample_count; }

static void set_retained(id *slot, id value) {
    sw_retain(value);
    sw_release(*slot);
    *slot = value;
}

static void desc_set_counter_set(id self, SEL cmd, id set) { set_retained(&((sw_sample_desc *)self)->counter_set, set); }
static void desc_set_label(id self, SEL cmd, id label) { set_retained(&((sw_sample_desc *)self)->label, label); }
static void desc_set_storage_mode(id self, SEL cmd, NSUInteger m) { ((sw_sample_desc *)self)->storage_mode = m; }
static void desc_set_sample_count(id self, SEL cmd, NSUInteger n) { ((sw_sample_desc *)self)->sample_count = n; }

static void desc_dealloc(id self, SEL cmd) {
    sw_release(((sw_sample_desc *)self)->counter_set);
    sw_release(((sw_sample_desc *)self)->label);
    sw_obj_free(self);
}

static void sample_desc_methods(Class cls) {
    sw_method_add(cls, "counterSet", SW_IMP(desc_counter_set), "@@:");
    sw_method_add(cls, "setCounterSet:", SW_IMP(desc_set_counter_set), "v@:@");
    sw_method_add(cls, "label", SW_IMP(desc_label), "@@:");
    sw_method_add(cls, "setLabel:", SW_IMP(desc_set_label), "v@:@");
    sw_method_add(cls, "storageMode", SW_IMP(desc_storage_mode), "Q@:");
    sw_method_add(cls, "setStorageMode:", SW_IMP(desc_set_storage_mode), "v@:Q");
    sw_method_add(cls, "sampleCount", SW_IMP(desc_sample_count), "Q@:");
    sw_method_add(cls, "setSampleCount:", SW_IMP(desc_set_sample_count), "v@:Q");
    sw_method_add(cls, "dealloc", SW_IMP(desc_dealloc), "v@:");
}

/* ---- MTLCounterSampleBuffer ---- */

typedef struct sw_sample_buffer {
    sw_obj base;
    id device; /* retained */
    id label;  /* retained */
    NSUInteger count;
    /* Written on the queue thread while a command buffer runs, read by the host
     * after it completed (the completion wait orders the two). */
    uint64_t *samples;
} sw_sample_buffer;

static id sample_buffer_device(id self, SEL cmd) { return ((sw_sample_buffer *)self)->device; }
static id sample_buffer_label(id self, SEL cmd) { return ((sw_sample_buffer *)self)->label; }
static NSUInteger sample_buffer_count(id self, SEL cmd) { return ((sw_sample_buffer *)self)->count; }

/* Autoreleased data holding samples [location, location + length), or nil when the
 * range is not inside the buffer. */
static id sample_buffer_resolve(id self, SEL cmd, NSRange range) {
    sw_sample_buffer *b = (sw_sample_buffer *)self;
    if (range.location > b->count || range.length > b->count - range.location) return nil;
    sw_data *d = (sw_data *)sw_obj_new(data_class);
    if (!d) return nil;
    d->length = range.length * sizeof(uint64_t);
    d->bytes = malloc(d->length ? d->length : 1);
    if (!d->bytes) {
        sw_obj_free((id)d);
        return nil;
    }
    memcpy(d->bytes, b->samples + range.location, d->length);
    return sw_autorelease((id)d);
}

static void sample_buffer_dealloc(id self, SEL cmd) {
    sw_sample_buffer *b = (sw_sample_buffer *)self;
    sw_release(b->device);
    sw_release(b->label);
    free(b->samples);
    sw_obj_free(self);
}

static void sample_buffer_methods(Class cls) {
    sw_method_add(cls, "device", SW_IMP(sample_buffer_device), "@@:");
    sw_method_add(cls, "label", SW_IMP(sample_buffer_label), "@@:");
    sw_method_add(cls, "sampleCount", SW_IMP(sample_buffer_count), "Q@:");
    sw_method_add(cls, "resolveCounterRange:", SW_IMP(sample_buffer_resolve), "@@:{_NSRange=QQ}");
    sw_method_add(cls, "dealloc", SW_IMP(sample_buffer_dealloc), "v@:");
}

int sw_is_sample_buffer(id obj) { return obj && sw_is_kind(obj, sample_buffer_class); }

NSUInteger sw_sample_buffer_count(id sample_buffer) { return ((sw_sample_buffer *)sample_buffer)->count; }

void sw_sample_buffer_store(id sample_buffer, NSUInteger index, uint64_t value) {
    sw_sample_buffer *b = (sw_sample_buffer *)sample_buffer;
    if (index < b->count) b->samples[index] = value;
}

/* ---- MTLComputePassDescriptor and its sample buffer attachments ---- */

typedef struct sw_attachment {
    sw_obj base;
    id sample_buffer; /* retained */
    NSUInteger start, end;
} sw_attachment;

static id attachment_init(id self, SEL cmd) {
    sw_attachment *a = (sw_attachment *)self;
    a->start = a->end = SW_COUNTER_DONT_SAMPLE; /* Metal's defaults */
    return self;
}

static id attachment_sample_buffer(id self, SEL cmd) { return ((sw_attachment *)self)->sample_buffer; }
static void attachment_set_sample_buffer(id self, SEL cmd, id sb) {
    set_retained(&((sw_attachment *)self)->sample_buffer, sb);
}
static NSUInteger attachment_start(id self, SEL cmd) { return ((sw_attachment *)self)->start; }
static void attachment_set_start(id self, SEL cmd, NSUInteger i) { ((sw_attachment *)self)->start = i; }
static NSUInteger attachment_end(id self, SEL cmd) { return ((sw_attachment *)self)->end; }
static void attachment_set_end(id self, SEL cmd, NSUInteger i) { ((sw_attachment *)self)->end = i; }

static void attachment_dealloc(id self, SEL cmd) {
    sw_release(((sw_attachment *)self)->sample_buffer);
    sw_obj_free(self);
}

static void attachment_methods(Class cls) {
    sw_method_add(cls, "init", SW_IMP(attachment_init), "@@:");
    sw_method_add(cls, "sampleBuffer", SW_IMP(attachment_sample_buffer), "@@:");
    sw_method_add(cls, "setSampleBuffer:", SW_IMP(attachment_set_sample_buffer), "v@:@");
    sw_method_add(cls, "startOfEncoderSampleIndex", SW_IMP(attachment_start), "Q@:");
    sw_method_add(cls, "setStartOfEncoderSampleIndex:", SW_IMP(attachment_set_start), "v@:Q");
    sw_method_add(cls, "endOfEncoderSampleIndex", SW_IMP(attachment_end), "Q@:");
    sw_method_add(cls, "setEndOfEncoderSampleIndex:", SW_IMP(attachment_set_end), "v@:Q");
    sw_method_add(cls, "dealloc", SW_IMP(attachment_dealloc), "v@:");
}

typedef struct sw_attachment_array {
    sw_obj base;
    id items[SW_PASS_SAMPLE_ATTACHMENTS]; /* retained, made on first use */
} sw_attachment_array;

static id attachments_object_at(id self, SEL cmd, NSUInteger i) {
    sw_attachment_array *a = (sw_attachment_array *)self;
    if (i >= SW_PASS_SAMPLE_ATTACHMENTS) return nil;
    if (!a->items[i]) a->items[i] = MSG0(id, sw_obj_new(attachment_class), "init");
    return a->items[i];
}

/* Metal copies the descriptor it is given. */
static void attachments_set_object_at(id self, SEL cmd, id attachment, NSUInteger i) {
    sw_attachment_array *a = (sw_attachment_array *)self;
    if (i >= SW_PASS_SAMPLE_ATTACHMENTS) return;
    id copy = nil;
    if (attachment && sw_is_kind(attachment, attachment_class)) {
        const sw_attachment *from = (const sw_attachment *)attachment;
        copy = MSG0(id, sw_obj_new(attachment_class), "init");
        if (copy) {
            sw_attachment *to = (sw_attachment *)copy;
            to->sample_buffer = sw_retain(from->sample_buffer);
            to->start = from->start;
            to->end = from->end;
        }
    }
    sw_release(a->items[i]);
    a->items[i] = copy;
}

static void attachments_dealloc(id self, SEL cmd) {
    sw_attachment_array *a = (sw_attachment_array *)self;
    for (int i = 0; i < SW_PASS_SAMPLE_ATTACHMENTS; i++) sw_release(a->items[i]);
    sw_obj_free(self);
}

static void attachment_array_methods(Class cls) {
    sw_method_add(cls, "objectAtIndexedSubscript:", SW_IMP(attachments_object_at), "@@:Q");
    sw_method_add(cls, "setObject:atIndexedSubscript:", SW_IMP(attachments_set_object_at), "v@:@Q");
    sw_method_add(cls, "dealloc", SW_IMP(attachments_dealloc), "v@:");
}

typedef struct sw_pass {
    sw_obj base;
    NSUInteger dispatch_type; /* MTLDispatchType: serial (0) or concurrent (1); both run in order here */
    id attachments;           /* owned */
} sw_pass;

static id pass_init(id self, SEL cmd) {
    sw_pass *p = (sw_pass *)self;
    p->attachments = sw_obj_new(attachment_array_class);
    if (!p->attachments) {
        sw_obj_free(self);
        return nil;
    }
    return self;
}

static id pass_class_descriptor(id self, SEL cmd) {
    id p = MSG0(id, sw_obj_new((Class)self), "init");
    return p ? sw_autorelease(p) : nil;
}

static id pass_attachments(id self, SEL cmd) { return ((sw_pass *)self)->attachments; }
static NSUInteger pass_dispatch_type(id self, SEL cmd) { return ((sw_pass *)self)->dispatch_type; }
static void pass_set_dispatch_type(id self, SEL cmd, NSUInteger t) { ((sw_pass *)self)->dispatch_type = t; }

static void pass_dealloc(id self, SEL cmd) {
    sw_release(((sw_pass *)self)->attachments);
    sw_obj_free(self);
}

static void pass_methods(Class cls) {
    sw_class_method_add(cls, "computePassDescriptor", SW_IMP(pass_class_descriptor), "@@:");
    sw_method_add(cls, "init", SW_IMP(pass_init), "@@:");
    sw_method_add(cls, "sampleBufferAttachments", SW_IMP(pass_attachments), "@@:");
    sw_method_add(cls, "dispatchType", SW_IMP(pass_dispatch_type), "Q@:");
    sw_method_add(cls, "setDispatchType:", SW_IMP(pass_set_dispatch_type), "v@:Q");
    sw_method_add(cls, "dealloc", SW_IMP(pass_dealloc), "v@:");
}

int sw_is_compute_pass(id obj) { return obj && sw_is_kind(obj, pass_class); }

int sw_pass_attachment(id pass, int i, id *sample_buffer, NSUInteger *start, NSUInteger *end) {
    const sw_attachment_array *a = (const sw_attachment_array *)((sw_pass *)pass)->attachments;
    const sw_attachment *at = i >= 0 && i < SW_PASS_SAMPLE_ATTACHMENTS ? (const sw_attachment *)a->items[i] : NULL;
    if (!at || !at->sample_buffer) return 0;
    *sample_buffer = at->sample_buffer;
    *start = at->start;
    *end = at->end;
    return 1;
}

NSUInteger sw_counter_dont_sample(void) { return SW_COUNTER_DONT_SAMPLE; }

/* ---- the device's counter methods ---- */

static id device_counter_sets(id self, SEL cmd) {
    id set = timestamp_counter_set();
    return set ? sw_array_new(&set, 1) : nil;
}

static BOOL device_supports_counter_sampling(id self, SEL cmd, NSUInteger point) {
    return sw_mtl_device_counter_sampling(self) && point == SW_SAMPLING_AT_STAGE_BOUNDARY;
}

static id device_new_sample_buffer(id self, SEL cmd, id descriptor, id *error) {
    const char *bad = NULL;
    const sw_sample_desc *d = (const sw_sample_desc *)descriptor;
    if (!descriptor || !sw_is_kind(descriptor, sample_desc_class))
        bad = "newCounterSampleBufferWithDescriptor: needs an MTLCounterSampleBufferDescriptor";
    else if (!d->counter_set || !sw_is_kind(d->counter_set, counter_set_class))
        bad = "the descriptor's counterSet is not one of this device's counterSets";
    else if (d->sample_count == 0 || d->sample_count > SW_MAX_COUNTER_SAMPLES)
        bad = "sampleCount must be 1..1048576";
    if (bad) {
        sw_error_out(error, sw_error_new("MTLCounterErrorDomain", SW_COUNTER_SAMPLE_BUFFER_ERROR_INVALID, bad));
        return nil;
    }
    sw_sample_buffer *b = (sw_sample_buffer *)sw_obj_new(sample_buffer_class);
    uint64_t *samples = malloc(sizeof *samples * d->sample_count);
    if (!b || !samples) {
        if (b) sw_obj_free((id)b);
        free(samples);
        sw_error_out(error, sw_error_new("MTLCounterErrorDomain", 0, "out of memory for the counter samples"));
        return nil;
    }
    for (NSUInteger i = 0; i < d->sample_count; i++) samples[i] = SW_COUNTER_ERROR_VALUE;
    b->samples = samples;
    b->count = d->sample_count;
    b->device = sw_retain(self);
    b->label = sw_retain(d->label);
    return (id)b;
}

static void device_sample_timestamps(id self, SEL cmd, uint64_t *cpu, uint64_t *gpu) {
    double t = sw_exec_now();
    if (cpu) *cpu = cpu_timestamp(t);
    if (gpu) *gpu = sw_gpu_timestamp(t);
}

void sw_counters_device_methods(Class cls) {
    sw_method_add(cls, "counterSets", SW_IMP(device_counter_sets), "@@:");
    sw_method_add(cls, "supportsCounterSampling:", SW_IMP(device_supports_counter_sampling), "C@:Q");
    sw_method_add(cls, "newCounterSampleBufferWithDescriptor:error:", SW_IMP(device_new_sample_buffer), "@@:@^@");
    sw_method_add(cls, "sampleTimestamps:gpuTimestamp:", SW_IMP(device_sample_timestamps), "v@:^Q^Q");
}

/* ---- registration ---- */

void sw_objc_register_counters(void) {
    Class root = sw_root_class();
    array_class = sw_class_register("SWMTLArray", root, sizeof(sw_array), array_methods);
    data_class = sw_class_register("SWMTLData", root, sizeof(sw_data), data_methods);
    counter_class = sw_class_register("SWMTLCounter", root, sizeof(sw_named), counter_methods);
    counter_set_class = sw_class_register("SWMTLCounterSet", root, sizeof(sw_named), counter_set_methods);
    /* SW names on every platform: on a Mac, Metal.framework owns the MTL names; the
     * host reaches the ones it instantiates through swmtl_class(). */
    sample_desc_class = sw_class_register("SWMTLCounterSampleBufferDescriptor", root, sizeof(sw_sample_desc),
                                          sample_desc_methods);
    sample_buffer_class =
        sw_class_register("SWMTLCounterSampleBuffer", root, sizeof(sw_sample_buffer), sample_buffer_methods);
    attachment_class = sw_class_register("SWMTLComputePassSampleBufferAttachmentDescriptor", root,
                                         sizeof(sw_attachment), attachment_methods);
    attachment_array_class = sw_class_register("SWMTLComputePassSampleBufferAttachmentDescriptorArray", root,
                                               sizeof(sw_attachment_array), attachment_array_methods);
    pass_class = sw_class_register("SWMTLComputePassDescriptor", root, sizeof(sw_pass), pass_methods);
}

Class sw_counters_class(const char *metal_name) {
    if (strcmp(metal_name, "MTLCounterSampleBufferDescriptor") == 0) return sample_desc_class;
    if (strcmp(metal_name, "MTLComputePassDescriptor") == 0) return pass_class;
    if (strcmp(metal_name, "MTLComputePassSampleBufferAttachmentDescriptor") == 0) return attachment_class;
    return Nil;
}
