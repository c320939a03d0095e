/* msl_cursor.h — reading a token array (msl_lex.h) as C++ structure: which token
 * is which, matching brackets, template argument lists, comma-separated lists,
 * multi-character operators, and errors at a token.  The front end and the lanes
 * rewrite of the software device both read MSL through these, so a question such
 * as "where does this <...> end" has one answer.
 *
 * A token array here is an msl_lexed: the lexer's own, or a view (msl_lexed_view)
 * that shares the text and file names of another and has tokens of its own (the
 * front end collapses [[...]] groups into one token, the lanes rewrite joins
 * operators).  Depends on msl_lex.h only. */
#ifndef GDN_MSL_CURSOR_H
#define GDN_MSL_CURSOR_H

#include <stdarg.h>
#include <string.h>

#include "msl/msl_lex.h"

static inline const char *msl_tok_text(const msl_lexed *lx, int i) { return lx->text + lx->toks[i].start; }

/* 1 when token i exists and its text is s (attribute groups and directives are
 * never equal to a string).  Inline: the readers ask it millions of times. */
static inline int msl_tok_is(const msl_lexed *lx, int i, const char *s) {
    if (i < 0 || i >= lx->ntoks) return 0;
    const msl_tok *t = &lx->toks[i];
    return t->kind != MSL_TK_ATTR && t->kind != MSL_TK_DIRECTIVE && (size_t)t->len == strlen(s) &&
           memcmp(lx->text + t->start, s, (size_t)t->len) == 0;
}

static inline int msl_tok_ident(const msl_lexed *lx, int i) {
    return i >= 0 && i < lx->ntoks && lx->toks[i].kind == MSL_TK_IDENT;
}

/* 1 when tokens a and b have the same text. */
int msl_tok_same(const msl_lexed *lx, int a, int b);
/* malloc'd copies: token i's text; the text from the start of token a through
 * the end of token b ("" when b < a).  NULL when out of memory. */
char *msl_tok_dup(const msl_lexed *lx, int i);
char *msl_tok_span_dup(const msl_lexed *lx, int a, int b);

/* A view of lx: a copy of its tokens, sharing its text and file names (lx must
 * outlive it).  Returns 0, or -1 when out of memory.  msl_lexed_free frees a view's
 * own parts only. */
int msl_lexed_view(const msl_lexed *lx, msl_lexed *view);

/* Joins the punctuation tokens of a C++ operator of more than one character
 * ("<<=", "&&", "+=", ">>", "++", ...) into one token, in place. */
void msl_join_ops(msl_lexed *lx);

/* Fills lx->match: for ( [ { and ) ] }, the index of the matching bracket, else -1.
 * strict: a closing bracket without its opener, or with another kind's, or an
 * opener never closed, is an error (*err = "file:line:col: error: ..."); not
 * strict: an unmatched closer is skipped and any closer pairs with the innermost
 * opener.  Returns 0, or -1 with *err set (NULL: out of memory). */
int msl_match_brackets(msl_lexed *lx, int strict, char **err);

/* The index just past the template argument list that opens at token lt ("<"),
 * looking no further than limit; -1 when it does not close before a ; { or }, or
 * a bracket inside it is unmatched.  ">>" closes two lists when the operators are
 * joined (msl_join_ops). */
int msl_skip_angles(const msl_lexed *lx, int lt, int limit);

/* The "<" opening the template argument list that closes at token gt (">"),
 * scanning back to just above stop; stop when there is none. */
int msl_angles_back(const msl_lexed *lx, int gt, int stop);

/* The end of the comma-separated item starting at token s (parameters, template
 * or call arguments): the next "," outside brackets and <...>, or hi. */
int msl_list_item_end(const msl_lexed *lx, int s, int hi);

/* malloc'd "file:line:col: error: msg" at token i; past the end (or before the
 * start), at the last token; "file:1:1" when there is none. */
char *msl_error_at(const msl_lexed *lx, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *msl_verror_at(const msl_lexed *lx, int i, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
