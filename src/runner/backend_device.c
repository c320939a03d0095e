/* backend_device.c — a backend around a Metal device (backend_device.h): the part an
 * op run's backend and a kernel case's share. */
#include <stdio.h>
#include <stdlib.h>

#include "metal/mtl.h"
#include "runner/backend_device.h"
#include "runner/machine.h"
#include "swmetal/swmetal.h"

static int device_take_findings(backend *b, dev_finding **out) { return mtl_device_take_findings(b->device, out); }

static int device_set_schedule(backend *b, const swmtl_schedule *sched) {
    return swmtl_device_set_schedule(mtl_device_object(b->device), sched);
}

backend *backend_device_new(mtl_device *dev, backend_kind kind, size_t state_size, char *err, size_t errlen) {
    if (!dev) return NULL;
    backend *b = calloc(1, sizeof *b);
    void *s = calloc(1, state_size);
    if (!b || !s) {
        free(b);
        free(s);
        mtl_device_free(dev);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->desc = backend_desc_of(kind);
    b->device = dev;
    b->state = s;
    snprintf(b->device_name, sizeof b->device_name, "%s", mtl_device_name(dev));
    b->gpu_cores = backend_has(b, BACKEND_GPU) ? machine_gpu_core_count() : -1;
    b->take_findings = backend_has(b, BACKEND_CHECKS) ? device_take_findings : NULL;
    b->set_schedule = backend_has(b, BACKEND_SCHEDULES) ? device_set_schedule : NULL;
    return b;
}

void backend_device_free(backend *b) {
    mtl_device_free(b->device);
    free(b->state);
    free(b);
}
