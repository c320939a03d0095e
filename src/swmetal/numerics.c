/* numerics.c — the numeric checks (--sw-checks numerics, part of full): where a
 * kernel first computes Inf or NaN from finite values, overflows a conversion, or
 * breaks C++'s integer rules, reported as `numeric` findings at the .metal line.
 *
 * Three sources, all reported through report() with the instruction's address
 * (symbolized like every other finding) and the running GPU thread:
 *  - clang's checks, compiled into the kernels' numerics variant (cxx.c's flags):
 *    signed overflow, division by zero, shift exponents out of range, float ->
 *    integer conversions out of range, and truncating conversions into 8- and
 *    16-bit integers that change the value.  Their __ubsan_handle_* calls land in
 *    the prelude's own hidden definitions (metal_stdlib.h), which forward here
 *    through sw_rt_num_check: no sanitizer runtime is involved, and a gdnbench
 *    built with -fsanitize=undefined keeps its own.  The data layouts are those
 *    of compiler-rt's ubsan_handlers.h (clang >= 9);
 *  - floating-point traps (x86-64): while a numerics dispatch runs, its workers
 *    unmask the overflow, invalid and divide-by-zero exceptions, so the first
 *    float/double instruction of a GPU thread that makes Inf or NaN of finite
 *    operands (and F16C's float -> half conversion past 65504, which is how half
 *    arithmetic rounds) traps.  The handler reads the operands from the trapping
 *    instruction where it can decode it, reports, and masks the exceptions in the
 *    thread's saved context: the instruction completes with IEEE's result, and
 *    that GPU thread (each fiber keeps its own MXCSR) reports no second one;
 *  - the prelude's float -> bfloat rounding (metal_stdlib.h, built with
 *    SW_NUMERICS=1) tells sw_rt_num_check when a finite float rounds to Inf.
 * Elsewhere (arm64: Apple's and most Arm cores do not trap on FP exceptions) only
 * the first and third run; the README says so. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#ifdef __APPLE__
#include <sys/ucontext.h>
#else
#include <ucontext.h>
#endif

#include "swmetal/exec_internal.h"
#include "swmetal/numerics.h"

static void report(const void *pc, const char *detail) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cur || !w->job) return;
    sw_range_sync_thread(w);
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_NUMERIC;
    f.buffer = -1;
    f.detail = detail;
    f.nsides = 1;
    f.side[0] = sw_access_of(w->cur, w, pc, SW_ACC_NONE, 0, 0);
    sw_findings_add(w->job, w, &f);
}

/* ---- clang's checks: compiler-rt's data layouts ---- */

typedef struct ub_loc {
    const char *file;
    uint32_t line, column;
} ub_loc;

typedef struct ub_type {
    uint16_t kind;  /* 0 integer, 1 float, 0xffff unknown */
    uint16_t info;  /* integer: bit 0 signed, bits 1.. log2(width); float: width */
    char name[1];   /* as clang spells it, NUL-terminated */
} ub_type;

typedef struct ub_overflow {
    ub_loc loc;
    const ub_type *type;
} ub_overflow;

typedef struct ub_shift {
    ub_loc loc;
    const ub_type *lhs, *rhs;
} ub_shift;

typedef struct ub_cast {
    ub_loc loc;
    const ub_type *from, *to;
} ub_cast;

typedef struct ub_implicit {
    ub_loc loc;
    const ub_type *from, *to;
    unsigned char kind;
} ub_implicit;

static int int_width(const ub_type *t) { return t->kind == 0 ? 1 << (t->info >> 1) : 0; }
static int int_signed(const ub_type *t) { return t->kind == 0 && (t->info & 1); }

/* An operand as text: values wider than a pointer are passed by address. */
static void value_text(const ub_type *t, uintptr_t v, char *buf, size_t n) {
    if (t->kind == 0) {
        int bits = int_width(t);
        if (bits > 64) {
            snprintf(buf, n, "(a %d-bit value)", bits);
            return;
        }
        uint64_t u = (uint64_t)v;
        if (bits < 64) u &= ((uint64_t)1 << bits) - 1;
        if (int_signed(t)) {
            int64_t s = bits < 64 && (u >> (bits - 1)) ? (int64_t)(u | ~(((uint64_t)1 << bits) - 1)) : (int64_t)u;
            snprintf(buf, n, "%lld", (long long)s);
        } else {
            snprintf(buf, n, "%llu", (unsigned long long)u);
        }
    } else if (t->kind == 1 && t->info == 32) {
        uint32_t b = (uint32_t)v;
        float f;
        memcpy(&f, &b, 4);
        snprintf(buf, n, "%.9g", (double)f);
    } else if (t->kind == 1 && t->info == 64) {
        uint64_t b = (uint64_t)v;
        double d;
        memcpy(&d, &b, 8);
        snprintf(buf, n, "%.17g", d);
    } else if (t->kind == 1 && t->info == 16) {
        snprintf(buf, n, "%.6g", sw_num_fp16_value((uint16_t)v, strstr(t->name, "bf16") != NULL));
    } else {
        snprintf(buf, n, "(a value of type %s)", t->name);
    }
}

double sw_num_fp16_value(uint16_t h, int bfloat) {
    if (bfloat) {
        uint32_t b = (uint32_t)h << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    double mag = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -mag : mag;
}

static void arith(const ub_overflow *d, const char *op, uintptr_t a, uintptr_t b, const void *pc) {
    char x[48], y[48], what[200];
    value_text(d->type, a, x, sizeof x);
    value_text(d->type, b, y, sizeof y);
    snprintf(what, sizeof what, "signed integer overflow: %s %s %s does not fit in %s", x, op, y, d->type->name);
    report(pc, what);
}

/* Only narrowing into 8- and 16-bit integers: wider truncations (a size_t index
 * into a uint) are left to the other checks. */
static void implicit(const ub_implicit *d, uintptr_t src, uintptr_t dst, const void *pc) {
    if (d->kind > 2 || int_width(d->to) > 16) return; /* sign changes are not checked */
    char x[48], y[48], what[200];
    value_text(d->from, src, x, sizeof x);
    value_text(d->to, dst, y, sizeof y);
    snprintf(what, sizeof what, "%d-bit integer wraps: %s (%s) becomes %s in %s", int_width(d->to), x,
             d->from->name, y, d->to->name);
    report(pc, what);
}

void sw_rt_num_check(int kind, const void *data, uintptr_t a, uintptr_t b, const void *ret) {
    const void *pc = (const char *)ret - 1;
    char x[48], y[48], what[240];
    const ub_overflow *o = data;
    switch (kind) {
    case SW_NUM_ADD: arith(o, "+", a, b, pc); return;
    case SW_NUM_SUB: arith(o, "-", a, b, pc); return;
    case SW_NUM_MUL: arith(o, "*", a, b, pc); return;
    case SW_NUM_NEGATE:
        value_text(o->type, a, x, sizeof x);
        snprintf(what, sizeof what, "signed integer overflow: -(%s) does not fit in %s", x, o->type->name);
        break;
    case SW_NUM_DIVREM:
        value_text(o->type, a, x, sizeof x);
        value_text(o->type, b, y, sizeof y);
        if (strcmp(y, "0") == 0)
            snprintf(what, sizeof what, "integer division by zero: %s / 0 in %s", x, o->type->name);
        else
            snprintf(what, sizeof what, "signed integer overflow: %s / %s does not fit in %s", x, y, o->type->name);
        break;
    case SW_NUM_SHIFT: {
        const ub_shift *d = data;
        value_text(d->lhs, a, x, sizeof x);
        value_text(d->rhs, b, y, sizeof y);
        snprintf(what, sizeof what, "shift out of range: %s shifted by %s, and %s has %d bits (the exponent must be 0..%d)",
                 x, y, d->lhs->name, int_width(d->lhs), int_width(d->lhs) - 1);
        break;
    }
    case SW_NUM_FLOAT_CAST: {
        const ub_cast *d = data;
        value_text(d->from, a, x, sizeof x);
        snprintf(what, sizeof what, "conversion overflows: %s (%s) is outside the range of %s", x, d->from->name,
                 d->to->name);
        break;
    }
    case SW_NUM_IMPLICIT: implicit(data, a, b, pc); return;
    case SW_NUM_BF16: {
        uint32_t bits = (uint32_t)a;
        float f;
        memcpy(&f, &bits, 4);
        snprintf(what, sizeof what, "conversion overflows: %.9g ('float') rounds to Inf in 'bfloat'", (double)f);
        break;
    }
    default: return;
    }
    report(pc, what);
}

/* ---- floating-point traps ---- */

#if defined(__x86_64__)
#include <xmmintrin.h>

#define NUM_TRAPS (_MM_MASK_INVALID | _MM_MASK_DIV_ZERO | _MM_MASK_OVERFLOW)

void sw_num_arm(void) {
    unsigned csr = _mm_getcsr();
    _mm_setcsr((csr & ~(unsigned)NUM_TRAPS) & ~(unsigned)_MM_EXCEPT_MASK);
}

void sw_num_disarm(void) { _mm_setcsr(_mm_getcsr() | NUM_TRAPS); }
#else
void sw_num_arm(void) {}
void sw_num_disarm(void) {}
#endif

#if defined(__x86_64__) && (defined(__linux__) || defined(__APPLE__))
int sw_num_fp_trap(sw_worker *w, int code, void *ucv) {
    if (code != FPE_FLTOVF && code != FPE_FLTINV && code != FPE_FLTDIV) return 0;
    if (!w || !w->job || !w->job->d->numerics) return 0;
    ucontext_t *uc = ucv;
#ifdef __APPLE__
    uc->uc_mcontext->__fs.__fpu_mxcsr |= NUM_TRAPS;
    const void *pc = (const void *)uc->uc_mcontext->__ss.__rip;
#else
    if (!uc->uc_mcontext.fpregs) return 0;
    uc->uc_mcontext.fpregs->mxcsr |= NUM_TRAPS;
    const void *pc = (const void *)uc->uc_mcontext.gregs[REG_RIP];
#endif
    /* Executor code running with the traps on (never the kernel's) is let be. */
    const void *at = w->cur ? sw_fault_kernel_pc(w, pc, sw_fault_context_sp(uc)) : NULL;
    if (!at) return 1;
    char what[240];
#if defined(__linux__)
    int known = sw_num_x86_describe(uc, pc, code, what, sizeof what);
    if (known < 0) return 1; /* clang's check reports float -> int; or an unused lane trapped */
#else
    int known = 0;
    what[0] = 0;
#endif
    /* x86 also raises invalid for a quiet NaN given to min/max and to ordered
     * vector compares: only an operation seen making NaN of non-NaN operands counts */
    if (!known && code == FPE_FLTINV) return 1;
    if (!what[0])
        snprintf(what, sizeof what, "%s",
                 code == FPE_FLTOVF   ? "floating-point overflow: finite operands gave Inf"
                 : code == FPE_FLTDIV ? "floating-point division by zero: a finite value divided by 0 gave Inf"
                                      : "invalid floating-point operation");
    report(at, what);
    return 1;
}
#else
int sw_num_fp_trap(sw_worker *w, int code, void *ucv) {
    (void)w;
    (void)code;
    (void)ucv;
    return 0;
}
#endif
