/* shader_source.h — finding and reading a kernel's .metal source.
 *
 * A user's --shader FILE is read from disk.  Our own shaders ("shaders/x.metal")
 * are looked up in $GDNBENCH_ROOT, then next to the binary (build/../shaders), then
 * in the copy embedded at build time, so the binary also runs from anywhere. */
#ifndef GDN_SHADER_SOURCE_H
#define GDN_SHADER_SOURCE_H

#include <limits.h>
#include <stddef.h>

typedef struct shader_source {
    char *text;                   /* NUL-terminated, owned */
    size_t len;
    char display_path[PATH_MAX];  /* what diagnostics and the report call it */
    char sha256[65];              /* hex digest of the text */
    int embedded;                 /* 1 when it came from the binary */
} shader_source;

int shader_source_load(const char *path, shader_source *out, char *err, size_t errlen);
void shader_source_free(shader_source *s);

#endif
