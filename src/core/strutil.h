/* strutil.h — bounded string copy (truncating, always NUL-terminated).
 *
 * snprintf("%s") into a smaller field trips gcc's -Wformat-truncation where
 * truncation is intended; this says so explicitly. */
#ifndef GDN_STRUTIL_H
#define GDN_STRUTIL_H

#include <stddef.h>
#include <string.h>

static inline void str_copy(char *dst, size_t n, const char *src) {
    if (n == 0) return;
    size_t len = src ? strlen(src) : 0;
    if (len >= n) len = n - 1;
    if (len) memcpy(dst, src, len);
    dst[len] = 0;
}

#endif
