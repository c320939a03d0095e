/* file.c — reading a whole file into memory (see file.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

static void say(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Reads fd to its end into out->data.  expect: the size fstat gave (0 for a stream,
 * and for /proc files, which report 0): the buffer starts that big plus two bytes,
 * one to see the end without growing and one for the NUL, so a regular file takes
 * one allocation. */
static file_status read_fd(int fd, size_t max, uint64_t expect, file_text *out) {
    size_t cap = expect < 4096 ? 4096 : expect > SIZE_MAX - 2 ? SIZE_MAX : (size_t)expect + 2;
    size_t len = 0;
    char *buf = malloc(cap);
    if (!buf) return FILE_OUT_OF_MEMORY;
    for (;;) {
        if (cap - len < 2) {
            size_t bigger = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
            char *nb = bigger > cap ? realloc(buf, bigger) : NULL;
            if (!nb) {
                free(buf);
                return FILE_OUT_OF_MEMORY;
            }
            buf = nb;
            cap = bigger;
        }
        size_t want = cap - len - 1;
        if (want > (size_t)1 << 30) want = (size_t)1 << 30; /* read() takes at most SSIZE_MAX */
        ssize_t got = read(fd, buf + len, want);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            out->sys_errno = errno;
            free(buf);
            return FILE_READ_ERROR;
        }
        if (got == 0) break;
        len += (size_t)got;
        if (len > max) {
            free(buf);
            return FILE_TOO_LARGE;
        }
    }
    buf[len] = 0;
    out->data = buf;
    out->len = len;
    return FILE_OK;
}

file_status file_read_all(const char *path, size_t max, int flags, file_text *out, char *err, size_t errlen) {
    *out = (file_text){0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        out->sys_errno = errno;
        say(err, errlen, "%s: cannot open: %s", path, strerror(out->sys_errno));
        return FILE_CANNOT_OPEN;
    }
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    file_status s = FILE_OK;
    if (!regular && (flags & FILE_REGULAR_ONLY))
        s = FILE_NOT_REGULAR;
    else if (regular && (uint64_t)st.st_size > max)
        s = FILE_TOO_LARGE;
    else
        s = read_fd(fd, max, regular ? (uint64_t)st.st_size : 0, out);
    close(fd);
    switch (s) {
    case FILE_OK: break;
    case FILE_NOT_REGULAR: say(err, errlen, "%s: not a regular file", path); break;
    case FILE_TOO_LARGE:
        /* st_size is the size only when the file did not grow while it was read */
        if (regular && (uint64_t)st.st_size > max) {
            out->size = (uint64_t)st.st_size;
            say(err, errlen, "%s: %llu bytes is more than the limit of %zu bytes", path,
                (unsigned long long)out->size, max);
        } else {
            say(err, errlen, "%s: more than the limit of %zu bytes", path, max);
        }
        break;
    case FILE_READ_ERROR: say(err, errlen, "%s: cannot read: read error", path); break;
    case FILE_OUT_OF_MEMORY: say(err, errlen, "%s: cannot read: out of memory", path); break;
    case FILE_CANNOT_OPEN: break; /* said above */
    }
    return s;
}
