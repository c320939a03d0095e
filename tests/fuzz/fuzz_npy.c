/* fuzz_npy.c — libFuzzer target: npy_parse_mem on arbitrary bytes.
 * Built and run by tests/fuzz/run.sh.  An accepted input's data must be the tail of
 * the input and survive a write -> read round trip. */
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tensor *t = NULL, *t2 = NULL;
    char err[512];
    if (npy_parse_mem(data, size, "fuzz.npy", "x", &t, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n') || t) abort();
        return 0;
    }
    size_t nb = tensor_nbytes(t);
    if (nb > size || memcmp(t->data, data + size - nb, nb) != 0) abort();
    uint8_t *buf;
    size_t len;
    if (npy_serialize(t, &buf, &len, err, sizeof err) != 0) abort();
    if (npy_parse_mem(buf, len, "again", "x", &t2, err, sizeof err) != 0 || t2->ndim != t->ndim ||
        t2->dtype != t->dtype || memcmp(t2->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) ||
        memcmp(t2->data, t->data, nb))
        abort();
    free(buf);
    tensor_free(t2);
    tensor_free(t);
    return 0;
}
