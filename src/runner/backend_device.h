/* backend_device.h — what every backend on a Metal device shares: an op run's
 * (backend_metal.c) and a kernel case's (kcase_run.c).  One place makes such a
 * backend around its device — name, GPU core count, and the hooks that need nothing
 * but the device — so both say the same of the device they run on. */
#ifndef GDN_BACKEND_DEVICE_H
#define GDN_BACKEND_DEVICE_H

#include <stddef.h>

#include "runner/backend.h"

struct mtl_device;

/* A backend of `kind` on dev (taken over: freed on failure too), its state a zeroed
 * block of state_size bytes (the caller's own type), with desc, device,
 * device_name, gpu_cores (IORegistry, real GPUs only) and the device's own hooks
 * set: device_facts (a GPU's name, cores, families, working set, paravirtual),
 * capture_begin/end (MTLCaptureManager; a device without GPU traces refuses), and
 * take_findings and set_schedule where the kind has checks and schedules.  The
 * caller sets the case hooks (prepare, run_once, describe, release_case, ...) and a
 * destroy that frees what its state holds and ends with backend_device_free.  NULL
 * with err. */
backend *backend_device_new(struct mtl_device *dev, backend_kind kind, size_t state_size, char *err, size_t errlen);

/* Frees what backend_device_new made: the device, the state block, b. */
void backend_device_free(backend *b);

#endif
