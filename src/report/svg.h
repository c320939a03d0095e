/* svg.h — a small SVG writer and a grouped horizontal bar chart, for the charts of
 * `gdnbench report` (no plotting dependencies).
 *
 * The writer appends elements to a growing string; text is XML-escaped, so any
 * label (shape strings, device names) yields well-formed XML.  Out of memory is
 * sticky: svg_take then returns NULL. */
#ifndef GDN_SVG_H
#define GDN_SVG_H

#include <stddef.h>

typedef struct svg {
    char *buf;
    size_t len, cap;
    int oom;
} svg;

void svg_begin(svg *s, double width, double height);
void svg_rect(svg *s, double x, double y, double w, double h, const char *fill, const char *tooltip);
void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width);
/* anchor: "start", "middle" or "end" */
void svg_text(svg *s, double x, double y, const char *anchor, double size, const char *fill, const char *text);
void svg_end(svg *s);
/* The finished document (caller frees), or NULL after an allocation failure;
 * the svg is reset either way. */
char *svg_take(svg *s);

/* Appends text to s with &, <, >, " and ' escaped. */
void svg_escape(svg *s, const char *text);

/* Groups of bars: one group per row label (e.g. a shape), one bar per series
 * (e.g. a device) in each group; values[g * nseries + k], NaN or < 0 = no bar. */
typedef struct svg_bar_chart {
    const char *title;
    const char *unit;                  /* axis label, e.g. "GB/s" */
    int ngroups, nseries;
    const char *const *group_labels;
    const char *const *series_labels;
    const double *values;
} svg_bar_chart;

/* A standalone SVG document (caller frees), or NULL when memory runs out. */
char *svg_bar_chart_render(const svg_bar_chart *c);

#endif
