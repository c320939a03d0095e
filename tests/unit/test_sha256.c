/* test_sha256.c — SHA-256 against the FIPS 180-4 example digests. */
#include <string.h>

#include "core/sha256.h"
#include "test.h"

TEST(sha256_known_digests) {
    char hex[65];
    sha256_hex("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
}

TEST(sha256_streaming_matches_one_shot) {
    char buf[1000];
    for (int i = 0; i < 1000; i++) buf[i] = (char)(i * 7 + 3);
    char one[65], two[65];
    sha256_hex(buf, sizeof buf, one);
    sha256_ctx c;
    uint8_t d[32];
    sha256_init(&c);
    for (int i = 0; i < 1000; i += 37) sha256_update(&c, buf + i, (size_t)(i + 37 > 1000 ? 1000 - i : 37));
    sha256_final(&c, d);
    sha256_to_hex(d, two);
    CHECK(strcmp(one, two) == 0);
}
