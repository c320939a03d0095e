/* test_sw_counters.c — the software device's GPU timestamp API through message sends
 * only, as the host uses it on a Mac: counter sets, counter sample buffers, compute
 * pass descriptors with sample buffer attachments, resolveCounterRange:, and
 * sampleTimestamps:gpuTimestamp:.  Kernels are C entries in a native library. */
#include <string.h>

#include "core/objc_call.h"
#include "swmetal/swmetal.h"
#include "test.h"

#define ERROR_VALUE (~(uint64_t)0)
#define DONT_SAMPLE ((NSUInteger)-1)

/* Busy work proportional to buffers[1][0]: the pass has a length to measure. */
static void k_busy(const sw_thread_args *a) {
    float *out = a->buffers[0];
    const uint32_t *n = a->buffers[1];
    uint32_t gid = a->ids->thread_position_in_grid[0];
    volatile float acc = 0;
    for (uint32_t i = 0; i < n[0]; i++) acc = acc * 0.5f + (float)i;
    out[gid] = acc;
}

static const sw_kernel_info kernels[] = {
    {"busy", k_busy, 0, NULL, 1, NULL, NULL, 0},
    {NULL, NULL, 0, NULL, 0, NULL, NULL, 0},
};

static id new_pool(void) { return MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init"); }

static const char *utf8(id s) { return s ? MSG0(const char *, s, "UTF8String") : NULL; }

static id str(const char *s) { return MSG1(id, objc_class_named("NSString"), "stringWithUTF8String:", const char *, s); }

static id timestamp_set(id dev) {
    id sets = MSG0(id, dev, "counterSets");
    return sets && MSG0(NSUInteger, sets, "count") > 0 ? MSG1(id, sets, "objectAtIndex:", NSUInteger, 0) : nil;
}

/* A sample buffer of n timestamps (+1), or nil with the error's text in why. */
static id new_sample_buffer(id dev, id set, NSUInteger n, const char **why) {
    id desc = MSG0(id, MSG0(id, (id)swmtl_class("MTLCounterSampleBufferDescriptor"), "alloc"), "init");
    if (set) MSG1(void, desc, "setCounterSet:", id, set);
    MSG1(void, desc, "setSampleCount:", NSUInteger, n);
    MSG1(void, desc, "setStorageMode:", NSUInteger, 0);
    MSG1(void, desc, "setLabel:", id, str("test"));
    id error = nil;
    id sb = MSG2(id, dev, "newCounterSampleBufferWithDescriptor:error:", id, desc, id *, &error);
    MSG0(void, desc, "release");
    if (why) *why = error ? utf8(MSG0(id, error, "localizedDescription")) : NULL;
    return sb;
}

static void resolve(id sb, NSUInteger from, NSUInteger n, uint64_t *out) {
    NSRange r = {from, n};
    id data = MSG1(id, sb, "resolveCounterRange:", NSRange, r);
    CHECK(data != nil);
    if (!data) return;
    CHECK_EQ_INT(MSG0(NSUInteger, data, "length"), n * sizeof(uint64_t));
    memcpy(out, MSG0(const void *, data, "bytes"), n * sizeof(uint64_t));
}

/* A compute encoder on cb whose pass samples into sb at start/end. */
static id pass_encoder(id cb, id sb, NSUInteger start, NSUInteger end) {
    id pass = MSG0(id, (id)swmtl_class("MTLComputePassDescriptor"), "computePassDescriptor");
    id a = MSG1(id, MSG0(id, pass, "sampleBufferAttachments"), "objectAtIndexedSubscript:", NSUInteger, 0);
    CHECK_EQ_INT(MSG0(NSUInteger, a, "startOfEncoderSampleIndex"), DONT_SAMPLE);
    CHECK_EQ_INT(MSG0(NSUInteger, a, "endOfEncoderSampleIndex"), DONT_SAMPLE);
    MSG1(void, a, "setSampleBuffer:", id, sb);
    MSG1(void, a, "setStartOfEncoderSampleIndex:", NSUInteger, start);
    MSG1(void, a, "setEndOfEncoderSampleIndex:", NSUInteger, end);
    return MSG1(id, cb, "computeCommandEncoderWithDescriptor:", id, pass);
}

static void dispatch_busy(id enc, id pso, id out, id n) {
    MSG1(void, enc, "setComputePipelineState:", id, pso);
    MSG3(void, enc, "setBuffer:offset:atIndex:", id, out, NSUInteger, 0, NSUInteger, 0);
    MSG3(void, enc, "setBuffer:offset:atIndex:", id, n, NSUInteger, 0, NSUInteger, 1);
    MTLSize g = {4, 1, 1}, t = {32, 1, 1};
    MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, g, MTLSize, t);
}

typedef struct fixture {
    id pool, dev, lib, pso, queue, out, n;
} fixture;

static void fixture_open(fixture *f, uint32_t work) {
    f->pool = new_pool();
    f->dev = swmtl_create_system_default_device();
    f->lib = swmtl_new_native_library(f->dev, kernels);
    id fn = MSG1(id, f->lib, "newFunctionWithName:", id, str("busy"));
    id err = nil;
    f->pso = MSG2(id, f->dev, "newComputePipelineStateWithFunction:error:", id, fn, id *, &err);
    MSG0(void, fn, "release");
    f->queue = MSG0(id, f->dev, "newCommandQueue");
    f->out = MSG2(id, f->dev, "newBufferWithLength:options:", NSUInteger, 128 * sizeof(float), NSUInteger, 0);
    f->n = MSG3(id, f->dev, "newBufferWithBytes:length:options:", const void *, &work, NSUInteger, sizeof work,
                NSUInteger, 0);
}

static void fixture_close(fixture *f) {
    MSG0(void, f->n, "release");
    MSG0(void, f->out, "release");
    MSG0(void, f->queue, "release");
    MSG0(void, f->pso, "release");
    MSG0(void, f->lib, "release");
    MSG0(void, f->dev, "release");
    MSG0(void, f->pool, "drain");
}

TEST(sw_counters_device_lists_timestamps_at_stage_boundaries) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    id sets = MSG0(id, dev, "counterSets");
    CHECK(sets != nil && MSG0(NSUInteger, sets, "count") == 1);
    id set = timestamp_set(dev);
    const char *name = utf8(MSG0(id, set, "name"));
    CHECK_MSG(name && strcmp(name, "timestamp") == 0, "counter set %s", name ? name : "(nil)");
    id counters = MSG0(id, set, "counters");
    CHECK(counters && MSG0(NSUInteger, counters, "count") == 1);
    const char *cname = utf8(MSG0(id, MSG1(id, counters, "objectAtIndex:", NSUInteger, 0), "name"));
    CHECK(cname && strcmp(cname, "GPUTimestamp") == 0);
    /* MTLCounterSamplingPoint: AtStageBoundary 0 yes; draw, dispatch, tile, blit no. */
    CHECK(MSG1(BOOL, dev, "supportsCounterSampling:", NSUInteger, 0));
    for (NSUInteger p = 1; p <= 4; p++) CHECK(!MSG1(BOOL, dev, "supportsCounterSampling:", NSUInteger, p));
    swmtl_options o;
    swmtl_options_init(&o);
    o.counter_sampling = 0;
    id dev_without = swmtl_device_new(&o);
    CHECK(!MSG1(BOOL, dev_without, "supportsCounterSampling:", NSUInteger, 0));
    MSG0(void, dev_without, "release");

    /* CPU timestamps are nanoseconds, GPU timestamps half-nanoseconds of one clock. */
    uint64_t c0 = 0, g0 = 0, c1 = 0, g1 = 0;
    MSG2(void, dev, "sampleTimestamps:gpuTimestamp:", uint64_t *, &c0, uint64_t *, &g0);
    MSG2(void, dev, "sampleTimestamps:gpuTimestamp:", uint64_t *, &c1, uint64_t *, &g1);
    CHECK(c0 > 0 && c1 >= c0 && g1 >= g0);
    CHECK_NEAR((double)g0 / (double)c0, 2.0, 1e-6);
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_counters_sample_buffer_and_resolve) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    const char *why = NULL;
    CHECK(new_sample_buffer(dev, nil, 4, &why) == nil);
    CHECK_MSG(why && strstr(why, "counterSet"), "no counter set: %s", why ? why : "(no error)");
    CHECK(new_sample_buffer(dev, timestamp_set(dev), 0, &why) == nil);
    CHECK_MSG(why && strstr(why, "sampleCount"), "sampleCount 0: %s", why ? why : "(no error)");
    id sb = new_sample_buffer(dev, timestamp_set(dev), 4, &why);
    CHECK_MSG(sb != nil, "%s", why ? why : "");
    if (sb) {
        CHECK_EQ_INT(MSG0(NSUInteger, sb, "sampleCount"), 4);
        CHECK(MSG0(id, sb, "device") == dev);
        CHECK(strcmp(utf8(MSG0(id, sb, "label")), "test") == 0);
        uint64_t v[4];
        resolve(sb, 0, 4, v);
        for (int i = 0; i < 4; i++) CHECK(v[i] == ERROR_VALUE); /* never sampled */
        NSRange past = {3, 2};
        CHECK(MSG1(id, sb, "resolveCounterRange:", NSRange, past) == nil);
        MSG0(void, sb, "release");
    }
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_counters_pass_samples_bracket_their_dispatches) {
    fixture f;
    fixture_open(&f, 20000);
    id sb = new_sample_buffer(f.dev, timestamp_set(f.dev), 8, NULL);
    CHECK(sb != nil);
    if (!sb) {
        fixture_close(&f);
        return;
    }
    uint64_t d0 = swmtl_dispatches_executed(), b0 = swmtl_command_buffers_executed();
    id cb = MSG0(id, f.queue, "commandBuffer");
    id e0 = pass_encoder(cb, sb, 0, 1); /* pass 0: two dispatches */
    dispatch_busy(e0, f.pso, f.out, f.n);
    dispatch_busy(e0, f.pso, f.out, f.n);
    MSG0(void, e0, "endEncoding");
    id plain = MSG0(id, cb, "computeCommandEncoder"); /* not sampled */
    dispatch_busy(plain, f.pso, f.out, f.n);
    MSG0(void, plain, "endEncoding");
    id e1 = pass_encoder(cb, sb, 2, 3); /* pass 1 */
    dispatch_busy(e1, f.pso, f.out, f.n);
    MSG0(void, e1, "endEncoding");
    id e2 = pass_encoder(cb, sb, 4, DONT_SAMPLE); /* start only */
    dispatch_busy(e2, f.pso, f.out, f.n);
    MSG0(void, e2, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    CHECK_EQ_INT(swmtl_dispatches_executed() - d0, 5);
    CHECK_EQ_INT(swmtl_command_buffers_executed() - b0, 1);

    uint64_t v[8];
    resolve(sb, 0, 8, v);
    /* In ticks of the GPU clock: half-nanoseconds of GPUStartTime's seconds. */
    double start = MSG0(double, cb, "GPUStartTime") * 2e9, end = MSG0(double, cb, "GPUEndTime") * 2e9;
    CHECK_MSG(v[0] != ERROR_VALUE && v[1] != ERROR_VALUE && v[2] != ERROR_VALUE && v[3] != ERROR_VALUE &&
                  v[4] != ERROR_VALUE,
              "a sample was not taken");
    CHECK_MSG(v[0] < v[1] && v[1] <= v[2] && v[2] < v[3] && v[3] <= v[4], "samples out of order: %llu %llu %llu %llu %llu",
              (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
              (unsigned long long)v[3], (unsigned long long)v[4]);
    /* nested in the command buffer's interval (1 tick of rounding either way) */
    CHECK_MSG((double)v[0] >= start - 1 && (double)v[4] <= end + 1, "samples %.0f..%.0f outside the buffer %.0f..%.0f",
              (double)v[0], (double)v[4], start, end);
    CHECK(v[5] == ERROR_VALUE && v[6] == ERROR_VALUE && v[7] == ERROR_VALUE);
    MSG0(void, sb, "release");
    fixture_close(&f);
}

TEST(sw_counters_bad_sample_index_fails_the_command_buffer) {
    fixture f;
    fixture_open(&f, 10);
    id sb = new_sample_buffer(f.dev, timestamp_set(f.dev), 4, NULL);
    id cb = MSG0(id, f.queue, "commandBuffer");
    id enc = pass_encoder(cb, sb, 0, 9);
    dispatch_busy(enc, f.pso, f.out, f.n);
    MSG0(void, enc, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    id err = MSG0(id, cb, "error");
    const char *e = err ? utf8(MSG0(id, err, "localizedDescription")) : NULL;
    CHECK_MSG(e && strstr(e, "sample index 9 is past the sample buffer"), "error: %s", e ? e : "(none)");
    /* A pass descriptor is required. */
    id cb2 = MSG0(id, f.queue, "commandBuffer");
    CHECK(MSG1(id, cb2, "computeCommandEncoderWithDescriptor:", id, sb) == nil);
    MSG0(void, sb, "release");
    fixture_close(&f);
}
