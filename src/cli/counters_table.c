/* counters_table.c — a record's exact counters (--counters) in the table: the
 * whole run, then a line per dispatch and per buffer.  Numbers are printed whole:
 * they are exact, and compare gates on them exactly. */
#include <inttypes.h>
#include <stdio.h>

#include "cli/table.h"
#include "report/counters_json.h"
#include "report/floor_model.h"

static void pct(FILE *f, uint64_t n, uint64_t d) {
    if (d) fprintf(f, "%.1f%%", 100.0 * (double)n / (double)d);
    else fprintf(f, "n/a");
}

static void mem_line(FILE *f, const rc_mem *m) {
    fprintf(f, "load %" PRIu64 " B (distinct %" PRIu64 "), store %" PRIu64 " B (distinct %" PRIu64 "), %" PRIu64
               " lines, coalescing ",
            m->load_bytes, m->load_distinct_bytes, m->store_bytes, m->store_distinct_bytes, m->distinct_lines);
    pct(f, m->min_lines, m->lines);
    fprintf(f, " (%" PRIu64 " accesses: %" PRIu64 " lines, fewest %" PRIu64 ")\n", m->accesses, m->lines, m->min_lines);
}

static void work_lines(FILE *f, const rc_dispatch *d, const char *in) {
    uint64_t flops = d->flops_float + d->flops_half + d->flops_bfloat;
    fprintf(f, "%sflops %" PRIu64 " (float %" PRIu64 ", half %" PRIu64 ", bfloat %" PRIu64 "), int ops %" PRIu64 "\n", in,
            flops, d->flops_float, d->flops_half, d->flops_bfloat, d->int_ops);
    fprintf(f, "%ssimd %" PRIu64 " instructions, lanes active ", in, d->simd_instructions);
    pct(f, d->active_lanes, 32 * d->simd_instructions);
    fprintf(f, "; barriers threadgroup %" PRIu64 ", simdgroup %" PRIu64 "; atomics device %" PRIu64
               ", threadgroup %" PRIu64 "\n",
            d->barriers_threadgroup, d->barriers_simdgroup, d->atomics_device, d->atomics_threadgroup);
    fprintf(f, "%sthreadgroup memory load %" PRIu64 " B, store %" PRIu64 " B\n", in, d->tg_load_bytes, d->tg_store_bytes);
}

/* Each chip's floor for the counted work.  The model works on the record's JSON
 * (report/floor_model.h, shared with `gdnbench report`), so the table builds the
 * same `counters` object the JSON report holds.  By default the run's own chip
 * (a Metal run's) and the range over the table; --all-floors every chip. */
static void print_floors(FILE *f, const run_record *r) {
    json_build b = {1};
    cJSON *root = cJSON_CreateObject();
    if (!root) return;
    report_add_counters(&b, root, r);
    const cJSON *counters = cJSON_GetObjectItemCaseSensitive(root, "counters");
    const rec_machine *m = &r->machine;
    const chip_info *self = m->collected && m->gpu_name[0] ? chip_find(m->gpu_name, m->gpu_cores) : NULL;
    if (b.ok && counters) floor_model_print(f, counters, self, r->all_floors);
    cJSON_Delete(root);
}

void table_print_counters(FILE *f, const run_record *r) {
    if (!r->counters_asked) return;
    const rec_counters *c = r->counters;
    if (!c) {
        fprintf(f, "  counters: not available: %s\n", r->counters_unavailable);
        return;
    }
    const rc_dispatch *t = &c->total;
    fprintf(f, "  counters (exact; one counted run of %d dispatch%s on the software device's counting variant):\n",
            c->ndispatches, c->ndispatches == 1 ? "" : "es");
    fprintf(f, "    device ");
    mem_line(f, &t->device);
    work_lines(f, t, "    ");
    uint64_t flops = t->flops_float + t->flops_half + t->flops_bfloat;
    if (t->device.distinct_bytes)
        fprintf(f, "    arithmetic intensity %.3f flop per distinct device byte\n",
                (double)flops / (double)t->device.distinct_bytes);
    for (int i = 0; i < t->nbuffers; i++) {
        fprintf(f, "    buffer %-10s ", t->buffers[i].name);
        mem_line(f, &t->buffers[i].m);
    }
    print_floors(f, r);
    if (c->ndispatches < 2) return;
    for (int i = 0; i < c->ndispatches; i++) {
        const rc_dispatch *d = &c->dispatches[i];
        fprintf(f, "    dispatch %d %s%s%s: ", i, d->stage, d->stage[0] ? " " : "", d->function);
        mem_line(f, &d->device);
        work_lines(f, d, "      ");
    }
}
