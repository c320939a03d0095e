/* counters.c — counters.h: the software device's counting session turned into the
 * record's counters, buffers named after the op's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/counters.h"
#include "swmetal/swmetal.h"

_Static_assert(RC_MAX_BUFFERS == SW_MAX_BUFFERS, "a binding per buffer index");
_Static_assert(RC_ATOMIC_KINDS == SWMTL_ATOMIC_KINDS, "the same atomic kinds");
_Static_assert(RC_LINE_BYTES == SWMTL_LINE_BYTES, "the same line");

const char *rec_counters_atomic_kind(int k) { return swmtl_atomic_kind_name(k); }

static void copy_mem(rc_mem *o, const swmtl_mem_counts *m) {
    *o = (rc_mem){m->load_bytes, m->store_bytes, m->load_distinct_bytes, m->store_distinct_bytes,
                  m->distinct_bytes, m->distinct_lines, m->accesses, m->lines, m->min_lines};
}

static void sum_mem(rc_mem *o, const rc_mem *m) {
    o->load_bytes += m->load_bytes;
    o->store_bytes += m->store_bytes;
    o->accesses += m->accesses;
    o->lines += m->lines;
    o->min_lines += m->min_lines;
}

static void fill_dispatch(rc_dispatch *o, const swmtl_dispatch_counts *d, const rc_names *names) {
    memset(o, 0, sizeof *o);
    snprintf(o->stage, sizeof o->stage, "%s", names && names->stage ? names->stage : "");
    snprintf(o->function, sizeof o->function, "%s", d->function);
    memcpy(o->grid, d->grid, sizeof o->grid);
    memcpy(o->tg, d->threadgroup, sizeof o->tg);
    copy_mem(&o->device, &d->device);
    o->tg_bytes = d->tg_bytes_per_threadgroup;
    o->tg_load_bytes = d->tg_load_bytes;
    o->tg_store_bytes = d->tg_store_bytes;
    o->flops_float = d->flops_float;
    o->flops_half = d->flops_half;
    o->flops_bfloat = d->flops_bfloat;
    o->int_ops = d->int_ops;
    o->simd_instructions = d->simd_instructions;
    o->active_lanes = d->active_lanes;
    o->barriers_threadgroup = d->barriers_threadgroup;
    o->barriers_simdgroup = d->barriers_simdgroup;
    o->atomics_device = d->atomics_device;
    o->atomics_threadgroup = d->atomics_threadgroup;
    memcpy(o->atomics_kind, d->atomics_kind, sizeof o->atomics_kind);
    o->nbuffers = d->nbuffers;
    for (int i = 0; i < d->nbuffers && i < RC_MAX_BUFFERS; i++) {
        const swmtl_buffer_counts *b = &d->buffers[i];
        rc_buffer *r = &o->buffers[i];
        const char *nm = names && b->index >= 0 && b->index < RC_MAX_BUFFERS ? names->buffer[b->index] : NULL;
        if (nm) snprintf(r->name, sizeof r->name, "%s", nm);
        else snprintf(r->name, sizeof r->name, "buffer(%d)", b->index);
        r->index = b->index;
        r->memory = b->memory;
        copy_mem(&r->m, &b->m);
    }
}

/* The whole run: sums, and per memory the union of its distinct bytes. */
static void fill_total(rec_counters *c, const struct swmtl_counts *s) {
    rc_dispatch *t = &c->total;
    memset(t, 0, sizeof *t);
    for (int i = 0; i < c->ndispatches; i++) {
        const rc_dispatch *d = &c->dispatches[i];
        sum_mem(&t->device, &d->device);
        if (d->tg_bytes > t->tg_bytes) t->tg_bytes = d->tg_bytes;
        t->tg_load_bytes += d->tg_load_bytes;
        t->tg_store_bytes += d->tg_store_bytes;
        t->flops_float += d->flops_float;
        t->flops_half += d->flops_half;
        t->flops_bfloat += d->flops_bfloat;
        t->int_ops += d->int_ops;
        t->simd_instructions += d->simd_instructions;
        t->active_lanes += d->active_lanes;
        t->barriers_threadgroup += d->barriers_threadgroup;
        t->barriers_simdgroup += d->barriers_simdgroup;
        t->atomics_device += d->atomics_device;
        t->atomics_threadgroup += d->atomics_threadgroup;
        for (int k = 0; k < RC_ATOMIC_KINDS; k++) t->atomics_kind[k] += d->atomics_kind[k];
        for (int b = 0; b < d->nbuffers; b++) {
            const rc_buffer *db = &d->buffers[b];
            int k = 0;
            while (k < t->nbuffers && t->buffers[k].memory != db->memory) k++;
            if (k == t->nbuffers) {
                if (k == RC_MAX_BUFFERS) continue;
                t->nbuffers++;
                t->buffers[k] = (rc_buffer){.index = db->index, .memory = db->memory};
                memcpy(t->buffers[k].name, db->name, sizeof db->name);
            }
            sum_mem(&t->buffers[k].m, &db->m);
        }
    }
    for (int k = 0; k < t->nbuffers; k++) {
        swmtl_mem_counts u;
        swmtl_counts_memory(s, t->buffers[k].memory, &u);
        rc_mem *m = &t->buffers[k].m;
        m->load_distinct_bytes = u.load_distinct_bytes;
        m->store_distinct_bytes = u.store_distinct_bytes;
        m->distinct_bytes = u.distinct_bytes;
        m->distinct_lines = u.distinct_lines;
        t->device.load_distinct_bytes += u.load_distinct_bytes;
        t->device.store_distinct_bytes += u.store_distinct_bytes;
        t->device.distinct_bytes += u.distinct_bytes;
        t->device.distinct_lines += u.distinct_lines;
    }
}

rec_counters *rec_counters_from_session(const struct swmtl_counts *s, const rc_names *names, int n) {
    rec_counters *c = calloc(1, sizeof *c);
    int nd = swmtl_counts_ndispatches(s);
    if (!c || (nd > 0 && !(c->dispatches = calloc((size_t)nd, sizeof *c->dispatches)))) {
        free(c);
        return NULL;
    }
    c->ndispatches = nd;
    for (int i = 0; i < nd; i++) fill_dispatch(&c->dispatches[i], swmtl_counts_dispatch(s, i), i < n ? &names[i] : NULL);
    fill_total(c, s);
    return c;
}

void rec_counters_free(rec_counters *c) {
    if (!c) return;
    free(c->dispatches);
    free(c);
}
