/* test_utf8.c — the UTF-8 check MSL sources are held to (core/utf8.c). */
#include <string.h>

#include "core/utf8.h"
#include "test.h"

#define OFFSET(lit) utf8_invalid_offset(lit, sizeof(lit) - 1)

TEST(utf8_accepts_well_formed_text) {
    CHECK_EQ_INT(OFFSET(""), -1);
    CHECK_EQ_INT(OFFSET("kernel void k() {} // plain ASCII\n"), -1);
    CHECK_EQ_INT(OFFSET("// caf\xC3\xA9, \xE2\x88\x91 x\xE1\xB5\xA2, \xF0\x9F\x9A\x80\n"), -1); /* é, ∑, ᵢ, 🚀 */
    CHECK_EQ_INT(OFFSET("\xEF\xBB\xBF// a byte-order mark"), -1);
    CHECK_EQ_INT(OFFSET("\xF4\x8F\xBF\xBF"), -1); /* U+10FFFF, the last code point */
}

TEST(utf8_names_the_first_bad_byte) {
    CHECK_EQ_INT(OFFSET("// caf\xE9 (Latin-1)\n"), 6);
    CHECK_EQ_INT(OFFSET("ab\x80"), 2);               /* a lone continuation byte */
    CHECK_EQ_INT(OFFSET("\xC3"), 0);                 /* truncated at the end */
    CHECK_EQ_INT(OFFSET("x\xE2\x88"), 1);            /* truncated three-byte form */
    CHECK_EQ_INT(OFFSET("\xC0\xAF"), 0);             /* overlong '/' */
    CHECK_EQ_INT(OFFSET("\xE0\x80\xAF"), 0);         /* overlong three-byte */
    CHECK_EQ_INT(OFFSET("\xED\xA0\x80"), 0);         /* a UTF-16 surrogate */
    CHECK_EQ_INT(OFFSET("\xF4\x90\x80\x80"), 0);     /* above U+10FFFF */
    CHECK_EQ_INT(OFFSET("\xF5\x80\x80\x80"), 0);
    CHECK_EQ_INT(OFFSET("ok\xC3\xA9\xC3("), 4);      /* continuation missing */
    CHECK_EQ_INT(OFFSET("\xFF"), 0);
    const char nul[] = {'a', 0, 'b'};                /* NUL is UTF-8; it is the C string's end elsewhere */
    CHECK_EQ_INT(utf8_invalid_offset(nul, 3), -1);
}
