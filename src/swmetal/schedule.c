/* schedule.c — the orders the software device runs things in: which threadgroup
 * starts next and which fiber of a threadgroup runs next between two
 * synchronisation points ("inorder", "reverse" or "random:SEED": swmetal.h's
 * swmtl_schedule, GDNBENCH_SW_SCHEDULE by default), GDNBENCH_SW_FIBERS, and the
 * random permutations behind "random". */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec_internal.h"

_Static_assert(SW_ORDER_INORDER == (int)SWMTL_ORDER_INORDER && SW_ORDER_REVERSE == (int)SWMTL_ORDER_REVERSE &&
                   SW_ORDER_RANDOM == (int)SWMTL_ORDER_RANDOM,
               "the executor's orders are swmetal.h's");

static int parse_order(const char *spec, swmtl_order *out) {
    if (strcmp(spec, "inorder") == 0) {
        *out = (swmtl_order){SWMTL_ORDER_INORDER, 0};
        return 0;
    }
    if (strcmp(spec, "reverse") == 0) {
        *out = (swmtl_order){SWMTL_ORDER_REVERSE, 0};
        return 0;
    }
    if (strncmp(spec, "random:", 7) == 0 && spec[7]) {
        char *end = NULL;
        errno = 0;
        unsigned long long s = strtoull(spec + 7, &end, 10);
        if (errno == 0 && end && *end == '\0') {
            *out = (swmtl_order){SWMTL_ORDER_RANDOM, s};
            return 0;
        }
    }
    return -1;
}

int swmtl_parse_order(const char *text, swmtl_order *out, const char *option, char *err, size_t errlen) {
    if (text && parse_order(text, out) == 0) return 0;
    if (err) snprintf(err, errlen, "%s '%s' is unknown: use inorder, reverse or random:SEED", option, text ? text : "");
    return -1;
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static swmtl_order env_fibers;   /* GDNBENCH_SW_SCHEDULE, else inorder */
static int env_fibers_only;      /* GDNBENCH_SW_FIBERS=1 */

static void read_env(void) {
    const char *f = getenv("GDNBENCH_SW_FIBERS");
    env_fibers_only = f && strcmp(f, "1") == 0;
    const char *env = getenv("GDNBENCH_SW_SCHEDULE");
    if (env && *env && parse_order(env, &env_fibers) != 0) {
        env_fibers = (swmtl_order){SWMTL_ORDER_INORDER, 0};
        fprintf(stderr,
                "gdnbench: GDNBENCH_SW_SCHEDULE: bad schedule '%s': use inorder, reverse or random:SEED (SEED a "
                "decimal integer); using inorder\n",
                env);
    }
}

swmtl_order sw_schedule_default_fibers(void) {
    pthread_once(&env_once, read_env);
    return env_fibers;
}

/* GDNBENCH_SW_FIBERS=1 keeps sync-free kernels on fibers, to compare the two ways of
 * running them. */
int sw_exec_fibers_only(void) {
    pthread_once(&env_once, read_env);
    return env_fibers_only;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sw_shuffle_u32(uint32_t *a, uint64_t n, uint64_t *rng) {
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = splitmix64(rng) % i;
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}
