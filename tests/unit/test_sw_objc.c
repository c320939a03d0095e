/* test_sw_objc.c — the software device through its Objective-C surface only: every
 * step is a message send (MSGn), as the host does it on a Mac.  Kernels are C
 * entries in a native library (swmtl_new_native_library). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/objc_call.h"
#include "swmetal/objc_base.h"
#include "swmetal/swmetal.h"
#include "test.h"

/* ---- kernels ---- */

static void k_add(const sw_thread_args *a) {
    uint32_t gid = a->ids->thread_position_in_grid[0];
    const float *in = a->buffers[0];
    float *out = a->buffers[1];
    const float *bias = a->buffers[2];
    out[gid] = in[gid] + bias[0];
}

/* Says it started (flag[2]), spins until the host sets flag[0], then writes 1 to
 * flag[1]. */
static void k_spin(const sw_thread_args *a) {
    uint32_t *flag = a->buffers[0];
    __atomic_store_n(&flag[2], 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&flag[0], __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    flag[1] = 1;
}

static void k_fault(const sw_thread_args *a) {
    if (a->ids->thread_position_in_grid[0] == 3) sw_rt_fault("deliberate fault", 12);
}

static const sw_kernel_info kernels[] = {
    {"add", k_add, 0, NULL, 1, NULL, NULL, 0},
    {"spin", k_spin, 0, NULL, 2, NULL, NULL, 0},
    {"fault", k_fault, 0, NULL, 3, NULL, NULL, 0},
    {"capped", k_add, 0, NULL, 4, NULL, NULL, 64}, /* [[max_total_threads_per_threadgroup(64)]] */
    {NULL, NULL, 0, NULL, 0, NULL, NULL, 0},
};

/* ---- helpers, all message sends ---- */

static id new_pool(void) { return MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init"); }

static id str(const char *s) { return MSG1(id, objc_class_named("NSString"), "stringWithUTF8String:", const char *, s); }

static id new_pipeline(id dev, id lib, const char *name) {
    id fn = MSG1(id, lib, "newFunctionWithName:", id, str(name));
    CHECK(fn != nil);
    id err = nil;
    id pso = MSG2(id, dev, "newComputePipelineStateWithFunction:error:", id, fn, id *, &err);
    CHECK(pso != nil && err == nil);
    MSG0(void, fn, "release");
    return pso;
}

static id encode_1d(id queue, id pso, id *bufs, int nbufs, uint32_t groups, uint32_t tg) {
    id cb = MSG0(id, queue, "commandBuffer");
    id enc = MSG0(id, cb, "computeCommandEncoder");
    MSG1(void, enc, "setComputePipelineState:", id, pso);
    for (int i = 0; i < nbufs; i++)
        MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[i], NSUInteger, 0, NSUInteger, (NSUInteger)i);
    MTLSize g = {groups, 1, 1}, t = {tg, 1, 1};
    MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, g, MTLSize, t);
    MSG0(void, enc, "endEncoding");
    return cb;
}

static const char *error_text(id cb) {
    id err = MSG0(id, cb, "error");
    if (!err) return NULL;
    return MSG0(const char *, MSG0(id, err, "localizedDescription"), "UTF8String");
}

/* ---- tests ---- */

TEST(sw_objc_whole_flow_with_message_sends) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    CHECK(dev != nil);
    CHECK(strcmp(MSG0(const char *, MSG0(id, dev, "name"), "UTF8String"), "gdnbench software device") == 0);
    MTLSize maxt = MSG0(MTLSize, dev, "maxThreadsPerThreadgroup");
    CHECK_EQ_INT(maxt.width, 1024);
    id lib = swmtl_new_native_library(dev, kernels);
    id pso = new_pipeline(dev, lib, "add");
    CHECK_EQ_INT(MSG0(NSUInteger, pso, "maxTotalThreadsPerThreadgroup"), 1024);
    CHECK_EQ_INT(MSG0(NSUInteger, pso, "threadExecutionWidth"), 32);
    CHECK(MSG1(id, lib, "newFunctionWithName:", id, str("missing")) == nil);

    enum { N = 1000 };
    float host_in[N];
    for (int i = 0; i < N; i++) host_in[i] = (float)i * 0.5f;
    id in = MSG3(id, dev, "newBufferWithBytes:length:options:", const void *, host_in, NSUInteger, sizeof host_in,
                 NSUInteger, 0);
    id out = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, N * sizeof(float), NSUInteger, 0);
    CHECK_EQ_INT(MSG0(NSUInteger, out, "length"), N * sizeof(float));
    CHECK(MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 0, NSUInteger, 0) == nil);
    id queue = MSG0(id, dev, "newCommandQueue");

    id cb = MSG0(id, queue, "commandBuffer");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 0);
    id enc = MSG0(id, cb, "computeCommandEncoder");
    MSG1(void, enc, "setComputePipelineState:", id, pso);
    MSG3(void, enc, "setBuffer:offset:atIndex:", id, in, NSUInteger, 0, NSUInteger, 0);
    MSG3(void, enc, "setBuffer:offset:atIndex:", id, out, NSUInteger, 0, NSUInteger, 1);
    float bias = 3.0f;
    MSG3(void, enc, "setBytes:length:atIndex:", const void *, &bias, NSUInteger, sizeof bias, NSUInteger, 2);
    MTLSize threads = {N, 1, 1}, tg = {64, 1, 1}; /* 1000 is not a multiple of 64: edge group cut */
    MSG2(void, enc, "dispatchThreads:threadsPerThreadgroup:", MTLSize, threads, MTLSize, tg);
    bias = 100.0f; /* setBytes copied the value */
    MSG0(void, enc, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    CHECK(MSG0(id, cb, "error") == nil);
    double t0 = MSG0(double, cb, "GPUStartTime"), t1 = MSG0(double, cb, "GPUEndTime");
    CHECK(t0 > 0 && t1 >= t0);
    const float *o = MSG0(void *, out, "contents");
    for (int i = 0; i < N; i++) CHECK_NEAR(o[i], host_in[i] + 3.0f, 0);

    MSG0(void, queue, "release");
    MSG0(void, in, "release");
    MSG0(void, out, "release");
    MSG0(void, pso, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_objc_commit_is_asynchronous) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    id lib = swmtl_new_native_library(dev, kernels);
    id pso = new_pipeline(dev, lib, "spin");
    id flag = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 12, NSUInteger, 0);
    uint32_t *f = MSG0(void *, flag, "contents");
    id queue = MSG0(id, dev, "newCommandQueue");
    id cb = encode_1d(queue, pso, &flag, 1, 1, 1);
    MSG0(void, cb, "commit");
    /* commit returned while the kernel still waits for us. */
    struct timespec tick = {0, 1000 * 1000}, ts = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 5000 && !__atomic_load_n(&f[2], __ATOMIC_ACQUIRE); i++) nanosleep(&tick, NULL);
    CHECK(__atomic_load_n(&f[2], __ATOMIC_ACQUIRE) == 1);
    nanosleep(&ts, NULL);
    NSUInteger st = MSG0(NSUInteger, cb, "status");
    CHECK_MSG(st == 2 || st == 3, "status %lu while the kernel spins", (unsigned long)st);
    CHECK_EQ_INT(__atomic_load_n(&f[1], __ATOMIC_ACQUIRE), 0);
    __atomic_store_n(&f[0], 1, __ATOMIC_RELEASE);
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 4);
    CHECK_EQ_INT(f[1], 1);
    double t0 = MSG0(double, cb, "GPUStartTime"), t1 = MSG0(double, cb, "GPUEndTime");
    CHECK_MSG(t1 - t0 >= 0.04, "GPU time %.3f s should cover the 50 ms wait", t1 - t0);
    MSG0(void, queue, "release");
    MSG0(void, flag, "release");
    MSG0(void, pso, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_objc_fault_sets_error_status_and_queue_goes_on) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    id lib = swmtl_new_native_library(dev, kernels);
    id bad = new_pipeline(dev, lib, "fault");
    id good = new_pipeline(dev, lib, "add");
    id queue = MSG0(id, dev, "newCommandQueue");
    id bufs[3];
    for (int i = 0; i < 3; i++) bufs[i] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 256, NSUInteger, 0);

    id cb = encode_1d(queue, bad, bufs, 3, 2, 32);
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *e = error_text(cb);
    CHECK_MSG(e && strstr(e, "kernel 'fault': fault: deliberate fault at line 12") && strstr(e, "(3,0,0)"), "error: %s",
              e ? e : "(none)");
    int kept = 0;
    CHECK_EQ_INT(swmtl_command_buffer_diagnostic_count(cb, &kept), 1);
    CHECK(kept == 1 && strstr(swmtl_command_buffer_diagnostic(cb, 0), "deliberate fault"));

    /* Misuse while encoding: a dispatch with no pipeline. */
    id cb2 = MSG0(id, queue, "commandBuffer");
    id enc = MSG0(id, cb2, "computeCommandEncoder");
    MTLSize one = {1, 1, 1};
    MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, one, MTLSize, one);
    MSG0(void, enc, "endEncoding");
    MSG0(void, cb2, "commit");
    MSG0(void, cb2, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb2, "status"), 5);
    CHECK((e = error_text(cb2)) && strstr(e, "dispatch without setComputePipelineState:"));

    /* 2048 threads per threadgroup are refused with Metal's limit in the message. */
    id cb3 = encode_1d(queue, good, bufs, 3, 1, 2048);
    MSG0(void, cb3, "commit");
    MSG0(void, cb3, "waitUntilCompleted");
    CHECK((e = error_text(cb3)) && strstr(e, "exceeds the limit of 1024"));

    /* setBytes takes at most 4 KiB, as Metal: 4096 bytes run, 4097 are refused. */
    static float big[1025];
    for (int n = 4096; n <= 4097; n++) {
        id cb5 = MSG0(id, queue, "commandBuffer");
        id enc5 = MSG0(id, cb5, "computeCommandEncoder");
        MSG1(void, enc5, "setComputePipelineState:", id, good);
        MSG3(void, enc5, "setBuffer:offset:atIndex:", id, bufs[0], NSUInteger, 0, NSUInteger, 0);
        MSG3(void, enc5, "setBuffer:offset:atIndex:", id, bufs[1], NSUInteger, 0, NSUInteger, 1);
        MSG3(void, enc5, "setBytes:length:atIndex:", const void *, big, NSUInteger, (NSUInteger)n, NSUInteger, 2);
        MSG2(void, enc5, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, one, MTLSize, one);
        MSG0(void, enc5, "endEncoding");
        MSG0(void, cb5, "commit");
        MSG0(void, cb5, "waitUntilCompleted");
        CHECK_EQ_INT(MSG0(NSUInteger, cb5, "status"), n == 4096 ? 4 : 5);
        if (n == 4097) CHECK((e = error_text(cb5)) && strstr(e, "setBytes:length:4097 atIndex:2: Metal takes at most 4096"));
    }

    /* The same queue still runs good work. */
    id cb4 = encode_1d(queue, good, bufs, 3, 2, 32);
    MSG0(void, cb4, "commit");
    MSG0(void, cb4, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb4, "status"), 4);

    for (int i = 0; i < 3; i++) MSG0(void, bufs[i], "release");
    MSG0(void, queue, "release");
    MSG0(void, bad, "release");
    MSG0(void, good, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_objc_oob_write_names_buffer_and_thread) {
    swmtl_options o;
    swmtl_options_init(&o);
    o.checks = SWMTL_CHECKS_FAST;
    id pool = new_pool();
    id dev = swmtl_device_new(&o);
    id lib = swmtl_new_native_library(dev, kernels);
    id pso = new_pipeline(dev, lib, "add");
    id queue = MSG0(id, dev, "newCommandQueue");
    id bufs[3];
    bufs[0] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 2048, NSUInteger, 0);
    bufs[1] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 1024, NSUInteger, 0); /* 256 floats */
    bufs[2] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 16, NSUInteger, 0);
    id cb = encode_1d(queue, pso, bufs, 3, 1, 257);
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
    const char *e = error_text(cb);
    CHECK_MSG(e && strstr(e, "kernel 'add'") && strstr(e, "buffer(1) byte 1024 (past its end; it has 1024 bytes)") &&
                  strstr(e, "thread_position_in_grid (256,0,0)"),
              "error: %s", e ? e : "(none)");
    for (int i = 0; i < 3; i++) MSG0(void, bufs[i], "release");
    MSG0(void, queue, "release");
    MSG0(void, pso, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

TEST(sw_objc_function_constants_and_options) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    id lib = swmtl_new_native_library(dev, kernels);
    id fcv = MSG0(id, MSG0(id, (id)swmtl_class("MTLFunctionConstantValues"), "alloc"), "init");
    unsigned char yes = 1;
    int32_t n = 7;
    MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &yes, NSUInteger, 53, NSUInteger, 200);
    MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &n, NSUInteger, 29, NSUInteger, 1);
    id err = nil;
    id fn = MSG3(id, lib, "newFunctionWithName:constantValues:error:", id, str("add"), id, fcv, id *, &err);
    CHECK(fn != nil && err == nil);
    CHECK(strcmp(MSG0(const char *, MSG0(id, fn, "name"), "UTF8String"), "add") == 0);
    MSG0(void, fn, "release");
    MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &n, NSUInteger, 99, NSUInteger, 2);
    fn = MSG3(id, lib, "newFunctionWithName:constantValues:error:", id, str("add"), id, fcv, id *, &err);
    CHECK(fn == nil && err != nil);
    const char *e = MSG0(const char *, MSG0(id, err, "localizedDescription"), "UTF8String");
    CHECK(e && strstr(e, "MTLDataType 99"));
    MSG0(void, fcv, "release");

    id opts = MSG0(id, MSG0(id, (id)swmtl_class("MTLCompileOptions"), "alloc"), "init");
    CHECK(MSG0(BOOL, opts, "fastMathEnabled"));
    MSG1(void, opts, "setFastMathEnabled:", BOOL, 0);
    CHECK(!MSG0(BOOL, opts, "fastMathEnabled"));
    MSG0(void, opts, "release");

    id s = str("h\xc3\xa9llo \xf0\x9f\x98\x80");
    CHECK_EQ_INT(MSG0(NSUInteger, s, "length"), 8); /* UTF-16 units: 5 + space + surrogate pair */
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}

/* 1000 dispatches through the whole surface; `make check` (LeakSanitizer) fails the
 * test if any object or command leaks, and buffers must be back to one reference. */
TEST(sw_objc_thousand_dispatches_release_everything) {
    id outer = new_pool();
    id dev = swmtl_create_system_default_device();
    id lib = swmtl_new_native_library(dev, kernels);
    id pso = new_pipeline(dev, lib, "add");
    id queue = MSG0(id, dev, "newCommandQueue");
    id bufs[2];
    bufs[0] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 128, NSUInteger, 0);
    bufs[1] = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, 128, NSUInteger, 0);
    float *o = MSG0(void *, bufs[1], "contents");
    for (int it = 0; it < 1000; it++) {
        id pool = new_pool();
        id cb = MSG0(id, queue, "commandBuffer");
        id enc = MSG0(id, cb, "computeCommandEncoder");
        MSG1(void, enc, "setComputePipelineState:", id, pso);
        MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[0], NSUInteger, 0, NSUInteger, 0);
        MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[1], NSUInteger, 0, NSUInteger, 1);
        float bias = (float)it;
        MSG3(void, enc, "setBytes:length:atIndex:", const void *, &bias, NSUInteger, 4, NSUInteger, 2);
        MTLSize g = {1, 1, 1}, t = {32, 1, 1};
        MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, g, MTLSize, t);
        MSG0(void, enc, "endEncoding");
        MSG0(void, cb, "commit");
        if (it % 2) MSG0(void, cb, "waitUntilCompleted");
        else MSG0(void, cb, "waitUntilScheduled");
        MSG0(void, pool, "drain");
    }
    /* The queue runs in order: the last wait (it = 999) covered all of them. */
    CHECK_NEAR(o[5], 999.0f, 0);
    CHECK_EQ_INT(MSG0(NSUInteger, bufs[0], "retainCount"), 1);
    CHECK_EQ_INT(MSG0(NSUInteger, pso, "retainCount"), 1);
    MSG0(void, bufs[0], "release");
    MSG0(void, bufs[1], "release");
    MSG0(void, queue, "release");
    MSG0(void, pso, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, outer, "drain");
}

/* Apple's runtime sends +initialize before a class's first message and gives a
 * root class made at run time none: SWObject must have its own, as a class method
 * (on the metaclass), which every class of the device inherits. */
TEST(sw_objc_root_class_has_initialize) {
    sw_objc_init();
    Class root = sw_root_class();
    SEL init = sel_registerName("initialize");
    unsigned n = 0;
    Method *ms = class_copyMethodList(object_getClass((id)root), &n);
    int on_meta = 0;
    for (unsigned i = 0; i < n; i++) on_meta |= sel_isEqual(method_getName(ms[i]), init);
    free(ms);
    CHECK_MSG(on_meta, "+initialize is not a class method of SWObject");
    const char *classes[] = {"MTLCompileOptions", "MTLFunctionConstantValues"};
    for (int i = 0; i < 2; i++) CHECK(class_getClassMethod(swmtl_class(classes[i]), init) != NULL);
    id dev = swmtl_create_system_default_device();
    CHECK(class_getClassMethod(object_getClass(dev), init) != NULL);
    MSG0(void, (id)object_getClass(dev), "initialize"); /* a no-op: must not crash */
    MSG0(void, dev, "release");
}

/* The classes the host instantiates come from swmtl_class(): the device accepts
 * only its own, and on a Mac the MTL names belong to Metal.framework. */
TEST(sw_objc_host_classes_are_the_devices_own) {
    Class fcv = swmtl_class("MTLFunctionConstantValues"), opts = swmtl_class("MTLCompileOptions");
    CHECK(fcv != Nil && opts != Nil && fcv != opts);
    CHECK(swmtl_class("NSString") == Nil && swmtl_class(NULL) == Nil);
    CHECK(strcmp(class_getName(fcv), "SWMTLFunctionConstantValues") == 0);
    CHECK(strcmp(class_getName(opts), "SWMTLCompileOptions") == 0);
#if defined(__APPLE__)
    CHECK(objc_class_named("MTLFunctionConstantValues") != (id)fcv);
#else
    /* No class answers to the Metal name here either, so a host that looked it up
     * by name fails on Linux just as it would on a Mac. */
    CHECK(objc_class_named("MTLFunctionConstantValues") == nil);
    CHECK(objc_class_named("MTLCompileOptions") == nil);
#endif
}

/* What the device offers beyond Metal's API is reached through its extension
 * selectors (swmetal.h), asked with objc_responds as a host asks for Metal's optional
 * features: SWObject has no -respondsToSelector:, so its classes answer; the class of
 * a Metal object does not answer them. */
TEST(sw_objc_device_answers_its_extension_selectors) {
    id dev = swmtl_create_system_default_device();
    Class cls = object_getClass(dev);
    CHECK(class_respondsToSelector(cls, sel_registerName("gdn_metalClassNamed:")));
    CHECK(MSG1(Class, dev, "gdn_metalClassNamed:", const char *, "MTLCompileOptions") == swmtl_class("MTLCompileOptions"));
    CHECK(MSG1(Class, dev, "gdn_metalClassNamed:", const char *, "NSString") == Nil);
    CHECK(class_respondsToSelector(cls, sel_registerName("gdn_fastMathApplies")));
    CHECK(!MSG0(BOOL, dev, "gdn_fastMathApplies"));
    CHECK(class_respondsToSelector(cls, sel_registerName("gdn_supportsGPUCapture")));
    CHECK(!MSG0(BOOL, dev, "gdn_supportsGPUCapture"));
    CHECK(!class_respondsToSelector(cls, sel_registerName("gdn_findings:"))); /* a command buffer's */
    CHECK(objc_responds(dev, "gdn_fastMathApplies") && !objc_responds(dev, "gdn_findings:"));
    id queue = MSG0(id, dev, "newCommandQueue");
    id pool = MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
    id cb = MSG0(id, queue, "commandBuffer");
    CHECK(class_respondsToSelector(object_getClass(cb), sel_registerName("gdn_findings:")));
    int n = -1;
    CHECK(MSG1(const void *, cb, "gdn_findings:", int *, &n) == NULL && n == 0); /* not completed */
    MSG0(void, pool, "drain");
    MSG0(void, queue, "release");
    MSG0(void, dev, "release");
}

/* An object the device autoreleases goes to the NSAutoreleasePool the host pushes
 * (objc4's pool on a Mac, ours on Linux) and is released when it drains. */
TEST(sw_objc_autoreleased_objects_go_to_the_hosts_pool) {
    id dev = swmtl_create_system_default_device();
    id queue = MSG0(id, dev, "newCommandQueue");
    id lib = swmtl_new_native_library(dev, kernels);
    long live = sw_objc_live_objects();
    id pool = new_pool();
    id cb = MSG0(id, queue, "commandBuffer");
    CHECK(cb != nil);
    MSG0(id, cb, "retain");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "retainCount"), 2);
    id err = nil;
    id fn = MSG3(id, lib, "newFunctionWithName:constantValues:error:", id, str("no_such"), id, nil, id *, &err);
    CHECK(fn == nil && err != nil);
    CHECK(sw_objc_live_objects() > live);
    MSG0(void, pool, "drain");
    CHECK_EQ_INT(MSG0(NSUInteger, cb, "retainCount"), 1);
    MSG0(void, cb, "release");
    CHECK_EQ_INT(sw_objc_live_objects(), live);
    MSG0(void, lib, "release");
    MSG0(void, queue, "release");
    MSG0(void, dev, "release");
}

/* The pipeline limits Metal enforces (issue 32): a kernel's
 * [[max_total_threads_per_threadgroup(N)]] is its pipeline's
 * maxTotalThreadsPerThreadgroup, and a dispatch of more threads per threadgroup
 * fails naming both numbers (a GPU skips it silently); a threadgroup memory length
 * that is not a multiple of 16 is refused as Metal's validation refuses it. */
TEST(sw_objc_pipeline_limits) {
    id pool = new_pool();
    id dev = swmtl_create_system_default_device();
    id lib = swmtl_new_native_library(dev, kernels);
    id pso = new_pipeline(dev, lib, "capped");
    CHECK_EQ_INT(MSG0(NSUInteger, pso, "maxTotalThreadsPerThreadgroup"), 64);
    float zero[128] = {0};
    id in = MSG3(id, dev, "newBufferWithBytes:length:options:", const void *, zero, NSUInteger, sizeof zero,
                 NSUInteger, 0);
    id out = MSG2(id, dev, "newBufferWithLength:options:", NSUInteger, sizeof zero, NSUInteger, 0);
    id bufs[3] = {in, out, in};
    id queue = MSG0(id, dev, "newCommandQueue");
    /* 128 > 64 threads: the limit case, and 64: the control */
    for (uint32_t tg = 128; tg >= 64; tg /= 2) {
        id cb = encode_1d(queue, pso, bufs, 3, 1, tg);
        MSG0(void, cb, "commit");
        MSG0(void, cb, "waitUntilCompleted");
        const char *e = error_text(cb);
        if (tg == 128) {
            CHECK_EQ_INT(MSG0(NSUInteger, cb, "status"), 5);
            CHECK_MSG(e && strstr(e, "128 threads per threadgroup") && strstr(e, "maxTotalThreadsPerThreadgroup of 64"),
                      "error: %s", e ? e : "(none)");
        } else {
            CHECK_MSG(MSG0(NSUInteger, cb, "status") == 4, "error: %s", e ? e : "(none)");
        }
    }
    /* threadgroup memory: 20 bytes is refused, 32 is taken */
    for (NSUInteger len = 20; len <= 32; len += 12) {
        id cb = MSG0(id, queue, "commandBuffer");
        id enc = MSG0(id, cb, "computeCommandEncoder");
        MSG1(void, enc, "setComputePipelineState:", id, pso);
        for (int i = 0; i < 3; i++)
            MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[i], NSUInteger, 0, NSUInteger, (NSUInteger)i);
        MSG2(void, enc, "setThreadgroupMemoryLength:atIndex:", NSUInteger, len, NSUInteger, 0);
        MTLSize g = {1, 1, 1}, t = {32, 1, 1};
        MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, g, MTLSize, t);
        MSG0(void, enc, "endEncoding");
        MSG0(void, cb, "commit");
        MSG0(void, cb, "waitUntilCompleted");
        const char *e = error_text(cb);
        if (len == 20)
            CHECK_MSG(e && strstr(e, "setThreadgroupMemoryLength:20 atIndex:0") && strstr(e, "multiple of 16"),
                      "error: %s", e ? e : "(none)");
        else
            CHECK_MSG(e == NULL, "error: %s", e);
    }
    MSG0(void, queue, "release");
    MSG0(void, in, "release");
    MSG0(void, out, "release");
    MSG0(void, pso, "release");
    MSG0(void, lib, "release");
    MSG0(void, dev, "release");
    MSG0(void, pool, "drain");
}
