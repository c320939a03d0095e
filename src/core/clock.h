/* clock.h — the monotonic clock every host-side timing uses (microseconds). */
#ifndef GDN_CLOCK_H
#define GDN_CLOCK_H

#include <time.h>

static inline double clock_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

#endif
