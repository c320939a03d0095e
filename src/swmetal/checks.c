/* checks.c — checks mode, guarded buffer memory, and the full-check access hooks.
 *
 * Full checks run a kernel variant compiled with clang's -fsanitize=thread but
 * linked without the TSan runtime: its every load and store calls a __tsan_* hook,
 * and the gdnbench binary exports those hooks (below).  They ignore addresses that
 * are neither in the current threadgroup arena nor in a bound buffer's mapping
 * (thread-private stack data, constants), check device accesses against the exact
 * buffer bounds, and keep a per-byte shadow of the arena:
 *   - written in this threadgroup?  A read of a byte nobody wrote is reported once;
 *   - last writer and reader(s) with the barrier epoch and their simdgroup's simd
 *     epoch: a write by one thread and a read or write by another in the same
 *     barrier interval is a race, unless both are lanes of one simdgroup with a simd
 *     sync in between.  A simd sync counts for the whole simdgroup even when only
 *     some lanes took part (divergent code), which can hide a race between lanes
 *     that did not meet.
 * Source lines are not known to the hooks (they see addresses only): reports name
 * the kernel, variable, byte offset and threads. */
#include "swmetal/checks.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "swmetal/checks_internal.h"
#include "swmetal/exec_internal.h"

/* ---- mode ---- */

static struct {
    pthread_mutex_t mu;
    int mode;
    int resolved;
} checks = {PTHREAD_MUTEX_INITIALIZER, SW_CHECKS_FAST, 0};

static int parse_mode(const char *s) {
    if (strcmp(s, "none") == 0) return SW_CHECKS_NONE;
    if (strcmp(s, "fast") == 0) return SW_CHECKS_FAST;
    if (strcmp(s, "full") == 0) return SW_CHECKS_FULL;
    return -1;
}

const char *sw_checks_mode_name(int mode) {
    return mode == SW_CHECKS_NONE ? "none" : mode == SW_CHECKS_FULL ? "full" : "fast";
}

int sw_checks_set(const char *mode, char *err, size_t errlen) {
    int m = mode ? parse_mode(mode) : -1;
    if (m < 0) {
        if (err) snprintf(err, errlen, "bad checks mode '%s': use none, fast or full", mode ? mode : "(null)");
        return -1;
    }
    pthread_mutex_lock(&checks.mu);
    checks.mode = m;
    checks.resolved = 1;
    pthread_mutex_unlock(&checks.mu);
    return 0;
}

int sw_checks_mode(void) {
    pthread_mutex_lock(&checks.mu);
    if (!checks.resolved) {
        checks.resolved = 1;
        const char *env = getenv("GDNBENCH_SW_CHECKS");
        if (env && *env) {
            int m = parse_mode(env);
            if (m < 0)
                fprintf(stderr, "gdnbench: GDNBENCH_SW_CHECKS='%s' is not none, fast or full; using fast\n", env);
            else
                checks.mode = m;
        }
    }
    int m = checks.mode;
    pthread_mutex_unlock(&checks.mu);
    return m;
}

/* ---- guarded memory ---- */

int sw_guarded_alloc(sw_guarded *g, size_t length, int mode) {
    memset(g, 0, sizeof *g);
    if (length == 0) {
        errno = EINVAL;
        return -1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t padded = (length + 15) / 16 * 16;
    size_t data_pages = (padded + page - 1) / page * page;
    size_t before = mode == SW_CHECKS_FULL ? page : 0;
    size_t after = mode == SW_CHECKS_NONE ? 0 : page;
    size_t map_size = before + data_pages + after;
    if (map_size < length) {
        errno = ENOMEM;
        return -1;
    }
    uint8_t *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return -1;
    if ((before && mprotect(map, before, PROT_NONE) != 0) ||
        (after && mprotect(map + before + data_pages, after, PROT_NONE) != 0)) {
        int e = errno;
        munmap(map, map_size);
        errno = e;
        return -1;
    }
    g->map = map;
    g->map_size = map_size;
    /* none: page-aligned start; fast/full: the (16-byte padded) end meets the guard. */
    g->data = mode == SW_CHECKS_NONE ? map : map + before + data_pages - padded;
    g->length = length;
    g->mode = mode;
    return 0;
}

void sw_guarded_free(sw_guarded *g) {
    if (g->map) munmap(g->map, g->map_size);
    memset(g, 0, sizeof *g);
}

/* ---- full-check hooks ---- */

static void var_at(const sw_worker *w, size_t off, char *buf, size_t len) {
    for (int i = w->nvars - 1; i >= 0; i--) {
        const sw_tg_var *v = &w->vars[i];
        if (off < v->offset || off >= v->offset + v->size) continue;
        if (v->name)
            snprintf(buf, len, "'%s' (line %d) byte offset %zu", v->name, v->line, off - v->offset);
        else
            snprintf(buf, len, "[[threadgroup(%d)]] byte offset %zu", v->index, off - v->offset);
        return;
    }
    snprintf(buf, len, "threadgroup memory byte offset %zu (outside every declared region)", off);
}

static void report_uninit(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n) {
    char where[200], who[200];
    var_at(w, off, where, sizeof where);
    sw_describe_thread(t, who, sizeof who);
    sw_job_report(w->job, 0, "kernel '%s': read of uninitialised threadgroup memory: %s (%zu-byte read) by %s",
                  w->job->d->kernel, where, n, who);
}

static void report_race(sw_worker *w, sw_gpu_thread *t, size_t off, const char *prev_kind, uint16_t prev_tid,
                        const char *kind) {
    char where[200], who[200], other[220];
    var_at(w, off, where, sizeof where);
    sw_describe_thread(t, who, sizeof who);
    if (prev_tid == SW_SHADOW_MANY)
        snprintf(other, sizeof other, "several threads");
    else
        sw_describe_thread(&w->threads[prev_tid], other, sizeof other);
    sw_job_report(w->job, 0,
                  "kernel '%s': threadgroup memory race on %s: %s by %s and %s by %s with no barrier between "
                  "(source lines not available in full checks)",
                  w->job->d->kernel, where, prev_kind, other, kind, who);
}

/* Are two accesses of this threadgroup ordered?  prev: (tid, barrier epoch, simd
 * epoch of its simdgroup then). */
static int ordered(const sw_worker *w, uint16_t prev_tid, uint32_t prev_epoch, uint32_t prev_simd, uint32_t tid) {
    if (prev_epoch != w->epoch || prev_tid == tid) return 1;
    uint32_t sg = tid / SW_SIMD_WIDTH;
    return prev_tid / SW_SIMD_WIDTH == sg && prev_simd != w->simd_epoch[sg];
}

static void arena_access(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n, int is_write, int atomic) {
    if (off + n > SW_TG_MEM_LIMIT) n = SW_TG_MEM_LIMIT - off; /* the guard page reports the rest */
    uint32_t tid = t->index, sg = tid / SW_SIMD_WIDTH, gen = w->tg_gen, epoch = w->epoch;
    uint32_t simd = w->simd_epoch[sg];
    int uninit_reported = 0, race_reported = 0;
    for (size_t i = 0; i < n; i++) {
        sw_tg_shadow *sh = &w->shadow[off + i];
        if (!is_write || atomic) {
            if (sh->written_gen != gen && sh->reported_gen != gen) {
                sh->reported_gen = gen;
                if (!uninit_reported) report_uninit(w, t, off + i, n);
                uninit_reported = 1;
            }
        }
        if (atomic) {
            /* Atomics may race by design; they only count as initialising. */
            if (is_write) sh->written_gen = gen;
            continue;
        }
        if (!is_write) {
            if (sh->written_gen == gen && !race_reported && !ordered(w, sh->w_tid, sh->w_epoch, sh->w_simd, tid)) {
                report_race(w, t, off + i, "write", sh->w_tid, "read");
                race_reported = 1;
            }
            if (sh->r_epoch != epoch) {
                sh->r_tid = (uint16_t)tid;
                sh->r_sg = (uint16_t)sg;
                sh->r_epoch = epoch;
            } else if (sh->r_tid != tid) {
                sh->r_tid = SW_SHADOW_MANY;
                if (sh->r_sg != sg) sh->r_sg = SW_SHADOW_MANY;
            }
            sh->r_simd = simd;
            continue;
        }
        if (!race_reported) {
            if (sh->written_gen == gen && !ordered(w, sh->w_tid, sh->w_epoch, sh->w_simd, tid)) {
                report_race(w, t, off + i, "write", sh->w_tid, "write");
                race_reported = 1;
            } else if (sh->r_epoch == epoch) {
                int ok;
                if (sh->r_tid != SW_SHADOW_MANY)
                    ok = ordered(w, sh->r_tid, sh->r_epoch, sh->r_simd, tid);
                else
                    ok = sh->r_sg == sg && sh->r_simd != simd;
                if (!ok) {
                    report_race(w, t, off + i, "read", sh->r_tid, "write");
                    race_reported = 1;
                }
            }
        }
        sh->written_gen = gen;
        sh->w_tid = (uint16_t)tid;
        sh->w_epoch = epoch;
        sh->w_simd = simd;
    }
}

static void device_oob(sw_worker *w, sw_gpu_thread *t, const sw_range *r, const uint8_t *p, size_t n,
                       int is_write) {
    char who[200], what[160];
    if (p < r->data)
        snprintf(what, sizeof what, "%zu bytes before the start", (size_t)(r->data - p));
    else
        snprintf(what, sizeof what, "byte offset %zu past the end",
                 p >= r->data + r->length ? (size_t)(p - (r->data + r->length)) : (size_t)0);
    sw_describe_thread(t, who, sizeof who);
    sw_job_report(w->job, 1, "kernel '%s': out-of-bounds %zu-byte %s of buffer(%d): %s (length %zu bytes); %s",
                  w->job->d->kernel, n, is_write ? "write" : "read", r->index, what, r->length, who);
    sw_exec_abandon_current();
}

void sw_checks_on_access(const void *addr, size_t n, int is_write, int atomic) {
    sw_worker *w = sw_exec_current_worker();
    if (!w || !w->cur || !w->shadow || n == 0) return;
    const uint8_t *p = addr;
    if ((size_t)(p - w->arena) < SW_TG_MEM_LIMIT) {
        arena_access(w, w->cur, (size_t)(p - w->arena), n, is_write, atomic);
        return;
    }
    const sw_job *job = w->job;
    for (int i = 0; i < job->nranges; i++) {
        const sw_range *r = &job->ranges[i];
        if (p + n <= r->lo || p >= r->hi) continue;
        if (p < r->data || p + n > r->data + r->length) device_oob(w, w->cur, r, p, n, is_write);
        return;
    }
}

void sw_checks_tg_initialized(struct sw_worker *w, size_t off, size_t n) {
    if (!w->shadow || off >= SW_TG_MEM_LIMIT) return;
    if (n > SW_TG_MEM_LIMIT - off) n = SW_TG_MEM_LIMIT - off;
    for (size_t i = 0; i < n; i++) {
        sw_tg_shadow *sh = &w->shadow[off + i];
        sh->written_gen = w->tg_gen;
        sh->w_epoch = w->epoch - 1u;   /* before this barrier interval: ordered with every access */
        sh->w_tid = SW_SHADOW_MANY;
        sh->r_epoch = w->epoch - 1u;
    }
}
