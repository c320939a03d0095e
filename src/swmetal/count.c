/* count.c — the executor's side of the exact counters (count.h): the hooks the
 * counting variant calls, the per-simdgroup reduction at the end of each
 * threadgroup, and the host's counting session (swmetal.h's swmtl_counts).
 *
 * Per worker: each GPU thread's block executions (with the list of blocks it
 * touched, so the reduction costs what was executed, not the kernel's size) and its
 * log of device accesses in order (site, buffer, offset, width).  At the end of a
 * threadgroup each simdgroup's lanes are reduced: blocks by max and sum over lanes
 * (count.h's SIMT model), accesses grouped by (site, k-th execution) into
 * simdgroup-wide accesses.  Sums go to the job under its lock; distinct bytes are
 * per-buffer bitmaps of the dispatch (set with atomic ORs: workers share them),
 * folded into the session's per-memory union when the dispatch ends. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "swmetal/count_internal.h"

typedef struct cnt_buf {
    const uint8_t *lo, *hi;      /* the buffer's bytes */
    int index;                   /* [[buffer(index)]] */
    int memory;                  /* the session's memory */
    _Atomic uint64_t *ld, *st;   /* bit per byte, this dispatch */
    size_t words;                /* of ld and st */
    _Atomic uint64_t *ldfull, *stfull; /* bit per 128-byte line whose bits in ld (st) are
                                  * all set: a map a thousandth of the size, mostly in
                                  * cache (line_flush) */
} cnt_buf;

struct sw_cnt_job {
    swmtl_counts *sess;
    sw_cnt_table tbl;
    int nbuf;
    cnt_buf buf[SW_MAX_BUFFERS];
    const uint8_t *lo, *hi;      /* the hull of the buffers */
    uint64_t gbase, ngranules, gshift;
    uint8_t *granules;           /* sw_cnt_ctx's map, shared by the workers */
    pthread_mutex_t mu;          /* guards out */
    swmtl_dispatch_counts out;
    int failed;
};

struct sw_cnt_worker {
    uint64_t seq;                /* the job this storage is laid out for */
    uint32_t nb, cap_threads, nsites;
    size_t stride;               /* a row's words: 2 nb + 2 */
    uint32_t *rows;              /* [thread]: the row count_pass.c's blocks count into */
    uint32_t *scratch;           /* the row of a paused thread or of none: counted, never read */
    uint32_t *paused;            /* [thread]: inside a simdgroup-collective evaluation (count_pass.c) */
    sw_cnt_log *logs;            /* [thread] */
    int last_buf;                /* find_buffer's */
    sw_cnt_log nolog;            /* ctx.log when no thread's is current: no room, so the
                                  * inline code calls the runtime */
    uint64_t *mx, *sm;           /* [block] reduction scratch */
    uint32_t *ulist, nu;         /* blocks some lane of the simdgroup touched */
    uint32_t *sitek;             /* [site] executions so far by the lane being gathered */
    uint32_t *maxk, *base;       /* [site] most executions by a lane, its first group */
    uint32_t *sites, nsu;        /* the sites some lane executed */
    uint32_t *gfill;             /* [group]: the next place of a (site, k) group */
    size_t gfill_cap;
    sw_cnt_access *gather;
    size_t gather_cap;
    uint64_t *lines;             /* a simdgroup-wide access's lines (buffer << 48 | line) */
    size_t lines_cap;
    sw_cnt_ctx ctx;              /* what the kernel's inline code uses (count.h) */
    swmtl_dispatch_counts acc;   /* this threadgroup's sums */
    int oom;                     /* an access log could not grow */
};

struct swmtl_counts {
    swmtl_dispatch_counts *d;
    int nd, capd;
    struct cnt_memory {
        const void *key;
        size_t length;
        uint64_t *ld, *st;
    } *mem;
    int nmem, capmem;
    char *error;
};

/* count_pass.c writes the kernel's side of this layout */
_Static_assert(sizeof(sw_cnt_ctx) == 9 * 8 && sizeof(uint32_t *) == 8, "sw_cnt_ctx: nine 8-byte fields");
_Static_assert(sizeof(sw_cnt_access) == 24 && sizeof(sw_cnt_log) == 16, "the layouts count_pass.c writes");

/* Granules of the buffers' map (sw_cnt_ctx): pages, or coarser when the buffers lie
 * so far apart that a page map would pass this many bits. */
#define GRANULE_SHIFT_MIN 12
#define GRANULES_MAX ((uint64_t)1 << 24)

/* ---------------------------------------------------------------- hooks */

/* A row (count_pass.c's count_block): [nb counts][list length][nb + 1 block ids]. */
#define ROW_LIST(c, row) ((row) + (c)->nb)

/* Where a counting function's code finds the worker's sw_cnt_ctx, whose row
 * sw_cnt_follow keeps at the running thread's.  Outside a counting job's threads (a
 * library's static initialisers run when it is loaded, on the host's thread) the
 * library's own fallback: nothing is counted. */
void *sw_rt_cnt_slot(void *fallback) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cnt || !w->job || !w->job->cnt || w->cnt->seq != w->job->seq) return fallback;
    return &w->cnt->ctx;
}

void sw_cnt_follow(sw_worker *w) {
    sw_cnt_worker *c = w->cnt;
    sw_gpu_thread *t = w->cur;
    int own = t && w->job && w->job->cnt && c->seq == w->job->seq && t->index < c->cap_threads;
    c->ctx.row = own && !c->paused[t->index] ? c->rows + t->index * c->stride : c->scratch;
    c->ctx.log = own ? &c->logs[t->index] : &c->nolog;
}

static void log_access(sw_cnt_worker *c, size_t t, uint32_t site, int buf, uint32_t rw, uint64_t off,
                       uint64_t size) {
    sw_cnt_log *l = &c->logs[t];
    if (l->n == l->cap) {
        uint32_t nc = l->cap ? 2 * l->cap : 64;
        sw_cnt_access *a = realloc(l->a, (size_t)nc * sizeof *a);
        if (!a) {
            c->oom = 1; /* the dispatch's counts fail (sw_cnt_group_end) */
            return;
        }
        l->a = a;
        l->cap = nc;
    }
    l->a[l->n++] = (sw_cnt_access){site, 0, (uint16_t)buf, (uint16_t)rw, (uint32_t)(size > UINT32_MAX ? UINT32_MAX : size),
                                off};
}

/* The job's buffer holding a, or -1; *last is the one found before (tried first:
 * a thread's accesses mostly stay in one buffer a while). */
static int find_buffer(const sw_cnt_job *j, const uint8_t *a, int *last) {
    if (a < j->lo || a >= j->hi) return -1;
    if (*last < j->nbuf && a >= j->buf[*last].lo && a < j->buf[*last].hi) return *last;
    for (int i = 0; i < j->nbuf; i++)
        if (a >= j->buf[i].lo && a < j->buf[i].hi) return *last = i;
    return -1;
}

static void add_bytes(swmtl_mem_counts *m, uint64_t load, uint64_t store) {
    m->load_bytes += load;
    m->store_bytes += store;
}

static void account(sw_worker *w, const uint8_t *a, uint64_t size, uint32_t word) {
    sw_cnt_worker *c = w->cnt;
    sw_cnt_job *j = w->job->cnt;
    uint32_t rw = word & 3, kind = (word >> 2) & 15;
    if (a >= w->arena && a < w->arena + SW_TG_MEM_LIMIT) {
        if (rw & SW_CNT_LOAD) c->acc.tg_load_bytes += size;
        if (rw & SW_CNT_STORE) c->acc.tg_store_bytes += size;
        if (kind) {
            c->acc.atomics_threadgroup++;
            c->acc.atomics_kind[kind]++;
        }
        return;
    }
    int i = find_buffer(j, a, &c->last_buf);
    if (i < 0) return;
    add_bytes(&c->acc.buffers[i].m, rw & SW_CNT_LOAD ? size : 0, rw & SW_CNT_STORE ? size : 0);
    if (kind) {
        c->acc.atomics_device++;
        c->acc.atomics_kind[kind]++;
    }
    log_access(c, w->cur->index, word >> SW_CNT_SITE_SHIFT, i, rw, (uint64_t)(a - j->buf[i].lo), size);
}

/* An atomic, or a plain access in a granule a buffer occupies (sw_cnt_ctx): the
 * kernel's inline code (count_pass.c) has summed a plain one in threadgroup memory
 * already and dropped one outside those granules (the thread's stack through a
 * pointer, the runtime's tables). */
void sw_rt_cnt_mem(void *p, int32_t size, int32_t word) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cnt || !w->cur) return;
    account(w, (const uint8_t *)p, (uint64_t)(uint32_t)size, (uint32_t)word);
}

void sw_rt_cnt_pause(int delta) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cnt || !w->cur) return;
    w->cnt->paused[w->cur->index] += (uint32_t)delta;
    sw_cnt_follow(w);
}

void sw_rt_cnt_mma(int type) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cnt || !w->cur) return;
    uint64_t *f = type == 1 ? &w->cnt->acc.flops_half : type == 2 ? &w->cnt->acc.flops_bfloat : &w->cnt->acc.flops_float;
    *f += SW_CNT_MMA_FLOPS / SW_SIMD_WIDTH;
}

void sw_rt_cnt_range(void *p, int64_t size, int32_t word) {
    sw_worker *w = sw_tls_worker;
    if (!w || !w->cnt || !w->cur) return;
    if (size > 0) account(w, (const uint8_t *)p, (uint64_t)size, (uint32_t)word);
}

/* ------------------------------------------------------ the reduction */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_access(const void *a, const void *b) {
    const sw_cnt_access *x = a, *y = b;
    if (x->site != y->site) return x->site < y->site ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* The distinct bytes one simdgroup-wide access touches in one 128-byte line of a
 * buffer, gathered from consecutive lanes before the bitmaps are touched once for
 * the line: a line full already, as the buffer's map of full lines says, is skipped
 * without reading the bitmap (whose cache misses were most of this: chunk_o reads
 * its q and k eight times over), and one the bits fill is marked there.  Lanes that
 * read 2 bytes 8 apart had made a bitmap update each (chunk_o: 8% of a counted run). */
typedef struct line_run {
    _Atomic uint64_t *bm, *full; /* NULL: nothing gathered */
    size_t words;                /* of bm */
    uint64_t line, mask[2];      /* the line's two bitmap words' new bits */
} line_run;

static void line_flush(line_run *r) {
    if (!r->bm) return;
    uint64_t line = r->line, fbit = 1ull << (line % 64);
    _Atomic uint64_t *bm = r->bm, *full = r->full;
    r->bm = NULL;
    if (atomic_load_explicit(&full[line / 64], memory_order_relaxed) & fbit) return;
    uint64_t all = ~0ull;
    for (uint64_t k = 0; k < 2 && 2 * line + k < r->words; k++) {
        uint64_t w = 2 * line + k, mask = r->mask[k];
        uint64_t old = atomic_load_explicit(&bm[w], memory_order_relaxed);
        /* the OR's result unused: a locked OR, not a compare-exchange loop; bits
         * another worker sets meanwhile only make `all` too low (never wrong) */
        if ((old & mask) != mask) (void)atomic_fetch_or_explicit(&bm[w], mask, memory_order_relaxed);
        all &= old | mask;
    }
    if (all == ~0ull && 2 * line + 1 < r->words)
        (void)atomic_fetch_or_explicit(&full[line / 64], fbit, memory_order_relaxed);
}

/* Bits [a, b) of a 64-bit word, a < b <= 64. */
static uint64_t bits(uint64_t a, uint64_t b) { return b - a == 64 ? ~0ull : ((1ull << (b - a)) - 1) << a; }

/* Bytes [lo, hi) of a buffer's bitmap bm (its map of full lines: full) gathered, a
 * line at a time; another line or bitmap flushes what was gathered. */
static void line_add(line_run *r, _Atomic uint64_t *bm, _Atomic uint64_t *full, size_t words, uint64_t lo,
                     uint64_t hi) {
    for (uint64_t x = lo; x < hi;) {
        uint64_t line = x / 128, start = line * 128, end = hi < start + 128 ? hi : start + 128;
        if (r->bm != bm || r->line != line) {
            line_flush(r);
            *r = (line_run){bm, full, words, line, {0, 0}};
        }
        /* the line's first word holds bytes [start, start + 64), its second the rest */
        if (x < start + 64) r->mask[0] |= bits(x - start, end < start + 64 ? end - start : 64);
        if (end > start + 64) r->mask[1] |= bits(x > start + 64 ? x - start - 64 : 0, end - start - 64);
        x = end;
    }
}

/* Entries a[0..n) of one access into the distinct-byte bitmaps (within their
 * buffers), and their distinct lines counted: `sorted` when they are in ascending
 * (buffer, offset) order — the usual simdgroup access: lane i a little after lane
 * i - 1 — which counts the lines without sorting them (each entry's lines are
 * contiguous and start no earlier than the previous entry's, so a line is new exactly
 * when it lies past the last one counted); else count_lines counts them. */
static void mark_distinct(sw_cnt_worker *c, const sw_cnt_job *j, const sw_cnt_access *a, uint32_t n, int sorted) {
    line_run ld = {0}, st = {0};
    uint64_t prev = 0;
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cnt_buf *b = &j->buf[a[i].buf];
        uint64_t len = (uint64_t)(b->hi - b->lo), end = a[i].off + a[i].size > len ? len : a[i].off + a[i].size;
        if (a[i].rw & SW_CNT_LOAD) line_add(&ld, b->ld, b->ldfull, b->words, a[i].off, end);
        if (a[i].rw & SW_CNT_STORE) line_add(&st, b->st, b->stfull, b->words, a[i].off, end);
        if (!sorted) continue;
        uint64_t first = (uint64_t)a[i].buf << 48 | a[i].off / SWMTL_LINE_BYTES;
        uint64_t last = (uint64_t)a[i].buf << 48 | (a[i].off + a[i].size - 1) / SWMTL_LINE_BYTES;
        if (any && first <= prev) first = prev + 1;
        if (first > last) continue;
        c->acc.buffers[a[i].buf].m.lines += last - first + 1;
        prev = last;
        any = 1;
    }
    line_flush(&ld);
    line_flush(&st);
}

/* The distinct lines of entries in any order: listed, sorted, counted once. */
static int count_lines(sw_cnt_worker *c, const sw_cnt_access *a, uint32_t n) {
    size_t nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t first = a[i].off / SWMTL_LINE_BYTES, last = (a[i].off + a[i].size - 1) / SWMTL_LINE_BYTES;
        if (grow((void **)&c->lines, &c->lines_cap, nl + (size_t)(last - first + 1), sizeof *c->lines)) return -1;
        for (uint64_t l = first; l <= last; l++) c->lines[nl++] = (uint64_t)a[i].buf << 48 | l;
    }
    if (nl > 48) qsort(c->lines, nl, sizeof *c->lines, cmp_u64);
    else /* mostly 32 lines, nearly in order: qsort's merge sort cost more */
        for (size_t i = 1; i < nl; i++) {
            uint64_t x = c->lines[i];
            size_t k = i;
            for (; k > 0 && c->lines[k - 1] > x; k--) c->lines[k] = c->lines[k - 1];
            c->lines[k] = x;
        }
    for (size_t i = 0; i < nl; i++)
        if (i == 0 || c->lines[i] != c->lines[i - 1]) c->acc.buffers[c->lines[i] >> 48].m.lines++;
    return 0;
}

/* One simdgroup-wide access: the lanes' entries a[0..n) of one (site, k). */
static int one_access(sw_cnt_worker *c, const sw_cnt_job *j, const sw_cnt_access *a, uint32_t n) {
    uint32_t width = a[0].size;
    int sorted = 1;
    for (uint32_t i = 1; i < n; i++) {
        if (a[i].size > width) width = a[i].size;
        if (a[i].buf < a[i - 1].buf || (a[i].buf == a[i - 1].buf && a[i].off < a[i - 1].off)) sorted = 0;
    }
    swmtl_mem_counts *m0 = &c->acc.buffers[a[0].buf].m;
    m0->accesses++;
    m0->min_lines += ((uint64_t)n * width + SWMTL_LINE_BYTES - 1) / SWMTL_LINE_BYTES;
    mark_distinct(c, j, a, n, sorted);
    return sorted ? 0 : count_lines(c, a, n);
}

/* The lanes' logs [l0, l1) from entry `from` on into c->gather sorted by (site, k):
 * the general case (a site the pass did not number executes as k = 0 throughout). */
static void sort_by_site(sw_cnt_worker *c, uint32_t l0, uint32_t l1, uint32_t from, size_t total) {
    size_t k = 0;
    for (uint32_t t = l0; t < l1; t++) {
        for (uint32_t i = from; i < c->logs[t].n; i++) {
            sw_cnt_access e = c->logs[t].a[i];
            e.k = e.site < c->nsites ? c->sitek[e.site]++ : 0;
            c->gather[k++] = e;
        }
        for (uint32_t i = from; i < c->logs[t].n; i++)
            if (c->logs[t].a[i].site < c->nsites) c->sitek[c->logs[t].a[i].site] = 0;
    }
    qsort(c->gather, total, sizeof *c->gather, cmp_access);
}

/* Sites in order (a simdgroup's few: insertion sort). */
static void sort_u32(uint32_t *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = v[i], k = i;
        for (; k > 0 && v[k - 1] > x; k--) v[k] = v[k - 1];
        v[k] = x;
    }
}

/* The lanes' logs [l0, l1) from entry `from` on into c->gather, ordered by (site, k) and, within a
 * group, by lane: the order the sort by (site, k) gave (glibc's qsort is a stable
 * merge sort), placed directly (perf, attn_fwd counted: the sort was 18% of the
 * samples).  Each lane's k-th execution of a site is group base[site] + k, the
 * sites' groups laid out in site order; counted, then placed.  0; -1 out of
 * memory; 1 for a site the pass did not number (the caller sorts, as before). */
static int group_by_site(sw_cnt_worker *c, uint32_t l0, uint32_t l1, uint32_t from) {
    c->nsu = 0;
    int unnumbered = 0;
    for (uint32_t t = l0; t < l1; t++) {
        const sw_cnt_log *l = &c->logs[t];
        for (uint32_t i = from; i < l->n; i++) {
            uint32_t st = l->a[i].site;
            if (st >= c->nsites) {
                unnumbered = 1;
                continue;
            }
            if (++c->sitek[st] > c->maxk[st]) {
                if (c->maxk[st] == 0) c->sites[c->nsu++] = st;
                c->maxk[st] = c->sitek[st];
            }
        }
        for (uint32_t i = from; i < l->n; i++)
            if (l->a[i].site < c->nsites) c->sitek[l->a[i].site] = 0;
    }
    if (unnumbered) {
        for (uint32_t i = 0; i < c->nsu; i++) c->maxk[c->sites[i]] = 0;
        return 1;
    }
    sort_u32(c->sites, c->nsu);
    size_t ng = 0;
    for (uint32_t i = 0; i < c->nsu; i++) {
        c->base[c->sites[i]] = (uint32_t)ng;
        ng += c->maxk[c->sites[i]];
    }
    int rc = grow((void **)&c->gfill, &c->gfill_cap, ng + 1, sizeof *c->gfill);
    if (rc == 0) {
        memset(c->gfill, 0, (ng + 1) * sizeof *c->gfill);
        for (int pass = 0; pass < 2; pass++) { /* 0: group sizes (then their starts), 1: placing */
            for (uint32_t t = l0; t < l1; t++) {
                const sw_cnt_log *l = &c->logs[t];
                for (uint32_t i = from; i < l->n; i++) {
                    uint32_t st = l->a[i].site, k = c->sitek[st]++;
                    size_t g = c->base[st] + k;
                    if (pass == 0) {
                        c->gfill[g + 1]++;
                    } else {
                        sw_cnt_access e = l->a[i];
                        e.k = k;
                        c->gather[c->gfill[g]++] = e;
                    }
                }
                for (uint32_t i = from; i < l->n; i++) c->sitek[l->a[i].site] = 0;
            }
            if (pass == 0)
                for (size_t g = 0; g < ng; g++) c->gfill[g + 1] += c->gfill[g];
        }
    }
    for (uint32_t i = 0; i < c->nsu; i++) c->maxk[c->sites[i]] = 0;
    return rc;
}

/* Attributing the entries the kernel's inline code appended raw (count.h) as
 * account() does at an access: each to its buffer, its bytes summed; one in no buffer
 * (a granule of the map holds other bytes too) dropped, before the reduction numbers
 * a site's executions.  The buffer last found is kept in locals with the bytes summed
 * for it since (most entries are in it: a call and a sum in memory per entry were a
 * tenth of the reduction's time). */
typedef struct attr {
    int b;                       /* the buffer last found, or -1 */
    const uint8_t *lo, *hi;
    uint64_t ld, st;             /* its bytes not yet added to it */
} attr;

static void attr_begin(const sw_cnt_worker *c, const sw_cnt_job *j, attr *s) {
    *s = (attr){-1, NULL, NULL, 0, 0};
    if (c->last_buf < j->nbuf) {
        s->b = c->last_buf;
        s->lo = j->buf[s->b].lo;
        s->hi = j->buf[s->b].hi;
    }
}

static void attr_flush(sw_cnt_worker *c, attr *s) {
    if (s->b >= 0) add_bytes(&c->acc.buffers[s->b].m, s->ld, s->st);
    s->ld = s->st = 0;
}

/* Raw entry e placed in its buffer (1), or 0: in no buffer. */
static inline __attribute__((always_inline)) int attr_place(sw_cnt_worker *c, const sw_cnt_job *j, attr *s,
                                                            sw_cnt_access *e) {
    const uint8_t *a = (const uint8_t *)(uintptr_t)e->off;
    if (!(a >= s->lo && a < s->hi)) {
        int f = find_buffer(j, a, &c->last_buf);
        if (f < 0) return 0;
        attr_flush(c, s);
        s->b = f;
        s->lo = j->buf[f].lo;
        s->hi = j->buf[f].hi;
    }
    e->buf = (uint16_t)s->b;
    e->off = (uint64_t)(a - s->lo);
    return 1;
}

/* A placed entry's bytes summed (inlined, as attr_place: called per entry, a call was
 * most of what they cost). */
static inline __attribute__((always_inline)) void attr_add(sw_cnt_worker *c, attr *s, const sw_cnt_access *e) {
    uint64_t ld = e->rw & SW_CNT_LOAD ? e->size : 0, st = e->rw & SW_CNT_STORE ? e->size : 0;
    if (e->buf == s->b) {
        s->ld += ld;
        s->st += st;
    } else {
        add_bytes(&c->acc.buffers[e->buf].m, ld, st);
    }
}

/* A thread's log from entry `from` on attributed in place, the dropped ones removed
 * (one the runtime appended is attributed already). */
static void attribute_raw(sw_cnt_worker *c, const sw_cnt_job *j, sw_cnt_log *l, uint32_t from) {
    attr s;
    attr_begin(c, j, &s);
    uint32_t k = from;
    for (uint32_t i = from; i < l->n; i++) {
        sw_cnt_access e = l->a[i];
        if (e.buf == SW_CNT_RAW) {
            if (!attr_place(c, j, &s, &e)) continue;
            attr_add(c, &s, &e);
        }
        l->a[k++] = e;
    }
    attr_flush(c, &s);
    l->n = k;
}

/* The gathered entries of one shared access, c->gather[0..n), attributed: 1, or 0
 * (nothing summed) when one is in no buffer: the caller attributes the lanes' logs
 * from this access on instead. */
static int attr_gathered(sw_cnt_worker *c, const sw_cnt_job *j, attr *s, uint32_t n) {
    uint32_t raw = 0;
    for (uint32_t u = 0; u < n; u++) {
        if (c->gather[u].buf != SW_CNT_RAW) continue;
        raw |= 1u << u;
        if (!attr_place(c, j, s, &c->gather[u])) return 0;
    }
    for (uint32_t u = 0; u < n; u++)
        if (raw >> u & 1u) attr_add(c, s, &c->gather[u]);
    return 1;
}

/* The lanes [l0, l1) of a simdgroup: their accesses grouped by (site, k).  Up to
 * where the lanes' logs part (control flow was uniform so far) the i-th access of
 * every lane is one; the rest is grouped by site, each lane's executions of a site
 * numbered after the shared part (which executed it equally often in every lane). */
static int reduce_accesses(sw_cnt_worker *c, const sw_cnt_job *job, uint32_t l0, uint32_t l1) {
    size_t total = 0;
    for (uint32_t t = l0; t < l1; t++) total += c->logs[t].n;
    if (total == 0) return 0;
    uint32_t len = c->logs[l0].n, shared = 0, n = l1 - l0;
    for (uint32_t t = l0 + 1; t < l1; t++)
        if (c->logs[t].n < len) len = c->logs[t].n;
    if (grow((void **)&c->gather, &c->gather_cap, n, sizeof *c->gather)) return -1;
    int rc = 0;
    attr s;
    attr_begin(c, job, &s);
    /* the shared part: the i-th entries, gathered and attributed while they are one
     * site's (an entry dropped ends it early: grouping by site from there on groups
     * the lanes' identical entries as this would) */
    for (; shared < len; shared++) {
        uint32_t site = c->logs[l0].a[shared].site, t = l0;
        for (; t < l1 && c->logs[t].a[shared].site == site; t++) {
            /* 32 logs read in step outrun the hardware's prefetchers */
            __builtin_prefetch(c->logs[t].a + shared + 8);
            c->gather[t - l0] = c->logs[t].a[shared];
        }
        if (t < l1 || !attr_gathered(c, job, &s, n)) break;
        if ((rc = one_access(c, job, c->gather, n)) != 0) break;
    }
    attr_flush(c, &s);
    total = 0;
    for (uint32_t t = l0; t < l1; t++) {
        attribute_raw(c, job, &c->logs[t], shared);
        total += c->logs[t].n - shared;
    }
    if (rc == 0 && grow((void **)&c->gather, &c->gather_cap, total, sizeof *c->gather)) rc = -1;
    if (rc == 0 && total && (rc = group_by_site(c, l0, l1, shared)) >= 0) {
        if (rc == 1) sort_by_site(c, l0, l1, shared, total);
        rc = 0;
        for (size_t i = 0; i < total && rc == 0;) {
            size_t j = i + 1;
            while (j < total && c->gather[j].site == c->gather[i].site && c->gather[j].k == c->gather[i].k) j++;
            rc = one_access(c, job, c->gather + i, (uint32_t)(j - i));
            i = j;
        }
    }
    for (uint32_t t = l0; t < l1; t++) c->logs[t].n = 0;
    return rc;
}

/* The lanes [l0, l1): blocks by max and sum over the lanes. */
static void reduce_blocks(sw_cnt_worker *c, const sw_cnt_table *tbl, uint32_t l0, uint32_t l1) {
    c->nu = 0;
    for (uint32_t t = l0; t < l1; t++) {
        uint32_t *row = c->rows + t * c->stride, *list = ROW_LIST(c, row);
        for (uint32_t i = 0; i < list[0]; i++) {
            uint32_t b = list[1 + i];
            if (c->sm[b] == 0) c->ulist[c->nu++] = b;
            if (row[b] > c->mx[b]) c->mx[b] = row[b];
            c->sm[b] += row[b];
            row[b] = 0;
        }
        list[0] = 0;
    }
    swmtl_dispatch_counts *a = &c->acc;
    for (uint32_t i = 0; i < c->nu; i++) {
        uint32_t b = c->ulist[i];
        const uint64_t *r = tbl->blocks + (size_t)b * SW_CNT_COLS;
        uint64_t mx = c->mx[b], sm = c->sm[b];
        a->flops_float += r[SW_CNT_FLOAT] * sm;
        a->flops_half += r[SW_CNT_HALF] * sm;
        a->flops_bfloat += r[SW_CNT_BFLOAT] * sm;
        a->int_ops += r[SW_CNT_INT] * sm;
        a->simd_instructions += r[SW_CNT_INSTS] * mx;
        a->active_lanes += r[SW_CNT_INSTS] * sm;
        a->barriers_threadgroup += r[SW_CNT_BAR_TG] * mx;
        a->barriers_simdgroup += r[SW_CNT_BAR_SIMD] * mx;
        a->tg_load_bytes += r[SW_CNT_TG_LOAD] * sm;
        a->tg_store_bytes += r[SW_CNT_TG_STORE] * sm;
        c->mx[b] = c->sm[b] = 0;
    }
}

static void add_mem(swmtl_mem_counts *to, const swmtl_mem_counts *m) {
    to->load_bytes += m->load_bytes;
    to->store_bytes += m->store_bytes;
    to->accesses += m->accesses;
    to->lines += m->lines;
    to->min_lines += m->min_lines;
}

void sw_cnt_group_end(sw_worker *w) {
    sw_cnt_worker *c = w->cnt;
    sw_cnt_job *j = w->job->cnt;
    uint32_t n = w->group.actual[0] * w->group.actual[1] * w->group.actual[2];
    int bad = c->oom;
    c->oom = 0;
    c->acc.tg_load_bytes += c->ctx.tg_load;
    c->acc.tg_store_bytes += c->ctx.tg_store;
    c->ctx.tg_load = c->ctx.tg_store = 0;
    for (uint32_t l0 = 0; l0 < n; l0 += SW_SIMD_WIDTH) {
        uint32_t l1 = l0 + SW_SIMD_WIDTH < n ? l0 + SW_SIMD_WIDTH : n;
        reduce_blocks(c, &j->tbl, l0, l1);
        bad |= reduce_accesses(c, j, l0, l1) != 0;
    }
    size_t tg = w->group.declared_end > w->job->tg_static_end ? w->group.declared_end : w->job->tg_static_end;
    swmtl_dispatch_counts *a = &c->acc, *o = &j->out;
    pthread_mutex_lock(&j->mu);
    j->failed |= bad;
    if (tg > o->tg_bytes_per_threadgroup) o->tg_bytes_per_threadgroup = tg;
    o->tg_load_bytes += a->tg_load_bytes;
    o->tg_store_bytes += a->tg_store_bytes;
    o->flops_float += a->flops_float;
    o->flops_half += a->flops_half;
    o->flops_bfloat += a->flops_bfloat;
    o->int_ops += a->int_ops;
    o->simd_instructions += a->simd_instructions;
    o->active_lanes += a->active_lanes;
    o->barriers_threadgroup += a->barriers_threadgroup;
    o->barriers_simdgroup += a->barriers_simdgroup;
    o->atomics_device += a->atomics_device;
    o->atomics_threadgroup += a->atomics_threadgroup;
    for (int k = 0; k < SWMTL_ATOMIC_KINDS; k++) o->atomics_kind[k] += a->atomics_kind[k];
    for (int i = 0; i < j->nbuf; i++) add_mem(&o->buffers[i].m, &a->buffers[i].m);
    pthread_mutex_unlock(&j->mu);
    memset(a, 0, sizeof *a);
}

/* ------------------------------------------------------ job and worker */

static int session_memory(swmtl_counts *s, const void *key, size_t length) {
    for (int i = 0; i < s->nmem; i++)
        if (s->mem[i].key == key && s->mem[i].length == length) return i;
    if (s->nmem == s->capmem) {
        int nc = s->capmem ? 2 * s->capmem : 16;
        void *p = realloc(s->mem, (size_t)nc * sizeof *s->mem);
        if (!p) return -1;
        s->mem = p;
        s->capmem = nc;
    }
    size_t words = length / 64 + 1;
    uint64_t *ld = calloc(words, sizeof *ld), *st = calloc(words, sizeof *st);
    if (!ld || !st) {
        free(ld);
        free(st);
        return -1;
    }
    s->mem[s->nmem] = (struct cnt_memory){key, length, ld, st};
    return s->nmem++;
}

/* The buffers' granule map (sw_cnt_ctx): 0, or -1 out of memory. */
static int map_granules(sw_cnt_job *j) {
    uint64_t lo = (uint64_t)(uintptr_t)j->lo, hi = (uint64_t)(uintptr_t)j->hi, shift = GRANULE_SHIFT_MIN;
    if (j->nbuf == 0 || hi <= lo) return 0; /* ngranules 0: every access is dropped inline */
    while (((hi - (lo & ~((1ull << shift) - 1))) >> shift) >= GRANULES_MAX) shift++;
    lo &= ~((1ull << shift) - 1);
    uint64_t n = ((hi - 1 - lo) >> shift) + 1;
    j->granules = calloc((size_t)(n + 7) / 8, 1);
    if (!j->granules) return -1;
    for (int i = 0; i < j->nbuf; i++) {
        if (j->buf[i].hi == j->buf[i].lo) continue;
        uint64_t g0 = ((uint64_t)(uintptr_t)j->buf[i].lo - lo) >> shift;
        uint64_t g1 = ((uint64_t)(uintptr_t)j->buf[i].hi - 1 - lo) >> shift;
        for (uint64_t g = g0; g <= g1; g++) j->granules[g / 8] |= (uint8_t)(1u << (g % 8));
    }
    j->gbase = lo;
    j->ngranules = n;
    j->gshift = shift;
    return 0;
}

int sw_cnt_job_begin(sw_job *job, char *why, size_t n) {
    const sw_dispatch *d = job->d;
    sw_cnt_job *j = calloc(1, sizeof *j);
    if (!j) goto oom;
    j->sess = d->counts;
    j->tbl = *d->count_table;
    pthread_mutex_init(&j->mu, NULL);
    snprintf(j->out.function, sizeof j->out.function, "%s", d->kernel ? d->kernel : "");
    for (int k = 0; k < 3; k++) {
        j->out.threadgroup[k] = d->tg_size[k];
        j->out.grid[k] = job->threads_per_grid[k];
    }
    job->cnt = j;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        const sw_exec_binding *b = &d->buf[i];
        if (!b->ptr || b->is_bytes) continue;
        cnt_buf *cb = &j->buf[j->nbuf];
        cb->lo = b->data;
        cb->hi = b->data + b->length;
        cb->index = i;
        cb->memory = session_memory(j->sess, b->mem ? (const void *)b->mem : (const void *)b->data, b->length);
        size_t words = b->length / 64 + 1;
        cb->words = words;
        cb->ld = calloc(words, sizeof *cb->ld);
        cb->st = calloc(words, sizeof *cb->st);
        cb->ldfull = calloc(words / 128 + 1, sizeof *cb->ldfull);
        cb->stfull = calloc(words / 128 + 1, sizeof *cb->stfull);
        j->out.buffers[j->nbuf].index = i;
        j->out.buffers[j->nbuf].memory = cb->memory;
        j->nbuf++;
        if (cb->memory < 0 || !cb->ld || !cb->st || !cb->ldfull || !cb->stfull) goto oom;
        if (!j->lo || cb->lo < j->lo) j->lo = cb->lo;
        if (!j->hi || cb->hi > j->hi) j->hi = cb->hi;
    }
    j->out.nbuffers = j->nbuf;
    if (map_granules(j) != 0) goto oom;
    return 0;
oom:
    snprintf(why, n, "out of memory for the counters");
    sw_cnt_job_end(job, 0);
    return -1;
}

static void worker_storage_free(sw_cnt_worker *c) {
    free(c->rows);
    free(c->scratch);
    free(c->paused);
    for (uint32_t t = 0; c->logs && t < c->cap_threads; t++) free(c->logs[t].a);
    free(c->logs);
    free(c->mx);
    free(c->sm);
    free(c->ulist);
    free(c->sitek);
    free(c->gather);
    free(c->maxk);
    free(c->base);
    free(c->sites);
    free(c->gfill);
    free(c->lines);
}

void sw_cnt_worker_free(sw_worker *w) {
    if (!w->cnt) return;
    worker_storage_free(w->cnt);
    free(w->cnt);
    w->cnt = NULL;
}

int sw_cnt_group_begin(sw_worker *w, uint32_t n) {
    sw_job *job = w->job;
    sw_cnt_worker *c = w->cnt;
    if (!w->mma_logs) {
        /* as sw_rt_mma_log makes them at a worker's first product: made here, the
         * kernel's first product takes the same path on every worker (count.h) */
        void *logs =
            mmap(NULL, SW_MMA_LOGS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (logs != MAP_FAILED) w->mma_logs = logs;
    }
    if (c && c->seq == job->seq) {
        memset(c->scratch, 0, c->stride * sizeof *c->scratch); /* its list stays within its row */
        c->ctx.row = c->scratch;
        c->ctx.log = &c->nolog;
        return 0;
    }
    sw_cnt_worker_free(w);
    c = w->cnt = calloc(1, sizeof *c);
    if (!c) goto oom;
    const sw_cnt_table *tbl = &job->cnt->tbl;
    uint32_t cap = 1;
    for (int k = 0; k < 3; k++) cap *= job->d->tg_size[k] ? job->d->tg_size[k] : 1;
    if (cap < n) cap = n;
    c->seq = job->seq;
    c->ctx.arena = (uint64_t)(uintptr_t)w->arena;
    c->ctx.base = job->cnt->gbase;
    c->ctx.ngranules = job->cnt->ngranules;
    c->ctx.shift = job->cnt->gshift;
    c->ctx.granules = job->cnt->granules;
    c->nb = tbl->nblocks ? tbl->nblocks : 1;
    c->nsites = tbl->nsites;
    c->cap_threads = cap;
    c->stride = 2 * (size_t)c->nb + 2;
    c->rows = calloc((size_t)cap * c->stride, sizeof *c->rows);
    c->scratch = calloc(c->stride, sizeof *c->scratch);
    c->paused = calloc(cap, sizeof *c->paused);
    c->logs = calloc(cap, sizeof *c->logs);
    c->mx = calloc(c->nb, sizeof *c->mx);
    c->sm = calloc(c->nb, sizeof *c->sm);
    c->ulist = malloc(c->nb * sizeof *c->ulist);
    c->sitek = calloc(c->nsites + 1, sizeof *c->sitek);
    c->maxk = calloc(c->nsites + 1, sizeof *c->maxk);
    c->base = calloc(c->nsites + 1, sizeof *c->base);
    c->sites = calloc(c->nsites + 1, sizeof *c->sites);
    c->ctx.row = c->scratch;
    c->ctx.log = &c->nolog;
    if (c->rows && c->scratch && c->paused && c->logs && c->mx && c->sm && c->ulist && c->sitek && c->maxk && c->base && c->sites)
        return 0;
oom:
    sw_job_report(job, 1, "kernel '%s': out of memory for the counters of a threadgroup of %u threads",
                  job->d->kernel, n);
    return -1;
}

/* Distinct bytes and lines of the bitmaps ld and st over length bytes. */
static void distinct(const uint64_t *ld, const uint64_t *st, size_t length, swmtl_mem_counts *m) {
    size_t words = length / 64 + 1;
    m->load_distinct_bytes = m->store_distinct_bytes = m->distinct_bytes = m->distinct_lines = 0;
    for (size_t i = 0; i < words; i++) {
        m->load_distinct_bytes += (uint64_t)__builtin_popcountll(ld[i]);
        m->store_distinct_bytes += (uint64_t)__builtin_popcountll(st[i]);
        m->distinct_bytes += (uint64_t)__builtin_popcountll(ld[i] | st[i]);
    }
    for (size_t l = 0; l * 2 < words; l++) { /* a line is two words */
        uint64_t x = ld[2 * l] | st[2 * l];
        if (2 * l + 1 < words) x |= ld[2 * l + 1] | st[2 * l + 1];
        m->distinct_lines += x != 0;
    }
}

void sw_cnt_job_end(sw_job *job, int ok) {
    sw_cnt_job *j = job->cnt;
    if (!j) return;
    swmtl_counts *s = j->sess;
    ok = ok && !j->failed;
    for (int i = 0; i < j->nbuf; i++) {
        cnt_buf *b = &j->buf[i];
        if (ok) {
            size_t len = (size_t)(b->hi - b->lo), words = len / 64 + 1;
            distinct((const uint64_t *)b->ld, (const uint64_t *)b->st, len, &j->out.buffers[i].m);
            struct cnt_memory *m = &s->mem[b->memory];
            for (size_t k = 0; k < words; k++) {
                m->ld[k] |= atomic_load_explicit(&b->ld[k], memory_order_relaxed);
                m->st[k] |= atomic_load_explicit(&b->st[k], memory_order_relaxed);
            }
            const swmtl_mem_counts *bm = &j->out.buffers[i].m;
            add_mem(&j->out.device, bm);
            j->out.device.load_distinct_bytes += bm->load_distinct_bytes;
            j->out.device.store_distinct_bytes += bm->store_distinct_bytes;
            j->out.device.distinct_bytes += bm->distinct_bytes;
            j->out.device.distinct_lines += bm->distinct_lines;
        }
        free((void *)b->ld);
        free((void *)b->st);
        free((void *)b->ldfull);
        free((void *)b->stfull);
    }
    if (ok && s->nd == s->capd) {
        int nc = s->capd ? 2 * s->capd : 8;
        void *p = realloc(s->d, (size_t)nc * sizeof *s->d);
        if (p) {
            s->d = p;
            s->capd = nc;
        }
    }
    if (ok && s->nd < s->capd) s->d[s->nd++] = j->out;
    else if (!s->error) s->error = strdup(j->failed ? "out of memory for the counters" : "a counted dispatch failed");
    pthread_mutex_destroy(&j->mu);
    free(j->granules);
    free(j);
    job->cnt = NULL;
}

/* ------------------------------------------------------ the session */

swmtl_counts *swmtl_counts_new(void) { return calloc(1, sizeof(swmtl_counts)); }

void swmtl_counts_free(swmtl_counts *c) {
    if (!c) return;
    for (int i = 0; i < c->nmem; i++) {
        free(c->mem[i].ld);
        free(c->mem[i].st);
    }
    free(c->mem);
    free(c->d);
    free(c->error);
    free(c);
}

int swmtl_counts_ndispatches(const swmtl_counts *c) { return c->nd; }
const swmtl_dispatch_counts *swmtl_counts_dispatch(const swmtl_counts *c, int i) {
    return i >= 0 && i < c->nd ? &c->d[i] : NULL;
}
int swmtl_counts_nmemories(const swmtl_counts *c) { return c->nmem; }
void swmtl_counts_memory(const swmtl_counts *c, int m, swmtl_mem_counts *out) {
    memset(out, 0, sizeof *out);
    if (m >= 0 && m < c->nmem) distinct(c->mem[m].ld, c->mem[m].st, c->mem[m].length, out);
}
const char *swmtl_counts_error(const swmtl_counts *c) { return c->error; }

const char *swmtl_atomic_kind_name(int k) {
    static const char *const names[SWMTL_ATOMIC_KINDS] = {
        NULL, "load", "store", "exchange", "compare_exchange", "fetch_add", "fetch_sub",
        "fetch_and", "fetch_or", "fetch_xor", "fetch_min", "fetch_max", "other"};
    return k > 0 && k < SWMTL_ATOMIC_KINDS ? names[k] : NULL;
}
