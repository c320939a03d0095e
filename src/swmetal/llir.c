/* llir.c — llir.h: LLVM textual IR split into functions, blocks and instructions.
 *
 * The reader leans on how LLVM prints a module: a function opens with a line that
 * starts "define" and ends "{", and closes with a line "}"; a block's label is a
 * line at column 0 ending in ':' (before any "; preds" comment); instructions are
 * indented.  Everything outside functions (globals, declarations, metadata) is
 * kept as text and never looked into. */
#include <stdlib.h>
#include <string.h>

#include "swmetal/llir.h"

typedef struct ll_edit {
    int inst;
    int after;           /* 0: before the instruction, 1: after it, -1: in its place */
    int seq;             /* the order it was made in */
    char *line;
} ll_edit;

struct ll_module {
    char *text;
    size_t len;
    ll_func *funcs;
    int nfuncs, capfuncs;
    ll_block *blocks;
    int nblocks, capblocks;
    ll_inst *insts;
    int ninsts, capinsts;
    ll_edit *edits;
    int nedits, capedits;
    char *tail;          /* ll_append's text */
    size_t tail_len;
    struct ll_text_edit {
        size_t at, n;    /* the module text's bytes [at, at + n) */
        char *text;      /* written in their place */
    } *texts;
    int ntexts, captexts;
};

#define GROW(arr, n, cap)                                                            \
    do {                                                                             \
        if ((n) == (cap)) {                                                          \
            int nc_ = (cap) ? 2 * (cap) : 64;                                        \
            void *p_ = realloc((arr), (size_t)nc_ * sizeof *(arr));                  \
            if (!p_) return -1;                                                      \
            (arr) = p_;                                                              \
            (cap) = nc_;                                                             \
        }                                                                            \
    } while (0)

int ll_span_eq(ll_span s, const char *lit) { return strlen(lit) == s.n && memcmp(s.p, lit, s.n) == 0; }

int ll_span_starts(ll_span s, const char *lit) {
    size_t n = strlen(lit);
    return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static ll_span span(const char *p, size_t n) { return (ll_span){p, n}; }

static ll_span trim(ll_span s) {
    while (s.n && (*s.p == ' ' || *s.p == '\t')) s.p++, s.n--;
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t')) s.n--;
    return s;
}

/* The next space-separated word of s, advancing s past it. */
static ll_span next_word(ll_span *s) {
    *s = trim(*s);
    size_t i = 0;
    while (i < s->n && s->p[i] != ' ') i++;
    ll_span w = span(s->p, i);
    s->p += i;
    s->n -= i;
    return w;
}

static const struct {
    const char *name;
    ll_opcode op;
} opcodes[] = {
    {"fadd", LL_FADD},         {"fsub", LL_FSUB},       {"fmul", LL_FMUL},     {"fdiv", LL_FDIV},
    {"frem", LL_FREM},         {"fneg", LL_FNEG},       {"fptrunc", LL_FPTRUNC}, {"fpext", LL_FPEXT},
    {"fptosi", LL_FPTOSI},     {"fptoui", LL_FPTOUI},   {"sitofp", LL_SITOFP}, {"uitofp", LL_UITOFP},
    {"fcmp", LL_FCMP},         {"add", LL_ADD},         {"sub", LL_SUB},       {"mul", LL_MUL},
    {"sdiv", LL_SDIV},         {"udiv", LL_UDIV},       {"srem", LL_SREM},     {"urem", LL_UREM},
    {"shl", LL_SHL},           {"lshr", LL_LSHR},       {"ashr", LL_ASHR},     {"and", LL_AND},
    {"or", LL_OR},             {"xor", LL_XOR},         {"icmp", LL_ICMP},     {"load", LL_LOAD},
    {"store", LL_STORE},       {"atomicrmw", LL_ATOMICRMW}, {"cmpxchg", LL_CMPXCHG}, {"fence", LL_FENCE},
    {"alloca", LL_ALLOCA},     {"getelementptr", LL_GEP}, {"call", LL_CALL},   {"phi", LL_PHI},
    {"select", LL_SELECT},     {"br", LL_BR},           {"switch", LL_SWITCH}, {"ret", LL_RET},
    {"unreachable", LL_UNREACHABLE},
};

static ll_opcode opcode_of(ll_span w) {
    for (size_t i = 0; i < sizeof opcodes / sizeof opcodes[0]; i++)
        if (ll_span_eq(w, opcodes[i].name)) return opcodes[i].op;
    return LL_OTHER;
}

/* "tail call", "musttail call", "notail call" are calls. */
static ll_span opcode_word(ll_span *body) {
    ll_span rest = *body;
    ll_span w = next_word(&rest);
    if (ll_span_eq(w, "tail") || ll_span_eq(w, "musttail") || ll_span_eq(w, "notail")) {
        ll_span c = next_word(&rest);
        if (ll_span_eq(c, "call")) w = c;
    }
    *body = rest;
    return w;
}

static int dbg_of(ll_span line) {
    static const char key[] = "!dbg !";
    for (size_t i = 0; i + sizeof key - 1 < line.n; i++) {
        if (memcmp(line.p + i, key, sizeof key - 1) != 0) continue;
        size_t j = i + sizeof key - 1;
        long v = 0;
        int digits = 0;
        while (j < line.n && line.p[j] >= '0' && line.p[j] <= '9' && v < 100000000) v = v * 10 + (line.p[j++] - '0'), digits++;
        return digits ? (int)v : -1;
    }
    return -1;
}

static int add_inst(ll_module *m, ll_span line) {
    GROW(m->insts, m->ninsts, m->capinsts);
    ll_inst *in = &m->insts[m->ninsts];
    memset(in, 0, sizeof *in);
    in->text = line;
    in->block = m->nblocks - 1;
    ll_span t = trim(line);
    in->body = t;
    in->result = span(t.p, 0);
    if (t.n && t.p[0] == '%') {
        const char *eq = memchr(t.p, '=', t.n);
        if (eq && eq > t.p + 1 && eq[-1] == ' ') {
            in->result = trim(span(t.p, (size_t)(eq - t.p)));
            in->body = trim(span(eq + 1, t.n - (size_t)(eq + 1 - t.p)));
        }
    }
    ll_span rest = in->body;
    in->op = opcode_of(opcode_word(&rest));
    in->dbg = dbg_of(line);
    m->blocks[m->nblocks - 1].ninsts++;
    m->ninsts++;
    return 0;
}

static int add_block(ll_module *m, ll_span label) {
    GROW(m->blocks, m->nblocks, m->capblocks);
    m->blocks[m->nblocks] = (ll_block){label, m->ninsts, 0, m->nfuncs - 1};
    m->funcs[m->nfuncs - 1].nblocks++;
    m->nblocks++;
    return 0;
}

static int add_func(ll_module *m, ll_span line) {
    GROW(m->funcs, m->nfuncs, m->capfuncs);
    ll_span name = span(line.p, 0);
    const char *at = memchr(line.p, '@', line.n);
    if (at) {
        const char *e = at;
        while (e < line.p + line.n && *e != '(') e++;
        name = span(at, (size_t)(e - at));
    }
    m->funcs[m->nfuncs] = (ll_func){name, m->nblocks, 0};
    m->nfuncs++;
    return add_block(m, span(line.p, 0)); /* the unnamed entry block */
}

/* A label line: "5:" or "for.body:", maybe followed by "; preds = ...". */
static int is_label(ll_span line, ll_span *label) {
    if (!line.n || line.p[0] == ' ' || line.p[0] == ';' || line.p[0] == '}') return 0;
    size_t i = 0;
    if (line.p[0] == '"') { /* a quoted label */
        i = 1;
        while (i < line.n && line.p[i] != '"') i++;
        i++;
    } else {
        while (i < line.n && line.p[i] != ':' && line.p[i] != ' ') i++;
    }
    if (i >= line.n || line.p[i] != ':') return 0;
    *label = span(line.p, i);
    return 1;
}

static int read_lines(ll_module *m) {
    int in_func = 0;
    const char *p = m->text, *end = m->text + m->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        ll_span line = span(p, nl ? (size_t)(nl - p) : (size_t)(end - p));
        p = nl ? nl + 1 : end;
        ll_span label;
        if (!in_func) {
            if (ll_span_starts(line, "define ") && line.n && line.p[line.n - 1] == '{') {
                if (add_func(m, line)) return -1;
                in_func = 1;
            }
        } else if (line.n == 1 && line.p[0] == '}') {
            in_func = 0;
        } else if (is_label(line, &label)) {
            if (add_block(m, label)) return -1;
        } else if (trim(line).n && trim(line).p[0] != ';') {
            /* a switch's cases follow on lines of their own, up to "]": one instruction */
            int open = line.n && line.p[line.n - 1] == '[';
            while (open && p < end) {
                const char *nl2 = memchr(p, '\n', (size_t)(end - p));
                const char *stop = nl2 ? nl2 : end;
                ll_span cont = trim(span(p, (size_t)(stop - p)));
                line.n = (size_t)(stop - line.p);
                p = nl2 ? nl2 + 1 : end;
                open = !(cont.n && cont.p[0] == ']');
            }
            if (add_inst(m, line)) return -1;
        }
    }
    return 0;
}

ll_module *ll_module_read(const char *text, size_t len) {
    ll_module *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->text = malloc(len + 1);
    if (!m->text) {
        free(m);
        return NULL;
    }
    memcpy(m->text, text, len);
    m->text[len] = 0;
    m->len = len;
    if (read_lines(m)) {
        ll_module_free(m);
        return NULL;
    }
    return m;
}

void ll_module_free(ll_module *m) {
    if (!m) return;
    for (int i = 0; i < m->nedits; i++) free(m->edits[i].line);
    free(m->edits);
    free(m->funcs);
    free(m->blocks);
    free(m->insts);
    free(m->tail);
    for (int i = 0; i < m->ntexts; i++) free(m->texts[i].text);
    free(m->texts);
    free(m->text);
    free(m);
}

int ll_func_count(const ll_module *m) { return m->nfuncs; }
const ll_func *ll_func_at(const ll_module *m, int i) { return &m->funcs[i]; }
int ll_block_count(const ll_module *m) { return m->nblocks; }
const ll_block *ll_block_at(const ll_module *m, int i) { return &m->blocks[i]; }
int ll_inst_count(const ll_module *m) { return m->ninsts; }
const ll_inst *ll_inst_at(const ll_module *m, int i) { return &m->insts[i]; }

/* ---- tokens of an instruction's body ---- */

/* Tokens at nesting depth 0: runs of non-space characters, where (), [], {} and <>
 * nest (so "<4 x float>" and "@f(float %a, float %b)" are one token each) and a
 * comma at depth 0 is a token of its own.  Returns the count (at most max). */
static int tokenize(ll_span s, ll_span *tok, int max) {
    int n = 0;
    size_t i = 0;
    while (i < s.n && n < max) {
        while (i < s.n && s.p[i] == ' ') i++;
        if (i >= s.n) break;
        size_t start = i;
        if (s.p[i] == ',') {
            tok[n++] = span(s.p + i, 1);
            i++;
            continue;
        }
        int depth = 0;
        for (; i < s.n; i++) {
            char c = s.p[i];
            if (c == '"') { /* a string constant or quoted name: to its closing quote */
                for (i++; i < s.n && s.p[i] != '"'; i++) {}
                continue;
            }
            if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
            else if (c == ')' || c == ']' || c == '}' || c == '>') depth--;
            else if (depth <= 0 && (c == ' ' || c == ',')) break;
        }
        tok[n++] = span(s.p + start, i - start);
    }
    return n;
}

static int is_flag_word(ll_span w) {
    static const char *const flags[] = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc",
                                        "nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "volatile",
                                        "atomic", "inbounds", "tail", "musttail", "notail"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (ll_span_eq(w, flags[i])) return 1;
    return 0;
}

#define LL_MAX_TOKENS 64

/* The index of the first token after the opcode, its flags and (for compares) the
 * predicate; n = the token count. */
static int after_opcode(const ll_inst *in, ll_span *tok, int *n) {
    *n = tokenize(in->body, tok, LL_MAX_TOKENS);
    int i = 0;
    while (i < *n && is_flag_word(tok[i])) i++;
    i++; /* the opcode */
    while (i < *n && is_flag_word(tok[i])) i++;
    if (in->op == LL_FCMP || in->op == LL_ICMP) i++;
    return i;
}

static int is_conversion(ll_opcode op) {
    return op == LL_FPTRUNC || op == LL_FPEXT || op == LL_FPTOSI || op == LL_FPTOUI || op == LL_SITOFP ||
           op == LL_UITOFP;
}

/* A call's callee token: the first that starts with '@' or '%' and holds '('. */
static int callee_token(const ll_span *tok, int n) {
    for (int i = 1; i < n; i++)
        if ((tok[i].p[0] == '@' || tok[i].p[0] == '%') && memchr(tok[i].p, '(', tok[i].n)) return i;
    return -1;
}

ll_span ll_inst_type(const ll_inst *in) {
    ll_span tok[LL_MAX_TOKENS];
    int n, i = after_opcode(in, tok, &n);
    if (in->op == LL_CALL) {
        int c = callee_token(tok, n);
        if (c > 0 && tok[c - 1].p[0] == '(') c--; /* a varargs function type */
        return c > 0 ? tok[c - 1] : span(in->body.p, 0);
    }
    return i < n ? tok[i] : span(in->body.p, 0);
}

ll_span ll_inst_dest_type(const ll_inst *in) {
    if (!is_conversion(in->op)) return ll_inst_type(in);
    ll_span tok[LL_MAX_TOKENS];
    int n;
    after_opcode(in, tok, &n);
    for (int i = 0; i + 1 < n; i++)
        if (ll_span_eq(tok[i], "to")) return tok[i + 1];
    return span(in->body.p, 0);
}

/* The last space-separated top-level token of one call argument. */
static ll_span arg_value(ll_span arg) {
    ll_span tok[LL_MAX_TOKENS];
    int n = tokenize(trim(arg), tok, LL_MAX_TOKENS);
    return n ? tok[n - 1] : span(arg.p, 0);
}

static ll_span call_operand(ll_span callee, int k, int *ok) {
    const char *open = memchr(callee.p, '(', callee.n);
    ll_span args = span(open + 1, callee.n - (size_t)(open + 1 - callee.p) - 1);
    ll_span tok[LL_MAX_TOKENS];
    int n = tokenize(args, tok, LL_MAX_TOKENS);
    /* an argument is everything between two depth-0 commas: re-join its tokens */
    int arg = 0;
    const char *start = NULL, *end = NULL;
    for (int i = 0; i <= n; i++) {
        if (i == n || ll_span_eq(tok[i], ",")) {
            if (arg == k && start) {
                *ok = 1;
                return arg_value(span(start, (size_t)(end - start)));
            }
            arg++;
            start = NULL;
            continue;
        }
        if (!start) start = tok[i].p;
        end = tok[i].p + tok[i].n;
    }
    *ok = 0;
    return span(callee.p, 0);
}

ll_span ll_inst_operand(const ll_inst *in, int k, int *ok) {
    ll_span tok[LL_MAX_TOKENS];
    int n, i = after_opcode(in, tok, &n);
    *ok = 0;
    if (in->op == LL_CALL) {
        int c = callee_token(tok, n);
        return c < 0 ? span(in->body.p, 0) : call_operand(tok[c], k, ok);
    }
    if (in->op == LL_STORE) {
        /* store <ty> <value>, ptr <p>: operand 0 the value, 1 the pointer */
        int idx[2] = {i + 1, i + 4};
        if (k < 2 && idx[k] < n && tok[idx[k]].p[0] != '!') {
            *ok = 1;
            return tok[idx[k]];
        }
        return span(in->body.p, 0);
    }
    /* <ty> a[, b[, c]] then metadata or "to <ty>" */
    int want = i + 1 + 2 * k;
    if (want < n && tok[want].p[0] != '!' && !ll_span_eq(tok[want], ",") && !ll_span_eq(tok[want], "to") &&
        (k == 0 || ll_span_eq(tok[want - 1], ","))) {
        *ok = 1;
        return tok[want];
    }
    return span(in->body.p, 0);
}

ll_span ll_inst_callee(const ll_inst *in) {
    if (in->op != LL_CALL) return span(in->body.p, 0);
    ll_span tok[LL_MAX_TOKENS];
    int n;
    after_opcode(in, tok, &n);
    int c = callee_token(tok, n);
    if (c < 0 || tok[c].p[0] != '@') return span(in->body.p, 0);
    const char *open = memchr(tok[c].p, '(', tok[c].n);
    return span(tok[c].p, (size_t)(open - tok[c].p));
}

ll_scalar ll_type_scalar(ll_span t, int *lanes) {
    *lanes = 1;
    if (t.n > 2 && t.p[0] == '<' && t.p[t.n - 1] == '>') {
        long v = 0;
        size_t i = 1;
        while (i < t.n && t.p[i] >= '0' && t.p[i] <= '9' && v < 1000000) v = v * 10 + (t.p[i++] - '0');
        if (i + 3 > t.n || memcmp(t.p + i, " x ", 3) != 0 || v <= 0) return LL_S_OTHER;
        *lanes = (int)v;
        t = span(t.p + i + 3, t.n - i - 4);
    }
    static const struct {
        const char *name;
        ll_scalar s;
    } names[] = {{"half", LL_S_HALF}, {"bfloat", LL_S_BFLOAT}, {"float", LL_S_FLOAT}, {"double", LL_S_DOUBLE},
                 {"i1", LL_S_I1},     {"i8", LL_S_I8},         {"i16", LL_S_I16},    {"i32", LL_S_I32},
                 {"i64", LL_S_I64},   {"ptr", LL_S_PTR}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (ll_span_eq(t, names[i].name)) return names[i].s;
    *lanes = 1;
    return LL_S_OTHER;
}

/* ---- edits and writing ---- */

static void add_edit(ll_module *m, int inst, int after, const char *line) {
    if (inst < 0 || inst >= m->ninsts) return;
    if (m->nedits == m->capedits) {
        int nc = m->capedits ? 2 * m->capedits : 64;
        ll_edit *e = realloc(m->edits, (size_t)nc * sizeof *e);
        if (!e) abort(); /* as msl_buf does: out of memory is not recoverable here */
        m->edits = e;
        m->capedits = nc;
    }
    char *copy = strdup(line);
    if (!copy) abort();
    m->edits[m->nedits] = (ll_edit){inst, after, m->nedits, copy};
    m->nedits++;
}

void ll_insert_before(ll_module *m, int inst, const char *line) { add_edit(m, inst, 0, line); }
void ll_insert_after(ll_module *m, int inst, const char *line) { add_edit(m, inst, 1, line); }
void ll_replace(ll_module *m, int inst, const char *line) { add_edit(m, inst, -1, line); }

void ll_append(ll_module *m, const char *text) {
    size_t n = strlen(text);
    char *t = realloc(m->tail, m->tail_len + n + 1);
    if (!t) abort();
    memcpy(t + m->tail_len, text, n + 1);
    m->tail = t;
    m->tail_len += n;
}

ll_span ll_module_text(const ll_module *m) { return (ll_span){m->text, m->len}; }

ll_span ll_line_attr_ref(ll_span l) {
    int quoted = 0;
    for (size_t i = 0; i + 2 < l.n; i++) {
        if (l.p[i] == '"') quoted = !quoted;
        else if (!quoted && l.p[i] == ' ' && l.p[i + 1] == '#' && l.p[i + 2] >= '0' && l.p[i + 2] <= '9') {
            size_t e = i + 2;
            while (e < l.n && l.p[e] >= '0' && l.p[e] <= '9') e++;
            return (ll_span){l.p + i + 1, e - i - 1};
        }
    }
    return (ll_span){l.p, 0};
}

int ll_line_attr_group(ll_span l) {
    ll_span r = ll_line_attr_ref(l);
    return r.n ? atoi(r.p + 1) : -1;
}

void ll_replace_text(ll_module *m, ll_span at, const char *text) {
    if (at.p < m->text || at.p + at.n > m->text + m->len) return;
    if (m->ntexts == m->captexts) {
        int nc = m->captexts ? 2 * m->captexts : 16;
        struct ll_text_edit *t = realloc(m->texts, (size_t)nc * sizeof *t);
        if (!t) abort();
        m->texts = t;
        m->captexts = nc;
    }
    char *copy = strdup(text);
    if (!copy) abort();
    size_t off = (size_t)(at.p - m->text);
    int i = m->ntexts++; /* kept in text order: the writer walks them with the text */
    for (; i > 0 && m->texts[i - 1].at > off; i--) m->texts[i] = m->texts[i - 1];
    m->texts[i] = (struct ll_text_edit){off, at.n, copy};
}

/* The module's text [p, end) with the text edits that start in it (*k: the next
 * edit, in order); returns where the copy ended (past end when an edit reached
 * beyond it). */
static const char *put_text(const ll_module *m, msl_buf *out, const char *p, const char *end, int *k) {
    for (; *k < m->ntexts && m->text + m->texts[*k].at < end; (*k)++) {
        const struct ll_text_edit *t = &m->texts[*k];
        if (m->text + t->at < p) continue; /* overlaps one written already */
        msl_buf_put(out, p, (size_t)(m->text + t->at - p));
        msl_buf_puts(out, t->text);
        p = m->text + t->at + t->n;
    }
    if (p < end) msl_buf_put(out, p, (size_t)(end - p));
    return p > end ? p : end;
}

static int edit_order(const void *a, const void *b) {
    const ll_edit *x = a, *y = b;
    if (x->inst != y->inst) return x->inst < y->inst ? -1 : 1;
    if (x->after != y->after) return x->after < y->after ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void put_edits(msl_buf *out, const ll_edit *e, int n, int inst, int after, int *k) {
    for (; *k < n && e[*k].inst == inst && e[*k].after == after; (*k)++) {
        msl_buf_puts(out, e[*k].line);
        msl_buf_puts(out, "\n");
    }
}

void ll_module_write(const ll_module *m, msl_buf *out) {
    /* edits in instruction order, each instruction's in the order they were made */
    ll_edit *e = NULL;
    if (m->nedits) {
        e = malloc((size_t)m->nedits * sizeof *e);
        if (!e) abort();
        memcpy(e, m->edits, (size_t)m->nedits * sizeof *e);
        qsort(e, (size_t)m->nedits, sizeof *e, edit_order);
    }
    const char *p = m->text;
    int k = 0, kt = 0;
    for (int i = 0; i < m->ninsts; i++) {
        const ll_inst *in = &m->insts[i];
        put_text(m, out, p, in->text.p, &kt);
        const char *with = NULL; /* the last replacement made wins */
        for (; k < m->nedits && e[k].inst == i && e[k].after < 0; k++) with = e[k].line;
        put_edits(out, e, m->nedits, i, 0, &k);
        const char *eol = in->text.p + in->text.n;
        if (eol < m->text + m->len) eol++; /* its newline */
        if (with) {
            msl_buf_puts(out, with);
            msl_buf_puts(out, "\n");
        } else {
            msl_buf_put(out, in->text.p, (size_t)(eol - in->text.p));
        }
        put_edits(out, e, m->nedits, i, 1, &k);
        p = eol;
    }
    put_text(m, out, p, m->text + m->len, &kt);
    if (m->tail) msl_buf_put(out, m->tail, m->tail_len);
    free(e);
}
