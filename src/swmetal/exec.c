/* exec.c — a dispatch on the software device: the limits Metal checks before running
 * anything, the job every worker shares (group order, findings, atomics' order), the
 * run on the worker pool (pool.c) and the result (findings as .metal lines, the
 * error).  Where the rest of the executor lives: pool.c (worker threads), group.c
 * (one threadgroup's fibers and the synchronisation services), rt.c (the other
 * sw_rt_* services, diagnostics), fault.c (hardware faults), schedule.c (orders). */
#include "swmetal/exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "swmetal/checks_internal.h"
#include "swmetal/count_internal.h"
#include "swmetal/exec_internal.h"

double sw_exec_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int set_error(sw_dispatch_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_error(sw_dispatch_result *res, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    res->failed = 1;
    res->error = strdup(msg);
    res->diags[res->ndiags++] = strdup(msg);
    res->total_diags++;
    return -1;
}

/* Limits Metal checks at dispatch time: refuse before running anything. */
static int prepare_job(const sw_dispatch *d, sw_job *job, sw_dispatch_result *res) {
    const char *k = d->kernel ? d->kernel : "?";
    if (!d->entry) return set_error(res, "kernel '%s': no entry point to run", k);
    uint64_t threads = (uint64_t)d->tg_size[0] * d->tg_size[1] * d->tg_size[2];
    if (threads == 0)
        return set_error(res, "kernel '%s': threads per threadgroup %ux%ux%u is empty; every dimension must be >= 1", k,
                         d->tg_size[0], d->tg_size[1], d->tg_size[2]);
    if (threads > SW_MAX_THREADS_PER_GROUP)
        return set_error(res,
                         "kernel '%s': %llu threads per threadgroup (%ux%ux%u) exceeds the limit of %d "
                         "(maxTotalThreadsPerThreadgroup); use a smaller threadgroup",
                         k, (unsigned long long)threads, d->tg_size[0], d->tg_size[1], d->tg_size[2],
                         SW_MAX_THREADS_PER_GROUP);
    /* A GPU skips such a dispatch without a word (its outputs keep what they held). */
    if (d->max_threads && threads > d->max_threads)
        return set_error(res,
                         "kernel '%s': %llu threads per threadgroup (%ux%ux%u) exceeds the pipeline's "
                         "maxTotalThreadsPerThreadgroup of %u ([[max_total_threads_per_threadgroup(%u)]]); use at "
                         "most %u",
                         k, (unsigned long long)threads, d->tg_size[0], d->tg_size[1], d->tg_size[2], d->max_threads,
                         d->max_threads, d->max_threads);
    size_t off = 0;
    char parts[512] = "";
    size_t plen = 0;
    for (int i = 0; i < SW_MAX_TG_PARAMS; i++) {
        if (!d->tg_len[i]) continue;
        job->tg_off[i] = off;
        off += (d->tg_len[i] + 15) / 16 * 16;
        if (plen < sizeof parts - 64)
            plen += (size_t)snprintf(parts + plen, sizeof parts - plen, "%s[[threadgroup(%d)]] %zu", plen ? ", " : "",
                                     i, d->tg_len[i]);
    }
    if (off > SW_TG_MEM_LIMIT)
        return set_error(res,
                         "kernel '%s': threadgroup memory of %zu bytes (%s) exceeds the %d-byte limit; "
                         "reduce setThreadgroupMemoryLength",
                         k, off, parts, SW_TG_MEM_LIMIT);
    job->tg_static_end = off;
    int by_threads = d->grid_threads[0] || d->grid_threads[1] || d->grid_threads[2];
    for (int i = 0; i < 3; i++) {
        uint64_t t = by_threads ? d->grid_threads[i] : (uint64_t)d->groups[i] * d->tg_size[i];
        if (t > UINT32_MAX) return set_error(res, "kernel '%s': grid dimension %d has more than 2^32-1 threads", k, i);
        if (by_threads && d->groups[i] != (d->grid_threads[i] + d->tg_size[i] - 1) / d->tg_size[i])
            return set_error(res, "kernel '%s': threadgroup count %u in dimension %d does not cover %u threads", k,
                             d->groups[i], i, d->grid_threads[i]);
        job->threads_per_grid[i] = (uint32_t)t;
    }
    job->ngroups = (uint64_t)d->groups[0] * d->groups[1] * d->groups[2];
    /* Small threadgroups of a sync-free kernel take little time each, and two
     * workers taking them one at a time from one counter spent a third of their
     * overhead passing its cache line back and forth: take a few at a time, still
     * leaving every worker dozens of claims to balance the load with. */
    int nw = sw_exec_workers();
    uint64_t claim = job->ngroups / ((uint64_t)(nw > 0 ? nw : 1) * 64);
    job->claim = claim < 1 ? 1 : claim > 16 ? 16 : claim;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        const sw_exec_binding *b = &d->buf[i];
        job->buffers[i] = b->ptr;
        if (!b->ptr || !b->map_lo) continue;
        job->ranges[job->nranges++] = (sw_range){b->map_lo, b->map_hi, b->data, b->length, i};
        if (!job->ranges_lo || b->map_lo < job->ranges_lo) job->ranges_lo = b->map_lo;
        if (!job->ranges_hi || b->map_hi > job->ranges_hi) job->ranges_hi = b->map_hi;
    }
    return 0;
}

static int make_group_order(sw_job *job, int order, uint64_t seed, sw_dispatch_result *res) {
    if (order == SW_ORDER_INORDER || job->ngroups < 2) return 0;
    if (job->ngroups > UINT32_MAX) return set_error(res, "kernel '%s': too many threadgroups to permute", job->d->kernel);
    job->order = malloc(job->ngroups * sizeof *job->order);
    if (!job->order) return set_error(res, "kernel '%s': out of memory for the threadgroup order", job->d->kernel);
    for (uint64_t i = 0; i < job->ngroups; i++)
        job->order[i] = (uint32_t)(order == SW_ORDER_REVERSE ? job->ngroups - 1 - i : i);
    if (order == SW_ORDER_RANDOM) {
        uint64_t rng = seed;
        sw_shuffle_u32(job->order, job->ngroups, &rng);
    }
    return 0;
}

static _Atomic uint64_t dispatch_seq;
static _Atomic uint64_t lanes_dispatches;

uint64_t sw_exec_lanes_dispatches(void) { return atomic_load_explicit(&lanes_dispatches, memory_order_relaxed); }

int sw_exec_dispatch(const sw_dispatch *d, sw_dispatch_result *res) {
    memset(res, 0, sizeof *res);
    res->start_s = res->end_s = sw_exec_now();
    sw_job job;
    memset(&job, 0, sizeof job);
    job.d = d;
    job.res = res;
    job.seq = atomic_fetch_add(&dispatch_seq, 1) + 1;
    int fibers_only = sw_exec_fibers_only();
    job.fiber_order = (int)d->schedule.fibers.kind;
    job.fiber_seed = d->schedule.fibers.seed;
    job.loop = d->sync_free && !fibers_only;
    job.lanes = d->lanes != NULL && !d->instrumented && !job.loop && !fibers_only && d->schedule.lanes &&
                job.fiber_order == SW_ORDER_INORDER;
    if (job.lanes) atomic_fetch_add_explicit(&lanes_dispatches, 1, memory_order_relaxed);
    if (prepare_job(d, &job, res) != 0) return -1;
    if (job.ngroups == 0) return 0;
    /* a fault in a libm function is reported at the kernel's call (fault.c) */
    if (d->numerics && sw_fault_code_range((const void *)d->entry, &job.kcode_lo, &job.kcode_hi) != 0)
        job.kcode_lo = job.kcode_hi = 0;
    if (make_group_order(&job, (int)d->schedule.groups.kind, d->schedule.groups.seed, res) != 0) return -1;
    job.findings = sw_findings_new();
    if (!job.findings || sw_atomics_job_init(&job, sw_exec_workers()) != 0) {
        free(job.order);
        sw_findings_free(job.findings);
        return set_error(res, "kernel '%s': out of memory for the %s", d->kernel,
                         job.findings ? "threadgroup order of its atomics" : "check findings");
    }
    pthread_mutex_init(&job.diag_mu, NULL);
    atomic_init(&job.next, 0);
    atomic_init(&job.abandoned, 0);

    char why[256];
    int counting = d->counts && d->count_table;
    if ((counting && sw_cnt_job_begin(&job, why, sizeof why) != 0) || sw_pool_run(&job, why, sizeof why) != 0) {
        sw_cnt_job_end(&job, 0);
        free(job.order);
        sw_atomics_job_free(&job);
        sw_findings_free(job.findings);
        pthread_mutex_destroy(&job.diag_mu);
        return set_error(res, "kernel '%s': %s", d->kernel, why);
    }
    sw_cnt_job_end(&job, !res->failed);
    free(job.order);
    sw_atomics_job_free(&job);
    /* Addresses become .metal lines here, after the workers are done. */
    sw_findings_finish(&job, res);
    sw_findings_free(job.findings);
    free(job.site_pcs);
    free(job.site_index);
    pthread_mutex_destroy(&job.diag_mu);
    if (res->failed && !res->error) {
        char msg[1200];
        snprintf(msg, sizeof msg, "kernel '%s': %llu check diagnostic%s; first: %s", d->kernel,
                 (unsigned long long)res->total_diags, res->total_diags == 1 ? "" : "s",
                 res->ndiags ? res->diags[0] : "?");
        res->error = strdup(msg);
    }
    return res->failed ? -1 : 0;
}

void sw_dispatch_result_free(sw_dispatch_result *res) {
    free(res->error);
    free(res->findings);
    for (int i = 0; i < res->ndiags; i++) free(res->diags[i]);
    memset(res, 0, sizeof *res);
}
