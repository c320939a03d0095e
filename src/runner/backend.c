/* backend.c — choosing a backend by name, and the one place the Metal devices are
 * created: Metal's system default device (a GPU, macOS only) or the software
 * device, handed to the same Metal bridge (metal/mtl.h). */
#include <stdio.h>
#include <string.h>

#include "core/objc_call.h"
#include "metal/mtl.h"
#include "runner/backend.h"
#include "runner/runner.h"
#include "swmetal/swmtl.h"

#if defined(__APPLE__)
extern id MTLCreateSystemDefaultDevice(void);
#endif

const char *backend_default_name(void) {
#if defined(__APPLE__)
    return "metal";
#else
    return "sw";
#endif
}

/* The GPU: Metal's system default device. */
static mtl_device *open_system_device(char *err, size_t errlen) {
#if defined(__APPLE__)
    id dev = MTLCreateSystemDefaultDevice();
    if (!dev) {
        snprintf(err, errlen, "--backend metal: no Metal device (MTLCreateSystemDefaultDevice returned nil)");
        return NULL;
    }
    return mtl_device_new(dev, err, errlen);
#else
    snprintf(err, errlen,
             "--backend metal needs macOS with Metal.framework; on this host use --backend sw (the software Metal "
             "device)");
    return NULL;
#endif
}

static mtl_device *open_software_device(char *err, size_t errlen) {
    id dev = swmtl_create_system_default_device();
    if (!dev) {
        snprintf(err, errlen, "--backend sw: the software Metal device could not start (see the message above)");
        return NULL;
    }
    return mtl_device_new(dev, err, errlen);
}

backend *backend_open(const char *name, const run_opts *o, char *err, size_t errlen) {
    if (strcmp(name, "cpu") == 0) return backend_cpu_open(err, errlen);
    if (strcmp(name, "sw") == 0) {
        /* Process-wide settings of the software device; they must precede its buffers. */
        if (o && o->sw_checks && swmtl_set_checks(o->sw_checks) != 0) {
            snprintf(err, errlen, "--sw-checks '%s' is unknown: use none, fast or full", o->sw_checks);
            return NULL;
        }
        if (o && o->sw_schedule && swmtl_set_schedule(o->sw_schedule) != 0) {
            snprintf(err, errlen, "--sw-schedule '%s' is unknown: use inorder, reverse or random:SEED", o->sw_schedule);
            return NULL;
        }
        /* Every op compiles MSL: without a compiler, say so now, in one line. */
        char why[768];
        if (!swmtl_can_compile(why, sizeof why)) {
            snprintf(err, errlen, "--backend sw: %s", why);
            return NULL;
        }
        return backend_metal_open(open_software_device(err, errlen), 1, err, errlen);
    }
    if (strcmp(name, "metal") == 0) return backend_metal_open(open_system_device(err, errlen), 0, err, errlen);
    snprintf(err, errlen, "--backend '%s' is unknown: use cpu, sw or metal", name);
    return NULL;
}
