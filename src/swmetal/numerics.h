/* numerics.h — the numeric checks' run-time side (numerics.c): the floating-point
 * traps a numerics dispatch's workers arm, and the decoding of a trapping x86-64
 * instruction's operands (numerics_x86.c).  Internal to src/swmetal. */
#ifndef GDN_SW_NUMERICS_H
#define GDN_SW_NUMERICS_H

#include <stddef.h>
#include <stdint.h>

struct sw_worker;

/* What the prelude's numeric hooks report (sw_rt_num_check's kind; metal_stdlib.h
 * passes the same numbers). */
enum {
    SW_NUM_ADD = 1,
    SW_NUM_SUB,
    SW_NUM_MUL,
    SW_NUM_NEGATE,
    SW_NUM_DIVREM,
    SW_NUM_SHIFT,
    SW_NUM_FLOAT_CAST,
    SW_NUM_IMPLICIT,
    SW_NUM_BF16
};

/* Called by kernel code (exported like every sw_rt_* service): a check of kind
 * failed; data is clang's check data (compiler-rt's layout; SW_NUM_BF16: none),
 * a and b the operands as clang passes them (SW_NUM_BF16: the float's bits), ret
 * the return address into the kernel's code. */
void sw_rt_num_check(int kind, const void *data, uintptr_t a, uintptr_t b, const void *ret);

/* Unmask (arm) / mask the overflow, invalid and divide-by-zero exceptions of this
 * OS thread's floating-point unit; no-ops where the checks cannot trap (arm64). */
void sw_num_arm(void);
void sw_num_disarm(void);

/* A SIGFPE: returns 1 when it was a trap of a numerics dispatch (reported when the
 * running GPU thread's kernel code made it; the context is changed so that the
 * instruction completes with its IEEE result), 0 when it is not ours. */
int sw_num_fp_trap(struct sw_worker *w, int code, void *ucontext);

/* The value of a binary16 (bfloat 0) or bfloat16 (bfloat 1) bit pattern. */
double sw_num_fp16_value(uint16_t bits, int bfloat);

/* numerics_x86.c: what the trapping instruction at pc computed, from the
 * registers and memory in the signal context uc (Linux x86-64): writes a detail
 * with its operands and returns 1; returns -1 when it is no finding (a float ->
 * integer conversion, which clang's check reports with types, or no lane the
 * kernel uses made Inf or NaN of finite values: an unused lane trapped); 0 with
 * buf "" when it cannot tell. */
int sw_num_x86_describe(void *uc, const void *pc, int code, char *buf, size_t n);

#endif
