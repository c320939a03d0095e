/* group.c — one threadgroup on one worker: its fibers' scheduler, the synchronisation
 * services kernels call (sw_rt_threadgroup_barrier, sw_rt_simd_sync and the simd
 * exchange of sw_abi.h), and the other ways a threadgroup runs (a plain loop for a
 * sync-free kernel, a simdgroup's lanes as 32-wide data).
 *
 *
 * Scheduling of one threadgroup: runnable fibers wait in a ring; a fiber that
 * suspends (threadgroup barrier, simd sync) or returns switches straight to the
 * ring's head.  A simd sync resolves the moment the last live lane of its simdgroup
 * arrives at the same site: the lanes become runnable together and receive their
 * mask.  Only when the ring is empty does control return to the scheduler, which
 * settles what remains: for each simdgroup with lanes waiting at a simd sync (lanes
 * split over several sites, or some at a barrier), the lanes waiting at the same
 * site as the lowest waiting lane resume together; when nothing waits at a simd
 * sync, every live thread waits at a barrier: at the same line they are released, at
 * different lines it is a divergent barrier (an error).  Threads that returned are
 * not waited for.  The order fibers enter the ring follows the schedule setting, so
 * a kernel whose result depends on it shows its race. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/checks_internal.h"
#include "swmetal/exec_internal.h"

static uint8_t *simd_slot(sw_worker *w, uint32_t sg, uint32_t bank, uint32_t lane) {
    return w->simd_slots + (((size_t)sg * SW_SIMD_BANKS + bank) * SW_SIMD_BANK_SLOTS + lane) * SW_SIMD_SLOT_BYTES;
}

void *sw_rt_simd_slot_out(void) {
    sw_worker *w = sw_tls_worker;
    sw_gpu_thread *t = w->cur;
    t->out_bank = w->wbank[t->sg];
    return simd_slot(w, t->sg, t->out_bank, t->lane);
}

void *sw_rt_simd_slots(void) {
    sw_worker *w = sw_tls_worker;
    sw_gpu_thread *t = w->cur;
    return simd_slot(w, t->sg, t->read_bank, 0);
}

static void order_run_list(sw_worker *w, uint32_t *list, uint32_t n);

static void run_push(sw_worker *w, uint32_t i) { w->run[w->group.run_tail++ & (SW_MAX_THREADS_PER_GROUP - 1)] = i; }

/* Marks the lanes of `mask` in simdgroup sg runnable with their mask, and publishes
 * the exchange bank their sync reads: a lane that wrote its slot into the other bank
 * (it arrived before an earlier sync of some lanes of its simdgroup resolved) has the
 * slot copied over.  Safe: resolution happens only when every lane that could still
 * be reading either bank has suspended again.  Does not queue the lanes. */
static void release_simd(sw_worker *w, uint32_t sg, uint32_t mask) {
    uint32_t rb = w->wbank[sg];
    sw_gpu_thread *base = &w->threads[sg * SW_SIMD_WIDTH];
    for (uint32_t m = mask; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        sw_gpu_thread *t = &base[l];
        if (t->out_bank != SW_BANK_NONE && t->out_bank != rb)
            memcpy(simd_slot(w, sg, rb, l), simd_slot(w, sg, t->out_bank, l), SW_SIMD_SLOT_BYTES);
        t->out_bank = SW_BANK_NONE;
        t->read_bank = (uint8_t)rb;
        t->state = SW_T_RUNNABLE;
        t->simd_result = mask;
    }
    memset(simd_slot(w, sg, rb, SW_SIMD_WIDTH), 0, sizeof(uintptr_t)); /* the memo tag */
    w->wbank[sg] = (uint8_t)(rb ^ 1);
    w->group.wait_simd[sg] = (uint16_t)(w->group.wait_simd[sg] - (uint32_t)__builtin_popcount(mask));
    w->simd_epoch[sg] = ++w->simd_clock;
    if (mask) w->simd_line[sg] = base[__builtin_ctz(mask)].wait_line;
}

/* The fast path: all live lanes of sg met at one sync.  Queues them in schedule order. */
static void release_simd_and_queue(sw_worker *w, uint32_t sg) {
    uint32_t mask = w->group.arr_mask[sg];
    w->group.arr_count[sg] = 0;
    w->group.arr_mask[sg] = 0;
    release_simd(w, sg, mask);
    uint32_t base = sg * SW_SIMD_WIDTH;
    if (w->job->fiber_order == SW_ORDER_INORDER) {
        for (uint32_t m = mask; m; m &= m - 1) run_push(w, base + (uint32_t)__builtin_ctz(m));
    } else {
        uint32_t list[SW_SIMD_WIDTH], n = 0;
        for (uint32_t m = mask; m; m &= m - 1) list[n++] = base + (uint32_t)__builtin_ctz(m);
        order_run_list(w, list, n);
        for (uint32_t k = 0; k < n; k++) run_push(w, list[k]);
    }
}

/* Leaves the running fiber t (already marked waiting or done) for the next runnable
 * fiber, or the scheduler when there is none.  Returns when t is resumed. */
static void run_next(sw_worker *w, sw_gpu_thread *t) {
    if (w->group.run_head != w->group.run_tail) {
        sw_gpu_thread *n = &w->threads[w->run[w->group.run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        sw_set_current(w, n);
        if (n != t) sw_fiber_switch(&t->fiber, &n->fiber);
    } else {
        sw_set_current(w, NULL);
        sw_fiber_switch(&t->fiber, &w->sched);
    }
}

/* "thread_position_in_grid (x,y,z) (threadgroup (a,b,c), thread_index_in_threadgroup i)" */
static void describe_thread(const sw_gpu_thread *t, char *buf, size_t len) {
    const sw_ids *id = &t->ids;
    snprintf(buf, len, "thread_position_in_grid (%u,%u,%u) (threadgroup (%u,%u,%u), thread_index_in_threadgroup %u)",
             id->thread_position_in_grid[0], id->thread_position_in_grid[1], id->thread_position_in_grid[2],
             id->threadgroup_position_in_grid[0], id->threadgroup_position_in_grid[1],
             id->threadgroup_position_in_grid[2], id->thread_index_in_threadgroup);
}

/* A kernel run as a plain loop reached a synchronisation: the static test
 * (msl_sync.c) let something through.  Report it rather than switch to a fiber that
 * was never prepared. */
static void loop_reached_sync(sw_worker *w, const char *what, int line) {
    sw_range_sync_thread(w);
    char who[200];
    describe_thread(w->cur, who, sizeof who);
    sw_job_report(w->job, 1,
                  "kernel '%s' line %d: %s in a kernel %s; this is a software-device bug: set "
                  "GDNBENCH_SW_FIBERS=1 to run it on fibers; %s",
                  w->job->d->kernel, line, what,
                  w->group.lanes_running ? "run as 32-lane data (lanes.c)"
                                   : "judged free of synchronisation (run as a plain loop)",
                  who);
    sw_exec_abandon_current();
}

static void barrier_orders(sw_worker *w, const void *pc, int line, unsigned flags);

void sw_rt_threadgroup_barrier(unsigned mem_flags, int line) {
    sw_worker *w = sw_tls_worker;
    if (w->group.looping) loop_reached_sync(w, "threadgroup barrier", line);
    sw_gpu_thread *t = w->cur;
    t->state = SW_T_WAIT_BARRIER;
    t->wait_line = line;
    t->wait_flags = (uint8_t)mem_flags;
    t->wait_pc = SW_CALL_SITE();
    w->group.wait_barrier++;
    run_next(w, t);
}

static inline uint32_t simd_sync(sw_worker *w, sw_gpu_thread *t, int line) {
    /* lanes fibers are simdgroups: a simd sync there is a rewrite bug, not a wait */
    if (w->group.looping || w->group.lanes_running) loop_reached_sync(w, "simd-group synchronisation", line);
    uint32_t sg = t->sg;
    t->state = SW_T_WAIT_SIMD;
    t->wait_line = line;
    w->group.wait_simd[sg]++;
    if (!w->group.slow[sg]) {
        if (w->group.arr_count[sg] == 0) w->group.arr_line[sg] = line;
        if (w->group.arr_line[sg] == line) {
            w->group.arr_mask[sg] |= 1u << t->lane;
            if (++w->group.arr_count[sg] == w->group.live[sg]) release_simd_and_queue(w, sg);
        } else {
            w->group.slow[sg] = 1;
        }
    }
    run_next(w, t);
    return t->simd_result;
}

uint32_t sw_rt_simd_sync(int line) {
    sw_worker *w = sw_tls_worker;
    return simd_sync(w, w->cur, line);
}

const void *sw_rt_simd_exchange(const void *value, size_t size, int line, uint32_t *mask, uint32_t *lane) {
    sw_worker *w = sw_tls_worker;
    sw_gpu_thread *t = w->cur;
    t->out_bank = w->wbank[t->sg];
    uint8_t *slot = simd_slot(w, t->sg, t->out_bank, t->lane);
    /* Fixed sizes copy inline: this runs once per lane per collective. */
    switch (size) {
    case 4: memcpy(slot, value, 4); break;
    case 8: memcpy(slot, value, 8); break;
    case 16: memcpy(slot, value, 16); break;
    default: memcpy(slot, value, size); break;
    }
    *mask = simd_sync(w, t, line);
    *lane = t->lane;
    return simd_slot(w, t->sg, t->read_bank, 0);
}

/* Lanes of simdgroup sg in a threadgroup of n threads. */
static inline uint32_t simd_lanes(uint32_t n, uint32_t sg) {
    uint32_t lanes = n - sg * SW_SIMD_WIDTH;
    return lanes > SW_SIMD_WIDTH ? SW_SIMD_WIDTH : lanes;
}

static void thread_main(void *arg) {
    sw_gpu_thread *t = arg;
    sw_worker *w = t->w;
    sw_fiber_entered(&t->fiber, &w->sched);
    if (w->group.lanes_running) {
        /* a simdgroup's fiber (init_lanes_fibers) */
        w->job->d->lanes->fn(&t->args, w->group.lanes_base, t->sg, simd_lanes(w->group.nlanes_threads, t->sg));
    } else {
        w->job->d->entry(&t->args);
    }
    uint32_t sg = t->sg;
    t->state = SW_T_DONE;
    w->group.live[sg]--;
    w->group.live_total--;
    /* The lanes still live may all be waiting at one sync already. */
    if (!w->group.slow[sg] && w->group.arr_count[sg] && w->group.arr_count[sg] == w->group.live[sg]) release_simd_and_queue(w, sg);
    if (w->group.run_head != w->group.run_tail) {
        sw_gpu_thread *n = &w->threads[w->run[w->group.run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        sw_set_current(w, n);
        sw_fiber_switch_final(&t->fiber, &n->fiber);
    }
    sw_set_current(w, NULL);
    sw_fiber_switch_final(&t->fiber, &w->sched);
}

int sw_group_ensure_stacks(sw_worker *w, uint32_t n) {
    while ((uint32_t)w->nstacks < n) {
        sw_stack *st = &w->stacks[w->nstacks];
        if (sw_stack_alloc(st, SW_FIBER_STACK_BYTES) != 0) return -1;
        /* Stacks are page-aligned and equally sized, so their hot tops would all fall
         * in the same cache sets; shift each top by a different number of lines. */
        st->size -= (size_t)(w->nstacks % 61) * 64;
        /* the pages a fiber's first frames use, faulted in now rather than by it */
        for (size_t off = 1; off <= 8192 && off <= st->size; off += 4096) ((volatile char *)st->base)[st->size - off] = 0;
        w->nstacks++;
    }
    return 0;
}

static void order_run_list(sw_worker *w, uint32_t *list, uint32_t n) {
    if (w->job->fiber_order == SW_ORDER_REVERSE) {
        for (uint32_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
            uint32_t t = list[i];
            list[i] = list[j];
            list[j] = t;
        }
    } else if (w->job->fiber_order == SW_ORDER_RANDOM) {
        sw_shuffle_u32(list, n, &w->group.rng);
    }
}

static void init_threads(sw_worker *w, sw_job *job, const uint32_t pos[3]) {
    const sw_dispatch *d = job->d;
    uint32_t ax = w->group.actual[0], ay = w->group.actual[1], az = w->group.actual[2];
    uint32_t n = ax * ay * az;
    for (uint32_t i = 0; i < n; i++) {
        sw_gpu_thread *t = &w->threads[i];
        sw_ids *id = &t->ids;
        uint32_t lx = i % ax, ly = (i / ax) % ay, lz = i / (ax * ay);
        id->thread_position_in_threadgroup[0] = lx;
        id->thread_position_in_threadgroup[1] = ly;
        id->thread_position_in_threadgroup[2] = lz;
        for (int k = 0; k < 3; k++) {
            id->threadgroup_position_in_grid[k] = pos[k];
            id->threads_per_threadgroup[k] = w->group.actual[k];
            id->threadgroups_per_grid[k] = d->groups[k];
            id->threads_per_grid[k] = job->threads_per_grid[k];
            id->thread_position_in_grid[k] = pos[k] * d->tg_size[k] + id->thread_position_in_threadgroup[k];
        }
        (void)az;
        (void)lz;
        id->thread_index_in_threadgroup = i;
        id->simdgroup_index_in_threadgroup = i / SW_SIMD_WIDTH;
        id->thread_index_in_simdgroup = i % SW_SIMD_WIDTH;
        id->simdgroups_per_threadgroup = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH;
        id->threads_per_simdgroup = SW_SIMD_WIDTH;
        t->args.buffers = job->buffers;
        t->args.tg_params = w->tg_params;
        t->args.ids = id;
        t->w = w;
        t->index = i;
        t->sg = (uint16_t)(i / SW_SIMD_WIDTH);
        t->lane = (uint8_t)(i % SW_SIMD_WIDTH);
        sw_set_view(w, t);
        t->out_bank = SW_BANK_NONE;
        t->read_bank = 0;
        t->state = SW_T_RUNNABLE;
        t->wait_line = 0;
        t->wait_pc = NULL;
        t->ncalls = 0;
        t->simd_result = 0;
        t->tg_bump = job->tg_static_end;
        t->tg_allocs = 0;
        sw_fiber_prepare(&t->fiber, &w->stacks[i], thread_main, t);
    }
}

static void report_divergent_barrier(sw_worker *w) {
    sw_gpu_thread *first = NULL, *other = NULL;
    uint32_t n_first = 0, n_other = 0;
    for (uint32_t i = 0; i < w->group.nthreads; i++) {
        sw_gpu_thread *t = &w->threads[i];
        if (t->state != SW_T_WAIT_BARRIER) continue;
        if (!first) first = t;
        if (t->wait_line == first->wait_line) {
            n_first++;
        } else {
            if (!other) other = t;
            if (t->wait_line == other->wait_line) n_other++;
        }
    }
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_DIVERGENT_BARRIER;
    f.buffer = -1;
    f.nsides = 2;
    f.side[0] = sw_access_of(first, w, first->wait_pc, SW_ACC_BARRIER, 0, first->wait_line);
    f.side[0].nthreads = n_first;
    f.side[1] = sw_access_of(other, w, other->wait_pc, SW_ACC_BARRIER, 0, other->wait_line);
    f.side[1].nthreads = n_other;
    f.fatal = 1;
    sw_findings_add(w->job, w, &f);
}

/* Settles the waits when no fiber can run; queues the fibers to run next.  Returns
 * their number, 0 when the threadgroup is finished, -1 on a divergent barrier. */
static int resolve(sw_worker *w) {
    uint32_t nnext = 0;
    for (uint32_t sg = 0; sg < w->group.nsimd; sg++) {
        if (!w->group.wait_simd[sg]) continue;
        uint32_t base = sg * SW_SIMD_WIDTH, end = base + SW_SIMD_WIDTH;
        if (end > w->group.nthreads) end = w->group.nthreads;
        int line = 0, found = 0;
        uint32_t mask = 0;
        for (uint32_t i = base; i < end; i++) {
            sw_gpu_thread *t = &w->threads[i];
            if (t->state != SW_T_WAIT_SIMD) continue;
            if (!found) {
                found = 1;
                line = t->wait_line;
            }
            if (t->wait_line == line) mask |= 1u << (i - base);
        }
        release_simd(w, sg, mask);
        for (uint32_t m = mask; m; m &= m - 1) w->next[nnext++] = base + (uint32_t)__builtin_ctz(m);
        /* Lanes left waiting sit at other sites: the fast path's arrival count no
         * longer describes one sync, so this simdgroup stays with the scheduler until
         * none of its lanes waits. */
        w->group.arr_count[sg] = 0;
        w->group.arr_mask[sg] = 0;
        w->group.slow[sg] = w->group.wait_simd[sg] != 0;
    }
    if (!nnext) {
        if (w->group.live_total == 0) {
            sw_findings_close_interval(w->job, w, NULL);
            return 0;
        }
        int line = 0, found = 0;
        const void *pc = NULL;
        for (uint32_t i = 0; i < w->group.nthreads; i++) {
            sw_gpu_thread *t = &w->threads[i];
            if (t->state != SW_T_WAIT_BARRIER) continue;
            if (!found) {
                found = 1;
                line = t->wait_line;
                pc = t->wait_pc;
            } else if (t->wait_line != line) {
                report_divergent_barrier(w);
                return -1;
            }
            w->next[nnext++] = i;
        }
        for (uint32_t k = 0; k < nnext; k++) w->threads[w->next[k]].state = SW_T_RUNNABLE;
        w->group.wait_barrier = 0;
        barrier_orders(w, pc, line, w->threads[w->next[0]].wait_flags);
    }
    order_run_list(w, w->next, nnext);
    for (uint32_t k = 0; k < nnext; k++) run_push(w, w->next[k]);
    return (int)nnext;
}

/* A threadgroup barrier at pc released its threads: execution is ordered across it,
 * memory only in the address spaces its mem_flags name (mem_none: neither).  A
 * threadgroup race's interval is the span between barriers that order threadgroup
 * memory. */
static void barrier_orders(sw_worker *w, const void *pc, int line, unsigned flags) {
    uint32_t e = ++w->epoch;
    w->bar_pc[e % SW_BARRIER_RING] = pc;
    w->bar_line[e % SW_BARRIER_RING] = line;
    w->bar_flags[e % SW_BARRIER_RING] = (uint8_t)flags;
    if (flags & SW_MEM_FLAG_THREADGROUP) {
        sw_findings_close_interval(w->job, w, pc);
        w->group.interval_pc = pc;
        w->tg_order = e;
    }
    if (flags & SW_MEM_FLAG_DEVICE) w->dev_order = e;
}

void sw_group_reset_stacks(sw_worker *w) {
    if (w->group.looping) return; /* no fiber stacks in use */
    for (uint32_t i = 0; i < w->group.nthreads; i++) sw_stack_reset(&w->stacks[i]);
}

/* A thread record t set up for threadgroup `pos` of n threads: the threadgroup's ids
 * and the arguments.  The worker's one record of a plain loop or lanes run (each
 * thread or simdgroup labelled in turn by label_loop_thread), or a lanes fiber's. */
static void prepare_record(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n, sw_gpu_thread *t) {
    const sw_dispatch *d = job->d;
    sw_ids *id = &t->ids;
    for (int k = 0; k < 3; k++) {
        id->threadgroup_position_in_grid[k] = pos[k];
        id->threads_per_threadgroup[k] = w->group.actual[k];
        id->threadgroups_per_grid[k] = d->groups[k];
        id->threads_per_grid[k] = job->threads_per_grid[k];
    }
    id->simdgroups_per_threadgroup = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH;
    id->threads_per_simdgroup = SW_SIMD_WIDTH;
    t->args.buffers = job->buffers;
    t->args.tg_params = w->tg_params;
    t->args.ids = id;
    t->w = w;
    t->state = SW_T_RUNNABLE;
    t->out_bank = SW_BANK_NONE;
}

static sw_gpu_thread *prepare_loop_thread(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    prepare_record(w, job, pos, n, &w->loop_thread);
    return &w->loop_thread;
}

/* After such a threadgroup: the worker back to fibers, the group's one barrier
 * interval closed.  Returns 0, or -1 when the dispatch is being abandoned. */
static int end_loop_group(sw_worker *w, sw_job *job) {
    sw_set_current(w, NULL);
    w->group.looping = 0;
    w->group.ranging = 0;
    w->group.lanes_running = 0;
    w->group.live_total = 0;
    sw_findings_close_interval(job, w, NULL);
    return atomic_load_explicit(&job->abandoned, memory_order_relaxed) ? -1 : 0;
}

/* A threadgroup of a sync-free kernel (no barrier, no simd or quad function anywhere
 * it can reach): no thread ever waits for another, so each runs to completion in
 * turn on the worker's own stack, in the order of the schedule's permutation (so
 * validate's schedule comparison still reorders them).  One thread record is
 * re-labelled for each thread instead of preparing n of them.  The checks keep
 * working: w->cur names the running thread for fault reports and the full-check
 * hooks, and the barrier epoch is the threadgroup's one interval.  A fault or an
 * abandoning report leaves through siglongjmp to worker_run_job. */
static int run_group_loop(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    sw_gpu_thread *t = prepare_loop_thread(w, job, pos, n);
    sw_ids *id = &t->ids;
    w->group.looping = 1;
    if (d->range && !d->instrumented && job->fiber_order == SW_ORDER_INORDER) {
        /* the same threads in the same order, the loop compiled with the kernel */
        uint32_t base[3] = {pos[0] * d->tg_size[0], pos[1] * d->tg_size[1], pos[2] * d->tg_size[2]};
        t->index = UINT32_MAX; /* range_sync_thread labels the record when needed */
        sw_set_view(w, t);        /* kernel code's ids: the struct the loop rewrites per thread */
        w->group.ranging = 1;
        sw_set_current(w, t);
        d->range(&t->args, id, base, n);
    } else {
        for (uint32_t k = 0; k < n; k++) {
            sw_label_loop_thread(w, t, job->fiber_order == SW_ORDER_INORDER ? k : w->next[k]);
            sw_set_current(w, t);
            d->entry(&t->args);
        }
    }
    return end_loop_group(w, job);
}

/* A threadgroup of a kernel with a lanes entry (lanes.c): each simdgroup in
 * turn, its lanes together as 32-wide data on the worker's own stack.  The
 * library has no barrier, so simdgroups never wait for each other (one with
 * barriers runs on init_lanes_fibers' fibers).  The thread record names lane 0 of
 * the running simdgroup; a fault cannot say which lane made it, so worker_run_job
 * runs the group again with fibers, which name the thread (and the line) exactly. */
static int run_group_lanes(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    sw_gpu_thread *t = prepare_loop_thread(w, job, pos, n);
    uint32_t base[3] = {pos[0] * d->tg_size[0], pos[1] * d->tg_size[1], pos[2] * d->tg_size[2]};
    w->group.looping = 1;
    w->group.lanes_running = 1;
    for (uint32_t sg = 0; sg * SW_SIMD_WIDTH < n; sg++) {
        sw_label_loop_thread(w, t, sg * SW_SIMD_WIDTH);
        sw_set_current(w, t);
        d->lanes->fn(&t->args, base, sg, simd_lanes(n, sg));
    }
    return end_loop_group(w, job);
}

/* A threadgroup of a lanes kernel with barriers: one fiber per simdgroup (records
 * 0..nsimd-1, each labelled as its lane 0), each running the lanes entry; a
 * barrier suspends the simdgroup's fiber, and the scheduler releases them all
 * when every live one waits there, as it does threads.  The worker's thread
 * counts then count simdgroups. */
static void init_lanes_fibers(sw_worker *w, sw_job *job, const uint32_t pos[3], uint32_t n) {
    const sw_dispatch *d = job->d;
    for (int k = 0; k < 3; k++) w->group.lanes_base[k] = pos[k] * d->tg_size[k];
    w->group.nlanes_threads = n;
    for (uint32_t sg = 0; sg < w->group.nsimd; sg++) {
        sw_gpu_thread *t = &w->threads[sg];
        prepare_record(w, job, pos, n, t);
        sw_label_loop_thread(w, t, sg * SW_SIMD_WIDTH);
        t->read_bank = 0;
        t->wait_line = 0;
        t->wait_pc = NULL;
        t->simd_result = 0;
        w->group.live[sg] = 1;
        sw_fiber_prepare(&t->fiber, &w->stacks[sg], thread_main, t);
    }
    w->group.nthreads = w->group.nsimd;
    w->group.live_total = w->group.nsimd;
    w->group.lanes_running = 1;
}

static int run_fibers(sw_worker *w, sw_job *job);

/* The threadgroup's size, cut at the grid's edge; returns its thread count. */
static uint32_t group_extent(const sw_job *job, uint64_t linear, uint32_t pos[3], uint32_t actual[3]) {
    const sw_dispatch *d = job->d;
    pos[0] = (uint32_t)(linear % d->groups[0]);
    pos[1] = (uint32_t)((linear / d->groups[0]) % d->groups[1]);
    pos[2] = (uint32_t)(linear / ((uint64_t)d->groups[0] * d->groups[1]));
    uint32_t n = 1;
    for (int k = 0; k < 3; k++) {
        uint32_t size = d->tg_size[k];
        uint64_t first = (uint64_t)pos[k] * size;
        if (first + size > job->threads_per_grid[k]) size = (uint32_t)(job->threads_per_grid[k] - first);
        actual[k] = size;
        n *= size;
    }
    return n;
}

/* The worker's state for threadgroup `linear` of n threads: w->group anew, the
 * clocks advanced, the arena's regions named.  Returns 0, or -1 when the dispatch
 * is to be abandoned (reported). */
static int begin_group(sw_worker *w, sw_job *job, uint64_t linear, const uint32_t pos[3], const uint32_t actual[3],
                       uint32_t n) {
    const sw_dispatch *d = job->d;
    w->group = (sw_group_state){
        .linear = linear,
        .pos = {pos[0], pos[1], pos[2]},
        .actual = {actual[0], actual[1], actual[2]},
        .nthreads = n,
        .nsimd = (n + SW_SIMD_WIDTH - 1) / SW_SIMD_WIDTH,
        .live_total = n,
        .rng = job->fiber_seed ^ (linear * 0xd1b54a32d192ed03ull),
        .declared_end = job->tg_static_end,
    };
    for (uint32_t sg = 0; sg < w->group.nsimd; sg++) {
        w->group.live[sg] = (uint16_t)simd_lanes(n, sg);
        w->simd_epoch[sg] = ++w->simd_clock;
    }
    if (w->mma_logs)
        for (uint32_t sg = 0; sg < w->group.nsimd; sg++)
            memset(w->mma_logs + (size_t)sg * SW_MMA_LOG_BYTES, 0, SW_MMA_LOG_HEADER);
    w->tg_gen++;
    w->epoch++;
    w->tg_order = w->dev_order = w->epoch;
    if (d->instrumented && !w->shadow) {
        w->shadow = calloc(SW_TG_MEM_LIMIT, sizeof *w->shadow);
        if (!w->shadow) {
            sw_job_report(job, 1, "kernel '%s': out of memory for the full-check shadow", d->kernel);
            return -1;
        }
    }
    /* Only kernels that can reach the arena pay for poisoning it: here when
     * [[threadgroup(n)]] memory is bound, else at the first sw_rt_tg_alloc. */
    if (job->tg_static_end) sw_poison_arena(w);
    for (int i = 0; i < SW_MAX_TG_PARAMS; i++) {
        w->tg_params[i] = d->tg_len[i] ? w->arena + job->tg_off[i] : NULL;
        if (d->tg_len[i] && w->group.nvars < SW_MAX_TG_VARS)
            w->vars[w->group.nvars++] = (sw_tg_var){job->tg_off[i], d->tg_len[i], NULL, i, 0};
    }
    return 0;
}

int sw_group_run(sw_worker *w, sw_job *job, uint64_t linear) {
    const sw_dispatch *d = job->d;
    uint32_t pos[3], actual[3];
    uint32_t n = group_extent(job, linear, pos, actual);
    if (n == 0) return 0;
    if (!job->loop && sw_group_ensure_stacks(w, n) != 0) {
        sw_job_report(job, 1, "kernel '%s': cannot map %u fiber stacks of %d KB: %s", d->kernel, n,
                      SW_FIBER_STACK_BYTES / 1024, strerror(errno));
        return -1;
    }
    if (begin_group(w, job, linear, pos, actual, n) != 0) return -1;
    if (job->loop) {
        if (job->fiber_order != SW_ORDER_INORDER) {
            for (uint32_t i = 0; i < n; i++) w->next[i] = i;
            order_run_list(w, w->next, n);
        }
        return run_group_loop(w, job, pos, n);
    }
    if (job->lanes && !w->lanes_off) {
        if (!d->lanes->barriers) return run_group_lanes(w, job, pos, n);
        init_lanes_fibers(w, job, pos, n);
    } else {
        init_threads(w, job, pos);
    }
    int rc = run_fibers(w, job);
    w->group.lanes_running = 0;
    return rc;
}

/* The threadgroup's fibers (w->group.nthreads of them, prepared) until all are done. */
static int run_fibers(sw_worker *w, sw_job *job) {
    uint32_t n = w->group.nthreads;
    for (uint32_t i = 0; i < n; i++) w->next[i] = i;
    order_run_list(w, w->next, n);
    w->group.run_head = w->group.run_tail = 0;
    for (uint32_t i = 0; i < n; i++) run_push(w, w->next[i]);
    for (;;) {
        /* The fibers pass control among themselves; back here when none can run. */
        sw_gpu_thread *t = &w->threads[w->run[w->group.run_head++ & (SW_MAX_THREADS_PER_GROUP - 1)]];
        sw_set_current(w, t);
        sw_fiber_switch(&w->sched, &t->fiber);
        sw_set_current(w, NULL);
        if (w->group.abandon) {
            sw_group_reset_stacks(w);
            return -1;
        }
        if (atomic_load_explicit(&job->abandoned, memory_order_relaxed)) {
            sw_group_reset_stacks(w);
            return -1;
        }
        int r = resolve(w);
        if (r == 0) return 0;
        if (r < 0) {
            sw_group_reset_stacks(w);
            return -1;
        }
    }
}
