/* backend.c — choosing a backend by name. */
#include <stdio.h>
#include <string.h>

#include "runner/backend.h"
#include "runner/runner.h"

const char *backend_default_name(void) {
    return "cpu";
}

backend *backend_open(const char *name, const run_opts *o, char *err, size_t errlen) {
    if (strcmp(name, "cpu") == 0) return backend_cpu_open(err, errlen);
    if (strcmp(name, "sw") == 0) {
        snprintf(err, errlen, "--backend sw: the software Metal device is not built yet; use --backend cpu");
        return NULL;
    }
    if (strcmp(name, "metal") == 0) {
        snprintf(err, errlen, "--backend metal: not built yet; use --backend cpu");
        return NULL;
    }
    snprintf(err, errlen, "--backend '%s' is unknown: use cpu, sw or metal", name);
    return NULL;
}
