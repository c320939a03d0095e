/* junit.c — the JUnit XML writer (junit.h).
 *
 *   <?xml version="1.0" encoding="UTF-8"?>
 *   <testsuites name=".." tests="N" failures="N" errors="N" skipped="N" time="S">
 *     <testsuite name=".." tests=.. failures=.. errors=.. skipped=.. time=.. timestamp="ISO 8601">
 *       <testcase classname="gdnbench.OP" name="SHAPE" time="S">
 *         <failure message="one line" type="check">every failed check, findings' lines</failure>
 *         | <error message=".." type="error">..</error> | <skipped message=".."/>
 *       </testcase> ...
 *
 * The element and attribute names are those of the JUnit schema Jenkins and GitLab
 * read (testsuites/testsuite/testcase, failure/error/skipped with message and type);
 * counts are computed here from the cases, so they add up by construction.  Text and
 * attribute values are escaped (& < > " '); bytes XML 1.0 forbids (control characters
 * other than tab and line breaks) are written as '?', bytes that are not UTF-8 as
 * U+FFFD. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/finding.h"
#include "core/utf8.h"
#include "report/junit.h"

typedef struct junit_tc {
    char *classname, *name, *message, *body;
    double seconds;
    junit_outcome outcome;
} junit_tc;

typedef struct junit_ts {
    char *name;
    int first, n;          /* its cases: cases[first .. first+n) */
} junit_ts;

struct junit_doc {
    char *name;
    char timestamp[32];
    junit_tc *cases;
    int ncases, cap;
    junit_ts *suites;
    int nsuites, suites_cap;
};

static char *dup_or_null(const char *s) { return s && s[0] ? strdup(s) : NULL; }

junit_doc *junit_new(const char *name) {
    junit_doc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->name = strdup(name);
    if (!d->name) {
        free(d);
        return NULL;
    }
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(d->timestamp, sizeof d->timestamp, "%Y-%m-%dT%H:%M:%S", &tm);
    return d;
}

void junit_free(junit_doc *d) {
    if (!d) return;
    for (int i = 0; i < d->ncases; i++) {
        free(d->cases[i].classname);
        free(d->cases[i].name);
        free(d->cases[i].message);
        free(d->cases[i].body);
    }
    for (int i = 0; i < d->nsuites; i++) free(d->suites[i].name);
    free(d->cases);
    free(d->suites);
    free(d->name);
    free(d);
}

int junit_suite(junit_doc *d, const char *name) {
    if (d->nsuites == d->suites_cap) {
        int cap = d->suites_cap ? 2 * d->suites_cap : 4;
        junit_ts *grown = realloc(d->suites, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        d->suites = grown;
        d->suites_cap = cap;
    }
    junit_ts *s = &d->suites[d->nsuites];
    s->name = strdup(name);
    if (!s->name) return -1;
    s->first = d->ncases;
    s->n = 0;
    d->nsuites++;
    return 0;
}

int junit_case(junit_doc *d, const char *classname, const char *name, double seconds, junit_outcome outcome,
               const char *message, const char *body) {
    if (d->nsuites == 0 && junit_suite(d, d->name) != 0) return -1;
    if (d->ncases == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        junit_tc *grown = realloc(d->cases, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        d->cases = grown;
        d->cap = cap;
    }
    junit_tc *c = &d->cases[d->ncases];
    memset(c, 0, sizeof *c);
    c->classname = strdup(classname);
    c->name = strdup(name);
    c->seconds = isfinite(seconds) && seconds > 0 ? seconds : 0;
    c->outcome = outcome;
    /* a failure, error or skip always says why */
    c->message = outcome == JUNIT_PASS ? NULL : strdup(message && message[0] ? message : "(no reason given)");
    c->body = outcome == JUNIT_PASS ? NULL : dup_or_null(body);
    if (!c->classname || !c->name || (outcome != JUNIT_PASS && !c->message) || (body && body[0] && outcome != JUNIT_PASS && !c->body)) {
        free(c->classname);
        free(c->name);
        free(c->message);
        free(c->body);
        return -1;
    }
    d->ncases++;
    d->suites[d->nsuites - 1].n++;
    return 0;
}

/* ---- text a case's failure carries ------------------------------------------ */

/* A growing string; ok cleared for good when memory runs out. */
typedef struct jtext {
    char *s;
    size_t len, cap;
    int ok;
} jtext;

static void jt_printf(jtext *t, const char *fmt, ...) {
    if (!t->ok) return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return;
    if (t->len + (size_t)need + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + (size_t)need + 1) cap *= 2;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            t->ok = 0;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)need;
}

/* The device's findings, each with its source lines, as the table prints them. */
static void findings_text(jtext *t, const dev_finding *list, int n) {
    if (n <= 0 || !t->ok) return;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        t->ok = 0;
        return;
    }
    dev_findings_print(mem, list, n, -1, "  ");
    if (fclose(mem) == 0 && buf) jt_printf(t, "device findings (%d):\n%s", n, buf);
    else t->ok = 0;
    free(buf);
}

/* "B=1 T=64 H=4" from an op record's dimensions; a kernel case's name. */
static void record_name(const run_record *r, char *out, size_t n) {
    if (r->kcase.present) {
        snprintf(out, n, "%s", r->kcase.name);
        return;
    }
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; r->op && i < r->op->ndims && len < n; i++) {
        int w = snprintf(out + len, n - len, "%s%s=%lld", i ? " " : "", r->op->dims[i].name, (long long)r->dim[i]);
        if (w < 0) break;
        len += (size_t)w;
    }
}

/* One line per failed check, the determinism, the device's error (a record that
 * could not run: that error alone, its checks never ran to the end). */
static int record_reasons(const run_record *r, jtext *t) {
    int n = 0;
    if (r->error[0]) {
        jt_printf(t, "%s\n", r->error);
        n++;
    }
    if (r->status == RUN_ERROR) return n;
    for (int i = 0; i < r->nchecks; i++) {
        const rec_check *c = &r->checks[i];
        if (c->pass) continue;
        jt_printf(t, "%s vs %s: max_abs %.3g max_rel %.3g rel_l2 %.3g (atol %g rtol %g), %lld bad", c->output,
                  c->reference, c->max_abs, c->max_rel, c->rel_l2, c->atol, c->rtol, (long long)c->n_bad);
        if (c->first_bad_index >= 0) jt_printf(t, ", first at index %lld", (long long)c->first_bad_index);
        if (c->nan || c->inf || c->unwritten)
            jt_printf(t, "; nan %lld inf %lld unwritten %lld", (long long)c->nan, (long long)c->inf,
                      (long long)c->unwritten);
        jt_printf(t, "\n");
        n++;
    }
    if (r->determinism_runs > 1 && !r->bitwise_identical) {
        jt_printf(t, "outputs differ between %d runs of the same inputs (not bitwise identical)\n", r->determinism_runs);
        n++;
    }
    return n;
}

/* The time a record accounts for, in seconds: warmup and timed runs, CPU references. */
static double record_seconds(const run_record *r) {
    double us = r->ref_us[0] + r->ref_us[1];
    for (int i = 0; r->timing.samples && i < r->timing.n; i++) us += r->timing.samples[i];
    for (int i = 0; r->warmup_timing.samples && i < r->warmup_timing.n; i++) us += r->warmup_timing.samples[i];
    return us * 1e-6;
}

/* The first line of text (cut at 500 bytes) as the message. */
static void first_line(const char *text, const char *fallback, char *out, size_t n) {
    const char *s = text && text[0] ? text : fallback;
    size_t len = strcspn(s, "\n");
    if (len >= n) len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

int junit_add_record(junit_doc *d, const run_record *r, double seconds) {
    char name[512], classname[160], message[512];
    record_name(r, name, sizeof name);
    snprintf(classname, sizeof classname, "gdnbench.%s", r->op ? r->op->name : "?");
    if (seconds < 0) seconds = record_seconds(r);
    if (r->status == RUN_PASS) return junit_case(d, classname, name, seconds, JUNIT_PASS, NULL, NULL);
    jtext t = {.ok = 1};
    int n = record_reasons(r, &t);
    findings_text(&t, r->findings, r->nfindings);
    if (!t.ok) {
        free(t.s);
        return -1;
    }
    int error = r->status == RUN_ERROR;
    first_line(t.s, error ? "could not run" : "a check failed (the table names it)", message, sizeof message);
    if (n > 1) {
        size_t len = strlen(message);
        snprintf(message + len, sizeof message - len, " (and %d more: see the details)", n - 1);
    }
    int rc = junit_case(d, classname, name, seconds, error ? JUNIT_ERROR : JUNIT_FAILURE, message, t.s);
    free(t.s);
    return rc;
}

/* ---- validate ----------------------------------------------------------------- */

static int add_validate_case(junit_doc *d, const validate_report *vr, const char *classname, int i) {
    const validate_case_spec *spec = &vr->specs[i];
    char name[512];
    size_t len = (size_t)snprintf(name, sizeof name, "#%d %s", i + 1, spec->why);
    if (spec->profile && len < sizeof name) len += (size_t)snprintf(name + len, sizeof name - len, " [%s]", spec->profile->name);
    for (int k = 0; k < vr->op->ndims && len < sizeof name; k++)
        len += (size_t)snprintf(name + len, sizeof name - len, " %s=%lld", vr->op->dims[k].name, (long long)spec->dim[k]);
    if (i >= vr->ncases)
        return junit_case(d, classname, name, 0, JUNIT_SKIPPED, "not run: an earlier case could not run", NULL);
    const validate_result *res = &vr->results[i];
    if (res->status == VAL_PASS) return junit_case(d, classname, name, res->seconds, JUNIT_PASS, NULL, NULL);
    if (res->status == VAL_UNSUPPORTED)
        return junit_case(d, classname, name, res->seconds, JUNIT_SKIPPED, res->reason, NULL);
    jtext t = {.ok = 1};
    int nfail = 0;
    for (int k = 0; k < res->nfindings; k++) {
        const validate_finding *f = &res->findings[k];
        if (f->is_note) continue;
        jt_printf(&t, "%s%s%s%s%s\n", f->text, f->first_bad[0] ? "; first bad " : "", f->first_bad,
                  f->pattern[0] ? "; where: " : "", f->pattern);
        nfail++;
    }
    findings_text(&t, res->dev_findings, res->ndev_findings);
    if (!t.ok) {
        free(t.s);
        return -1;
    }
    char message[512];
    first_line(res->reason[0] ? res->reason : t.s, "a check failed", message, sizeof message);
    if (!res->reason[0] && nfail > 1) {
        size_t l = strlen(message);
        snprintf(message + l, sizeof message - l, " (and %d more: see the details)", nfail - 1);
    }
    int rc = junit_case(d, classname, name, res->seconds, res->status == VAL_ERROR ? JUNIT_ERROR : JUNIT_FAILURE,
                        message, t.s);
    free(t.s);
    return rc;
}

int junit_add_validate(junit_doc *d, const validate_report *vr) {
    char classname[160], suite[200];
    snprintf(classname, sizeof classname, "gdnbench.validate.%s", vr->op->name);
    snprintf(suite, sizeof suite, "gdnbench validate %s", vr->op->name);
    if (junit_suite(d, suite) != 0) return -1;
    for (int i = 0; i < vr->nspecs; i++)
        if (add_validate_case(d, vr, classname, i) != 0) return -1;
    return 0;
}

/* ---- writing -------------------------------------------------------------------- */

/* n bytes of UTF-8 escaped for XML text (attr 0) or a double-quoted attribute
 * value (attr 1). */
static void put_escaped_utf8(FILE *f, const unsigned char *p, size_t n, int attr) {
    for (const unsigned char *end = p + n; p < end; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs(attr ? "&quot;" : "\"", f); break;
        case '\'': fputs(attr ? "&apos;" : "'", f); break;
        case '\n': fputs(attr ? "&#10;" : "\n", f); break;
        case '\r': fputs("&#13;", f); break;
        case '\t': fputs(attr ? "&#9;" : "\t", f); break;
        default: fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        }
    }
}

/* s escaped as above; a byte that is not UTF-8 (a file name or a message quoting
 * what the user gave) becomes U+FFFD, since an XML document must be well-formed
 * UTF-8 and CI servers reject the whole report otherwise. */
static void put_escaped(FILE *f, const char *s, int attr) {
    size_t n = strlen(s);
    while (n) {
        long bad = utf8_invalid_offset(s, n);
        size_t ok = bad < 0 ? n : (size_t)bad;
        put_escaped_utf8(f, (const unsigned char *)s, ok, attr);
        if (bad < 0) break;
        fputs("\xEF\xBF\xBD", f);
        s += ok + 1;
        n -= ok + 1;
    }
}

typedef struct junit_counts {
    int tests, failures, errors, skipped;
    double seconds;
} junit_counts;

static junit_counts count_cases(const junit_tc *c, int n) {
    junit_counts k = {0};
    for (int i = 0; i < n; i++) {
        k.tests++;
        k.failures += c[i].outcome == JUNIT_FAILURE;
        k.errors += c[i].outcome == JUNIT_ERROR;
        k.skipped += c[i].outcome == JUNIT_SKIPPED;
        k.seconds += c[i].seconds;
    }
    return k;
}

static void put_counts(FILE *f, const char *element, const char *name, junit_counts k) {
    fprintf(f, "<%s name=\"", element);
    put_escaped(f, name, 1);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\"", k.tests, k.failures,
            k.errors, k.skipped, k.seconds);
}

static void put_case(FILE *f, const junit_tc *c) {
    static const char *const element[] = {NULL, "failure", "error", "skipped"};
    static const char *const type[] = {NULL, "check", "error", NULL};
    fputs("    <testcase classname=\"", f);
    put_escaped(f, c->classname, 1);
    fputs("\" name=\"", f);
    put_escaped(f, c->name, 1);
    fprintf(f, "\" time=\"%.6f\"", c->seconds);
    if (c->outcome == JUNIT_PASS) {
        fputs("/>\n", f);
        return;
    }
    fprintf(f, ">\n      <%s message=\"", element[c->outcome]);
    put_escaped(f, c->message, 1);
    fputc('"', f);
    if (type[c->outcome]) fprintf(f, " type=\"%s\"", type[c->outcome]);
    if (c->body) {
        fputc('>', f);
        put_escaped(f, c->body, 0);
        fprintf(f, "</%s>\n", element[c->outcome]);
    } else {
        fputs("/>\n", f);
    }
    fputs("    </testcase>\n", f);
}

static void put_document(FILE *f, const junit_doc *d) {
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    put_counts(f, "testsuites", d->name, count_cases(d->cases, d->ncases));
    fputs(">\n", f);
    for (int s = 0; s < d->nsuites; s++) {
        const junit_ts *ts = &d->suites[s];
        fputs("  ", f);
        put_counts(f, "testsuite", ts->name, count_cases(d->cases + ts->first, ts->n));
        fprintf(f, " timestamp=\"%s\">\n", d->timestamp);
        for (int i = 0; i < ts->n; i++) put_case(f, &d->cases[ts->first + i]);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
}

int junit_write(const junit_doc *d, const char *path, char *err, size_t errlen) {
    if (strcmp(path, "-") == 0) {
        put_document(stdout, d);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            snprintf(err, errlen, "--junit -: cannot write to stdout: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    size_t plen = strlen(path) + 5;
    char *tmp = malloc(plen);
    if (!tmp) {
        snprintf(err, errlen, "out of memory while writing the JUnit report to %s", path);
        return -1;
    }
    snprintf(tmp, plen, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "--junit %s: cannot create %s: %s", path, tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    put_document(f, d);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "--junit %s: write failed (disk full?)", path);
        remove(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "--junit %s: cannot rename %s to it: %s", path, tmp, strerror(errno));
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int junit_write_records(const char *path, const char *name, run_record *const *recs, int n, char *err,
                        size_t errlen) {
    junit_doc *d = junit_new(name);
    int rc = d ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) rc = junit_add_record(d, recs[i], -1);
    if (rc != 0) snprintf(err, errlen, "out of memory while writing the JUnit report to %s", path);
    else rc = junit_write(d, path, err, errlen);
    junit_free(d);
    return rc;
}
