/* file.h — reading a whole file into memory: the one reader behind kernel sources,
 * JSON reports, fixture metadata and the software device's compiler output.
 *
 * The text comes back NUL-terminated (so it can be used as a C string when it holds
 * no NUL) with its length.  A caller that needs its own wording for a failure
 * switches on the returned file_status; the message written to err is the common
 * one, always naming the file. */
#ifndef GDN_CORE_FILE_H
#define GDN_CORE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* For max: no limit but memory. */
#define FILE_NO_LIMIT SIZE_MAX

/* flags */
#define FILE_REGULAR_ONLY 1 /* refuse directories, pipes and devices (FILE_NOT_REGULAR) */

typedef enum file_status {
    FILE_OK = 0,
    FILE_CANNOT_OPEN,   /* open failed: sys_errno says why */
    FILE_NOT_REGULAR,   /* FILE_REGULAR_ONLY and it is not a regular file */
    FILE_TOO_LARGE,     /* longer than max bytes */
    FILE_READ_ERROR,    /* a read failed (a directory opened as a file gets this): sys_errno */
    FILE_OUT_OF_MEMORY,
} file_status;

typedef struct file_text {
    char *data;         /* len bytes and a NUL; malloc'd, the caller frees it; NULL on failure */
    size_t len;
    uint64_t size;      /* FILE_TOO_LARGE: the file's size when it is a regular file, else 0 */
    int sys_errno;      /* FILE_CANNOT_OPEN, FILE_READ_ERROR: errno of the failed call */
} file_text;

/* Reads all of path, at most max bytes.  On failure out->data is NULL and err (may be
 * NULL) holds one line naming the file:
 *   "PATH: cannot open: <strerror>"            "PATH: not a regular file"
 *   "PATH: N bytes is more than the limit of M bytes"   (a regular file)
 *   "PATH: more than the limit of M bytes"             (a stream, or a file that grew)
 *   "PATH: cannot read: read error"            "PATH: cannot read: out of memory" */
file_status file_read_all(const char *path, size_t max, int flags, file_text *out, char *err, size_t errlen);

#endif
