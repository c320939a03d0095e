/* msl_lex.c — msl_lex.h: tokens of MSL/C++ source, and the small text buffer
 * the readers of MSL build their output with.
 *
 * Only what those readers need: identifiers, numbers, string/char literals,
 * punctuation, and preprocessor lines as whole tokens.  Comments vanish.  Line
 * markers (`# 12 "kkt.metal"` from clang -E, or `#line 12 "kkt.metal"`) move the
 * reported positions so every token carries its .metal line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl/msl_lex.h"

/* ---- msl_buf ---- */

static int buf_reserve(msl_buf *b, size_t extra) {
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void msl_buf_put(msl_buf *b, const char *s, size_t n) {
    if (buf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void msl_buf_puts(msl_buf *b, const char *s) { msl_buf_put(b, s, strlen(s)); }

void msl_buf_vprintf(msl_buf *b, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && !buf_reserve(b, (size_t)n)) {
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void msl_buf_printf(msl_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    msl_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *msl_buf_take(msl_buf *b) {
    if (b->oom || buf_reserve(b, 0)) {
        free(b->p);
        *b = (msl_buf){0};
        return NULL;
    }
    char *p = b->p;
    *b = (msl_buf){0};
    return p;
}

/* ---- lexer ---- */

typedef struct lex_state {
    const char *s;
    size_t n, i;
    int phys_line;       /* 1-based physical line of position i */
    size_t line_start;   /* offset of that line's first byte */
    int map_phys;        /* physical line that maps to map_line */
    int map_line;
    int file;
    msl_lexed *out;
    int cap;
} lex_state;

static int is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static int mapped_line(const lex_state *st) { return st->map_line + (st->phys_line - st->map_phys); }

static void newline_at(lex_state *st, size_t pos_after_nl) {
    st->phys_line++;
    st->line_start = pos_after_nl;
}

static int file_index(msl_lexed *lx, const char *name, size_t len) {
    for (int i = 0; i < lx->nfiles; i++)
        if (strlen(lx->files[i]) == len && memcmp(lx->files[i], name, len) == 0) return i;
    char **f = realloc(lx->files, sizeof *f * (size_t)(lx->nfiles + 1));
    if (!f) return 0;
    lx->files = f;
    char *copy = malloc(len + 1);
    if (!copy) return 0;
    memcpy(copy, name, len);
    copy[len] = 0;
    lx->files[lx->nfiles] = copy;
    return lx->nfiles++;
}

static int push_tok(lex_state *st, int kind, size_t start, size_t end, int line, int col) {
    msl_lexed *lx = st->out;
    if (lx->ntoks == st->cap) {
        int cap = st->cap ? st->cap * 2 : 1024;
        msl_tok *t = realloc(lx->toks, sizeof *t * (size_t)cap);
        if (!t) return -1;
        lx->toks = t;
        st->cap = cap;
    }
    lx->toks[lx->ntoks++] = (msl_tok){kind, (int)start, (int)(end - start), line, col, st->file, -1};
    return 0;
}

/* A directive line from '#' at st->i; consumes through the newline.  Line markers
 * re-map the following line. */
static int lex_directive(lex_state *st, int line, int col) {
    size_t start = st->i, end = st->i;
    while (end < st->n && st->s[end] != '\n') {
        if (st->s[end] == '\\' && end + 1 < st->n && st->s[end + 1] == '\n') {
            end += 2;
            newline_at(st, end);
            continue;
        }
        end++;
    }
    /* parse "# N "file"" or "#line N "file"" */
    size_t p = start + 1;
    while (p < end && (st->s[p] == ' ' || st->s[p] == '\t')) p++;
    int is_marker = 0;
    if (p + 4 <= end && memcmp(st->s + p, "line", 4) == 0 && !is_ident_char(st->s[p + 4])) {
        p += 4;
        while (p < end && (st->s[p] == ' ' || st->s[p] == '\t')) p++;
        is_marker = p < end && is_digit(st->s[p]);
    } else if (p < end && is_digit(st->s[p])) {
        is_marker = 1;
    }
    if (is_marker) {
        long n = 0;
        while (p < end && is_digit(st->s[p])) n = n * 10 + (st->s[p++] - '0');
        while (p < end && (st->s[p] == ' ' || st->s[p] == '\t')) p++;
        if (p < end && st->s[p] == '"') {
            size_t q = p + 1;
            while (q < end && st->s[q] != '"') q += (st->s[q] == '\\' && q + 1 < end) ? 2 : 1;
            st->file = file_index(st->out, st->s + p + 1, q - p - 1);
        }
        st->i = end;
        if (st->i < st->n) {
            st->i++;
            newline_at(st, st->i);
        }
        st->map_phys = st->phys_line;
        st->map_line = (int)n;
        return 0;
    }
    if (push_tok(st, MSL_TK_DIRECTIVE, start, end, line, col)) return -1;
    st->i = end;
    return 0;
}

static char *lex_error(lex_state *st, int line, int col, const char *msg) {
    msl_buf b = {0};
    msl_buf_printf(&b, "%s:%d:%d: error: %s", st->out->files[st->file], line, col, msg);
    return msl_buf_take(&b);
}

int msl_lex(const char *text, const char *filename, msl_lexed *out, char **err) {
    *out = (msl_lexed){0};
    out->text = text;
    lex_state st = {.s = text, .n = strlen(text), .phys_line = 1, .map_phys = 1, .map_line = 1, .out = out};
    file_index(out, filename, strlen(filename));
    int at_line_start = 1;
    while (st.i < st.n) {
        char c = text[st.i];
        int line = mapped_line(&st), col = (int)(st.i - st.line_start) + 1;
        if (c == '\n') {
            st.i++;
            newline_at(&st, st.i);
            at_line_start = 1;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            st.i++;
            continue;
        }
        if (c == '\\' && st.i + 1 < st.n && text[st.i + 1] == '\n') {
            st.i += 2;
            newline_at(&st, st.i);
            continue;
        }
        if (c == '/' && st.i + 1 < st.n && text[st.i + 1] == '/') {
            while (st.i < st.n && text[st.i] != '\n') st.i++;
            continue;
        }
        if (c == '/' && st.i + 1 < st.n && text[st.i + 1] == '*') {
            st.i += 2;
            while (st.i + 1 < st.n && !(text[st.i] == '*' && text[st.i + 1] == '/')) {
                if (text[st.i] == '\n') newline_at(&st, st.i + 1);
                st.i++;
            }
            if (st.i + 1 >= st.n) {
                *err = lex_error(&st, line, col, "unterminated /* comment");
                goto fail;
            }
            st.i += 2;
            continue;
        }
        if (c == '#' && at_line_start) {
            if (lex_directive(&st, line, col)) goto oom;
            continue;
        }
        at_line_start = 0;
        size_t start = st.i;
        int kind;
        if (is_ident_start(c)) {
            while (st.i < st.n && is_ident_char(text[st.i])) st.i++;
            kind = MSL_TK_IDENT;
        } else if (is_digit(c) || (c == '.' && st.i + 1 < st.n && is_digit(text[st.i + 1]))) {
            st.i++;
            while (st.i < st.n) {
                char d = text[st.i];
                if ((d == '+' || d == '-') && strchr("eEpP", text[st.i - 1])) st.i++;
                else if (is_ident_char(d) || d == '.' || d == '\'') st.i++;
                else break;
            }
            kind = MSL_TK_NUMBER;
        } else if (c == '"' || c == '\'') {
            st.i++;
            while (st.i < st.n && text[st.i] != c && text[st.i] != '\n') st.i += (text[st.i] == '\\') ? 2 : 1;
            if (st.i >= st.n || text[st.i] != c) {
                *err = lex_error(&st, line, col,
                                 c == '"' ? "missing terminating '\"' character" : "missing terminating ' character");
                goto fail;
            }
            st.i++;
            kind = c == '"' ? MSL_TK_STRING : MSL_TK_CHAR;
        } else {
            st.i++;
            if ((c == ':' && st.i < st.n && text[st.i] == ':') || (c == '-' && st.i < st.n && text[st.i] == '>'))
                st.i++;
            kind = MSL_TK_PUNCT;
        }
        if (push_tok(&st, kind, start, st.i, line, col)) goto oom;
    }
    return 0;
oom:
    *err = strdup("out of memory while reading the MSL source");
fail:
    msl_lexed_free(out);
    return -1;
}

void msl_lexed_free(msl_lexed *lx) {
    if (!lx->view) {
        for (int i = 0; i < lx->nfiles; i++) free(lx->files[i]);
        free(lx->files);
    }
    free(lx->toks);
    free(lx->match);
    *lx = (msl_lexed){0};
}
