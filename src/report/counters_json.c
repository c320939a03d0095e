/* counters_json.c — counters_json.h: rec_counters as JSON.  Every count is an
 * integer (exact while below 2^53, which a double holds; results/README.md says so);
 * a ratio is null when its denominator is 0. */
#include "report/counters_json.h"
#include "report/floor_model.h"

static void num(json_build *b, cJSON *o, const char *key, uint64_t v) { jb_num(b, o, key, (double)v); }

static void ratio(json_build *b, cJSON *o, const char *key, uint64_t n, uint64_t d) {
    jb_num_or_null(b, o, key, d ? (double)n / (double)d : 0, d != 0);
}

static void coalescing(json_build *b, cJSON *o, const rc_mem *m) {
    cJSON *c = jb_put_obj(b, o, "coalescing");
    if (!c) return;
    num(b, c, "accesses", m->accesses);
    num(b, c, "lines", m->lines);
    num(b, c, "min_lines", m->min_lines);
    ratio(b, c, "efficiency", m->min_lines, m->lines);
}

static void mem_fields(json_build *b, cJSON *o, const rc_mem *m) {
    num(b, o, "load_bytes", m->load_bytes);
    num(b, o, "store_bytes", m->store_bytes);
    num(b, o, "load_distinct_bytes", m->load_distinct_bytes);
    num(b, o, "store_distinct_bytes", m->store_distinct_bytes);
    num(b, o, "distinct_bytes", m->distinct_bytes);
    num(b, o, "distinct_lines", m->distinct_lines);
    coalescing(b, o, m);
}

/* What a dispatch and the total share.  per_dispatch: threadgroup memory's bytes
 * per threadgroup too. */
static void body(json_build *b, cJSON *o, const rc_dispatch *d, int per_dispatch) {
    cJSON *dev = jb_put_obj(b, o, "device");
    if (dev) mem_fields(b, dev, &d->device);
    cJSON *tg = jb_put_obj(b, o, "threadgroup_memory");
    if (tg) {
        if (per_dispatch) num(b, tg, "bytes_per_threadgroup", d->tg_bytes);
        num(b, tg, "load_bytes", d->tg_load_bytes);
        num(b, tg, "store_bytes", d->tg_store_bytes);
    }
    cJSON *f = jb_put_obj(b, o, "flops");
    if (f) {
        num(b, f, "float", d->flops_float);
        num(b, f, "half", d->flops_half);
        num(b, f, "bfloat", d->flops_bfloat);
        num(b, f, "total", d->flops_float + d->flops_half + d->flops_bfloat);
    }
    num(b, o, "int_ops", d->int_ops);
    cJSON *s = jb_put_obj(b, o, "simd");
    if (s) {
        num(b, s, "instructions", d->simd_instructions);
        num(b, s, "active_lanes", d->active_lanes);
        ratio(b, s, "lane_utilisation", d->active_lanes, 32 * d->simd_instructions);
    }
    cJSON *bar = jb_put_obj(b, o, "barriers");
    if (bar) {
        num(b, bar, "threadgroup", d->barriers_threadgroup);
        num(b, bar, "simdgroup", d->barriers_simdgroup);
    }
    cJSON *at = jb_put_obj(b, o, "atomics");
    if (at) {
        num(b, at, "device", d->atomics_device);
        num(b, at, "threadgroup", d->atomics_threadgroup);
        cJSON *k = jb_put_obj(b, at, "by_kind");
        for (int i = 1; k && i < RC_ATOMIC_KINDS; i++)
            if (d->atomics_kind[i] && rec_counters_atomic_kind(i)) num(b, k, rec_counters_atomic_kind(i), d->atomics_kind[i]);
    }
    cJSON *bufs = jb_put_array(b, o, "buffers");
    for (int i = 0; bufs && i < d->nbuffers; i++) {
        cJSON *x = jb_append_obj(b, bufs);
        if (!x) return;
        jb_str(b, x, "name", d->buffers[i].name);
        jb_num(b, x, "index", d->buffers[i].index);
        mem_fields(b, x, &d->buffers[i].m);
    }
}

static void triple(json_build *b, cJSON *o, const char *key, const uint32_t v[3]) {
    cJSON *a = jb_put_array(b, o, key);
    for (int k = 0; a && k < 3; k++) jb_append(b, a, cJSON_CreateNumber(v[k]));
}

void report_add_counters(json_build *b, cJSON *root, const run_record *r) {
    if (!r->counters_asked) return;
    const rec_counters *c = r->counters;
    if (!c) {
        jb_null(b, root, "counters");
        jb_str(b, root, "counters_unavailable", r->counters_unavailable[0] ? r->counters_unavailable : "not counted");
        return;
    }
    cJSON *o = jb_put_obj(b, root, "counters");
    if (!o) return;
    jb_num(b, o, "version", 1);
    jb_bool(b, o, "exact", 1);
    jb_num(b, o, "line_bytes", RC_LINE_BYTES);
    cJSON *ds = jb_put_array(b, o, "dispatches");
    for (int i = 0; ds && i < c->ndispatches; i++) {
        const rc_dispatch *d = &c->dispatches[i];
        cJSON *x = jb_append_obj(b, ds);
        if (!x) return;
        jb_str(b, x, "stage", d->stage);
        jb_str(b, x, "function", d->function);
        triple(b, x, "grid", d->grid);
        triple(b, x, "threadgroup", d->tg);
        body(b, x, d, 1);
    }
    cJSON *t = jb_put_obj(b, o, "total");
    if (!t) return;
    body(b, t, &c->total, 0);
    uint64_t flops = c->total.flops_float + c->total.flops_half + c->total.flops_bfloat;
    jb_num_or_null(b, t, "arithmetic_intensity",
                   c->total.device.distinct_bytes ? (double)flops / (double)c->total.device.distinct_bytes : 0,
                   c->total.device.distinct_bytes != 0);
    /* each chip's floor for this work: a model, labelled so (floor_model.h) */
    if (floor_model_add(o) != 0) b->ok = 0;
}
