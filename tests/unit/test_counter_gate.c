/* test_counter_gate.c — compare's verdict on exact counters (report/counter_gate.h)
 * on hand-written records: each gated counter regressing alone (the bug each exists
 * for), identical counts (the control: "same"), the relative tolerance at its edge,
 * improvements, a regression winning over an improvement, a count from zero, ratios
 * null on a side (not compared), and the reasons a pair is not judged. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/counter_gate.h"
#include "test.h"

typedef struct totals {
    double load, store, lines, flops, tg_barriers, simd_barriers;
    const char *lanes, *coalescing; /* JSON text: a number or null */
} totals;

static const totals base_totals = {1000, 1000, 16, 500, 2, 1, "1.0", "0.5"};

static cJSON *rec_with(const totals *t) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"op\":\"x\",\"counters\":{\"version\":1,\"total\":{"
             "\"device\":{\"load_bytes\":%.0f,\"store_bytes\":%.0f,\"distinct_lines\":%.0f,"
             "\"coalescing\":{\"efficiency\":%s}},\"flops\":{\"total\":%.0f},"
             "\"barriers\":{\"threadgroup\":%.0f,\"simdgroup\":%.0f},\"simd\":{\"lane_utilisation\":%s}}}}",
             t->load, t->store, t->lines, t->coalescing, t->flops, t->tg_barriers, t->simd_barriers, t->lanes);
    return cJSON_Parse(text);
}

static const char *verdict_of(const totals *nt, double tol, counter_verdict *v) {
    cJSON *b = rec_with(&base_totals), *n = rec_with(nt);
    counter_gate_judge(b, n, tol, v);
    cJSON_Delete(b);
    cJSON_Delete(n);
    return v->verdict;
}

TEST(counter_gate_each_metric) {
    counter_verdict v;
    totals t = base_totals;
    CHECK(strcmp(verdict_of(&t, 0, &v), "same") == 0 && v.judged);
    CHECK_MSG(strstr(v.note, "6 counters within 0%") != NULL, "%s", v.note);
    t.load += 1; /* one more byte requested: exact counts, any change counts */
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[0].regressed);
    CHECK_MSG(strstr(v.note, "requested device bytes 2000 -> 2001") != NULL, "%s", v.note);
    t = base_totals, t.lines = 17;
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[1].regressed);
    t = base_totals, t.flops = 501;
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[2].regressed);
    t = base_totals, t.simd_barriers = 2; /* threadgroup + simdgroup */
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[3].regressed);
    CHECK_NEAR(v.m[3].base, 3, 0);
    t = base_totals, t.lanes = "0.75"; /* a fall is worse */
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[4].regressed);
    t = base_totals, t.coalescing = "0.25";
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0 && v.m[5].regressed);
    /* improvements: fewer bytes, better coalescing */
    t = base_totals, t.store = 500, t.coalescing = "1.0";
    CHECK(strcmp(verdict_of(&t, 0, &v), "improvement") == 0 && v.m[0].improved && v.m[5].improved);
    CHECK_MSG(strstr(v.note, "requested device bytes") && strstr(v.note, "coalescing"), "%s", v.note);
    /* a regression wins over an improvement elsewhere */
    t = base_totals, t.store = 500, t.flops = 600;
    CHECK(strcmp(verdict_of(&t, 0, &v), "regression") == 0);
    CHECK_MSG(strstr(v.note, "flops") && !strstr(v.note, "bytes"), "%s", v.note);
}

TEST(counter_gate_tolerance_zero_and_null) {
    counter_verdict v;
    totals t = base_totals;
    t.load = 1100; /* +5% of 2000 requested */
    CHECK(strcmp(verdict_of(&t, 0.05, &v), "same") == 0);
    CHECK(strcmp(verdict_of(&t, 0.0499, &v), "regression") == 0);
    CHECK_NEAR(v.m[0].change_pct, 5.0, 1e-9);
    /* from zero: any count is a regression, with no percentage */
    t = base_totals;
    static const totals zero_barriers = {1000, 1000, 16, 500, 0, 0, "1.0", "0.5"};
    cJSON *b = rec_with(&zero_barriers), *n = rec_with(&t);
    counter_gate_judge(b, n, 10, &v);
    CHECK(strcmp(v.verdict, "regression") == 0 && v.m[3].regressed && isnan(v.m[3].change_pct));
    cJSON_Delete(n);
    /* a ratio null on one side (nothing to divide) is not compared, not a regression */
    t = zero_barriers, t.lanes = "null";
    n = rec_with(&t);
    counter_gate_judge(b, n, 0, &v);
    CHECK(strcmp(v.verdict, "same") == 0 && !v.m[4].known);
    CHECK_MSG(strstr(v.note, "5 counters") != NULL, "%s", v.note);
    cJSON_Delete(n);
    cJSON_Delete(b);
}

TEST(counter_gate_not_judged) {
    counter_verdict v;
    cJSON *with = rec_with(&base_totals);
    cJSON *without = cJSON_Parse("{\"op\":\"x\"}");
    cJSON *metal = cJSON_Parse("{\"op\":\"x\",\"counters\":null,\"counters_unavailable\":\"Metal cannot count\"}");
    cJSON *bare = cJSON_Parse("{\"op\":\"x\",\"counters\":{\"version\":1}}");
    counter_gate_judge(with, without, 0, &v);
    CHECK(!v.judged && strcmp(v.verdict, "not judged") == 0);
    CHECK_MSG(strstr(v.note, "no counters in NEW") != NULL, "%s", v.note);
    counter_gate_judge(without, with, 0, &v);
    CHECK_MSG(!v.judged && strstr(v.note, "no counters in BASE") != NULL, "%s", v.note);
    counter_gate_judge(without, without, 0, &v);
    CHECK_MSG(!v.judged && strstr(v.note, "either side") != NULL, "%s", v.note);
    counter_gate_judge(metal, metal, 0, &v);
    CHECK_MSG(!v.judged && strstr(v.note, "BASE could not count: Metal cannot count") != NULL, "%s", v.note);
    counter_gate_judge(with, bare, 0, &v);
    CHECK_MSG(!v.judged && strstr(v.note, "NEW's counters have no total") != NULL, "%s", v.note);
    const cJSON *c;
    const char *why;
    CHECK(counters_of(metal, &c, &why) == COUNTERS_UNAVAILABLE && !c && strcmp(why, "Metal cannot count") == 0);
    CHECK(counters_of(with, &c, &why) == COUNTERS_PRESENT && c != NULL);
    cJSON_Delete(with), cJSON_Delete(without), cJSON_Delete(metal), cJSON_Delete(bare);
}
