/* test_kcase_bind.c — a kernel case bound to a kernel's reflected parameters
 * (src/runner/kcase_bind.c): by name at the declared index, by "index", by a
 * dispatch's "bind"; threadgroup lengths by index; and one line naming the key for an
 * unbound parameter, a buffer the kernel lacks, an expectation on a const parameter,
 * a threadgroup over the pipeline's limit, a missing or stray threadgroup length. */
#include <string.h>

#include "metal/mtl.h"
#include "runner/kcase_bind.h"
#include "swmetal/swmetal.h"
#include "test.h"

static const mtl_argument add_one_args[] = {
    {.name = "x", .kind = MTL_ARG_BUFFER, .index = 0, .read_only = 1, .data_type = 3},
    {.name = "out", .kind = MTL_ARG_BUFFER, .index = 1, .read_only = 0, .data_type = 3},
    {.name = "n", .kind = MTL_ARG_BUFFER, .index = 2, .read_only = 1, .data_type = 33}};

static const char base_case[] =
    "{\"case\": 1, \"source\": \"k.metal\", \"function\": \"add_one\", \"dispatch\": {\"grid\": [64], \"threadgroup\": [32]%s},\n"
    " \"buffers\": {\"x\": {\"dtype\": \"float32\", \"shape\": [64]%s}, \"out\": {\"dtype\": \"float32\", \"shape\": [64],"
    " \"expect\": {\"value\": 1}}, %s}}";

/* The case with the three holes filled; binds launch 0 against args; returns the
 * kc_bind_* result, err holding the message. */
static int bind_case(const char *dispatch_extra, const char *x_extra, const char *rest, const mtl_argument *args,
                     int nargs, unsigned max_threads, kc_binding *out, char *err, size_t errlen) {
    char text[2048];
    snprintf(text, sizeof text, base_case, dispatch_extra, x_extra, rest);
    kc_case *c = kc_parse(text, strlen(text), "t.json", ".", err, errlen);
    if (!c) return -2;
    int n = 0, writable[32];
    int rc = kc_bind_launch(c, 0, "add_one", args, nargs, max_threads, out, &n, err, errlen);
    kc_binding *per[1] = {out};
    if (rc == 0) rc = kc_bind_check_case(c, per, &n, writable, err, errlen);
    kc_free(c);
    return rc;
}

TEST(kcase_bind_by_name_index_and_bind) {
    kc_binding b[8];
    char err[512] = "";
    CHECK_MSG(bind_case("", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", add_one_args, 3, 1024, b, err, sizeof err) == 0,
              "%s", err);
    CHECK(b[0].buffer == 0 && b[1].buffer == 1 && b[2].buffer == 2 && b[1].writable && !b[0].writable);
    /* a buffer of another name bound by "index" */
    CHECK_MSG(bind_case("", "", "\"count\": {\"dtype\": \"uint32\", \"value\": 64, \"index\": 2}", add_one_args, 3, 1024, b,
                        err, sizeof err) == 0, "%s", err);
    CHECK(b[2].buffer == 2 && strcmp(b[2].param, "n") == 0);
}

TEST(kcase_bind_errors_name_the_key) {
    static const struct {
        const char *dispatch, *x, *rest;
        unsigned max_threads;
        const char *want;
    } bad[] = {
        {"", "", "\"m\": {\"dtype\": \"uint32\", \"value\": 64}", 1024,
         "t.json: buffers: parameter 'n' [[buffer(2)]] of 'add_one' is not bound: add \"n\" to \"buffers\" (its buffer parameters: x, out, n)"},
        {"", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}, \"extra\": {\"dtype\": \"uint32\", \"value\": 1}", 1024,
         "t.json: buffers.extra: the kernel has no buffer parameter of that name"},
        {"", ", \"expect\": {\"value\": 0}", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", 1024,
         "t.json: buffers.x.expect: the kernel cannot write x"},
        {"", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", 16,
         "t.json: dispatch.threadgroup: 32 threads is over 'add_one''s maxTotalThreadsPerThreadgroup (16)"},
        {", \"threadgroup_memory\": {\"1\": 64}", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", 1024,
         "t.json: dispatch.threadgroup_memory.1: 'add_one' has no [[threadgroup(1)]] parameter"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_binding b[8];
        char err[512] = "";
        int rc = bind_case(bad[i].dispatch, bad[i].x, bad[i].rest, add_one_args, 3, bad[i].max_threads, b, err, sizeof err);
        CHECK_MSG(rc == -1, "bad case %zu: rc %d (%s)", i, rc, err);
        CHECK_MSG(strstr(err, bad[i].want) != NULL, "bad case %zu: '%s' lacks '%s'", i, err, bad[i].want);
    }
    /* a threadgroup parameter needs its length */
    mtl_argument with_tg[4];
    memcpy(with_tg, add_one_args, sizeof add_one_args);
    with_tg[3] = (mtl_argument){.name = "scratch", .kind = MTL_ARG_THREADGROUP, .index = 0, .read_only = 0, .data_type = 3};
    kc_binding b[8];
    char err[512] = "";
    CHECK(bind_case("", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", with_tg, 4, 1024, b, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "dispatch.threadgroup_memory: 'add_one' declares threadgroup parameter 'scratch' [[threadgroup(0)]]: "
                          "give its length, \"0\": BYTES"), "%s", err);
    CHECK(bind_case(", \"threadgroup_memory\": {\"0\": 256}", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", with_tg, 4,
                    1024, b, err, sizeof err) == 0);
    CHECK(b[3].kind == MTL_ARG_THREADGROUP && b[3].tg_bytes == 256);
}

/* The same binding from the software device's own reflection of tests' add_one. */
TEST(kcase_bind_from_reflection) {
    static const char src[] = "kernel void add_one(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],\n"
                              "    constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
                              "    if (i < n) out[i] = x[i] + 1.0f;\n}\n";
    char err[512] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    mtl_library *lib = d ? mtl_library_new(d, src, "add_one.metal", NULL, 0, err, sizeof err) : NULL;
    mtl_pipeline *p = lib ? mtl_pipeline_new(d, lib, "add_one", NULL, 0, err, sizeof err) : NULL;
    CHECK_MSG(p != NULL, "%s", err);
    if (p) {
        const mtl_argument *a;
        int n = mtl_pipeline_arguments(p, &a);
        kc_binding b[8];
        CHECK_MSG(bind_case("", "", "\"n\": {\"dtype\": \"uint32\", \"value\": 64}", a, n, mtl_pipeline_max_threads(p), b, err,
                            sizeof err) == 0, "%s", err);
        CHECK(n == 3 && b[0].buffer == 0 && b[1].buffer == 1 && b[2].buffer == 2 && b[1].writable && !b[2].writable);
    }
    mtl_pipeline_free(p);
    mtl_library_free(lib);
    mtl_device_free(d);
}
