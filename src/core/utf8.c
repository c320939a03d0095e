/* utf8.c — UTF-8 well-formedness (RFC 3629, Table 3-7 of the Unicode standard). */
#include "core/utf8.h"

/* The length of the well-formed sequence at p (1-4), or 0 when it is not one. */
static size_t sequence_length(const unsigned char *p, size_t left) {
    unsigned char b = p[0];
    if (b < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) n = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        if (b == 0xE0) lo = 0xA0;      /* overlong */
        else if (b == 0xED) hi = 0x9F; /* surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        if (b == 0xF0) lo = 0x90;      /* overlong */
        else if (b == 0xF4) hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if (left < n || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

long utf8_invalid_offset(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t n = sequence_length(p + i, len - i);
        if (n == 0) return (long)i;
        i += n;
    }
    return -1;
}
