/* numerics.c — the numeric checks (--sw-checks numerics, part of full): where a
 * kernel first computes Inf or NaN from finite values, overflows a conversion, or
 * breaks C++'s integer rules, reported as `numeric` findings at the .metal line.
 *
 * Two sources, both reported through report() with the kernel's return address
 * (symbolized like every other finding) and the running GPU thread:
 *  - clang's checks, compiled into the kernels' numerics variant (cxx.c's flags):
 *    signed overflow, division by zero, shift exponents out of range, float ->
 *    integer conversions out of range, and truncating conversions into 8- and
 *    16-bit integers that change the value.  Their __ubsan_handle_* calls land in
 *    the prelude's own hidden definitions (metal_stdlib.h), which forward here
 *    through sw_rt_num_check: no sanitizer runtime is involved, and a gdnbench
 *    built with -fsanitize=undefined keeps its own.  The data layouts are those
 *    of compiler-rt's ubsan_handlers.h (clang >= 9);
 *  - the numerics IR pass (ir_numerics.c): float, half, bfloat and double
 *    arithmetic, narrowing conversions and math functions whose result is Inf or
 *    NaN call sw_rt_num_fp with the operands, which reports those made of finite
 *    (for NaN: non-NaN) operands.  The same on every host: it replaced the x86-64
 *    floating-point traps, which Apple's arm64 cores do not have. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "swmetal/exec_internal.h"
#include "swmetal/numerics.h"

static void report(const void *pc, const char *detail) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cur || !w->job) return;
    sw_finding_at(w, DEV_FIND_NUMERIC, pc, 0, detail, 0);
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
    default: return;
    }
    report(pc, what);
}

/* ---- the IR pass's float checks ---- */

static const struct {
    const char *name;
    int arity;
} fns[SW_NUMF_COUNT] = {
    [SW_NUMF_FADD] = {"+", 2},       [SW_NUMF_FSUB] = {"-", 2},       [SW_NUMF_FMUL] = {"*", 2},
    [SW_NUMF_FDIV] = {"/", 2},       [SW_NUMF_FREM] = {"%", 2},       [SW_NUMF_TRUNC] = {"(conversion)", 1},
    [SW_NUMF_FMA] = {"fma", 3},      [SW_NUMF_FMULADD] = {"fmuladd", 3}, [SW_NUMF_SQRT] = {"sqrt", 1},
    [SW_NUMF_EXP] = {"exp", 1},      [SW_NUMF_EXP2] = {"exp2", 1},    [SW_NUMF_EXP10] = {"exp10", 1},
    [SW_NUMF_EXPM1] = {"expm1", 1},  [SW_NUMF_LOG] = {"log", 1},      [SW_NUMF_LOG2] = {"log2", 1},
    [SW_NUMF_LOG10] = {"log10", 1},  [SW_NUMF_LOG1P] = {"log1p", 1},  [SW_NUMF_POW] = {"pow", 2},
    [SW_NUMF_SINH] = {"sinh", 1},    [SW_NUMF_COSH] = {"cosh", 1},    [SW_NUMF_TAN] = {"tan", 1},
    [SW_NUMF_ASIN] = {"asin", 1},    [SW_NUMF_ACOS] = {"acos", 1},    [SW_NUMF_ACOSH] = {"acosh", 1},
    [SW_NUMF_ATANH] = {"atanh", 1},  [SW_NUMF_FMOD] = {"fmod", 2},    [SW_NUMF_HYPOT] = {"hypot", 2},
};

const char *sw_num_fn_name(int fn) { return fn > 0 && fn < SW_NUMF_COUNT ? fns[fn].name : NULL; }
int sw_num_fn_arity(int fn) { return fn > 0 && fn < SW_NUMF_COUNT ? fns[fn].arity : 0; }

/* llir.h's ll_scalar numbers, as the pass passes them */
static const char *scalar_name(int s) {
    static const char *const names[] = {"?", "half", "bfloat", "float", "double"};
    return s > 0 && s < 5 ? names[s] : "?";
}

/* A GPU thread that keeps making Inf at one operation (a loop, maybe unrolled
 * into copies) is reported once there: the last few places this OS thread
 * reported for the GPU thread it runs. */
#define SEEN_PCS 8
static _Thread_local const void *seen_pc[SEEN_PCS], *seen_job;
static _Thread_local uint64_t seen_tg;
static _Thread_local uint32_t seen_tid;
static _Thread_local unsigned seen_n;

static int seen_before(const void *pc) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cur || !w->job) return 1; /* not a GPU thread: report() would drop it */
    sw_range_sync_thread(w); /* a loop-scheduled thread's index */
    uint64_t tg = (uint64_t)w->group.linear;
    uint32_t tid = w->cur->index;
    if ((const void *)w->job != seen_job || tg != seen_tg || tid != seen_tid) {
        seen_job = w->job, seen_tg = tg, seen_tid = tid, seen_n = 0;
    } else {
        for (unsigned i = 0; i < seen_n && i < SEEN_PCS; i++)
            if (seen_pc[i] == pc) return 1;
    }
    seen_pc[seen_n++ % SEEN_PCS] = pc;
    return 0;
}

/* The finding's text for an operation of fn whose operands v[] gave r. */
static void describe(int fn, int in, int out, const double *v, int nv, double r, int nan, char *buf, size_t n) {
    int zero = 0;
    for (int i = 0; i < nv; i++) zero |= v[i] == 0;
    if (fn == SW_NUMF_TRUNC) {
        snprintf(buf, n, "conversion overflows: %.9g ('%s') rounds to Inf in '%s'%s", v[0], scalar_name(in),
                 scalar_name(out), out == 1 ? " (its largest is 65504)" : "");
        return;
    }
    /* IEEE's division by zero: x / 0, and a pole of a function (log(0)) */
    const char *what = nan                                                      ? "invalid floating-point operation"
                       : (fn == SW_NUMF_FDIV && v[1] == 0) || (fn >= SW_NUMF_FIRST_CALL && zero)
                           ? "floating-point division by zero"
                           : "floating-point overflow";
    if (fn < SW_NUMF_TRUNC) {
        snprintf(buf, n, "%s: %.9g %s %.9g = %g ('%s')", what, v[0], fns[fn].name, v[1], r, scalar_name(out));
        return;
    }
    char args[120] = "";
    for (int i = 0, used = 0; i < nv && used < (int)sizeof args; i++)
        used += snprintf(args + used, sizeof args - (size_t)used, "%s%.9g", i ? ", " : "", v[i]);
    snprintf(buf, n, "%s: %s(%s) = %g ('%s')", what, fns[fn].name, args, r, scalar_name(out));
}

void sw_rt_num_fp(int code, int live, double a, double b, double c, double r) {
    if (!live) return;
    int fn = code & 255, in = (code >> 8) & 15, out = (code >> 12) & 15, nv = (code >> 16) & 3;
    if (fn <= 0 || fn >= SW_NUMF_COUNT) return;
    const double v[3] = {a, b, c};
    int finite = 1, nan_in = 0;
    for (int i = 0; i < nv; i++) finite &= isfinite(v[i]) != 0, nan_in |= isnan(v[i]) != 0;
    int bad = isinf(r) ? finite : isnan(r) && !nan_in;
    if (!bad) return;
    const void *pc = (const char *)__builtin_return_address(0) - 1;
    if (seen_before(pc)) return;
    char what[240];
    describe(fn, in, out, v, nv, r, isnan(r), what, sizeof what);
    report(pc, what);
}
