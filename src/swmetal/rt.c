/* rt.c — the software device's runtime services that are not scheduling (sw_abi.h):
 * the running thread's ids, threadgroup memory allocation, the simdgroup-matrix
 * product logs, faults raised by kernel code; and the executor's diagnostics (a
 * report about the executor itself, the access a finding names). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "swmetal/checks_internal.h"
#include "swmetal/exec_internal.h"

_Thread_local sw_worker *sw_tls_worker;
#if SW_RT_CURRENT_TLS
__thread sw_current sw_rt_current; /* sw_abi.h: kernel code reads it directly */
#endif

void sw_job_report(sw_job *job, int fatal, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sw_dispatch_result *res = job->res;
    pthread_mutex_lock(&job->diag_mu);
    res->failed = 1;
    if (res->ndiags < SW_DIAG_KEEP) res->diags[res->ndiags++] = strdup(msg);
    res->total_diags++;
    int abandon = fatal && !atomic_load(&job->abandoned);
    if (abandon) {
        free(res->error);
        res->error = strdup(msg);
        atomic_store(&job->abandoned, 1);
    }
    pthread_mutex_unlock(&job->diag_mu);
    if (abandon) sw_atomics_wake(job); /* workers waiting for their turn stop too */
}

sw_access sw_access_of(const sw_gpu_thread *t, const sw_worker *w, const void *pc, int kind, size_t size, int line) {
    sw_access a;
    memset(&a, 0, sizeof a);
    a.pc = pc;
    if (t && t->ncalls > 0 && t->ncalls <= SW_CALL_DEPTH) a.caller = t->calls[t->ncalls - 1];
    a.kind = (uint8_t)kind;
    a.size = (uint16_t)(size > 0xffff ? 0xffff : size);
    a.line = line;
    if (t && w) {
        a.has_thread = 1;
        a.tid = t->index;
        a.tg = w->group.linear;
    }
    return a;
}

void sw_job_thread_ids(const sw_job *job, uint64_t tg_linear, uint32_t tid, uint32_t grid_pos[3], uint32_t tg_pos[3]) {
    const sw_dispatch *d = job->d;
    uint64_t g0 = d->groups[0] ? d->groups[0] : 1, g1 = d->groups[1] ? d->groups[1] : 1;
    tg_pos[0] = (uint32_t)(tg_linear % g0);
    tg_pos[1] = (uint32_t)((tg_linear / g0) % g1);
    tg_pos[2] = (uint32_t)(tg_linear / (g0 * g1));
    uint32_t actual[3];
    for (int k = 0; k < 3; k++) {
        uint64_t size = d->tg_size[k] ? d->tg_size[k] : 1, first = (uint64_t)tg_pos[k] * size;
        if (first + size > job->threads_per_grid[k] && job->threads_per_grid[k] > first)
            size = job->threads_per_grid[k] - first;
        actual[k] = (uint32_t)size;
    }
    uint32_t local[3] = {tid % actual[0], (tid / actual[0]) % actual[1], tid / (actual[0] * actual[1])};
    for (int k = 0; k < 3; k++) grid_pos[k] = tg_pos[k] * d->tg_size[k] + local[k];
}

void sw_finding_at(sw_worker *w, int kind, const void *pc, int line, const char *detail, int fatal) {
    sw_range_sync_thread(w);
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    f.buffer = -1;
    f.detail = detail;
    f.nsides = 1;
    f.side[0] = sw_access_of(w->cur, w, pc, SW_ACC_NONE, 0, line);
    f.fatal = fatal;
    sw_findings_add(w->job, w, &f);
}

/* A fault found in kernel code by the executor: one site, fatal. */
static void fault_finding(sw_worker *w, int kind, const void *pc, int line, const char *detail) {
    sw_finding_at(w, kind, pc, line, detail, 1);
}

sw_worker *sw_exec_current_worker(void) { return sw_tls_worker; }

const sw_ids *sw_rt_ids(void) {
    sw_worker *w = sw_tls_worker; /* called per lane by every simd function: keep it short */
    if (__builtin_expect(w->group.ranging, 0)) sw_range_sync_thread(w);
    return &w->cur->ids;
}

void *sw_rt_mma_log(uint32_t *lane) {
    sw_worker *w = sw_tls_worker;
    /* every product calls this where kernel code does not read sw_rt_current (Mach-O,
     * the counting variant): the thread's view holds its log once the worker has them */
    *lane = w->cur->lane;
    if (__builtin_expect(w->cur->view.mma_log != NULL, 1)) return w->cur->view.mma_log;
    if (!w->mma_logs) {
        /* fresh zero pages: only the entries a kernel uses become resident */
        void *logs =
            mmap(NULL, SW_MMA_LOGS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (logs != MAP_FAILED) w->mma_logs = logs;
        if (!w->mma_logs) {
            fault_finding(w, DEV_FIND_LIMIT, SW_CALL_SITE(), 0, "out of memory for the simdgroup-matrix product logs");
            sw_exec_abandon_current();
        }
    }
    sw_set_view(w, w->cur);
    sw_set_current(w, w->cur);
    return w->cur->view.mma_log;
}

void sw_exec_abandon_current(void) {
    sw_worker *w = sw_tls_worker;
    sw_gpu_thread *t = w->cur;
    w->group.abandon = 1;
    if (w->group.looping) {
        /* Plain-loop threadgroup: unwind the worker's own stack (what was reported stays). */
        sw_set_current(w, NULL);
        siglongjmp(w->fault_jmp, 2);
    }
    sw_fiber_switch_final(&t->fiber, &w->sched);
}

void sw_rt_fault(const char *msg, int line) {
    sw_worker *w = sw_tls_worker;
    fault_finding(w, DEV_FIND_FAULT, SW_CALL_SITE(), line, msg);
    sw_exec_abandon_current();
}

void *sw_rt_tg_alloc(size_t size, size_t align, const char *var, int line) {
    return sw_rt_tg_alloc_init(size, align, var, line, NULL);
}

void *sw_rt_tg_arg(void *p) { return p; }

void *sw_rt_tg_alloc_init(size_t size, size_t align, const char *var, int line, const void *init) {
    sw_worker *w = sw_tls_worker;
    sw_range_sync_thread(w);
    sw_gpu_thread *t = w->cur;
    if (!w->group.arena_poisoned) sw_poison_arena(w);
    if (align == 0) align = 1;
    size_t off = (t->tg_bump + align - 1) / align * align;
    if (off > SW_TG_MEM_LIMIT || size > SW_TG_MEM_LIMIT - off) {
        char what[200];
        snprintf(what, sizeof what,
                 "threadgroup memory exceeds the %d-byte limit: '%s' (line %d) needs %zu bytes at offset %zu "
                 "([[threadgroup(n)]] arguments take %zu bytes)",
                 SW_TG_MEM_LIMIT, var ? var : "?", line, size, off, w->job->tg_static_end);
        fault_finding(w, DEV_FIND_LIMIT, SW_CALL_SITE(), line, what);
        sw_exec_abandon_current();
    }
    t->tg_bump = off + size;
    if (t->tg_bump > w->group.declared_end) w->group.declared_end = t->tg_bump;
    /* Every thread allocates the same regions in the same order; the first to reach
     * allocation k names it for diagnostics. */
    if (t->tg_allocs == w->group.nallocs_named && w->group.nvars < SW_MAX_TG_VARS) {
        w->vars[w->group.nvars++] = (sw_tg_var){off, size, var, -1, line};
        w->group.nallocs_named++;
    }
    if (t->tg_allocs == w->group.nallocs_reached) {
        /* the first thread to reach this region: its initializer, once per threadgroup */
        w->group.nallocs_reached++;
        if (init) {
            memcpy(w->arena + off, init, size);
            if (w->shadow) sw_checks_tg_initialized(w, off, size);
        }
    }
    t->tg_allocs++;
    return w->arena + off;
}
