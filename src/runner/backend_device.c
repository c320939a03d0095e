/* backend_device.c — a backend around a Metal device (backend_device.h): the part an
 * op run's backend and a kernel case's share, so a kernel case's record carries the
 * GPU's facts (environment) and a --capture records its dispatches as an op's. */
#include <stdio.h>
#include <stdlib.h>

#include "core/chips.h"
#include "metal/mtl.h"
#include "runner/backend_device.h"
#include "runner/machine.h"
#include "swmetal/swmetal.h"

/* The facts of the GPU the numbers come from, for the record's environment; the
 * software device is no GPU: nothing to say about one. */
static void device_facts(backend *b, rec_machine *m) {
    if (!backend_has(b, BACKEND_GPU)) return;
    const char *name = mtl_device_name(b->device);
    snprintf(m->gpu_name, sizeof m->gpu_name, "%s", name);
    m->gpu_cores = b->gpu_cores;
    const char *families[REC_MAX_FAMILIES];
    m->nfamilies = mtl_device_gpu_families(b->device, families, REC_MAX_FAMILIES);
    for (int i = 0; i < m->nfamilies; i++) snprintf(m->families[i], sizeof m->families[i], "%s", families[i]);
    m->working_set = mtl_device_recommended_working_set(b->device);
    m->paravirtual = chip_is_paravirtual(name); /* the device.paravirtual detector */
}

static int device_capture_begin(backend *b, const char *path, char *err, size_t errlen) {
    return mtl_capture_start(b->device, path, err, errlen);
}

static void device_capture_end(backend *b) { mtl_capture_stop(b->device); }

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
    b->device_facts = device_facts;
    b->capture_begin = device_capture_begin;
    b->capture_end = device_capture_end;
    b->take_findings = backend_has(b, BACKEND_CHECKS) ? device_take_findings : NULL;
    b->set_schedule = backend_has(b, BACKEND_SCHEDULES) ? device_set_schedule : NULL;
    return b;
}

void backend_device_free(backend *b) {
    mtl_device_free(b->device);
    free(b->state);
    free(b);
}
