/* findings.c — grouping, counting and symbolizing what the checks report (findings.h).
 *
 * While the dispatch runs, occurrences are grouped by code addresses (cheap to
 * compare); after it, addresses become .metal lines and groups on the same lines
 * merge — a line a loop unrolls into eight copies is still one finding. */
#include "swmetal/findings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strutil.h"
#include "swmetal/exec_internal.h"
#include "swmetal/symbolize.h"

#define SET_MAX (1u << 20)    /* distinct threads counted per group; more count as this many */
#define MAX_GROUPS 4096       /* distinct code-address groups per dispatch; later ones only count */

/* A set of 64-bit keys (open addressing; slot value key+1, 0 = empty). */
typedef struct u64set {
    uint64_t *slot;
    uint32_t cap, n;
} u64set;

static void set_free(u64set *s) {
    free(s->slot);
    memset(s, 0, sizeof *s);
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void set_add(u64set *s, uint64_t key) {
    if (s->n >= SET_MAX) return;
    if ((s->n + 1) * 2 > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 64;
        uint64_t *ns = calloc(cap, sizeof *ns);
        if (!ns) return;
        for (uint32_t i = 0; i < s->cap; i++) {
            if (!s->slot[i]) continue;
            uint32_t j = (uint32_t)mix(s->slot[i]) & (cap - 1);
            while (ns[j]) j = (j + 1) & (cap - 1);
            ns[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = ns;
        s->cap = cap;
    }
    uint64_t v = key + 1;
    uint32_t j = (uint32_t)mix(v) & (s->cap - 1);
    while (s->slot[j]) {
        if (s->slot[j] == v) return;
        j = (j + 1) & (s->cap - 1);
    }
    s->slot[j] = v;
    s->n++;
}

static void set_merge(u64set *into, const u64set *from) {
    for (uint32_t i = 0; i < from->cap; i++)
        if (from->slot[i]) set_add(into, from->slot[i] - 1);
}

typedef struct group {
    sw_raw_finding first;    /* the first occurrence (detail points at `detail`), its
                                threads and detail those of the lowest occurrence */
    char detail[200];
    uint64_t occurrences;
    int64_t lo, hi;
    u64set threads, tgs;
    const void *close_pc;    /* the barrier closing first's interval */
    int close_known;
    int merged_into;         /* finish: index of the group this one joined, -1 */
} group;

struct sw_findings {
    group *groups;
    int ngroups, cap;
    int *index;              /* hash of group keys -> group + 1 */
    int index_cap;
    uint64_t total;
    int fatal_group;         /* -1 */
};

sw_findings *sw_findings_new(void) {
    sw_findings *fs = calloc(1, sizeof *fs);
    if (fs) fs->fatal_group = -1;
    return fs;
}

void sw_findings_free(sw_findings *fs) {
    if (!fs) return;
    for (int i = 0; i < fs->ngroups; i++) {
        set_free(&fs->groups[i].threads);
        set_free(&fs->groups[i].tgs);
    }
    free(fs->groups);
    free(fs->index);
    free(fs);
}

uint64_t sw_findings_count(const sw_findings *fs) { return fs ? fs->total : 0; }

static uint64_t key_hash(const sw_raw_finding *f) {
    uint64_t h = mix((uint64_t)f->kind * 131 + (uint64_t)f->memory * 7 + (uint64_t)(f->buffer + 1));
    h = mix(h ^ (uint64_t)(uintptr_t)f->variable);
    for (int i = 0; i < f->nsides; i++) {
        h = mix(h ^ (uint64_t)(uintptr_t)f->side[i].pc);
        h = mix(h ^ (uint64_t)(uintptr_t)f->side[i].caller ^ ((uint64_t)f->side[i].kind << 56));
    }
    return h;
}

static int same_key(const sw_raw_finding *a, const sw_raw_finding *b) {
    if (a->kind != b->kind || a->memory != b->memory || a->buffer != b->buffer || a->variable != b->variable ||
        a->nsides != b->nsides)
        return 0;
    for (int i = 0; i < a->nsides; i++)
        if (a->side[i].pc != b->side[i].pc || a->side[i].caller != b->side[i].caller ||
            a->side[i].kind != b->side[i].kind)
            return 0;
    return 1;
}

/* Caller holds job->diag_mu.  Index of f's group (created if new), -1 when full. */
static int group_of(sw_findings *fs, const sw_raw_finding *f, int *created) {
    *created = 0;
    if ((fs->ngroups + 1) * 2 > fs->index_cap) {
        int cap = fs->index_cap ? fs->index_cap * 2 : 64;
        int *ni = calloc((size_t)cap, sizeof *ni);
        if (!ni) return -1;
        for (int g = 0; g < fs->ngroups; g++) {
            uint32_t j = (uint32_t)key_hash(&fs->groups[g].first) & (uint32_t)(cap - 1);
            while (ni[j]) j = (j + 1) & (uint32_t)(cap - 1);
            ni[j] = g + 1;
        }
        free(fs->index);
        fs->index = ni;
        fs->index_cap = cap;
    }
    uint32_t j = (uint32_t)key_hash(f) & (uint32_t)(fs->index_cap - 1);
    while (fs->index[j]) {
        int g = fs->index[j] - 1;
        if (same_key(&fs->groups[g].first, f)) return g;
        j = (j + 1) & (uint32_t)(fs->index_cap - 1);
    }
    if (fs->ngroups >= MAX_GROUPS) return -1;
    if (fs->ngroups == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 16;
        group *ng = realloc(fs->groups, sizeof *ng * (size_t)cap);
        if (!ng) return -1;
        fs->groups = ng;
        fs->cap = cap;
    }
    group *g = &fs->groups[fs->ngroups];
    memset(g, 0, sizeof *g);
    g->first = *f;
    str_copy(g->detail, sizeof g->detail, f->detail);
    g->first.detail = g->detail;
    g->lo = f->offset_lo;
    g->hi = f->offset_hi;
    g->merged_into = -1;
    fs->index[j] = fs->ngroups + 1;
    *created = 1;
    return fs->ngroups++;
}

/* Whether occurrence a names lower threads than b: (threadgroup, thread) of the
 * first side, then of the second.  A group shows its lowest occurrence, the same
 * whichever worker reached the bug first, so a report does not change between runs. */
static int names_lower_threads(const sw_raw_finding *a, const sw_raw_finding *b) {
    for (int i = 0; i < a->nsides && i < b->nsides; i++) {
        const sw_access *x = &a->side[i], *y = &b->side[i];
        if (x->has_thread != y->has_thread) return x->has_thread;
        if (!x->has_thread) continue;
        if (x->tg != y->tg) return x->tg < y->tg;
        if (x->tid != y->tid) return x->tid < y->tid;
    }
    return 0;
}

void sw_findings_add(sw_job *job, sw_worker *w, const sw_raw_finding *f) {
    sw_findings *fs = job->findings;
    if (!fs) return;
    pthread_mutex_lock(&job->diag_mu);
    job->res->failed = 1;
    fs->total++;
    int created;
    int gi = group_of(fs, f, &created);
    if (gi >= 0) {
        group *g = &fs->groups[gi];
        g->occurrences++;
        if (!created && names_lower_threads(f, &g->first)) {
            for (int i = 0; i < f->nsides && i < 2; i++) g->first.side[i] = f->side[i];
            /* its detail too (a numeric finding's operand values): the values shown
             * are the thread's shown, whichever thread reported first */
            if (f->detail) str_copy(g->detail, sizeof g->detail, f->detail);
        }
        if (f->has_range) {
            if (f->offset_lo < g->lo) g->lo = f->offset_lo;
            if (f->offset_hi > g->hi) g->hi = f->offset_hi;
        }
        for (int i = 0; i < f->nsides; i++) {
            if (!f->side[i].has_thread) continue;
            set_add(&g->threads, (f->side[i].tg << 11) | f->side[i].tid);
            set_add(&g->tgs, f->side[i].tg);
        }
        if (created && f->has_interval && w && w->group.npending < SW_PENDING_MAX) w->group.pending[w->group.npending++] = gi;
        if (f->fatal && fs->fatal_group < 0) fs->fatal_group = gi;
    }
    if (f->fatal) atomic_store(&job->abandoned, 1);
    pthread_mutex_unlock(&job->diag_mu);
    if (f->fatal) sw_atomics_wake(job); /* workers waiting for their turn stop too */
}

void sw_findings_close_interval(sw_job *job, sw_worker *w, const void *pc) {
    if (!w->group.npending) return;
    pthread_mutex_lock(&job->diag_mu);
    for (int i = 0; i < w->group.npending; i++) {
        group *g = &job->findings->groups[w->group.pending[i]];
        if (g->close_known) continue;
        g->close_pc = pc;
        g->close_known = 1;
    }
    w->group.npending = 0;
    pthread_mutex_unlock(&job->diag_mu);
}

/* ---- site ids ---- */

uint32_t sw_site_id(sw_job *job, sw_worker *w, const void *pc) {
    if (!pc) return 0;
    uint32_t id = 0;
    pthread_mutex_lock(&job->diag_mu);
    if (!job->site_pcs) {
        job->site_pcs = calloc(SW_SITE_MAX + 1, sizeof *job->site_pcs);
        job->site_index = calloc(SW_SITE_INDEX, sizeof *job->site_index);
    }
    if (job->site_pcs && job->site_index) {
        uint32_t j = sw_site_slot(pc) & (SW_SITE_INDEX - 1);
        while (job->site_index[j] && job->site_pcs[job->site_index[j]] != pc) j = (j + 1) & (SW_SITE_INDEX - 1);
        id = job->site_index[j];
        if (!id && job->nsites < SW_SITE_MAX) {
            id = ++job->nsites;
            job->site_pcs[id] = pc;
            job->site_index[j] = (uint16_t)id;
        }
    }
    pthread_mutex_unlock(&job->diag_mu);
    uint32_t slot = sw_site_slot(pc);
    w->site_cache[slot].pc = pc;
    w->site_cache[slot].id = id;
    w->site_cache[slot].seq = (uint32_t)job->seq;
    return id;
}

const void *sw_site_pc(const sw_job *job, uint32_t id) {
    return job->site_pcs && id >= 1 && id <= job->nsites ? job->site_pcs[id] : NULL;
}

/* ---- the end of the dispatch ---- */

/* Where pc/caller are in the user's source: pc's own line unless only the prelude
 * is there and the caller is the user's. */
typedef struct pc_table {
    uintptr_t *pcs;
    sw_srcloc *locs;
    int n, cap;
} pc_table;

static void table_add(pc_table *t, const void *pc) {
    if (!pc) return;
    for (int i = 0; i < t->n; i++)
        if (t->pcs[i] == (uintptr_t)pc) return;
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        uintptr_t *np = realloc(t->pcs, sizeof *np * (size_t)cap);
        if (!np) return;
        t->pcs = np;
        t->cap = cap;
    }
    t->pcs[t->n++] = (uintptr_t)pc;
}

static const sw_srcloc *table_loc(const pc_table *t, const void *pc) {
    for (int i = 0; pc && t->locs && i < t->n; i++)
        if (t->pcs[i] == (uintptr_t)pc) return &t->locs[i];
    return NULL;
}

static sw_srcloc site_loc(const pc_table *t, const void *pc, const void *caller) {
    sw_srcloc none;
    memset(&none, 0, sizeof none);
    const sw_srcloc *a = table_loc(t, pc), *b = table_loc(t, caller);
    if (a && a->line > 0 && !a->in_prelude) return *a;
    if (b && b->line > 0 && !b->in_prelude) return *b;
    if (a && a->line > 0) return *a;
    if (a && a->file[0]) return *a; /* the file without a line (merged code) */
    return none;
}

static const char *access_name(int kind) {
    switch (kind) {
    case SW_ACC_READ: return "read";
    case SW_ACC_WRITE: return "write";
    case SW_ACC_ATOMIC: return "atomic";
    case SW_ACC_BARRIER: return "barrier";
    default: return "";
    }
}

static void fill_site(const sw_job *job, const pc_table *t, const sw_access *a, dev_site *s) {
    memset(s, 0, sizeof *s);
    sw_srcloc loc = site_loc(t, a->pc, a->caller);
    str_copy(s->file, sizeof s->file, loc.file);
    s->line = loc.line;
    s->column = loc.column;
    str_copy(s->text, sizeof s->text, loc.text);
    /* The caller's own line (a barrier's __builtin_LINE) wins over the code address:
     * the compiler may merge two barrier calls of one function into one call. */
    if (a->line > 0 && a->line != s->line) {
        s->line = a->line;
        s->column = 0;
        /* No file from the address (a tail call returns into the executor): the
         * kernel's own source file. */
        if (!s->file[0]) {
            const void *entry;
            memcpy(&entry, &job->d->entry, sizeof entry);
            sw_symbolize_main_file(entry, s->file, sizeof s->file);
        }
        sw_source_line(NULL, s->file, s->line, s->text, sizeof s->text);
    }
    str_copy(s->access, sizeof s->access, access_name(a->kind));
    s->size = a->size;
    s->has_thread = a->has_thread;
    s->nthreads = a->nthreads;
    if (a->has_thread) {
        sw_job_thread_ids(job, a->tg, a->tid, s->thread, s->threadgroup);
        s->index = a->tid;
    }
}

static void fill_barrier(const pc_table *t, const void *pc, dev_site *s) {
    memset(s, 0, sizeof *s);
    if (!pc) return;
    sw_srcloc loc = site_loc(t, pc, NULL);
    str_copy(s->file, sizeof s->file, loc.file);
    s->line = loc.line;
    s->column = loc.column;
    str_copy(s->text, sizeof s->text, loc.text);
    str_copy(s->access, sizeof s->access, "barrier");
}

static void to_finding(const sw_job *job, const pc_table *t, const group *g, dev_finding *out) {
    const sw_raw_finding *f = &g->first;
    memset(out, 0, sizeof *out);
    out->kind = f->kind;
    str_copy(out->kernel, sizeof out->kernel, job->d->kernel ? job->d->kernel : "?");
    str_copy(out->memory, sizeof out->memory,
             f->memory == SW_MEM_DEVICE ? "device" : f->memory == SW_MEM_THREADGROUP ? "threadgroup" : "");
    out->buffer = f->buffer;
    str_copy(out->variable, sizeof out->variable, f->variable);
    out->variable_line = f->variable_line;
    out->has_range = f->has_range;
    out->offset_lo = g->lo;
    out->offset_hi = g->hi;
    out->length = f->length;
    str_copy(out->detail, sizeof out->detail, g->detail);
    out->nsites = f->nsides;
    for (int i = 0; i < f->nsides && i < 2; i++) fill_site(job, t, &f->side[i], &out->site[i]);
    /* Metal orders nothing between threadgroups, so which of two conflicting device
     * accesses came first here says nothing: list the write first (of two writes,
     * the one earlier in the source), so both orders make one finding. */
    if (f->nsides == 2 && ((f->kind == DEV_FIND_DEVICE_READ_WRITE && strcmp(out->site[0].access, "read") == 0) ||
                           (f->kind == DEV_FIND_DEVICE_WRITE_WRITE &&
                            (strcmp(out->site[0].file, out->site[1].file) > 0 ||
                             (strcmp(out->site[0].file, out->site[1].file) == 0 &&
                              out->site[0].line > out->site[1].line))))) {
        dev_site tmp = out->site[0];
        out->site[0] = out->site[1];
        out->site[1] = tmp;
    }
    out->has_interval = f->has_interval;
    if (f->has_interval) {
        fill_barrier(t, f->interval_pc, &out->barrier[0]);
        fill_barrier(t, g->close_known ? g->close_pc : NULL, &out->barrier[1]);
    }
    out->occurrences = g->occurrences;
    out->threads = g->threads.n;
    out->threadgroups = g->tgs.n;
    /* A divergent barrier involves every thread waiting, not only the two named. */
    if (f->kind == DEV_FIND_DIVERGENT_BARRIER && f->side[0].nthreads + f->side[1].nthreads > out->threads)
        out->threads = f->side[0].nthreads + f->side[1].nthreads;
}

/* Same bug after symbolizing: kind, memory, buffer/variable, file:line and access of each side. */
static int same_bug(const dev_finding *a, const dev_finding *b) {
    if (a->kind != b->kind || strcmp(a->memory, b->memory) != 0 || a->buffer != b->buffer ||
        strcmp(a->variable, b->variable) != 0 || a->nsites != b->nsites)
        return 0;
    for (int i = 0; i < a->nsites; i++) {
        const dev_site *x = &a->site[i], *y = &b->site[i];
        if (x->line != y->line || strcmp(x->file, y->file) != 0 || strcmp(x->access, y->access) != 0) return 0;
        if (x->line == 0) return 0; /* unknown locations stay apart */
    }
    return 1;
}

void sw_findings_finish(sw_job *job, sw_dispatch_result *res) {
    sw_findings *fs = job->findings;
    if (!fs || fs->ngroups == 0) {
        if (fs && fs->total && !res->error) {
            char msg[300];
            snprintf(msg, sizeof msg, "kernel '%s': %llu check findings (too many distinct ones to keep)",
                     job->d->kernel, (unsigned long long)fs->total);
            res->error = strdup(msg);
        }
        return;
    }
    pc_table t = {0};
    for (int i = 0; i < fs->ngroups; i++) {
        const group *g = &fs->groups[i];
        for (int s = 0; s < g->first.nsides; s++) {
            table_add(&t, g->first.side[s].pc);
            table_add(&t, g->first.side[s].caller);
        }
        if (g->first.has_interval) {
            table_add(&t, g->first.interval_pc);
            if (g->close_known) table_add(&t, g->close_pc);
        }
    }
    t.locs = calloc((size_t)(t.n ? t.n : 1), sizeof *t.locs);
    if (t.locs) sw_symbolize(t.pcs, t.n, t.locs);

    /* Fatal first, then in the order found; groups on the same lines merge into the earliest. */
    dev_finding *out = calloc((size_t)fs->ngroups, sizeof *out);
    int *order = calloc((size_t)fs->ngroups, sizeof *order);
    int n = 0;
    if (out && order) {
        int k = 0;
        if (fs->fatal_group >= 0) order[k++] = fs->fatal_group;
        for (int i = 0; i < fs->ngroups; i++)
            if (i != fs->fatal_group) order[k++] = i;
        int *owner = calloc((size_t)fs->ngroups, sizeof *owner);
        for (int k2 = 0; owner && k2 < fs->ngroups; k2++) {
            group *g = &fs->groups[order[k2]];
            dev_finding f;
            to_finding(job, &t, g, &f);
            int into = -1;
            for (int j = 0; j < n && into < 0; j++)
                if (same_bug(&out[j], &f)) into = j;
            if (into < 0) {
                owner[n] = order[k2];
                out[n++] = f;
                continue;
            }
            group *o = &fs->groups[owner[into]];
            set_merge(&o->threads, &g->threads);
            set_merge(&o->tgs, &g->tgs);
            dev_finding *m = &out[into];
            m->occurrences += f.occurrences;
            m->threads = o->threads.n;
            m->threadgroups = o->tgs.n;
            if (f.has_range && m->has_range) {
                if (f.offset_lo < m->offset_lo) m->offset_lo = f.offset_lo;
                if (f.offset_hi > m->offset_hi) m->offset_hi = f.offset_hi;
            }
        }
        free(owner);
    }
    free(order);
    free(t.pcs);
    free(t.locs);

    res->failed = 1;
    res->findings = out;
    res->nfindings = out ? n : 0;
    res->total_diags += fs->total;
    for (int i = 0; i < res->nfindings && res->ndiags < SW_DIAG_KEEP; i++) {
        char line[1200], msg[1400];
        dev_finding_summary(&out[i], line, sizeof line);
        snprintf(msg, sizeof msg, "kernel '%s': %s", job->d->kernel, line);
        res->diags[res->ndiags++] = strdup(msg);
    }
    if (!res->error && res->nfindings > 0) {
        char first[1200], msg[1600];
        dev_finding_summary(&out[0], first, sizeof first);
        if (res->nfindings == 1)
            snprintf(msg, sizeof msg, "kernel '%s': %s", job->d->kernel, first);
        else
            snprintf(msg, sizeof msg, "kernel '%s': %d distinct findings (%llu occurrence%s); first: %s",
                     job->d->kernel, res->nfindings, (unsigned long long)fs->total, fs->total == 1 ? "" : "s", first);
        res->error = strdup(msg);
    }
}
