/* msl_cursor.c — msl_cursor.h: C++ structure over MSL tokens (brackets, template
 * argument lists, list items, joined operators) and errors at a token. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl/msl_cursor.h"

int msl_tok_same(const msl_lexed *lx, int a, int b) {
    return lx->toks[a].len == lx->toks[b].len &&
           memcmp(msl_tok_text(lx, a), msl_tok_text(lx, b), (size_t)lx->toks[a].len) == 0;
}

static char *dup_span(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *msl_tok_dup(const msl_lexed *lx, int i) { return dup_span(msl_tok_text(lx, i), (size_t)lx->toks[i].len); }

char *msl_tok_span_dup(const msl_lexed *lx, int a, int b) {
    if (b < a) return strdup("");
    const msl_tok *ta = &lx->toks[a], *tb = &lx->toks[b];
    return dup_span(lx->text + ta->start, (size_t)(tb->start + tb->len - ta->start));
}

int msl_lexed_view(const msl_lexed *lx, msl_lexed *view) {
    *view = (msl_lexed){.text = lx->text, .files = lx->files, .nfiles = lx->nfiles, .view = 1};
    view->toks = malloc(sizeof *view->toks * (size_t)(lx->ntoks + 1));
    if (!view->toks) return -1;
    if (lx->ntoks) memcpy(view->toks, lx->toks, sizeof *view->toks * (size_t)lx->ntoks);
    view->ntoks = lx->ntoks;
    return 0;
}

/* C++ operators of more than one character, longest first: the lexer gives one
 * punctuation character per token (but :: and ->). */
static const char *const multi_ops[] = {"<<=", ">>=", "...", "&&", "||", "==", "!=", "<=", ">=", "+=", "-=", "*=",
                                        "/=",  "%=",  "&=",  "|=", "^=", "<<", ">>", "++", "--", NULL};

/* The length of the operator that starts at token i (adjacent one-character
 * punctuation tokens spelling it), or 1. */
static int op_length(const msl_lexed *lx, int i) {
    for (int m = 0; multi_ops[m]; m++) {
        size_t ml = strlen(multi_ops[m]);
        int ok = 1;
        for (size_t j = 0; j < ml && ok; j++) {
            int q = i + (int)j;
            ok = q < lx->ntoks && lx->toks[q].kind == MSL_TK_PUNCT && lx->toks[q].len == 1 &&
                 lx->toks[q].start == lx->toks[i].start + (int)j && lx->text[lx->toks[q].start] == multi_ops[m][j];
        }
        if (ok) return (int)ml;
    }
    return 1;
}

void msl_join_ops(msl_lexed *lx) {
    int n = 0;
    for (int i = 0; i < lx->ntoks; i++) {
        msl_tok t = lx->toks[i];
        if (t.kind == MSL_TK_PUNCT && t.len == 1) {
            t.len = op_length(lx, i);
            i += t.len - 1;
        }
        lx->toks[n++] = t; /* n <= i: the tokens still to read are not overwritten */
    }
    lx->ntoks = n;
}

int msl_match_brackets(msl_lexed *lx, int strict, char **err) {
    *err = NULL;
    free(lx->match);
    lx->match = malloc(sizeof *lx->match * (size_t)(lx->ntoks + 1));
    int *stack = malloc(sizeof *stack * (size_t)(lx->ntoks + 1));
    if (!lx->match || !stack) {
        free(stack);
        return -1;
    }
    int sp = 0;
    for (int i = 0; i < lx->ntoks; i++) {
        lx->match[i] = -1;
        if (lx->toks[i].kind != MSL_TK_PUNCT || lx->toks[i].len != 1) continue;
        char c = msl_tok_text(lx, i)[0];
        if (c == '(' || c == '[' || c == '{') {
            stack[sp++] = i;
            continue;
        }
        if (c != ')' && c != ']' && c != '}') continue;
        if (sp == 0) {
            if (!strict) continue;
            *err = msl_error_at(lx, i, "unbalanced '%c': nothing to close", c);
            break;
        }
        int o = stack[sp - 1];
        char opened = msl_tok_text(lx, o)[0];
        if (strict && opened != (c == ')' ? '(' : c == ']' ? '[' : '{')) {
            *err = msl_error_at(lx, i, "'%c' does not close the '%c' opened at line %d", c, opened, lx->toks[o].line);
            break;
        }
        sp--;
        lx->match[o] = i;
        lx->match[i] = o;
    }
    if (strict && !*err && sp > 0)
        *err = msl_error_at(lx, stack[sp - 1], "'%c' is never closed", msl_tok_text(lx, stack[sp - 1])[0]);
    free(stack);
    return *err ? -1 : 0;
}

int msl_skip_angles(const msl_lexed *lx, int lt, int limit) {
    int depth = 0;
    for (int i = lt; i < limit; i++) {
        if (msl_tok_is(lx, i, "(") || msl_tok_is(lx, i, "[")) {
            if (lx->match[i] < 0) return -1;
            i = lx->match[i];
        } else if (msl_tok_is(lx, i, "<")) depth++;
        else if (msl_tok_is(lx, i, ">")) {
            if (--depth == 0) return i + 1;
        } else if (msl_tok_is(lx, i, ">>")) {
            depth -= 2;
            if (depth <= 0) return depth == 0 ? i + 1 : -1;
        } else if (msl_tok_is(lx, i, ";") || msl_tok_is(lx, i, "{") || msl_tok_is(lx, i, "}")) return -1;
    }
    return -1;
}

int msl_angles_back(const msl_lexed *lx, int gt, int stop) {
    int depth = 0, i = gt;
    for (; i > stop; i--) {
        if (msl_tok_is(lx, i, ">")) depth++;
        else if (msl_tok_is(lx, i, "<") && --depth == 0) break;
        else if (msl_tok_is(lx, i, ")") || msl_tok_is(lx, i, "]")) i = lx->match[i];
    }
    return i;
}

int msl_list_item_end(const msl_lexed *lx, int s, int hi) {
    int e = s, angle = 0;
    while (e < hi && !(msl_tok_is(lx, e, ",") && angle == 0)) {
        if (msl_tok_is(lx, e, "<")) angle++;
        else if (msl_tok_is(lx, e, ">") && angle > 0) angle--;
        if (lx->match[e] > e) e = lx->match[e]; /* only an opening bracket matches forward */
        e++;
    }
    return e;
}

char *msl_verror_at(const msl_lexed *lx, int i, const char *fmt, va_list ap) {
    msl_buf b = {0};
    const msl_tok *t = i >= 0 && i < lx->ntoks ? &lx->toks[i] : lx->ntoks ? &lx->toks[lx->ntoks - 1] : NULL;
    if (t) msl_buf_printf(&b, "%s:%d:%d: error: ", lx->files[t->file], t->line, t->col);
    else msl_buf_printf(&b, "%s:1:1: error: ", lx->nfiles ? lx->files[0] : "source");
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    msl_buf_puts(&b, tmp);
    return msl_buf_take(&b);
}

char *msl_error_at(const msl_lexed *lx, int i, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = msl_verror_at(lx, i, fmt, ap);
    va_end(ap);
    return s;
}
