/* schedule.c — the orders the software device runs things in: which threadgroup
 * starts next and which fiber of a threadgroup runs next between two
 * synchronisation points ("inorder", "reverse" or "random:SEED"; exec.h's setters,
 * GDNBENCH_SW_SCHEDULE), and the random permutations behind "random". */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec_internal.h"

static struct {
    pthread_mutex_t mu;
    int fiber_order;
    uint64_t fiber_seed;
    int group_order;
    uint64_t group_seed;
    int env_read;
    int fibers_only;             /* GDNBENCH_SW_FIBERS=1: sync-free kernels run as fibers too */
    int lanes_off;               /* sw_exec_set_lanes(0): lanes kernels run as fibers */
} settings = {PTHREAD_MUTEX_INITIALIZER, SW_ORDER_INORDER, 0, SW_ORDER_INORDER, 0, 0, 0, 0};

void sw_exec_set_lanes(int on) {
    pthread_mutex_lock(&settings.mu);
    settings.lanes_off = !on;
    pthread_mutex_unlock(&settings.mu);
}

static int parse_order(const char *spec, int *order, uint64_t *seed, char *err, size_t errlen) {
    if (strcmp(spec, "inorder") == 0) {
        *order = SW_ORDER_INORDER;
        *seed = 0;
        return 0;
    }
    if (strcmp(spec, "reverse") == 0) {
        *order = SW_ORDER_REVERSE;
        *seed = 0;
        return 0;
    }
    if (strncmp(spec, "random:", 7) == 0 && spec[7]) {
        char *end = NULL;
        errno = 0;
        unsigned long long s = strtoull(spec + 7, &end, 10);
        if (errno == 0 && end && *end == '\0') {
            *order = SW_ORDER_RANDOM;
            *seed = s;
            return 0;
        }
    }
    if (err) snprintf(err, errlen, "bad schedule '%s': use inorder, reverse or random:SEED (SEED a decimal integer)", spec);
    return -1;
}

int sw_exec_set_schedule(const char *spec, char *err, size_t errlen) {
    int order;
    uint64_t seed;
    if (parse_order(spec, &order, &seed, err, errlen) != 0) return -1;
    pthread_mutex_lock(&settings.mu);
    settings.fiber_order = order;
    settings.fiber_seed = seed;
    settings.env_read = 1;
    pthread_mutex_unlock(&settings.mu);
    return 0;
}

int sw_exec_set_threadgroup_order(const char *spec, char *err, size_t errlen) {
    int order;
    uint64_t seed;
    if (parse_order(spec, &order, &seed, err, errlen) != 0) return -1;
    pthread_mutex_lock(&settings.mu);
    settings.group_order = order;
    settings.group_seed = seed;
    pthread_mutex_unlock(&settings.mu);
    return 0;
}

/* GDNBENCH_SW_SCHEDULE applies until a setter is called.  GDNBENCH_SW_FIBERS=1 (read
 * once) keeps sync-free kernels on fibers, to compare the two ways of running them. */
void sw_schedule_current(sw_schedule *s) {
    pthread_mutex_lock(&settings.mu);
    s->lanes_off = settings.lanes_off;
    if (!settings.fibers_only) {
        const char *f = getenv("GDNBENCH_SW_FIBERS");
        settings.fibers_only = f && strcmp(f, "1") == 0 ? 1 : -1;
    }
    s->fibers_only = settings.fibers_only == 1;
    if (!settings.env_read) {
        settings.env_read = 1;
        const char *env = getenv("GDNBENCH_SW_SCHEDULE");
        char err[160];
        if (env && *env && parse_order(env, &settings.fiber_order, &settings.fiber_seed, err, sizeof err) != 0)
            fprintf(stderr, "gdnbench: GDNBENCH_SW_SCHEDULE: %s; using inorder\n", err);
    }
    s->fiber_order = settings.fiber_order;
    s->fiber_seed = settings.fiber_seed;
    s->group_order = settings.group_order;
    s->group_seed = settings.group_seed;
    pthread_mutex_unlock(&settings.mu);
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
