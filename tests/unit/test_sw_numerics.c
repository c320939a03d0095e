/* test_sw_numerics.c — the numeric checks' pieces (src/swmetal/numerics*.c, issue 32
 * item 1) that run without a kernel: the numerics variant's flags, binary16 and
 * bfloat16 values in findings, and the decoding of a trapping x86-64 instruction's
 * operands from a signal context built here.  Kernels of each finding kind run
 * through the CLI in tests/cli/test_numerics.sh. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "swmetal/cxx.h"
#include "swmetal/numerics.h"
#include "swmetal/sw_compile.h"
#include "test.h"

#if defined(__linux__) && defined(__x86_64__)
#include <signal.h>
#include <ucontext.h>
#endif

static int has_flag(const char **f, int n, const char *prefix) {
    for (int i = 0; i < n; i++)
        if (strncmp(f[i], prefix, strlen(prefix)) == 0) return 1;
    return 0;
}

TEST(sw_numerics_variant_flags) {
    const char *f[SW_CXX_MAX_FLAGS];
    int n = sw_cxx_kernel_flags(SW_INSTR_NUMERICS, 0, f, SW_CXX_MAX_FLAGS);
    CHECK(has_flag(f, n, "-fsanitize=signed-integer-overflow,integer-divide-by-zero,shift-exponent,float-cast-overflow,"
                         "implicit-integer-truncation"));
    CHECK(has_flag(f, n, "-DSW_NUMERICS=1"));
    CHECK(has_flag(f, n, "-fsanitize-recover=all"));
    CHECK(!has_flag(f, n, "-fsanitize=thread"));
    n = sw_cxx_kernel_flags(SW_INSTR_FULL, 0, f, SW_CXX_MAX_FLAGS); /* full = memory hooks + numerics */
    CHECK(has_flag(f, n, "-fsanitize=thread") && has_flag(f, n, "-DSW_NUMERICS=1"));
    n = sw_cxx_kernel_flags(SW_INSTR_TSAN, 1, f, SW_CXX_MAX_FLAGS);
    CHECK(has_flag(f, n, "-fsanitize=thread") && !has_flag(f, n, "-DSW_NUMERICS"));
    n = sw_cxx_kernel_flags(SW_INSTR_NONE, 0, f, SW_CXX_MAX_FLAGS); /* fast runs: no check at all */
    CHECK(!has_flag(f, n, "-fsanitize") && !has_flag(f, n, "-DSW_NUMERICS"));
}

TEST(sw_numerics_fp16_values) {
    CHECK(sw_num_fp16_value(0x7bff, 0) == 65504.0);
    CHECK(sw_num_fp16_value(0x3c00, 0) == 1.0);
    CHECK(sw_num_fp16_value(0x0001, 0) == ldexp(1, -24));
    CHECK(sw_num_fp16_value(0xc000, 0) == -2.0);
    CHECK(isinf(sw_num_fp16_value(0x7c00, 0)) && isnan(sw_num_fp16_value(0x7e00, 0)));
    CHECK(sw_num_fp16_value(0x3f80, 1) == 1.0);
    CHECK(sw_num_fp16_value(0x7f7f, 1) == ldexp(255, 120));
}

#if defined(__linux__) && defined(__x86_64__)
typedef struct fake_ctx {
    ucontext_t uc;
    struct _libc_fpstate fp;
} fake_ctx;

static void set_xmm(fake_ctx *c, int reg, float a, float b, float d, float e) {
    float v[4] = {a, b, d, e};
    memcpy(c->fp._xmm[reg].element, v, 16);
}

static void describe(fake_ctx *c, const unsigned char *code, int fpe, char *buf, size_t n, int *rc) {
    c->uc.uc_mcontext.fpregs = &c->fp;
    *rc = sw_num_x86_describe(&c->uc, code, fpe, buf, n);
}

TEST(sw_numerics_x86_operands) {
    static fake_ctx c;
    char buf[240];
    int rc;
    memset(&c, 0, sizeof c);
    set_xmm(&c, 1, 1e30f, 0, 0, 0);
    set_xmm(&c, 2, 1e10f, 0, 0, 0);
    static const unsigned char vmulss[] = {0xC5, 0xF2, 0x59, 0xC2}; /* vmulss xmm0, xmm1, xmm2 */
    describe(&c, vmulss, FPE_FLTOVF, buf, sizeof buf, &rc);
    CHECK_EQ_INT(rc, 1);
    CHECK_MSG(strcmp(buf, "floating-point overflow: 1.00000002e+30 * 1e+10 = inf ('float')") == 0, "%s", buf);
    static const unsigned char mulss[] = {0xF3, 0x0F, 0x59, 0xCA}; /* mulss xmm1, xmm2 */
    describe(&c, mulss, FPE_FLTOVF, buf, sizeof buf, &rc);
    CHECK_MSG(rc == 1 && strstr(buf, "1.00000002e+30 * 1e+10 = inf") != NULL, "%s", buf);
    /* no lane of the operation overflows: an unused lane trapped, no finding */
    set_xmm(&c, 2, 1.0f, 0, 0, 0);
    describe(&c, vmulss, FPE_FLTOVF, buf, sizeof buf, &rc);
    CHECK_EQ_INT(rc, -1);
    /* vcvtps2ph xmm0, xmm2, 4 (how clang rounds a scalar to half): lane 0 past 65504 */
    set_xmm(&c, 2, 70000.0f, 1.0f, 2.0f, 3.0f);
    static const unsigned char cvtph[] = {0xC4, 0xE3, 0x79, 0x1D, 0xD0, 0x04};
    describe(&c, cvtph, FPE_FLTOVF, buf, sizeof buf, &rc);
    CHECK_MSG(rc == 1 && strcmp(buf, "conversion overflows: 70000 ('float') rounds to Inf in 'half' (its largest is "
                                     "65504)") == 0,
              "%s", buf);
    /* ... and the register's leftover upper lanes are not the kernel's values */
    set_xmm(&c, 2, 1.0f, 6.88e22f, 2.0f, 3.0f);
    describe(&c, cvtph, FPE_FLTOVF, buf, sizeof buf, &rc);
    CHECK_EQ_INT(rc, -1);
    /* 0 / 0 from memory: divss xmm1, [rax] */
    static float zero = 0.0f;
    set_xmm(&c, 1, 0.0f, 0, 0, 0);
    c.uc.uc_mcontext.gregs[REG_RAX] = (greg_t)(uintptr_t)&zero;
    static const unsigned char divss[] = {0xF3, 0x0F, 0x5E, 0x08};
    describe(&c, divss, FPE_FLTINV, buf, sizeof buf, &rc);
    CHECK_MSG(rc == 1 && strstr(buf, "invalid floating-point operation: 0 / 0 = ") != NULL, "%s", buf);
    /* a float -> int conversion is clang's check's to report */
    static const unsigned char cvttss2si[] = {0xF3, 0x0F, 0x2C, 0xC1};
    describe(&c, cvttss2si, FPE_FLTINV, buf, sizeof buf, &rc);
    CHECK_EQ_INT(rc, -1);
}

/* vmulps ymm0, ymm1, ymm2 whose overflowing lane is in the upper half: read from
 * the XSAVE area after the FXSAVE image, as Linux's signal frame lays it out. */
TEST(sw_numerics_x86_ymm_upper_lanes) {
    static fake_ctx c;
    static union {
        struct _libc_fpstate fp;
        unsigned char bytes[1024];
    } xs;
    char buf[240];
    memset(&c, 0, sizeof c);
    memset(&xs, 0, sizeof xs);
    float a[8] = {1, 1, 1, 1, 1, 1, 1e30f, 1}, b[8] = {1, 1, 1, 1, 1, 1, 1e10f, 1};
    memcpy(xs.fp._xmm[1].element, a, 16);
    memcpy(xs.fp._xmm[2].element, b, 16);
    uint32_t magic = 0x46505853u, ext = 1000;
    uint64_t bv = 7;
    memcpy(xs.bytes + 464, &magic, 4);
    memcpy(xs.bytes + 468, &ext, 4);
    memcpy(xs.bytes + 512, &bv, 8);
    memcpy(xs.bytes + 576 + 16 * 1, a + 4, 16);
    memcpy(xs.bytes + 576 + 16 * 2, b + 4, 16);
    c.uc.uc_mcontext.fpregs = &xs.fp;
    static const unsigned char vmulps[] = {0xC5, 0xF4, 0x59, 0xC2};
    int rc = sw_num_x86_describe(&c.uc, vmulps, FPE_FLTOVF, buf, sizeof buf);
    CHECK_MSG(rc == 1 && strstr(buf, "1.00000002e+30 * 1e+10 = inf") != NULL, "%d %s", rc, buf);
    /* without the XSAVE area's magic the upper half is unknown: no operands */
    memset(xs.bytes + 464, 0, 4);
    rc = sw_num_x86_describe(&c.uc, vmulps, FPE_FLTOVF, buf, sizeof buf);
    CHECK_EQ_INT(rc, 0);
}
#endif
