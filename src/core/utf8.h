/* utf8.h — is this text UTF-8, and if not, where does it stop being so.
 *
 * Metal reads a library's source as UTF-8 (newLibraryWithSource: takes an NSString,
 * and stringWithUTF8String: answers nil for other bytes), while the software device
 * would compile any bytes: a Latin-1 comment then works on Linux and fails on a Mac.
 * So every MSL text is held to UTF-8 before either device sees it. */
#ifndef GDN_UTF8_H
#define GDN_UTF8_H

#include <stddef.h>

/* The offset of the first byte of `s` (len bytes) that does not begin or continue a
 * well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF, no truncated sequence), or -1 when all of it is UTF-8. */
long utf8_invalid_offset(const char *s, size_t len);

#endif
