/* rng.c — xoshiro256** with splitmix64 seeding; Box-Muller normals. */
#include <math.h>

#include "core/rng.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->has_spare = 0;
}

void rng_stream(rng *r, uint64_t seed, const char *tag) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the tag */
    for (const char *p = tag; p && *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    rng_seed(r, seed ^ h);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_uniform(rng *r) { return (double)(rng_u64(r) >> 11) * 0x1.0p-53; }

double rng_normal(rng *r) {
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    double u1, u2;
    do u1 = rng_uniform(r);
    while (u1 <= 0.0);
    u2 = rng_uniform(r);
    double m = sqrt(-2.0 * log(u1));
    r->spare = m * sin(2.0 * M_PI * u2);
    r->has_spare = 1;
    return m * cos(2.0 * M_PI * u2);
}
