/* io_util.c — byte sources, tensor sets, messages, buffers, directory listings and JSON
 * helpers for the fixture I/O (report/ lists report directories with them too). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/file.h"
#include "io/io_util.h"

int io_src_open_file(io_src *s, const char *path, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->name, sizeof s->name, "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        io_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        io_err(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    s->fd = fd;
    s->size = (uint64_t)st.st_size;
    return 0;
}

void io_src_init_mem(io_src *s, const char *name, const void *buf, size_t len) {
    memset(s, 0, sizeof *s);
    s->fd = -1;
    snprintf(s->name, sizeof s->name, "%s", name ? name : "<memory>");
    s->mem = buf;
    s->size = len;
}

int io_src_read(const io_src *s, uint64_t off, void *dst, size_t n) {
    if (off > s->size || n > s->size - off) return -1;
    if (n == 0) return 0;
    off += s->base;
    if (s->mem) {
        memcpy(dst, s->mem + off, n);
        return 0;
    }
    uint8_t *p = dst;
    while (n > 0) {
        ssize_t r = pread(s->fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1; /* error, or the file shrank under us */
        p += r;
        off += (uint64_t)r;
        n -= (size_t)r;
    }
    return 0;
}

void io_src_close(io_src *s) {
    if (s->fd >= 0 && !s->borrowed_fd) close(s->fd);
    s->fd = -1;
}

int io_src_slice(io_src *slice, const io_src *parent, uint64_t off, uint64_t len, const char *name) {
    if (off > parent->size || len > parent->size - off) return -1;
    *slice = *parent;
    snprintf(slice->name, sizeof slice->name, "%s", name ? name : parent->name);
    slice->base = parent->base + off;
    slice->size = len;
    slice->borrowed_fd = 1;
    return 0;
}

int io_set_add(io_set *s, tensor *t, io_role role) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        io_entry *e = realloc(s->e, sizeof *e * (size_t)cap);
        if (!e) {
            tensor_free(t);
            return -1;
        }
        s->e = e;
        s->cap = cap;
    }
    s->e[s->n++] = (io_entry){t, role};
    return 0;
}

int io_set_add_meta(io_set *s, const char *key, const char *value) {
    for (int i = 0; i < s->nmeta; i++) {
        if (strcmp(s->meta[i].key, key) != 0) continue;
        char *v = strdup(value);
        if (!v) return -1;
        free(s->meta[i].value);
        s->meta[i].value = v;
        return 0;
    }
    if (s->nmeta == s->metacap) {
        int cap = s->metacap ? 2 * s->metacap : 8;
        io_meta *m = realloc(s->meta, sizeof *m * (size_t)cap);
        if (!m) return -1;
        s->meta = m;
        s->metacap = cap;
    }
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    s->meta[s->nmeta++] = (io_meta){k, v};
    return 0;
}

const char *io_set_meta(const io_set *s, const char *key) {
    for (int i = 0; i < s->nmeta; i++)
        if (strcmp(s->meta[i].key, key) == 0) return s->meta[i].value;
    return NULL;
}

int io_set_find(const io_set *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->e[i].t->name, name) == 0) return i;
    return -1;
}

void io_set_clear(io_set *s) {
    for (int i = 0; i < s->n; i++) tensor_free(s->e[i].t);
    for (int i = 0; i < s->nmeta; i++) {
        free(s->meta[i].key);
        free(s->meta[i].value);
    }
    free(s->e);
    free(s->meta);
    memset(s, 0, sizeof *s);
}

int io_set_move(io_set *dst, io_set *src) {
    for (int i = 0; i < src->n; i++) {
        if (io_set_add(dst, src->e[i].t, src->e[i].role) != 0) {
            /* io_set_add freed entry i; free the rest so nothing leaks */
            for (int j = i + 1; j < src->n; j++) tensor_free(src->e[j].t);
            src->n = 0;
            io_set_clear(src);
            return -1;
        }
    }
    src->n = 0;
    for (int i = 0; i < src->nmeta; i++)
        if (io_set_add_meta(dst, src->meta[i].key, src->meta[i].value) != 0) {
            io_set_clear(src);
            return -1;
        }
    io_set_clear(src);
    return 0;
}

void io_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
}

int io_shape_bytes(dtype dt, int ndim, const int64_t *shape, uint64_t *out) {
    if (ndim < 0 || ndim > TENSOR_MAX_DIMS || dt >= DT_COUNT) return -1;
    const uint64_t limit = (uint64_t)1 << 62;
    uint64_t n = dtype_size(dt);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return -1;
        uint64_t d = (uint64_t)shape[i];
        if (d != 0 && n > limit / d) return -1;
        n *= d;
    }
    *out = n;
    return 0;
}

void io_shape_str(int ndim, const int64_t *shape, char *buf, size_t n) {
    size_t off = 0;
    off += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)shape[i]);
    if (off < n) snprintf(buf + off, n - off, "]");
}

int io_read_small_file(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen) {
    file_text ft;
    char msg[PATH_MAX + 256];
    file_status s = file_read_all(path, max, FILE_REGULAR_ONLY, &ft, msg, sizeof msg);
    if (s == FILE_TOO_LARGE && ft.size) {
        io_err(err, errlen, "%s: %llu bytes is too large for a metadata file (limit %zu): is this the right file?",
               path, (unsigned long long)ft.size, max);
        return -1;
    }
    if (s != FILE_OK) {
        io_err(err, errlen, "%s", msg); /* io_err keeps a path with a newline on one line */
        return -1;
    }
    *buf = ft.data;
    *len = ft.len;
    return 0;
}

int io_writer_open(io_writer *w, const char *path, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    size_t n = strlen(path) + 32;
    w->path = strdup(path);
    w->tmp = malloc(n);
    if (!w->path || !w->tmp) {
        io_err(err, errlen, "%s: out of memory", path);
        free(w->path);
        free(w->tmp);
        return -1;
    }
    snprintf(w->tmp, n, "%s.tmp%ld", path, (long)getpid());
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        io_err(err, errlen, "%s: cannot create: %s (does the directory exist and is it writable?)", path,
               strerror(errno));
        free(w->path);
        free(w->tmp);
        return -1;
    }
    return 0;
}

void io_writer_put(io_writer *w, const void *data, size_t n) {
    if (!w->failed && n > 0 && fwrite(data, 1, n, w->f) != n) w->failed = errno ? errno : EIO;
}

int io_writer_commit(io_writer *w, char *err, size_t errlen) {
    int e = w->failed;
    if (fclose(w->f) != 0 && !e) e = errno ? errno : EIO;
    if (!e && rename(w->tmp, w->path) != 0) e = errno;
    if (e) {
        io_err(err, errlen, "%s: write failed: %s (disk full or directory not writable?)", w->path, strerror(e));
        unlink(w->tmp);
    }
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
    return e ? -1 : 0;
}

int io_write_file(const char *path, const void *buf, size_t len, char *err, size_t errlen) {
    io_writer w;
    if (io_writer_open(&w, path, err, errlen) != 0) return -1;
    io_writer_put(&w, buf, len);
    return io_writer_commit(&w, err, errlen);
}

void io_buf_append(io_buf *b, const void *data, size_t n) {
    if (b->oom) return;
    if (n > SIZE_MAX / 2 - b->len) {
        b->oom = 1;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
}

void io_buf_printf(io_buf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        io_buf_append(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    io_buf_append(b, big, (size_t)n);
    free(big);
}

void io_buf_json_string(io_buf *b, const char *s) {
    io_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            io_buf_append(b, esc, 2);
        } else if (*p < 0x20) {
            io_buf_printf(b, "\\u%04x", *p);
        } else {
            io_buf_append(b, p, 1);
        }
    }
    io_buf_append(b, "\"", 1);
}

void io_buf_free(io_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

const char *io_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int io_has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

char *io_path_join(const char *dir, const char *name, const char *suffix) {
    size_t len = strlen(dir) + strlen(name) + strlen(suffix) + 2;
    char *p = malloc(len);
    if (p) snprintf(p, len, "%s/%s%s", dir, name, suffix);
    return p;
}

int io_list_dir(const char *dir, const char *suffix, char ***names, int *n) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    char **v = NULL;
    int cnt = 0, cap = 0, rc = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.' || !io_has_suffix(de->d_name, suffix)) continue;
        if (cnt == cap) {
            cap = cap ? 2 * cap : 16;
            char **nv = realloc(v, sizeof *v * (size_t)cap);
            if (!nv) {
                rc = -1;
                break;
            }
            v = nv;
        }
        if (!(v[cnt] = strdup(de->d_name))) {
            rc = -1;
            break;
        }
        cnt++;
    }
    closedir(d);
    if (rc != 0) {
        io_free_names(v, cnt);
        return -2;
    }
    *names = v;
    *n = cnt;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void io_sort_names(char **names, int n) {
    if (n > 0) qsort(names, (size_t)n, sizeof *names, cmp_name);
}

void io_free_names(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

int io_json_uint(const cJSON *x, uint64_t *out) {
    if (!cJSON_IsNumber(x)) return -1;
    double v = x->valuedouble;
    if (!isfinite(v) || v < 0 || v != floor(v) || v > 9007199254740992.0) return -1;
    *out = (uint64_t)v;
    return 0;
}

cJSON *io_json_parse_whole(const char *text, size_t len, long *at, int *trailing) {
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    *trailing = 0;
    if (!root) {
        *at = end ? (long)(end - text) : -1;
        return NULL;
    }
    for (const char *p = end; p < text + len; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            *at = (long)(p - text);
            *trailing = 1;
            cJSON_Delete(root);
            return NULL;
        }
    return root;
}
