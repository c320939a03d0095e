/* counter_gate.h — judging two records' exact counters (the software device's
 * `counters`, results/README.md): `gdnbench compare`'s noise-free verdict beside the
 * timing one.  The counts are exact and deterministic, so any change is real; the
 * tolerance (relative, default 0) is for changes a user accepts.
 *
 * Gated, from each record's counters.total (an increase is a regression unless said):
 *   requested device bytes   device.load_bytes + device.store_bytes
 *   distinct lines           device.distinct_lines (128-byte lines: a floor on DRAM traffic)
 *   flops                    flops.total
 *   barriers                 barriers.threadgroup + barriers.simdgroup
 *   lane utilisation         simd.lane_utilisation (a fall is a regression)
 *   coalescing               device.coalescing.efficiency (a fall is a regression)
 * A pair is judged only when both records carry a non-null `counters`; otherwise the
 * verdict is "not judged" with the reason (a side run without --counters, a backend
 * that cannot count and said why in `counters_unavailable`).  A metric null on a
 * side (a ratio of nothing: no simd instructions, no device accesses) is not compared. */
#ifndef GDN_COUNTER_GATE_H
#define GDN_COUNTER_GATE_H

#include <cjson/cJSON.h>

typedef enum counters_state {
    COUNTERS_ABSENT = 0,   /* no `counters` key: run without --counters (or an older report) */
    COUNTERS_UNAVAILABLE,  /* `counters: null`: the backend cannot count */
    COUNTERS_MALFORMED,    /* a `counters` object without a usable total */
    COUNTERS_PRESENT
} counters_state;

/* What a record says of its counters.  *counters: the object when present; *why: the
 * record's `counters_unavailable` sentence (or a fallback) when unavailable. */
counters_state counters_of(const cJSON *rec, const cJSON **counters, const char **why);

#define COUNTER_GATE_METRICS 6

typedef struct counter_metric {
    const char *name;      /* "requested device bytes" */
    const char *key;       /* "requested_device_bytes": the JSON name */
    int fall_is_worse;     /* 1: lane utilisation, coalescing */
    int known;             /* a number on both sides */
    double base, new, change_pct;  /* change_pct: NAN when base is 0 */
    int regressed, improved;
} counter_metric;

typedef struct counter_verdict {
    int judged;
    const char *verdict;   /* "regression" | "improvement" | "same" | "not judged" */
    char note[480];        /* what changed, or why not judged */
    counter_metric m[COUNTER_GATE_METRICS];
} counter_verdict;

/* Judges NEW's counters against BASE's with a relative tolerance (0: any change
 * counts).  A regression wins over improvements in other metrics. */
void counter_gate_judge(const cJSON *base_rec, const cJSON *new_rec, double tolerance, counter_verdict *out);

#endif
