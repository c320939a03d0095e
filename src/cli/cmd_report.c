/* cmd_report.c — `gdnbench report DIR|FILE... [--out FILE.md] [--html FILE.html]`:
 * tables and charts of JSON reports across devices.
 *
 * One section per op; within it one table per device class — GPU hardware, CPU
 * (reference backend) and emulated devices (the software Metal device) — so an
 * emulated timing never sits in a comparison with real chips, and its section says
 * what it is.  Rows are shapes (plus the kernel function when an op has several),
 * columns are devices, cells are "median · GB/s · % of the chip's peak bandwidth".
 * Duplicate records for one cell (repeated runs) show the best median, marked.
 * A % of a derived peak (not an Apple-published figure: device.peak_verified, or for
 * older reports the chip table) is marked with a dagger and explained under the
 * table, and the column header says the peak is derived.  A cell whose record's
 * machine state is marked (thermal state not nominal, Low Power Mode, battery: the
 * JSON environment) carries a double dagger, explained under its table: its time
 * may be throttled and is not the chip's.  A cell whose record carries warnings (a
 * paravirtual device, a flag that had no effect: the JSON `warnings`) carries a
 * section sign, and its warnings are written under the table.
 *
 * Counters (issue 31): an op whose records carry exact counters gets a counters table
 * and the floor-model join of Mac timings (cli/report_counters.h).
 *
 * Charts: one SVG bar chart (GB/s) per table, written next to the Markdown file as
 * STEM-OP-CLASS.svg and linked relatively — GitHub renders linked SVG files but
 * strips inline <svg> from Markdown.  The HTML page embeds the same charts inline.
 * Without --out the Markdown goes to stdout and no charts are written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/report_counters.h"
#include "core/chips.h"
#include "report/report_load.h"
#include "report/svg.h"
#include "runner/backend.h"

enum { CLASS_GPU, CLASS_CPU, CLASS_EMULATED, NCLASSES };

static const char *const class_slug[NCLASSES] = {"gpu", "cpu", "emulated"};
static const char *const class_title[NCLASSES] = {
    "GPU hardware",
    "CPU reference backend",
    "Emulated devices (software Metal device on the host CPU: times are not GPU performance)",
};

typedef struct strlist {
    char **v;
    int n, cap;
} strlist;

static int strlist_index(const strlist *l, const char *s) {
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return i;
    return -1;
}

/* Index of s, appended when new; -1 when memory runs out. */
static int strlist_add(strlist *l, const char *s) {
    int i = strlist_index(l, s);
    if (i >= 0) return i;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        char **v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = strdup(s);
    if (!l->v[l->n]) return -1;
    return l->n++;
}

static void strlist_free(strlist *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int class_of(const cJSON *rec) {
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(rec, "device");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dev, "emulated"))) return CLASS_EMULATED;
    const backend_desc *d = backend_desc_find(rj_str(rec, "device", "backend", ""));
    if (d && (d->caps & BACKEND_EMULATED)) return CLASS_EMULATED;
    if (d && d->kind == BACKEND_CPU) return CLASS_CPU;
    return CLASS_GPU;
}

static void device_key(const cJSON *rec, char *out, size_t n) {
    snprintf(out, n, "%s\x1f%s\x1f%g", rj_str(rec, "device", "name", "?"), rj_str(rec, "device", "backend", "?"),
             rj_num(rec, "device", "gpu_cores", 0));
}

/* 1 when the record's bandwidth peak is derived rather than Apple-published:
 * device.peak_verified.bandwidth_gbps == false, or, in reports written before that
 * key existed, the chip table's entry with the same name, cores and bandwidth. */
static int bandwidth_peak_derived(const cJSON *rec) {
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(rec, "device");
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(dev, "peak_verified");
    if (pv) return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(pv, "bandwidth_gbps"));
    double bw = rj_num(rec, "device", "bandwidth_gbps", -1);
    if (bw <= 0) return 0;
    const chip_info *chip = chip_find(rj_str(rec, "device", "name", ""), (int)rj_num(rec, "device", "gpu_cores", -1));
    return chip && chip->bandwidth_gbps == bw && !chip->bandwidth_verified;
}

static const char derived_mark[] = "\xe2\x80\xa0"; /* U+2020 dagger */
/* A cell whose run's machine state is marked (environment.marked). */
static const char machine_mark[] = "\xe2\x80\xa1"; /* U+2021 double dagger */
/* A cell whose record has warnings (the JSON `warnings` array). */
static const char warning_mark[] = "\xc2\xa7"; /* U+00A7 section sign */
static const char derived_note[] =
    "% of a derived peak: not an Apple-published figure (src/core/chips.c says how it was derived)";

static void device_header(const cJSON *rec, char *out, size_t n) {
    int len = snprintf(out, n, "%s (%s", rj_str(rec, "device", "name", "?"), rj_str(rec, "device", "backend", "?"));
    double cores = rj_num(rec, "device", "gpu_cores", -1);
    double bw = rj_num(rec, "device", "bandwidth_gbps", -1);
    if (cores > 0 && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, ", %g-core GPU", cores);
    if (bw > 0 && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, ", peak %g GB/s%s", bw,
                        bandwidth_peak_derived(rec) ? ", derived" : "");
    if (class_of(rec) == CLASS_EMULATED && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, ", emulated");
    if (len > 0 && (size_t)len < n) snprintf(out + len, n - (size_t)len, ")");
}

static void fmt_time(char *out, size_t n, double us) {
    if (us < 10)
        snprintf(out, n, "%.2f us", us);
    else if (us < 1000)
        snprintf(out, n, "%.1f us", us);
    else
        snprintf(out, n, "%.0f us", us);
}

/* "12.3 us · 456 GB/s · 83%", or the status when nothing was timed. */
static void cell_text(const cJSON *rec, int count, char *out, size_t n) {
    if (!rec) {
        snprintf(out, n, "-");
        return;
    }
    double med = rj_num(rec, "timing", "median", NAN);
    const char *status = rj_str(rec, "status", NULL, "error");
    int len;
    if (!isfinite(med)) {
        len = snprintf(out, n, "%s", status);
    } else {
        char t[32];
        fmt_time(t, sizeof t, med);
        len = snprintf(out, n, "%s", t);
        double gbps = rj_num(rec, "throughput", "gbps", NAN);
        if (isfinite(gbps) && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, " · %.1f GB/s", gbps);
        double pct = rj_num(rec, "throughput", "pct_of_peak_bandwidth", NAN);
        if (isfinite(pct) && len > 0 && (size_t)len < n)
            len += snprintf(out + len, n - (size_t)len, pct < 10 ? " · %.1f%%%s" : " · %.0f%%%s", pct,
                            bandwidth_peak_derived(rec) ? derived_mark : "");
        if (run_status_parse(status) != RUN_PASS && len > 0 && (size_t)len < n)
            len += snprintf(out + len, n - (size_t)len, " (%s)", status);
    }
    if (count > 1 && len > 0 && (size_t)len < n) len += snprintf(out + len, n - (size_t)len, " (best of %d)", count);
    char marks[240];
    if (rj_marked(rec, marks, sizeof marks) && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, " %s", machine_mark);
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "warnings")) > 0 && len > 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, " %s", warning_mark);
}


/* One table: an op's records of one device class. */
typedef struct rtable {
    strlist rows, cols;
    char **col_headers;
    const cJSON **best;  /* [row * ncols + col] */
    int *count;
} rtable;

static void rtable_free(rtable *t) {
    for (int i = 0; i < t->cols.n; i++) free(t->col_headers ? t->col_headers[i] : NULL);
    free(t->col_headers);
    free(t->best);
    free(t->count);
    strlist_free(&t->rows);
    strlist_free(&t->cols);
}

static int build_table(const report_set *s, const char *op, int cls, rtable *t) {
    memset(t, 0, sizeof *t);
    strlist functions = {0};
    for (int i = 0; i < s->n; i++) {
        const cJSON *r = s->items[i].rec;
        if (strcmp(rj_str(r, "op", NULL, ""), op) != 0 || class_of(r) != cls) continue;
        if (strlist_add(&functions, rj_str(r, "kernel", "function", "(cpu)")) < 0) goto oom;
    }
    int by_function = functions.n > 1;
    strlist_free(&functions);

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < s->n; i++) {
            const cJSON *r = s->items[i].rec;
            if (strcmp(rj_str(r, "op", NULL, ""), op) != 0 || class_of(r) != cls) continue;
            char row[600], shape[512], dev[256];
            rj_shape_str(r, shape, sizeof shape);
            if (by_function)
                snprintf(row, sizeof row, "%s · %s", shape, rj_str(r, "kernel", "function", "(cpu)"));
            else
                snprintf(row, sizeof row, "%s", shape);
            device_key(r, dev, sizeof dev);
            if (pass == 0) {
                /* first pass: collect rows and columns */
                int before = t->cols.n;
                if (strlist_add(&t->rows, row) < 0 || strlist_add(&t->cols, dev) < 0) goto oom;
                if (t->cols.n > before) {
                    char **h = realloc(t->col_headers, sizeof *h * (size_t)t->cols.n);
                    if (!h) goto oom;
                    t->col_headers = h;
                    char header[256];
                    device_header(r, header, sizeof header);
                    h[t->cols.n - 1] = strdup(header);
                    if (!h[t->cols.n - 1]) goto oom;
                }
                continue;
            }
            /* second pass: best (lowest median) record per cell */
            int ri = strlist_index(&t->rows, row), ci = strlist_index(&t->cols, dev);
            int k = ri * t->cols.n + ci;
            t->count[k]++;
            double med = rj_num(r, "timing", "median", NAN);
            double cur = t->best[k] ? rj_num(t->best[k], "timing", "median", NAN) : NAN;
            if (!t->best[k] || (isfinite(med) && (!isfinite(cur) || med < cur))) t->best[k] = r;
        }
        if (pass == 0) {
            size_t cells = (size_t)t->rows.n * (size_t)t->cols.n;
            t->best = calloc(cells ? cells : 1, sizeof *t->best);
            t->count = calloc(cells ? cells : 1, sizeof *t->count);
            if (!t->best || !t->count) goto oom;
        }
    }
    return 0;
oom:
    strlist_free(&functions);
    rtable_free(t);
    return -1;
}

/* ---- writers ------------------------------------------------------------- */

/* 1 when some cell of t shows a % of a derived peak (then the table gets the note). */
static int table_has_derived(const rtable *t) {
    for (int k = 0; k < t->rows.n * t->cols.n; k++)
        if (t->best[k] && isfinite(rj_num(t->best[k], "throughput", "pct_of_peak_bandwidth", NAN)) &&
            bandwidth_peak_derived(t->best[k]))
            return 1;
    return 0;
}

static void write_note_line(FILE *f, const char *line, int html) {
    if (html) {
        report_html_escape(f, line);
        fputs("<br>\n", f);
    } else {
        report_md_escape(f, line);
        fputs("  \n", f);
    }
}

/* Under a table: one line per marked cell (which cell and why), then one per warning
 * of a cell's record. */
static void write_marks(FILE *f, const rtable *t, int html) {
    int any = 0;
    for (int r = 0; r < t->rows.n; r++) {
        for (int c = 0; c < t->cols.n; c++) {
            const cJSON *rec = t->best[r * t->cols.n + c];
            char marks[240];
            if (!rec || !rj_marked(rec, marks, sizeof marks)) continue;
            if (!any) fputs(html ? "<p class=\"note\">" : "\n", f);
            any = 1;
            char line[1200];
            snprintf(line, sizeof line, "%s %s on %s: machine state marked (%s); timings may be throttled",
                     machine_mark, t->rows.v[r], t->col_headers[c], marks);
            write_note_line(f, line, html);
        }
    }
    /* the warnings, in the same place: a reader needs them to read the cell */
    for (int r = 0; r < t->rows.n; r++) {
        for (int c = 0; c < t->cols.n; c++) {
            const cJSON *rec = t->best[r * t->cols.n + c];
            const cJSON *ws = rec ? cJSON_GetObjectItemCaseSensitive(rec, "warnings") : NULL, *w;
            cJSON_ArrayForEach(w, ws) {
                if (!cJSON_IsString(w)) continue;
                if (!any) fputs(html ? "<p class=\"note\">" : "\n", f);
                any = 1;
                char line[1400];
                snprintf(line, sizeof line, "%s %s on %s: %s", warning_mark, t->rows.v[r], t->col_headers[c],
                         w->valuestring);
                write_note_line(f, line, html);
            }
        }
    }
    if (any && html) fputs("</p>\n", f);
}

static void write_md_table(FILE *f, const rtable *t) {
    fputs("| shape |", f);
    for (int c = 0; c < t->cols.n; c++) {
        fputc(' ', f);
        report_md_escape(f, t->col_headers[c]);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (int c = 0; c < t->cols.n; c++) fputs("---:|", f);
    fputc('\n', f);
    for (int r = 0; r < t->rows.n; r++) {
        fputs("| ", f);
        report_md_escape(f, t->rows.v[r]);
        fputs(" |", f);
        for (int c = 0; c < t->cols.n; c++) {
            char cell[256];
            int k = r * t->cols.n + c;
            cell_text(t->best[k], t->count[k], cell, sizeof cell);
            fputc(' ', f);
            report_md_escape(f, cell);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

static void write_html_table(FILE *f, const rtable *t) {
    fputs("<table>\n<tr><th>shape</th>", f);
    for (int c = 0; c < t->cols.n; c++) {
        fputs("<th>", f);
        report_html_escape(f, t->col_headers[c]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int r = 0; r < t->rows.n; r++) {
        fputs("<tr><td>", f);
        report_html_escape(f, t->rows.v[r]);
        fputs("</td>", f);
        for (int c = 0; c < t->cols.n; c++) {
            char cell[256];
            int k = r * t->cols.n + c;
            cell_text(t->best[k], t->count[k], cell, sizeof cell);
            fputs("<td class=\"num\">", f);
            report_html_escape(f, cell);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static char *render_chart(const rtable *t, const char *op, int cls) {
    size_t cells = (size_t)t->rows.n * (size_t)t->cols.n;
    double *values = malloc(sizeof(double) * (cells ? cells : 1));
    if (!values) return NULL;
    for (size_t k = 0; k < cells; k++)
        values[k] = t->best[k] ? rj_num(t->best[k], "throughput", "gbps", NAN) : NAN;
    char title[256];
    snprintf(title, sizeof title, "%s: GB/s (%s)", op, class_slug[cls]);
    svg_bar_chart chart = {
        .title = title,
        .unit = "GB/s (minimum traffic / median time)",
        .ngroups = t->rows.n,
        .nseries = t->cols.n,
        .group_labels = (const char *const *)t->rows.v,
        .series_labels = (const char *const *)t->col_headers,
        .values = values,
    };
    char *doc = svg_bar_chart_render(&chart);
    free(values);
    return doc;
}

/* File-name-safe copy of an op name. */
static void slug(const char *s, char *out, size_t n) {
    size_t i = 0;
    for (; *s && i + 1 < n; s++)
        out[i++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
                           *s == '_'
                       ? *s
                       : '_';
    out[i] = 0;
}

static int write_text_file(const char *path, const char *text, char *err, size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    int bad = fputs(text, f) == EOF;
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        snprintf(err, errlen, "%s: write failed", path);
        return -1;
    }
    return 0;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: gdnbench report DIR|FILE... [--out FILE.md] [--html FILE.html]\n"
            "  DIR|FILE      JSON reports (records or arrays) or directories of *.json\n"
            "  --out         write Markdown here, with one SVG chart per table next to it\n"
            "                (FILE-OP-CLASS.svg, linked relatively); default: Markdown on stdout\n"
            "  --html        also write a standalone HTML page with the charts inline\n"
            "One table per op and device class (GPU hardware, CPU, emulated): rows are shapes,\n"
            "columns devices, cells median time, GB/s and %% of the chip's peak bandwidth.\n"
            "Records with exact counters (--counters on the software device) add a counters table\n"
            "per op, and each Mac timing of the same kernel, source and shape as a percentage of\n"
            "its chip's floor, max(distinct bytes / bandwidth, flops / peak): a model, not a\n"
            "measurement.\n");
}

/* Where one report goes: Markdown (stdout, or --out with the SVGs next to it) and,
 * with --html, a page with the charts inline. */
typedef struct report_out {
    const char *out_md, *out_html;
    FILE *md, *html;
    char stem[1024];           /* --out less ".md": the SVGs' path prefix */
    const char *base;          /* stem's file name: what the Markdown links */
} report_out;

/* argv[1..]: the options, every report loaded into set.  0 to go on, or 1 with
 * *status the exit status (the message printed). */
static int parse_args(int argc, char **argv, report_out *ro, report_set *set, int *status) {
    int npaths = 0;
    *status = EXIT_BAD_INPUT;
    for (int i = 1; i < argc; i++) {
        char err[2048];
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            *status = EXIT_OK;
            return 1;
        }
        if (strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--html") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gdnbench report: %s needs a file name\n", argv[i]);
                return 1;
            }
            if (strcmp(argv[i], "--out") == 0)
                ro->out_md = argv[++i];
            else
                ro->out_html = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "gdnbench report: unknown option %s (see gdnbench report --help)\n", argv[i]);
            return 1;
        }
        if (report_set_load(set, argv[i], err, sizeof err)) {
            fprintf(stderr, "gdnbench report: %s\n", err);
            return 1;
        }
        npaths++;
    }
    if (npaths == 0) {
        fprintf(stderr, "gdnbench report: give at least one report file or directory (see --help)\n");
        return 1;
    }
    return 0;
}

/* Opens --out and --html (the page's head written).  The exit status. */
static int open_outputs(report_out *ro) {
    ro->md = stdout;
    ro->base = ro->stem;
    if (ro->out_md) {
        ro->md = fopen(ro->out_md, "w");
        if (!ro->md) {
            fprintf(stderr, "gdnbench report: --out %s: cannot create: %s\n", ro->out_md, strerror(errno));
            return EXIT_BAD_INPUT;
        }
        /* SVGs go next to the Markdown: STEM-op-class.svg, linked by base name. */
        snprintf(ro->stem, sizeof ro->stem, "%s", ro->out_md);
        size_t len = strlen(ro->stem);
        if (len > 3 && strcmp(ro->stem + len - 3, ".md") == 0) ro->stem[len - 3] = 0;
        const char *slash = strrchr(ro->stem, '/');
        ro->base = slash ? slash + 1 : ro->stem;
    }
    if (ro->out_html) {
        ro->html = fopen(ro->out_html, "w");
        if (!ro->html) {
            fprintf(stderr, "gdnbench report: --html %s: cannot create: %s\n", ro->out_html, strerror(errno));
            return EXIT_BAD_INPUT;
        }
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gdnbench report</title>\n"
              "<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em;}table{border-collapse:collapse;"
              "margin:1em 0;}th,td{border:1px solid #ccc;padding:4px 8px;}td.num{text-align:right;}"
              ".note{color:#555;}</style></head><body>\n<h1>gdnbench report</h1>\n",
              ro->html);
    }
    return EXIT_OK;
}

/* Closes the files (a failed write is exit 2 when nothing else failed). */
static int close_outputs(report_out *ro, int rc) {
    if (ro->md && ro->md != stdout && fclose(ro->md) != 0 && rc == EXIT_OK) {
        fprintf(stderr, "gdnbench report: --out %s: write failed\n", ro->out_md);
        rc = EXIT_BAD_INPUT;
    }
    if (ro->md == stdout) fflush(stdout);
    if (ro->html && fclose(ro->html) != 0 && rc == EXIT_OK) {
        fprintf(stderr, "gdnbench report: --html %s: write failed\n", ro->out_html);
        rc = EXIT_BAD_INPUT;
    }
    return rc;
}

static void write_intro(const report_out *ro, int nrec) {
    fprintf(ro->md, "# gdnbench report\n\n%d record%s. Cells: median time · GB/s (the op's minimum traffic / median) · "
                    "%% of the chip's peak memory bandwidth (when the chip is in the table).\n",
            nrec, nrec == 1 ? "" : "s");
    if (ro->html)
        fprintf(ro->html,
                "<p class=\"note\">%d record%s. Cells: median time · GB/s (the op's minimum traffic / median) · "
                "%% of the chip's peak memory bandwidth (when the chip is in the table).</p>\n",
                nrec, nrec == 1 ? "" : "s");
    if (!ro->out_md) fprintf(ro->md, "\n(Charts are written only with --out.)\n");
}

/* The chart of table t: an SVG file next to the Markdown (linked), inline in the
 * page.  0, -1 out of memory, -2 when the file could not be written (said). */
static int write_chart(const report_out *ro, const rtable *t, const char *op, int cls) {
    char *doc = render_chart(t, op, cls);
    if (!doc) return -1;
    if (ro->out_md) {
        char opslug[128], path[1400], name[1400], err[2048];
        slug(op, opslug, sizeof opslug);
        snprintf(path, sizeof path, "%s-%s-%s.svg", ro->stem, opslug, class_slug[cls]);
        snprintf(name, sizeof name, "%s-%s-%s.svg", ro->base, opslug, class_slug[cls]);
        if (write_text_file(path, doc, err, sizeof err)) {
            fprintf(stderr, "gdnbench report: %s\n", err);
            free(doc);
            return -2;
        }
        fprintf(ro->md, "\n![%s GB/s, %s](%s)\n", op, class_slug[cls], name);
    }
    if (ro->html) fprintf(ro->html, "<div>%s</div>\n", doc);
    free(doc);
    return 0;
}

/* op's table of device class cls (nothing when it has no record there), with its
 * notes and chart.  0, -1 out of memory, -2 a chart could not be written (said). */
static int write_class(const report_out *ro, const report_set *set, const char *op, int cls) {
    rtable t;
    if (build_table(set, op, cls, &t)) return -1;
    int rc = 0;
    if (t.rows.n > 0) {
        fprintf(ro->md, "\n### %s\n\n", class_title[cls]);
        write_md_table(ro->md, &t);
        int derived = table_has_derived(&t);
        if (derived) fprintf(ro->md, "\n%s %s\n", derived_mark, derived_note);
        write_marks(ro->md, &t, 0);
        if (ro->html) {
            fprintf(ro->html, "<h3>%s</h3>\n", class_title[cls]);
            write_html_table(ro->html, &t);
            if (derived) fprintf(ro->html, "<p class=\"note\">%s %s</p>\n", derived_mark, derived_note);
            write_marks(ro->html, &t, 1);
        }
        if (ro->out_md || ro->html) rc = write_chart(ro, &t, op, cls);
    }
    rtable_free(&t);
    return rc;
}

/* One section per op, one table per device class.  0, -1 out of memory, -2 said. */
static int write_sections(const report_out *ro, const report_set *set) {
    strlist ops = {0};
    int rc = 0;
    for (int i = 0; i < set->n && rc == 0; i++)
        if (strlist_add(&ops, rj_str(set->items[i].rec, "op", NULL, "?")) < 0) rc = -1;
    if (rc == 0) write_intro(ro, set->n);
    for (int o = 0; o < ops.n && rc == 0; o++) {
        fprintf(ro->md, "\n## ");
        report_md_escape(ro->md, ops.v[o]);
        fputc('\n', ro->md);
        if (ro->html) {
            fputs("<h2>", ro->html);
            report_html_escape(ro->html, ops.v[o]);
            fputs("</h2>\n", ro->html);
        }
        for (int cls = 0; cls < NCLASSES && rc == 0; cls++) rc = write_class(ro, set, ops.v[o], cls);
        if (rc == 0) rc = report_counters_write(ro->md, ro->html, set, ops.v[o]);
    }
    if (rc == 0 && ro->html) fputs("</body></html>\n", ro->html);
    strlist_free(&ops);
    return rc;
}

int cmd_report(int argc, char **argv) {
    report_set set = {0};
    report_out ro = {0};
    int rc;
    if (parse_args(argc, argv, &ro, &set, &rc) == 0 && (rc = open_outputs(&ro)) == EXIT_OK) {
        int w = write_sections(&ro, &set);
        if (w == -1) fprintf(stderr, "gdnbench report: out of memory\n");
        rc = w == 0 ? EXIT_OK : EXIT_BAD_INPUT;
    }
    rc = close_outputs(&ro, rc);
    report_set_free(&set);
    return rc;
}
