/* launch_limits.c — the launch limits as a run record's warnings (launch_limits.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu_limits.h"
#include "runner/launch_limits.h"

/* What each limit means, said once per warning; the stages that break it follow. */
static const char *const limit_head[GPU_NLIMITS] = {
    [GPU_LIMIT_THREADS] = "threads per threadgroup over the 1024 every Apple GPU family allows (Metal feature set "
                          "tables): the launch fails on a Mac;",
    [GPU_LIMIT_THREADS_LOW] = "threads per threadgroup over 896, the maxTotalThreadsPerThreadgroup an M2 Ultra gives "
                              "register-heavy pipelines (Blaizzy/mlx-vlm#1799): the launch can fail there (size it "
                              "from the pipeline's maxTotalThreadsPerThreadgroup);",
    [GPU_LIMIT_SIMD_PARTIAL] = "threads per threadgroup not a multiple of the 32-lane simdgroup: the last simdgroup "
                               "of every threadgroup runs with idle lanes;",
    [GPU_LIMIT_TGMEM] = "threadgroup memory over the 32 KiB (32768 bytes) every Apple GPU family allows per "
                        "threadgroup (Metal feature set tables): the launch fails on a Mac;",
    [GPU_LIMIT_TGMEM_OCCUPANCY] = "low occupancy: threadgroup memory lets fewer than 768 threads share a GPU core "
                                  "(the count a core keeps even for register-heavy kernels; 64 KiB of threadgroup "
                                  "memory per core on M1/M2, philipturner/metal-benchmarks):",
};

/* How a stage is named in a warning: the op's stage name, else its function (a
 * kernel case's launches are numbered, which says little alone). */
static void stage_label(const run_record *rec, int s, char *out, size_t n) {
    const rec_stage *st = &rec->stages[s];
    int numbered = st->name[0] != 0;
    for (const char *p = st->name; *p; p++) numbered &= isdigit((unsigned char)*p) != 0;
    if (st->name[0] && !numbered)
        snprintf(out, n, "%s", st->name);
    else if (numbered && rec->nstages > 1)
        snprintf(out, n, "launch %s (%s)", st->name, st->function[0] ? st->function : "?");
    else
        snprintf(out, n, "%s", st->function[0] ? st->function : "the kernel");
}

/* The stage's facts that matter for limit k. */
static void stage_item(const run_record *rec, int s, gpu_limit k, char *out, size_t n) {
    const rec_stage *st = &rec->stages[s];
    char label[160];
    stage_label(rec, s, label, sizeof label);
    uint64_t threads = (uint64_t)st->tg[0] * st->tg[1] * st->tg[2];
    uint32_t fit = gpu_limits_tgs_per_core(st->tgmem_bytes);
    switch (k) {
    case GPU_LIMIT_TGMEM:
        snprintf(out, n, " %s %" PRIu32 " bytes", label, st->tgmem_bytes);
        break;
    case GPU_LIMIT_TGMEM_OCCUPANCY:
        snprintf(out, n, " %s %" PRIu32 " bytes x %" PRIu64 " threads: %" PRIu32 " threadgroup%s, %" PRIu64
                 " threads a core", label, st->tgmem_bytes, threads, fit, fit == 1 ? "" : "s", fit * threads);
        break;
    case GPU_LIMIT_SIMD_PARTIAL:
        snprintf(out, n, " %s %" PRIu64 " (%" PRIu32 "x%" PRIu32 "x%" PRIu32 ": %" PRIu64 " of 32 lanes in the last)",
                 label, threads, st->tg[0], st->tg[1], st->tg[2], threads % GPU_SIMD_WIDTH);
        break;
    default:
        snprintf(out, n, " %s %" PRIu64 " (%" PRIu32 "x%" PRIu32 "x%" PRIu32 ")", label, threads, st->tg[0],
                 st->tg[1], st->tg[2]);
        break;
    }
}

/* One warning for limit k over the stages in masks[], or nothing when none breaks it. */
static void warn_limit(run_record *rec, const unsigned *masks, int nst, gpu_limit k) {
    char text[sizeof rec->warnings[0]];
    size_t len = (size_t)snprintf(text, sizeof text, "%s", limit_head[k]);
    int listed = 0, left = 0;
    for (int s = 0; s < nst; s++) {
        if (!(masks[s] & (1u << k))) continue;
        char item[240];
        stage_item(rec, s, k, item, sizeof item);
        /* room for this item, a separator and a closing "and N more" */
        if (len + strlen(item) + 2 + 24 < sizeof text) {
            len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", listed ? "," : "", item);
            listed++;
        } else {
            left++;
        }
    }
    if (!listed) return;
    if (left) snprintf(text + len, sizeof text - len, " and %d more", left);
    run_record_warn(rec, text);
}

/* Drops the limit warnings an earlier call added: a kernel case's record is described
 * twice (as the runner's op, then from the case's own launches), and the second
 * description is the one that stands. */
static void drop_limit_warnings(run_record *rec) {
    int kept = 0;
    for (int i = 0; i < rec->nwarnings && i < REC_MAX_WARNINGS; i++) {
        int ours = 0;
        for (int k = 0; k < GPU_NLIMITS && !ours; k++)
            ours = strncmp(rec->warnings[i], limit_head[k], strlen(limit_head[k])) == 0;
        if (ours) continue;
        if (kept != i) memcpy(rec->warnings[kept], rec->warnings[i], sizeof rec->warnings[0]);
        kept++;
    }
    rec->nwarnings = kept;
}

void launch_limits_warn(run_record *rec) {
    unsigned masks[REC_MAX_STAGES];
    drop_limit_warnings(rec);
    int nst = rec->nstages < REC_MAX_STAGES ? rec->nstages : REC_MAX_STAGES;
    for (int s = 0; s < nst; s++) masks[s] = gpu_limits_check(rec->stages[s].tg, rec->stages[s].tgmem_bytes);
    for (int k = 0; k < GPU_NLIMITS; k++) warn_limit(rec, masks, nst, (gpu_limit)k);
}
