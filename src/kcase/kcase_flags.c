/* kcase_flags.c — the flag form of a kernel case into a kc_case (kcase_flags.h), so
 * the command line and a case file are checked and run by the same code. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "kcase/kcase_flags.h"

static int ferr(char *err, size_t errlen, const char *flag, const char *arg, const char *why) {
    io_err(err, errlen, "%s %s: %s", flag, arg, why);
    return -1;
}

/* "X[,Y,Z]" positive integers into v (missing ones 1). */
static int parse_dims(const char *s, uint32_t v[3]) {
    v[0] = v[1] = v[2] = 1;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 10);
        if (end == s || errno || x < 1 || x > 4294967295ULL || *s == '-' || *s == '+') return -1;
        v[i] = (uint32_t)x;
        if (!*end) return 0;
        if (*end != ',') return -1;
        s = end + 1;
    }
    return -1;
}

static int parse_number(const char *s, double *out) {
    char *end;
    if (!strcmp(s, "true") || !strcmp(s, "false")) return *out = s[0] == 't', 0;
    errno = 0;
    *out = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*out)) ? -1 : 0;
}

/* ":init" of an array spec. */
static int parse_init(const char *s, kc_buffer *b) {
    static const char *const names[] = {"fill=", "arange=", "uniform=", "normal="};
    static const kc_init kinds[] = {KC_INIT_FILL, KC_INIT_ARANGE, KC_INIT_UNIFORM, KC_INIT_NORMAL};
    b->has_init = 1;
    if (!strcmp(s, "zeros")) return b->init = KC_INIT_ZEROS, 0;
    if (!strcmp(s, "poison")) return b->init = KC_INIT_POISON, 0;
    for (int k = 0; k < 4; k++) {
        size_t n = strlen(names[k]);
        if (strncmp(s, names[k], n) != 0) continue;
        b->init = kinds[k];
        char *end;
        b->init_arg[0] = strtod(s + n, &end);
        if (end == s + n) return -1;
        if (k == 0) return *end ? -1 : 0;
        if (*end != ',') return -1;
        const char *q = end + 1;
        b->init_arg[1] = strtod(q, &end);
        if (end == q || *end) return -1;
        if (kinds[k] == KC_INIT_UNIFORM && !(b->init_arg[0] < b->init_arg[1])) return -1;
        if (kinds[k] == KC_INIT_NORMAL && b->init_arg[1] < 0) return -1;
        return 0;
    }
    return -1;
}

/* "dtype[d0,...][:init]" or "dtype:value". */
static int parse_typed(const char *spec, kc_buffer *b, const char *arg, char *err, size_t errlen) {
    char dt[16];
    size_t n = strcspn(spec, "[:");
    if (n >= sizeof dt) return ferr(err, errlen, "--buffer", arg, "unknown dtype");
    memcpy(dt, spec, n);
    dt[n] = '\0';
    if (kc_dtype_parse(dt, &b->dtype) < 0) {
        char why[200];
        snprintf(why, sizeof why, "\"%s\" is not a dtype: use one of %s", dt, kc_dtype_list());
        return ferr(err, errlen, "--buffer", arg, why);
    }
    b->has_dtype = 1;
    const char *p = spec + n;
    if (*p == ':') {
        double v;
        if (parse_number(p + 1, &v) < 0 || !kc_value_fits(b->dtype, v))
            return ferr(err, errlen, "--buffer", arg, "a scalar is dtype:VALUE with a value the dtype holds, such as uint32:4096");
        b->kind = KC_BUF_VALUE;
        if (!(b->value.v = malloc(sizeof *b->value.v))) return ferr(err, errlen, "--buffer", arg, "out of memory");
        b->value.v[0] = v;
        b->value.n = 1;
        return 0;
    }
    if (*p != '[') return ferr(err, errlen, "--buffer", arg, "give a shape, dtype[d0,d1,...], or a value, dtype:VALUE");
    b->kind = KC_BUF_ARRAY;
    b->has_shape = 1;
    p++;
    while (*p != ']') {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0 || d > (1LL << 40) || b->ndim == TENSOR_MAX_DIMS || (*end != ',' && *end != ']'))
            return ferr(err, errlen, "--buffer", arg, "a shape is [d0,d1,...] of at most 6 non-negative integers");
        b->shape[b->ndim++] = d;
        p = *end == ',' ? end + 1 : end;
    }
    p++;
    if (*p == ':' && parse_init(p + 1, b) == 0) return 0;
    if (*p)
        return ferr(err, errlen, "--buffer", arg,
                    "after the shape comes :zeros, :poison, :fill=V, :arange=START,STEP, :uniform=LO,HI or :normal=MEAN,STD");
    return 0;
}

/* "FILE[:TENSOR]" into file and tensor. */
static int split_file(const char *spec, char **file, char **tensor) {
    const char *suffixes[] = {".npz:", ".safetensors:"};
    for (int i = 0; i < 2; i++) {
        const char *at = strstr(spec, suffixes[i]);
        if (at) {
            size_t n = (size_t)(at - spec) + strlen(suffixes[i]) - 1;
            *file = kc_strdup(spec);
            if (*file) (*file)[n] = '\0';
            *tensor = kc_strdup(spec + n + 1);
            return *file && *tensor ? 0 : -1;
        }
    }
    *file = kc_strdup(spec);
    return *file ? 0 : -1;
}

static int is_tensor_file(const char *spec) {
    return strstr(spec, ".npy") || strstr(spec, ".npz") || strstr(spec, ".safetensors");
}

/* "NAME=REST": NAME (1..63 characters) into name[64]; REST, or NULL when arg is not
 * of that form. */
static const char *split_name(const char *arg, char *name) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || eq - arg >= 64) return NULL;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    return eq + 1;
}

static int add_buffer(kc_case *c, const char *arg, char *err, size_t errlen) {
    char name[64];
    const char *spec = split_name(arg, name);
    if (!spec) return ferr(err, errlen, "--buffer", arg, "give NAME=SPEC, NAME being the kernel's parameter name");
    if (!kc_is_identifier(name)) return ferr(err, errlen, "--buffer", arg, "NAME must be a parameter name");
    if (kc_find_buffer(c, name) >= 0) return ferr(err, errlen, "--buffer", arg, "this parameter is given twice");
    kc_buffer *b = kc_add_buffer(c, name);
    if (!b) return ferr(err, errlen, "--buffer", arg, "out of memory");
    if (is_tensor_file(spec)) {
        b->kind = KC_BUF_FILE;
        if (split_file(spec, &b->file, &b->tensor) < 0) return ferr(err, errlen, "--buffer", arg, "out of memory");
        return 0;
    }
    return parse_typed(spec, b, arg, err, errlen);
}

static int add_expect(kc_case *c, const char *arg, char *err, size_t errlen) {
    char name[64];
    const char *file = split_name(arg, name);
    if (!file) return ferr(err, errlen, "--expect", arg, "give NAME=FILE (.npy, .npz:TENSOR or .safetensors:TENSOR)");
    int i = kc_find_buffer(c, name);
    if (i < 0) return ferr(err, errlen, "--expect", arg, "NAME is not given by a --buffer: add --buffer NAME=SPEC first");
    kc_buffer *b = &c->bufs[i];
    if (b->kind == KC_BUF_VALUE) return ferr(err, errlen, "--expect", arg, "a scalar is bound with setBytes and is never written");
    if (b->expect.kind != KC_EXPECT_NONE) return ferr(err, errlen, "--expect", arg, "NAME has an --expect already");
    b->expect.kind = KC_EXPECT_FILE;
    if (split_file(file, &b->expect.file, &b->expect.tensor) < 0) return ferr(err, errlen, "--expect", arg, "out of memory");
    return 0;
}

static int add_constant(kc_launch *l, const char *arg, char *err, size_t errlen) {
    double v;
    char key[64], text[64];
    const char *value = split_name(arg, key);
    if (!value || parse_number(value, &v) < 0)
        return ferr(err, errlen, "--constant", arg, "give NAME=VALUE or INDEX=VALUE (true, false or a number)");
    kc_constant *nc = realloc(l->constants, (size_t)(l->nconstants + 1) * sizeof *nc);
    if (!nc) return ferr(err, errlen, "--constant", arg, "out of memory");
    l->constants = nc;
    kc_constant *k = &nc[l->nconstants++];
    memset(k, 0, sizeof *k);
    char *end;
    long idx = strtol(key, &end, 10);
    k->index = (*key >= '0' && *key <= '9' && !*end && idx <= 65535) ? (int)idx : -1;
    if (k->index < 0 && !kc_is_identifier(key))
        return ferr(err, errlen, "--constant", arg, "NAME must be a constant's name or an index");
    if (!strcmp(value, "true") || !strcmp(value, "false")) snprintf(text, sizeof text, "%s", value);
    else snprintf(text, sizeof text, "%.17g", v);
    if ((k->index < 0 && !(k->name = kc_strdup(key))) || !(k->value = kc_strdup(text)))
        return ferr(err, errlen, "--constant", arg, "out of memory");
    return 0;
}

static int fill_dispatch(const kc_flags *f, kc_dispatch *d, char *err, size_t errlen) {
    if (!!f->grid + !!f->threadgroups != 1)
        return io_err(err, errlen, "give one of --grid X[,Y,Z] (threads) or --threadgroups X[,Y,Z]"), -1;
    d->mode = f->grid ? KC_DISPATCH_GRID : KC_DISPATCH_THREADGROUPS;
    const char *s = f->grid ? f->grid : f->threadgroups;
    if (parse_dims(s, d->size) < 0)
        return ferr(err, errlen, f->grid ? "--grid" : "--threadgroups", s, "give 1 to 3 positive integers, X[,Y,Z]");
    if (!f->threadgroup) return io_err(err, errlen, "--threadgroup X[,Y,Z] is missing: give the threads per threadgroup"), -1;
    if (parse_dims(f->threadgroup, d->tg) < 0)
        return ferr(err, errlen, "--threadgroup", f->threadgroup, "give 1 to 3 positive integers, X[,Y,Z]");
    if ((uint64_t)d->tg[0] * d->tg[1] * d->tg[2] > 1024)
        return ferr(err, errlen, "--threadgroup", f->threadgroup, "more than Metal's 1024 threads per threadgroup: use fewer");
    return 0;
}

kc_case *kc_from_flags(const kc_flags *f, char *err, size_t errlen) {
    if (!f->function) return io_err(err, errlen, "--function NAME is missing: name the kernel to run"), NULL;
    if (!kc_is_identifier(f->function)) return ferr(err, errlen, "--function", f->function, "is not a function name"), NULL;
    kc_case *c = kc_case_new(f->function, "(flags)", ".");
    kc_launch *l = c ? kc_add_launch(c) : NULL;
    if (!l || !(c->source_path = kc_strdup(f->source)) || !(l->function = kc_strdup(f->function))) {
        io_err(err, errlen, "out of memory");
        kc_free(c);
        return NULL;
    }
    int rc = fill_dispatch(f, &l->dispatch, err, errlen);
    for (int i = 0; rc == 0 && i < f->nconstants; i++) rc = add_constant(l, f->constants[i], err, errlen);
    for (int i = 0; rc == 0 && i < f->nbuffers; i++) rc = add_buffer(c, f->buffers[i], err, errlen);
    for (int i = 0; rc == 0 && i < f->nexpects; i++) rc = add_expect(c, f->expects[i], err, errlen);
    if (rc == 0 && c->nbufs == 0) {
        io_err(err, errlen, "no --buffer: bind each kernel parameter with --buffer NAME=SPEC");
        rc = -1;
    }
    if (rc < 0) {
        kc_free(c);
        return NULL;
    }
    return c;
}
