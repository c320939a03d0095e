/* numerics.h — the numeric checks' run-time side (numerics.c): what clang's
 * integer and cast checks and the numerics IR pass (ir_numerics.c) report through.
 * Internal to src/swmetal. */
#ifndef GDN_SW_NUMERICS_H
#define GDN_SW_NUMERICS_H

#include <stddef.h>
#include <stdint.h>

#include "swmetal/ir_pass.h"

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
    SW_NUM_IMPLICIT
};

/* Called by kernel code (exported like every sw_rt_* service): a check of kind
 * failed; data is clang's check data (compiler-rt's layout), a and b the
 * operands as clang passes them, ret
 * the return address into the kernel's code. */
void sw_rt_num_check(int kind, const void *data, uintptr_t a, uintptr_t b, const void *ret);

/* The operations the numerics IR pass checks (ir_numerics.c), as it tells
 * sw_rt_num_fp: the four arithmetic operations and frem, fptrunc, then the math
 * functions by their libm/LLVM names. */
enum {
    SW_NUMF_FADD = 1,
    SW_NUMF_FSUB,
    SW_NUMF_FMUL,
    SW_NUMF_FDIV,
    SW_NUMF_FREM,
    SW_NUMF_TRUNC,
    SW_NUMF_FIRST_CALL,
    SW_NUMF_FMA = SW_NUMF_FIRST_CALL,
    SW_NUMF_FMULADD,
    SW_NUMF_SQRT,
    SW_NUMF_EXP,
    SW_NUMF_EXP2,
    SW_NUMF_EXP10,
    SW_NUMF_EXPM1,
    SW_NUMF_LOG,
    SW_NUMF_LOG2,
    SW_NUMF_LOG10,
    SW_NUMF_LOG1P,
    SW_NUMF_POW,
    SW_NUMF_SINH,
    SW_NUMF_COSH,
    SW_NUMF_TAN,
    SW_NUMF_ASIN,
    SW_NUMF_ACOS,
    SW_NUMF_ACOSH,
    SW_NUMF_ATANH,
    SW_NUMF_FMOD,
    SW_NUMF_HYPOT,
    SW_NUMF_COUNT
};

/* A math function's name ("exp", "fma"; the operator for SW_NUMF_FADD..FREM) and
 * how many operands it takes; NULL / 0 for no such function. */
const char *sw_num_fn_name(int fn);
int sw_num_fn_arity(int fn);

/* The longest line the IR pass writes (a 64-lane vector's constant fits). */
#define SW_NUM_LINE 2048

/* Called by kernel code where the numerics IR pass saw a float result that is
 * Inf or NaN: code = fn | in-scalar << 8 | out-scalar << 12 | operands << 16 (the
 * scalars as llir.h's ll_scalar), each operand and the result widened to double;
 * live 0 for a vector's lane the pass found no finding in (one call per lane).
 * Reports when finite operands gave Inf, or operands without NaN gave NaN. */
void sw_rt_num_fp(int code, int live, double a, double b, double c, double r);

/* The value of a binary16 (bfloat 0) or bfloat16 (bfloat 1) bit pattern. */
double sw_num_fp16_value(uint16_t bits, int bfloat);

/* The IR pass that checks floating-point results (ir_numerics.c), registered in
 * ir_pass.c for SW_INSTR_NUMERICS. */
extern const sw_ir_pass sw_ir_numerics_pass;

#endif
