/* compile_stats.c — compile_stats.h and swmetal.h's sw_compile_stats_*: process-wide
 * totals of the time compiling kernels takes, by variant kind and phase, from the
 * wall clock around each step and clang's own -ftime-trace totals. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "swmetal/compile_stats.h"
#include "swmetal/sw_files.h"
#include "swmetal/swmetal.h"

static const char *const kind_names[SW_KIND_COUNT] = {
    [SW_KIND_LIBRARY] = "library",
    [SW_KIND_FIBERS] = "fibers",
    [SW_KIND_LANES] = "lanes",
    [SW_KIND_FULL_CHECKS] = "full_checks",
    [SW_KIND_LISTING] = "listing",
};
_Static_assert(SW_KIND_COUNT <= SW_COMPILE_MAX_KINDS, "swmetal.h's SW_COMPILE_MAX_KINDS is too small");

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static sw_compile_phases totals[SW_KIND_COUNT];

double sw_stats_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The "dur" (microseconds) of the event named `name` in a Chrome trace, in seconds;
 * -1 when it is not there.  clang writes each event as one flat object with its
 * "dur" before its "name"; the search looks on both sides within the object. */
static double event_seconds(const char *text, const char *name) {
    char key[96];
    snprintf(key, sizeof key, "\"name\":\"%s\"", name); /* the closing quote: no longer names */
    for (const char *at = strstr(text, key); at; at = strstr(at + 1, key)) {
        const char *start = at;
        while (start > text && *start != '{') start--;
        const char *end = strchr(at, '}');
        for (const char *d = strstr(start, "\"dur\":"); d && (!end || d < end); d = strstr(d + 1, "\"dur\":")) {
            char *stop;
            double us = strtod(d + 6, &stop);
            if (stop != d + 6 && us >= 0) return us * 1e-6;
        }
    }
    return -1;
}

int sw_clang_times_read(const char *trace_path, sw_clang_times *t) {
    t->execute_s = t->frontend_s = t->optimise_s = t->backend_s = -1;
    char *text = sw_read_file(trace_path, NULL);
    if (!text) return -1;
    t->execute_s = event_seconds(text, "Total ExecuteCompiler");
    t->frontend_s = event_seconds(text, "Total Frontend");
    t->optimise_s = event_seconds(text, "Total Optimizer");
    t->backend_s = event_seconds(text, "Total Backend");
    free(text);
    return 0;
}

static void ensure_names(void) {
    for (int k = 0; k < SW_KIND_COUNT; k++) totals[k].kind = kind_names[k];
}

static void add_prepass(int kind, double seconds, int runs) {
    if (kind < 0 || kind >= SW_KIND_COUNT || !(seconds >= 0)) return;
    pthread_mutex_lock(&mu);
    ensure_names();
    totals[kind].prepasses += runs;
    totals[kind].prepass_s += seconds;
    totals[kind].wall_s += seconds;
    pthread_mutex_unlock(&mu);
}

void sw_stats_add_prepass(int kind, double seconds) { add_prepass(kind, seconds, 1); }

void sw_stats_add_lookup(int kind, double seconds) { add_prepass(kind, seconds, 0); }

void sw_stats_add_cached(int kind) {
    if (kind < 0 || kind >= SW_KIND_COUNT) return;
    pthread_mutex_lock(&mu);
    ensure_names();
    totals[kind].cached++;
    pthread_mutex_unlock(&mu);
}

/* Adds a phase that may be unknown (< 0): an unknown one stays unknown in totals
 * that have nothing else (so a reader sees "not reported", not zero). */
static void add_phase(double *total, double v, int first) {
    if (v < 0) {
        if (first) *total = -1;
        return;
    }
    *total = *total < 0 ? v : *total + v;
}

void sw_stats_add_compile(int kind, double wall_s, const sw_clang_times *t) {
    if (kind < 0 || kind >= SW_KIND_COUNT) return;
    sw_clang_times none = {-1, -1, -1, -1};
    if (!t) t = &none;
    /* code generation: the backend less the optimiser; link: the wall time of the
     * clang process outside its compiler job (driver, linker, start and exit) */
    double codegen = t->backend_s >= 0 && t->optimise_s >= 0 ? t->backend_s - t->optimise_s : t->backend_s;
    double link = t->execute_s >= 0 && wall_s >= t->execute_s ? wall_s - t->execute_s : -1;
    pthread_mutex_lock(&mu);
    ensure_names();
    sw_compile_phases *p = &totals[kind];
    int first = p->compiles == 0;
    add_phase(&p->frontend_s, t->frontend_s, first);
    add_phase(&p->optimise_s, t->optimise_s, first);
    add_phase(&p->codegen_s, codegen, first);
    add_phase(&p->link_s, link, first);
    p->compiles++;
    p->wall_s += wall_s;
    pthread_mutex_unlock(&mu);
}

void sw_compile_stats_get(sw_compile_stats *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&mu);
    ensure_names();
    for (int k = 0; k < SW_KIND_COUNT; k++) out->kinds[k] = totals[k];
    pthread_mutex_unlock(&mu);
}

static double phase_diff(double later, double earlier) {
    if (later < 0) return -1;
    return earlier < 0 ? later : later - earlier;
}

void sw_compile_stats_diff(const sw_compile_stats *later, const sw_compile_stats *earlier, sw_compile_stats *out) {
    memset(out, 0, sizeof *out);
    int n = 0;
    for (int k = 0; k < SW_COMPILE_MAX_KINDS && later->kinds[k].kind; k++) {
        const sw_compile_phases *a = &later->kinds[k], *b = &earlier->kinds[k];
        if (a->compiles == b->compiles && a->cached == b->cached && a->prepasses == b->prepasses &&
            a->wall_s == b->wall_s)
            continue;
        sw_compile_phases *o = &out->kinds[n++];
        o->kind = a->kind;
        o->compiles = a->compiles - b->compiles;
        o->cached = a->cached - b->cached;
        o->prepasses = a->prepasses - b->prepasses;
        o->prepass_s = a->prepass_s - b->prepass_s;
        o->frontend_s = phase_diff(a->frontend_s, b->frontend_s);
        o->optimise_s = phase_diff(a->optimise_s, b->optimise_s);
        o->codegen_s = phase_diff(a->codegen_s, b->codegen_s);
        o->link_s = phase_diff(a->link_s, b->link_s);
        o->wall_s = a->wall_s - b->wall_s;
    }
}
