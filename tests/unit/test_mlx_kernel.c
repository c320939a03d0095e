/* test_mlx_kernel.c — the `mx.fast.metal_kernel` signature generator
 * (src/msl/mlx_kernel.c): the text it writes for representative specs, the
 * parameter table the runner binds from, and — the test that matters — that
 * what it generates compiles on the software device and computes the right
 * values, `_shape`/`_strides`/`_ndim` included. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"
#include "msl/mlx_kernel.h"
#include "msl/msl_include.h"
#include "sw_test_env.h"
#include "swmetal/swmetal.h"
#include "test.h"

static mlxk_spec exp_spec(void) {
    mlxk_spec s = {0};
    s.name = "myexp";
    s.source = "        uint elem = thread_position_in_grid.x;\n"
               "        T tmp = inp[elem];\n"
               "        out[elem] = metal::exp(tmp);";
    s.inputs[0] = (mlxk_array){"inp", "float32", 1, 1000};
    s.ninputs = 1;
    s.outputs[0] = (mlxk_array){"out", "float32", 1, 1000};
    s.noutputs = 1;
    s.targs[0] = (mlxk_targ){"T", MLXK_TARG_DTYPE, "float32", 0};
    s.ntargs = 1;
    s.ensure_row_contiguous = 1;
    return s;
}

/* MLX's own documentation example, generated as MLX generates it. */
TEST(mlx_kernel_text_of_the_exp_example) {
    mlxk_spec s = exp_spec();
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    const char *want = "#include <metal_stdlib>\nusing namespace metal;\ntypedef half float16_t;\n"
                       "typedef bfloat bfloat16_t;\n"
                       "template <typename T>\n"
                       "[[kernel]] void custom_kernel_myexp__float_float_float(\n"
                       "  const device float* inp [[buffer(0)]],\n"
                       "  device float* out [[buffer(1)]],\n"
                       "  uint3 thread_position_in_grid [[thread_position_in_grid]]) {\n"
                       "        uint elem = thread_position_in_grid.x;\n"
                       "        T tmp = inp[elem];\n"
                       "        out[elem] = metal::exp(tmp);\n"
                       "}\n"
                       "\ntemplate [[host_name(\"custom_kernel_myexp__float_float_float\")]] [[kernel]] "
                       "decltype(custom_kernel_myexp__float_float_float<float>) "
                       "custom_kernel_myexp__float_float_float<float>;\n";
    CHECK_MSG(strcmp(k.text, want) == 0, "generated:\n%s", k.text);
    CHECK(strcmp(k.function, "custom_kernel_myexp__float_float_float") == 0);
    CHECK_EQ_INT(k.nparams, 2);
    CHECK(k.params[0].kind == MLXK_PARAM_INPUT && k.params[0].index == 0 && strcmp(k.params[0].name, "inp") == 0);
    CHECK(k.params[1].kind == MLXK_PARAM_OUTPUT && k.params[1].index == 1 && strcmp(k.params[1].name, "out") == 0);
    mlxk_kernel_free(&k);
}

/* Every rule at once: shape parameters right after their input, a 0-d input as a
 * constant reference, a small one in constant memory, int and bool template
 * arguments, atomic outputs, attributes in MLX's order, a header before it all. */
TEST(mlx_kernel_text_shape_scalar_template_atomic) {
    mlxk_spec s = {0};
    s.name = "k";
    s.header = "// header\n";
    s.source = "  int n = a_ndim + a_shape[0] + (int)a_strides[0] + b_shape[0] + N + (int)F;\n"
               "  uint t = threads_per_threadgroup.x + thread_index_in_simdgroup;";
    s.inputs[0] = (mlxk_array){"a", "float16", 2, 64};
    s.inputs[1] = (mlxk_array){"b", "int32", 1, 4};
    s.inputs[2] = (mlxk_array){"c", "bfloat16", 0, 1};
    s.ninputs = 3;
    s.outputs[0] = (mlxk_array){"o", "float32", 1, 0};
    s.outputs[1] = (mlxk_array){"p", "uint32", 1, 0};
    s.noutputs = 2;
    s.targs[0] = (mlxk_targ){"N", MLXK_TARG_INT, NULL, 3};
    s.targs[1] = (mlxk_targ){"F", MLXK_TARG_BOOL, NULL, 1};
    s.ntargs = 2;
    s.atomic_outputs = 1;
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    const char *host = "custom_kernel_k__3_1_float16_t_int32_tc_bfloat16_ts_float_uint32_t";
    CHECK_MSG(strcmp(k.function, host) == 0, "%s", k.function);
    const char *sig = "// header\ntemplate <int N, bool F>\n"
                      "[[kernel]] void custom_kernel_k__3_1_float16_t_int32_tc_bfloat16_ts_float_uint32_t(\n"
                      "  const device float16_t* a [[buffer(0)]],\n"
                      "  const constant int* a_shape [[buffer(1)]],\n"
                      "  const constant int64_t* a_strides [[buffer(2)]],\n"
                      "  const constant int& a_ndim [[buffer(3)]],\n"
                      "  const constant int32_t* b [[buffer(4)]],\n"
                      "  const constant int* b_shape [[buffer(5)]],\n"
                      "  const constant bfloat16_t& c [[buffer(6)]],\n"
                      "  device atomic<float>* o [[buffer(7)]],\n"
                      "  device atomic<uint32_t>* p [[buffer(8)]],\n"
                      "  uint thread_index_in_simdgroup [[thread_index_in_simdgroup]],\n"
                      "  uint3 threads_per_threadgroup [[threads_per_threadgroup]]) {\n";
    CHECK_MSG(strstr(k.text, sig) != NULL, "generated:\n%s", k.text);
    CHECK(strstr(k.text, "decltype(custom_kernel_k__3_1_float16_t_int32_tc_bfloat16_ts_float_uint32_t<3, 1>)"));
    const int kinds[] = {MLXK_PARAM_INPUT, MLXK_PARAM_SHAPE, MLXK_PARAM_STRIDES, MLXK_PARAM_NDIM, MLXK_PARAM_INPUT,
                         MLXK_PARAM_SHAPE, MLXK_PARAM_INPUT, MLXK_PARAM_OUTPUT, MLXK_PARAM_OUTPUT};
    const int ofs[] = {0, 0, 0, 0, 1, 1, 2, 0, 1};
    CHECK_EQ_INT(k.nparams, 9);
    for (int i = 0; i < 9 && i < k.nparams; i++) {
        CHECK_EQ_INT(k.params[i].kind, kinds[i]);
        CHECK_EQ_INT(k.params[i].of, ofs[i]);
        CHECK_EQ_INT(k.params[i].index, i);
    }
    CHECK(strcmp(k.params[3].name, "a_ndim") == 0);
    mlxk_kernel_free(&k);
}

/* No attribute named and shape parameters present: MLX would close the
 * parameter list after the first of two outputs; the generator must not. */
TEST(mlx_kernel_separators_follow_position) {
    mlxk_spec s = {0};
    s.name = "two";
    s.source = "o1[0] = a_shape[0]; o2[0] = 1;";
    s.inputs[0] = (mlxk_array){"a", "float32", 1, 16};
    s.ninputs = 1;
    s.outputs[0] = (mlxk_array){"o1", "int32", 1, 0};
    s.outputs[1] = (mlxk_array){"o2", "int32", 1, 0};
    s.noutputs = 2;
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    CHECK_MSG(strstr(k.text, "  device int32_t* o1 [[buffer(2)]],\n  device int32_t* o2 [[buffer(3)]]) {\n"),
              "%s", k.text);
    CHECK(strcmp(k.function, "custom_kernel_two_float_int32_t_int32_t") == 0);
    mlxk_kernel_free(&k);
}

TEST(mlx_kernel_bad_specs_are_one_line_errors) {
    mlxk_spec s = exp_spec();
    mlxk_kernel k;
    char err[256];
    s.noutputs = 0;
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "output_names") != NULL, "%s", err);
    CHECK(k.text == NULL && k.function == NULL);
    s = exp_spec();
    s.inputs[0].dtype = "float64";
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "buffers.inp.dtype") && strstr(err, "float64"), "%s", err);
    s = exp_spec();
    s.targs[0].dtype = "complex64";
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "template.T") != NULL, "%s", err);
    s = exp_spec();
    s.outputs[0].name = "out put";
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "not an identifier") != NULL, "%s", err);
    CHECK(mlxk_type_name("bfloat16") && strcmp(mlxk_type_name("bfloat16"), "bfloat16_t") == 0);
    CHECK(mlxk_type_name("float64") == NULL);
}

static id new_buffer(sw_test_env *e, const void *data, size_t len) {
    id b = MSG2(id, e->dev, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, 0);
    if (data) memcpy(MSG0(void *, b, "contents"), data, len);
    return b;
}

static int completed_clean(id cb) {
    int kept = 0;
    return MSG0(NSUInteger, cb, "status") == 4 && swmtl_command_buffer_diagnostic_count(cb, &kept) == 0;
}

/* The generated exp kernel, compiled and run as MLX launches it (dispatchThreads). */
TEST(mlx_kernel_generated_elementwise_runs) {
    mlxk_spec s = exp_spec();
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    sw_test_env e;
    sw_test_env_open(&e, "full", k.text, "mlx_exp.metal");
    enum { N = 1000 };
    float in[N];
    for (int i = 0; i < N; i++) in[i] = (float)(i % 41) * 0.1f - 2.0f;
    id bufs[2] = {new_buffer(&e, in, sizeof in), new_buffer(&e, NULL, sizeof in)};
    id cb = sw_test_run(&e, k.function, bufs, 2, "dispatchThreads:threadsPerThreadgroup:", (MTLSize){N, 1, 1},
                        (MTLSize){256, 1, 1});
    CHECK(completed_clean(cb));
    const float *out = MSG0(void *, bufs[1], "contents");
    for (int i = 0; i < N; i++) CHECK_NEAR(out[i], expf(in[i]), 1e-6 * expf(in[i]) + 1e-7);
    for (int i = 0; i < 2; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    mlxk_kernel_free(&k);
}

/* A body that walks its input through `_shape`/`_strides`/`_ndim` (MLX's
 * elem_to_loc, written out): bound with a transposed view's strides, it must
 * read the transpose — so shape is int32 and strides int64 in elements, at the
 * indices the table gives. */
TEST(mlx_kernel_generated_strided_read_runs) {
    mlxk_spec s = {0};
    s.name = "strided_copy";
    s.source = "  uint elem = thread_position_in_grid.x;\n"
               "  int64_t loc = 0;\n"
               "  uint idx = elem;\n"
               "  for (int d = inp_ndim - 1; d >= 0; d--) {\n"
               "    loc += (idx % inp_shape[d]) * inp_strides[d];\n"
               "    idx /= inp_shape[d];\n"
               "  }\n"
               "  out[elem] = inp[loc] * scale;";
    s.inputs[0] = (mlxk_array){"inp", "float32", 2, 12};
    s.inputs[1] = (mlxk_array){"scale", "float32", 0, 1};
    s.ninputs = 2;
    s.outputs[0] = (mlxk_array){"out", "float32", 1, 0};
    s.noutputs = 1;
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    CHECK_EQ_INT(k.nparams, 6);
    sw_test_env e;
    sw_test_env_open(&e, "full", k.text, "mlx_strided.metal");
    /* A 4x3 row-major array seen as its 3x4 transpose: shape {3,4}, strides {1,3}. */
    float in[12], scale = 2.0f;
    for (int i = 0; i < 12; i++) in[i] = (float)i;
    int32_t shape[2] = {3, 4}, ndim = 2;
    int64_t strides[2] = {1, 3};
    id bufs[6];
    for (int i = 0; i < k.nparams; i++) {
        const mlxk_param *p = &k.params[i];
        CHECK_EQ_INT(p->index, i);
        if (p->kind == MLXK_PARAM_INPUT) bufs[i] = p->of == 0 ? new_buffer(&e, in, sizeof in)
                                                               : new_buffer(&e, &scale, sizeof scale);
        else if (p->kind == MLXK_PARAM_SHAPE) bufs[i] = new_buffer(&e, shape, sizeof shape);
        else if (p->kind == MLXK_PARAM_STRIDES) bufs[i] = new_buffer(&e, strides, sizeof strides);
        else if (p->kind == MLXK_PARAM_NDIM) bufs[i] = new_buffer(&e, &ndim, sizeof ndim);
        else bufs[i] = new_buffer(&e, NULL, sizeof in);
    }
    id cb = sw_test_run(&e, k.function, bufs, k.nparams, "dispatchThreads:threadsPerThreadgroup:",
                        (MTLSize){12, 1, 1}, (MTLSize){32, 1, 1});
    CHECK(completed_clean(cb));
    const float *out = MSG0(void *, bufs[5], "contents");
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) CHECK_NEAR(out[r * 4 + c], 2.0f * in[c * 3 + r], 0);
    for (int i = 0; i < k.nparams; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    mlxk_kernel_free(&k);
}

/* Behind MLX's own utils.h (the corpus read in place), as MLX compiles it: a
 * bfloat16 input and a half template argument, MLX's names for both. */
TEST(mlx_kernel_generated_behind_mlx_utils_runs) {
    const char *root = getenv("GDNBENCH_ROOT");
    char corpus[1024], probe[1200];
    snprintf(corpus, sizeof corpus, "%s/../shared/msl_corpus/mlx", root ? root : ".");
    snprintf(probe, sizeof probe, "%s/mlx/backend/metal/kernels/utils.h", corpus);
    FILE *f = fopen(probe, "r");
    if (!f) SKIP("MLX's kernels not found at %s (../shared/msl_corpus/mlx, repo-root relative)", corpus);
    fclose(f);
    mlxk_spec s = {0};
    s.name = "scale_bf16";
    s.source = "  uint i = thread_position_in_grid.x;\n"
               "  out[i] = static_cast<float>(static_cast<U>(inp[i]) * U(2));";
    s.inputs[0] = (mlxk_array){"inp", "bfloat16", 1, 64};
    s.ninputs = 1;
    s.outputs[0] = (mlxk_array){"out", "float32", 1, 0};
    s.noutputs = 1;
    s.targs[0] = (mlxk_targ){"U", MLXK_TARG_DTYPE, "float16", 0};
    s.ntargs = 1;
    s.preamble = MLXK_PREAMBLE_MLX_UTILS;
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    CHECK(strcmp(k.function, "custom_kernel_scale_bf16__float16_t_bfloat16_t_float") == 0);
    msl_source_opts so = {.include_dirs = {corpus}, .ninclude_dirs = 1};
    char *xerr = NULL;
    char *text = msl_expand_source(k.text, "mlx_utils_kernel.metal", &so, MSL_EXPAND_SOFTWARE, &xerr);
    CHECK_MSG(text != NULL, "%s", xerr ? xerr : "?");
    free(xerr);
    if (!text) return;
    sw_test_env e;
    sw_test_env_open(&e, "full", text, NULL);
    uint16_t in[64];
    for (int i = 0; i < 64; i++) in[i] = bf16_from_f32((float)i * 0.25f - 4.0f);
    id bufs[2] = {new_buffer(&e, in, sizeof in), new_buffer(&e, NULL, 64 * sizeof(float))};
    id cb = sw_test_run(&e, k.function, bufs, 2, "dispatchThreads:threadsPerThreadgroup:", (MTLSize){64, 1, 1},
                        (MTLSize){64, 1, 1});
    CHECK(completed_clean(cb));
    const float *out = MSG0(void *, bufs[1], "contents");
    for (int i = 0; i < 64; i++) CHECK_NEAR(out[i], 2.0f * bf16_to_f32(in[i]), 0);
    for (int i = 0; i < 2; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    free(text);
    mlxk_kernel_free(&k);
}

/* atomic_outputs: the output is `device atomic<float>*`, which the body adds into
 * as MLX's documentation's atomic example does; 256 threads each add their input. */
TEST(mlx_kernel_generated_atomic_output_runs) {
    mlxk_spec s = {0};
    s.name = "atomic_sum";
    s.source = "  uint i = thread_position_in_grid.x;\n"
               "  atomic_fetch_add_explicit(&out[i % 4], inp[i], memory_order_relaxed);";
    s.inputs[0] = (mlxk_array){"inp", "float32", 1, 256};
    s.ninputs = 1;
    s.outputs[0] = (mlxk_array){"out", "float32", 1, 0};
    s.noutputs = 1;
    s.atomic_outputs = 1;
    mlxk_kernel k;
    char err[256];
    CHECK(mlxk_generate(&s, &k, err, sizeof err) == 0);
    CHECK(strstr(k.text, "  device atomic<float>* out [[buffer(1)]],\n") != NULL);
    sw_test_env e;
    sw_test_env_open(&e, "full", k.text, "mlx_atomic.metal");
    float in[256], zero[4] = {0};
    for (int i = 0; i < 256; i++) in[i] = (float)(i % 9) * 0.5f;
    id bufs[2] = {new_buffer(&e, in, sizeof in), new_buffer(&e, zero, sizeof zero)};
    id cb = sw_test_run(&e, k.function, bufs, 2, "dispatchThreads:threadsPerThreadgroup:", (MTLSize){256, 1, 1},
                        (MTLSize){64, 1, 1});
    CHECK(completed_clean(cb));
    const float *out = MSG0(void *, bufs[1], "contents");
    for (int j = 0; j < 4; j++) {
        double want = 0;
        for (int i = j; i < 256; i += 4) want += in[i];
        CHECK_NEAR(out[j], want, 1e-4);
    }
    for (int i = 0; i < 2; i++) MSG0(void, bufs[i], "release");
    sw_test_env_close(&e);
    mlxk_kernel_free(&k);
}
