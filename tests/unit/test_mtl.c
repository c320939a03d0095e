/* test_mtl.c — the plain-C Metal layer (src/metal/mtl.c) on the software device:
 * compile, pipeline, buffers, 1000 dispatches with correct results (leak-free under
 * `make check`), compile errors and faults reported as text, never a crash. */
#include <string.h>
#include <time.h>

#include "metal/mtl.h"
#include "swmetal/objc_base.h"
#include "swmetal/swmetal.h"
#include "test.h"

static const char *saxpy_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],\n"
    "                  constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n"
    "kernel void oob(device float *y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
    "    y[i + 1] = 1.0f;\n"
    "}\n";

TEST(mtl_thousand_dispatches_are_correct) {
    char err[512] = "";
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    CHECK_MSG(d != NULL, "%s", err);
    if (!d) return;
    CHECK_MSG(strcmp(mtl_device_name(d), "gdnbench software device") == 0, "%s", mtl_device_name(d));
    mtl_library *lib = mtl_library_new(d, saxpy_src, "saxpy.metal", NULL, 0, err, sizeof err);
    CHECK_MSG(lib != NULL, "%s", err);
    mtl_pipeline *p = lib ? mtl_pipeline_new(d, lib, "saxpy", NULL, 0, err, sizeof err) : NULL;
    CHECK_MSG(p != NULL, "%s", err);
    enum { N = 256 };
    mtl_buffer *x = mtl_buffer_new(d, N * sizeof(float), err, sizeof err);
    mtl_buffer *y = mtl_buffer_new(d, N * sizeof(float), err, sizeof err);
    CHECK(x && y);
    if (p && x && y) {
        float *xs = mtl_buffer_contents(x), *ys = mtl_buffer_contents(y);
        for (int i = 0; i < N; i++) xs[i] = (float)i, ys[i] = 0;
        float a = 1.0f;
        mtl_dispatch ds = {.pipeline = p, .nbuffers = 2, .nbytes = 1, .grid = {N / 64, 1, 1}, .tg = {64, 1, 1}};
        ds.buffers[0].index = 0, ds.buffers[0].buffer = x;
        ds.buffers[1].index = 1, ds.buffers[1].buffer = y;
        ds.bytes[0].index = 2, ds.bytes[0].data = &a, ds.bytes[0].length = sizeof a;
        int ok = 1;
        double gpu_us = -1;
        for (int it = 0; it < 1000 && ok; it++) ok = mtl_run(d, &ds, 1, &gpu_us, err, sizeof err) == 0;
        CHECK_MSG(ok, "%s", err);
        CHECK(gpu_us >= 0);
        int bad = 0;
        for (int i = 0; i < N; i++) bad += ys[i] != 1000.0f * (float)i;
        CHECK_EQ_INT(bad, 0);
    }
    mtl_buffer_free(x);
    mtl_buffer_free(y);
    mtl_pipeline_free(p);
    mtl_library_free(lib);
    mtl_device_free(d);
}

TEST(mtl_errors_are_text) {
    char err[512] = "";
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    if (!d) {
        CHECK_MSG(0, "%s", err);
        return;
    }
    mtl_library *bad = mtl_library_new(d, "kernel void f( {\n", "broken.metal", NULL, 0, err, sizeof err);
    CHECK(bad == NULL);
    CHECK_MSG(strstr(err, "broken.metal") != NULL, "compile error does not name the file: %s", err);

    mtl_library *lib = mtl_library_new(d, saxpy_src, "saxpy.metal", NULL, 0, err, sizeof err);
    CHECK_MSG(lib != NULL, "%s", err);
    if (lib) {
        mtl_pipeline *none = mtl_pipeline_new(d, lib, "no_such_kernel", NULL, 0, err, sizeof err);
        CHECK(none == NULL);
        CHECK_MSG(strstr(err, "no_such_kernel") != NULL, "%s", err);
        mtl_pipeline *p = mtl_pipeline_new(d, lib, "oob", NULL, 0, err, sizeof err);
        mtl_buffer *y = mtl_buffer_new(d, 64 * sizeof(float), err, sizeof err);
        if (p && y) {
            mtl_dispatch ds = {.pipeline = p, .nbuffers = 1, .grid = {1, 1, 1}, .tg = {64, 1, 1}};
            ds.buffers[0].index = 0, ds.buffers[0].buffer = y;
            double us;
            err[0] = 0;
            CHECK(mtl_run(d, &ds, 1, &us, err, sizeof err) != 0);
            CHECK_MSG(strstr(err, "oob") != NULL, "fault does not name the kernel: %s", err);
            /* The device keeps working after a fault. */
            mtl_pipeline *q = mtl_pipeline_new(d, lib, "saxpy", NULL, 0, err, sizeof err);
            CHECK(q != NULL);
            mtl_pipeline_free(q);
        }
        mtl_buffer_free(y);
        mtl_pipeline_free(p);
        mtl_library_free(lib);
    }
    mtl_device_free(d);
}

static const char *scaled_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "constant float scale [[function_constant(0)]];\n"
    "kernel void scaled(device float *y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
    "    y[i] = scale * float(i);\n"
    "}\n";

/* Function constants go through the software device's own MTLFunctionConstantValues
 * (on a Mac, Metal.framework's class of that name means nothing to it); fast math
 * is recorded as not in effect there, whatever was asked; and everything mtl.c
 * autoreleases into its pools is released when they drain. */
TEST(mtl_constants_fast_math_and_pools_on_the_software_device) {
    char err[512] = "";
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    CHECK_MSG(d != NULL, "%s", err);
    if (!d) return;
    CHECK(!mtl_device_fast_math_applies(d));
    mtl_library *lib = mtl_library_new(d, scaled_src, "scaled.metal", NULL, 1, err, sizeof err);
    CHECK_MSG(lib != NULL, "%s", err);
    mtl_buffer *y = mtl_buffer_new(d, 64 * sizeof(float), err, sizeof err);
    if (lib && y) {
        CHECK(!mtl_library_fast_math(lib));
        /* the counter sample buffer the probe makes is the device's to keep */
        char why[200];
        (void)mtl_device_stage_counters(d, why, sizeof why);
        long live = sw_objc_live_objects();
        /* what the library and the device say: arrays and names, in pools */
        CHECK_EQ_INT(mtl_library_function_count(lib), 1);
        CHECK(mtl_library_has_function(lib, "scaled"));
        (void)mtl_device_recommended_working_set(d);
        mtl_constant c = {.index = 0, .value = "2.5"};
        mtl_pipeline *p = mtl_pipeline_new(d, lib, "scaled", &c, 1, err, sizeof err);
        CHECK_MSG(p != NULL, "function constants through mtl.c: %s", err);
        mtl_pipeline *none = mtl_pipeline_new(d, lib, "no_such_kernel", &c, 1, err, sizeof err);
        CHECK(none == NULL); /* its NSError is autoreleased into mtl.c's pool */
        if (p) {
            mtl_dispatch ds = {.pipeline = p, .nbuffers = 1, .grid = {1, 1, 1}, .tg = {64, 1, 1}};
            ds.buffers[0].index = 0, ds.buffers[0].buffer = y;
            double us;
            for (int it = 0; it < 10; it++) CHECK_MSG(mtl_run(d, &ds, 1, &us, err, sizeof err) == 0, "%s", err);
            const float *ys = mtl_buffer_contents(y);
            int bad = 0;
            for (int i = 0; i < 64; i++) bad += ys[i] != 2.5f * (float)i;
            CHECK_EQ_INT(bad, 0);
            mtl_pipeline_free(p);
        }
        /* Command buffers, encoders, strings and errors: all gone with their pools.
         * The queue's worker drops its own reference to a command buffer just after
         * completing it, so allow it a moment (not a timing assertion: 5 s is an
         * eternity for one release). */
        for (int wait = 0; wait < 500 && sw_objc_live_objects() != live; wait++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        CHECK_EQ_INT(sw_objc_live_objects(), live);
    }
    mtl_buffer_free(y);
    mtl_library_free(lib);
    mtl_device_free(d);
}

/* A private buffer is reached by blits only, whose sizes must be multiples of 4 on
 * macOS: its allocation and every copy are rounded up to whole words. */
TEST(mtl_blit_length_is_whole_words) {
    CHECK_EQ_INT(mtl_blit_length(0), 0);
    CHECK_EQ_INT(mtl_blit_length(1), 4);
    CHECK_EQ_INT(mtl_blit_length(2), 4); /* one bf16/f16 element */
    CHECK_EQ_INT(mtl_blit_length(4), 4);
    CHECK_EQ_INT(mtl_blit_length(6), 8); /* three */
    CHECK_EQ_INT(mtl_blit_length(7), 8);
    CHECK_EQ_INT(mtl_blit_length(8), 8);
    CHECK_EQ_INT(mtl_blit_length((size_t)1 << 33 | 2), ((size_t)1 << 33) + 4);
}
