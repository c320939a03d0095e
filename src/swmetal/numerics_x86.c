/* numerics_x86.c — the operands of an x86-64 floating-point instruction that
 * trapped in a numerics dispatch (numerics.h), read from the signal context: the
 * numeric finding then says "3.4e+38 * 2 = inf" instead of only "overflow".
 *
 * Decodes what clang emits for kernel arithmetic: SSE and VEX (and EVEX with
 * registers 0-15) encodings of add/sub/mul/div/sqrt on ss/sd/ps/pd, double ->
 * float conversions and F16C's float -> half (vcvtps2ph, how half arithmetic
 * rounds).  Packed operations are searched lane by lane, 256-bit ones too (the
 * upper halves of ymm registers come from the signal frame's XSAVE area when the
 * kernel saved it); 512-bit ones only in their low 256 bits.  Anything else gets
 * the generic detail. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "swmetal/numerics.h"

#if defined(__linux__) && defined(__x86_64__)
#include <signal.h>
#include <ucontext.h>

typedef struct insn {
    int map;              /* 1: 0F, 2: 0F38, 3: 0F3A */
    int op, pp;           /* pp: 0 none, 1 66, 2 F3, 3 F2 */
    int vex;              /* 0 legacy SSE, 1 VEX, 2 EVEX */
    int bytes;            /* vector length: 16, or 32 (VEX.L / EVEX.L'L) */
    int reg, vvvv, rm;    /* rm -1: a memory operand at addr */
    const uint8_t *addr;  /* NULL: not known */
} insn;

static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

static int32_t rd32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ModRM (and SIB, displacement) at p; R, X, B the register extensions. */
static void decode_modrm(const ucontext_t *uc, const uint8_t *p, int R, int X, int B, insn *in) {
    const greg_t *g = uc->uc_mcontext.gregs;
    uint8_t modrm = *p++;
    int mod = modrm >> 6, rm = modrm & 7;
    in->reg = ((modrm >> 3) & 7) | R << 3;
    if (mod == 3) {
        in->rm = in->vex == 2 && X ? -2 : rm | B << 3; /* EVEX: X extends to registers 16-31 */
        return;
    }
    in->rm = -1;
    uint64_t base = 0, index = 0, scale = 1;
    int64_t disp = 0;
    int riprel = 0;
    if (rm == 4) {
        uint8_t sib = *p++;
        int idx = ((sib >> 3) & 7) | X << 3;
        scale = 1u << (sib >> 6);
        if (idx != 4) index = (uint64_t)g[greg_of[idx]];
        if ((sib & 7) == 5 && mod == 0) {
            disp = rd32(p);
            p += 4;
        } else {
            base = (uint64_t)g[greg_of[(sib & 7) | B << 3]];
        }
    } else if (rm == 5 && mod == 0) {
        riprel = 1;
        disp = rd32(p);
        p += 4;
    } else {
        base = (uint64_t)g[greg_of[rm | B << 3]];
    }
    if (mod == 1) {
        if (in->vex == 2) return; /* EVEX scales an 8-bit displacement by the operand size: not decoded */
        disp = (int8_t)*p++;
    } else if (mod == 2) {
        disp = rd32(p);
        p += 4;
    }
    if (riprel) base = (uint64_t)(uintptr_t)(p + (in->map == 3 ? 1 : 0)); /* next instruction (0F3A has an imm8) */
    in->addr = (const uint8_t *)(uintptr_t)(base + index * scale + (uint64_t)disp);
}

static int decode(const ucontext_t *uc, const uint8_t *p, insn *in) {
    memset(in, 0, sizeof *in);
    in->bytes = 16;
    int R = 0, X = 0, B = 0;
    for (int i = 0; i < 4; i++) {
        if (*p == 0x66) in->pp = 1;
        else if (*p == 0xF3) in->pp = 2;
        else if (*p == 0xF2) in->pp = 3;
        else if (!(*p == 0x2e || *p == 0x3e || *p == 0x26 || *p == 0x64 || *p == 0x65 || *p == 0x36)) break;
        p++;
    }
    if (*p >= 0x40 && *p <= 0x4f) {
        R = (*p >> 2) & 1, X = (*p >> 1) & 1, B = *p & 1;
        p++;
    }
    if (*p == 0xC5) {
        R = !(p[1] >> 7);
        in->vvvv = (~p[1] >> 3) & 15, in->pp = p[1] & 3, in->map = 1, in->vex = 1;
        in->bytes = (p[1] & 4) ? 32 : 16;
        p += 2;
    } else if (*p == 0xC4) {
        R = !(p[1] >> 7), X = !((p[1] >> 6) & 1), B = !((p[1] >> 5) & 1);
        in->map = p[1] & 31, in->vvvv = (~p[2] >> 3) & 15, in->pp = p[2] & 3, in->vex = 1;
        in->bytes = (p[2] & 4) ? 32 : 16;
        p += 3;
    } else if (*p == 0x62) {
        R = !(p[1] >> 7), X = !((p[1] >> 6) & 1), B = !((p[1] >> 5) & 1);
        if (!((p[1] >> 4) & 1) || !((p[3] >> 3) & 1)) return 0; /* R' or V': registers 16-31 */
        in->map = p[1] & 7, in->vvvv = (~p[2] >> 3) & 15, in->pp = p[2] & 3, in->vex = 2;
        in->bytes = (p[3] & 0x60) ? 32 : 16;
        p += 4;
    } else if (*p == 0x0F) {
        p++;
        in->map = *p == 0x3A ? 3 : *p == 0x38 ? 2 : 1;
        if (in->map != 1) p++;
    } else {
        return 0;
    }
    in->op = *p++;
    decode_modrm(uc, p, R, X, B, in);
    return in->rm != -2;
}

/* The upper 128 bits of ymm register r from the signal frame's XSAVE area, or NULL
 * when the frame has none: the software-reserved bytes of the FXSAVE image carry
 * the "FPXS" magic, and the AVX component (bit 2 of the header's xstate_bv at
 * 512) sits at its standard offset, 576. */
static const uint8_t *ymm_high(const ucontext_t *uc, int r) {
    const uint8_t *x = (const uint8_t *)uc->uc_mcontext.fpregs;
    uint32_t magic, size;
    uint64_t bv;
    memcpy(&magic, x + 464, 4);
    memcpy(&size, x + 468, 4);
    if (magic != 0x46505853u || size < 576 + 256) return NULL;
    memcpy(&bv, x + 512, 8);
    return (bv & 4) ? x + 576 + 16 * r : NULL;
}

/* Lane k (of 4-byte or 8-byte lanes) of an operand: a register (ymm's upper half
 * from the XSAVE area), or memory.  Returns 0 when it cannot be read. */
static int lane(const ucontext_t *uc, const insn *in, int regno, int k, int size, void *out) {
    int at = k * size;
    if (at + size > in->bytes) return 0;
    if (regno >= 0) {
        if (regno > 15) return 0;
        if (at < 16) {
            memcpy(out, (const uint8_t *)uc->uc_mcontext.fpregs->_xmm[regno].element + at, (size_t)size);
            return 1;
        }
        const uint8_t *hi = ymm_high(uc, regno);
        if (!hi) return 0;
        memcpy(out, hi + at - 16, (size_t)size);
        return 1;
    }
    if (!in->addr) return 0;
    memcpy(out, in->addr + at, (size_t)size);
    return 1;
}

static int culprit(int code, double a, double b, double r, int unary) {
    int finite = isfinite(a) && (unary || isfinite(b));
    if (code == FPE_FLTINV) return !isnan(a) && (unary || !isnan(b)) && isnan(r);
    return finite && isinf(r);
}

/* add/sub/mul/div/sqrt on float or double lanes: 1 with the culprit lane's
 * operands in buf; -1 when no lane is one (what trapped was an unused lane); 0 when
 * an operand cannot be read. */
static int arith(const ucontext_t *uc, const insn *in, int code, char *buf, size_t n) {
    static const char *const sym[16] = {[8] = "+", [9] = "*", [12] = "-", [14] = "/"};
    int unary = in->op == 0x51, dbl = in->pp == 1 || in->pp == 3, scalar = in->pp >= 2;
    int size = dbl ? 8 : 4, lanes = scalar ? 1 : in->bytes / size;
    int src1 = in->vex ? in->vvvv : in->reg;
    for (int k = 0; k < lanes; k++) {
        double a = 0, b = 0, r;
        float fa = 0, fb = 0;
        if (dbl) {
            if (!lane(uc, in, unary ? in->rm : src1, k, 8, &a) || (!unary && !lane(uc, in, in->rm, k, 8, &b))) return 0;
        } else {
            if (!lane(uc, in, unary ? in->rm : src1, k, 4, &fa) || (!unary && !lane(uc, in, in->rm, k, 4, &fb)))
                return 0;
            a = fa, b = fb;
        }
        volatile double va = a, vb = b;
        switch (in->op) {
        case 0x58: r = dbl ? va + vb : (double)((float)va + (float)vb); break;
        case 0x59: r = dbl ? va * vb : (double)((float)va * (float)vb); break;
        case 0x5C: r = dbl ? va - vb : (double)((float)va - (float)vb); break;
        case 0x5E: r = dbl ? va / vb : (double)((float)va / (float)vb); break;
        default: r = dbl ? sqrt(va) : (double)sqrtf((float)va); break;
        }
        if (!culprit(code, a, b, r, unary)) continue;
        const char *what = code == FPE_FLTOVF ? "floating-point overflow"
                           : code == FPE_FLTDIV ? "floating-point division by zero"
                                                : "invalid floating-point operation";
        if (unary)
            snprintf(buf, n, "%s: sqrt(%.9g) = %g ('%s')", what, a, r, dbl ? "double" : "float");
        else
            snprintf(buf, n, "%s: %.9g %s %.9g = %g ('%s')", what, a, sym[in->op & 15], b, r,
                     dbl ? "double" : "float");
        return 1;
    }
    return -1;
}

/* vcvtps2ph (float -> half) and cvtsd2ss / cvtpd2ps (double -> float): as arith. */
static int narrowing(const ucontext_t *uc, const insn *in, char *buf, size_t n) {
    int to_half = in->map == 3;
    int src = to_half ? in->reg : in->rm, size = to_half ? 4 : 8;
    /* clang rounds a scalar to half with the 128-bit vcvtps2ph, whose other lanes
     * hold whatever the register held: only lane 0 counts there (a half4's other
     * elements are then not checked); the 256-bit form is a vectorised loop's */
    int lanes = to_half ? (in->bytes == 32 ? 8 : 1) : in->pp == 1 ? in->bytes / size : 1;
    for (int k = 0; k < lanes; k++) {
        double v;
        float f;
        if (!lane(uc, in, src, k, size, to_half ? (void *)&f : (void *)&v)) return 0;
        if (to_half) v = f;
        double limit = to_half ? 65520.0 : 3.4028235677973366e38; /* the first values that round to Inf */
        if (!isfinite(v) || fabs(v) < limit) continue;
        snprintf(buf, n, "conversion overflows: %.9g ('%s') rounds to Inf in '%s'%s", v, to_half ? "float" : "double",
                 to_half ? "half" : "float", to_half ? " (its largest is 65504)" : "");
        return 1;
    }
    return -1;
}

int sw_num_x86_describe(void *ucv, const void *pc, int code, char *buf, size_t n) {
    const ucontext_t *uc = ucv;
    buf[0] = 0;
    insn in;
    if (!uc->uc_mcontext.fpregs || !decode(uc, pc, &in)) return 0;
    if (in.map == 1 && (in.op == 0x2C || in.op == 0x2D || in.op == 0x5B || in.op == 0xE6 ||
                        (in.vex == 2 && in.op >= 0x78 && in.op <= 0x7B)))
        return -1;
    if (in.map == 1 && (in.op == 0x58 || in.op == 0x59 || in.op == 0x5C || in.op == 0x5E || in.op == 0x51))
        return arith(uc, &in, code, buf, n);
    if ((in.map == 3 && in.op == 0x1D) || (in.map == 1 && in.op == 0x5A && (in.pp == 3 || in.pp == 1)))
        return narrowing(uc, &in, buf, n);
    return 0;
}
#else
int sw_num_x86_describe(void *uc, const void *pc, int code, char *buf, size_t n) {
    (void)uc;
    (void)pc;
    (void)code;
    if (n) buf[0] = 0;
    return 0;
}
#endif
