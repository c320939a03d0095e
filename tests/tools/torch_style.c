/* torch_style.c — `gdnbench-testdata torch-style`: fixtures written the way PyTorch
 * users write them, without torch or numpy, for the CLI tests of --fixture/--map.
 *
 *   gdnbench-testdata torch-style DUMP.safetensors OUT [--deflate] SPEC...
 *
 * DUMP is a `gdnbench OP --dump DIR` file (inputs, outputs, NAME.ref_f64 references).
 * OUT is written with one tensor per SPEC and no gdnbench metadata:
 *   *.safetensors  as safetensors.torch.save_file(tensors, OUT) writes it: no
 *                  "__metadata__" (save_file writes one only when given metadata),
 *                  tensors sorted by dtype size (largest first) then name, data packed
 *                  in that order, the compact JSON header padded with spaces to a
 *                  multiple of 8;
 *   *.npz          as numpy.savez(OUT, **arrays) through Python's zipfile: a zip of
 *                  NAME.npy members in SPEC order, stored, each with a zip64 extra
 *                  field (force_zip64=True), dated 1980-01-01; --deflate marks the
 *                  members deflated as numpy.savez_compressed does.  Their deflate
 *                  streams are made of stored blocks (valid deflate that any inflater
 *                  reads; zlib's compressed bytes would need zlib, which gdnbench does
 *                  not depend on).
 * SPEC is NEW=OLD[:DTYPE][@SHAPE]: tensor OLD of the dump saved as NEW, converted to
 * DTYPE (f32, f16, bf16; default: its dtype in the dump; .npz has no bf16, so bf16
 * becomes f32 there, as `t.float().numpy()` would), and with @SHAPE (comma list) its
 * first prod(SHAPE) elements saved with that shape (a tensor that contradicts the
 * others).  A NEW given twice keeps its first place and its last tensor.
 *
 * Conversions round to nearest even: f16 straight from the double value, bf16 from
 * the value rounded to f32 first (what Python's struct 'e' and 'f' packing does, and
 * so what the fixtures of the tests were made with). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tools/testdata.h"

#define ERRLEN 600
#define MAX_DIMS 16

typedef struct ts_tensor {
    char *name;           /* owned */
    char dtype[16];       /* safetensors spelling: F64, F32, F16, BF16 (others only in the dump) */
    int64_t shape[MAX_DIMS];
    int ndim;
    const uint8_t *data;  /* into the dump's bytes, or owned_data */
    size_t nbytes;
    uint8_t *owned_data;
} ts_tensor;

typedef struct ts_list {
    ts_tensor *t;
    int n, cap;
} ts_list;

/* A growable byte buffer; oom is sticky, checked once at the end. */
typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
    int oom;
} bytes;

static void bytes_put(bytes *b, const void *data, size_t n) {
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
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

static void bytes_printf(bytes *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bytes_printf(bytes *b, const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text) b->oom = 1;
    else bytes_put(b, text, (size_t)n);
}

static void put_le(bytes *b, uint64_t x, int n) {
    uint8_t p[8];
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(x >> (8 * i));
    bytes_put(b, p, (size_t)n);
}

static uint64_t get_le(const uint8_t *p, int n) {
    uint64_t x = 0;
    for (int i = n; i-- > 0;) x = x << 8 | p[i];
    return x;
}

static size_t dtype_size(const char *dt) {
    if (strcmp(dt, "F64") == 0) return 8;
    if (strcmp(dt, "F32") == 0) return 4;
    if (strcmp(dt, "F16") == 0 || strcmp(dt, "BF16") == 0) return 2;
    return 0;
}

static void list_free(ts_list *l) {
    for (int i = 0; i < l->n; i++) {
        free(l->t[i].name);
        free(l->t[i].owned_data);
    }
    free(l->t);
    *l = (ts_list){0};
}

/* The last of that name: a JSON header that repeats a key means its last entry, as
 * Python's json reads it. */
static ts_tensor *list_find(const ts_list *l, const char *name) {
    for (int i = l->n; i-- > 0;)
        if (strcmp(l->t[i].name, name) == 0) return &l->t[i];
    return NULL;
}

/* ---- the dump ------------------------------------------------------------------ */

static uint8_t *read_file(const char *path, size_t *size, char *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, ERRLEN, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    bytes b = {0};
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) bytes_put(&b, chunk, n);
    int bad = ferror(f) || b.oom;
    fclose(f);
    if (bad) {
        snprintf(err, ERRLEN, "%s: cannot read%s", path, b.oom ? ": out of memory" : "");
        free(b.p);
        return NULL;
    }
    *size = b.len;
    return b.p ? b.p : malloc(1);
}

/* A JSON array of sizes (whole numbers 0..2^53) into t's shape; -1 when it is not. */
static int read_shape(const cJSON *shape, ts_tensor *t) {
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > MAX_DIMS) return -1;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        double v = cJSON_GetNumberValue(d);
        if (!cJSON_IsNumber(d) || !(v >= 0 && v <= 9007199254740992.0) || v != floor(v)) return -1;
        t->shape[t->ndim++] = (int64_t)v;
    }
    return 0;
}

/* The dump's tensors, pointing into blob (which the caller keeps). */
static int read_dump(const char *path, const uint8_t *blob, size_t size, ts_list *out, char *err) {
    if (size < 8 || get_le(blob, 8) > size - 8) {
        snprintf(err, ERRLEN, "%s: not a safetensors file (header length beyond the file): give a gdnbench --dump file",
                 path);
        return -1;
    }
    size_t hlen = (size_t)get_le(blob, 8);
    const uint8_t *data = blob + 8 + hlen;
    size_t dsize = size - 8 - hlen;
    cJSON *h = cJSON_ParseWithLength((const char *)blob + 8, hlen);
    if (!cJSON_IsObject(h)) {
        snprintf(err, ERRLEN, "%s: the safetensors header is not a JSON object", path);
        cJSON_Delete(h);
        return -1;
    }
    int n = cJSON_GetArraySize(h);
    out->t = calloc((size_t)(n ? n : 1), sizeof *out->t);
    out->cap = n;
    if (!out->t) {
        snprintf(err, ERRLEN, "out of memory");
        cJSON_Delete(h);
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, h) {
        if (strcmp(e->string, "__metadata__") == 0) continue;
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
        const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
        double b0 = cJSON_GetNumberValue(cJSON_GetArrayItem(offs, 0));
        double b1 = cJSON_GetNumberValue(cJSON_GetArrayItem(offs, 1));
        ts_tensor *t = &out->t[out->n++];
        if (!cJSON_IsString(dt) || strlen(dt->valuestring) >= sizeof t->dtype || read_shape(shape, t) != 0 ||
            cJSON_GetArraySize(offs) != 2 || !(b0 >= 0 && b0 <= b1 && b1 <= (double)dsize) || b0 != floor(b0) ||
            b1 != floor(b1)) {
            snprintf(err, ERRLEN, "%s: tensor '%s' has a bad dtype, shape or data_offsets entry", path, e->string);
            cJSON_Delete(h);
            return -1;
        }
        t->name = strdup(e->string);
        snprintf(t->dtype, sizeof t->dtype, "%s", dt->valuestring);
        t->data = data + (size_t)b0;
        t->nbytes = (size_t)(b1 - b0);
        if (!t->name) {
            snprintf(err, ERRLEN, "out of memory");
            cJSON_Delete(h);
            return -1;
        }
    }
    cJSON_Delete(h);
    return 0;
}

/* ---- conversions --------------------------------------------------------------- */

static double half_to_double(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

static double float_bits_to_double(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* x to f16 bits, rounded once to nearest even; -1 when it is too large for f16. */
static int32_t double_to_half(double x) {
    int sign, e;
    unsigned bits;
    if (x == 0.0) {
        sign = signbit(x) != 0;
        e = 0;
        bits = 0;
    } else if (isinf(x)) {
        sign = x < 0;
        e = 31;
        bits = 0;
    } else if (isnan(x)) {
        sign = signbit(x) != 0;
        e = 31;
        bits = 512;
    } else {
        sign = x < 0;
        double f = frexp(fabs(x), &e) * 2.0; /* in [1, 2) */
        e--;
        if (e >= 16) return -1;
        if (e < -25) { /* below half the smallest subnormal: zero */
            f = 0;
            e = 0;
        } else if (e < -14) { /* subnormal */
            f = ldexp(f, 14 + e);
            e = 0;
        } else {
            e += 15;
            f -= 1.0;
        }
        f *= 1024.0; /* exact: f has 53 bits */
        bits = (unsigned)f;
        double rest = f - bits;
        if (rest > 0.5 || (rest == 0.5 && bits % 2 == 1)) {
            if (++bits == 1024) {
                bits = 0;
                if (++e == 31) return -1;
            }
        }
    }
    return (int32_t)(bits | (unsigned)e << 10 | (unsigned)sign << 15);
}

/* x to bf16 bits through f32; -1 when it is too large for f32. */
static int32_t double_to_bf16(double x) {
    float y = (float)x;
    if (isinf(y) && !isinf(x)) return -1;
    uint32_t u;
    memcpy(&u, &y, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (int32_t)((u >> 16) | 0x40); /* NaN stays quiet NaN */
    uint64_t r = (uint64_t)u + 0x7fff + (u >> 16 & 1);
    return (int32_t)(r >> 16 & 0xffff);
}

/* Every element of t as a double; NULL with err on a dtype this tool does not read. */
static double *to_doubles(const ts_tensor *t, size_t *count, const char *dump, char *err) {
    size_t es = dtype_size(t->dtype);
    if (!es) {
        snprintf(err, ERRLEN, "%s: tensor '%s' is %s; this tool converts F64, F32, F16 and BF16 only", dump, t->name,
                 t->dtype);
        return NULL;
    }
    if (t->nbytes % es) {
        snprintf(err, ERRLEN, "%s: tensor '%s' has %zu bytes, not a whole number of %s elements", dump, t->name,
                 t->nbytes, t->dtype);
        return NULL;
    }
    size_t n = t->nbytes / es;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        snprintf(err, ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t raw = get_le(t->data + i * es, (int)es);
        if (es == 8) memcpy(&v[i], &raw, 8);
        else if (es == 4) v[i] = float_bits_to_double((uint32_t)raw);
        else if (strcmp(t->dtype, "F16") == 0) v[i] = half_to_double((uint16_t)raw);
        else v[i] = float_bits_to_double((uint32_t)raw << 16);
    }
    *count = n;
    return v;
}

/* v[0..n) as dtype's little-endian bytes into out (n * size bytes). */
static int from_doubles(const char *dtype, const double *v, size_t n, uint8_t *out, const char *spec, char *err) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(dtype, "F32") == 0) {
            float f = (float)v[i];
            uint32_t u;
            memcpy(&u, &f, 4);
            for (int k = 0; k < 4; k++) out[4 * i + k] = (uint8_t)(u >> 8 * k);
            continue;
        }
        int32_t h = strcmp(dtype, "F16") == 0 ? double_to_half(v[i]) : double_to_bf16(v[i]);
        if (h < 0) {
            snprintf(err, ERRLEN, "%s: element %zu (%g) is too large for %s", spec, i, v[i], dtype);
            return -1;
        }
        out[2 * i] = (uint8_t)h;
        out[2 * i + 1] = (uint8_t)(h >> 8);
    }
    return 0;
}

/* ---- SPECs --------------------------------------------------------------------- */

static int parse_shape(const char *text, ts_tensor *t, const char *spec, char *err) {
    t->ndim = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0 || errno || (*end && *end != ',') || t->ndim == MAX_DIMS) {
            snprintf(err, ERRLEN, "%s: @%s is not a comma list of at most %d sizes >= 0", spec, text, MAX_DIMS);
            return -1;
        }
        t->shape[t->ndim++] = d;
        if (!*end) return 0;
        p = end + 1;
    }
}

/* The tensor SPEC asks for, from the dump. */
static int build_one(const char *spec, const ts_list *dump, const char *dump_path, int npz, ts_tensor *t, char *err) {
    char *copy = strdup(spec), *eq = copy ? strchr(copy, '=') : NULL;
    double *v = NULL;
    int rc = -1;
    if (!eq) {
        snprintf(err, ERRLEN, copy ? "SPEC '%s' is not NEW=OLD[:DTYPE][@SHAPE]" : "out of memory (%s)", spec);
        goto out;
    }
    *eq = 0;
    char *old = eq + 1, *at = strchr(old, '@'), *want = NULL;
    int reshape = at != NULL;
    if (at) {
        *at = 0;
        if (parse_shape(at + 1, t, spec, err) != 0) goto out;
    }
    char *colon = strchr(old, ':');
    if (colon) {
        *colon = 0;
        want = colon + 1;
        for (char *c = want; *c; c++)
            if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
    }
    const ts_tensor *src = list_find(dump, old);
    if (!src) {
        snprintf(err, ERRLEN, "%s: the dump %s has no tensor '%s'", spec, dump_path, old);
        goto out;
    }
    if (want && strlen(want) >= sizeof t->dtype) {
        snprintf(err, ERRLEN, "%s: unsupported target dtype %s (f32, f16, bf16)", spec, want);
        goto out;
    }
    snprintf(t->dtype, sizeof t->dtype, "%s", want ? want : src->dtype);
    if (npz && strcmp(t->dtype, "BF16") == 0) snprintf(t->dtype, sizeof t->dtype, "F32");
    size_t count;
    v = to_doubles(src, &count, dump_path, err);
    if (!v) goto out;
    if (reshape) {
        uint64_t keep = 1;
        for (int i = 0; i < t->ndim; i++) keep = keep > count ? keep : keep * (uint64_t)t->shape[i];
        if (keep < count) count = (size_t)keep;
    } else {
        t->ndim = src->ndim;
        memcpy(t->shape, src->shape, sizeof t->shape);
    }
    t->name = strdup(copy);
    if (!t->name) {
        snprintf(err, ERRLEN, "out of memory");
        goto out;
    }
    if (strcmp(t->dtype, src->dtype) == 0 && !reshape) {
        t->owned_data = malloc(src->nbytes ? src->nbytes : 1);
        if (t->owned_data) memcpy(t->owned_data, src->data, src->nbytes);
        t->nbytes = src->nbytes;
    } else {
        size_t es = strcmp(t->dtype, "F64") == 0 ? 0 : dtype_size(t->dtype);
        if (!es) {
            snprintf(err, ERRLEN, "%s: unsupported target dtype %s (f32, f16, bf16)", spec, t->dtype);
            goto out;
        }
        t->nbytes = count * es;
        t->owned_data = malloc(t->nbytes ? t->nbytes : 1);
        if (t->owned_data && from_doubles(t->dtype, v, count, t->owned_data, spec, err) != 0) goto out;
    }
    if (!t->owned_data) {
        snprintf(err, ERRLEN, "out of memory");
        goto out;
    }
    t->data = t->owned_data;
    rc = 0;
out:
    free(v);
    free(copy);
    return rc;
}

/* ---- safetensors --------------------------------------------------------------- */

/* s as a JSON string the way Python's json.dumps writes it (ensure_ascii: everything
 * outside space..~ as \uXXXX, lowercase hex, surrogate pairs); -1 on invalid UTF-8. */
static int put_json_string(bytes *b, const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    bytes_put(b, "\"", 1);
    while (*p) {
        uint32_t c = *p;
        int more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
        if (more < 0) return -1;
        if (more) c &= 0x3f >> more;
        for (int i = 1; i <= more; i++) {
            if ((p[i] & 0xc0) != 0x80) return -1;
            c = c << 6 | (p[i] & 0x3f);
        }
        p += more + 1;
        if (c == '"' || c == '\\') bytes_printf(b, "\\%c", (char)c);
        else if (c == '\n') bytes_put(b, "\\n", 2);
        else if (c == '\r') bytes_put(b, "\\r", 2);
        else if (c == '\t') bytes_put(b, "\\t", 2);
        else if (c == '\b') bytes_put(b, "\\b", 2);
        else if (c == '\f') bytes_put(b, "\\f", 2);
        else if (c >= 0x20 && c < 0x7f) {
            char ch = (char)c;
            bytes_put(b, &ch, 1);
        }
        else if (c < 0x10000) bytes_printf(b, "\\u%04x", (unsigned)c);
        else bytes_printf(b, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
    }
    bytes_put(b, "\"", 1);
    return 0;
}

static const ts_tensor *sort_base;

static int cmp_safetensors_order(const void *a, const void *b) {
    const ts_tensor *x = &sort_base[*(const int *)a], *y = &sort_base[*(const int *)b];
    size_t sx = dtype_size(x->dtype), sy = dtype_size(y->dtype);
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int safetensors_bytes(const ts_list *l, bytes *out, char *err) {
    int *order = malloc((size_t)(l->n ? l->n : 1) * sizeof *order);
    if (!order) {
        snprintf(err, ERRLEN, "out of memory");
        return -1;
    }
    for (int i = 0; i < l->n; i++) order[i] = i;
    sort_base = l->t;
    qsort(order, (size_t)l->n, sizeof *order, cmp_safetensors_order);
    bytes h = {0};
    bytes_put(&h, "{", 1);
    uint64_t offset = 0;
    for (int k = 0; k < l->n; k++) {
        const ts_tensor *t = &l->t[order[k]];
        if (k) bytes_put(&h, ",", 1);
        if (put_json_string(&h, t->name) != 0) {
            snprintf(err, ERRLEN, "tensor name '%s' is not valid UTF-8", t->name);
            free(h.p);
            free(order);
            return -1;
        }
        bytes_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", t->dtype);
        for (int d = 0; d < t->ndim; d++) bytes_printf(&h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        bytes_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                     (unsigned long long)(offset + t->nbytes));
        offset += t->nbytes;
    }
    bytes_put(&h, "}", 1);
    while (h.len % 8) bytes_put(&h, " ", 1);
    put_le(out, h.len, 8);
    bytes_put(out, h.p, h.len);
    for (int k = 0; k < l->n; k++) bytes_put(out, l->t[order[k]].data, l->t[order[k]].nbytes);
    free(h.p);
    free(order);
    return 0;
}

/* ---- npz ----------------------------------------------------------------------- */

static uint32_t crc32_of(const uint8_t *p, size_t n) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* The .npy file numpy.save writes for t (format 1.0, header padded to 64 bytes). */
static void npy_bytes(const ts_tensor *t, bytes *out) {
    const char *descr = strcmp(t->dtype, "F64") == 0 ? "<f8" : strcmp(t->dtype, "F16") == 0 ? "<f2" : "<f4";
    bytes head = {0};
    bytes_printf(&head, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int d = 0; d < t->ndim; d++) bytes_printf(&head, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    bytes_printf(&head, "%s), }", t->ndim == 1 ? "," : "");
    size_t pad = (64 - (10 + head.len + 1) % 64) % 64;
    for (size_t i = 0; i < pad; i++) bytes_put(&head, " ", 1);
    bytes_put(&head, "\n", 1);
    if (head.oom) out->oom = 1;
    bytes_put(out, "\x93NUMPY\x01\x00", 8);
    put_le(out, head.len, 2);
    bytes_put(out, head.p, head.len);
    bytes_put(out, t->data, t->nbytes);
    free(head.p);
}

/* A raw deflate stream of stored blocks (at most 65535 bytes each). */
static void deflate_stored(const uint8_t *p, size_t n, bytes *out) {
    size_t at = 0;
    do {
        size_t len = n - at < 65535 ? n - at : 65535;
        uint8_t final = at + len == n;
        bytes_put(out, &final, 1);
        put_le(out, len, 2);
        put_le(out, ~len & 0xffff, 2);
        bytes_put(out, p + at, len);
        at += len;
    } while (at < n);
}

enum { ZIP_DOS_DATE_1980_01_01 = 1 << 5 | 1, ZIP_VERSION_ZIP64 = 45, ZIP_UNIX = 3 };

/* The zip Python's zipfile writes for ZipFile(mode="w", allowZip64=True) and one
 * zf.open(NAME.npy, "w", force_zip64=True) per member, on a seekable file. */
static int npz_bytes(const ts_list *l, int deflate, bytes *out, char *err) {
    bytes central = {0};
    int rc = -1;
    if (l->n > 0xffff) {
        snprintf(err, ERRLEN, "%d tensors: more than a zip without zip64 end records holds", l->n);
        return -1;
    }
    for (int i = 0; i < l->n; i++) {
        const ts_tensor *t = &l->t[i];
        bytes npy = {0}, packed = {0};
        npy_bytes(t, &npy);
        if (deflate) deflate_stored(npy.p, npy.len, &packed);
        const bytes *body = deflate ? &packed : &npy;
        size_t namelen = strlen(t->name) + 4;
        int utf8 = 0;
        for (const char *c = t->name; *c; c++) utf8 |= (unsigned char)*c >= 0x80;
        uint64_t offset = out->len;
        if (npy.oom || packed.oom || npy.len > 0x7fffffff || body->len > 0x7fffffff || offset > 0x7fffffff) {
            snprintf(err, ERRLEN, "tensor '%s': %s", t->name,
                     npy.oom || packed.oom ? "out of memory" : "the zip would need zip64 sizes, which this tool does not write");
            free(npy.p);
            free(packed.p);
            goto out;
        }
        uint32_t crc = crc32_of(npy.p, npy.len);
        unsigned flags = utf8 ? 0x800 : 0, method = deflate ? 8 : 0;
        /* local header: sizes in the zip64 extra field, 0xffffffff in their places */
        put_le(out, 0x04034b50, 4);
        put_le(out, ZIP_VERSION_ZIP64, 2);
        put_le(out, flags, 2);
        put_le(out, method, 2);
        put_le(out, 0, 2);
        put_le(out, ZIP_DOS_DATE_1980_01_01, 2);
        put_le(out, crc, 4);
        put_le(out, 0xffffffffu, 4);
        put_le(out, 0xffffffffu, 4);
        put_le(out, namelen, 2);
        put_le(out, 20, 2);
        bytes_put(out, t->name, namelen - 4);
        bytes_put(out, ".npy", 4);
        put_le(out, 1, 2);
        put_le(out, 16, 2);
        put_le(out, npy.len, 8);
        put_le(out, body->len, 8);
        bytes_put(out, body->p, body->len);
        /* central directory entry: small sizes in place, no extra field */
        put_le(&central, 0x02014b50, 4);
        put_le(&central, ZIP_VERSION_ZIP64, 1);
        put_le(&central, ZIP_UNIX, 1);
        put_le(&central, ZIP_VERSION_ZIP64, 2);
        put_le(&central, flags, 2);
        put_le(&central, method, 2);
        put_le(&central, 0, 2);
        put_le(&central, ZIP_DOS_DATE_1980_01_01, 2);
        put_le(&central, crc, 4);
        put_le(&central, body->len, 4);
        put_le(&central, npy.len, 4);
        put_le(&central, namelen, 2);
        put_le(&central, 0, 2); /* extra */
        put_le(&central, 0, 2); /* comment */
        put_le(&central, 0, 2); /* disk */
        put_le(&central, 0, 2); /* internal attributes */
        put_le(&central, 0600u << 16, 4);
        put_le(&central, offset, 4);
        bytes_put(&central, t->name, namelen - 4);
        bytes_put(&central, ".npy", 4);
        free(npy.p);
        free(packed.p);
    }
    uint64_t dir_offset = out->len;
    if (dir_offset > 0x7fffffff || central.oom) {
        snprintf(err, ERRLEN, central.oom ? "out of memory" : "the zip would need zip64 offsets, which this tool does not write");
        goto out;
    }
    bytes_put(out, central.p, central.len);
    put_le(out, 0x06054b50, 4);
    put_le(out, 0, 2);
    put_le(out, 0, 2);
    put_le(out, (uint64_t)l->n, 2);
    put_le(out, (uint64_t)l->n, 2);
    put_le(out, central.len, 4);
    put_le(out, dir_offset, 4);
    put_le(out, 0, 2);
    rc = 0;
out:
    free(central.p);
    return rc;
}

/* ---- the subcommand ------------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int run(int argc, char **argv, char *err) {
    const char *dump_path = argv[0], *out_path = argv[1];
    int deflate = 0, npz = ends_with(out_path, ".npz"), rc = -1;
    size_t size = 0;
    ts_list dump = {0}, made = {0};
    bytes out = {0};
    uint8_t *blob = read_file(dump_path, &size, err);
    if (!blob || read_dump(dump_path, blob, size, &dump, err) != 0) goto out;
    for (int i = 2; i < argc; i++) deflate |= strcmp(argv[i], "--deflate") == 0;
    made.t = calloc((size_t)argc, sizeof *made.t);
    if (!made.t) {
        snprintf(err, ERRLEN, "out of memory");
        goto out;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--deflate") == 0) continue;
        ts_tensor t = {0};
        if (build_one(argv[i], &dump, dump_path, npz, &t, err) != 0) {
            free(t.name);
            free(t.owned_data);
            goto out;
        }
        ts_tensor *same = list_find(&made, t.name);
        if (same) { /* a dict: the first place, the last value */
            free(same->name);
            free(same->owned_data);
            *same = t;
        } else {
            made.t[made.n++] = t;
        }
    }
    if ((npz ? npz_bytes(&made, deflate, &out, err) : safetensors_bytes(&made, &out, err)) != 0) goto out;
    if (out.oom) {
        snprintf(err, ERRLEN, "out of memory");
        goto out;
    }
    FILE *f = fopen(out_path, "wb");
    int ok = f && fwrite(out.p, 1, out.len, f) == out.len;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) {
        snprintf(err, ERRLEN, "%s: cannot write: %s", out_path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    list_free(&dump);
    list_free(&made);
    free(blob);
    free(out.p);
    return rc;
}

int torch_style_main(int argc, char **argv) {
    char err[ERRLEN] = "";
    if (argc < 3) {
        fprintf(stderr, "gdnbench-testdata torch-style: give DUMP.safetensors OUT [--deflate] "
                        "NEW=OLD[:DTYPE][@SHAPE]...\n");
        return 2;
    }
    if (run(argc, argv, err) != 0) {
        fprintf(stderr, "gdnbench-testdata torch-style: %s\n", err);
        return 2;
    }
    return 0;
}
