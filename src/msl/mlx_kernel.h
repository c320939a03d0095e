/* mlx_kernel.h — the whole MSL text of a kernel written for MLX's
 * `mx.fast.metal_kernel`: its body wrapped in the signature MLX generates, so a
 * kernel a Python user wrote runs unchanged (case.md's `mlx_metal_kernel`).
 *
 * MLX's rules (ml-explore/mlx, write_signature and metal_kernel in
 * mlx/backend/metal/custom_kernel.cpp), which this follows:
 * - buffer indices count up from 0: each input, then right after it the
 *   `<name>_shape` (const constant int*), `<name>_strides` (const constant
 *   int64_t*, in elements) and `<name>_ndim` (const constant int&) that the body
 *   mentions (plain substring search of the body, not the header; none for a
 *   0-d input), then the outputs;
 * - an input is `const device T*`, or `const constant T*` when it has fewer than
 *   8 elements, or `const constant T&` when it is 0-d; an output `device T*`, or
 *   `device atomic<T>*` with atomic_outputs;
 * - the thread attributes the body mentions (from MLX's fixed list, in its
 *   order) follow the buffers, typed uint or uint3;
 * - template arguments make the kernel a template (`typename`, `int`, `bool`)
 *   instantiated once under the host name MLX gives it:
 *   custom_kernel_<name>[_<template hash>]{_<input type>[s|c]}{_<output type>}.
 * One difference: where MLX writes `) {` after a middle output when an input
 * has shape parameters and the body names no attribute (text that cannot
 * compile), this writes the separator the position needs.
 *
 * MLX compiles the text behind its own utils.h (bfloat16_t, float16_t, `using
 * namespace metal`); `preamble` says what stands in for it.  Depends on nothing
 * but libc. */
#ifndef GDN_MLX_KERNEL_H
#define GDN_MLX_KERNEL_H

#include <stddef.h>

#define MLXK_MAX_NAMES 32
#define MLXK_MAX_DIMS 8
#define MLXK_MAX_PARAMS (MLXK_MAX_NAMES * 4)

typedef enum mlxk_targ_kind {
    MLXK_TARG_DTYPE = 1,   /* a dtype name: `typename` */
    MLXK_TARG_INT,         /* `int` */
    MLXK_TARG_BOOL         /* `bool` */
} mlxk_targ_kind;

typedef struct mlxk_targ {
    const char *name;
    int kind;              /* mlxk_targ_kind */
    const char *dtype;     /* MLXK_TARG_DTYPE: a case.md dtype name ("float32") */
    long long value;       /* MLXK_TARG_INT / MLXK_TARG_BOOL (0 or 1) */
} mlxk_targ;

typedef struct mlxk_array {
    const char *name;
    const char *dtype;     /* case.md dtype name: float32 float16 bfloat16 int8 ... bool */
    int ndim;              /* inputs: 0 = a scalar (`const constant T&`) */
    long long nelem;       /* inputs: element count (fewer than 8: `constant`) */
} mlxk_array;

typedef enum mlxk_preamble {
    MLXK_PREAMBLE_OWN = 0,    /* <metal_stdlib>, `using namespace metal`, float16_t and bfloat16_t */
    MLXK_PREAMBLE_MLX_UTILS   /* #include "mlx/backend/metal/kernels/utils.h": needs the MLX
                                 tree's root on the include path, as MLX compiles it */
} mlxk_preamble;

/* The spec object's fields and the arrays' dtypes and shapes. */
typedef struct mlxk_spec {
    const char *name;
    const char *source;                /* the body */
    const char *header;                /* NULL: none */
    mlxk_array inputs[MLXK_MAX_NAMES];
    int ninputs;
    mlxk_array outputs[MLXK_MAX_NAMES]; /* ndim and nelem unused */
    int noutputs;
    mlxk_targ targs[MLXK_MAX_NAMES];
    int ntargs;
    int ensure_row_contiguous;         /* no effect on the text; kept for the runner */
    int atomic_outputs;
    int preamble;                      /* mlxk_preamble */
} mlxk_spec;

typedef enum mlxk_param_kind {
    MLXK_PARAM_INPUT = 1,
    MLXK_PARAM_SHAPE,      /* int32[ndim] of input `of` */
    MLXK_PARAM_STRIDES,    /* int64[ndim] of input `of`, in elements */
    MLXK_PARAM_NDIM,       /* int32 of input `of` */
    MLXK_PARAM_OUTPUT
} mlxk_param_kind;

typedef struct mlxk_param {
    char name[80];         /* the parameter's name in the generated signature */
    int kind;              /* mlxk_param_kind */
    int of;                /* index into spec inputs[] (INPUT/SHAPE/STRIDES/NDIM) or outputs[] */
    int index;             /* its [[buffer(n)]] */
} mlxk_param;

typedef struct mlxk_kernel {
    char *text;            /* the whole MSL source (malloc'd) */
    char *function;        /* the host name to ask the library for (malloc'd) */
    mlxk_param params[MLXK_MAX_PARAMS];   /* in binding order: index 0, 1, ... */
    int nparams;
} mlxk_kernel;

/* The MSL type MLX writes for a case.md dtype name ("float32" -> "float",
 * "bfloat16" -> "bfloat16_t"), or NULL for a name it has none for. */
const char *mlxk_type_name(const char *dtype);

/* Generates the kernel.  Returns 0, or -1 with a one-line reason in err (no
 * outputs, an unknown dtype, a name that is not an identifier, too many names,
 * out of memory); on failure *out holds nothing to free. */
int mlxk_generate(const mlxk_spec *spec, mlxk_kernel *out, char *err, size_t errlen);

void mlxk_kernel_free(mlxk_kernel *k);

#endif
