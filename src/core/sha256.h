/* sha256.h — SHA-256 digests (FIPS 180-4) for cache keys and report fingerprints.
 *
 * Used by the software device's compile cache (key = hash of the generated C++,
 * the prelude and the compiler) and by the report (hash of each kernel source). */
#ifndef GDN_SHA256_H
#define GDN_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
    uint32_t state[8];
    uint64_t nbytes;
    uint8_t block[64];
    size_t nblock;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, uint8_t digest[32]);

/* One-shot digest as 64 lowercase hex characters plus NUL. */
void sha256_hex(const void *data, size_t len, char hex[65]);
/* Hex of a finished digest. */
void sha256_to_hex(const uint8_t digest[32], char hex[65]);

#endif
