/* kcase_parse.c — a case file's JSON into a kc_case: the top-level keys, the launch
 * (function, constants, dispatch) or the "dispatches" sequence, sources, includes and
 * defines.  Buffers and the mlx_metal_kernel form are read by their own files.  The
 * text must be one JSON value (not-JSON is reported with line and column). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "kcase/kcase_json_util.h"

#define KC_MAX_LAUNCHES 64
#define KC_MAX_BUFFERS 31
#define KC_TGMEM_LIMIT 32768u
#define KC_TG_LIMIT 1024u

static const char *const top_keys[] = {"case",     "name",     "source",     "include", "define",
                                       "function", "constants", "dispatch", "buffers", "dispatches",
                                       "mlx_metal_kernel", NULL};
static const char *const launch_keys[] = {"function", "constants", "dispatch", "bind", NULL};
static const char *const dispatch_keys[] = {"grid", "threadgroups", "threadgroup", "threadgroup_memory", NULL};

static int parse_tgmem(kc_pctx *p, const cJSON *x, const char *path, kc_dispatch *d) {
    char sub[KC_PATH_MAX];
    uint64_t total = 0;
    if (kc_check_object(p, x, path, NULL) < 0) return -1;
    for (const cJSON *e = x->child; e; e = e->next) {
        char *end;
        long idx = strtol(e->string, &end, 10);
        kc_key(sub, path, e->string);
        if (!*e->string || *end || idx < 0 || idx > 30 || e->string[0] == '-' || e->string[0] == '+')
            return kc_perr(p, sub, "is not a [[threadgroup(n)]] index: use \"0\" to \"30\"");
        if (d->ntgmem == KC_MAX_TGMEM) return kc_perr(p, path, "has more than %d entries", KC_MAX_TGMEM);
        int64_t bytes;
        if (kc_get_int(p, e, sub, 1, KC_TGMEM_LIMIT, &bytes) < 0) return -1;
        d->tgmem[d->ntgmem].index = (int)idx;
        d->tgmem[d->ntgmem++].bytes = (uint32_t)bytes;
        total += (uint64_t)bytes;
    }
    if (total > KC_TGMEM_LIMIT)
        return kc_perr(p, path, "is %llu bytes in all, over the 32768 bytes of threadgroup memory Metal guarantees: "
                       "use less", (unsigned long long)total);
    return 0;
}

static int parse_dispatch(kc_pctx *p, const cJSON *x, const char *path, kc_dispatch *d) {
    char sub[KC_PATH_MAX];
    if (kc_check_object(p, x, path, dispatch_keys) < 0) return -1;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(x, "grid"), *tgs = cJSON_GetObjectItemCaseSensitive(x, "threadgroups"),
                *tg = cJSON_GetObjectItemCaseSensitive(x, "threadgroup"),
                *mem = cJSON_GetObjectItemCaseSensitive(x, "threadgroup_memory");
    if (!!g + !!tgs != 1)
        return kc_perr(p, path, "needs exactly one of \"grid\" (threads: dispatchThreads) or \"threadgroups\" "
                       "(dispatchThreadgroups)");
    d->mode = g ? KC_DISPATCH_GRID : KC_DISPATCH_THREADGROUPS;
    kc_key(sub, path, g ? "grid" : "threadgroups");
    if (kc_get_dims3(p, g ? g : tgs, sub, d->size) < 0) return -1;
    kc_key(sub, path, "threadgroup");
    if (!tg) return kc_perr(p, sub, "is missing: give the threads per threadgroup, such as [256, 1, 1]");
    if (kc_get_dims3(p, tg, sub, d->tg) < 0) return -1;
    if ((uint64_t)d->tg[0] * d->tg[1] * d->tg[2] > KC_TG_LIMIT)
        return kc_perr(p, sub, "is %llu threads, over Metal's 1024 per threadgroup: use fewer",
                       (unsigned long long)d->tg[0] * d->tg[1] * d->tg[2]);
    kc_key(sub, path, "threadgroup_memory");
    return mem ? parse_tgmem(p, mem, sub, d) : 0;
}

/* "constants": {"name": value} or {"3": value}; value true/false or a number. */
static int parse_constants(kc_pctx *p, const cJSON *x, const char *path, kc_launch *l) {
    char sub[KC_PATH_MAX];
    if (kc_check_object(p, x, path, NULL) < 0) return -1;
    int n = cJSON_GetArraySize(x);
    if (n > 64) return kc_perr(p, path, "has more than 64 constants");
    l->constants = calloc((size_t)(n ? n : 1), sizeof *l->constants);
    if (!l->constants) return kc_perr(p, path, "out of memory");
    for (const cJSON *e = x->child; e; e = e->next) {
        kc_constant *k = &l->constants[l->nconstants++];
        char *end, text[64];
        long idx = strtol(e->string, &end, 10);
        kc_key(sub, path, e->string);
        k->index = -1;
        if (*e->string >= '0' && *e->string <= '9' && !*end && idx <= 65535) k->index = (int)idx;
        else if (!kc_is_identifier(e->string))
            return kc_perr(p, sub, "is neither a constant's name nor an index from 0 to 65535");
        else if (!(k->name = kc_strdup(e->string))) return kc_perr(p, sub, "out of memory");
        if (cJSON_IsBool(e)) snprintf(text, sizeof text, "%s", cJSON_IsTrue(e) ? "true" : "false");
        else if (cJSON_IsNumber(e)) {
            double v;
            if (kc_get_number(p, e, sub, &v) < 0) return -1;
            snprintf(text, sizeof text, "%.17g", v);
        } else return kc_perr(p, sub, "must be true, false or a number");
        if (!(k->value = kc_strdup(text))) return kc_perr(p, sub, "out of memory");
    }
    return 0;
}

static int parse_binds(kc_pctx *p, const cJSON *x, const char *path, kc_launch *l) {
    char sub[KC_PATH_MAX];
    if (kc_check_object(p, x, path, NULL) < 0) return -1;
    int n = cJSON_GetArraySize(x);
    l->binds = calloc((size_t)(n ? n : 1), sizeof *l->binds);
    if (!l->binds) return kc_perr(p, path, "out of memory");
    for (const cJSON *e = x->child; e; e = e->next) {
        kc_bind *b = &l->binds[l->nbinds++];
        kc_key(sub, path, e->string);
        if (!kc_is_identifier(e->string)) return kc_perr(p, sub, "is not a parameter name");
        if (!(b->param = kc_strdup(e->string))) return kc_perr(p, sub, "out of memory");
        if (kc_get_string(p, e, sub, &b->buffer) < 0) return -1;
        if (kc_find_buffer(p->c, b->buffer) < 0)
            return kc_perr(p, sub, "\"%.60s\" is not a buffer of the case: name one of \"buffers\"", b->buffer);
    }
    return 0;
}

/* One launch from obj (the case itself, or an entry of "dispatches"); sequence
 * entries may rebind parameters. */
static int parse_launch(kc_pctx *p, const cJSON *obj, const char *path, int entry) {
    char sub[KC_PATH_MAX];
    const cJSON *e;
    kc_launch *l = kc_add_launch(p->c);
    if (!l) return kc_perr(p, path, "out of memory");
    if (entry && kc_check_object(p, obj, path, launch_keys) < 0) return -1;
    kc_key(sub, path, "function");
    if (!p->c->mlx) {
        if (!(e = cJSON_GetObjectItemCaseSensitive(obj, "function")))
            return kc_perr(p, sub, "is missing: name the kernel function to run");
        if (kc_get_string(p, e, sub, &l->function) < 0) return -1;
        if (!kc_is_identifier(l->function)) return kc_perr(p, sub, "is not a function name");
    }
    kc_key(sub, path, "constants");
    if ((e = cJSON_GetObjectItemCaseSensitive(obj, "constants")) && parse_constants(p, e, sub, l) < 0) return -1;
    kc_key(sub, path, "dispatch");
    if (!(e = cJSON_GetObjectItemCaseSensitive(obj, "dispatch")))
        return kc_perr(p, sub, "is missing: give {\"grid\" or \"threadgroups\": [x, y, z], \"threadgroup\": [x, y, z]}");
    if (parse_dispatch(p, e, sub, &l->dispatch) < 0) return -1;
    kc_key(sub, path, "bind");
    if (entry && (e = cJSON_GetObjectItemCaseSensitive(obj, "bind")) && parse_binds(p, e, sub, l) < 0) return -1;
    return 0;
}

static int parse_sequence(kc_pctx *p, const cJSON *x) {
    char sub[KC_PATH_MAX];
    int n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : 0;
    if (!cJSON_IsArray(x) || n < 1 || n > KC_MAX_LAUNCHES)
        return kc_perr(p, "dispatches", "must be an array of 1 to %d launches", KC_MAX_LAUNCHES);
    p->c->sequence = 1;
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        kc_idx(sub, "dispatches", i);
        if (parse_launch(p, e, sub, 1) < 0) return -1;
    }
    return 0;
}

static int parse_buffers(kc_pctx *p, const cJSON *x) {
    char sub[KC_PATH_MAX];
    if (!x) return kc_perr(p, "buffers", "is missing: name each kernel parameter's buffer");
    if (kc_check_object(p, x, "buffers", NULL) < 0) return -1;
    if (cJSON_GetArraySize(x) > KC_MAX_BUFFERS)
        return kc_perr(p, "buffers", "has more than %d buffers (Metal's buffer indices 0 to 30)", KC_MAX_BUFFERS);
    for (const cJSON *e = x->child; e; e = e->next) {
        kc_key(sub, "buffers", e->string);
        if (!kc_is_identifier(e->string))
            return kc_perr(p, sub, "is not a parameter name (letters, digits and _, at most 63)");
        kc_buffer *b = kc_add_buffer(p->c, e->string);
        if (!b) return kc_perr(p, sub, "out of memory");
        if (kc_parse_buffer(p, e, sub, b) < 0) return -1;
    }
    return 0;
}

static int parse_source(kc_pctx *p, const cJSON *x) {
    static const char *const text_keys[] = {"text", NULL};
    if (cJSON_IsString(x)) {
        if (!*x->valuestring) return kc_perr(p, "source", "is empty: give the .metal file's path");
        return kc_get_string(p, x, "source", &p->c->source_path);
    }
    if (!cJSON_IsObject(x))
        return kc_perr(p, "source", "must be a path (a string) or {\"text\": \"...MSL...\"}");
    if (kc_check_object(p, x, "source", text_keys) < 0) return -1;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(x, "text");
    if (!t) return kc_perr(p, "source.text", "is missing: give the kernel's MSL");
    return kc_get_string(p, t, "source.text", &p->c->source_text);
}

static int parse_include(kc_pctx *p, const cJSON *x) {
    char sub[KC_PATH_MAX];
    int n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : -1;
    if (n < 0 || n > 64) return kc_perr(p, "include", "must be an array of at most 64 directories");
    kc_case *c = p->c;
    c->includes = calloc((size_t)(n ? n : 1), sizeof *c->includes);
    if (!c->includes) return kc_perr(p, "include", "out of memory");
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        kc_idx(sub, "include", i);
        if (kc_get_string(p, e, sub, &c->includes[i]) < 0) return -1;
        c->nincludes = i + 1;
    }
    return 0;
}

static int parse_define(kc_pctx *p, const cJSON *x) {
    char sub[KC_PATH_MAX];
    if (kc_check_object(p, x, "define", NULL) < 0) return -1;
    int n = cJSON_GetArraySize(x);
    kc_case *c = p->c;
    c->defines = calloc((size_t)(n ? n : 1), sizeof *c->defines);
    if (!c->defines) return kc_perr(p, "define", "out of memory");
    for (const cJSON *e = x->child; e; e = e->next) {
        kc_define *d = &c->defines[c->ndefines++];
        kc_key(sub, "define", e->string);
        if (!kc_is_identifier(e->string)) return kc_perr(p, sub, "is not a macro name");
        if (!(d->name = kc_strdup(e->string))) return kc_perr(p, sub, "out of memory");
        if (cJSON_IsNumber(e) || cJSON_IsBool(e)) {
            char text[64];
            double v = 0;
            if (cJSON_IsBool(e)) v = cJSON_IsTrue(e);
            else if (kc_get_number(p, e, sub, &v) < 0) return -1;
            snprintf(text, sizeof text, "%.17g", v);
            if (!(d->value = kc_strdup(text))) return kc_perr(p, sub, "out of memory");
        } else if (kc_get_string(p, e, sub, &d->value) < 0) return -1;
        if (strpbrk(d->value, "\n\r")) return kc_perr(p, sub, "holds a line break: a macro's value is one line");
    }
    return 0;
}

/* Which of source / function / dispatch / dispatches / mlx_metal_kernel the case uses. */
static int check_forms(kc_pctx *p, const cJSON *root) {
    int seq = cJSON_GetObjectItemCaseSensitive(root, "dispatches") != NULL;
    int mlx = cJSON_GetObjectItemCaseSensitive(root, "mlx_metal_kernel") != NULL;
    static const char *const launch_only[] = {"function", "constants", "dispatch"};
    for (int i = 0; seq && i < 3; i++)
        if (cJSON_GetObjectItemCaseSensitive(root, launch_only[i]))
            return kc_perr(p, launch_only[i], "goes inside each entry of \"dispatches\", not beside it");
    if (mlx && (cJSON_GetObjectItemCaseSensitive(root, "source") || cJSON_GetObjectItemCaseSensitive(root, "function")))
        return kc_perr(p, "mlx_metal_kernel", "replaces \"source\" and \"function\": drop them");
    if (mlx && seq) return kc_perr(p, "mlx_metal_kernel", "is one launch: give \"dispatch\", not \"dispatches\"");
    if (!mlx && !cJSON_GetObjectItemCaseSensitive(root, "source"))
        return kc_perr(p, "source", "is missing: give the .metal file's path (relative to the case) or {\"text\": ...}");
    return 0;
}

static int parse_top(kc_pctx *p, const cJSON *root) {
    const cJSON *e;
    int64_t version;
    if (kc_check_object(p, root, "", top_keys) < 0) return -1;
    if (!(e = cJSON_GetObjectItemCaseSensitive(root, "case")))
        return kc_perr(p, "case", "is missing: a case file starts with \"case\": 1");
    if (kc_get_int(p, e, "case", 1, 1, &version) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "name")) && kc_get_string(p, e, "name", &p->c->name) < 0) return -1;
    if (check_forms(p, root) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "source")) && parse_source(p, e) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "include")) && parse_include(p, e) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "define")) && parse_define(p, e) < 0) return -1;
    if (parse_buffers(p, cJSON_GetObjectItemCaseSensitive(root, "buffers")) < 0) return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "mlx_metal_kernel")) &&
        kc_parse_mlx(p, e, "mlx_metal_kernel", &p->c->mlx) < 0)
        return -1;
    if ((e = cJSON_GetObjectItemCaseSensitive(root, "dispatches"))) return parse_sequence(p, e);
    return parse_launch(p, root, "", 0);
}

/* Line and column (from 1) of byte offset at in text. */
static void line_col(const char *text, size_t len, long at, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (long i = 0; i < at && (size_t)i < len; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

static const char *stem_of(const char *path, char *buf, size_t n) {
    const char *b = io_basename(path);
    snprintf(buf, n, "%s", b);
    char *dot = strrchr(buf, '.');
    if (dot && dot != buf) *dot = '\0';
    return buf;
}

kc_case *kc_parse(const char *text, size_t len, const char *name, const char *dir, char *err, size_t errlen) {
    long at = 0;
    int trailing = 0, line, col;
    char stem[128];
    cJSON *root = io_json_parse_whole(text, len, &at, &trailing);
    if (!root) {
        line_col(text, len, at < 0 ? 0 : at, &line, &col);
        io_err(err, errlen, "%s:%d:%d: %s: fix the JSON there", name, line, col,
               trailing ? "text after the case's closing brace" : "not JSON");
        return NULL;
    }
    kc_case *c = kc_case_new(NULL, name, dir);
    kc_pctx p = {name, err, errlen, c};
    if (!c) {
        io_err(err, errlen, "%s: out of memory", name);
    } else if (parse_top(&p, root) == 0 && (c->name || (c->name = kc_strdup(stem_of(name, stem, sizeof stem))))) {
        cJSON_Delete(root);
        return c;
    }
    cJSON_Delete(root);
    kc_free(c);
    return NULL;
}

kc_case *kc_load_file(const char *path, char *err, size_t errlen) {
    char *text = NULL, *dir;
    size_t len = 0;
    if (io_read_small_file(path, 64u << 20, &text, &len, err, errlen) < 0) return NULL;
    const char *slash = strrchr(path, '/');
    dir = kc_strdup(slash ? path : ".");
    if (dir && slash) dir[slash - path] = '\0';
    if (dir && !*dir) dir[0] = '/', dir[1] = '\0';
    kc_case *c = dir ? kc_parse(text, len, path, dir, err, errlen) : NULL;
    if (!dir) io_err(err, errlen, "%s: out of memory", path);
    free(dir);
    free(text);
    return c;
}
