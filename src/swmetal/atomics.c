/* atomics.c — device atomics in threadgroup order, so a dispatch's bytes do not
 * depend on how many workers ran it or how they raced.
 *
 * Threadgroups run on several workers at once.  Float read-modify-write atomics on one
 * device address from different groups (attention backward's dK/dV) would otherwise
 * land in whatever order the workers reached them and round differently run to run;
 * an atomic counter whose value the kernel uses would hand out its values in another
 * order.  The device gives the result of one order instead: threadgroups in the
 * schedule's order (execution position k: the grid order, or validate's permutation),
 * each group's atomics in its own program order — what one worker produces.
 *
 *   - A float fetch-op whose value the kernel discards (the pre-pass renames such
 *     statements, msl_front.c) is recorded in the group's log and applied when the
 *     group ends, once every earlier group has ended.  The group's work overlaps with
 *     other groups'; only the application waits.
 *   - An atomic whose value the kernel reads (a fetch-op used in an expression,
 *     exchange, compare-exchange, a float load) first waits for every earlier group to
 *     end, applies the group's log, and from then on the group applies its atomics at
 *     once (it is "in turn": later groups wait for it).  A float load or store that
 *     finds the log empty does not wait.
 *   - Integer fetch-ops whose value is discarded apply at once: their final value is
 *     the same in every order.  Integer loads and stores, and every threadgroup-memory
 *     atomic (one group's, on one worker), are not ordered.
 *   - A barrier or fence with mem_device takes the turn when the group has recorded
 *     atomics, so plain loads and stores after it see them.
 * A recorded atomic is checked where the kernel makes it (the prelude loads the
 * address first: an out-of-bounds one faults there, at its line).  Full checks
 * compile no deferral (every fetch-op goes through the turn), so the checks see each
 * access as the kernel made it.
 *
 * Limits, each a kernel whose result depends on timing on a GPU too: a thread that
 * reads the word of its own recorded add through a plain (non-atomic) pointer, with
 * no mem_device fence between, reads it without the add; a group that spins on a
 * flag a later group sets waits for ever once it needs its turn (Metal does not
 * promise such a kernel progresses either); a used fetch-op on a word that other
 * groups change with discarded integer fetch-ops, or a float load or store made while
 * the group has nothing recorded, is not ordered against the other groups.
 *
 * Workers are not held back beyond their group's end: the ring `done` lets groups
 * up to SW_ATOMIC_WINDOW ahead of the earliest running one end without waiting. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec_internal.h"

typedef struct sw_atomic_op {
    float *p;
    float v;
    int op; /* SW_AOP_* */
} sw_atomic_op;

/* One group's recorded atomics.  The job owns every log (all_logs) and frees them when
 * the dispatch ends; a worker holds one while its group records. */
typedef struct sw_atomic_log {
    sw_atomic_op *ops;
    size_t n, cap;
    struct sw_atomic_log *next_free, *next_all;
} sw_atomic_log;

/* At most this many ended groups may wait with their logs for their turn; past that,
 * a worker applies its own in turn (waiting) rather than take more memory. */
#define SW_ATOMIC_MAX_PARKED 64

int sw_atomics_job_init(sw_job *job, int nworkers) {
    job->done = NULL;
    job->parked = NULL;
    if (nworkers < 2 || job->ngroups < 2 || job->d->atomic_free) return 0;
    job->done = calloc(SW_ATOMIC_WINDOW, 1);
    job->parked = calloc(SW_ATOMIC_WINDOW, sizeof *job->parked);
    if (!job->done || !job->parked) {
        free(job->done);
        free(job->parked);
        job->done = NULL;
        job->parked = NULL;
        return -1;
    }
    job->done_upto = 0;
    job->applying = 0;
    job->nparked = 0;
    job->free_logs = job->all_logs = NULL;
    job->order_waiters = 0;
    pthread_mutex_init(&job->order_mu, NULL);
    pthread_cond_init(&job->order_cv, NULL);
    return 0;
}

void sw_atomics_job_free(sw_job *job) {
    if (!job->done) return;
    for (sw_atomic_log *l = job->all_logs, *next; l; l = next) {
        next = l->next_all;
        free(l->ops);
        free(l);
    }
    free(job->done);
    free(job->parked);
    job->done = NULL;
    job->parked = NULL;
    pthread_mutex_destroy(&job->order_mu);
    pthread_cond_destroy(&job->order_cv);
}

void sw_atomics_wake(sw_job *job) {
    if (!job->done) return;
    pthread_mutex_lock(&job->order_mu);
    if (job->order_waiters) pthread_cond_broadcast(&job->order_cv);
    pthread_mutex_unlock(&job->order_mu);
}

void sw_atomics_group_begin(sw_worker *w, uint64_t k) {
    w->group_k = k;
    w->in_turn = w->job->done == NULL;
    if (w->log) w->log->n = 0;
}

/* Waits under order_mu until done_upto >= until or the dispatch is abandoned; 0 when
 * it got there. */
static int wait_locked(sw_job *job, uint64_t until) {
    while (job->done_upto < until && !atomic_load(&job->abandoned)) {
        job->order_waiters++;
        pthread_cond_wait(&job->order_cv, &job->order_mu);
        job->order_waiters--;
    }
    return job->done_upto >= until ? 0 : -1;
}

static float apply_one(float old, const sw_atomic_op *a) {
    switch (a->op) {
    case SW_AOP_ADD: return old + a->v;
    case SW_AOP_SUB: return old - a->v;
    case SW_AOP_MIN: return a->v < old ? a->v : old;
    default: return old < a->v ? a->v : old;
    }
}

/* Applies a log.  Only the group in turn applies float read-modify-writes (every
 * earlier group has ended and applied, every later one is still recording or parked),
 * so a load and a store do: a CAS would only guard against another group's plain
 * atomic store to the same word, a race whatever the order.  Attention backward
 * records tens of millions of adds; this loop is where they land. */
static void apply_log(sw_atomic_log *l) {
    for (size_t i = 0; i < l->n; i++) {
        const sw_atomic_op *a = &l->ops[i];
        float old, next;
        __atomic_load(a->p, &old, __ATOMIC_RELAXED);
        next = apply_one(old, a);
        __atomic_store(a->p, &next, __ATOMIC_RELAXED);
    }
    l->n = 0;
}

/* Under order_mu: moves done_upto over every ended group, applying parked logs on the
 * way (outside the lock; one worker at a time does this, in order). */
static void advance_locked(sw_job *job) {
    if (job->applying) return; /* the worker applying will see what ended meanwhile */
    job->applying = 1;
    while (job->done[job->done_upto % SW_ATOMIC_WINDOW] && !atomic_load(&job->abandoned)) {
        size_t slot = job->done_upto % SW_ATOMIC_WINDOW;
        sw_atomic_log *l = job->parked[slot];
        if (l) {
            pthread_mutex_unlock(&job->order_mu);
            apply_log(l);
            pthread_mutex_lock(&job->order_mu);
            job->parked[slot] = NULL;
            job->nparked--;
            l->next_free = job->free_logs;
            job->free_logs = l;
        }
        job->done[slot] = 0;
        job->done_upto++;
    }
    job->applying = 0;
    if (job->order_waiters) pthread_cond_broadcast(&job->order_cv);
}

void sw_atomics_group_end(sw_worker *w, int ran_ok) {
    sw_job *job = w->job;
    uint64_t k = w->group_k;
    w->group_k = UINT64_MAX;
    if (!job->done || k == UINT64_MAX) return;
    sw_atomic_log *l = w->log && w->log->n && ran_ok ? w->log : NULL;
    pthread_mutex_lock(&job->order_mu);
    /* Room in the ring to say this group ended; with too many logs parked already, or
     * when it is this group's turn anyway, apply its own log now. */
    int ok = wait_locked(job, k + 1 > SW_ATOMIC_WINDOW ? k + 1 - SW_ATOMIC_WINDOW : 0);
    if (ok == 0 && l && (job->done_upto == k || job->nparked >= SW_ATOMIC_MAX_PARKED)) {
        ok = wait_locked(job, k);
        if (ok == 0) {
            pthread_mutex_unlock(&job->order_mu);
            apply_log(l);
            pthread_mutex_lock(&job->order_mu);
        }
        l = NULL;
    }
    if (ok == 0) {
        if (l) {
            job->parked[k % SW_ATOMIC_WINDOW] = l;
            job->nparked++;
            w->log = NULL; /* the next group records into another */
        }
        job->done[k % SW_ATOMIC_WINDOW] = 1;
        advance_locked(job);
    }
    if (w->log) w->log->n = 0;
    pthread_mutex_unlock(&job->order_mu);
}

static int in_threadgroup_memory(const sw_worker *w, const void *p) {
    const uint8_t *a = p;
    return a >= w->arena && a < w->arena + SW_TG_MEM_LIMIT;
}

void sw_rt_atomic_turn(const void *p, int always) {
    sw_worker *w = sw_exec_current_worker();
    /* no worker: kernel code called directly (the compile tests), one thread at a time */
    if (!w || w->in_turn || in_threadgroup_memory(w, p) || (!always && (!w->log || w->log->n == 0))) return;
    sw_job *job = w->job;
    pthread_mutex_lock(&job->order_mu);
    int ok = wait_locked(job, w->group_k);
    pthread_mutex_unlock(&job->order_mu);
    /* woken because the dispatch failed elsewhere: this group stops too */
    if (ok != 0) sw_exec_abandon_current();
    if (w->log) apply_log(w->log);
    w->in_turn = 1;
}

/* A log for the worker's group: a free one of the job's, or a new one.  NULL: no memory. */
static sw_atomic_log *take_log(sw_worker *w) {
    sw_job *job = w->job;
    pthread_mutex_lock(&job->order_mu);
    sw_atomic_log *l = job->free_logs;
    if (l) {
        job->free_logs = l->next_free;
    } else if ((l = calloc(1, sizeof *l)) != NULL) {
        l->next_all = job->all_logs;
        job->all_logs = l;
    }
    pthread_mutex_unlock(&job->order_mu);
    if (l) l->n = 0;
    return l;
}

int sw_rt_atomic_defer(float *p, int op, float v) {
    sw_worker *w = sw_exec_current_worker();
    if (!w || w->in_turn || in_threadgroup_memory(w, p)) return 0;
    sw_atomic_log *l = w->log ? w->log : (w->log = take_log(w));
    if (l && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4096;
        sw_atomic_op *ops = realloc(l->ops, cap * sizeof *ops);
        if (ops) {
            l->ops = ops;
            l->cap = cap;
        }
    }
    if (!l || l->n == l->cap) {
        sw_rt_atomic_turn(p, 1); /* no memory to record it: take the turn and apply it now */
        return 0;
    }
    l->ops[l->n++] = (sw_atomic_op){p, v, op};
    return 1;
}
