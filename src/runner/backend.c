/* backend.c — choosing a backend by name. */
#include <stdio.h>
#include <string.h>

#include "runner/backend.h"
#include "runner/runner.h"
#include "swmetal/swmtl.h"

const char *backend_default_name(void) {
#if defined(__APPLE__)
    return "metal";
#else
    return "sw";
#endif
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
        return backend_metal_open("sw", err, errlen);
    }
    if (strcmp(name, "metal") == 0) return backend_metal_open("metal", err, errlen);
    snprintf(err, errlen, "--backend '%s' is unknown: use cpu, sw or metal", name);
    return NULL;
}
