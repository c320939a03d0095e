/* cmd_compare.c — `gdnbench compare BASE NEW`: did NEW get slower or break?
 *
 * Records are paired by (op, kernel function and constants, shape — a kernel case's
 * name for a case, device name and backend).  A pair whose kernel source hash is the same is preferred; records that
 * differ only in the source hash pair next (the usual case: the kernel was edited)
 * and are marked "kernel changed".  A kernel compiled with fast math on one side only
 * (kernel.fast_math) is a changed kernel too: fast math changes the code the compiler
 * emits, so such a pair is marked, never silently taken as the same kernel.  Records
 * on different backends or devices are
 * never paired; they are listed as unpaired with that reason.
 *
 * Per pair: medians, change in %, and a two-sided Mann-Whitney U test on the
 * timing samples (core/stats.h).  Verdicts:
 *   regression   slower by more than --threshold % with p < --alpha, or a
 *                correctness drop (status pass -> fail/error), whatever the timing;
 *   improvement  faster by more than the threshold with p < alpha, or fail -> pass;
 *   failing      not pass on either side (NEW still fails its checks);
 *   noisy        fewer than 5 samples on a side, or a change beyond the threshold
 *                that the test cannot tell from noise (p >= alpha);
 *   same         otherwise.
 * Machine state: a pair whose records' machine states differ in what moves timings
 * by tens of percent (thermal state before/after the runs, Low Power Mode, power
 * source: the JSON `environment`) is not compared — compare exits 2 naming the
 * difference, since a "regression" there may be the machine's — unless
 * --ignore-machine-state, which compares anyway and says so in the pair's note.
 * Fields recorded on one side only (older reports) are not a difference.
 *
 * Counters (issue 31): beside the timing verdict, each pair gets a verdict on the
 * records' exact counters (report/counter_gate.h: requested device bytes, distinct
 * lines, flops, barriers up, or lane utilisation, coalescing down, beyond
 * --counter-tolerance), in a section of its own, shown when a record carries
 * `counters` or a counters flag is given; "not judged" with the reason when a side has
 * none.  --counters-only leaves timing unjudged (correctness still is): CI on machines
 * whose timings mean nothing.
 *
 * Exit: 1 on any regression (timing, correctness or counters) or any NEW record that
 * is not pass (report.md: "regression or correctness failure"), 0 otherwise, 2 on
 * unreadable input, a different schema, nothing to pair, differing machine states, or
 * --counters-only with no pair that has counters on both sides. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "core/stats.h"
#include "report/counter_gate.h"
#include "report/junit.h"
#include "report/report_load.h"
#include "runner/record.h"

#define CMP_MIN_SAMPLES 5
#define KEY_LEN 1024

enum { FMT_TABLE, FMT_MARKDOWN, FMT_JSON };

typedef struct cmp_pair {
    const report_item *base, *new;
    int kernel_changed;
    char changed[96];      /* what changed when kernel_changed: source, fast math */
    double old_median, new_median, change_pct, p;
    int n_old, n_new;
    const char *verdict;
    char note[600];
    int machine_differs;
    char machine[300];     /* how the machine states differ, or what is marked */
    counter_verdict counters;  /* the verdict on the exact counters */
} cmp_pair;

typedef struct cmp_unpaired {
    const report_item *it;
    const char *side;      /* "BASE" or "NEW" */
    char reason[240];
} cmp_unpaired;

typedef struct cmp_result {
    cmp_pair *pairs;
    int npairs;
    cmp_unpaired *unpaired;
    int nunpaired;
    int regressions, improvements, same, noisy, failing, new_failures, timing_not_judged;
    /* the counters section: shown when show_counters */
    int show_counters;
    double counter_tolerance;
    int counters_only;
    int counter_regressions, counter_improvements, counter_same, counter_not_judged;
} cmp_result;

static void usage(FILE *f) {
    fprintf(f,
            "usage: gdnbench compare BASE NEW [--threshold PCT] [--alpha A] [--format table|markdown|json]\n"
            "                        [--counter-tolerance F] [--counters-only] [--junit FILE]\n"
            "  BASE, NEW     JSON reports (one record or an array) or directories of *.json\n"
            "  --threshold   smallest change in median time that counts, in %% (default 5)\n"
            "  --alpha       significance level of the Mann-Whitney U test (default 0.01)\n"
            "  --format      table (default), markdown (for PR comments) or json\n"
            "  --junit FILE  also JUnit XML: a test case per pair (a regression or failing pair fails),\n"
            "                unpaired records skipped (a failing one in NEW fails)\n"
            "  --ignore-machine-state  compare pairs whose machine states differ (thermal state,\n"
            "                Low Power Mode, power source) instead of refusing\n"
            "  --counter-tolerance F  relative change of an exact counter that is not yet a\n"
            "                regression (default 0: the counts are exact, any change is real)\n"
            "  --counters-only  judge the exact counters alone, not timing (CI on machines whose\n"
            "                timings mean nothing: the software device, a paravirtual GPU);\n"
            "                correctness still counts\n"
            "Pairs records by op, kernel, shape and device (never across backends).\n"
            "Counters (records run with --counters on the software device): more requested\n"
            "device bytes, distinct lines, flops or barriers, or less lane utilisation or\n"
            "coalescing, beyond the tolerance, is a regression, in its own section; a pair\n"
            "without counters on both sides is not judged, and the section says why.\n"
            "Exit 1 on a regression (timing, correctness or counters) or a failing check in NEW,\n"
            "0 otherwise, 2 on bad input, when paired records' machine states differ, or with\n"
            "--counters-only when a pair lacks counters on a side.\n");
}

/* ---- pairing keys -------------------------------------------------------- */

static void append(char *out, size_t n, const char *s) {
    size_t len = strlen(out);
    snprintf(out + len, n - len, "%s\x1f", s);
}

/* what: 0 = everything, 1 = without source hash, 2 = without hash and device */
/* "fast math on", "fast math off", or "fast math ?" for reports from before the field. */
static const char *fast_math_label(const cJSON *rec) {
    const cJSON *fm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "kernel"), "fast_math");
    return cJSON_IsBool(fm) ? (cJSON_IsTrue(fm) ? "fast math on" : "fast math off") : "fast math ?";
}

/* The shape column and key part: an op's dimensions, or a kernel case's name (a case
 * has no dimensions, and two cases of one function are different work). */
static void shape_of(const cJSON *rec, char *out, size_t n) {
    rj_shape_str(rec, out, n);
    const char *name = rj_str(rec, "case", "name", "");
    if (!out[0] && name[0]) snprintf(out, n, "case=%s", name);
}

static void record_key(const cJSON *rec, int what, char *out, size_t n) {
    out[0] = 0;
    append(out, n, rj_str(rec, "op", NULL, ""));
    append(out, n, rj_str(rec, "kernel", "function", "(cpu)"));
    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "kernel"), "constants");
    const cJSON *c;
    cJSON_ArrayForEach(c, consts) {
        char one[64];
        snprintf(one, sizeof one, "%g=%s", rj_num(c, "index", NULL, -1), rj_str(c, "value", NULL, ""));
        append(out, n, one);
    }
    char shape[512];
    shape_of(rec, shape, sizeof shape);
    append(out, n, shape);
    if (what == 0) {
        append(out, n, rj_str(rec, "kernel", "sha256", ""));
        append(out, n, fast_math_label(rec));
    }
    /* Stages from the user's files (--stage, --shader) are part of the source: a
     * record whose kkt stage was theirs is a changed kernel next to one that ran ours,
     * even where the first stage (kernel.*) is the same. */
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "launch"), "stages");
    cJSON_ArrayForEach(c, stages) {
        if (what != 0 || strcmp(rj_str(c, "origin", NULL, ""), "theirs") != 0) continue;
        char one[160];
        snprintf(one, sizeof one, "%s@%s", rj_str(c, "name", NULL, ""), rj_str(c, "sha256", NULL, ""));
        append(out, n, one);
    }
    if (what <= 1) {
        append(out, n, rj_str(rec, "device", "name", ""));
        append(out, n, rj_str(rec, "device", "backend", ""));
    }
}

static const char *kernel_label(const cJSON *rec) { return rj_str(rec, "kernel", "function", "(cpu)"); }

static const char *status_of(const cJSON *rec) { return rj_str(rec, "status", NULL, "error"); }

/* ---- verdicts ------------------------------------------------------------ */

static double median_of(const cJSON *rec, const double *samples, int n) {
    double m = rj_num(rec, "timing", "median", NAN);
    if (isfinite(m) || n == 0) return m;
    rec_stats s = {.n = n, .samples = (double *)samples};
    stats_compute(&s);
    return s.median;
}

static int judge(cmp_pair *p, double threshold, double alpha, int counters_only, cmp_result *res) {
    const cJSON *b = p->base->rec, *nw = p->new->rec;
    double *sb = NULL, *sn = NULL;
    if (rj_samples(b, &sb, &p->n_old) || rj_samples(nw, &sn, &p->n_new)) {
        free(sb);
        free(sn);
        return -1;
    }
    p->old_median = median_of(b, sb, p->n_old);
    p->new_median = median_of(nw, sn, p->n_new);
    p->change_pct = isfinite(p->old_median) && isfinite(p->new_median) && p->old_median > 0
                        ? 100.0 * (p->new_median - p->old_median) / p->old_median
                        : NAN;
    p->p = NAN;
    if (p->n_old > 0 && p->n_new > 0) p->p = mann_whitney_p(sb, p->n_old, sn, p->n_new, NULL);
    free(sb);
    free(sn);

    int old_pass = run_status_parse(status_of(b)) == RUN_PASS, new_pass = run_status_parse(status_of(nw)) == RUN_PASS;
    const char *kc = p->changed;
    if (old_pass && !new_pass) {
        p->verdict = "regression";
        snprintf(p->note, sizeof p->note, "correctness: pass -> %s%s", status_of(nw), kc);
        res->regressions++;
    } else if (!old_pass && !new_pass) {
        p->verdict = "failing";
        snprintf(p->note, sizeof p->note, "correctness: %s -> %s%s", status_of(b), status_of(nw), kc);
        res->failing++;
    } else if (!old_pass && new_pass) {
        p->verdict = "improvement";
        snprintf(p->note, sizeof p->note, "correctness: %s -> pass%s", status_of(b), kc);
        res->improvements++;
    } else if (counters_only) {
        p->verdict = "not judged";
        snprintf(p->note, sizeof p->note, "timing not judged (--counters-only)%s", kc);
        res->timing_not_judged++;
    } else if (p->n_old < CMP_MIN_SAMPLES || p->n_new < CMP_MIN_SAMPLES || !isfinite(p->change_pct)) {
        p->verdict = "noisy";
        snprintf(p->note, sizeof p->note, "too few samples (%d vs %d; need %d)%s", p->n_old, p->n_new,
                 CMP_MIN_SAMPLES, kc);
        res->noisy++;
    } else if (fabs(p->change_pct) > threshold && p->p < alpha) {
        int slower = p->change_pct > 0;
        p->verdict = slower ? "regression" : "improvement";
        snprintf(p->note, sizeof p->note, "%s by %.1f%% (p = %.2g)%s", slower ? "slower" : "faster",
                 fabs(p->change_pct), p->p, kc);
        if (slower)
            res->regressions++;
        else
            res->improvements++;
    } else if (fabs(p->change_pct) > threshold) {
        p->verdict = "noisy";
        snprintf(p->note, sizeof p->note, "%+.1f%% but p = %.2g >= alpha %g: not distinguishable from noise%s",
                 p->change_pct, p->p, alpha, kc);
        res->noisy++;
    } else {
        p->verdict = "same";
        snprintf(p->note, sizeof p->note, "within %g%%%s", threshold, kc);
        res->same++;
    }
    return 0;
}

/* ---- pairing ------------------------------------------------------------- */

typedef struct keyed {
    char full[KEY_LEN], nosha[KEY_LEN], nodev[KEY_LEN];
    int taken;
} keyed;

static keyed *make_keys(const report_set *s) {
    keyed *k = calloc((size_t)(s->n ? s->n : 1), sizeof *k);
    for (int i = 0; k && i < s->n; i++) {
        record_key(s->items[i].rec, 0, k[i].full, KEY_LEN);
        record_key(s->items[i].rec, 1, k[i].nosha, KEY_LEN);
        record_key(s->items[i].rec, 2, k[i].nodev, KEY_LEN);
    }
    return k;
}

static void unpaired_reason(cmp_unpaired *u, const report_item *it, const keyed *mine, const report_set *other,
                            const keyed *theirs, const char *other_side) {
    /* Taken records count too: the point is to say why this one has no partner. */
    for (int j = 0; j < other->n; j++) {
        if (strcmp(mine->nodev, theirs[j].nodev) != 0) continue;
        const cJSON *o = other->items[j].rec;
        const char *b1 = rj_str(it->rec, "device", "backend", "?"), *b2 = rj_str(o, "device", "backend", "?");
        if (strcmp(b1, b2) != 0) {
            snprintf(u->reason, sizeof u->reason,
                     "backend differs (%s here, %s in %s): records are never compared across backends", b1, b2,
                     other_side);
        } else {
            snprintf(u->reason, sizeof u->reason, "device differs (\"%s\" here, \"%s\" in %s)",
                     rj_str(it->rec, "device", "name", "?"), rj_str(o, "device", "name", "?"), other_side);
        }
        return;
    }
    snprintf(u->reason, sizeof u->reason, "no record with this op, kernel, shape and device in %s", other_side);
}

/* p->changed: what differs between the two kernels of an edited pair.  Returns 0 when
 * nothing does after all: the same source, fast math recorded on one side only (a
 * report from before the field is not a difference, as with the machine state). */
static int describe_change(cmp_pair *p) {
    const cJSON *b = p->base->rec, *nw = p->new->rec;
    int src = strcmp(rj_str(b, "kernel", "sha256", ""), rj_str(nw, "kernel", "sha256", "")) != 0;
    const char *fb = fast_math_label(b), *fn = fast_math_label(nw);
    int fm = strcmp(fb, fn) != 0;
    size_t len = 0;
    p->changed[0] = 0;
    if (!src && (strcmp(fb, "fast math ?") == 0 || strcmp(fn, "fast math ?") == 0)) return 0;
    if (src || !fm) len += (size_t)snprintf(p->changed, sizeof p->changed, "; kernel source changed");
    if (fm && len < sizeof p->changed)
        snprintf(p->changed + len, sizeof p->changed - len, "; %s in BASE, %s in NEW", fb, fn);
    return 1;
}

static int pair_records(const report_set *base, const report_set *nw, cmp_result *res) {
    keyed *kb = make_keys(base), *kn = make_keys(nw);
    res->pairs = calloc((size_t)(base->n ? base->n : 1), sizeof *res->pairs);
    res->unpaired = calloc((size_t)(base->n + nw->n ? base->n + nw->n : 1), sizeof *res->unpaired);
    if (!kb || !kn || !res->pairs || !res->unpaired) {
        free(kb);
        free(kn);
        return -1;
    }
    /* Pass 0: same source hash; pass 1: edited kernel (hash differs). */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < base->n; i++) {
            if (kb[i].taken) continue;
            for (int j = 0; j < nw->n; j++) {
                if (kn[j].taken) continue;
                if (strcmp(pass == 0 ? kb[i].full : kb[i].nosha, pass == 0 ? kn[j].full : kn[j].nosha) != 0) continue;
                kb[i].taken = kn[j].taken = 1;
                cmp_pair *p = &res->pairs[res->npairs++];
                p->base = &base->items[i];
                p->new = &nw->items[j];
                p->kernel_changed = pass == 1;
                if (p->kernel_changed) p->kernel_changed = describe_change(p);
                break;
            }
        }
    }
    for (int i = 0; i < base->n; i++) {
        if (kb[i].taken) continue;
        cmp_unpaired *u = &res->unpaired[res->nunpaired++];
        u->it = &base->items[i];
        u->side = "BASE";
        unpaired_reason(u, u->it, &kb[i], nw, kn, "NEW");
    }
    for (int j = 0; j < nw->n; j++) {
        if (kn[j].taken) continue;
        cmp_unpaired *u = &res->unpaired[res->nunpaired++];
        u->it = &nw->items[j];
        u->side = "NEW";
        unpaired_reason(u, u->it, &kn[j], base, kb, "BASE");
        if (run_status_parse(status_of(u->it->rec)) != RUN_PASS) {
            size_t len = strlen(u->reason);
            snprintf(u->reason + len, sizeof u->reason - len, "; status %s", status_of(u->it->rec));
            res->new_failures++;
        }
    }
    free(kb);
    free(kn);
    return 0;
}

/* ---- machine state -------------------------------------------------------- */

/* Fills p->machine: how the two machine states differ, else which side is marked.
 * Returns 1 when they differ. */
static int machine_check(cmp_pair *p) {
    int unknown = 0;
    char marks[240];
    p->machine_differs = rj_machine_differs(p->base->rec, p->new->rec, "BASE", "NEW", p->machine, sizeof p->machine,
                                            &unknown);
    if (p->machine_differs) return 1;
    size_t len = 0;
    for (int side = 0; side < 2; side++) {
        const cJSON *rec = side == 0 ? p->base->rec : p->new->rec;
        if (rj_marked(rec, marks, sizeof marks) && len < sizeof p->machine) {
            int w = snprintf(p->machine + len, sizeof p->machine - len, "%s%s marked: %s", len ? "; " : "",
                             side == 0 ? "BASE" : "NEW", marks);
            if (w > 0) len += (size_t)w;
        }
    }
    if (unknown && len < sizeof p->machine)
        snprintf(p->machine + len, sizeof p->machine - len, "%smachine state not recorded on one side", len ? "; " : "");
    return 0;
}

static void append_note(cmp_pair *p, const char *what, const char *text) {
    if (!text[0]) return;
    size_t len = strlen(p->note);
    snprintf(p->note + len, sizeof p->note - len, "; %s%s", what, text);
}

/* ---- output -------------------------------------------------------------- */

static void fmt_us(char *out, size_t n, double v) {
    if (!isfinite(v))
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%.2f", v);
}

static void fmt_change(char *out, size_t n, double v) {
    if (!isfinite(v))
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%+.1f%%", v);
}

static void fmt_p(char *out, size_t n, double p) {
    if (!isfinite(p))
        snprintf(out, n, "-");
    else
        snprintf(out, n, "%.2g", p);
}

static void device_label(const cJSON *rec, char *out, size_t n) {
    snprintf(out, n, "%s (%s%s)", rj_str(rec, "device", "name", "?"), rj_str(rec, "device", "backend", "?"),
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "device"), "emulated"))
                 ? ", emulated"
                 : "");
}

typedef struct row {
    char cell[9][640];
} row;

static void pair_row(const cmp_pair *p, row *r) {
    const cJSON *rec = p->new->rec;
    snprintf(r->cell[0], sizeof r->cell[0], "%s", rj_str(rec, "op", NULL, "?"));
    snprintf(r->cell[1], sizeof r->cell[1], "%s", kernel_label(rec));
    shape_of(rec, r->cell[2], sizeof r->cell[2]);
    device_label(rec, r->cell[3], sizeof r->cell[3]);
    fmt_us(r->cell[4], sizeof r->cell[4], p->old_median);
    fmt_us(r->cell[5], sizeof r->cell[5], p->new_median);
    fmt_change(r->cell[6], sizeof r->cell[6], p->change_pct);
    fmt_p(r->cell[7], sizeof r->cell[7], p->p);
    snprintf(r->cell[8], sizeof r->cell[8], "%s: %s", p->verdict, p->note);
}

static void summary_line(FILE *f, const cmp_result *res, double threshold, double alpha) {
    fprintf(f, "%d pairs: %d regression%s, %d improvement%s, %d same, %d noisy, %d failing", res->npairs,
            res->regressions, res->regressions == 1 ? "" : "s", res->improvements, res->improvements == 1 ? "" : "s",
            res->same, res->noisy, res->failing);
    if (res->timing_not_judged) fprintf(f, ", %d timing not judged", res->timing_not_judged);
    fprintf(f, "; %d unpaired (threshold %g%%, alpha %g)\n", res->nunpaired, threshold, alpha);
    if (res->show_counters)
        fprintf(f, "counters: %d regression%s, %d improvement%s, %d same, %d not judged\n", res->counter_regressions,
                res->counter_regressions == 1 ? "" : "s", res->counter_improvements,
                res->counter_improvements == 1 ? "" : "s", res->counter_same, res->counter_not_judged);
}

/* The counters section of the table: one line per pair, its verdict and why. */
static void print_counters_table(FILE *f, const cmp_result *res) {
    if (!res->show_counters) return;
    fprintf(f, "\ncounters (exact counts of the software device; tolerance %g%%):\n", 100 * res->counter_tolerance);
    for (int i = 0; i < res->npairs; i++) {
        const cmp_pair *p = &res->pairs[i];
        char shape[256], dev[200];
        shape_of(p->new->rec, shape, sizeof shape);
        device_label(p->new->rec, dev, sizeof dev);
        fprintf(f, "  %s %s [%s] on %s: %s: %s\n", rj_str(p->new->rec, "op", NULL, "?"), kernel_label(p->new->rec),
                shape, dev, p->counters.verdict, p->counters.note);
    }
}

static void print_table(FILE *f, const cmp_result *res, double threshold, double alpha) {
    static const char *head[9] = {"op", "kernel", "shape", "device", "base us", "new us", "change", "p", "verdict"};
    row *rows = calloc((size_t)(res->npairs ? res->npairs : 1), sizeof *rows);
    if (!rows) return;
    int w[9];
    for (int c = 0; c < 9; c++) w[c] = (int)strlen(head[c]);
    for (int i = 0; i < res->npairs; i++) {
        pair_row(&res->pairs[i], &rows[i]);
        for (int c = 0; c < 8; c++)
            if ((int)strlen(rows[i].cell[c]) > w[c]) w[c] = (int)strlen(rows[i].cell[c]);
    }
    /* numbers right-aligned; the last column (verdict) unpadded */
    for (int c = 0; c < 8; c++) fprintf(f, c >= 4 ? "%*s  " : "%-*s  ", w[c], head[c]);
    fprintf(f, "%s\n", head[8]);
    for (int i = 0; i < res->npairs; i++) {
        for (int c = 0; c < 8; c++) fprintf(f, c >= 4 ? "%*s  " : "%-*s  ", w[c], rows[i].cell[c]);
        fprintf(f, "%s\n", rows[i].cell[8]);
    }
    free(rows);
    for (int i = 0; i < res->nunpaired; i++) {
        const cmp_unpaired *u = &res->unpaired[i];
        char shape[256], dev[200];
        shape_of(u->it->rec, shape, sizeof shape);
        device_label(u->it->rec, dev, sizeof dev);
        fprintf(f, "unpaired in %s: %s %s [%s] on %s (%s): %s\n", u->side, rj_str(u->it->rec, "op", NULL, "?"),
                kernel_label(u->it->rec), shape, dev, u->it->file, u->reason);
    }
    print_counters_table(f, res);
    summary_line(f, res, threshold, alpha);
}

/* Markdown cells: '|' would end the cell. */
static void md_cell(FILE *f, const char *s) {
    fputs("| ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
    fputc(' ', f);
}

static void print_markdown(FILE *f, const cmp_result *res, const char *base, const char *nw, double threshold,
                           double alpha) {
    fprintf(f, "### gdnbench compare\n\nBASE `%s` vs NEW `%s` (threshold %g%%, Mann-Whitney U at alpha %g)\n\n", base,
            nw, threshold, alpha);
    fprintf(f, "| verdict | op | kernel | shape | device | base (us) | new (us) | change | p | note |\n");
    fprintf(f, "|---|---|---|---|---|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < res->npairs; i++) {
        row r;
        pair_row(&res->pairs[i], &r);
        const char *v = res->pairs[i].verdict;
        char verdict[64];
        int bold = strcmp(v, "regression") == 0 || strcmp(v, "failing") == 0;
        snprintf(verdict, sizeof verdict, bold ? "**%s**" : "%s", v);
        md_cell(f, verdict);
        for (int c = 0; c < 8; c++) md_cell(f, r.cell[c]);
        md_cell(f, res->pairs[i].note);
        fputs("|\n", f);
    }
    if (res->nunpaired) {
        fprintf(f, "\nUnpaired records:\n\n");
        for (int i = 0; i < res->nunpaired; i++) {
            const cmp_unpaired *u = &res->unpaired[i];
            char shape[256], dev[200];
            shape_of(u->it->rec, shape, sizeof shape);
            device_label(u->it->rec, dev, sizeof dev);
            fprintf(f, "- %s: `%s` `%s` %s on %s — %s\n", u->side, rj_str(u->it->rec, "op", NULL, "?"),
                    kernel_label(u->it->rec), shape, dev, u->reason);
        }
    }
    if (res->show_counters) {
        fprintf(f, "\n#### Counters (exact counts of the software device; tolerance %g%%)\n\n", 100 * res->counter_tolerance);
        fprintf(f, "| verdict | op | kernel | shape | device | note |\n|---|---|---|---|---|---|\n");
        for (int i = 0; i < res->npairs; i++) {
            const cmp_pair *p = &res->pairs[i];
            char verdict[64], shape[256], dev[200];
            snprintf(verdict, sizeof verdict, strcmp(p->counters.verdict, "regression") ? "%s" : "**%s**",
                     p->counters.verdict);
            shape_of(p->new->rec, shape, sizeof shape);
            device_label(p->new->rec, dev, sizeof dev);
            md_cell(f, verdict);
            md_cell(f, rj_str(p->new->rec, "op", NULL, "?"));
            md_cell(f, kernel_label(p->new->rec));
            md_cell(f, shape);
            md_cell(f, dev);
            md_cell(f, p->counters.note);
            fputs("|\n", f);
        }
    }
    fputc('\n', f);
    summary_line(f, res, threshold, alpha);
}

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

/* The pair's "counters": verdict, note, and each gated counter on both sides. */
static void add_counters_json(cJSON *o, const counter_verdict *cv) {
    cJSON *c = cJSON_AddObjectToObject(o, "counters");
    if (!c) return;
    cJSON_AddBoolToObject(c, "judged", cv->judged);
    cJSON_AddStringToObject(c, "verdict", cv->verdict);
    cJSON_AddStringToObject(c, "note", cv->note);
    cJSON *metrics = cJSON_AddArrayToObject(c, "metrics");
    for (int k = 0; metrics && cv->judged && k < COUNTER_GATE_METRICS; k++) {
        const counter_metric *m = &cv->m[k];
        cJSON *one = cJSON_CreateObject();
        if (!one) return;
        cJSON_AddItemToArray(metrics, one);
        cJSON_AddStringToObject(one, "name", m->key);
        cJSON_AddStringToObject(one, "worse_when", m->fall_is_worse ? "lower" : "higher");
        cJSON_AddItemToObject(one, "base", m->known ? cJSON_CreateNumber(m->base) : cJSON_CreateNull());
        cJSON_AddItemToObject(one, "new", m->known ? cJSON_CreateNumber(m->new) : cJSON_CreateNull());
        cJSON_AddItemToObject(one, "change_pct", num_or_null(m->known ? m->change_pct : NAN));
        cJSON_AddBoolToObject(one, "regressed", m->regressed);
        cJSON_AddBoolToObject(one, "improved", m->improved);
    }
}

/* -1 when out of memory (the list ends there). */
static int add_pair_json(cJSON *pairs, const cmp_pair *p) {
    const cJSON *rec = p->new->rec;
    cJSON *o = cJSON_CreateObject();
    if (!o) return -1;
    cJSON_AddItemToArray(pairs, o);
    char shape[256];
    shape_of(rec, shape, sizeof shape);
    cJSON_AddStringToObject(o, "op", rj_str(rec, "op", NULL, "?"));
    cJSON_AddStringToObject(o, "kernel", kernel_label(rec));
    cJSON_AddStringToObject(o, "shape", shape);
    cJSON_AddStringToObject(o, "device", rj_str(rec, "device", "name", "?"));
    cJSON_AddStringToObject(o, "backend", rj_str(rec, "device", "backend", "?"));
    cJSON_AddBoolToObject(o, "kernel_changed", p->kernel_changed);
    cJSON_AddItemToObject(o, "base_median_us", num_or_null(p->old_median));
    cJSON_AddItemToObject(o, "new_median_us", num_or_null(p->new_median));
    cJSON_AddItemToObject(o, "change_pct", num_or_null(p->change_pct));
    cJSON_AddItemToObject(o, "p_value", num_or_null(p->p));
    cJSON_AddNumberToObject(o, "base_samples", p->n_old);
    cJSON_AddNumberToObject(o, "new_samples", p->n_new);
    cJSON_AddStringToObject(o, "base_status", status_of(p->base->rec));
    cJSON_AddStringToObject(o, "new_status", status_of(rec));
    cJSON_AddStringToObject(o, "verdict", p->verdict);
    cJSON_AddStringToObject(o, "note", p->note);
    cJSON_AddBoolToObject(o, "machine_state_differs", p->machine_differs);
    cJSON_AddStringToObject(o, "base_file", p->base->file);
    cJSON_AddStringToObject(o, "new_file", p->new->file);
    add_counters_json(o, &p->counters);
    return 0;
}

static int add_unpaired_json(cJSON *unpaired, const cmp_unpaired *u) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return -1;
    cJSON_AddItemToArray(unpaired, o);
    char shape[256];
    shape_of(u->it->rec, shape, sizeof shape);
    cJSON_AddStringToObject(o, "side", u->side);
    cJSON_AddStringToObject(o, "op", rj_str(u->it->rec, "op", NULL, "?"));
    cJSON_AddStringToObject(o, "kernel", kernel_label(u->it->rec));
    cJSON_AddStringToObject(o, "shape", shape);
    cJSON_AddStringToObject(o, "device", rj_str(u->it->rec, "device", "name", "?"));
    cJSON_AddStringToObject(o, "backend", rj_str(u->it->rec, "device", "backend", "?"));
    cJSON_AddStringToObject(o, "status", status_of(u->it->rec));
    cJSON_AddStringToObject(o, "reason", u->reason);
    cJSON_AddStringToObject(o, "file", u->it->file);
    return 0;
}

static int print_json(FILE *f, const cmp_result *res, const char *base, const char *nw, double threshold,
                      double alpha) {
    cJSON *root = cJSON_CreateObject();
    cJSON *pairs = cJSON_AddArrayToObject(root, "pairs");
    cJSON *unpaired = cJSON_AddArrayToObject(root, "unpaired");
    cJSON *summary = cJSON_AddObjectToObject(root, "summary");
    if (!root || !pairs || !unpaired || !summary) {
        cJSON_Delete(root);
        return -1;
    }
    cJSON_AddStringToObject(root, "base", base);
    cJSON_AddStringToObject(root, "new", nw);
    cJSON_AddNumberToObject(root, "threshold_pct", threshold);
    cJSON_AddNumberToObject(root, "alpha", alpha);
    cJSON_AddNumberToObject(root, "counter_tolerance", res->counter_tolerance);
    cJSON_AddBoolToObject(root, "counters_only", res->counters_only);
    for (int i = 0; i < res->npairs; i++)
        if (add_pair_json(pairs, &res->pairs[i])) break;
    for (int i = 0; i < res->nunpaired; i++)
        if (add_unpaired_json(unpaired, &res->unpaired[i])) break;
    cJSON_AddNumberToObject(summary, "pairs", res->npairs);
    cJSON_AddNumberToObject(summary, "regressions", res->regressions);
    cJSON_AddNumberToObject(summary, "improvements", res->improvements);
    cJSON_AddNumberToObject(summary, "same", res->same);
    cJSON_AddNumberToObject(summary, "noisy", res->noisy);
    cJSON_AddNumberToObject(summary, "failing", res->failing);
    cJSON_AddNumberToObject(summary, "unpaired", res->nunpaired);
    cJSON_AddNumberToObject(summary, "timing_not_judged", res->timing_not_judged);
    cJSON_AddNumberToObject(summary, "counter_regressions", res->counter_regressions);
    cJSON_AddNumberToObject(summary, "counter_improvements", res->counter_improvements);
    cJSON_AddNumberToObject(summary, "counter_same", res->counter_same);
    cJSON_AddNumberToObject(summary, "counters_not_judged", res->counter_not_judged);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return -1;
    fprintf(f, "%s\n", text);
    free(text);
    return 0;
}

/* ---- command ------------------------------------------------------------- */

static int parse_number(const char *flag, const char *s, double lo, double hi, double *out) {
    char *end;
    double v = strtod(s ? s : "", &end);
    if (s && *end == '%' && strcmp(flag, "--threshold") == 0) end++;
    if (!s || end == s || *end || !(v > lo && v < hi)) {
        fprintf(stderr, "gdnbench compare: %s %s: expected a number in (%g, %g)\n", flag, s ? s : "(missing)", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* --counter-tolerance F: a relative change, 0 (the default: any change counts) or more. */
static int parse_tolerance(const char *s, double *out) {
    char *end;
    double v = strtod(s ? s : "", &end);
    if (!s || end == s || *end || !(v >= 0 && v < 1e6)) {
        fprintf(stderr, "gdnbench compare: --counter-tolerance %s: expected a relative change >= 0, such as 0.01 "
                "for 1%% (default 0: the counts are exact)\n", s ? s : "(missing)");
        return -1;
    }
    *out = v;
    return 0;
}

/* The options of a comparison. */
typedef struct compare_cli {
    double threshold, alpha;
    double counter_tolerance;   /* --counter-tolerance F (relative) */
    int counter_flags;          /* a counters flag was given: show the section */
    int counters_only;          /* --counters-only */
    int format, ignore_machine;
    const char *paths[2];
    const char *junit;     /* --junit FILE */
} compare_cli;

/* argv[1..]: 0 to go on, or 1 with *status the exit status (any message printed). */
static int parse_args(int argc, char **argv, compare_cli *cc, int *status) {
    int npaths = 0;
    *status = EXIT_BAD_INPUT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            *status = EXIT_OK;
            return 1;
        } else if (strcmp(a, "--ignore-machine-state") == 0) {
            cc->ignore_machine = 1;
        } else if (strcmp(a, "--counters-only") == 0) {
            cc->counters_only = cc->counter_flags = 1;
        } else if (strcmp(a, "--counter-tolerance") == 0) {
            if (parse_tolerance(val, &cc->counter_tolerance)) return 1;
            cc->counter_flags = 1;
            i++;
        } else if (strcmp(a, "--threshold") == 0) {
            if (parse_number(a, val, 0, 1e6, &cc->threshold)) return 1;
            i++;
        } else if (strcmp(a, "--alpha") == 0) {
            if (parse_number(a, val, 0, 1, &cc->alpha)) return 1;
            i++;
        } else if (strcmp(a, "--junit") == 0) {
            if (!val) {
                fprintf(stderr, "gdnbench compare: --junit needs a file name (or - for stdout)\n");
                return 1;
            }
            cc->junit = val;
            i++;
        } else if (strcmp(a, "--format") == 0) {
            if (val && strcmp(val, "table") == 0)
                cc->format = FMT_TABLE;
            else if (val && strcmp(val, "markdown") == 0)
                cc->format = FMT_MARKDOWN;
            else if (val && strcmp(val, "json") == 0)
                cc->format = FMT_JSON;
            else {
                fprintf(stderr, "gdnbench compare: --format %s: expected table, markdown or json\n",
                        val ? val : "(missing)");
                return 1;
            }
            i++;
        } else if (a[0] == '-' && a[1] != 0) {
            fprintf(stderr, "gdnbench compare: unknown option %s (see gdnbench compare --help)\n", a);
            return 1;
        } else if (npaths < 2) {
            cc->paths[npaths++] = a;
        } else {
            fprintf(stderr, "gdnbench compare: unexpected argument %s: give exactly BASE and NEW\n", a);
            return 1;
        }
    }
    if (npaths != 2) {
        fprintf(stderr, "gdnbench compare: need BASE and NEW (report files or directories); see --help\n");
        return 1;
    }
    return 0;
}

/* Refuses (-1, said) when the machine state differs in some pair, unless told to
 * ignore it: a timing difference may then be the machine's, not the kernel's. */
static int check_machine_state(const compare_cli *cc, cmp_result *res) {
    int differing = 0, first_differing = -1;
    for (int i = 0; i < res->npairs; i++) {
        if (machine_check(&res->pairs[i]) && differing++ == 0) first_differing = i;
    }
    if (!differing || cc->ignore_machine) return 0;
    const cmp_pair *p = &res->pairs[first_differing];
    char shape[256];
    shape_of(p->new->rec, shape, sizeof shape);
    fprintf(stderr,
            "gdnbench compare: the machine state differs between BASE and NEW in %d of %d pairs (first: %s [%s]: "
            "%s), so a timing difference may be the machine's, not the kernel's: rerun under the same conditions, "
            "or pass --ignore-machine-state\n",
            differing, res->npairs, rj_str(p->new->rec, "op", NULL, "?"), shape, p->machine);
    return -1;
}

/* The counters section's test cases: one per pair (classname
 * gdnbench.compare.counters.OP), failing on a counter regression, skipped with the
 * reason when not judged.  0, or -1 out of memory. */
static int junit_counters(junit_doc *d, const cmp_result *res) {
    for (int i = 0; res->show_counters && i < res->npairs; i++) {
        const cmp_pair *p = &res->pairs[i];
        const cJSON *rec = p->new->rec;
        char classname[160], name[900], dev[200], shape[512], message[600];
        snprintf(classname, sizeof classname, "gdnbench.compare.counters.%s", rj_str(rec, "op", NULL, "?"));
        shape_of(rec, shape, sizeof shape);
        device_label(rec, dev, sizeof dev);
        snprintf(name, sizeof name, "%s %s on %s (counters)", kernel_label(rec), shape, dev);
        snprintf(message, sizeof message, "counters %s: %s", p->counters.verdict, p->counters.note);
        junit_outcome out = !p->counters.judged ? JUNIT_SKIPPED
                            : strcmp(p->counters.verdict, "regression") == 0 ? JUNIT_FAILURE
                                                                            : JUNIT_PASS;
        if (junit_case(d, classname, name, 0, out, message, NULL)) return -1;
    }
    return 0;
}

/* --junit: a test case per pair, failing on a regression or a pair NEW still fails;
 * unpaired records are skipped with the reason, or fail when NEW's record is not
 * pass (as the exit status counts them).  0, or -1 said. */
static int write_junit(const compare_cli *cc, const cmp_result *res) {
    junit_doc *d = junit_new("gdnbench compare");
    int rc = d ? 0 : -1;
    for (int i = 0; rc == 0 && i < res->npairs + res->nunpaired; i++) {
        int paired = i < res->npairs;
        const cmp_pair *p = paired ? &res->pairs[i] : NULL;
        const cmp_unpaired *u = paired ? NULL : &res->unpaired[i - res->npairs];
        const cJSON *rec = paired ? p->new->rec : u->it->rec;
        char classname[128], name[900], dev[200], shape[512], message[700];
        snprintf(classname, sizeof classname, "gdnbench.compare.%s", rj_str(rec, "op", NULL, "?"));
        shape_of(rec, shape, sizeof shape);
        device_label(rec, dev, sizeof dev);
        snprintf(name, sizeof name, "%s %s on %s%s%s", kernel_label(rec), shape, dev, paired ? "" : " (unpaired in ",
                 paired ? "" : u->side);
        if (!paired) strcat(name, ")");
        junit_outcome out = JUNIT_PASS;
        if (paired) {
            snprintf(message, sizeof message, "%s: %s", p->verdict, p->note);
            if (!strcmp(p->verdict, "regression") || !strcmp(p->verdict, "failing")) out = JUNIT_FAILURE;
        } else {
            snprintf(message, sizeof message, "%s", u->reason);
            int new_fails = !strcmp(u->side, "NEW") && run_status_parse(status_of(rec)) != RUN_PASS;
            out = new_fails ? JUNIT_FAILURE : JUNIT_SKIPPED;
        }
        rc = junit_case(d, classname, name, 0, out, message, NULL);
    }
    if (rc == 0) rc = junit_counters(d, res);
    char err[512] = "out of memory";
    if (rc == 0) rc = junit_write(d, cc->junit, err, sizeof err);
    if (rc != 0) fprintf(stderr, "gdnbench compare: --junit %s: %s\n", cc->junit, err);
    junit_free(d);
    return rc;
}

/* 1 when some record of s has a `counters` key (null included). */
static int any_counters(const report_set *s) {
    for (int i = 0; i < s->n; i++)
        if (cJSON_GetObjectItemCaseSensitive(s->items[i].rec, "counters")) return 1;
    return 0;
}

/* Every pair's counters verdict, and whether the section shows.  -1 (said) when
 * --counters-only finds a pair it cannot judge: a gate that judges nothing, or lets
 * through a kernel whose counting run failed (`counters: null`), must not pass. */
static int judge_counters(const compare_cli *cc, const report_set *base, const report_set *nw, cmp_result *res) {
    res->counter_tolerance = cc->counter_tolerance;
    res->counters_only = cc->counters_only;
    res->show_counters = cc->counter_flags || any_counters(base) || any_counters(nw);
    for (int i = 0; i < res->npairs; i++) {
        cmp_pair *p = &res->pairs[i];
        counter_gate_judge(p->base->rec, p->new->rec, cc->counter_tolerance, &p->counters);
        if (!p->counters.judged) res->counter_not_judged++;
        else if (strcmp(p->counters.verdict, "regression") == 0) res->counter_regressions++;
        else if (strcmp(p->counters.verdict, "improvement") == 0) res->counter_improvements++;
        else res->counter_same++;
    }
    if (!cc->counters_only || res->counter_not_judged == 0) return 0;
    const cmp_pair *p = res->pairs;
    while (p->counters.judged) p++;
    if (res->counter_not_judged == res->npairs) {
        fprintf(stderr, "gdnbench compare: --counters-only, but no pair has counters on both sides (first: %s): run "
                "both sides with --counters on the software device\n", p->counters.note);
    } else {
        char shape[512];
        shape_of(p->new->rec, shape, sizeof shape);
        fprintf(stderr, "gdnbench compare: --counters-only, but %d of %d pairs cannot be judged (first: %s %s: %s): "
                "run both sides with --counters on the software device, and see the run's warning where a "
                "counting run failed\n", res->counter_not_judged, res->npairs, rj_str(p->new->rec, "op", NULL, "?"),
                shape, p->counters.note);
    }
    return -1;
}

/* Pairs, judges and prints.  The exit status. */
static int compare(const compare_cli *cc, const report_set *base, const report_set *nw, cmp_result *res) {
    if (pair_records(base, nw, res)) {
        fprintf(stderr, "gdnbench compare: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    if (res->npairs == 0) {
        const char *why = res->nunpaired > 0 ? res->unpaired[0].reason : "both are empty";
        fprintf(stderr,
                "gdnbench compare: nothing to pair: BASE %s has %d record%s, NEW %s has %d, and none match on op, "
                "kernel, shape and device (first: %s)\n",
                cc->paths[0], base->n, base->n == 1 ? "" : "s", cc->paths[1], nw->n, why);
        return EXIT_BAD_INPUT;
    }
    if (check_machine_state(cc, res)) return EXIT_BAD_INPUT;
    if (judge_counters(cc, base, nw, res)) return EXIT_BAD_INPUT;
    for (int i = 0; i < res->npairs; i++) {
        if (judge(&res->pairs[i], cc->threshold, cc->alpha, cc->counters_only, res)) {
            fprintf(stderr, "gdnbench compare: out of memory\n");
            return EXIT_BAD_INPUT;
        }
        cmp_pair *p = &res->pairs[i];
        append_note(p, p->machine_differs ? "machine state differs (--ignore-machine-state): " : "", p->machine);
    }
    if (cc->format == FMT_TABLE)
        print_table(stdout, res, cc->threshold, cc->alpha);
    else if (cc->format == FMT_MARKDOWN)
        print_markdown(stdout, res, cc->paths[0], cc->paths[1], cc->threshold, cc->alpha);
    else if (print_json(stdout, res, cc->paths[0], cc->paths[1], cc->threshold, cc->alpha)) {
        fprintf(stderr, "gdnbench compare: out of memory\n");
        return EXIT_BAD_INPUT;
    }
    fflush(stdout);
    if (cc->junit && write_junit(cc, res) != 0) return EXIT_BAD_INPUT;
    return res->regressions > 0 || res->failing > 0 || res->new_failures > 0 || res->counter_regressions > 0
               ? EXIT_CHECK_FAILED
               : EXIT_OK;
}

int cmd_compare(int argc, char **argv) {
    compare_cli cc = {.threshold = 5, .alpha = 0.01, .format = FMT_TABLE};
    int rc;
    if (parse_args(argc, argv, &cc, &rc)) return rc;
    report_set base = {0}, nw = {0};
    cmp_result res = {0};
    char err[1024];
    if (report_set_load(&base, cc.paths[0], err, sizeof err) || report_set_load(&nw, cc.paths[1], err, sizeof err)) {
        fprintf(stderr, "gdnbench compare: %s\n", err);
        rc = EXIT_BAD_INPUT;
    } else {
        rc = compare(&cc, &base, &nw, &res);
    }
    free(res.pairs);
    free(res.unpaired);
    report_set_free(&base);
    report_set_free(&nw);
    return rc;
}
