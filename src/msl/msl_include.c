/* msl_include.c — msl_include.h: inlines the headers a .metal file includes.
 *
 * Directives are found with the shared MSL lexer, msl_lex.h (so an #include
 * inside a comment or a string is not one).  The text between directives is
 * copied unchanged; the line markers around an inlined header keep every line's
 * number. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sha256.h"
#include "core/strutil.h"
#include "core/utf8.h"
#include "msl/msl_include.h"
#include "msl/msl_lex.h"

#define MAX_DEPTH 200

typedef struct once_file {
    char *real;            /* realpath of a header with #pragma once */
    int done;              /* inlined where nothing could skip it: later inclusions are dropped */
} once_file;

typedef struct expander {
    const msl_source_opts *o;
    int mode;
    int inlined;           /* headers inlined */
    once_file *once;
    int nonce;
    const char *stack[MAX_DEPTH + 1];   /* realpaths being inlined */
    int depth;
    char *err;
} expander;

static int is_ident_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int msl_check_define(const char *def, char *err, size_t errlen) {
    const char *p = def;
    if (!*p || !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')) {
        snprintf(err, errlen, "-D %s: the macro name must be an identifier (NAME or NAME=VALUE)", def);
        return -1;
    }
    while (is_ident_char(*p)) p++;
    if (*p && *p != '=') {
        snprintf(err, errlen, "-D %s: the macro name must be an identifier (NAME or NAME=VALUE)", def);
        return -1;
    }
    if (strchr(def, '\n') || strchr(def, '\r')) {
        snprintf(err, errlen, "-D: the value of %.*s must be one line", (int)(p - def), def);
        return -1;
    }
    return 0;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    msl_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) msl_buf_put(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    msl_buf_put(&b, "", 0);
    char *t = msl_buf_take(&b);
    if (bad) {
        free(t);
        return NULL;
    }
    return t;
}

static int is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void put_quoted(msl_buf *b, const char *s) {
    msl_buf_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') msl_buf_put(b, "\\", 1);
        msl_buf_put(b, s, 1);
    }
    msl_buf_put(b, "\"", 1);
}

/* dir of `path` + "/" + name into out; a path without '/' means the current directory. */
static void join_dir_of(char *out, size_t n, const char *path, const char *name) {
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (name[0] == '/' || !slash) snprintf(out, n, "%s", name);
    else snprintf(out, n, "%.*s/%s", (int)(slash - path), path, name);
}

/* The header's path, or 0 when it is not found. */
static int resolve(const expander *x, const char *from, const char *name, int quoted, char *out, size_t n) {
    if (quoted || name[0] == '/') {
        join_dir_of(out, n, from, name);
        if (is_regular_file(out)) return 1;
        if (name[0] == '/') return 0;
    }
    for (int i = 0; i < x->o->ninclude_dirs; i++) {
        const char *d = x->o->include_dirs[i];
        size_t dl = strlen(d);
        snprintf(out, n, "%s%s%s", d, dl && d[dl - 1] == '/' ? "" : "/", name);
        if (is_regular_file(out)) return 1;
    }
    return 0;
}

/* Parsed directive: kind and, for an include, the name between quotes or angles. */
enum { DIR_OTHER, DIR_INCLUDE, DIR_ONCE, DIR_IF, DIR_ENDIF };

static int parse_directive(const char *s, const char *e, char *name, size_t n, int *quoted) {
    const char *p = s + 1;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *w = p;
    while (p < e && is_ident_char(*p)) p++;
    size_t wl = (size_t)(p - w);
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if ((wl == 2 && memcmp(w, "if", 2) == 0) || (wl == 5 && memcmp(w, "ifdef", 5) == 0) ||
        (wl == 6 && memcmp(w, "ifndef", 6) == 0))
        return DIR_IF;
    if (wl == 5 && memcmp(w, "endif", 5) == 0) return DIR_ENDIF;
    if (wl == 6 && memcmp(w, "pragma", 6) == 0) {
        const char *q = p;
        while (q < e && is_ident_char(*q)) q++;
        return (q - p == 4 && memcmp(p, "once", 4) == 0) ? DIR_ONCE : DIR_OTHER;
    }
    if (!(wl == 7 && memcmp(w, "include", 7) == 0)) return DIR_OTHER;
    if (p >= e || (*p != '"' && *p != '<')) return DIR_OTHER;   /* #include MACRO: left to the compiler */
    char close = *p == '"' ? '"' : '>';
    *quoted = *p == '"';
    const char *q = ++p;
    while (q < e && *q != close) q++;
    if (q >= e || (size_t)(q - p) >= n || q == p) return DIR_OTHER;
    memcpy(name, p, (size_t)(q - p));
    name[q - p] = 0;
    return DIR_INCLUDE;
}

/* An error at a line of a file (the first one is reported).  Returns -1. */
static int fail(expander *x, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(expander *x, const char *file, int line, const char *fmt, ...) {
    if (x->err) return -1;
    msl_buf b = {0};
    msl_buf_printf(&b, "%s:%d:1: error: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    msl_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    x->err = msl_buf_take(&b);
    return -1;
}

/* Every file is held to UTF-8 before any device sees it (core/utf8.h says why): -1
 * with "FILE:LINE:COL: error: byte OFFSET ..." when `text` is not. */
static int check_utf8(expander *x, const char *text, const char *file) {
    long bad = utf8_invalid_offset(text, strlen(text));
    if (bad < 0 || x->err) return bad < 0 ? 0 : -1;
    int line = 1, col = 1;
    for (long i = 0; i < bad; i++) line += text[i] == '\n', col = text[i] == '\n' ? 1 : col + 1;
    msl_buf b = {0};
    msl_buf_printf(&b, "%s:%d:%d: error: byte %ld (0x%02X) is not UTF-8, which Metal requires of MSL source: save the "
                       "file as UTF-8 (e.g. iconv -f latin1 -t utf-8)",
                   file, line, col, bad, (unsigned)(unsigned char)text[bad]);
    x->err = msl_buf_take(&b);
    return -1;
}

static once_file *find_once(expander *x, const char *real) {
    for (int i = 0; i < x->nonce; i++)
        if (strcmp(x->once[i].real, real) == 0) return &x->once[i];
    return NULL;
}

static int expand_file(expander *x, const char *text, const char *path, const char *real, int unconditional,
                       msl_buf *out);

/* Inlines header `hpath` in place of an include at `line` of `from`. */
static int inline_header(expander *x, const char *from, int line, const char *hpath, int unconditional,
                         msl_buf *out) {
    char real[PATH_MAX];
    if (!realpath(hpath, real)) str_copy(real, sizeof real, hpath);
    for (int i = 0; i < x->depth; i++)
        if (strcmp(x->stack[i], real) == 0) return 0;   /* a cycle: its guard (or the compiler) ends it */
    once_file *of = find_once(x, real);
    if (of && of->done) return 0;
    if (x->depth >= MAX_DEPTH) return fail(x, from, line, "#include nested more than 200 deep at '%s'", hpath);
    char *text = read_text(hpath);
    if (!text) return fail(x, from, line, "cannot read the included file %s", hpath);
    if (check_utf8(x, text, hpath)) {
        free(text);
        return -1;
    }
    /* a header with #pragma once: one guard macro per file */
    int has_once = 0;
    msl_lexed lx;
    char *lerr = NULL;
    if (msl_lex(text, hpath, &lx, &lerr) != 0) {
        free(text);
        if (!x->err) x->err = lerr;
        else free(lerr);
        return -1;
    }
    for (int i = 0; i < lx.ntoks && !has_once; i++) {
        char nm[8];
        int q;
        const msl_tok *t = &lx.toks[i];
        if (t->kind == MSL_TK_DIRECTIVE &&
            parse_directive(text + t->start, text + t->start + t->len, nm, sizeof nm, &q) == DIR_ONCE)
            has_once = 1;
    }
    msl_lexed_free(&lx);
    int guard = -1;
    if (has_once) {
        if (!of) {
            once_file *no = realloc(x->once, sizeof *no * (size_t)(x->nonce + 1));
            char *r = strdup(real);
            if (!no || !r) {
                free(r);
                if (no) x->once = no;
                free(text);
                return fail(x, from, line, "out of memory");
            }
            x->once = no;
            x->once[x->nonce] = (once_file){r, 0};
            of = &x->once[x->nonce++];
        }
        guard = (int)(of - x->once);
        msl_buf_printf(out, "#ifndef __SW_ONCE_%d\n#define __SW_ONCE_%d\n", guard, guard);
    }
    msl_buf_puts(out, "#line 1 ");
    put_quoted(out, hpath);
    msl_buf_puts(out, "\n");
    x->stack[x->depth++] = real;
    x->inlined++;
    int rc = expand_file(x, text, hpath, real, unconditional, out);
    x->depth--;
    free(text);
    if (rc) return -1;
    if (out->len && out->p[out->len - 1] != '\n') msl_buf_puts(out, "\n");
    if (guard >= 0) msl_buf_puts(out, "#endif\n");
    if (guard >= 0 && unconditional) x->once[guard].done = 1;
    msl_buf_printf(out, "#line %d ", line + 1);
    put_quoted(out, from);
    return 0;
}

static int expand_file(expander *x, const char *text, const char *path, const char *real, int unconditional,
                       msl_buf *out) {
    (void)real;
    if (check_utf8(x, text, path)) return -1;
    msl_lexed lx;
    char *lerr = NULL;
    if (msl_lex(text, path, &lx, &lerr) != 0) {
        if (!x->err) x->err = lerr;
        else free(lerr);
        return -1;
    }
    size_t pos = 0;
    int cond = 0, phys_line = 1;
    const char *counted = text;   /* newlines counted up to here */
    for (int i = 0; i < lx.ntoks && !x->err; i++) {
        const msl_tok *t = &lx.toks[i];
        if (t->kind != MSL_TK_DIRECTIVE) continue;
        const char *s = text + t->start, *e = s + t->len;
        char name[PATH_MAX];
        int quoted = 0;
        int kind = parse_directive(s, e, name, sizeof name, &quoted);
        if (kind == DIR_IF) cond++;
        if (kind == DIR_ENDIF && cond > 0) cond--;
        if (kind != DIR_INCLUDE && kind != DIR_ONCE) continue;
        for (; counted < e; counted++) phys_line += *counted == '\n';
        msl_buf_put(out, text + pos, (size_t)t->start - pos);
        pos = (size_t)(t->start + t->len);
        if (kind == DIR_ONCE) continue;   /* the guard around the inlined text does its work */
        if (!quoted && strncmp(name, "metal_", 6) == 0) {
            if (x->mode == MSL_EXPAND_KEEP_SYSTEM) msl_buf_put(out, s, (size_t)(e - s));
            continue;   /* software device: the generated C++ includes the prelude */
        }
        char hpath[PATH_MAX + 256];
        if (resolve(x, path, name, quoted, hpath, sizeof hpath)) {
            if (inline_header(x, path, phys_line, hpath, unconditional && cond == 0, out)) break;
            continue;
        }
        if (x->mode == MSL_EXPAND_SOFTWARE && !quoted && strncmp(name, "MetalPerformancePrimitives/", 27) == 0) {
            msl_buf_puts(out, "#error not supported by the software Metal device: Apple's MetalPerformancePrimitives "
                              "framework (tensor_ops, used by MLX's *_nax kernels) has no software implementation");
            continue;
        }
        msl_buf_put(out, s, (size_t)(e - s));   /* not found: the compiler says so, if it is reached */
    }
    msl_lexed_free(&lx);
    if (x->err) return -1;
    msl_buf_puts(out, text + pos);
    return 0;
}

static char *expand(const char *source, const char *path, const msl_source_opts *o, int mode, int *inlined,
                    char **err) {
    *err = NULL;
    static const msl_source_opts none;
    expander x = {.o = o ? o : &none, .mode = mode};
    const char *name = path && *path ? path : "source.metal";
    msl_buf out = {0};
    for (int i = 0; i < x.o->ndefines; i++) {
        const char *d = x.o->defines[i], *eq = strchr(d, '=');
        if (eq) msl_buf_printf(&out, "#define %.*s %s\n", (int)(eq - d), d, eq + 1);
        else msl_buf_printf(&out, "#define %s 1\n", d);
    }
    msl_buf_puts(&out, "#line 1 ");
    put_quoted(&out, name);
    msl_buf_puts(&out, "\n");
    char real[PATH_MAX];
    if (!path || !realpath(path, real)) str_copy(real, sizeof real, name);
    x.stack[x.depth++] = real;
    int rc = expand_file(&x, source, name, real, 1, &out);
    for (int i = 0; i < x.nonce; i++) free(x.once[i].real);
    free(x.once);
    if (inlined) *inlined = x.inlined;
    if (rc) {
        free(msl_buf_take(&out));
        *err = x.err ? x.err : strdup("out of memory while reading the MSL source");
        return NULL;
    }
    char *text = msl_buf_take(&out);
    if (!text) *err = strdup("out of memory while reading the MSL source");
    return text;
}

char *msl_expand_source(const char *source, const char *path, const msl_source_opts *o, int mode, char **err) {
    return expand(source, path, o, mode, NULL, err);
}

int msl_source_sha256(const char *source, const char *path, const msl_source_opts *o, char hex[65], char *err,
                      size_t errlen) {
    int inlined = 0;
    char *xerr = NULL;
    char *text = expand(source, path, o, MSL_EXPAND_KEEP_SYSTEM, &inlined, &xerr);
    if (!text) {
        snprintf(err, errlen, "%s", xerr ? xerr : "out of memory");
        free(xerr);
        return -1;
    }
    int plain = inlined == 0 && (!o || o->ndefines == 0);
    sha256_hex(plain ? source : text, strlen(plain ? source : text), hex);
    free(text);
    return 0;
}
