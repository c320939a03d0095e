/* fuzz_safetensors.c — libFuzzer target: safetensors_parse_mem on arbitrary bytes.
 * Built and run by tests/fuzz/run.sh (clang -fsanitize=fuzzer,address,undefined).
 * An accepted input must survive a write -> read round trip unchanged. */
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    io_set set = {0};
    char err[512];
    if (safetensors_parse_mem(data, size, "fuzz.safetensors", &set, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n') || set.n || set.nmeta) abort();
        return 0;
    }
    tensor *ts[256];
    if (set.n > 256) abort();
    for (int i = 0; i < set.n; i++) ts[i] = set.e[i].t;
    uint8_t *buf;
    size_t len;
    io_set again = {0};
    if (safetensors_serialize(ts, set.n, set.meta, set.nmeta, &buf, &len, err, sizeof err) != 0) abort();
    if (safetensors_parse_mem(buf, len, "again", &again, err, sizeof err) != 0 || again.n != set.n) abort();
    for (int i = 0; i < set.n; i++) {
        const tensor *a = set.e[i].t, *b = again.e[i].t;
        if (strcmp(a->name, b->name) || a->dtype != b->dtype || a->ndim != b->ndim ||
            memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) ||
            memcmp(a->data, b->data, tensor_nbytes(a)))
            abort();
    }
    free(buf);
    io_set_clear(&again);
    io_set_clear(&set);
    return 0;
}
