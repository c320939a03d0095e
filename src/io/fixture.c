/* fixture.c — format detection and the generic fixture API over safetensors, .npy
 * and mlx-native sets; finite checks; the --dump writers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "io/fixture.h"
#include "io/mlxfix.h"
#include "io/npy.h"
#include "io/npz.h"
#include "io/safetensors.h"

struct fixture {
    char *path;
    const char *format;
    io_set set;
};

/* "a, b, c" of names, at most ~400 characters. */
static void join_names(char **names, int n, const char *suffix, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < n && off + 8 < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s%s", i ? ", " : "", names[i], suffix);
        if (w < 0 || (size_t)w >= len - off) {
            snprintf(buf + off, len - off, ", ...");
            break;
        }
        off += (size_t)w;
    }
}

/* Roles where the format does not say: safetensors "inputs"/"outputs" metadata lists,
 * else the mlx-native naming (input_NAME, NAME_ref). */
static void assign_roles(io_set *s) {
    const char *lists[2] = {io_set_meta(s, "inputs"), io_set_meta(s, "outputs")};
    for (int i = 0; i < s->n; i++) {
        if (s->e[i].role != IO_ROLE_UNKNOWN) continue;
        const char *nm = s->e[i].t->name;
        size_t nl = strlen(nm);
        for (int r = 0; r < 2; r++) {
            for (const char *p = lists[r]; p && *p;) {
                while (*p == ',' || *p == ' ') p++;
                size_t l = strcspn(p, ", ");
                if (l == nl && strncmp(p, nm, l) == 0) s->e[i].role = r ? IO_ROLE_OUTPUT : IO_ROLE_INPUT;
                p += l;
            }
        }
        if (s->e[i].role != IO_ROLE_UNKNOWN) continue;
        if (strncmp(nm, "input_", 6) == 0)
            s->e[i].role = IO_ROLE_INPUT;
        else if (io_has_suffix(nm, "_ref"))
            s->e[i].role = IO_ROLE_OUTPUT;
    }
}

static int open_npy_dir(const char *dir, char **names, int n, io_set *set, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        char *p = io_path_join(dir, names[i], "");
        if (!p) {
            io_err(err, errlen, "%s: out of memory", dir);
            return -1;
        }
        tensor *t;
        int rc = npy_read(p, &t, err, errlen);
        free(p);
        if (rc != 0) return -1;
        if (io_set_add(set, t, IO_ROLE_UNKNOWN) != 0) {
            io_err(err, errlen, "%s: out of memory", dir);
            return -1;
        }
    }
    return 0;
}

/* Replaces *names (n of them) with the sorted entries of dir ending in suffix. */
static int relist(const char *dir, const char *suffix, char ***names, int *n, char *err, size_t errlen) {
    io_free_names(*names, *n);
    *names = NULL;
    if (io_list_dir(dir, suffix, names, n) != 0) {
        io_err(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
        return -1;
    }
    io_sort_names(*names, *n);
    return 0;
}

/* A directory of n >= 1 files of a one-file format (what names them in the message):
 * the only one is the fixture; several are ambiguous. */
static int open_only_file(const char *dir, char **names, int n, const char *what, const char *format,
                          int (*read)(const char *path, io_set *out, char *err, size_t errlen), fixture *fx,
                          char *err, size_t errlen) {
    if (n > 1) {
        char list[400];
        join_names(names, n, "", list, sizeof list);
        io_err(err, errlen, "%s holds %d %s files (%s): pass one of them", dir, n, what, list);
        return -1;
    }
    char *p = io_path_join(dir, names[0], "");
    if (!p) {
        io_err(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    fx->format = format;
    int rc = read(p, &fx->set, err, errlen);
    free(p);
    return rc;
}

/* A directory: one mlx-native set, else its .npy files, else its one .npz, else its
 * one .safetensors file. */
static int open_dir(const char *dir, fixture *fx, char *err, size_t errlen) {
    char **names = NULL;
    int n = 0, rc = -1;
    if (mlxfix_list_sets(dir, &names, &n, err, errlen) != 0) return -1;
    if (n == 1) {
        fx->format = "mlx-native";
        rc = mlxfix_read_prefix(dir, names[0], &fx->set, err, errlen);
    } else if (n > 1) {
        char list[400];
        join_names(names, n, "_meta.json", list, sizeof list);
        io_err(err, errlen, "%s holds %d mlx-native fixture sets (%s): pass one, e.g. --fixture %s/%s_meta.json", dir,
               n, list, dir, names[0]);
    } else if (relist(dir, ".npy", &names, &n, err, errlen) != 0) {
        return -1;
    } else if (n > 0) {
        fx->format = "npy-dir";
        rc = open_npy_dir(dir, names, n, &fx->set, err, errlen);
    } else if (relist(dir, ".npz", &names, &n, err, errlen) != 0) {
        return -1;
    } else if (n > 0) {
        rc = open_only_file(dir, names, n, ".npz", "npz", npz_read, fx, err, errlen);
    } else if (relist(dir, ".safetensors", &names, &n, err, errlen) != 0) {
        return -1;
    } else if (n > 0) {
        rc = open_only_file(dir, names, n, "safetensors", "safetensors", safetensors_read, fx, err, errlen);
    } else {
        io_err(err, errlen, "%s: no fixture found (expected a *_meta.json set, *.npy files, one .npz or one .safetensors file)",
               dir);
    }
    io_free_names(names, n);
    return rc;
}

typedef enum file_kind { KIND_UNKNOWN, KIND_SAFETENSORS, KIND_NPY, KIND_NPZ, KIND_MLX } file_kind;

static file_kind sniff(const char *path) {
    if (io_has_suffix(path, ".safetensors")) return KIND_SAFETENSORS;
    if (io_has_suffix(path, ".npy")) return KIND_NPY;
    if (io_has_suffix(path, ".npz")) return KIND_NPZ;
    if (io_has_suffix(path, ".json")) return KIND_MLX;
    uint8_t head[9];
    io_src s;
    char e[64];
    if (io_src_open_file(&s, path, e, sizeof e) != 0) return KIND_UNKNOWN;
    int got = io_src_read(&s, 0, head, s.size < 9 ? (size_t)s.size : 9) == 0 ? (int)(s.size < 9 ? s.size : 9) : 0;
    io_src_close(&s);
    if (got >= 6 && memcmp(head, "\x93NUMPY", 6) == 0) return KIND_NPY;
    if (got >= 4 && memcmp(head, "PK\x03\x04", 4) == 0) return KIND_NPZ;
    if (got >= 9 && head[8] == '{') return KIND_SAFETENSORS;
    if (got >= 1 && head[0] == '{') return KIND_MLX;
    return KIND_UNKNOWN;
}

/* DIR/PREFIX where DIR/PREFIX_meta.json exists: an mlx-native set named without its suffix. */
static int open_meta_prefix(const char *path, fixture *fx, char *err, size_t errlen) {
    size_t n = strlen(path) + 16;
    char *meta = malloc(n);
    if (!meta) {
        io_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    snprintf(meta, n, "%s_meta.json", path);
    struct stat st;
    int rc = -1;
    if (stat(meta, &st) == 0) {
        fx->format = "mlx-native";
        rc = mlxfix_read(meta, &fx->set, err, errlen);
    } else {
        io_err(err, errlen, "%s: no such file or directory (nor %s): check the --fixture path", path,
               io_basename(meta));
    }
    free(meta);
    return rc;
}

/* One file, in the format its name or its first bytes say. */
static int open_file(const char *path, fixture *fx, char *err, size_t errlen) {
    int rc = -1;
    switch (sniff(path)) {
    case KIND_SAFETENSORS:
        fx->format = "safetensors";
        return safetensors_read(path, &fx->set, err, errlen);
    case KIND_NPY: {
        tensor *t;
        fx->format = "npy";
        rc = npy_read(path, &t, err, errlen);
        if (rc == 0 && io_set_add(&fx->set, t, IO_ROLE_UNKNOWN) != 0) {
            io_err(err, errlen, "%s: out of memory", path);
            rc = -1;
        }
        return rc;
    }
    case KIND_NPZ:
        fx->format = "npz";
        return npz_read(path, &fx->set, err, errlen);
    case KIND_MLX:
        fx->format = "mlx-native";
        return mlxfix_read(path, &fx->set, err, errlen);
    default:
        io_err(err, errlen,
               "%s: not a fixture gdnbench reads (expected .safetensors, .npy, .npz, an mlx-native *_meta.json "
               "or a directory of them)",
               path);
        return -1;
    }
}

fixture *fixture_open(const char *path, char *err, size_t errlen) {
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx || !(fx->path = strdup(path))) {
        free(fx);
        io_err(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    struct stat st;
    int rc;
    if (stat(path, &st) != 0)
        rc = open_meta_prefix(path, fx, err, errlen);
    else if (S_ISDIR(st.st_mode))
        rc = open_dir(path, fx, err, errlen);
    else
        rc = open_file(path, fx, err, errlen);
    if (rc == 0 && fx->set.n == 0) {
        io_err(err, errlen, "%s: the fixture holds no tensors", path);
        rc = -1;
    }
    if (rc != 0) {
        fixture_free(fx);
        return NULL;
    }
    assign_roles(&fx->set);
    return fx;
}

void fixture_free(fixture *f) {
    if (!f) return;
    io_set_clear(&f->set);
    free(f->path);
    free(f);
}

const char *fixture_path(const fixture *f) { return f->path; }
const char *fixture_format(const fixture *f) { return f->format; }
int fixture_count(const fixture *f) { return f->set.n; }
const tensor *fixture_at(const fixture *f, int i) { return i >= 0 && i < f->set.n ? f->set.e[i].t : NULL; }
io_role fixture_role_at(const fixture *f, int i) { return i >= 0 && i < f->set.n ? f->set.e[i].role : IO_ROLE_UNKNOWN; }

const tensor *fixture_get(const fixture *f, const char *name) {
    int i = io_set_find(&f->set, name);
    return i < 0 ? NULL : f->set.e[i].t;
}

const char *fixture_meta(const fixture *f, const char *key) { return io_set_meta(&f->set, key); }

int fixture_param_f64(const fixture *f, const char *name, double *out) {
    const char *s = io_set_meta(&f->set, name);
    if (!s) return -1;
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0) {
        *out = 1;
        return 0;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    /* hex strings such as "0x00C0FFEE" are integers, not hex floats */
    long long i = strtoll(s, &end, 0);
    if (end != s && !*end && !errno) {
        *out = (double)i;
        return 0;
    }
    double v = strtod(s, &end);
    if (end == s || *end || errno) return -1;
    *out = v;
    return 0;
}

int fixture_param(const fixture *f, const char *name, int64_t *out) {
    const char *s = io_set_meta(&f->set, name);
    if (!s) return -1;
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 0);
    if (end != s && !*end && !errno) {
        *out = i;
        return 0;
    }
    double v;
    if (fixture_param_f64(f, name, &v) != 0 || v != floor(v) || fabs(v) > 9007199254740992.0) return -1;
    *out = (int64_t)v;
    return 0;
}

int fixture_tolerance(const fixture *f, const char *name, double *atol, double *rtol) {
    char base[TENSOR_NAME_MAX + 8], key[TENSOR_NAME_MAX + 16];
    snprintf(base, sizeof base, "%s", name);
    for (;;) {
        int found = 0;
        double v;
        snprintf(key, sizeof key, "%s_atol", base);
        if (fixture_param_f64(f, key, &v) == 0) {
            *atol = v;
            found |= 1;
        }
        snprintf(key, sizeof key, "%s_rtol", base);
        if (fixture_param_f64(f, key, &v) == 0) {
            *rtol = v;
            found |= 2;
        }
        if (found) return found;
        char *us = strrchr(base, '_');
        if (!us || us == base) return 0;
        *us = 0;
    }
}

static int names_equal(const char *a, const char *b, int fold) { return fold ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0; }

/* Index of the tensor called (form applied to cand), preferring role `want`; -1 if none. */
static int lookup_form(const fixture *f, const char *cand, size_t clen, int form, int fold, io_role want,
                       int *any_role) {
    char name[TENSOR_NAME_MAX + 16];
    static const char *const fmt[3] = {"%.*s", "input_%.*s", "%.*s_ref"};
    snprintf(name, sizeof name, fmt[form], (int)clen, cand);
    for (int i = 0; i < f->set.n; i++) {
        if (!names_equal(f->set.e[i].t->name, name, fold)) continue;
        if (f->set.e[i].role == want || f->set.e[i].role == IO_ROLE_UNKNOWN) return i;
        if (*any_role < 0) *any_role = i;
    }
    return -1;
}

static int match_role(const fixture *f, const op_buf *b, io_role want, const tensor **out) {
    int fallback = -1;
    for (int fold = 0; fold < 2; fold++) {
        /* candidate 0 is b->name; then the comma-separated fixture_names */
        const char *list = b->fixture_names ? b->fixture_names : "";
        const char *p = b->name;
        size_t len = strlen(b->name);
        const char *next = list;
        for (;;) {
            if (len > 0 && len < TENSOR_NAME_MAX)
                for (int form = 0; form < 3; form++) {
                    int i = lookup_form(f, p, len, form, fold, want, &fallback);
                    if (i >= 0) {
                        *out = f->set.e[i].t;
                        return 0;
                    }
                }
            while (*next == ',' || *next == ' ') next++;
            if (!*next) break;
            p = next;
            len = strcspn(next, ", ");
            next += len;
        }
    }
    if (fallback >= 0) {
        *out = f->set.e[fallback].t;
        return 0;
    }
    return -1;
}

int fixture_match_op_buf(const fixture *f, const op_buf *b, const tensor **out) {
    return match_role(f, b, b->role == BUF_OUT ? IO_ROLE_OUTPUT : IO_ROLE_INPUT, out);
}

int fixture_check_finite(const tensor *t, const char *source, char *err, size_t errlen) {
    if (t->dtype == DT_I32 || t->dtype == DT_U32) return 0;
    int64_t n = tensor_numel(t), bad = 0, first = -1, nan = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = tensor_get(t, i);
        if (!isfinite(v)) {
            if (first < 0) first = i;
            bad++;
            nan += isnan(v) != 0;
        }
    }
    if (!bad) return 0;
    int64_t coord[TENSOR_MAX_DIMS];
    tensor_unravel(t, first, coord);
    char at[128];
    io_shape_str(t->ndim, coord, at, sizeof at);
    io_err(err, errlen,
           "%s%stensor '%s': %lld of %lld values are not finite (%lld NaN, %lld Inf; first at %s): the fixture is "
           "corrupt or its producer overflowed; regenerate it",
           source ? source : "", source ? ": " : "", t->name, (long long)bad, (long long)n, (long long)nan,
           (long long)(bad - nan), at);
    return -1;
}

int fixture_check_all_finite(const fixture *f, char *err, size_t errlen) {
    for (int i = 0; i < f->set.n; i++)
        if (fixture_check_finite(f->set.e[i].t, f->path, err, errlen) != 0) return -1;
    return 0;
}

int fixture_write_safetensors(const char *path, tensor *const *ts, int n, char *err, size_t errlen) {
    return safetensors_write(path, ts, n, NULL, 0, err, errlen);
}

int fixture_write_safetensors_meta(const char *path, tensor *const *ts, int n, const io_meta *meta, int nmeta,
                                   char *err, size_t errlen) {
    return safetensors_write(path, ts, n, meta, nmeta, err, errlen);
}

int fixture_write_npy_dir(const char *dir, tensor *const *ts, int n, char *err, size_t errlen) {
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        io_err(err, errlen, "%s: cannot create the directory: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        io_err(err, errlen, "%s: exists and is not a directory: pick another --dump path", dir);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *nm = ts[i]->name;
        if (!nm[0] || strchr(nm, '/') || strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0) {
            io_err(err, errlen, "%s: tensor '%s' has no name usable as a file name", dir, nm);
            return -1;
        }
        char *p = io_path_join(dir, nm, ".npy");
        if (!p) {
            io_err(err, errlen, "%s: out of memory", dir);
            return -1;
        }
        int rc = npy_write(p, ts[i], err, errlen);
        free(p);
        if (rc != 0) return -1;
    }
    return 0;
}
