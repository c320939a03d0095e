/* ref_kind.h — which of the two CPU references to compute.
 *
 * Every reference under src/ref takes one; an op descriptor's reference function
 * (ops/op.h) is called with one and passes it on. */
#ifndef GDN_REF_REF_KIND_H
#define GDN_REF_REF_KIND_H

typedef enum ref_kind {
    REF_F64 = 0,   /* the ideal: everything in double, no rounding */
    REF_PARITY = 1 /* f32 math rounded to bf16 exactly where FLA/mlx-native round */
} ref_kind;

#endif
