/* svg.c — SVG writer and bar chart (see svg.h).
 *
 * Layout of the bar chart, top to bottom: title, legend (one swatch per series),
 * then one band per group with its label on the left and its bars to the right,
 * then the value axis with "nice" ticks (1, 2, 5 x 10^k steps).  Label widths are
 * estimated from character counts (no font metrics without a renderer). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

static void put(svg *s, const char *text, size_t n) {
    if (s->oom) return;
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1) cap *= 2;
        char *b = realloc(s->buf, cap);
        if (!b) {
            s->oom = 1;
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, text, n);
    s->len += n;
    s->buf[s->len] = 0;
}

static void putf(svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void putf(svg *s, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    put(s, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void svg_escape(svg *s, const char *text) {
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '&': put(s, "&amp;", 5); break;
        case '<': put(s, "&lt;", 4); break;
        case '>': put(s, "&gt;", 4); break;
        case '"': put(s, "&quot;", 6); break;
        case '\'': put(s, "&apos;", 6); break;
        default:
            /* Control characters other than tab/newline are not allowed in XML 1.0. */
            if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
                put(s, " ", 1);
            else
                put(s, p, 1);
        }
    }
}

void svg_begin(svg *s, double width, double height) {
    memset(s, 0, sizeof *s);
    putf(s,
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
         "font-family=\"Helvetica, Arial, sans-serif\">\n",
         width, height, width, height);
    putf(s, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
}

void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, const char *tooltip) {
    putf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", x, y, w, h);
    svg_escape(s, fill);
    if (tooltip) {
        put(s, "\"><title>", 9);
        svg_escape(s, tooltip);
        put(s, "</title></rect>\n", 16);
    } else {
        put(s, "\"/>\n", 4);
    }
}

void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width) {
    putf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"%.1f\" stroke=\"", x1, y1, x2, y2,
         width);
    svg_escape(s, stroke);
    put(s, "\"/>\n", 4);
}

void svg_text(svg *s, double x, double y, const char *anchor, double size, const char *fill, const char *text) {
    putf(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"", x, y, size);
    svg_escape(s, anchor);
    put(s, "\" fill=\"", 8);
    svg_escape(s, fill);
    put(s, "\">", 2);
    svg_escape(s, text);
    put(s, "</text>\n", 8);
}

void svg_end(svg *s) { put(s, "</svg>\n", 7); }

char *svg_take(svg *s) {
    char *out = s->oom ? NULL : s->buf;
    if (s->oom) free(s->buf);
    memset(s, 0, sizeof *s);
    return out;
}

/* ---- bar chart ----------------------------------------------------------- */

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/* Largest "nice" step (1, 2 or 5 x 10^k) giving at most ~6 ticks up to max. */
static double nice_step(double max) {
    double raw = max / 5;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    double step = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return step * mag;
}

static void fmt_value(char *out, size_t n, double v) {
    if (v >= 100)
        snprintf(out, n, "%.0f", v);
    else if (v >= 10)
        snprintf(out, n, "%.1f", v);
    else
        snprintf(out, n, "%.3g", v);
}

char *svg_bar_chart_render(const svg_bar_chart *c) {
    const double font = 11, bar_h = 14, group_gap = 10, bars_w = 460, char_w = 7.0;
    size_t label_chars = 8;
    for (int g = 0; g < c->ngroups; g++)
        if (strlen(c->group_labels[g]) > label_chars) label_chars = strlen(c->group_labels[g]);
    if (label_chars > 48) label_chars = 48;
    double left = 12 + char_w * (double)label_chars + 8;
    double value_room = 60; /* numbers printed past the end of the longest bar */
    double width = left + bars_w + value_room;

    double max = 0;
    for (int i = 0; i < c->ngroups * c->nseries; i++)
        if (isfinite(c->values[i]) && c->values[i] > max) max = c->values[i];
    double step = max > 0 ? nice_step(max) : 1;
    double axis_max = max > 0 ? ceil(max / step) * step : 1;

    double title_h = 26, legend_h = 18.0 * c->nseries + 6;
    double top = title_h + legend_h;
    double group_h = bar_h * c->nseries + group_gap;
    double plot_h = group_h * c->ngroups;
    double height = top + plot_h + 40;

    svg s;
    svg_begin(&s, width, height);
    svg_text(&s, 12, 18, "start", 14, "#222222", c->title ? c->title : "");
    for (int k = 0; k < c->nseries; k++) {
        double y = title_h + 18.0 * k;
        svg_rect(&s, 12, y + 2, 12, 12, palette[k % 10], NULL);
        svg_text(&s, 30, y + 12, "start", font, "#222222", c->series_labels[k]);
    }
    /* grid lines and ticks */
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    int nticks = (int)lround(axis_max / step);
    for (int i = 0; i <= nticks; i++) {
        double t = step * i;
        double x = left + bars_w * t / axis_max;
        char label[32];
        snprintf(label, sizeof label, "%.*f", decimals, t);
        svg_line(&s, x, top, x, top + plot_h, "#dddddd", 1);
        svg_text(&s, x, top + plot_h + 14, "middle", font - 1, "#555555", label);
    }
    char axis[96];
    snprintf(axis, sizeof axis, "%s", c->unit ? c->unit : "");
    svg_text(&s, left + bars_w / 2, top + plot_h + 32, "middle", font, "#222222", axis);

    for (int g = 0; g < c->ngroups; g++) {
        double y0 = top + group_h * g + group_gap / 2;
        char label[64];
        snprintf(label, sizeof label, "%.48s", c->group_labels[g]);
        svg_text(&s, left - 8, y0 + bar_h * c->nseries / 2 + 4, "end", font, "#222222", label);
        for (int k = 0; k < c->nseries; k++) {
            double v = c->values[g * c->nseries + k];
            if (!isfinite(v) || v < 0) continue;
            double w = bars_w * v / axis_max;
            char value[32], tip[256];
            fmt_value(value, sizeof value, v);
            snprintf(tip, sizeof tip, "%s, %s: %s %s", c->group_labels[g], c->series_labels[k], value,
                     c->unit ? c->unit : "");
            svg_rect(&s, left, y0 + bar_h * k, w < 0.5 ? 0.5 : w, bar_h - 2, palette[k % 10], tip);
            svg_text(&s, left + w + 4, y0 + bar_h * k + bar_h - 4, "start", font - 1, "#333333", value);
        }
    }
    svg_line(&s, left, top, left, top + plot_h, "#888888", 1);
    svg_end(&s);
    return svg_take(&s);
}
