/* test_msl_cursor.c — the shared MSL token layer (src/msl/msl_cursor.h): bracket
 * matching (strict and lenient), template argument lists, list items, joined
 * operators, views and error positions. */
#include <stdlib.h>
#include <string.h>

#include "msl/msl_cursor.h"
#include "test.h"

/* Index of the n-th (0-based) token spelled s, or -1. */
static int find_tok(const msl_lexed *lx, const char *s, int n) {
    for (int i = 0; i < lx->ntoks; i++)
        if (msl_tok_is(lx, i, s) && n-- == 0) return i;
    return -1;
}

static int lex_ok(const char *text, msl_lexed *lx) {
    char *err = NULL;
    int rc = msl_lex(text, "t.metal", lx, &err);
    CHECK_MSG(rc == 0, "lex failed: %s", err ? err : "");
    free(err);
    return rc;
}

TEST(msl_cursor_strict_brackets_and_their_errors) {
    msl_lexed lx;
    char *err = NULL;
    if (lex_ok("f(a[1], {2});", &lx)) return;
    CHECK_EQ_INT(msl_match_brackets(&lx, 1, &err), 0);
    CHECK(err == NULL);
    int lp = find_tok(&lx, "(", 0), rp = find_tok(&lx, ")", 0);
    CHECK_EQ_INT(lx.match[lp], rp);
    CHECK_EQ_INT(lx.match[rp], lp);
    CHECK_EQ_INT(lx.match[find_tok(&lx, "[", 0)], find_tok(&lx, "]", 0));
    CHECK_EQ_INT(lx.match[find_tok(&lx, "a", 0)], -1);
    msl_lexed_free(&lx);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"int x; )", "t.metal:1:8: error: unbalanced ')': nothing to close"},
        {"void f() {\n  g(1; }", "t.metal:2:8: error: '}' does not close the '(' opened at line 2"},
        {"void f() {", "t.metal:1:10: error: '{' is never closed"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (lex_ok(bad[k].text, &lx)) return;
        CHECK_EQ_INT(msl_match_brackets(&lx, 1, &err), -1);
        CHECK_MSG(err && strcmp(err, bad[k].msg) == 0, "got '%s', expected '%s'", err ? err : "(null)", bad[k].msg);
        free(err);
        err = NULL;
        /* not strict: the same text matches what it can */
        CHECK_EQ_INT(msl_match_brackets(&lx, 0, &err), 0);
        CHECK(err == NULL);
        msl_lexed_free(&lx);
    }
}

TEST(msl_cursor_angles_items_and_operators) {
    msl_lexed lx;
    char *err = NULL;
    if (lex_ok("vec<vec<int, 2>> a = b << 2; f<g(1, 2), 3>(x, y); c = d < e;", &lx)) return;
    /* tokens as lexed: ">>" and "<<" are two tokens each */
    CHECK(msl_match_brackets(&lx, 1, &err) == 0);
    int lt = find_tok(&lx, "<", 0);
    CHECK_EQ_INT(msl_skip_angles(&lx, lt, lx.ntoks), find_tok(&lx, "a", 0));
    int flt = find_tok(&lx, "<", 4); /* vec<, vec<, <<, <<, then f< */
    CHECK(msl_tok_is(&lx, flt - 1, "f"));
    CHECK_EQ_INT(msl_skip_angles(&lx, flt, lx.ntoks), find_tok(&lx, "(", 1));
    CHECK_EQ_INT(msl_skip_angles(&lx, find_tok(&lx, "<", 5), lx.ntoks), -1); /* d < e; */
    /* and back from its '>' (past g(1, 2)'s parenthesis); none: stop */
    int fgt = find_tok(&lx, "(", 1) - 1;
    CHECK_EQ_INT(msl_angles_back(&lx, fgt, -1), flt);
    CHECK_EQ_INT(msl_angles_back(&lx, fgt, flt), flt);
    CHECK_EQ_INT(msl_angles_back(&lx, fgt, flt + 1), flt + 1);
    /* f's template arguments: "g(1, 2)" is one item, its comma inside brackets */
    CHECK_EQ_INT(msl_list_item_end(&lx, flt + 1, lx.ntoks), find_tok(&lx, ",", 2));
    msl_lexed_free(&lx);

    if (lex_ok("a <<= b >> c && d ... e->f::g", &lx)) return;
    msl_join_ops(&lx);
    static const char *const want[] = {"a", "<<=", "b", ">>", "c", "&&", "d", "...", "e", "->", "f", "::", "g"};
    CHECK_EQ_INT(lx.ntoks, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < lx.ntoks && i < (int)(sizeof want / sizeof want[0]); i++)
        CHECK_MSG(msl_tok_is(&lx, i, want[i]), "token %d is '%.*s', expected '%s'", i, lx.toks[i].len,
                  msl_tok_text(&lx, i), want[i]);
    msl_lexed_free(&lx);

    /* joined: ">>" closes two template argument lists */
    if (lex_ok("vec<vec<int, 2>> a;", &lx)) return;
    msl_join_ops(&lx);
    CHECK(msl_match_brackets(&lx, 0, &err) == 0);
    CHECK_EQ_INT(msl_skip_angles(&lx, 1, lx.ntoks), find_tok(&lx, "a", 0));
    msl_lexed_free(&lx);
}

TEST(msl_cursor_view_spans_and_errors) {
    msl_lexed lx, view;
    if (lex_ok("# 7 \"k.metal\"\nfloat x = foo(1);\n", &lx)) return;
    CHECK_EQ_INT(msl_lexed_view(&lx, &view), 0);
    CHECK_EQ_INT(view.ntoks, lx.ntoks);
    CHECK(view.files == lx.files);
    view.ntoks = 2; /* a view's tokens are its own */
    CHECK(lx.ntoks > 2);
    CHECK(msl_tok_same(&lx, 1, 1) && !msl_tok_same(&lx, 0, 1));
    char *s = msl_tok_span_dup(&lx, find_tok(&lx, "foo", 0), find_tok(&lx, ")", 0));
    CHECK(s && strcmp(s, "foo(1)") == 0);
    free(s);
    s = msl_tok_dup(&lx, 1);
    CHECK(s && strcmp(s, "x") == 0);
    free(s);
    char *e = msl_error_at(&lx, find_tok(&lx, "foo", 0), "no '%s' here", "foo");
    CHECK_MSG(e && strcmp(e, "k.metal:7:11: error: no 'foo' here") == 0, "got '%s'", e ? e : "(null)");
    free(e);
    /* past the end: at the last token */
    e = msl_error_at(&lx, lx.ntoks, "end");
    CHECK_MSG(e && strcmp(e, "k.metal:7:17: error: end") == 0, "got '%s'", e ? e : "(null)");
    free(e);
    msl_lexed_free(&view); /* leaves lx's text and files */
    CHECK(lx.files && strcmp(lx.files[lx.toks[0].file], "k.metal") == 0);
    msl_lexed_free(&lx);
}
