/* test_sw_msl_features.c — tests/msl/features.metal on the software device: the
 * MSL of other projects' kernels (issue 14: implicit buffer indices, address
 * spaces, __metal_* builtins, constexpr limits, library names, declaration forms,
 * matrices, conversions), each kernel run through the Objective-C surface and its
 * output values checked.  The file is read from disk so that its quoted includes
 * (tests/msl/inc/) resolve next to it.  Skipped without clang++ >= 17. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/objc_call.h"
#include "swmetal/sw_compile.h"
#include "swmetal/swmetal.h"
#include "sw_test_env.h"
#include "test.h"

#define OUT_FLOATS 256

/* Compiles features.metal; returns 0, or -1 after a failed CHECK. */
static int feat_open(sw_test_env *e, const char *checks) {
    memset(e, 0, sizeof *e);
    char path[1024];
    char *src = sw_test_read_repo_file("tests/msl/features.metal", path, sizeof path);
    CHECK_MSG(src != NULL, "cannot read %s", path);
    if (!src) return -1;
    sw_test_env_open(e, checks, src, path);
    free(src);
    return e->lib ? 0 : -1;
}

static id feat_buffer(sw_test_env *e, size_t len, const void *init) {
    id b = MSG2(id, e->dev, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, 0);
    if (b && init) memcpy(MSG0(void *, b, "contents"), init, len);
    return b;
}

static void *contents(id b) { return MSG0(void *, b, "contents"); }

/* Runs kernel `name` as one threadgroup of `threads` with bufs[k] at index k (nil:
 * unbound); fcv: function constant values or nil.  Returns 0 when the command
 * buffer completed without a diagnostic. */
static int feat_run(sw_test_env *e, const char *name, id *bufs, int nbufs, NSUInteger threads, id fcv) {
    id err = nil;
    id fn = fcv ? MSG3(id, e->lib, "newFunctionWithName:constantValues:error:", id, sw_test_str(name), id, fcv, id *, &err)
                : MSG1(id, e->lib, "newFunctionWithName:", id, sw_test_str(name));
    CHECK_MSG(fn != nil, "no function %s: %s", name,
              err ? MSG0(const char *, MSG0(id, err, "localizedDescription"), "UTF8String") : "");
    if (!fn) return -1;
    id pso = MSG2(id, e->dev, "newComputePipelineStateWithFunction:error:", id, fn, id *, &err);
    id cb = MSG0(id, e->queue, "commandBuffer");
    id enc = MSG0(id, cb, "computeCommandEncoder");
    MSG1(void, enc, "setComputePipelineState:", id, pso);
    for (int i = 0; i < nbufs; i++)
        if (bufs[i]) MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[i], NSUInteger, 0, NSUInteger, (NSUInteger)i);
    MTLSize g = {1, 1, 1}, t = {threads, 1, 1};
    MSG2(void, enc, "dispatchThreadgroups:threadsPerThreadgroup:", MTLSize, g, MTLSize, t);
    MSG0(void, enc, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    NSUInteger status = MSG0(NSUInteger, cb, "status");
    int kept = 0, ndiag = swmtl_command_buffer_diagnostic_count(cb, &kept);
    id cerr = MSG0(id, cb, "error");
    CHECK_MSG(status == 4 && ndiag == 0, "%s: status %lu, %d diagnostics: %s", name, (unsigned long)status, ndiag,
              ndiag ? swmtl_command_buffer_diagnostic(cb, 0)
                    : cerr ? MSG0(const char *, MSG0(id, cerr, "localizedDescription"), "UTF8String") : "");
    MSG0(void, pso, "release");
    MSG0(void, fn, "release");
    return status == 4 && ndiag == 0 ? 0 : -1;
}

static void release_all(id *bufs, int n) {
    for (int i = 0; i < n; i++)
        if (bufs[i]) MSG0(void, bufs[i], "release");
}

/* A kernel's binding by parameter name, from the compiled library. */
static const sw_binding *binding_of(const sw_kernel_info *k, const char *param) {
    for (int i = 0; i < k->nbindings; i++)
        if (strcmp(k->bindings[i].param, param) == 0) return &k->bindings[i];
    return NULL;
}

TEST(sw_msl_features_implicit_buffer_indices) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        /* what the front end assigned: the lowest free index, in declaration order */
        char path[1024];
        char *src = sw_test_read_repo_file("tests/msl/features.metal", path, sizeof path);
        char *err = NULL;
        sw_library *lib = src ? sw_library_create(src, path, &err) : NULL;
        sw_kernel k;
        if (lib && sw_library_get_kernel(lib, "implicit_index", NULL, 0, SW_INSTR_NONE, &k, &err) == 0) {
            const sw_binding *b = binding_of(k.info, "scale");
            CHECK(b && b->kind == SW_BIND_BUFFER && b->index == 1);
            b = binding_of(k.info, "out2");
            CHECK(b && b->kind == SW_BIND_BUFFER && b->index == 2);
            b = binding_of(k.info, "in");
            CHECK(b && b->index == 3 && b->type && strstr(b->type, "__global") && strstr(b->type, "const"));
        } else {
            CHECK_MSG(0, "library: %s", err ? err : "?");
        }
        free(err);
        sw_library_free(lib);
        free(src);
        float in[32], scale = 3.0f;
        for (int i = 0; i < 32; i++) in[i] = (float)i + 0.5f;
        id bufs[4] = {feat_buffer(&e, 32 * 4, NULL), feat_buffer(&e, 4, &scale), feat_buffer(&e, 32 * 4, NULL),
                      feat_buffer(&e, 32 * 4, in)};
        if (feat_run(&e, "implicit_index", bufs, 4, 32, nil) == 0) {
            const float *out = contents(bufs[0]), *out2 = contents(bufs[2]);
            int bad = 0;
            for (int i = 0; i < 32; i++) bad += out[i] != in[i] * 3.0f || out2[i] != (float)i;
            CHECK_EQ_INT(bad, 0);
        }
        release_all(bufs, 4);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_address_spaces) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        float in[4] = {10, 11, 12, 13}, accs[2] = {3.0f, 8.5f};
        id bufs[3] = {feat_buffer(&e, OUT_FLOATS * 4, NULL), feat_buffer(&e, sizeof in, in),
                      feat_buffer(&e, sizeof accs, accs)};
        if (feat_run(&e, "spaces", bufs, 3, 32, nil) == 0) {
            const float *o = contents(bufs[0]);
            /* one overload per address space: device, threadgroup, constant, thread */
            CHECK(o[0] == 1 && o[1] == 2 && o[2] == 3 && o[3] == 4);
            CHECK_NEAR(o[4], 107, 0);   /* Acc() thread: v = 7 */
            CHECK_NEAR(o[5], 101.5, 0); /* Acc(1.5) */
            CHECK_NEAR(o[6], 103, 0);   /* get() const device on accs[0] */
            CHECK_NEAR(o[7], 12, 0);    /* first_of<float>(device const T *) */
            CHECK_NEAR(o[8], 7, 0);     /* constant int strides[2] as a parameter */
            CHECK_NEAR(o[9], 8.5, 0);   /* i == 0 ? accs[1] : Acc(9) */
            CHECK_NEAR(o[10], 2000, 0); /* the library's own erf, no ambiguity */
            CHECK_NEAR(o[11], 6, 0);
        }
        release_all(bufs, 3);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_metal_builtins) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        id out = feat_buffer(&e, OUT_FLOATS * 4, NULL);
        if (feat_run(&e, "builtins", &out, 1, 32, nil) == 0) {
            const float *o = contents(out);
            CHECK(o[0] == 2.5f && o[1] == 5 && o[2] == 3 && o[3] == 496 && o[4] == 32 && o[5] == 1024 &&
                  o[6] == 0.25f);
            int bad = 0;
            for (int l = 0; l < 32; l++) {
                /* fill down by 1 in segments of 8: the last lane of a segment takes the
                 * filling value of the segment's first lane */
                float want = (l % 8) < 7 ? (float)(l + 1) : (float)(l / 8 * 8 + 100);
                if (o[8 + l] != want || o[40 + l] != (float)l) bad++;
            }
            CHECK_EQ_INT(bad, 0);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_limits_are_constant_expressions) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        id out = feat_buffer(&e, OUT_FLOATS * 4, NULL);
        if (feat_run(&e, "limits", &out, 1, 32, nil) == 0) {
            const uint32_t *o = contents(out);
            CHECK_EQ_INT(o[0], 0x7bff); /* half max */
            CHECK_EQ_INT(o[1], 0x7f80); /* bfloat infinity */
            CHECK_EQ_INT(o[2], 0xff7f); /* bfloat lowest */
            CHECK_EQ_INT(o[3], 0x1400); /* half epsilon 2^-10 */
            CHECK_EQ_INT(o[4], 0x0001); /* half denorm_min */
            CHECK_EQ_INT(o[5], 0x7bff); /* static constexpr member of a template */
            CHECK_EQ_INT(o[6], 8);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_library_names) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        id out = feat_buffer(&e, OUT_FLOATS * 4, NULL);
        if (feat_run(&e, "library", &out, 1, 32, nil) == 0) {
            const float *o = contents(out);
            int bad = 0;
            for (int l = 0; l < 32; l++) {
                int base = l & ~3;
                float up = l >= 2 ? (float)(l - 2) : (float)(l + 30 + 100); /* fill up by 2, modulo 32 */
                if (o[l] != up) bad++, printf("  fill_up lane %d: %g want %g\n", l, o[l], up);
                if (o[32 + l] != (float)(4 * base + 6)) bad++, printf("  quad_sum lane %d: %g\n", l, o[32 + l]);
                if (o[64 + l] != (float)(base + 3)) bad++, printf("  quad_shuffle lane %d: %g\n", l, o[64 + l]);
                if (o[96 + l] != (float)(l ^ 1)) bad++, printf("  quad_shuffle_xor lane %d: %g\n", l, o[96 + l]);
                if (o[128 + l] != (float)(l % 4 + 10 * (l / 4))) bad++, printf("  quad ids lane %d: %g\n", l, o[128 + l]);
            }
            CHECK_EQ_INT(bad, 0);
            CHECK_EQ_INT((int)o[160], 0xBC);
            CHECK_EQ_INT((int)o[161], -1);     /* a signed field is sign-extended */
            CHECK_EQ_INT((int)o[162], 0x500);
            CHECK_EQ_INT((int)o[163], 2);      /* mulhi(2^31, 4) */
            CHECK_EQ_INT((int)o[164], 12);     /* madhi(2^31, 4, 10) */
            CHECK_NEAR(o[165], 10, 0);         /* sincos(0): 0 and 1 */
            CHECK(o[166] == 3.14159265358979f);
            CHECK(o[167] == 0.707106781186547524f);
            CHECK(o[168] == 1.12837916709551257f);
            CHECK_NEAR(o[169], 1, 0);
            CHECK_NEAR(o[170], 9, 0);          /* metal::array {1, 2, 3} and size() */
            CHECK_NEAR(o[171], 10, 0);         /* uniform<int> */
            CHECK_NEAR(o[172], 1, 1e-6);       /* tanpi(1/4) */
            CHECK(o[173] == 0x1p-23f);         /* nextafter(1, 2) - 1 */
            CHECK_NEAR(o[174], 54, 0);         /* frexp(8): 0.5 * 2^4 */
            CHECK_NEAR(o[175], 4, 0);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_declaration_forms) {
    sw_test_env e;
    /* full checks: the threadgroup initializer must count as written, by no thread */
    if (feat_open(&e, "full") == 0) {
        const char *names[] = {"scaled_f2", "scaled_f3", "scaled_f4"};
        for (int k = 0; k < 3; k++) {
            id out = feat_buffer(&e, 32 * 4, NULL);
            if (feat_run(&e, names[k], &out, 1, 32, nil) == 0) {
                const float *o = contents(out);
                CHECK_MSG(o[5] == (float)(5 * (k + 2)), "%s: out[5] = %g", names[k], o[5]);
            }
            release_all(&out, 1);
        }
        float scale = 3.0f;
        uint16_t hscale = f16_from_f32(0.5f);
        id bufs_d[2] = {feat_buffer(&e, 32 * 4, NULL), feat_buffer(&e, sizeof scale, &scale)};
        if (feat_run(&e, "deduced_f", bufs_d, 2, 32, nil) == 0)  /* T deduced from the whole signature */
            CHECK_NEAR(((const float *)contents(bufs_d[0]))[5], 15, 0);
        release_all(bufs_d, 2);
        id bufs_h[2] = {feat_buffer(&e, 32 * 2, NULL), feat_buffer(&e, sizeof hscale, &hscale)};
        if (feat_run(&e, "deduced_h", bufs_h, 2, 32, nil) == 0)
            CHECK_NEAR(f16_to_f32(((const uint16_t *)contents(bufs_h[0]))[7]), 3.5, 0);
        release_all(bufs_h, 2);
        id fcv = MSG0(id, MSG0(id, (id)swmtl_class("MTLFunctionConstantValues"), "alloc"), "init");
        int32_t v = 77;
        unsigned char yes = 1;
        MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &v, NSUInteger, 29, NSUInteger, 11);
        MSG3(void, fcv, "setConstantValue:type:atIndex:", const void *, &yes, NSUInteger, 53, NSUInteger, 20);
        id bufs[3] = {feat_buffer(&e, OUT_FLOATS * 4, NULL), feat_buffer(&e, 16, NULL), feat_buffer(&e, 16, NULL)};
        if (feat_run(&e, "fc_forms", bufs, 3, 64, fcv) == 0) {
            const float *o = contents(bufs[0]);
            CHECK_NEAR(o[0], 77, 0);  /* [[function_constant(FC_BASE + 1)]] is index 11 */
            CHECK_NEAR(o[1], 1, 0);   /* static constant constexpr bool at FC_BASE * 2 */
            CHECK_NEAR(o[2], 10, 0);  /* threadgroup float init_buf[4] = {1, 2, 3, 4} */
            CHECK_NEAR(o[3], 1, 0);   /* is_function_constant_defined */
            CHECK_NEAR(((float *)contents(bufs[1]))[0], 42, 0);
            CHECK_NEAR(((float *)contents(bufs[2]))[0], 5, 0);
        }
        release_all(bufs, 3);
        MSG0(void, fcv, "release");
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_matrices) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        id out = feat_buffer(&e, OUT_FLOATS * 4, NULL);
        if (feat_run(&e, "matrices", &out, 1, 32, nil) == 0) {
            const float *o = contents(out);
            const float want[19] = {2, 3, 4, 1, 41, 52, 63, 4, 10, 6, -2, 7, 10, 15, 22, 8, 3, 27, 8};
            for (int i = 0; i < 19; i++) CHECK_MSG(o[i] == want[i], "out[%d] = %g, want %g", i, o[i], want[i]);
        }
        release_all(&out, 1);
    }
    sw_test_env_close(&e);
}

TEST(sw_msl_features_conversions) {
    sw_test_env e;
    if (feat_open(&e, "fast") == 0) {
        uint16_t hin[5] = {f16_from_f32(1.5f), f16_from_f32(0.5f), f16_from_f32(1.0f), f16_from_f32(2.0f),
                           f16_from_f32(4.0f)};
        uint16_t bin[1] = {bf16_from_f32(2.25f)};
        id bufs[3] = {feat_buffer(&e, OUT_FLOATS * 4, NULL), feat_buffer(&e, sizeof hin, hin),
                      feat_buffer(&e, sizeof bin, bin)};
        if (feat_run(&e, "conversions", bufs, 3, 32, nil) == 0) {
            const float *o = contents(bufs[0]);
            int bad = 0;
            for (int k = 0; k < 64; k++)   /* A * B with B = 2I is 2A; operator* equals simdgroup_multiply */
                bad += o[k] != 2.0f * (float)(k / 8 + k % 8) || o[64 + k] != 0.0f;
            CHECK_EQ_INT(bad, 0);
            CHECK_NEAR(o[128], 3.75, 0);  /* static_cast half -> bfloat and bfloat -> half */
            CHECK_NEAR(o[129], 7.5, 0);   /* (float4)half4 converts values */
            CHECK_NEAR(o[130], 0.75, 0);  /* (half2)float2 */
            CHECK_NEAR(o[131], 4, 0);     /* static_cast<bfloat4>(half4) */
            CHECK_NEAR(o[132], 2.25, 0);  /* half(bfloat) */
            CHECK_NEAR(o[133], 6, 0);     /* f({1u, 2u, 3u}) to a uint3 parameter */
            CHECK_NEAR(o[134], 1, 0);     /* 1.0 + 1e-8 == 1.0 in float: MSL literals are float */
            CHECK_NEAR(o[135], 8, 0);     /* ?: inside template arguments */
            CHECK_NEAR(o[136], 7, 0);     /* static_cast<U>(v.y) */
            CHECK_NEAR(o[137], 3.75, 0);  /* pair_t(a, b) with using pair_t = vec<S, 2> */
            CHECK_NEAR(o[138], 21, 0);    /* int2 v(3, 4), and ?: of vector elements */
            CHECK_NEAR(o[139], 2, 0);     /* c ? nullptr : threadgroup_array */
            CHECK_NEAR(o[140], 721, 0);   /* a < b ? threadgroup struct : constant struct */
        }
        release_all(bufs, 3);
    }
    sw_test_env_close(&e);
}
