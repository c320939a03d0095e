/* backend.c — choosing a backend by name, and the one place the Metal devices are
 * created: Metal's system default device (a GPU, macOS only) or the software
 * device, handed to the same Metal bridge (metal/mtl.h). */
#include <stdio.h>

#include "core/objc_call.h"
#include "metal/mtl.h"
#include "runner/backend.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"

#if defined(__APPLE__)
/* MTLDevice.h: id<MTLDevice> MTLCreateSystemDefaultDevice(void) (+1), and
 * NSArray<id<MTLDevice>> *MTLCopyAllDevices(void) (+1, macOS only). */
extern id MTLCreateSystemDefaultDevice(void);
extern id MTLCopyAllDevices(void);

/* The first of all Metal devices, retained (+1); nil when there is none.  Where no
 * default device is given (a process that did not link CoreGraphics, some headless
 * sessions) the devices are still there to be listed. */
static id first_of_all_devices(void) {
    id all = MTLCopyAllDevices();
    if (!all) return NULL;
    id pool = objc_pool_push();
    id dev = MSG0(NSUInteger, all, "count") > 0 ? MSG1(id, all, "objectAtIndex:", NSUInteger, (NSUInteger)0) : NULL;
    if (dev) MSG0(id, dev, "retain");
    objc_pool_pop(pool);
    MSG0(void, all, "release");
    return dev;
}
#endif

const char *backend_default_name(void) {
#if defined(__APPLE__)
    return "metal";
#else
    return "sw";
#endif
}

/* The GPU: Metal's system default device, else the first device Metal lists. */
static mtl_device *open_system_device(char *err, size_t errlen) {
#if defined(__APPLE__)
    id dev = MTLCreateSystemDefaultDevice();
    if (!dev) dev = first_of_all_devices();
    if (!dev) {
        snprintf(err, errlen, "--backend metal: no Metal device (MTLCreateSystemDefaultDevice returned nil and "
                              "MTLCopyAllDevices listed none)");
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

/* The software device, with the run's --sw-checks, --sw-schedule and --sw-timeout (the
 * environment's GDNBENCH_SW_* where they are not given). */
static mtl_device *open_software_device(const run_opts *o, char *err, size_t errlen) {
    swmtl_options so;
    swmtl_options_init(&so);
    if (o && o->sw_checks && swmtl_parse_checks(o->sw_checks, &so.checks, "--sw-checks", err, errlen) != 0)
        return NULL;
    if (o && o->sw_schedule &&
        swmtl_parse_order(o->sw_schedule, &so.schedule.fibers, "--sw-schedule", err, errlen) != 0)
        return NULL;
    if (o && o->has_sw_timeout) so.timeout_s = o->sw_timeout;
    /* Every op compiles MSL: without a compiler, say so now, in one line. */
    char why[768];
    if (!swmtl_can_compile(why, sizeof why)) {
        snprintf(err, errlen, "--backend sw: %s", why);
        return NULL;
    }
    id dev = swmtl_device_new(&so);
    if (!dev) {
        snprintf(err, errlen, "--backend sw: the software Metal device could not start (see the message above)");
        return NULL;
    }
    return mtl_device_new(dev, err, errlen);
}

backend *backend_open(const char *name, const run_opts *o, char *err, size_t errlen) {
    const backend_desc *d = backend_desc_find(name);
    if (!d) {
        snprintf(err, errlen, "--backend '%s' is unknown: use cpu, sw or metal", name);
        return NULL;
    }
    mtl_device *dev = NULL;
    switch (d->kind) {
    case BACKEND_CPU: return backend_cpu_open(err, errlen);
    case BACKEND_SW: dev = open_software_device(o, err, errlen); break;
    case BACKEND_METAL: dev = open_system_device(err, errlen); break;
    }
    return dev ? backend_metal_open(dev, d->kind, err, errlen) : NULL;
}

struct mtl_device *backend_open_device(const char *name, const run_opts *o, char *err, size_t errlen) {
    const backend_desc *d = backend_desc_find(name);
    if (!d || d->kind == BACKEND_CPU) {
        snprintf(err, errlen, "--backend '%s': a kernel case runs on sw or metal", name);
        return NULL;
    }
    return d->kind == BACKEND_SW ? open_software_device(o, err, errlen) : open_system_device(err, errlen);
}
