/* counter_gate.c — compare's verdict on exact counters (counter_gate.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/counter_gate.h"

static const cJSON *child(const cJSON *o, const char *key) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

counters_state counters_of(const cJSON *rec, const cJSON **counters, const char **why) {
    const cJSON *c = child(rec, "counters");
    *counters = NULL;
    *why = NULL;
    if (!c) return COUNTERS_ABSENT;
    if (cJSON_IsNull(c)) {
        const cJSON *w = child(rec, "counters_unavailable");
        *why = cJSON_IsString(w) && w->valuestring[0] ? w->valuestring : "the backend cannot count";
        return COUNTERS_UNAVAILABLE;
    }
    if (!cJSON_IsObject(child(c, "total"))) return COUNTERS_MALFORMED;
    *counters = c;
    return COUNTERS_PRESENT;
}

/* The metric from counters.total: *known = 0 when a part is absent, null or negative. */
static double metric_value(const cJSON *total, int k, int *known) {
    static const char *const path[COUNTER_GATE_METRICS][2][3] = {
        {{"device", "load_bytes", NULL}, {"device", "store_bytes", NULL}},
        {{"device", "distinct_lines", NULL}, {NULL}},
        {{"flops", "total", NULL}, {NULL}},
        {{"barriers", "threadgroup", NULL}, {"barriers", "simdgroup", NULL}},
        {{"simd", "lane_utilisation", NULL}, {NULL}},
        {{"device", "coalescing", "efficiency"}, {NULL}},
    };
    double sum = 0;
    *known = 1;
    for (int part = 0; part < 2 && path[k][part][0]; part++) {
        const cJSON *v = total;
        for (int d = 0; d < 3 && path[k][part][d]; d++) v = child(v, path[k][part][d]);
        if (!cJSON_IsNumber(v) || v->valuedouble < 0) *known = 0;
        else sum += v->valuedouble;
    }
    return sum;
}

static const struct {
    const char *name, *key;
    int fall_is_worse;
} metrics[COUNTER_GATE_METRICS] = {
    {"requested device bytes", "requested_device_bytes", 0},
    {"distinct lines", "distinct_lines", 0},
    {"flops", "flops", 0},
    {"barriers", "barriers", 0},
    {"lane utilisation", "lane_utilisation", 1},
    {"coalescing", "coalescing_efficiency", 1},
};

/* Why a side cannot be judged, into out (side: "BASE" or "NEW"). */
static void side_reason(counters_state s, const char *why, const char *side, char *out, size_t n) {
    if (s == COUNTERS_ABSENT)
        snprintf(out, n, "no counters in %s (run it with --counters on the software device)", side);
    else if (s == COUNTERS_UNAVAILABLE)
        snprintf(out, n, "%s could not count: %s", side, why);
    else
        snprintf(out, n, "%s's counters have no total (not this gdnbench's counters)", side);
}

/* One metric: base -> new, against the tolerance. */
static void judge_metric(counter_metric *m, double tolerance) {
    m->change_pct = m->base != 0 ? 100.0 * (m->new - m->base) / m->base : NAN;
    double up = m->base * (1 + tolerance), down = m->base * (1 - tolerance);
    int rose = m->new > up, fell = m->new < down;
    m->regressed = m->fall_is_worse ? fell : rose;
    m->improved = m->fall_is_worse ? rose : fell;
}

static void append_change(char *note, size_t n, const counter_metric *m) {
    size_t len = strlen(note);
    if (len >= n) return;
    const char *fmt = m->fall_is_worse ? "%s%s %.4g -> %.4g" : "%s%s %.0f -> %.0f";
    int w = snprintf(note + len, n - len, fmt, len ? ", " : "", m->name, m->base, m->new);
    if (w > 0 && isfinite(m->change_pct) && len + (size_t)w < n)
        snprintf(note + len + (size_t)w, n - len - (size_t)w, " (%+.1f%%)", m->change_pct);
}

void counter_gate_judge(const cJSON *base_rec, const cJSON *new_rec, double tolerance, counter_verdict *out) {
    memset(out, 0, sizeof *out);
    out->verdict = "not judged";
    const cJSON *cb, *cn;
    const char *wb, *wn;
    counters_state sb = counters_of(base_rec, &cb, &wb), sn = counters_of(new_rec, &cn, &wn);
    if (sb == COUNTERS_ABSENT && sn == COUNTERS_ABSENT) {
        snprintf(out->note, sizeof out->note, "no counters on either side (run both with --counters on the "
                                              "software device)");
        return;
    }
    if (sb != COUNTERS_PRESENT || sn != COUNTERS_PRESENT) {
        side_reason(sb != COUNTERS_PRESENT ? sb : sn, sb != COUNTERS_PRESENT ? wb : wn,
                    sb != COUNTERS_PRESENT ? "BASE" : "NEW", out->note, sizeof out->note);
        return;
    }
    out->judged = 1;
    int regressed = 0, improved = 0, compared = 0;
    const cJSON *tb = child(cb, "total"), *tn = child(cn, "total");
    for (int k = 0; k < COUNTER_GATE_METRICS; k++) {
        counter_metric *m = &out->m[k];
        int kb, kn;
        m->name = metrics[k].name;
        m->key = metrics[k].key;
        m->fall_is_worse = metrics[k].fall_is_worse;
        m->base = metric_value(tb, k, &kb);
        m->new = metric_value(tn, k, &kn);
        m->known = kb && kn;
        if (!m->known) continue;
        compared++;
        judge_metric(m, tolerance);
        regressed += m->regressed;
        improved += m->improved;
    }
    /* the note lists what decided the verdict: the regressions, else the improvements */
    for (int k = 0; k < COUNTER_GATE_METRICS; k++)
        if (out->m[k].known && (regressed ? out->m[k].regressed : out->m[k].improved))
            append_change(out->note, sizeof out->note, &out->m[k]);
    out->verdict = regressed ? "regression" : improved ? "improvement" : "same";
    if (!regressed && !improved)
        snprintf(out->note, sizeof out->note, "%d counter%s within %g%%", compared, compared == 1 ? "" : "s",
                 100 * tolerance);
}
