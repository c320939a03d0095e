/* backend_desc.c — the backends by kind: their names and what each can do. */
#include <string.h>

#include "runner/backend.h"

static const backend_desc descs[] = {
    {BACKEND_CPU, "cpu", 0},
    {BACKEND_SW, "sw", BACKEND_EMULATED | BACKEND_KERNELS | BACKEND_CHECKS | BACKEND_SCHEDULES | BACKEND_COUNTERS},
    {BACKEND_METAL, "metal", BACKEND_GPU | BACKEND_KERNELS | BACKEND_CAPTURE},
};

const backend_desc *backend_desc_find(const char *name) {
    for (size_t i = 0; name && i < sizeof descs / sizeof descs[0]; i++)
        if (strcmp(descs[i].name, name) == 0) return &descs[i];
    return NULL;
}

const backend_desc *backend_desc_of(backend_kind kind) { return &descs[kind]; }
