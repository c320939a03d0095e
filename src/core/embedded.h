/* embedded.h — files compiled into the binary (MSL prelude, our shaders).
 *
 * scripts/embed.sh generates the table at build time.  Paths are relative to the
 * repository root ("shaders/kkt.metal").  Data is NUL-terminated; len excludes it. */
#ifndef GDN_EMBEDDED_H
#define GDN_EMBEDDED_H

#include <stddef.h>

typedef struct embedded_file {
    const char *path;
    const char *data;
    size_t len;
} embedded_file;

extern const embedded_file embedded_files[];

/* Returns the embedded file with this repository-relative path, or NULL. */
const embedded_file *embedded_find(const char *path);

#endif
