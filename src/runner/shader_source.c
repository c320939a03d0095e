/* shader_source.c — locating and reading .metal sources. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/embedded.h"
#include "core/file.h"
#include "core/sha256.h"
#include "runner/host.h"
#include "runner/shader_source.h"

/* 0, or -1 with errno saying why (the message names it): the open's own errno, EIO
 * for a failed read, ENOMEM. */
static int read_file(const char *path, shader_source *out) {
    file_text ft;
    switch (file_read_all(path, FILE_NO_LIMIT, 0, &ft, NULL, 0)) {
    case FILE_OK: break;
    case FILE_CANNOT_OPEN: errno = ft.sys_errno; return -1;
    case FILE_OUT_OF_MEMORY: errno = ENOMEM; return -1;
    default: errno = EIO; return -1;
    }
    out->text = ft.data;
    out->len = ft.len;
    snprintf(out->display_path, sizeof out->display_path, "%s", path);
    return 0;
}

static int exe_dir(char *buf, size_t n) {
    if (host_executable_path(buf, n) != 0) return -1;
    char *slash = strrchr(buf, '/');
    if (!slash) return -1;
    *slash = 0;
    return 0;
}

int shader_source_load(const char *path, shader_source *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    int found = read_file(path, out) == 0;
    int open_errno = errno;
    if (!found && strncmp(path, "shaders/", 8) == 0) {
        char cand[PATH_MAX + 64], dir[PATH_MAX];
        const char *root = getenv("GDNBENCH_ROOT");
        if (root) {
            snprintf(cand, sizeof cand, "%s/%s", root, path);
            found = read_file(cand, out) == 0;
        }
        if (!found && exe_dir(dir, sizeof dir) == 0) {
            snprintf(cand, sizeof cand, "%s/../%s", dir, path);
            found = read_file(cand, out) == 0;
        }
        if (!found) {
            const embedded_file *e = embedded_find(path);
            if (e) {
                out->text = malloc(e->len + 1);
                if (!out->text) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
                memcpy(out->text, e->data, e->len + 1);
                out->len = e->len;
                snprintf(out->display_path, sizeof out->display_path, "%s", path);
                out->embedded = 1;
                found = 1;
            }
        }
    }
    if (!found && strncmp(path, "shaders/", 8) == 0) {
        snprintf(err, errlen, "the op's kernel %s is not in this build (nor under $GDNBENCH_ROOT): rebuild, or "
                              "give one with --shader FILE --function NAME", path);
        return -1;
    }
    if (!found) {
        snprintf(err, errlen, "%s: cannot read it (%s): give the path of a .metal file", path,
                 strerror(open_errno));
        return -1;
    }
    sha256_hex(out->text, out->len, out->sha256);
    return 0;
}

void shader_source_free(shader_source *s) {
    free(s->text);
    s->text = NULL;
}
