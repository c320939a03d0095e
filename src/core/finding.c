/* finding.c — names and text of the software device's findings (finding.h). */
#include "core/finding.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

static const char *const kind_names[DEV_FIND_NKINDS] = {
    [DEV_FIND_OOB] = "out_of_bounds",
    [DEV_FIND_UNINIT_READ] = "uninitialized_read",
    [DEV_FIND_TG_RACE] = "threadgroup_race",
    [DEV_FIND_DEVICE_WRITE_WRITE] = "device_write_conflict",
    [DEV_FIND_DEVICE_READ_WRITE] = "device_read_write_conflict",
    [DEV_FIND_DIVERGENT_BARRIER] = "divergent_barrier",
    [DEV_FIND_FAULT] = "fault",
    [DEV_FIND_LIMIT] = "limit",
    [DEV_FIND_TIMEOUT] = "timeout",
    [DEV_FIND_NUMERIC] = "numeric",
};

const char *dev_finding_kind_name(int kind) {
    return kind > 0 && kind < DEV_FIND_NKINDS && kind_names[kind] ? kind_names[kind] : "unknown";
}

/* Appends to buf at *off, never past n. */
static void put(char *buf, size_t n, size_t *off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *off, const char *fmt, ...) {
    if (*off >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *off, n - *off, fmt, ap);
    va_end(ap);
    if (k > 0) *off += (size_t)k < n - *off ? (size_t)k : n - *off - 1;
}

void dev_site_where(const dev_site *s, char *buf, size_t n) {
    if (s->line > 0 && s->file[0]) snprintf(buf, n, "%s:%d", s->file, s->line);
    else if (s->line > 0) snprintf(buf, n, "line %d", s->line);
    else snprintf(buf, n, "an unknown location");
}

/* "threadgroup race", "out-of-bounds write", ... */
static void title(const dev_finding *f, char *buf, size_t n) {
    const char *acc = f->nsites > 0 ? f->site[f->nsites - 1].access : "";
    switch (f->kind) {
    case DEV_FIND_OOB: snprintf(buf, n, "out-of-bounds %s", acc[0] ? acc : "access"); break;
    case DEV_FIND_UNINIT_READ: snprintf(buf, n, "read of uninitialised threadgroup memory"); break;
    case DEV_FIND_TG_RACE: snprintf(buf, n, "threadgroup memory race"); break;
    case DEV_FIND_DEVICE_WRITE_WRITE: snprintf(buf, n, "device memory write-write conflict"); break;
    case DEV_FIND_DEVICE_READ_WRITE: snprintf(buf, n, "device memory read-write conflict between threadgroups"); break;
    case DEV_FIND_DIVERGENT_BARRIER: snprintf(buf, n, "divergent threadgroup barrier"); break;
    case DEV_FIND_LIMIT: snprintf(buf, n, "device limit exceeded"); break;
    case DEV_FIND_TIMEOUT: snprintf(buf, n, "dispatch stopped by the watchdog"); break;
    case DEV_FIND_NUMERIC: snprintf(buf, n, "numeric error"); break;
    default: snprintf(buf, n, "fault"); break;
    }
}

/* " on buffer(3) bytes 1024..1027 (length 1024)" / " on 'tile' (line 5) bytes 0..3" */
static void place(const dev_finding *f, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    if (strcmp(f->memory, "device") == 0 && f->buffer >= 0) {
        put(buf, n, &off, " on buffer(%d)", f->buffer);
    } else if (strcmp(f->memory, "threadgroup") == 0) {
        if (f->variable[0]) {
            put(buf, n, &off, " on '%s'", f->variable);
            if (f->variable_line > 0) put(buf, n, &off, " (line %d)", f->variable_line);
        } else if (f->buffer >= 0) {
            put(buf, n, &off, " on [[threadgroup(%d)]]", f->buffer);
        } else {
            put(buf, n, &off, " on threadgroup memory");
        }
    }
    if (!f->has_range) return;
    if (f->offset_hi - f->offset_lo <= 1)
        put(buf, n, &off, " byte %" PRId64, f->offset_lo);
    else
        put(buf, n, &off, " bytes %" PRId64 "..%" PRId64, f->offset_lo, f->offset_hi - 1);
    if (f->length > 0) {
        if (f->offset_lo < 0)
            put(buf, n, &off, " (before its start; it has %" PRIu64 " bytes)", f->length);
        else if ((uint64_t)f->offset_hi > f->length && f->kind == DEV_FIND_OOB)
            put(buf, n, &off, " (past its end; it has %" PRIu64 " bytes)", f->length);
        else
            put(buf, n, &off, " of %" PRIu64, f->length);
    }
}

static void counts(const dev_finding *f, char *buf, size_t n) {
    snprintf(buf, n, "%" PRIu64 " occurrence%s, %" PRIu64 " thread%s, %" PRIu64 " threadgroup%s", f->occurrences,
             f->occurrences == 1 ? "" : "s", f->threads, f->threads == 1 ? "" : "s", f->threadgroups,
             f->threadgroups == 1 ? "" : "s");
}

static void interval(const dev_finding *f, char *buf, size_t n) {
    char a[300], b[300];
    dev_site_where(&f->barrier[0], a, sizeof a);
    dev_site_where(&f->barrier[1], b, sizeof b);
    /* a detail names a barrier between them whose flags do not order this memory */
    const char *none = f->detail[0] ? "no barrier ordering this memory between them" : "no barrier between them";
    if (f->barrier[0].line <= 0 && f->barrier[1].line <= 0)
        snprintf(buf, n, "%s: none since the kernel started, none before it ended", none);
    else if (f->barrier[0].line <= 0)
        snprintf(buf, n, "%s: none since the kernel started; the next is at %s", none, b);
    else if (f->barrier[1].line <= 0)
        snprintf(buf, n, "%s: the last was at %s; none follows before the kernel ends", none, a);
    else
        snprintf(buf, n, "%s: both lie between the barrier at %s and the one at %s", none, a, b);
}

/* " by thread_position_in_grid (x,y,z) of threadgroup (a,b,c)", or "". */
static void who(const dev_site *s, char *buf, size_t n) {
    if (!s->has_thread) {
        buf[0] = 0;
        return;
    }
    snprintf(buf, n, " by thread_position_in_grid (%u,%u,%u) of threadgroup (%u,%u,%u)", s->thread[0], s->thread[1],
             s->thread[2], s->threadgroup[0], s->threadgroup[1], s->threadgroup[2]);
}

void dev_finding_summary(const dev_finding *f, char *buf, size_t n) {
    char t[96], p[200], w0[300], w1[300], c[160], b0[120], b1[120];
    title(f, t, sizeof t);
    place(f, p, sizeof p);
    counts(f, c, sizeof c);
    size_t off = 0;
    buf[0] = 0;
    put(buf, n, &off, "%s%s", t, p);
    if (f->detail[0]) put(buf, n, &off, ": %s", f->detail);
    if (f->nsites >= 1) {
        dev_site_where(&f->site[0], w0, sizeof w0);
        who(&f->site[0], b0, sizeof b0);
    }
    if (f->nsites == 2) {
        dev_site_where(&f->site[1], w1, sizeof w1);
        who(&f->site[1], b1, sizeof b1);
        if (f->kind == DEV_FIND_DIVERGENT_BARRIER)
            put(buf, n, &off, ": %u thread%s wait at %s (one%s) and %u at %s (one%s)", f->site[0].nthreads,
                f->site[0].nthreads == 1 ? "" : "s", w0, b0, f->site[1].nthreads, w1, b1);
        else
            put(buf, n, &off, ": %s at %s%s and %s at %s%s", f->site[0].access, w0, b0, f->site[1].access, w1, b1);
        if (f->has_interval) {
            char iv[700];
            interval(f, iv, sizeof iv);
            put(buf, n, &off, ", %s", iv);
        }
    } else if (f->nsites == 1) {
        put(buf, n, &off, " at %s%s", w0, b0);
    }
    put(buf, n, &off, " (%s)", c);
}

static void print_site(FILE *out, const dev_site *s, const char *indent, const char *role) {
    char where[300];
    dev_site_where(s, where, sizeof where);
    fprintf(out, "%s  %-7s %s", indent, role, where);
    if (s->text[0]) fprintf(out, "  `%s`", s->text);
    fprintf(out, "\n");
    if (s->has_thread) {
        fprintf(out, "%s          thread_position_in_grid (%u,%u,%u), threadgroup (%u,%u,%u), thread_index_in_threadgroup %u",
                indent, s->thread[0], s->thread[1], s->thread[2], s->threadgroup[0], s->threadgroup[1],
                s->threadgroup[2], s->index);
        if (s->nthreads > 1) fprintf(out, " (one of %u)", s->nthreads);
        fprintf(out, "\n");
    }
}

void dev_finding_print(FILE *out, const dev_finding *f, const char *indent) {
    char t[96], p[200], c[160];
    title(f, t, sizeof t);
    place(f, p, sizeof p);
    counts(f, c, sizeof c);
    fprintf(out, "%s%s%s%s%s (%s)\n", indent, t, p, f->detail[0] ? ": " : "", f->detail, c);
    for (int i = 0; i < f->nsites && i < 2; i++) {
        const dev_site *s = &f->site[i];
        char role[16];
        snprintf(role, sizeof role, "%s", s->access[0] ? s->access : "at");
        print_site(out, s, indent, role);
    }
    if (f->has_interval) {
        char iv[700];
        interval(f, iv, sizeof iv);
        fprintf(out, "%s  %s\n", indent, iv);
    }
}

void dev_findings_print(FILE *out, const dev_finding *list, int n, int max, const char *indent) {
    int shown = max < 0 || max > n ? n : max;
    for (int i = 0; i < shown; i++) dev_finding_print(out, &list[i], indent);
    if (shown < n)
        fprintf(out, "%s... and %d more distinct finding%s (all in the JSON report; --sw-max-findings N shows more)\n",
                indent, n - shown, n - shown == 1 ? "" : "s");
}
