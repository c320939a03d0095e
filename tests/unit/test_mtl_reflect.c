/* test_mtl_reflect.c — pipeline reflection through the bridge (src/metal/mtl_reflect.c)
 * on the software device (src/swmetal/objc_reflection.c): every buffer and
 * threadgroup parameter with its source name, declared index, access and element
 * type, the thread-position attributes left out; a struct parameter's members at
 * the offsets the compiled kernel gives them; and function constants set by their
 * declared name (mtl_constant.name), an unknown name refused with the real ones. */
#include <string.h>

#include "metal/mtl.h"
#include "swmetal/swmetal.h"
#include "test.h"

static const char reflect_src[] =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "struct Params { bool flag; long n; packed_float3 v; float3 w; int a[3]; };\n"
    "constant bool has_w [[function_constant(7)]];\n"
    "constant int reps [[function_constant(3)]];\n"
    "kernel void k(device const half *x [[buffer(4)]], device float4 *out [[buffer(1)]],\n"
    "              constant Params &p [[buffer(0)]], constant uint &n [[buffer(2)]],\n"
    "              threadgroup float *scratch [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {\n"
    "    scratch[0] = 0.0f;\n"
    "    if (i < n) out[i] = float4(float(x[i]) + (has_w ? float(reps) : 0.0f) + p.v[0]);\n"
    "}\n";

static const mtl_argument *find_arg(const mtl_argument *a, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(a[i].name, name) == 0) return &a[i];
    return NULL;
}

TEST(mtl_reflect_arguments_by_name) {
    char err[512] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    CHECK_MSG(d != NULL, "%s", err);
    if (!d) return;
    mtl_library *lib = mtl_library_new(d, reflect_src, "reflect.metal", NULL, 0, err, sizeof err);
    CHECK_MSG(lib != NULL, "%s", err);
    mtl_constant c[2] = {{.index = -1}, {.index = -1}};
    snprintf(c[0].name, sizeof c[0].name, "has_w");
    snprintf(c[0].value, sizeof c[0].value, "true");
    snprintf(c[1].name, sizeof c[1].name, "reps");
    snprintf(c[1].value, sizeof c[1].value, "5");
    mtl_pipeline *p = lib ? mtl_pipeline_new(d, lib, "k", c, 2, err, sizeof err) : NULL;
    CHECK_MSG(p != NULL, "%s", err);
    if (p) {
        const mtl_argument *a;
        int n = mtl_pipeline_arguments(p, &a);
        CHECK_EQ_INT(n, 5);
        const mtl_argument *x = find_arg(a, n, "x"), *out = find_arg(a, n, "out"), *pa = find_arg(a, n, "p"),
                           *nn = find_arg(a, n, "n"), *s = find_arg(a, n, "scratch");
        CHECK(x && x->kind == MTL_ARG_BUFFER && x->index == 4 && x->read_only && x->data_type == 16 /* half */);
        CHECK(out && out->index == 1 && !out->read_only && out->data_type == 6 /* float4 */);
        CHECK(pa && pa->index == 0 && pa->read_only && pa->data_type == 1 /* struct */);
        /* the struct as the compiler laid it out (MTLStructType): the bool padded to the
         * long's 8, packed_float3 12 bytes, float3 aligned to 16, the int array after it */
        CHECK(pa && pa->struct_size == 64 && pa->nfields == 5);
        if (pa && pa->nfields == 5) {
            static const struct { const char *name; unsigned long offset, type, count; } want[] = {
                {"flag", 0, 53, 0}, {"n", 8, 81, 0}, {"v", 16, 5, 0}, {"w", 32, 5, 0}, {"a", 48, 29, 3}};
            for (int i = 0; i < 5; i++) {
                const mtl_struct_field *f = &pa->fields[i];
                CHECK_MSG(!strcmp(f->name, want[i].name) && f->offset == want[i].offset && f->data_type == want[i].type &&
                              f->count == want[i].count && !f->nested,
                          "member %d: %s at %lu type %lu count %lu", i, f->name, f->offset, f->data_type, f->count);
            }
            CHECK(pa->fields[4].stride == 4);
        }
        CHECK(nn && nn->index == 2 && nn->read_only && nn->data_type == 33 /* uint */);
        CHECK(s && s->kind == MTL_ARG_THREADGROUP && s->index == 0);
        CHECK(find_arg(a, n, "i") == NULL);
        mtl_pipeline_free(p);
    }
    snprintf(c[1].name, sizeof c[1].name, "repz");
    p = lib ? mtl_pipeline_new(d, lib, "k", c, 2, err, sizeof err) : NULL;
    CHECK(p == NULL);
    CHECK_MSG(strstr(err, "function constant 'repz': 'k' declares no constant of that name") && strstr(err, "reps"),
              "%s", err);
    mtl_pipeline_free(p);
    mtl_library_free(lib);
    mtl_device_free(d);
}

/* mtl_dispatch.threads: dispatchThreads: runs exactly the grid's threads (the last
 * threadgroup partial), where dispatchThreadgroups: would run whole threadgroups. */
TEST(mtl_dispatch_threads_runs_exactly_the_grid) {
    static const char src[] = "kernel void mark(device uint *y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
                              "    y[i] = 1u;\n"
                              "}\n";
    char err[512] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    mtl_library *lib = d ? mtl_library_new(d, src, "mark.metal", NULL, 0, err, sizeof err) : NULL;
    mtl_pipeline *p = lib ? mtl_pipeline_new(d, lib, "mark", NULL, 0, err, sizeof err) : NULL;
    mtl_buffer *y = p ? mtl_buffer_new(d, 128 * sizeof(uint32_t), err, sizeof err) : NULL;
    CHECK_MSG(y != NULL, "%s", err);
    for (int threads = 0; y && threads < 2; threads++) {
        uint32_t *ys = mtl_buffer_contents(y);
        memset(ys, 0, 128 * sizeof *ys);
        mtl_dispatch ds = {.pipeline = p, .nbuffers = 1, .grid = {threads ? 100 : 2, 1, 1}, .tg = {64, 1, 1}};
        ds.threads = threads;
        ds.buffers[0].buffer = y;
        double us;
        CHECK_MSG(mtl_run(d, &ds, 1, &us, err, sizeof err) == 0, "%s", err);
        int written = 0;
        for (int i = 0; i < 128; i++) written += ys[i] == 1u;
        CHECK_EQ_INT(written, threads ? 100 : 128);
    }
    mtl_buffer_free(y);
    mtl_pipeline_free(p);
    mtl_library_free(lib);
    mtl_device_free(d);
}
