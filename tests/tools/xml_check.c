/* xml_check.c — `gdnbench-testdata xml`: is a file well-formed XML, and what do its
 * elements of one name say; for the CLI test of the SVG charts of `gdnbench report`.
 *
 *   gdnbench-testdata xml FILE [TAG]
 *
 * Prints the root element's name and its xmlns attribute ("-" without one) on the
 * first line, then, given TAG, the text of every TAG element in document order, one
 * per line (entity and character references decoded, line breaks turned to spaces).
 * A file that is not well-formed is one line on stderr naming the line and the
 * problem, and exit status 2, with nothing on stdout.
 *
 * What is checked, a subset of XML 1.0 enough for the SVG gdnbench writes: one root
 * element; start and end tags that nest and match; attributes quoted, not repeated
 * on one element, without '<'; '&' only as a predefined entity (&lt; &gt; &amp;
 * &quot; &apos;) or a character reference; no '<' in text except as markup; comments,
 * processing instructions and CDATA sections closed; only white space, comments and
 * processing instructions outside the root.  Not checked: DOCTYPE internal subsets
 * (a DOCTYPE is refused), namespaces beyond reading xmlns, encodings (bytes at or
 * above 0x80 are accepted as name and text characters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/testdata.h"

#define XML_MAX_DEPTH 256

struct xml_parse {
    const char *p, *end, *start;
    char err[256];
    /* open elements: name start and length */
    const char *open_name[XML_MAX_DEPTH];
    size_t open_len[XML_MAX_DEPTH];
    int depth;
    const char *tag;     /* TAG to collect, or NULL */
    int in_tag;          /* depth of the open TAG element, 0 when none */
    char *out;           /* what is printed: grows as text is collected */
    size_t out_len, out_cap;
};

static int line_of(const struct xml_parse *x, const char *at) {
    int line = 1;
    for (const char *c = x->start; c < at && c < x->end; c++) line += *c == '\n';
    return line;
}

static int fail_at(struct xml_parse *x, const char *at, const char *what) {
    snprintf(x->err, sizeof x->err, "line %d: %s", line_of(x, at), what);
    return -1;
}

static int out_put(struct xml_parse *x, const char *s, size_t n) {
    if (x->out_len + n + 1 > x->out_cap) {
        size_t cap = x->out_cap ? x->out_cap : 256;
        while (cap < x->out_len + n + 1) cap *= 2;
        char *grown = realloc(x->out, cap);
        if (!grown) return fail_at(x, x->p, "out of memory");
        x->out = grown;
        x->out_cap = cap;
    }
    memcpy(x->out + x->out_len, s, n);
    x->out_len += n;
    x->out[x->out_len] = '\0';
    return 0;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_name_start(char c) {
    unsigned char u = (unsigned char)c;
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u == ':' || u >= 0x80;
}
static int is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

static int starts(const struct xml_parse *x, const char *s) {
    size_t n = strlen(s);
    return (size_t)(x->end - x->p) >= n && memcmp(x->p, s, n) == 0;
}

static void skip_space(struct xml_parse *x) {
    while (x->p < x->end && is_space(*x->p)) x->p++;
}

/* Moves past the next `close`; an error when the file ends first. */
static int skip_past(struct xml_parse *x, const char *close, const char *what) {
    const char *from = x->p;
    size_t n = strlen(close);
    for (; x->p + n <= x->end; x->p++) {
        if (memcmp(x->p, close, n) == 0) {
            x->p += n;
            return 0;
        }
    }
    return fail_at(x, from, what);
}

static int read_name(struct xml_parse *x, size_t *len) {
    const char *from = x->p;
    if (x->p >= x->end || !is_name_start(*x->p)) return fail_at(x, x->p, "expected a name");
    while (x->p < x->end && is_name_char(*x->p)) x->p++;
    *len = (size_t)(x->p - from);
    return 0;
}

/* An entity or character reference at x->p ('&'); appends its text when collect. */
static int read_reference(struct xml_parse *x, int collect) {
    static const struct {
        const char *name, *text;
    } predefined[] = {{"lt;", "<"}, {"gt;", ">"}, {"amp;", "&"}, {"quot;", "\""}, {"apos;", "'"}};
    const char *amp = x->p++;
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++) {
        if (starts(x, predefined[i].name)) {
            x->p += strlen(predefined[i].name);
            return collect ? out_put(x, predefined[i].text, 1) : 0;
        }
    }
    if (x->p >= x->end || *x->p != '#') return fail_at(x, amp, "'&' that starts no known entity (write &amp;)");
    x->p++;
    int hex = x->p < x->end && *x->p == 'x';
    if (hex) x->p++;
    unsigned long code = 0;
    int digits = 0;
    for (; x->p < x->end && *x->p != ';'; x->p++, digits++) {
        char c = *x->p;
        int v = c >= '0' && c <= '9' ? c - '0'
              : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
              : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0 || code > 0x10FFFF) return fail_at(x, amp, "bad character reference");
        code = code * (hex ? 16 : 10) + (unsigned long)v;
    }
    if (x->p >= x->end || digits == 0 || code == 0 || code > 0x10FFFF)
        return fail_at(x, amp, "bad character reference");
    x->p++; /* ';' */
    if (!collect) return 0;
    char utf8[4];
    size_t n;
    if (code < 0x80) {
        utf8[0] = (char)code;
        n = 1;
    } else if (code < 0x800) {
        utf8[0] = (char)(0xC0 | (code >> 6));
        utf8[1] = (char)(0x80 | (code & 0x3F));
        n = 2;
    } else if (code < 0x10000) {
        utf8[0] = (char)(0xE0 | (code >> 12));
        utf8[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        utf8[2] = (char)(0x80 | (code & 0x3F));
        n = 3;
    } else {
        utf8[0] = (char)(0xF0 | (code >> 18));
        utf8[1] = (char)(0x80 | ((code >> 12) & 0x3F));
        utf8[2] = (char)(0x80 | ((code >> 6) & 0x3F));
        utf8[3] = (char)(0x80 | (code & 0x3F));
        n = 4;
    }
    return out_put(x, utf8, n);
}

/* A start tag at x->p ('<'): its attributes, and whether it closes itself.  The root's
 * xmlns goes to the output's first line. */
static int read_start_tag(struct xml_parse *x, int *self_closing) {
    const char *lt = x->p++;
    size_t name_len;
    const char *name = x->p;
    if (read_name(x, &name_len) != 0) return -1;
    const char *attr_name[64];
    size_t attr_len[64];
    int nattr = 0;
    const char *xmlns = NULL;
    size_t xmlns_len = 0;
    for (;;) {
        const char *before = x->p;
        skip_space(x);
        if (x->p >= x->end) return fail_at(x, lt, "start tag not closed");
        if (*x->p == '>' || starts(x, "/>")) break;
        if (x->p == before) return fail_at(x, x->p, "attributes must be separated by white space");
        const char *an = x->p;
        size_t an_len;
        if (read_name(x, &an_len) != 0) return -1;
        for (int i = 0; i < nattr; i++)
            if (attr_len[i] == an_len && memcmp(attr_name[i], an, an_len) == 0)
                return fail_at(x, an, "attribute repeated on one element");
        if (nattr == 64) return fail_at(x, an, "more than 64 attributes on one element");
        attr_name[nattr] = an;
        attr_len[nattr++] = an_len;
        skip_space(x);
        if (x->p >= x->end || *x->p != '=') return fail_at(x, an, "attribute without '=' and a value");
        x->p++;
        skip_space(x);
        if (x->p >= x->end || (*x->p != '"' && *x->p != '\'')) return fail_at(x, an, "attribute value not quoted");
        char quote = *x->p++;
        const char *value = x->p;
        while (x->p < x->end && *x->p != quote) {
            if (*x->p == '<') return fail_at(x, x->p, "'<' in an attribute value (write &lt;)");
            if (*x->p == '&') {
                if (read_reference(x, 0) != 0) return -1;
            } else {
                x->p++;
            }
        }
        if (x->p >= x->end) return fail_at(x, value, "attribute value not closed");
        if (an_len == 5 && memcmp(an, "xmlns", 5) == 0) {
            xmlns = value;
            xmlns_len = (size_t)(x->p - value);
        }
        x->p++;
    }
    *self_closing = *x->p == '/';
    x->p += *self_closing ? 2 : 1;
    if (x->depth == 0) { /* the root */
        if (out_put(x, name, name_len) != 0 || out_put(x, " ", 1) != 0) return -1;
        if (xmlns ? out_put(x, xmlns, xmlns_len) : out_put(x, "-", 1)) return -1;
        if (out_put(x, "\n", 1) != 0) return -1;
    }
    if (x->tag && !x->in_tag && strlen(x->tag) == name_len && memcmp(x->tag, name, name_len) == 0) {
        if (*self_closing) return out_put(x, "\n", 1);
        x->in_tag = x->depth + 1;
    }
    if (!*self_closing) {
        if (x->depth == XML_MAX_DEPTH) return fail_at(x, lt, "elements nested too deep");
        x->open_name[x->depth] = name;
        x->open_len[x->depth++] = name_len;
    }
    return 0;
}

static int read_end_tag(struct xml_parse *x) {
    const char *lt = x->p;
    x->p += 2;
    size_t len;
    const char *name = x->p;
    if (read_name(x, &len) != 0) return -1;
    skip_space(x);
    if (x->p >= x->end || *x->p != '>') return fail_at(x, lt, "end tag not closed");
    x->p++;
    if (x->depth == 0) return fail_at(x, lt, "end tag with no element open");
    if (x->open_len[x->depth - 1] != len || memcmp(x->open_name[x->depth - 1], name, len) != 0) {
        char what[200];
        snprintf(what, sizeof what, "</%.*s> closes <%.*s>", (int)(len > 60 ? 60 : len), name,
                 (int)(x->open_len[x->depth - 1] > 60 ? 60 : x->open_len[x->depth - 1]), x->open_name[x->depth - 1]);
        return fail_at(x, lt, what);
    }
    if (x->in_tag == x->depth) {
        x->in_tag = 0;
        if (out_put(x, "\n", 1) != 0) return -1;
    }
    x->depth--;
    return 0;
}

/* Comments and processing instructions, allowed anywhere outside tags. */
static int read_misc(struct xml_parse *x, int *read) {
    *read = 1;
    if (starts(x, "<!--")) return skip_past(x, "-->", "comment not closed");
    if (starts(x, "<?")) return skip_past(x, "?>", "processing instruction not closed");
    *read = 0;
    return 0;
}

static int parse_document(struct xml_parse *x) {
    int read;
    for (;;) { /* before the root */
        skip_space(x);
        if (read_misc(x, &read) != 0) return -1;
        if (!read) break;
    }
    if (starts(x, "<!DOCTYPE")) return fail_at(x, x->p, "a DOCTYPE (this checker reads none)");
    if (x->p >= x->end || *x->p != '<' || x->p + 1 >= x->end || !is_name_start(x->p[1]))
        return fail_at(x, x->p, "no root element");
    do { /* the root element and its content */
        if (starts(x, "</")) {
            if (read_end_tag(x) != 0) return -1;
        } else if (starts(x, "<![CDATA[")) {
            x->p += 9;
            const char *from = x->p;
            if (skip_past(x, "]]>", "CDATA section not closed") != 0) return -1;
            if (x->in_tag && out_put(x, from, (size_t)(x->p - 3 - from)) != 0) return -1;
        } else if (starts(x, "<!--") || starts(x, "<?")) {
            if (read_misc(x, &read) != 0) return -1;
        } else if (*x->p == '<') {
            int self_closing;
            if (read_start_tag(x, &self_closing) != 0) return -1;
        } else if (*x->p == '&') {
            if (read_reference(x, x->in_tag != 0) != 0) return -1;
        } else {
            char c = *x->p == '\n' || *x->p == '\r' ? ' ' : *x->p;
            if (x->in_tag && out_put(x, &c, 1) != 0) return -1;
            x->p++;
        }
        if (x->depth > 0 && x->p >= x->end)
            return fail_at(x, x->open_name[x->depth - 1], "element not closed at the end of the file");
    } while (x->depth > 0);
    for (;;) { /* after the root */
        skip_space(x);
        if (x->p >= x->end) return 0;
        if (read_misc(x, &read) != 0) return -1;
        if (!read) return fail_at(x, x->p, "content after the root element");
    }
}

int xml_check_main(int argc, char **argv) {
    if (argc < 1 || argc > 2) {
        fputs("gdnbench-testdata xml: usage: gdnbench-testdata xml FILE [TAG]\n", stderr);
        return 2;
    }
    struct xml_parse x;
    memset(&x, 0, sizeof x);
    size_t len = 0;
    char *text = testdata_read_file(argv[0], &len, x.err, sizeof x.err);
    if (!text) {
        fprintf(stderr, "gdnbench-testdata xml: %s\n", x.err);
        return 2;
    }
    x.start = x.p = text;
    x.end = text + len;
    x.tag = argc == 2 ? argv[1] : NULL;
    int rc = 0;
    if (parse_document(&x) != 0) {
        fprintf(stderr, "gdnbench-testdata xml: %s: not well-formed: %s\n", argv[0], x.err);
        rc = 2;
    } else if (x.out) {
        fputs(x.out, stdout);
    }
    free(x.out);
    free(text);
    return rc;
}
