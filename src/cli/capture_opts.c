/* capture_opts.c — --capture DIR for op runs and kernel cases (capture_opts.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/capture_opts.h"
#include "runner/backend.h"

int cli_capture_check_backend(const char *dir, const char *backend, char *err, size_t errlen) {
    const backend_desc *kind = backend_desc_find(backend); /* NULL: opening it says so */
    if (!dir || (kind && (kind->caps & BACKEND_CAPTURE))) return 0;
    snprintf(err, errlen, "--capture needs --backend metal: a GPU capture records a real GPU's work, and this run "
                          "uses --backend %s", backend);
    return -1;
}

void cli_capture_enable(void) { setenv("MTL_CAPTURE_ENABLED", "1", 1); }

int cli_capture_dir(const char *dir, char *err, size_t errlen) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "--capture %s: cannot create the directory: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

void cli_capture_path(const char *dir, const char *stem, char *out, size_t n) {
    snprintf(out, n, "%s/%s.gputrace", dir, stem);
}

int cli_capture_unused(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    snprintf(err, errlen, "--capture: %.300s already exists: remove it or capture into another directory", path);
    return -1;
}

void cli_capture_note(const char *path) {
    printf("GPU capture of the first timed iteration: %s (open it in Xcode; that iteration's time includes the "
           "capture)\n", path);
}
