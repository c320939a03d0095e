/* rng.h — seeded, reproducible random numbers (xoshiro256** seeded by splitmix64).
 *
 * Everything random in gdnbench comes from here, so --seed reproduces a run on any
 * machine.  Each input tensor gets its own stream (rng_stream(seed, tag)) so adding
 * a tensor to an op does not change the values of the others. */
#ifndef GDN_RNG_H
#define GDN_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s[4];
    int has_spare;
    double spare;
} rng;

void rng_seed(rng *r, uint64_t seed);
/* Independent stream for (seed, tag): tag is usually the tensor's name. */
void rng_stream(rng *r, uint64_t seed, const char *tag);
uint64_t rng_u64(rng *r);
double rng_uniform(rng *r);             /* [0, 1) */
double rng_normal(rng *r);              /* N(0, 1) */

#endif
