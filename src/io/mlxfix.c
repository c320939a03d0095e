/* mlxfix.c — reading mlx-native fixture sets (meta.json + raw .bin files). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "io/mlxfix.h"

static int mem_open(void *ctx, const char *file, io_src *src, char *err, size_t errlen) {
    const mlxfix_mem_table *t = ctx;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->files[i].name, file) == 0) {
            io_src_init_mem(src, file, t->files[i].data, t->files[i].len);
            return 0;
        }
    io_err(err, errlen, "%s: no such file", file);
    return -1;
}

static int mem_list(void *ctx, char ***names, int *n) {
    const mlxfix_mem_table *t = ctx;
    char **v = calloc((size_t)(t->n ? t->n : 1), sizeof *v);
    if (!v) return -1;
    for (int i = 0; i < t->n; i++)
        if (!(v[i] = strdup(t->files[i].name))) {
            io_free_names(v, i);
            return -1;
        }
    *names = v;
    *n = t->n;
    return 0;
}

mlxfix_files mlxfix_mem_files(const mlxfix_mem_table *table) {
    return (mlxfix_files){(void *)table, mem_open, mem_list};
}

static int dir_open(void *ctx, const char *file, io_src *src, char *err, size_t errlen) {
    char *path = io_path_join(ctx, file, "");
    if (!path) {
        io_err(err, errlen, "%s: out of memory", file);
        return -1;
    }
    int rc = io_src_open_file(src, path, err, errlen);
    free(path);
    return rc;
}

static int dir_list(void *ctx, char ***names, int *n) { return io_list_dir(ctx, "", names, n); }

/* JSON number -> the string kept in meta: integers without a decimal point. */
static void number_string(double v, char *buf, size_t n) {
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        snprintf(buf, n, "%lld", (long long)v);
    else
        snprintf(buf, n, "%.17g", v);
}

static int add_scalar_meta(io_set *set, const cJSON *item) {
    char num[64];
    if (cJSON_IsNumber(item)) {
        number_string(item->valuedouble, num, sizeof num);
        return io_set_add_meta(set, item->string, num);
    }
    if (cJSON_IsBool(item)) return io_set_add_meta(set, item->string, cJSON_IsTrue(item) ? "true" : "false");
    if (cJSON_IsString(item)) return io_set_add_meta(set, item->string, item->valuestring);
    return 0; /* arrays, nested objects, null: not parameters */
}

/* Opens the .bin of a tensor, checks its size against the shape and reads it. */
static int load_bin(const char *meta, const mlxfix_files *files, const char *file, const char *name, dtype dt,
                    int ndim, const int64_t *shape, io_role role, io_set *set, char *err, size_t errlen) {
    char s[128], e[384];
    io_shape_str(ndim, shape, s, sizeof s);
    uint64_t need;
    if (io_shape_bytes(dt, ndim, shape, &need) != 0) {
        io_err(err, errlen, "%s: tensor '%s': shape %s is too large: fix the meta.json", meta, name, s);
        return -1;
    }
    if (strchr(file, '/') || strcmp(file, "..") == 0 || strcmp(file, ".") == 0 || !file[0]) {
        io_err(err, errlen, "%s: tensor '%s': \"file\": \"%.80s\" must be a plain file name next to the meta.json",
               meta, name, file);
        return -1;
    }
    io_src src;
    if (files->open(files->ctx, file, &src, e, sizeof e) != 0) {
        io_err(err, errlen, "%s: tensor '%s': data file missing (%s): copy the whole fixture directory", meta,
               name, e);
        return -1;
    }
    int rc = -1;
    if (src.size != need) {
        io_err(err, errlen,
               "%s: tensor '%s': %s is %llu bytes but %s %s needs %llu: the .bin does not match the meta.json "
               "(truncated or regenerated?)",
               meta, name, file, (unsigned long long)src.size, dtype_name(dt), s, (unsigned long long)need);
        goto done;
    }
    tensor *t = tensor_new(name, dt, ndim, shape);
    if (!t) {
        io_err(err, errlen, "%s: tensor '%s': out of memory for %llu bytes", meta, name, (unsigned long long)need);
        goto done;
    }
    if (io_src_read(&src, 0, t->data, (size_t)need) != 0) {
        io_err(err, errlen, "%s: tensor '%s': read error on %s", meta, name, file);
        tensor_free(t);
        goto done;
    }
    if (io_set_add(set, t, role) != 0) {
        io_err(err, errlen, "%s: out of memory", meta);
        goto done;
    }
    rc = 0;
done:
    io_src_close(&src);
    return rc;
}

/* One entry of "inputs"/"outputs": {"shape": [...], "dtype": "bf16", "file": "..."}. */
static int load_table_entry(const char *meta, const char *prefix, const mlxfix_files *files, const cJSON *e,
                            io_role role, io_set *set, char *err, size_t errlen) {
    char name[TENSOR_NAME_MAX + 8];
    size_t klen = strlen(e->string);
    if (klen == 0 || klen >= TENSOR_NAME_MAX) {
        io_err(err, errlen, "%s: tensor '%.60s': name must be 1..%d characters: fix the meta.json", meta, e->string,
               TENSOR_NAME_MAX - 1);
        return -1;
    }
    snprintf(name, sizeof name, "%s", e->string);
    if (role == IO_ROLE_OUTPUT && io_set_find(set, name) >= 0) snprintf(name, sizeof name, "%s_ref", e->string);
    if (strlen(name) >= TENSOR_NAME_MAX || io_set_find(set, name) >= 0) {
        io_err(err, errlen, "%s: tensor '%s' is listed twice: fix the meta.json", meta, e->string);
        return -1;
    }
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
    if (!cJSON_IsObject(e) || !cJSON_IsArray(shape) || !cJSON_IsString(dt) || (file && !cJSON_IsString(file))) {
        io_err(err, errlen, "%s: tensor '%s': entry needs \"shape\" (array) and \"dtype\" (string): fix the meta.json",
               meta, name);
        return -1;
    }
    dtype d;
    if (dtype_from_name(dt->valuestring, &d) != 0) {
        io_err(err, errlen,
               "%s: tensor '%s': dtype \"%.32s\" is not supported (bf16, f16, f32, f64, i32, u32): fix the meta.json",
               meta, name, dt->valuestring);
        return -1;
    }
    int nd = cJSON_GetArraySize(shape);
    if (nd > TENSOR_MAX_DIMS) {
        io_err(err, errlen, "%s: tensor '%s': %d dims, at most %d are supported", meta, name, nd, TENSOR_MAX_DIMS);
        return -1;
    }
    int64_t dims[TENSOR_MAX_DIMS];
    int i = 0;
    for (const cJSON *x = shape->child; x; x = x->next, i++) {
        uint64_t v;
        if (io_json_uint(x, &v) != 0) {
            io_err(err, errlen, "%s: tensor '%s': shape entry %d is not a non-negative integer: fix the meta.json",
                   meta, name, i);
            return -1;
        }
        dims[i] = (int64_t)v;
    }
    char deffile[256];
    if (file)
        snprintf(deffile, sizeof deffile, "%s", file->valuestring);
    else if (role == IO_ROLE_INPUT)
        snprintf(deffile, sizeof deffile, "%s_input_%s.bin", prefix, e->string);
    else
        snprintf(deffile, sizeof deffile, "%s_%s_ref.bin", prefix, e->string);
    return load_bin(meta, files, deffile, name, d, nd, dims, role, set, err, errlen);
}

/* Does `file` belong to a set whose prefix is longer than ours ("x_o" when we are "x")? */
static int owned_by_longer_prefix(const char *file, const char *prefix, char **names, int n) {
    size_t pl = strlen(prefix);
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        if (!io_has_suffix(names[i], "_meta.json") || nl - 10 <= pl) continue;
        if (strncmp(names[i], prefix, pl) != 0 || names[i][pl] != '_') continue;
        size_t ol = nl - 10;
        if (strncmp(file, names[i], ol) == 0 && file[ol] == '_') return 1;
    }
    return 0;
}

static int param_of(const io_set *set, const char *key, int64_t *v) {
    const char *s = io_set_meta(set, key);
    if (!s) return -1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 0);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

/* A meta.json without tables: find PREFIX_input_NAME.bin and PREFIX_NAME_ref.bin. */
static int discover_files(const char *meta, const char *prefix, const mlxfix_files *files, io_set *set, char *err,
                          size_t errlen) {
    char **names = NULL;
    int n = 0;
    if (!files->list || files->list(files->ctx, &names, &n) != 0) {
        io_err(err, errlen, "%s: cannot list the fixture directory", meta);
        return -1;
    }
    size_t pl = strlen(prefix);
    int rc = 0, found = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *f = names[i];
        size_t fl = strlen(f);
        if (fl <= pl + 5 || strncmp(f, prefix, pl) != 0 || f[pl] != '_' || !io_has_suffix(f, ".bin")) continue;
        if (owned_by_longer_prefix(f, prefix, names, n)) continue;
        const char *rest = f + pl + 1;
        size_t rl = fl - pl - 1 - 4; /* without ".bin" */
        char name[TENSOR_NAME_MAX + 16];
        io_role role;
        if (rl > 6 && strncmp(rest, "input_", 6) == 0 && rl - 6 < TENSOR_NAME_MAX) {
            snprintf(name, sizeof name, "%.*s", (int)(rl - 6), rest + 6);
            role = IO_ROLE_INPUT;
        } else if (rl > 4 && strncmp(rest + rl - 4, "_ref", 4) == 0 && rl - 4 < TENSOR_NAME_MAX) {
            snprintf(name, sizeof name, "%.*s", (int)(rl - 4), rest);
            role = IO_ROLE_OUTPUT;
        } else {
            continue;
        }
        if (io_set_find(set, name) >= 0) {
            if (strlen(name) + 4 >= TENSOR_NAME_MAX) continue;
            strcat(name, "_ref");
        }
        io_src src;
        char e[256];
        if (files->open(files->ctx, f, &src, e, sizeof e) != 0) {
            io_err(err, errlen, "%s: tensor '%s': %s", meta, name, e);
            rc = -1;
            break;
        }
        uint64_t size = src.size;
        io_src_close(&src);
        int64_t B, T, H, BT, shape[4];
        int nd = 1;
        shape[0] = (int64_t)(size / 4);
        if (param_of(set, "B", &B) == 0 && param_of(set, "T", &T) == 0 && param_of(set, "H", &H) == 0 &&
            param_of(set, "BT", &BT) == 0) {
            int64_t abcd[4] = {B, T, H, BT};
            uint64_t need;
            if (io_shape_bytes(DT_F32, 4, abcd, &need) == 0 && need == size) {
                memcpy(shape, abcd, sizeof abcd);
                nd = 4;
            }
        }
        if (size % 4 != 0) {
            io_err(err, errlen,
                   "%s: tensor '%s': %s is %llu bytes, not a whole number of f32: add an \"inputs\"/\"outputs\" "
                   "table with shape and dtype to the meta.json",
                   meta, name, f, (unsigned long long)size);
            rc = -1;
            break;
        }
        rc = load_bin(meta, files, f, name, DT_F32, nd, shape, role, set, err, errlen);
        found++;
    }
    io_free_names(names, n);
    if (rc == 0 && found == 0) {
        io_err(err, errlen,
               "%s: no tensors: the meta.json has no \"inputs\"/\"outputs\" and no %s_input_*.bin / %s_*_ref.bin files "
               "lie next to it",
               meta, prefix, prefix);
        rc = -1;
    }
    return rc;
}

static int prefix_of(const char *meta_name, char *prefix, size_t n) {
    const char *base = io_basename(meta_name);
    size_t len = strlen(base);
    if (io_has_suffix(base, "_meta.json"))
        len -= 10;
    else if (io_has_suffix(base, ".json"))
        len -= 5;
    if (len == 0 || len >= n) return -1;
    memcpy(prefix, base, len);
    prefix[len] = 0;
    return 0;
}

int mlxfix_parse(const char *json, size_t len, const char *meta, const mlxfix_files *files, io_set *out, char *err,
                 size_t errlen) {
    char prefix[256];
    if (prefix_of(meta, prefix, sizeof prefix) != 0) {
        io_err(err, errlen, "%s: not an mlx-native meta file name (expected PREFIX_meta.json)", meta);
        return -1;
    }
    long at;
    int trailing;
    cJSON *root = io_json_parse_whole(json, len, &at, &trailing);
    if (!root && trailing) {
        io_err(err, errlen, "%s: unexpected text after the JSON object (byte %ld): fix the meta.json", meta, at);
        return -1;
    }
    if (!root) {
        io_err(err, errlen, "%s: malformed JSON (near byte %ld): fix or regenerate the meta.json", meta, at);
        return -1;
    }
    int rc = -1;
    io_set set = {0};
    if (!cJSON_IsObject(root)) {
        io_err(err, errlen, "%s: the meta.json is not a JSON object", meta);
        goto done;
    }
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "tolerance") == 0 && cJSON_IsObject(e)) {
            for (const cJSON *t = e->child; t; t = t->next)
                if (add_scalar_meta(&set, t) != 0) goto oom;
        } else if (add_scalar_meta(&set, e) != 0) {
            goto oom;
        }
    }
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
    if ((ins && !cJSON_IsObject(ins)) || (outs && !cJSON_IsObject(outs))) {
        io_err(err, errlen, "%s: \"inputs\" and \"outputs\" must be objects name -> {shape, dtype, file}", meta);
        goto done;
    }
    if (ins || outs) {
        for (const cJSON *e = ins ? ins->child : NULL; e; e = e->next)
            if (load_table_entry(meta, prefix, files, e, IO_ROLE_INPUT, &set, err, errlen) != 0) goto done;
        for (const cJSON *e = outs ? outs->child : NULL; e; e = e->next)
            if (load_table_entry(meta, prefix, files, e, IO_ROLE_OUTPUT, &set, err, errlen) != 0) goto done;
        if (set.n == 0) {
            io_err(err, errlen, "%s: \"inputs\" and \"outputs\" list no tensors", meta);
            goto done;
        }
    } else if (discover_files(meta, prefix, files, &set, err, errlen) != 0) {
        goto done;
    }
    if (io_set_move(out, &set) != 0) goto oom;
    rc = 0;
    goto done;
oom:
    io_err(err, errlen, "%s: out of memory", meta);
done:
    io_set_clear(&set);
    cJSON_Delete(root);
    return rc;
}

int mlxfix_read(const char *meta_path, io_set *out, char *err, size_t errlen) {
    char *json;
    size_t len;
    if (io_read_small_file(meta_path, MLXFIX_MAX_META, &json, &len, err, errlen) != 0) return -1;
    size_t dn = strlen(meta_path) + 2;
    char *dir = malloc(dn);
    if (!dir) {
        free(json);
        io_err(err, errlen, "%s: out of memory", meta_path);
        return -1;
    }
    const char *base = io_basename(meta_path);
    if (base == meta_path)
        snprintf(dir, dn, ".");
    else
        snprintf(dir, dn, "%.*s", (int)(base - meta_path - 1 > 0 ? base - meta_path - 1 : 1), meta_path);
    mlxfix_files files = {dir, dir_open, dir_list};
    int rc = mlxfix_parse(json, len, meta_path, &files, out, err, errlen);
    free(dir);
    free(json);
    return rc;
}

int mlxfix_read_prefix(const char *dir, const char *prefix, io_set *out, char *err, size_t errlen) {
    char *path = io_path_join(dir, prefix, "_meta.json");
    if (!path) {
        io_err(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    int rc = mlxfix_read(path, out, err, errlen);
    free(path);
    return rc;
}

int mlxfix_list_sets(const char *dir, char ***prefixes, int *n, char *err, size_t errlen) {
    char **names;
    int cnt;
    if (io_list_dir(dir, "_meta.json", &names, &cnt) != 0) {
        io_err(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
        return -1;
    }
    int k = 0;
    for (int i = 0; i < cnt; i++) {
        size_t l = strlen(names[i]);
        if (l > 10) { /* "_meta.json" alone names no set */
            names[i][l - 10] = 0;
            names[k++] = names[i];
        } else {
            free(names[i]);
        }
    }
    io_sort_names(names, k);
    *prefixes = names;
    *n = k;
    return 0;
}
