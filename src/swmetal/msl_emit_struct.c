/* msl_emit_struct.c — the layout table of a struct a kernel takes by buffer
 * (`constant Params &p`), emitted after the kernel's C++ so that the compiler
 * itself measures it: offsetof, sizeof and the member types (sw::mtl_member_type &
 * co. in the prelude).  Only the member names come from the source text, read here
 * from the struct's definition; a struct this reader does not follow (a template, a
 * bitfield, a member list it cannot split) gets no table and the parameter stays a
 * plain struct buffer without members in the reflection.  A member whose type is a
 * struct defined in the source, or an array of them, gets that struct's table too
 * (measured as the member's own type), which its entry points to (`nested`). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/msl_front.h"

#define MAX_MEMBERS 64

/* The next `word` in [p, end), or NULL.  Not strstr: the text is a whole
 * preprocessed library (megabytes for ggml's), and a sanitizer's strstr measures
 * the rest of the text on every call — minutes under `make check` for one ggml
 * compile. */
static const char *find_word(const char *p, const char *end, const char *word) {
    size_t n = strlen(word);
    while (p + n <= end) {
        const char *c = memchr(p, word[0], (size_t)(end - p) - n + 1);
        if (!c) return NULL;
        if (memcmp(c, word, n) == 0) return c;
        p = c + 1;
    }
    return NULL;
}

static const char *skip_space(const char *p, const char *end) {
    for (;;) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p + 1 < end && p[0] == '/' && p[1] == '/') {
            while (p < end && *p != '\n') p++;
        } else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
            const char *q = find_word(p + 2, end, "*/");
            p = q ? q + 2 : end;
        } else if (p < end && *p == '#' ) {   /* line markers of the preprocessed text */
            while (p < end && *p != '\n') p++;
        } else {
            return p;
        }
    }
}

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Where the library's structs are defined, found in one pass over its text (a
 * large library has hundreds of kernels taking structs: a search of the whole text
 * per binding made generating its C++ take most of a second).  A name defined more
 * than once is ambiguous (two namespaces' structs of one name: which one the kernel
 * takes is the compiler's to know, and a table of the wrong one would not compile). */
typedef struct struct_def {
    const char *name;
    size_t len;
    const char *body;  /* its '{' */
    int count;
} struct_def;

typedef struct def_list {
    struct_def *v;
    int n, cap;
} def_list;

struct msl_struct_defs {
    const char *text, *end;
    def_list structs;   /* `struct NAME {` (a definition, not a use) */
    def_list typedefs;  /* C-style `typedef struct [TAG] { ... } NAME;`, as ggml's ggml-metal-impl.h
                           declares its kernel arguments: the kernel names the typedef */
    int oom;
};

static void add_def(msl_struct_defs *d, def_list *l, const char *name, size_t len, const char *body) {
    for (int i = 0; i < l->n; i++) {
        if (l->v[i].len == len && memcmp(l->v[i].name, name, len) == 0) {
            l->v[i].count++;
            return;
        }
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 32;
        struct_def *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) {
            d->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (struct_def){name, len, body, 1};
}

/* The identifier at q: its end (q itself when there is none). */
static const char *ident_end(const char *q) {
    while (ident_char(*q)) q++;
    return q;
}

static void find_structs(msl_struct_defs *d) {
    const char *text = d->text, *end = d->end;
    for (const char *p = text; (p = find_word(p, end, "struct")) != NULL; p += 6) {
        if ((p > text && ident_char(p[-1])) || ident_char(p[6])) continue;
        const char *q = skip_space(p + 6, end), *e = ident_end(q);
        if (e == q) continue;
        const char *brace = skip_space(e, end);
        if (*brace == '{') add_def(d, &d->structs, q, (size_t)(e - q), brace);
    }
}

static void find_typedefs(msl_struct_defs *d) {
    const char *text = d->text, *end = d->end;
    for (const char *p = text; (p = find_word(p, end, "typedef")) != NULL; p += 7) {
        if ((p > text && ident_char(p[-1])) || ident_char(p[7])) continue;
        const char *q = skip_space(p + 7, end);
        if (strncmp(q, "struct", 6) != 0 || ident_char(q[6])) continue;
        q = skip_space(ident_end(skip_space(q + 6, end)), end);   /* past the optional tag */
        if (*q != '{') continue;
        const char *body = q;
        int depth = 0;
        for (; q < end; q++) {
            if (*q == '{') depth++;
            if (*q == '}' && --depth == 0) break;
        }
        if (q >= end) return;   /* an unclosed body: nothing after it is read */
        q = skip_space(q + 1, end);
        const char *e = ident_end(q);
        if (e > q && *skip_space(e, end) == ';') add_def(d, &d->typedefs, q, (size_t)(e - q), body);
    }
}

msl_struct_defs *msl_struct_defs_find(const char *text) {
    msl_struct_defs *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->text = text;
    d->end = text + strlen(text);
    find_structs(d);
    find_typedefs(d);
    if (d->oom) {
        msl_struct_defs_free(d);
        return NULL;
    }
    return d;
}

void msl_struct_defs_free(msl_struct_defs *d) {
    if (!d) return;
    free(d->structs.v);
    free(d->typedefs.v);
    free(d);
}

static const char *lookup(const def_list *l, const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < l->n; i++)
        if (l->v[i].len == n && memcmp(l->v[i].name, name, n) == 0) return l->v[i].count == 1 ? l->v[i].body : NULL;
    return NULL;
}

/* The '{' of struct `name`'s one definition, or NULL (none, or several). */
static const char *find_definition(const msl_struct_defs *d, const char *name) {
    const char *body = lookup(&d->structs, name);
    return body ? body : lookup(&d->typedefs, name);
}

/* The identifier that ends just before w in [a, w) (the type word of a declaration
 * `Inner x` or `struct Inner x`), or NULL. */
static char *word_before(const char *a, const char *w) {
    while (w > a && isspace((unsigned char)w[-1])) w--;
    const char *e = w;
    while (w > a && ident_char(w[-1])) w--;
    return w < e && !isdigit((unsigned char)*w) ? strndup(w, (size_t)(e - w)) : NULL;
}

/* The members declared in the statement [a, e) of a struct body: their names
 * appended to names, and to types the type word of each that is declared as a
 * plain object or array (not through '*' or '&'; NULL otherwise), so a member of a
 * struct type defined in the source gets a table of its own.  0, or -1 when the
 * statement is something this reader does not follow. */
static int statement_members(const char *a, const char *e, char **names, char **types, int *n) {
    static const char *const skip[] = {"static", "using", "typedef", "template", "friend", "constexpr", NULL};
    a = skip_space(a, e);
    if (a >= e) return 0;
    for (int i = 0; skip[i]; i++)
        if (!strncmp(a, skip[i], strlen(skip[i])) && !ident_char(a[strlen(skip[i])])) return 0;
    if (memchr(a, '(', (size_t)(e - a)) || memchr(a, '{', (size_t)(e - a)) || memchr(a, ':', (size_t)(e - a)))
        return -1;   /* a method, a nested definition, a bitfield or a qualified type */
    int angle = 0, first = 1;
    char *type = NULL;
    for (const char *p = a; p <= e; p++) {
        if (p < e && *p == '<') angle++;
        if (p < e && *p == '>') angle--;
        if (p < e && (*p != ',' || angle > 0)) continue;
        /* a declarator ends at p: its name is the last word before any '[' or '=' */
        const char *stop = a;
        while (stop < p && *stop != '[' && *stop != '=') stop++;
        while (stop > a && isspace((unsigned char)stop[-1])) stop--;
        const char *w = stop;
        while (w > a && ident_char(w[-1])) w--;
        if (w == stop || isdigit((unsigned char)*w) || *n >= MAX_MEMBERS) return free(type), -1;
        if (first) type = word_before(a, w);
        first = 0;
        int plain = !memchr(a, '*', (size_t)(w - a)) && !memchr(a, '&', (size_t)(w - a));
        if (!(names[*n] = strndup(w, (size_t)(stop - w)))) return free(type), -1;
        types[*n] = plain && type ? strdup(type) : NULL;
        (*n)++;
        a = p + 1;
    }
    free(type);
    return 0;
}

/* The members of struct `name`'s definition in text: how many (names[] and types[]
 * owned by the caller), or -(how many were read) - 1 when the definition is missing
 * or not followed. */
static int struct_members(const msl_struct_defs *d, const char *name, char **names, char **types) {
    const char *end = d->end;
    const char *body = find_definition(d, name);
    if (!body) return -1;
    int n = 0, depth = 0;
    const char *a = body + 1;
    for (const char *p = body + 1; *p; p++) {
        if (*p == '/' && (p[1] == '/' || p[1] == '*')) {
            p = skip_space(p, end) - 1;
            continue;
        }
        if (*p == '{' || *p == '(') depth++;
        if ((*p == '}' || *p == ')') && depth-- == 0)
            return statement_members(a, p, names, types, &n) < 0 ? -n - 1 : n;
        if (*p == ';' && depth == 0) {
            if (statement_members(a, p, names, types, &n) < 0) return -n - 1;
            a = p + 1;
        }
    }
    return -n - 1;
}

/* Nested structs deeper than this get no table (the member is then a struct
 * without layout in the reflection). */
#define MAX_NESTING 8

static int emit_layout(msl_buf *b, const msl_struct_defs *d, const char *name, const char *alias, const char *type,
                       const char *sym, int depth) {
    char *names[MAX_MEMBERS] = {0}, *types[MAX_MEMBERS] = {0};
    int n = struct_members(d, name, names, types), ok = n > 0;
    int owned = n >= 0 ? n : -n - 1;
    int nested[MAX_MEMBERS] = {0};
    if (ok) {
        msl_buf_puts(b, alias);
        /* a member of a struct type defined in the source (or an array of them) first
         * gets its own table, measured as that member's type: SYM_mI */
        for (int i = 0; i < n && depth < MAX_NESTING; i++) {
            if (!types[i] || !find_definition(d, types[i])) continue;
            char sub_alias[1024], sub_type[160], sub_sym[160];
            snprintf(sub_type, sizeof sub_type, "%s_m%d", type, i);
            snprintf(sub_sym, sizeof sub_sym, "%s_m%d", sym, i);
            int k = snprintf(sub_alias, sizeof sub_alias, "using %s = std::remove_all_extents_t<decltype(%s::%s)>;\n",
                             sub_type, type, names[i]);
            if (k > 0 && (size_t)k < sizeof sub_alias)
                nested[i] = emit_layout(b, d, types[i], sub_alias, sub_type, sub_sym, depth + 1);
        }
        msl_buf_printf(b, "static const sw_struct_member %s_members[] = {", sym);
        for (int i = 0; i < n; i++) {
            const char *m = names[i];
            msl_buf_printf(b,
                           "%s{\"%s\", offsetof(%s, %s), ::sw::mtl_member_type<decltype(%s::%s)>(), "
                           "::sw::mtl_element_type<decltype(%s::%s)>(), ::sw::mtl_array_length<decltype(%s::%s)>(), "
                           "::sw::mtl_array_stride<decltype(%s::%s)>(), ",
                           i ? ", " : "", m, type, m, type, m, type, m, type, m, type, m);
            if (nested[i]) msl_buf_printf(b, "&%s_m%d}", sym, i);
            else msl_buf_puts(b, "nullptr}");
        }
        msl_buf_printf(b, "};\nstatic const sw_struct_layout %s = {\"%s\", sizeof(%s), %d, %s_members};\n", sym,
                       name, type, n, sym);
    }
    for (int i = 0; i < owned; i++) {
        free(names[i]);
        free(types[i]);
    }
    return ok;
}

int msl_emit_struct_layout(msl_buf *b, const msl_struct_defs *defs, const char *name, const char *alias,
                           const char *type, const char *sym) {
    return emit_layout(b, defs, name, alias, type, sym, 0);
}
