/* kcase_data.h — the bytes of a case's buffers: init patterns (seeded per buffer),
 * tensor files (.npy, .npz, .safetensors through src/io's readers) and values, and
 * the expected outputs; every file checked against what the case says of it. */
#ifndef GDN_KCASE_DATA_H
#define GDN_KCASE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "kcase/kcase.h"

/* Raw contiguous row-major elements. */
typedef struct kc_tensor {
    kc_dtype dtype;
    int ndim;
    int64_t shape[TENSOR_MAX_DIMS];
    int64_t numel;
    size_t nbytes;
    void *data;           /* owned; kc_tensor_free */
} kc_tensor;

void kc_tensor_free(kc_tensor *t);

/* The poison of a dtype, pattern KC_POISON_NAN: floats a NaN with a payload no
 * arithmetic produces (the patterns of runner/check.c), integers and bools 0xA5 bytes;
 * pattern KC_POISON_FINITE: 0x5A bytes (a large finite float), so a kernel that reads
 * an output before writing it gives other bytes under each (validate runs both). */
enum { KC_POISON_NAN = 1, KC_POISON_FINITE = 2 };
void kc_poison(kc_dtype t, int pattern, void *base, int64_t n);
int kc_is_poison(kc_dtype t, int pattern, const void *base, int64_t i);

/* Buffer i's initial contents (not for struct buffers, which need the kernel's
 * layout).  poison: the pattern of "init": "poison" (KC_POISON_*); poison_default 1:
 * an array without "init" gets it too (an output), 0: zeros.
 * The seed and the buffer's name seed its random stream. */
int kc_buffer_contents(const kc_case *c, int i, uint64_t seed, int poison, int poison_default, kc_tensor *out, char *err,
                       size_t errlen);
/* Buffer i's expected contents as doubles, one per element of its contents (a single
 * "value" broadcast).  *ref NULL when the buffer has no file/value expectation. */
int kc_expect_contents(const kc_case *c, int i, const kc_tensor *contents, double **ref, char *err, size_t errlen);

/* Every file of the case read and checked (dtype and shape against the case, expected
 * outputs against their buffers), and the source present: what is checked before
 * anything runs.  0, or -1 with one line naming the key. */
int kc_check_files(const kc_case *c, char *err, size_t errlen);

#endif
