/* sha256.h — SHA-256 (FIPS 180-4), for the kernel source hash in the JSON report
 * (kernel.sha256) and the hashed host name (host.hostname_hash). */
#ifndef GDN_SHA256_H
#define GDN_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Digest of data[0..len) as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char hex_out[65]);
void sha256(const void *data, size_t len, uint8_t digest[32]);

#endif
