/* ir_target.c — ir_target.h: a module's target lines and CPU attributes, read,
 * removed and put back, line by line on clang's own print format. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/ir_target.h"
#include "swmetal/llir.h"

struct sw_ir_target {
    char *datalayout; /* the whole line, or NULL */
    char *triple;     /* the whole line */
    char *attrs;      /* ` "target-cpu"="..." ...` as the front end wrote them, or "" */
};

/* The attributes that name a CPU: the ones a canonical module must not carry. */
static const char *const cpu_attrs[] = {"\"target-cpu\"=\"", "\"target-features\"=\"", "\"tune-cpu\"=\""};
enum { NCPU_ATTRS = sizeof cpu_attrs / sizeof cpu_attrs[0] };

typedef struct line {
    const char *p;
    size_t n;
} line;

/* The line at *pos (without its newline); advances past it.  0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, line *l) {
    if (*pos >= len) return 0;
    const char *s = text + *pos, *e = memchr(s, '\n', len - *pos);
    l->p = s;
    l->n = e ? (size_t)(e - s) : len - *pos;
    *pos += l->n + (e ? 1 : 0);
    return 1;
}

static int starts(line l, const char *lit) {
    size_t k = strlen(lit);
    return l.n >= k && memcmp(l.p, lit, k) == 0;
}

static const char *find_in(line l, const char *lit) {
    size_t k = strlen(lit);
    for (size_t i = 0; i + k <= l.n; i++)
        if (memcmp(l.p + i, lit, k) == 0) return l.p + i;
    return NULL;
}

/* The CPU attribute at a (`"key"="value"`): its end, just past the value's quote. */
static const char *attr_end(line l, const char *a, const char *key) {
    const char *v = a + strlen(key), *end = l.p + l.n;
    while (v < end && *v != '"') v++;
    return v < end ? v + 1 : end;
}

/* The CPU attributes of an attribute group's line, each with its leading space. */
static char *line_cpu_attrs(line l) {
    msl_buf b = {0};
    msl_buf_puts(&b, "");
    for (int k = 0; k < NCPU_ATTRS; k++) {
        const char *a = find_in(l, cpu_attrs[k]);
        if (a) {
            msl_buf_puts(&b, " ");
            msl_buf_put(&b, a, (size_t)(attr_end(l, a, cpu_attrs[k]) - a));
        }
    }
    return msl_buf_take(&b);
}

sw_ir_target *sw_ir_target_read(const char *text, size_t len, char **err) {
    sw_ir_target *t = calloc(1, sizeof *t);
    if (!t) {
        *err = strdup("out of memory reading the kernel's LLVM IR");
        return NULL;
    }
    size_t pos = 0;
    line l;
    while (next_line(text, len, &pos, &l)) {
        if (!t->datalayout && starts(l, "target datalayout = ")) t->datalayout = strndup(l.p, l.n);
        else if (!t->triple && starts(l, "target triple = ")) t->triple = strndup(l.p, l.n);
        else if (!t->attrs && starts(l, "attributes #") && find_in(l, cpu_attrs[0])) t->attrs = line_cpu_attrs(l);
    }
    if (!t->attrs) t->attrs = strdup("");
    if (!t->triple || !t->attrs) {
        *err = strdup(t->attrs ? "the front end's LLVM IR names no target triple" : "out of memory reading LLVM IR");
        sw_ir_target_free(t);
        return NULL;
    }
    return t;
}

void sw_ir_target_forget_cpu(sw_ir_target *t) {
    if (t && t->attrs) *t->attrs = '\0';
}

void sw_ir_target_free(sw_ir_target *t) {
    if (!t) return;
    free(t->datalayout);
    free(t->triple);
    free(t->attrs);
    free(t);
}

/* Attribute group ids named by function definitions and declarations (` #N`
 * outside quotes: function attributes; parameters' are spelled out). */
typedef struct ids {
    int *v;
    int n, cap;
} ids;

static void ids_add(ids *s, int id) {
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == id) return;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        int *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return; /* the group then keeps no CPU attributes: the driver's CPU applies */
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = id;
}

static int ids_has(const ids *s, int id) {
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == id) return 1;
    return 0;
}

static int function_name(line l, line *name);

static void function_groups(const char *text, size_t len, ids *out) {
    size_t pos = 0;
    line l, name;
    while (next_line(text, len, &pos, &l)) {
        if (!starts(l, "define ") && !starts(l, "declare ")) continue;
        /* intrinsics carry no CPU (clang's front end gives them none) */
        if (function_name(l, &name) && name.n >= 5 && memcmp(name.p, "llvm.", 5) == 0) continue;
        int g = ll_line_attr_group((ll_span){l.p, l.n});
        if (g >= 0) ids_add(out, g);
    }
}

/* An attribute group's line without its CPU attributes, and with `add` before its
 * closing brace when add is not NULL. */
static void put_group(line l, const char *add, msl_buf *out) {
    const char *p = l.p, *end = l.p + l.n;
    for (;;) {
        const char *first = NULL, *key = NULL;
        line rest = {p, (size_t)(end - p)};
        for (int k = 0; k < NCPU_ATTRS; k++) {
            const char *a = find_in(rest, cpu_attrs[k]);
            if (a && (!first || a < first)) first = a, key = cpu_attrs[k];
        }
        if (!first) break;
        const char *cut = first > p && first[-1] == ' ' ? first - 1 : first;
        msl_buf_put(out, p, (size_t)(cut - p));
        p = attr_end(rest, first, key);
    }
    size_t tail = (size_t)(end - p);
    if (add && *add && tail >= 2 && memcmp(end - 2, " }", 2) == 0) {
        msl_buf_put(out, p, tail - 2);
        msl_buf_puts(out, add);
        msl_buf_puts(out, " }");
    } else {
        msl_buf_put(out, p, tail);
    }
    msl_buf_puts(out, "\n");
}

/* A definition's or global's line without its comdat (` comdat`, `, comdat`,
 * either with `($name)`), found outside quoted text. */
static void put_without_comdat(line l, msl_buf *out) {
    static const char kw[] = "comdat";
    const size_t k = sizeof kw - 1;
    const char *p = l.p, *end = l.p + l.n;
    int quoted = 0;
    for (const char *q = l.p; q + k <= end; q++) {
        if (*q == '"') quoted = !quoted;
        if (quoted || q == l.p || q[-1] != ' ' || memcmp(q, kw, k) != 0) continue;
        const char *after = q + k;
        if (after < end && *after == '(') {
            const char *close = memchr(after, ')', (size_t)(end - after));
            if (!close) continue;
            after = close + 1;
        }
        if (after < end && *after != ',' && *after != ' ') continue;
        const char *cut = q - 1; /* the space before it, and a comma before that */
        if (cut > p && cut[-1] == ',') cut--;
        msl_buf_put(out, p, (size_t)(cut - p));
        p = q = after;
    }
    msl_buf_put(out, p, (size_t)(end - p));
    msl_buf_puts(out, "\n");
}

/* The module with t's target (NULL: none), as sw_ir_put_target says. */
static void retarget(const char *text, size_t len, const sw_ir_target *t, msl_buf *out) {
    ids groups = {0};
    if (t && *t->attrs) function_groups(text, len, &groups);
    int placed = !t;
    size_t pos = 0;
    line l;
    msl_buf_puts(out, "");
    while (next_line(text, len, &pos, &l)) {
        if (starts(l, "target datalayout = ") || starts(l, "target triple = ")) {
            if (!placed) {
                if (t->datalayout) msl_buf_printf(out, "%s\n", t->datalayout);
                msl_buf_printf(out, "%s\n", t->triple);
                placed = 1;
            }
            continue;
        }
        if (starts(l, "attributes #")) {
            put_group(l, t && ids_has(&groups, atoi(l.p + strlen("attributes #"))) ? t->attrs : NULL, out);
            continue;
        }
        if (!t && starts(l, "$") && find_in(l, " = comdat ")) continue;
        if (!t && (starts(l, "define ") || starts(l, "@"))) {
            put_without_comdat(l, out);
            continue;
        }
        msl_buf_put(out, l.p, l.n);
        msl_buf_puts(out, "\n");
    }
    if (!placed) {
        /* a module that had no target lines: LLVM takes them anywhere at the top level */
        if (t->datalayout) msl_buf_printf(out, "%s\n", t->datalayout);
        msl_buf_printf(out, "%s\n", t->triple);
    }
    free(groups.v);
}

void sw_ir_strip_target(const char *text, size_t len, msl_buf *out) { retarget(text, len, NULL, out); }

void sw_ir_put_target(const char *text, size_t len, const sw_ir_target *t, msl_buf *out) {
    retarget(text, len, t, out);
}

/* The name a `declare`/`define` line gives its function ("@name(" or "@\"name\"("),
 * without the @ and quotes; 0 when the line has none. */
static int function_name(line l, line *name) {
    const char *at = find_in(l, " @");
    if (!at) return 0;
    const char *p = at + 2, *end = l.p + l.n;
    if (p < end && *p == '"') {
        const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
        if (!q) return 0;
        *name = (line){p + 1, (size_t)(q - p - 1)};
        return 1;
    }
    const char *q = p;
    while (q < end && *q != '(') q++;
    *name = (line){p, (size_t)(q - p)};
    return q < end && q > p;
}

static int declares(const char *text, size_t len, line name) {
    size_t pos = 0;
    line l, n;
    while (next_line(text, len, &pos, &l))
        if ((starts(l, "declare ") || starts(l, "define ")) && function_name(l, &n) && n.n == name.n &&
            memcmp(n.p, name.p, n.n) == 0)
            return 1;
    return 0;
}

int sw_ir_check_new_calls(const char *before, size_t nbefore, const char *after, size_t nafter, char **err) {
    size_t pos = 0;
    line l, name;
    while (next_line(after, nafter, &pos, &l)) {
        if (!starts(l, "declare ") || !function_name(l, &name)) continue;
        if ((name.n >= 5 && memcmp(name.p, "llvm.", 5) == 0) || declares(before, nbefore, name)) continue;
        char *s = strndup(name.p, name.n);
        int found = s && dlsym(RTLD_DEFAULT, s) != NULL;
        if (!found) {
            msl_buf b = {0};
            msl_buf_printf(&b,
                           "the canonical middle end (" SW_IR_CANONICAL_TRIPLE
                           ") made the kernel call %.*s, which does not resolve in this process: this "
                           "kernel cannot be counted on this host (run it without --counters, and report it)",
                           (int)name.n, name.p);
            *err = msl_buf_take(&b);
        }
        free(s);
        if (!found) return -1;
    }
    return 0;
}
