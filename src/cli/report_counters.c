/* report_counters.c — the report's counters and floor-model sections
 * (report_counters.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/report_counters.h"
#include "core/chips.h"
#include "report/counter_gate.h"
#include "report/floor_model.h"

void report_md_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|' || *s == '*' || *s == '_' || *s == '`' || *s == '<' || *s == '[' || *s == ']') fputc('\\', f);
        fputc(*s, f);
    }
}

void report_html_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* ---- a table of text cells, written as Markdown and HTML ---------------- */

#define CT_MAXCOLS 10
#define CT_CELL 160

typedef struct ctab {
    int ncols, nleft, nrows, cap;  /* the first nleft columns are text, the rest numbers */
    const char *head[CT_MAXCOLS];
    char (*cells)[CT_MAXCOLS][CT_CELL];
} ctab;

/* A new row's cells (zeroed), or NULL when memory runs out. */
static char (*ctab_row(ctab *t))[CT_CELL] {
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        void *c = realloc(t->cells, sizeof *t->cells * (size_t)cap);
        if (!c) return NULL;
        t->cells = c;
        t->cap = cap;
    }
    memset(t->cells[t->nrows], 0, sizeof t->cells[0]);
    return t->cells[t->nrows++];
}

/* 1 when some earlier row has the same first two cells (a repeated run: the counts
 * are exact, so one row says it). */
static int ctab_repeats_last(const ctab *t) {
    const char(*last)[CT_CELL] = t->cells[t->nrows - 1];
    for (int r = 0; r < t->nrows - 1; r++)
        if (!strcmp(t->cells[r][0], last[0]) && !strcmp(t->cells[r][1], last[1])) return 1;
    return 0;
}

static void ctab_write(const ctab *t, FILE *md, FILE *html) {
    for (int c = 0; c < t->ncols; c++) {
        fputs(c ? " " : "| ", md);
        report_md_escape(md, t->head[c]);
        fputs(" |", md);
    }
    fputs("\n|", md);
    for (int c = 0; c < t->ncols; c++) fputs(c < t->nleft ? "---|" : "---:|", md);
    fputc('\n', md);
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            fputs(c ? " " : "| ", md);
            report_md_escape(md, t->cells[r][c]);
            fputs(" |", md);
        }
        fputc('\n', md);
    }
    if (!html) return;
    fputs("<table>\n<tr>", html);
    for (int c = 0; c < t->ncols; c++) {
        fputs("<th>", html);
        report_html_escape(html, t->head[c]);
        fputs("</th>", html);
    }
    fputs("</tr>\n", html);
    for (int r = 0; r < t->nrows; r++) {
        fputs("<tr>", html);
        for (int c = 0; c < t->ncols; c++) {
            fputs(c < t->nleft ? "<td>" : "<td class=\"num\">", html);
            report_html_escape(html, t->cells[r][c]);
            fputs("</td>", html);
        }
        fputs("</tr>\n", html);
    }
    fputs("</table>\n", html);
}

static void write_line(FILE *md, FILE *html, const char *line) {
    report_md_escape(md, line);
    fputs("  \n", md);
    if (html) {
        report_html_escape(html, line);
        fputs("<br>\n", html);
    }
}

static void write_heading(FILE *md, FILE *html, const char *title) {
    fprintf(md, "\n### %s\n\n", title);
    if (html) {
        fputs("<h3>", html);
        report_html_escape(html, title);
        fputs("</h3>\n", html);
    }
}

/* ---- reading records ------------------------------------------------------ */

static const cJSON *at(const cJSON *o, const char *a, const char *b, const char *c) {
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, a) : NULL;
    if (b) v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, b) : NULL;
    if (c) v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, c) : NULL;
    return v;
}

static double count(const cJSON *total, const char *a, const char *b, const char *c) {
    const cJSON *v = at(total, a, b, c);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void fmt_count(char *out, double v) {
    snprintf(out, CT_CELL, isfinite(v) ? "%.0f" : "-", v);
}

static void fmt_ratio(char *out, double v, int pct) {
    if (!isfinite(v)) snprintf(out, CT_CELL, "-");
    else if (pct) snprintf(out, CT_CELL, "%.1f%%", 100 * v);
    else snprintf(out, CT_CELL, "%.3g", v);
}

/* "B=1 T=4096 H=32", or "case=NAME" for a kernel case. */
static void shape_label(const cJSON *rec, char *out, size_t n) {
    rj_shape_str(rec, out, n);
    const char *name = rj_str(rec, "case", "name", "");
    if (!out[0] && name[0]) snprintf(out, n, "case=%s", name);
}

/* What must match for a timing and a count to be of the same work. */
static void work_key(const cJSON *rec, char *out, size_t n) {
    char shape[512];
    shape_label(rec, shape, sizeof shape);
    int len = snprintf(out, n, "%s\x1f%s\x1f%s\x1f%s", rj_str(rec, "op", NULL, ""),
                       rj_str(rec, "kernel", "function", ""), rj_str(rec, "kernel", "sha256", ""), shape);
    const cJSON *c;
    cJSON_ArrayForEach(c, at(rec, "kernel", "constants", NULL)) {
        if (len < 0 || (size_t)len >= n) return;
        len += snprintf(out + len, n - (size_t)len, "\x1f%g=%s", rj_num(c, "index", NULL, -1),
                        rj_str(c, "value", NULL, ""));
    }
}

static int is_gpu_timing(const cJSON *rec) {
    return !strcmp(rj_str(rec, "device", "backend", ""), "metal") &&
           !cJSON_IsTrue(at(rec, "device", "emulated", NULL)) && isfinite(rj_num(rec, "timing", "median", NAN));
}

/* ---- the sections ---------------------------------------------------------- */

static int counters_row(ctab *t, const cJSON *rec, const cJSON *counters) {
    char(*row)[CT_CELL] = ctab_row(t);
    if (!row) return -1;
    const cJSON *tot = at(counters, "total", NULL, NULL);
    shape_label(rec, row[0], CT_CELL);
    snprintf(row[1], CT_CELL, "%s", rj_str(rec, "kernel", "function", "?"));
    fmt_count(row[2], count(tot, "device", "load_bytes", NULL) + count(tot, "device", "store_bytes", NULL));
    fmt_count(row[3], count(tot, "device", "distinct_bytes", NULL));
    fmt_count(row[4], count(tot, "device", "distinct_lines", NULL));
    fmt_count(row[5], count(tot, "flops", "total", NULL));
    fmt_ratio(row[6], count(tot, "arithmetic_intensity", NULL, NULL), 0);
    fmt_ratio(row[7], count(tot, "simd", "lane_utilisation", NULL), 1);
    fmt_ratio(row[8], count(tot, "device", "coalescing", "efficiency"), 1);
    fmt_count(row[9], count(tot, "barriers", "threadgroup", NULL) + count(tot, "barriers", "simdgroup", NULL));
    if (ctab_repeats_last(t)) t->nrows--;
    return 0;
}

/* The counters table of op, and the records that could not count.  1 when written. */
static int write_counters(FILE *md, FILE *html, const report_set *set, const char *op) {
    ctab t = {.ncols = 10, .nleft = 2, .head = {"shape", "kernel", "requested bytes", "distinct bytes", "distinct lines", "flops",
                                    "flop/byte", "lane utilisation", "coalescing", "barriers"}};
    int rc = 0, unavailable = 0;
    for (int i = 0; i < set->n && rc == 0; i++) {
        const cJSON *rec = set->items[i].rec, *c;
        const char *why;
        if (strcmp(rj_str(rec, "op", NULL, ""), op) != 0) continue;
        counters_state s = counters_of(rec, &c, &why);
        if (s == COUNTERS_PRESENT) rc = counters_row(&t, rec, c);
        unavailable += s == COUNTERS_UNAVAILABLE;
    }
    if (rc == 0 && (t.nrows || unavailable)) {
        write_heading(md, html, "Counters (exact counts of the software device: the same on every run)");
        if (t.nrows) ctab_write(&t, md, html);
        fputc('\n', md);
        for (int i = 0; i < set->n; i++) {
            const cJSON *rec = set->items[i].rec, *c;
            const char *why;
            if (strcmp(rj_str(rec, "op", NULL, ""), op) || counters_of(rec, &c, &why) != COUNTERS_UNAVAILABLE)
                continue;
            char line[1024], shape[512];
            shape_label(rec, shape, sizeof shape);
            snprintf(line, sizeof line, "%s on %s (%s): not counted: %s", shape, rj_str(rec, "device", "name", "?"),
                     rj_str(rec, "device", "backend", "?"), why);
            write_line(md, html, line);
        }
    }
    free(t.cells);
    return rc;
}

/* A counted record of the same work as rec, or NULL. */
static const cJSON *counted_twin(const report_set *set, const cJSON *rec, const cJSON **counters) {
    char want[2048], have[2048];
    work_key(rec, want, sizeof want);
    for (int i = 0; i < set->n; i++) {
        const char *why;
        if (counters_of(set->items[i].rec, counters, &why) != COUNTERS_PRESENT) continue;
        work_key(set->items[i].rec, have, sizeof have);
        if (!strcmp(want, have)) return set->items[i].rec;
    }
    return NULL;
}

static int floor_row(ctab *t, const cJSON *rec, const cJSON *counters) {
    char(*row)[CT_CELL] = ctab_row(t);
    if (!row) return -1;
    shape_label(rec, row[0], CT_CELL);
    snprintf(row[1], CT_CELL, "%s", rj_str(rec, "kernel", "function", "?"));
    const char *name = rj_str(rec, "device", "name", "?");
    int cores = (int)rj_num(rec, "device", "gpu_cores", -1);
    snprintf(row[2], CT_CELL, cores > 0 ? "%s (%d-core GPU)" : "%s", name, cores);
    double med_s = rj_num(rec, "timing", "median", NAN) * 1e-6;
    floor_model_fmt_s(row[3], CT_CELL, med_s);
    floor_est e;
    if (floor_model_estimate(counters, chip_find(name, cores), &e) != 0) {
        snprintf(row[4], CT_CELL, "-");
        snprintf(row[5], CT_CELL, "-");
        snprintf(row[6], CT_CELL, "no floor: the chip, or a peak its flops need, is not in the table");
        return 0;
    }
    int derived = e.compute_bound ? !e.flops_verified : !e.chip->bandwidth_verified;
    floor_model_fmt_s(row[4], CT_CELL, e.floor_s);
    snprintf(row[5], CT_CELL, "%s%s", e.compute_bound ? "compute" : "memory", derived ? " (derived peak)" : "");
    snprintf(row[6], CT_CELL, "%.0f%%", 100 * med_s / e.floor_s);
    return 0;
}

/* Each GPU timing of op against its chip's floor, where a counted twin exists. */
static int write_floors(FILE *md, FILE *html, const report_set *set, const char *op) {
    ctab t = {.ncols = 7, .nleft = 3, .head = {"shape", "kernel", "device", "measured median", "floor (model)", "bound",
                                   "measured / floor"}};
    int rc = 0;
    for (int i = 0; i < set->n && rc == 0; i++) {
        const cJSON *rec = set->items[i].rec, *counters;
        if (strcmp(rj_str(rec, "op", NULL, ""), op) != 0 || !is_gpu_timing(rec)) continue;
        if (counted_twin(set, rec, &counters)) rc = floor_row(&t, rec, counters);
    }
    if (rc == 0 && t.nrows) {
        write_heading(md, html, "Measured time against the floor model (a MODEL, not a measurement)");
        ctab_write(&t, md, html);
        fputc('\n', md);
        write_line(md, html, "floor = max(distinct bytes / bandwidth, flops / peak) of the chip (src/core/chips.c), "
                             "from the software device's exact counts of the same kernel, source and shape; "
                             "measured / floor under 100% means the data came from caches the model does not "
                             "count (it reads each distinct byte from memory once)");
    }
    free(t.cells);
    return rc;
}

int report_counters_write(FILE *md, FILE *html, const report_set *set, const char *op) {
    if (write_counters(md, html, set, op)) return -1;
    return write_floors(md, html, set, op);
}
