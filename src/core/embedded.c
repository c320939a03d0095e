/* embedded.c — lookup in the table of files compiled into the binary. */
#include <string.h>

#include "core/embedded.h"

const embedded_file *embedded_find(const char *path) {
    for (const embedded_file *f = embedded_files; f->path; f++)
        if (strcmp(f->path, path) == 0) return f;
    return NULL;
}
