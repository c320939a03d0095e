/* npy.c — .npy reader (with its own parser for the Python-dict header) and writer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

static const struct {
    const char *descr;
    dtype dt;
} npy_dtypes[] = {
    {"<f4", DT_F32}, {"<f8", DT_F64}, {"<f2", DT_F16}, {"<i4", DT_I32},
    {"<u4", DT_U32}, {"<V2", DT_BF16}, {"|V2", DT_BF16},
};

static const char *descr_of(dtype dt) {
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; i++)
        if (npy_dtypes[i].dt == dt) return npy_dtypes[i].descr;
    return NULL;
}

/* --- the header: a Python dict literal such as
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * Only the literal forms numpy writes are understood: strings, True/False, tuples
 * of non-negative integers. */
typedef struct pyparser {
    const char *p, *end;
} pyparser;

static int py_peek(pyparser *q) {
    while (q->p < q->end && (*q->p == ' ' || *q->p == '\t' || *q->p == '\n' || *q->p == '\r')) q->p++;
    return q->p < q->end ? (unsigned char)*q->p : -1;
}

static int py_eat(pyparser *q, char c) {
    if (py_peek(q) != (unsigned char)c) return 0;
    q->p++;
    return 1;
}

/* 'text' or "text" without escapes (numpy's keys and descrs never need them). */
static int py_string(pyparser *q, char *out, size_t n) {
    int quote = py_peek(q);
    if (quote != '\'' && quote != '"') return -1;
    const char *s = ++q->p;
    while (q->p < q->end && *q->p != quote) {
        if (*q->p == '\\' || *q->p == '\n' || *q->p == 0) return -1;
        q->p++;
    }
    if (q->p >= q->end) return -1;
    size_t len = (size_t)(q->p - s);
    q->p++;
    if (len >= n) return -1;
    memcpy(out, s, len);
    out[len] = 0;
    return 0;
}

static int py_word(pyparser *q, const char *w) {
    size_t n = strlen(w);
    if (py_peek(q) < 0 || (size_t)(q->end - q->p) < n || memcmp(q->p, w, n) != 0) return 0;
    const char *after = q->p + n;
    if (after < q->end && ((*after >= 'a' && *after <= 'z') || (*after >= 'A' && *after <= 'Z') ||
                           (*after >= '0' && *after <= '9') || *after == '_'))
        return 0;
    q->p = after;
    return 1;
}

static int py_int(pyparser *q, int64_t *out) {
    int c = py_peek(q);
    if (c < '0' || c > '9') return -1;
    int64_t v = 0;
    while (q->p < q->end && *q->p >= '0' && *q->p <= '9') {
        int d = *q->p - '0';
        if (v > (INT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
        q->p++;
    }
    if (q->p < q->end && (*q->p == 'L' || *q->p == 'l')) q->p++; /* Python 2 long */
    *out = v;
    return 0;
}

typedef struct npy_header {
    char descr[16];
    int fortran;
    int ndim;
    int64_t shape[TENSOR_MAX_DIMS];
} npy_header;

/* The value of 'shape': a tuple of non-negative integers, "(2, 3)", "(5,)" or "()". */
static int py_shape(pyparser *q, npy_header *h, char *why, size_t whylen) {
    if (!py_eat(q, '(')) {
        snprintf(why, whylen, "'shape' is not a tuple");
        return -1;
    }
    h->ndim = 0;
    while (!py_eat(q, ')')) {
        int64_t d;
        if (h->ndim == TENSOR_MAX_DIMS) {
            snprintf(why, whylen, "more than %d dims are not supported", TENSOR_MAX_DIMS);
            return -1;
        }
        if (py_int(q, &d) != 0) {
            snprintf(why, whylen, "'shape' holds something other than non-negative integers");
            return -1;
        }
        h->shape[h->ndim++] = d;
        if (!py_eat(q, ',') && py_peek(q) != ')') {
            snprintf(why, whylen, "malformed 'shape' tuple");
            return -1;
        }
    }
    return 0;
}

/* Parses the dict; on failure writes what went wrong (without the file name) to why. */
static int parse_header_dict(const char *text, size_t len, npy_header *h, char *why, size_t whylen) {
    pyparser q = {text, text + len};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (!py_eat(&q, '{')) {
        snprintf(why, whylen, "the header is not a Python dict");
        return -1;
    }
    while (!py_eat(&q, '}')) {
        char key[32];
        if (py_string(&q, key, sizeof key) != 0 || !py_eat(&q, ':')) {
            snprintf(why, whylen, "malformed header near byte %ld", (long)(q.p - text));
            return -1;
        }
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (py_peek(&q) == '[') {
                snprintf(why, whylen, "structured dtypes are not supported");
                return -1;
            }
            if (py_string(&q, h->descr, sizeof h->descr) != 0) {
                snprintf(why, whylen, "'descr' is not a short string");
                return -1;
            }
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_fortran) {
            if (py_word(&q, "True"))
                h->fortran = 1;
            else if (py_word(&q, "False"))
                h->fortran = 0;
            else {
                snprintf(why, whylen, "'fortran_order' is not True or False");
                return -1;
            }
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (py_shape(&q, h, why, whylen) != 0) return -1;
            have_shape = 1;
        } else {
            snprintf(why, whylen, "unexpected or repeated key '%s' in the header", key);
            return -1;
        }
        if (!py_eat(&q, ',') && py_peek(&q) != '}') {
            snprintf(why, whylen, "malformed header near byte %ld", (long)(q.p - text));
            return -1;
        }
    }
    if (py_peek(&q) >= 0) {
        snprintf(why, whylen, "unexpected text after the header dict");
        return -1;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        snprintf(why, whylen, "the header lacks %s", !have_descr ? "'descr'" : !have_fortran ? "'fortran_order'" : "'shape'");
        return -1;
    }
    return 0;
}

/* The magic and version, and where the header starts and how long it is. */
static int read_preamble(const io_src *src, const char *tname, uint64_t *hstart, uint64_t *hlen, char *err,
                         size_t errlen) {
    const char *f = src->name;
    uint8_t pre[12];
    static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (src->size < 10 || io_src_read(src, 0, pre, 10) != 0 || memcmp(pre, magic, 6) != 0) {
        io_err(err, errlen, "%s: tensor '%s': not a .npy file (no \\x93NUMPY magic, or truncated): re-save it with numpy.save",
               f, tname);
        return -1;
    }
    int major = pre[6], minor = pre[7];
    if (major == 1 && minor == 0) {
        *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        *hstart = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (src->size < 12 || io_src_read(src, 0, pre, 12) != 0) {
            io_err(err, errlen, "%s: tensor '%s': truncated .npy preamble: the file is corrupt", f, tname);
            return -1;
        }
        *hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
        *hstart = 12;
    } else {
        io_err(err, errlen, "%s: tensor '%s': .npy format version %d.%d is not supported (1.0, 2.0, 3.0 are): "
               "re-save it with numpy.save", f, tname, major, minor);
        return -1;
    }
    if (*hlen > src->size - *hstart) {
        io_err(err, errlen,
               "%s: tensor '%s': header length %llu is beyond the end of the file (%llu bytes): the file is truncated",
               f, tname, (unsigned long long)*hlen, (unsigned long long)src->size);
        return -1;
    }
    if (*hlen > NPY_MAX_HEADER) {
        io_err(err, errlen, "%s: tensor '%s': header length %llu is implausible (limit 1 MB): the file is corrupt", f,
               tname, (unsigned long long)*hlen);
        return -1;
    }
    return 0;
}

/* Reads and parses the header dict at [hstart, hstart + hlen). */
static int read_header(const io_src *src, const char *tname, uint64_t hstart, uint64_t hlen, npy_header *h,
                       char *err, size_t errlen) {
    const char *f = src->name;
    char *text = malloc((size_t)hlen + 1);
    if (!text || io_src_read(src, hstart, text, (size_t)hlen) != 0) {
        io_err(err, errlen, "%s: tensor '%s': cannot read the header: %s", f, tname, text ? "read error" : "out of memory");
        free(text);
        return -1;
    }
    text[hlen] = 0;
    char why[128];
    int bad = parse_header_dict(text, (size_t)hlen, h, why, sizeof why);
    free(text);
    if (bad) {
        io_err(err, errlen, "%s: tensor '%s': %s: re-save it with numpy.save", f, tname, why);
        return -1;
    }
    return 0;
}

/* The header's dtype, if gdnbench reads it and the array is in C order. */
static int header_dtype(const io_src *src, const char *tname, const npy_header *h, dtype *out, char *err,
                        size_t errlen) {
    const char *f = src->name;
    dtype dt = DT_COUNT;
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; i++)
        if (strcmp(h->descr, npy_dtypes[i].descr) == 0) dt = npy_dtypes[i].dt;
    if (dt == DT_COUNT) {
        const char *fix = h->descr[0] == '>'   ? "big-endian data: re-save with arr.astype(arr.dtype.newbyteorder('<'))"
                          : h->descr[0] == '=' ? "native byte order is ambiguous: re-save with an explicit '<' dtype"
                                               : "convert it, e.g. arr.astype('<f4')";
        io_err(err, errlen,
               "%s: tensor '%s': dtype '%s' is not supported (<f4 <f8 <f2 <i4 <u4, <V2 as bf16): %s", f, tname,
               h->descr, fix);
        return -1;
    }
    if (h->fortran) {
        io_err(err, errlen,
               "%s: tensor '%s': Fortran-order arrays are not supported: re-save with np.save(path, "
               "np.ascontiguousarray(arr))",
               f, tname);
        return -1;
    }
    *out = dt;
    return 0;
}

/* The data after the header: exactly the bytes the shape needs, read into a new tensor. */
static int read_data(const io_src *src, const char *tname, dtype dt, const npy_header *h, uint64_t data_start,
                     tensor **out, char *err, size_t errlen) {
    const char *f = src->name;
    uint64_t need;
    char s[128];
    io_shape_str(h->ndim, h->shape, s, sizeof s);
    if (io_shape_bytes(dt, h->ndim, h->shape, &need) != 0) {
        io_err(err, errlen, "%s: tensor '%s': shape %s is too large: the header is corrupt", f, tname, s);
        return -1;
    }
    uint64_t have = src->size - data_start;
    if (have != need) {
        io_err(err, errlen,
               "%s: tensor '%s': %s %s needs %llu data bytes but the file has %llu: the file is %s", f, tname,
               dtype_name(dt), s, (unsigned long long)need, (unsigned long long)have,
               have < need ? "truncated" : "corrupt (trailing bytes)");
        return -1;
    }
    tensor *t = tensor_new(tname, dt, h->ndim, h->shape);
    if (!t) {
        io_err(err, errlen, "%s: tensor '%s': out of memory for %llu bytes", f, tname, (unsigned long long)need);
        return -1;
    }
    if (io_src_read(src, data_start, t->data, (size_t)need) != 0) {
        io_err(err, errlen, "%s: tensor '%s': read error (did the file change while reading?)", f, tname);
        tensor_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* Layout: magic and version, header length, the header dict (padded), the data. */
int npy_parse(const io_src *src, const char *tname, tensor **out, char *err, size_t errlen) {
    uint64_t hstart, hlen;
    npy_header h = {0};
    dtype dt;
    if (read_preamble(src, tname, &hstart, &hlen, err, errlen) != 0 ||
        read_header(src, tname, hstart, hlen, &h, err, errlen) != 0 ||
        header_dtype(src, tname, &h, &dt, err, errlen) != 0)
        return -1;
    return read_data(src, tname, dt, &h, hstart + hlen, out, err, errlen);
}

int npy_parse_mem(const void *buf, size_t len, const char *file_name, const char *tname, tensor **out, char *err,
                  size_t errlen) {
    io_src s;
    io_src_init_mem(&s, file_name, buf, len);
    return npy_parse(&s, tname, out, err, errlen);
}

int npy_stem_name(const char *path, char *name, size_t n) {
    const char *base = io_basename(path);
    size_t len = strlen(base);
    if (io_has_suffix(base, ".npy")) len -= 4;
    if (len == 0 || len >= n || len >= TENSOR_NAME_MAX) return -1;
    memcpy(name, base, len);
    name[len] = 0;
    return 0;
}

int npy_read(const char *path, tensor **out, char *err, size_t errlen) {
    char name[TENSOR_NAME_MAX];
    if (npy_stem_name(path, name, sizeof name) != 0) {
        io_err(err, errlen, "%s: the file name gives no usable tensor name (1..%d characters before .npy): rename it",
               path, TENSOR_NAME_MAX - 1);
        return -1;
    }
    io_src s;
    if (io_src_open_file(&s, path, err, errlen) != 0) return -1;
    int rc = npy_parse(&s, name, out, err, errlen);
    io_src_close(&s);
    return rc;
}

/* The preamble + padded header numpy.save would write for t. */
static int build_header(const tensor *t, io_buf *out, char *err, size_t errlen) {
    const char *descr = descr_of(t->dtype);
    if (!descr || t->ndim < 0 || t->ndim > TENSOR_MAX_DIMS) {
        io_err(err, errlen, "cannot write tensor '%s' as .npy: dtype %s or %d dims unsupported", t->name,
               dtype_name(t->dtype), t->ndim);
        return -1;
    }
    io_buf d = {0};
    io_buf_printf(&d, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->ndim; i++) io_buf_printf(&d, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    io_buf_printf(&d, "%s), }", t->ndim == 1 ? "," : "");
    int v2 = d.len + 64 > 65535; /* padding may add up to 64 bytes */
    size_t pre = v2 ? 12 : 10;
    while ((pre + d.len + 1) % 64 != 0) io_buf_append(&d, " ", 1);
    io_buf_append(&d, "\n", 1);
    uint8_t p[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)(v2 ? 2 : 1), 0};
    for (int i = 0; i < (v2 ? 4 : 2); i++) p[8 + i] = (uint8_t)(d.len >> (8 * i));
    io_buf_append(out, p, pre);
    io_buf_append(out, d.p, d.len);
    int oom = d.oom || out->oom;
    io_buf_free(&d);
    if (oom) {
        io_buf_free(out);
        io_err(err, errlen, "out of memory writing tensor '%s'", t->name);
        return -1;
    }
    return 0;
}

int npy_serialize(const tensor *t, uint8_t **buf, size_t *len, char *err, size_t errlen) {
    io_buf b = {0};
    if (build_header(t, &b, err, errlen) != 0) return -1;
    io_buf_append(&b, t->data, tensor_nbytes(t));
    if (b.oom) {
        io_buf_free(&b);
        io_err(err, errlen, "out of memory writing tensor '%s'", t->name);
        return -1;
    }
    *buf = b.p;
    *len = b.len;
    return 0;
}

int npy_write(const char *path, const tensor *t, char *err, size_t errlen) {
    io_buf hdr = {0};
    char e[256];
    if (build_header(t, &hdr, e, sizeof e) != 0) {
        io_err(err, errlen, "%s: %s", path, e);
        return -1;
    }
    io_writer w;
    int rc = io_writer_open(&w, path, err, errlen);
    if (rc == 0) {
        io_writer_put(&w, hdr.p, hdr.len);
        io_writer_put(&w, t->data, tensor_nbytes(t));
        rc = io_writer_commit(&w, err, errlen);
    }
    io_buf_free(&hdr);
    return rc;
}
