/* msl_lex.h — MSL text as tokens: the lexer every reader of MSL source shares
 * (the software device's front end and lanes rewrite, include expansion, the
 * sync/atomic scans), and the growable text buffer they write with.
 *
 * Only what those readers need: identifiers, numbers, string/char literals,
 * punctuation (one character, but "::" and "->"), and preprocessor lines as whole
 * tokens; comments vanish.  Line markers move the reported positions, so every
 * token carries its .metal file and line.  Depends on nothing but libc. */
#ifndef GDN_MSL_LEX_H
#define GDN_MSL_LEX_H

#include <stdarg.h>
#include <stddef.h>

/* ---- growable text ---- */
typedef struct msl_buf {
    char *p;
    size_t len, cap;
    int oom;
} msl_buf;

void msl_buf_put(msl_buf *b, const char *s, size_t n);
void msl_buf_puts(msl_buf *b, const char *s);
void msl_buf_printf(msl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void msl_buf_vprintf(msl_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Returns the NUL-terminated text (owned by the caller) or NULL when out of memory. */
char *msl_buf_take(msl_buf *b);

/* ---- tokens ---- */
typedef enum msl_tok_kind {
    MSL_TK_IDENT = 1,
    MSL_TK_NUMBER,
    MSL_TK_STRING,
    MSL_TK_CHAR,
    MSL_TK_PUNCT,      /* one character, except "::" and "->" */
    MSL_TK_DIRECTIVE,  /* a whole preprocessor line (line markers are consumed, not kept) */
    MSL_TK_ATTR        /* a collapsed [[...]] group (made by msl_front.c) */
} msl_tok_kind;

typedef struct msl_tok {
    int kind;
    int start, len;    /* byte span in the lexed text */
    int line, col;     /* position in the .metal file (after #line / line markers) */
    int file;          /* index into msl_lexed.files */
    int attr;          /* MSL_TK_ATTR: index into the front end's attribute groups */
} msl_tok;

typedef struct msl_lexed {
    const char *text;
    msl_tok *toks;
    int ntoks;
    char **files;      /* file names seen in line markers; files[0] = the given name */
    int nfiles;
    int *match;        /* matching brackets (msl_match_brackets, msl_cursor.h); NULL until then */
    int view;          /* 1: text and files belong to another msl_lexed (msl_lexed_view) */
} msl_lexed;

/* Tokenises `text`; line markers (`# N "f"`, `#line N "f"`) update positions.
 * Returns 0, or -1 with *err = "file:line:col: error: ..." (unterminated comment,
 * string or character literal). */
int msl_lex(const char *text, const char *filename, msl_lexed *out, char **err);
/* Frees the tokens and matches, and the file names unless lx is a view. */
void msl_lexed_free(msl_lexed *lx);

#endif
