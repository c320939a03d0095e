/* checks.c — checks mode, guarded buffer memory, and the full-check access hooks.
 *
 * Full checks run a kernel variant compiled with clang's -fsanitize=thread but
 * linked without the TSan runtime: its every load and store calls a __tsan_* hook,
 * and the gdnbench binary exports those hooks (tsan_hooks.c).  They ignore
 * addresses that are neither in the current threadgroup arena nor in a bound
 * buffer's mapping (thread-private stack data, constants), check device accesses
 * against the exact buffer bounds, and keep a per-byte shadow of the arena:
 *   - written in this threadgroup?  A read of a byte nobody wrote is reported once;
 *   - last writer and reader(s) with the barrier epoch and their simdgroup's simd
 *     epoch: a write by one thread and a read or write by another in the same
 *     barrier interval is a race, unless both are lanes of one simdgroup with a simd
 *     sync in between.  A simd sync counts for the whole simdgroup even when only
 *     some lanes took part (divergent code), which can hide a race between lanes
 *     that did not meet.
 * and a per-byte shadow of each bound buffer for the whole dispatch (below).  Every
 * shadow entry keeps the code address of its access, so a report names both
 * accesses' source lines (findings.c symbolizes them when the dispatch ends). */
#include "swmetal/checks.h"

#include <dlfcn.h>
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

static int parse_mode(const char *s) {
    if (strcmp(s, "none") == 0) return SW_CHECKS_NONE;
    if (strcmp(s, "fast") == 0) return SW_CHECKS_FAST;
    if (strcmp(s, "full") == 0) return SW_CHECKS_FULL;
    if (strcmp(s, "numerics") == 0) return SW_CHECKS_NUMERICS;
    return -1;
}

const char *sw_checks_mode_name(int mode) {
    return mode == SW_CHECKS_NONE       ? "none"
           : mode == SW_CHECKS_FULL     ? "full"
           : mode == SW_CHECKS_NUMERICS ? "numerics"
                                        : "fast";
}

int swmtl_parse_checks(const char *text, swmtl_checks *out, const char *option, char *err, size_t errlen) {
    int m = text ? parse_mode(text) : -1;
    if (m < 0) {
        if (err) snprintf(err, errlen, "%s '%s' is unknown: use none, fast, numerics or full", option, text ? text : "");
        return -1;
    }
    *out = (swmtl_checks)m;
    return 0;
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static int default_mode = SW_CHECKS_FAST;

static void read_default_mode(void) {
    const char *env = getenv("GDNBENCH_SW_CHECKS");
    if (!env || !*env) return;
    int m = parse_mode(env);
    if (m < 0) fprintf(stderr, "gdnbench: GDNBENCH_SW_CHECKS='%s' is not none, fast or full; using fast\n", env);
    else default_mode = m;
}

int sw_checks_default(void) {
    pthread_once(&default_once, read_default_mode);
    return default_mode;
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
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* Large buffers get transparent huge pages where the system has them, as the CPU
     * references' tensors do (host_alloc_large), so that a kernel's first writes into a
     * fresh output take far fewer page faults there too (the mapping is not 2 MB
     * aligned: its aligned interior).  Advice only; the guard pages keep their own
     * mapping and protection. */
    if (data_pages >= ((size_t)4 << 20)) (void)madvise(map + before, data_pages, MADV_HUGEPAGE);
#endif
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
    if (g->shadow) munmap(g->shadow, g->shadow_bytes);
    memset(g, 0, sizeof *g);
}

/* ---- full-check hooks: threadgroup memory ---- */

/* Fills f's place: the threadgroup variable holding arena bytes [off, off+n). */
static void tg_place(const sw_worker *w, size_t off, size_t n, sw_raw_finding *f) {
    f->memory = SW_MEM_THREADGROUP;
    f->buffer = -1;
    f->has_range = 1;
    for (int i = w->group.nvars - 1; i >= 0; i--) {
        const sw_tg_var *v = &w->vars[i];
        if (off < v->offset || off >= v->offset + v->size) continue;
        f->variable = v->name;
        f->variable_line = v->name ? v->line : 0;
        f->buffer = v->name ? -1 : v->index;
        f->offset_lo = (int64_t)(off - v->offset);
        f->offset_hi = f->offset_lo + (int64_t)n;
        f->length = v->size;
        return;
    }
    f->offset_lo = (int64_t)off;
    f->offset_hi = (int64_t)(off + n);
    f->length = SW_TG_MEM_LIMIT;
}

/* An access of arena bytes no declared region holds (past the last one): named by
 * the region just before it. */
static void report_tg_oob(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n, int is_write, int atomic,
                          const void *pc) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_OOB;
    f.memory = SW_MEM_THREADGROUP;
    f.buffer = -1;
    f.has_range = 1;
    f.offset_lo = (int64_t)off;
    f.offset_hi = (int64_t)(off + n);
    f.length = w->group.declared_end;
    const sw_tg_var *below = NULL;
    for (int i = 0; i < w->group.nvars; i++)
        if (w->vars[i].offset <= off && (!below || w->vars[i].offset > below->offset)) below = &w->vars[i];
    if (below) {
        f.variable = below->name;
        f.variable_line = below->name ? below->line : 0;
        f.buffer = below->name ? -1 : below->index;
        f.offset_lo = (int64_t)(off - below->offset);
        f.offset_hi = f.offset_lo + (int64_t)n;
        f.length = below->size;
    }
    f.nsides = 1;
    f.side[0] = sw_access_of(t, w, pc, atomic ? SW_ACC_ATOMIC : is_write ? SW_ACC_WRITE : SW_ACC_READ, n, 0);
    sw_findings_add(w->job, w, &f);
}

static void report_uninit(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n, const void *pc) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_UNINIT_READ;
    tg_place(w, off, n, &f);
    f.nsides = 1;
    f.side[0] = sw_access_of(t, w, pc, SW_ACC_READ, n, 0);
    sw_findings_add(w->job, w, &f);
}

/* Code address <-> offset from the kernel library's base, as the arena shadow keeps it. */
static uint32_t code_at(const sw_job *job, const void *pc) {
    uintptr_t d = (uintptr_t)pc - job->code_base;
    return pc && job->code_base && d < UINT32_MAX ? (uint32_t)d : UINT32_MAX;
}

static const void *code_pc(const sw_job *job, uint32_t at) {
    return at == UINT32_MAX || !job->code_base ? NULL : (const void *)(job->code_base + at);
}

/* The earlier access (by thread prev_tid of this threadgroup at code offset
 * prev_at) and the current one race. */
/* "mem_none", "mem_device", ... for a barrier's flags. */
static const char *flags_name(unsigned flags) {
    switch (flags & 3u) {
    case 0: return "mem_flags::mem_none";
    case SW_MEM_FLAG_DEVICE: return "mem_flags::mem_device";
    case SW_MEM_FLAG_THREADGROUP: return "mem_flags::mem_threadgroup";
    default: return "mem_flags::mem_device | mem_flags::mem_threadgroup";
    }
}

/* An access of epoch prev_epoch races with one now although a barrier lies between
 * them: the first barrier after it, whose flags do not order `space`.  Writes the
 * finding's detail into buf (empty when no barrier lies between or it is forgotten). */
static void missing_flags(const sw_worker *w, uint32_t prev_epoch, unsigned need, const char *space, char *buf,
                          size_t n) {
    buf[0] = 0;
    if (prev_epoch == w->epoch || w->epoch - prev_epoch >= SW_BARRIER_RING) return;
    uint32_t e = (prev_epoch + 1) % SW_BARRIER_RING;
    snprintf(buf, n,
             "the barrier at line %d between them, threadgroup_barrier(%s), orders execution but not %s memory: "
             "it needs %s",
             w->bar_line[e], flags_name(w->bar_flags[e]), space,
             need == SW_MEM_FLAG_DEVICE ? "mem_flags::mem_device" : "mem_flags::mem_threadgroup");
}

/* Two accesses of different simdgroups with no threadgroup barrier between, where
 * a simdgroup of theirs synchronised after the earlier one (prev_simd: the simd
 * clock of its simdgroup then): that simdgroup_barrier or simd function orders only
 * its own lanes.  Writes the detail into buf (empty otherwise). */
static void simd_only(const sw_worker *w, uint16_t prev_tid, uint32_t prev_simd, uint32_t tid, char *buf, size_t n) {
    uint32_t a = prev_tid / SW_SIMD_WIDTH, b = tid / SW_SIMD_WIDTH;
    buf[0] = 0;
    if (a == b) return;
    int line = w->simd_epoch[a] != prev_simd ? w->simd_line[a] : w->simd_epoch[b] > prev_simd ? w->simd_line[b] : 0;
    if (line <= 0) return;
    snprintf(buf, n,
             "the simdgroup_barrier or simd function at line %d between them orders only its own simdgroup "
             "(simdgroups %u and %u here): it needs threadgroup_barrier(mem_flags::mem_threadgroup)",
             line, a, b);
}

static void report_race(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n, int prev_kind, uint16_t prev_tid,
                        uint32_t prev_at, uint32_t prev_epoch, uint32_t prev_simd, int kind, const void *pc) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    char detail[240];
    missing_flags(w, prev_epoch, SW_MEM_FLAG_THREADGROUP, "threadgroup", detail, sizeof detail);
    if (!detail[0] && prev_epoch == w->epoch) simd_only(w, prev_tid, prev_simd, t->index, detail, sizeof detail);
    if (detail[0]) f.detail = detail;
    f.kind = DEV_FIND_TG_RACE;
    tg_place(w, off, n, &f);
    f.nsides = 2;
    /* The other thread by its index: its record may not be current (plain-loop
     * threadgroups reuse one), and its call stack is not this one. */
    f.side[0] = sw_access_of(NULL, w, code_pc(w->job, prev_at), prev_kind, 0, 0);
    f.side[0].has_thread = 1;
    f.side[0].tid = prev_tid;
    f.side[0].tg = w->group.linear;
    f.side[1] = sw_access_of(t, w, pc, kind, n, 0);
    f.has_interval = 1;
    f.interval_pc = w->group.interval_pc;
    sw_findings_add(w->job, w, &f);
}

/* Are two accesses of this threadgroup ordered?  prev: (tid, barrier epoch, simd
 * epoch of its simdgroup then).  Only a barrier with mem_flags::mem_threadgroup
 * orders threadgroup memory between threads; a simd sync orders its own lanes. */
static int ordered(const sw_worker *w, uint16_t prev_tid, uint32_t prev_epoch, uint32_t prev_simd, uint32_t tid) {
    if (prev_epoch < w->tg_order || prev_tid == tid) return 1; /* a mem_threadgroup barrier since */
    uint32_t sg = tid / SW_SIMD_WIDTH;
    return prev_tid / SW_SIMD_WIDTH == sg && prev_simd != w->simd_epoch[sg];
}

static void arena_access(sw_worker *w, sw_gpu_thread *t, size_t off, size_t n, int is_write, int atomic,
                         const void *pc) {
    if (off + n > SW_TG_MEM_LIMIT) n = SW_TG_MEM_LIMIT - off; /* the guard page reports the rest */
    uint32_t tid = t->index, sg = tid / SW_SIMD_WIDTH, gen = w->tg_gen, epoch = w->epoch;
    uint32_t simd = w->simd_epoch[sg];
    uint32_t at = code_at(w->job, pc);
    if (off + n > w->group.declared_end) report_tg_oob(w, t, off, n, is_write, atomic, pc);
    int uninit_reported = 0, race_reported = 0;
    for (size_t i = 0; i < n; i++) {
        sw_tg_shadow *sh = &w->shadow[off + i];
        if (!is_write || atomic) {
            if (sh->written_gen != gen && sh->reported_gen != gen) {
                sh->reported_gen = gen;
                if (!uninit_reported) report_uninit(w, t, off, n, pc);
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
                report_race(w, t, off, n, SW_ACC_WRITE, sh->w_tid, sh->w_at, sh->w_epoch, sh->w_simd, SW_ACC_READ, pc);
                race_reported = 1;
            }
            if (sh->r_epoch < w->tg_order) { /* the readers before the last ordering barrier are done */
                sh->r_tid = (uint16_t)tid;
                sh->r_at = at;
                sh->r_sg = (uint16_t)sg;
                sh->r_epoch = epoch;
            } else if (sh->r_tid != tid && !(sh->r_sg & SW_SHADOW_READERS)) {
                sh->r_other = (uint16_t)tid;
                sh->r_other_at = at;
                sh->r_sg |= SW_SHADOW_READERS;
            }
            if ((sh->r_sg & SW_SHADOW_MANY) != sg) sh->r_sg |= SW_SHADOW_MANY;
            sh->r_simd = simd;
            continue;
        }
        if (!race_reported) {
            if (sh->written_gen == gen && !ordered(w, sh->w_tid, sh->w_epoch, sh->w_simd, tid)) {
                report_race(w, t, off, n, SW_ACC_WRITE, sh->w_tid, sh->w_at, sh->w_epoch, sh->w_simd, SW_ACC_WRITE, pc);
                race_reported = 1;
            } else if (sh->r_epoch >= w->tg_order) {
                int ok;
                if (!(sh->r_sg & SW_SHADOW_READERS))
                    ok = ordered(w, sh->r_tid, sh->r_epoch, sh->r_simd, tid);
                else
                    ok = (sh->r_sg & SW_SHADOW_MANY) == sg && sh->r_simd != simd;
                if (!ok) {
                    /* Name a reader other than this thread (the two kept differ). */
                    int mine = sh->r_tid == tid;
                    report_race(w, t, off, n, SW_ACC_READ, mine ? sh->r_other : sh->r_tid,
                                mine ? sh->r_other_at : sh->r_at, sh->r_epoch, sh->r_simd, SW_ACC_WRITE, pc);
                    race_reported = 1;
                }
            }
        }
        sh->written_gen = gen;
        sh->w_tid = (uint16_t)tid;
        sh->w_at = at;
        sh->w_epoch = epoch;
        sh->w_simd = simd;
    }
}

/* ---- full-check hooks: device memory ----
 *
 * Per byte of a bound buffer, for the whole dispatch:
 *   w    (64 bits) the last writer: (threadgroup+1) << 40 | thread << 30 | epoch << 14 | site
 *   r    (32 bits) a reader:        (threadgroup+1) << 11 | many << 10 | thread
 *   rsite (16 bits) where that reader read
 * and per 64-byte block a summary of the writers, wblk (32 bits): 0 none,
 * threadgroup+1, or DEV_BLK_MANY.  (threadgroup = linear index in the grid, thread
 * = index in its threadgroup, epoch = low 16 bits of its barrier epoch, site =
 * sw_site_id of the code address; many = threads of more than one threadgroup read
 * the byte.)
 *   - two writes by different threads are a write-write conflict when they are in
 *     different threadgroups, or in one threadgroup without a barrier between;
 *   - a read and a write by threads of different threadgroups are a read-write
 *     conflict (Metal orders nothing between threadgroups).
 * Atomic accesses are exempt.  Writers exchange w atomically, so of two writes of
 * one byte at the same moment on two workers one sees the other; reads mark r with
 * plain stores (reads are most accesses), so a read and a write of one byte at the
 * very same moment may miss each other — a real bug shows up on many bytes. */

#define DEV_W_TG_SHIFT 40
#define DEV_W_TG_MASK (~(uint64_t)0 << DEV_W_TG_SHIFT)
#define DEV_W_TID_SHIFT 30
#define DEV_W_EPOCH_SHIFT 14
#define DEV_R_TG_SHIFT 11
#define DEV_R_MANY (1u << 10)
#define DEV_BLK_SHIFT 6
#define DEV_BLK_MANY 0xffffffffu
#define DEV_MAX_GROUPS ((1u << 21) - 2)
#define DEV_GRANULE_SHIFT 9      /* the "touched" map: 512 data bytes per entry, cleared after each dispatch */

/* Bytes of shadow per buffer byte (w, r, rsite; wblk is 1/16). */
#define DEV_SHADOW_PER_BYTE 14

static sw_access w_cell_access(sw_job *job, uint64_t cell) {
    sw_access a;
    memset(&a, 0, sizeof a);
    a.pc = sw_site_pc(job, (uint32_t)(cell & SW_SITE_MAX));
    a.kind = SW_ACC_WRITE;
    a.has_thread = 1;
    a.tg = (cell >> DEV_W_TG_SHIFT) - 1;
    a.tid = (uint32_t)(cell >> DEV_W_TID_SHIFT) & 1023;
    return a;
}

static sw_access r_cell_access(sw_job *job, uint32_t cell, uint16_t site, int has_thread) {
    sw_access a;
    memset(&a, 0, sizeof a);
    a.pc = sw_site_pc(job, site);
    a.kind = SW_ACC_READ;
    a.has_thread = (uint8_t)has_thread;
    a.tg = (cell >> DEV_R_TG_SHIFT) - 1;
    a.tid = cell & 1023;
    return a;
}

static void report_conflict(sw_worker *w, sw_gpu_thread *t, const sw_range *r, size_t off, size_t n, int kind,
                            sw_access earlier, int later_kind, const void *pc, const char *detail) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    if (detail[0]) f.detail = detail;
    f.kind = kind;
    f.memory = SW_MEM_DEVICE;
    f.buffer = r->index;
    f.has_range = 1;
    f.offset_lo = (int64_t)off;
    f.offset_hi = (int64_t)(off + n);
    f.length = r->length;
    f.nsides = 2;
    f.side[0] = earlier;
    f.side[1] = sw_access_of(t, w, pc, later_kind, n, 0);
    sw_findings_add(w->job, w, &f);
}

/* Marks the granules of bytes [off, off+n) as used in this dispatch: what is one of
 * DEV_TOUCHED_R (r, rsite) or DEV_TOUCHED_W (w, wblk). */
#define DEV_TOUCHED_R 1
#define DEV_TOUCHED_W 2
static void touch(sw_dev_shadow *ds, size_t off, size_t n, uint8_t what) {
    for (size_t g = off >> DEV_GRANULE_SHIFT; g <= (off + n - 1) >> DEV_GRANULE_SHIFT; g++)
        if ((ds->touched[g] & what) != what) ds->touched[g] |= what;
}

static void device_read(sw_worker *w, sw_gpu_thread *t, const sw_range *r, sw_dev_shadow *ds, size_t off, size_t n,
                        const void *pc) {
    uint32_t tg1 = (uint32_t)w->group.linear + 1;
    uint32_t *rc = ds->r + off;
    /* Quick look: every byte already read by several threadgroups or by this one,
     * and its block written by none or only this one (marks only ever grow during
     * a dispatch, so a stale look cannot hide work that is due). */
    int other_writer = 0;
    for (size_t b = off >> DEV_BLK_SHIFT; b <= (off + n - 1) >> DEV_BLK_SHIFT; b++) {
        uint32_t wb = ds->wblk[b];
        other_writer |= wb != 0 && wb != tg1;
    }
    uint32_t unmarked = 0;
    for (size_t i = 0; i < n; i++) unmarked |= !(rc[i] & DEV_R_MANY) && (rc[i] >> DEV_R_TG_SHIFT) != tg1;
    if (!unmarked && !other_writer) return;
    sw_job *job = w->job;
    if (unmarked) {
        uint32_t mine = tg1 << DEV_R_TG_SHIFT | t->index;
        uint16_t site = (uint16_t)sw_site_of(job, w, pc);
        touch(ds, off, n, DEV_TOUCHED_R);
        for (size_t i = 0; i < n; i++) {
            uint32_t rv = rc[i];
            if (rv == 0) {
                rc[i] = mine;
                ds->rsite[off + i] = site;
            } else if (!(rv & DEV_R_MANY) && (rv >> DEV_R_TG_SHIFT) != tg1) {
                rc[i] = rv | DEV_R_MANY;
            }
        }
    }
    if (!other_writer) return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    const uint64_t *wc = ds->w + off;
    for (size_t i = 0; i < n; i++) {
        uint64_t wv = __atomic_load_n(&wc[i], __ATOMIC_RELAXED);
        if (wv && (wv >> DEV_W_TG_SHIFT) != tg1) {
            report_conflict(w, t, r, off, n, DEV_FIND_DEVICE_READ_WRITE, w_cell_access(job, wv), SW_ACC_READ, pc,
                            "");
            return;
        }
    }
}

static void device_write(sw_worker *w, sw_gpu_thread *t, const sw_range *r, sw_dev_shadow *ds, size_t off, size_t n,
                         const void *pc) {
    sw_job *job = w->job;
    uint32_t tg1 = (uint32_t)w->group.linear + 1;
    /* the span since the last barrier ordering device memory (mem_device) */
    uint64_t epoch = (uint64_t)(w->dev_order & 0xffff) << DEV_W_EPOCH_SHIFT;
    uint64_t mine = (uint64_t)tg1 << DEV_W_TG_SHIFT | (uint64_t)t->index << DEV_W_TID_SHIFT | epoch |
                    sw_site_of(job, w, pc);
    uint64_t *wc = ds->w + off;
    const uint32_t *rc = ds->r + off;
    touch(ds, off, n, DEV_TOUCHED_W);
    for (size_t b = off >> DEV_BLK_SHIFT; b <= (off + n - 1) >> DEV_BLK_SHIFT; b++) {
        uint32_t wb = __atomic_load_n(&ds->wblk[b], __ATOMIC_RELAXED);
        if (wb == tg1 || wb == DEV_BLK_MANY) continue;
        if (wb == 0 && __atomic_compare_exchange_n(&ds->wblk[b], &wb, tg1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            continue;
        if (wb != tg1) __atomic_store_n(&ds->wblk[b], DEV_BLK_MANY, __ATOMIC_SEQ_CST);
    }
    int ww = 0, rw = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t old = __atomic_load_n(&wc[i], __ATOMIC_RELAXED);
        if (old == mine) continue; /* this thread wrote it here before: nothing new */
        old = __atomic_exchange_n(&wc[i], mine, __ATOMIC_SEQ_CST);
        if (old && !ww) {
            int other_group = (old >> DEV_W_TG_SHIFT) != tg1;
            int other_thread = ((old >> DEV_W_TID_SHIFT) & 1023) != t->index;
            int same_interval = (old & ((uint64_t)0xffff << DEV_W_EPOCH_SHIFT)) == epoch;
            if (other_group || (other_thread && same_interval)) {
                char detail[200] = "";
                if (!other_group && w->epoch != w->dev_order)
                    missing_flags(w, w->dev_order, SW_MEM_FLAG_DEVICE, "device", detail, sizeof detail);
                report_conflict(w, t, r, off, n, DEV_FIND_DEVICE_WRITE_WRITE, w_cell_access(job, old), SW_ACC_WRITE,
                                pc, detail);
                ww = 1;
            }
        }
        uint32_t rv = __atomic_load_n(&rc[i], __ATOMIC_RELAXED);
        if (rv && !rw && ((rv >> DEV_R_TG_SHIFT) != tg1 || (rv & DEV_R_MANY))) {
            /* The named reader is of another threadgroup, unless the cell only says
             * that several read it (one of them this one). */
            int named = (rv >> DEV_R_TG_SHIFT) != tg1;
            report_conflict(w, t, r, off, n, DEV_FIND_DEVICE_READ_WRITE,
                            r_cell_access(job, rv, ds->rsite[off + i], named), SW_ACC_WRITE, pc, "");
            rw = 1;
        }
    }
}

static void device_oob(sw_worker *w, sw_gpu_thread *t, const sw_range *r, const uint8_t *p, size_t n,
                       int is_write, const void *pc) {
    sw_raw_finding f;
    memset(&f, 0, sizeof f);
    f.kind = DEV_FIND_OOB;
    f.memory = SW_MEM_DEVICE;
    f.buffer = r->index;
    f.has_range = 1;
    f.offset_lo = p >= r->data ? (int64_t)(p - r->data) : -(int64_t)(r->data - p);
    f.offset_hi = f.offset_lo + (int64_t)n;
    f.length = r->length;
    f.nsides = 1;
    f.side[0] = sw_access_of(t, w, pc, is_write ? SW_ACC_WRITE : SW_ACC_READ, n, 0);
    f.fatal = 1;
    sw_findings_add(w->job, w, &f);
    sw_exec_abandon_current();
}

void sw_checks_on_access(const void *addr, size_t n, int is_write, int atomic, const void *pc) {
    sw_worker *w = sw_exec_current_worker();
    if (!w || !w->cur || !w->shadow || n == 0) return;
    const uint8_t *p = addr;
    if ((size_t)(p - w->arena) < SW_TG_MEM_LIMIT) {
        arena_access(w, w->cur, (size_t)(p - w->arena), n, is_write, atomic, pc);
        return;
    }
    sw_job *job = w->job;
    if (p >= job->ranges_hi || p + n <= job->ranges_lo) return; /* a GPU thread's own stack, a constant */
    for (int i = 0; i < job->nranges; i++) {
        const sw_range *r = &job->ranges[i];
        if (p + n <= r->lo || p >= r->hi) continue;
        if (p < r->data || p + n > r->data + r->length) device_oob(w, w->cur, r, p, n, is_write, pc);
        if (!atomic && job->device_check && job->dev_of_range[i] >= 0) {
            sw_dev_shadow *ds = &job->dev[job->dev_of_range[i]];
            if (is_write) device_write(w, w->cur, r, ds, (size_t)(p - r->data), n, pc);
            else device_read(w, w->cur, r, ds, (size_t)(p - r->data), n, pc);
        }
        return;
    }
}

void sw_checks_tg_initialized(struct sw_worker *w, size_t off, size_t n) {
    if (!w->shadow || off >= SW_TG_MEM_LIMIT) return;
    if (n > SW_TG_MEM_LIMIT - off) n = SW_TG_MEM_LIMIT - off;
    for (size_t i = 0; i < n; i++) {
        sw_tg_shadow *sh = &w->shadow[off + i];
        sh->written_gen = w->tg_gen;
        sh->w_epoch = w->tg_order - 1u; /* before this barrier interval: ordered with every access */
        sh->w_tid = SW_SHADOW_MANY;
        sh->r_epoch = w->tg_order - 1u;
    }
}

void sw_checks_on_call(const void *call_site) {
    sw_worker *w = sw_exec_current_worker();
    if (!w || !w->cur) return;
    sw_gpu_thread *t = w->cur;
    if (t->ncalls < SW_CALL_DEPTH) t->calls[t->ncalls] = call_site;
    t->ncalls++;
}

void sw_checks_on_return(void) {
    sw_worker *w = sw_exec_current_worker();
    if (w && w->cur && w->cur->ncalls) w->cur->ncalls--;
}

/* ---- per-dispatch device shadow ----
 *
 * A buffer keeps its shadow between dispatches (sw_guarded.shadow): mapping fresh
 * zero pages for every dispatch cost more than the checks themselves.  The pages a
 * dispatch touched are cleared when it ends. */

static size_t memory_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)8 << 30;
}

static void *map_zeroed(size_t bytes) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
    flags |= MAP_NORESERVE;
#endif
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Layout of one buffer's shadow mapping: w, r, rsite, wblk (each 64-byte aligned). */
static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

static size_t shadow_layout(size_t length, size_t *r_at, size_t *rsite_at, size_t *wblk_at) {
    *r_at = align64(length * sizeof(uint64_t));
    *rsite_at = *r_at + align64(length * sizeof(uint32_t));
    *wblk_at = *rsite_at + align64(length * sizeof(uint16_t));
    /* whole granules of blocks, as the clearing after a dispatch goes by granule */
    return *wblk_at + align64(((length >> DEV_GRANULE_SHIFT) + 1) * ((size_t)1 << (DEV_GRANULE_SHIFT - DEV_BLK_SHIFT)) *
                              sizeof(uint32_t));
}

/* The shadow of range r: the buffer's own (kept), or a fresh one. */
static int shadow_for(sw_dev_shadow *ds, const sw_range *r, sw_guarded *owner) {
    size_t r_at, rsite_at, wblk_at, bytes = shadow_layout(r->length, &r_at, &rsite_at, &wblk_at);
    uint8_t *map = NULL;
    if (owner && owner->shadow && owner->shadow_bytes == bytes) {
        map = owner->shadow;
    } else {
        map = map_zeroed(bytes);
        if (!map) return -1;
        if (owner) {
            if (owner->shadow) munmap(owner->shadow, owner->shadow_bytes);
            owner->shadow = map;
            owner->shadow_bytes = bytes;
        }
    }
    ds->ngranules = (r->length >> DEV_GRANULE_SHIFT) + 1;
    ds->touched = calloc(ds->ngranules, 1);
    if (!ds->touched) {
        if (!owner) munmap(map, bytes);
        return -1;
    }
    ds->data = r->data;
    ds->length = r->length;
    ds->map = map;
    ds->map_bytes = bytes;
    ds->w = (uint64_t *)map;
    ds->r = (uint32_t *)(map + r_at);
    ds->rsite = (uint16_t *)(map + rsite_at);
    ds->wblk = (uint32_t *)(map + wblk_at);
    ds->owner = owner;
    return 0;
}

void sw_checks_dispatch_begin(sw_job *job) {
    const sw_dispatch *d = job->d;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) job->dev_of_range[i] = -1;
    job->device_check = 0;
    if (!d->instrumented) return;
    Dl_info info;
    const void *entry;
    memcpy(&entry, &d->entry, sizeof entry);
    job->code_base = dladdr(entry, &info) && info.dli_fbase ? (uintptr_t)info.dli_fbase : 0;
    size_t total = 0;
    for (int i = 0; i < job->nranges; i++) total += job->ranges[i].length;
    /* 16 bytes of shadow per buffer byte, of which only the pages of bytes the kernel
     * touches become memory; refuse when even the reservation would not fit. */
    size_t limit = memory_bytes() / 2;
    if (job->ngroups > DEV_MAX_GROUPS || total > limit / DEV_SHADOW_PER_BYTE) {
        fprintf(stderr,
                "gdnbench: software device: the device-memory conflict check is off for kernel '%s' "
                "(%llu threadgroups, %.0f MB of buffers: its shadow would not fit); the other full checks run\n",
                d->kernel, (unsigned long long)job->ngroups, (double)total / 1e6);
        return;
    }
    for (int i = 0; i < job->nranges; i++) {
        const sw_range *r = &job->ranges[i];
        const sw_exec_binding *b = &d->buf[r->index];
        if (b->is_bytes || r->length == 0) continue;
        for (int k = 0; k < job->ndev; k++)
            if (job->dev[k].data == r->data && job->dev[k].length == r->length) job->dev_of_range[i] = k;
        if (job->dev_of_range[i] >= 0) continue;
        if (shadow_for(&job->dev[job->ndev], r, b->mem) != 0) {
            fprintf(stderr, "gdnbench: software device: no memory for the device-memory shadow of kernel '%s'; "
                            "its conflict check is off\n", d->kernel);
            sw_checks_dispatch_end(job);
            return;
        }
        job->dev_of_range[i] = job->ndev++;
    }
    job->device_check = job->ndev > 0;
}

void sw_checks_dispatch_end(sw_job *job) {
    for (int k = 0; k < job->ndev; k++) {
        sw_dev_shadow *ds = &job->dev[k];
        if (ds->owner) {
            const size_t gran = (size_t)1 << DEV_GRANULE_SHIFT;
            for (size_t g = 0; g < ds->ngranules; g++) {
                if (!ds->touched[g]) continue;
                size_t lo = g * gran, len = lo + gran > ds->length ? ds->length - lo : gran;
                if (ds->touched[g] & DEV_TOUCHED_W) {
                    memset(ds->w + lo, 0, len * sizeof *ds->w);
                    memset(ds->wblk + (lo >> DEV_BLK_SHIFT), 0, (gran >> DEV_BLK_SHIFT) * sizeof *ds->wblk);
                }
                if (ds->touched[g] & DEV_TOUCHED_R) {
                    memset(ds->r + lo, 0, len * sizeof *ds->r);
                    memset(ds->rsite + lo, 0, len * sizeof *ds->rsite);
                }
            }
        } else {
            munmap(ds->map, ds->map_bytes);
        }
        free(ds->touched);
        memset(ds, 0, sizeof *ds);
    }
    job->ndev = 0;
    job->device_check = 0;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) job->dev_of_range[i] = -1;
}
