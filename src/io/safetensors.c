/* safetensors.c — safetensors reader (validating every header field against the file)
 * and writer.  The header is parsed with cJSON; data is read straight into tensors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "io/safetensors.h"

static const struct {
    const char *name;
    dtype dt;
} st_dtypes[] = {
    {"BF16", DT_BF16}, {"F16", DT_F16}, {"F32", DT_F32}, {"F64", DT_F64}, {"I32", DT_I32}, {"U32", DT_U32},
};

int safetensors_dtype_from_string(const char *s, dtype *out) {
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (strcmp(s, st_dtypes[i].name) == 0) {
            *out = st_dtypes[i].dt;
            return 0;
        }
    return -1;
}

const char *safetensors_dtype_string(dtype dt) {
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (st_dtypes[i].dt == dt) return st_dtypes[i].name;
    return NULL;
}

typedef struct st_spec {
    const char *name;
    dtype dt;
    int ndim;
    int64_t shape[TENSOR_MAX_DIMS];
    uint64_t begin, end;
} st_spec;

/* "shape": at most TENSOR_MAX_DIMS non-negative integers, into sp. */
static int entry_shape(const io_src *src, const char *nm, const cJSON *shape, st_spec *sp, char *err,
                       size_t errlen) {
    const char *f = src->name;
    int nd = cJSON_GetArraySize(shape);
    if (nd > TENSOR_MAX_DIMS) {
        io_err(err, errlen, "%s: tensor '%s': %d dims, at most %d are supported: reshape it before saving", f, nm,
               nd, TENSOR_MAX_DIMS);
        return -1;
    }
    sp->ndim = nd;
    int i = 0;
    for (const cJSON *d = shape->child; d; d = d->next, i++) {
        uint64_t v;
        if (io_json_uint(d, &v) != 0) {
            io_err(err, errlen, "%s: tensor '%s': shape entry %d is not a non-negative integer: the file is corrupt",
                   f, nm, i);
            return -1;
        }
        sp->shape[i] = (int64_t)v;
    }
    return 0;
}

/* "data_offsets": [begin, end) inside the data section, exactly the bytes sp's dtype
 * and shape need. */
static int entry_extent(const io_src *src, const char *nm, const cJSON *offs, uint64_t data_size, st_spec *sp,
                        char *err, size_t errlen) {
    const char *f = src->name;
    if (cJSON_GetArraySize(offs) != 2 || io_json_uint(offs->child, &sp->begin) != 0 ||
        io_json_uint(offs->child->next, &sp->end) != 0) {
        io_err(err, errlen,
               "%s: tensor '%s': data_offsets must be two non-negative integers [begin, end]: the file is corrupt",
               f, nm);
        return -1;
    }
    if (sp->begin > sp->end || sp->end > data_size) {
        io_err(err, errlen,
               "%s: tensor '%s': data_offsets [%llu, %llu] lie outside the data section (%llu bytes): the file is "
               "truncated or corrupt; re-export it",
               f, nm, (unsigned long long)sp->begin, (unsigned long long)sp->end, (unsigned long long)data_size);
        return -1;
    }
    uint64_t need;
    char s[128];
    io_shape_str(sp->ndim, sp->shape, s, sizeof s);
    if (io_shape_bytes(sp->dt, sp->ndim, sp->shape, &need) != 0) {
        io_err(err, errlen, "%s: tensor '%s': shape %s is too large to address: the file is corrupt", f, nm, s);
        return -1;
    }
    if (need != sp->end - sp->begin) {
        io_err(err, errlen,
               "%s: tensor '%s': shape %s of %s needs %llu bytes but data_offsets hold %llu: the header is "
               "inconsistent; re-export the file",
               f, nm, s, safetensors_dtype_string(sp->dt), (unsigned long long)need,
               (unsigned long long)(sp->end - sp->begin));
        return -1;
    }
    return 0;
}

/* Validates one tensor entry of the header into sp.  Messages name the file and tensor. */
static int parse_entry(const io_src *src, const cJSON *e, uint64_t data_size, st_spec *sp, char *err,
                       size_t errlen) {
    const char *f = src->name, *nm = e->string;
    size_t nlen = strlen(nm);
    if (nlen == 0 || nlen >= TENSOR_NAME_MAX) {
        io_err(err, errlen, "%s: tensor '%.60s': name must be 1..%d bytes: rename it when exporting", f, nm,
               TENSOR_NAME_MAX - 1);
        return -1;
    }
    if (!cJSON_IsObject(e)) {
        io_err(err, errlen, "%s: tensor '%s': header entry is not an object: the file is corrupt; re-export it", f,
               nm);
        return -1;
    }
    sp->name = nm;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs)) {
        io_err(err, errlen,
               "%s: tensor '%s': header entry needs \"dtype\" (string), \"shape\" and \"data_offsets\" (arrays): "
               "the file is corrupt; re-export it",
               f, nm);
        return -1;
    }
    if (safetensors_dtype_from_string(dt->valuestring, &sp->dt) != 0) {
        io_err(err, errlen,
               "%s: tensor '%s': dtype %.32s is not supported (gdnbench reads BF16, F16, F32, F64, I32, U32): "
               "convert the tensor before saving (e.g. t.to(torch.float32))",
               f, nm, dt->valuestring);
        return -1;
    }
    if (entry_shape(src, nm, shape, sp, err, errlen) != 0) return -1;
    return entry_extent(src, nm, offs, data_size, sp, err, errlen);
}

static int cmp_spec_begin(const void *a, const void *b) {
    const st_spec *x = *(st_spec *const *)a, *y = *(st_spec *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

static int parse_metadata(const io_src *src, const cJSON *m, io_set *set, char *err, size_t errlen) {
    if (!cJSON_IsObject(m)) {
        io_err(err, errlen, "%s: __metadata__ is not an object of strings: the file is corrupt", src->name);
        return -1;
    }
    for (const cJSON *kv = m->child; kv; kv = kv->next) {
        if (!cJSON_IsString(kv)) {
            io_err(err, errlen,
                   "%s: __metadata__ entry '%.60s' is not a string (safetensors metadata is string -> string): "
                   "store it as a string",
                   src->name, kv->string);
            return -1;
        }
        if (io_set_add_meta(set, kv->string, kv->valuestring) != 0) {
            io_err(err, errlen, "%s: out of memory reading __metadata__", src->name);
            return -1;
        }
    }
    return 0;
}

/* Reads the 8-byte length field and the JSON header after it into a malloc'd,
 * NUL-terminated *hdr of *hlen bytes. */
static int read_header_text(const io_src *src, char **hdr, uint64_t *hlen_out, char *err, size_t errlen) {
    const char *f = src->name;
    uint8_t lenbuf[8];
    if (src->size < 8 || io_src_read(src, 0, lenbuf, 8) != 0) {
        io_err(err, errlen,
               "%s: %llu bytes is too short for safetensors (an 8-byte header length comes first): the file is "
               "truncated",
               f, (unsigned long long)src->size);
        return -1;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | lenbuf[i];
    if (hlen > src->size - 8) {
        io_err(err, errlen,
               "%s: header length %llu is beyond the end of the file (%llu bytes after the length field): the file "
               "is truncated or not safetensors",
               f, (unsigned long long)hlen, (unsigned long long)(src->size - 8));
        return -1;
    }
    if (hlen > SAFETENSORS_MAX_HEADER || hlen < 2) {
        io_err(err, errlen, "%s: header length %llu is implausible (2 .. 100 MB): not a safetensors file?", f,
               (unsigned long long)hlen);
        return -1;
    }
    char *text = malloc((size_t)hlen + 1);
    if (!text || io_src_read(src, 8, text, (size_t)hlen) != 0) {
        io_err(err, errlen, "%s: cannot read the %llu-byte header: %s", f, (unsigned long long)hlen,
               text ? "read error" : "out of memory");
        free(text);
        return -1;
    }
    text[hlen] = 0;
    *hdr = text;
    *hlen_out = hlen;
    return 0;
}

/* The header as one JSON object and nothing after it but white space. */
static cJSON *parse_header_json(const io_src *src, const char *hdr, uint64_t hlen, char *err, size_t errlen) {
    const char *f = src->name;
    long at;
    int trailing;
    cJSON *root = io_json_parse_whole(hdr, (size_t)hlen, &at, &trailing);
    if (!root && trailing) {
        io_err(err, errlen, "%s: unexpected bytes after the JSON header (at byte %ld): the file is corrupt", f, at);
        return NULL;
    }
    if (!root) {
        io_err(err, errlen, "%s: the JSON header is malformed (near byte %ld of %llu): the file is corrupt; re-export it",
               f, at, (unsigned long long)hlen);
        return NULL;
    }
    if (!cJSON_IsObject(root)) {
        io_err(err, errlen, "%s: the JSON header is not an object: not a safetensors file?", f);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* The number of tensor entries (every key but __metadata__); -1 when a key repeats. */
static int count_entries(const io_src *src, const cJSON *root, char *err, size_t errlen) {
    int n = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        for (const cJSON *o = root->child; o != e; o = o->next)
            if (strcmp(o->string, e->string) == 0) {
                io_err(err, errlen, "%s: tensor '%.60s' appears twice in the header: the file is corrupt", src->name,
                       e->string);
                return -1;
            }
        if (strcmp(e->string, "__metadata__") != 0) n++;
    }
    return n;
}

/* Every entry of the header in file order: __metadata__ into set, the n tensor
 * entries into specs[0..n). */
static int parse_entries(const io_src *src, const cJSON *root, uint64_t data_size, st_spec *specs, io_set *set,
                         char *err, size_t errlen) {
    int k = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        if (strcmp(e->string, "__metadata__") == 0) {
            if (parse_metadata(src, e, set, err, errlen) != 0) return -1;
            continue;
        }
        if (parse_entry(src, e, data_size, &specs[k], err, errlen) != 0) return -1;
        k++;
    }
    return 0;
}

/* No two non-empty tensors may share a byte of the data section. */
static int check_no_overlap(const io_src *src, st_spec *specs, int n, char *err, size_t errlen) {
    st_spec **order = calloc((size_t)(n ? n : 1), sizeof *order);
    if (!order) {
        io_err(err, errlen, "%s: out of memory for %d tensor headers", src->name, n);
        return -1;
    }
    for (int i = 0; i < n; i++) order[i] = &specs[i];
    qsort(order, (size_t)n, sizeof *order, cmp_spec_begin);
    int rc = 0;
    const st_spec *prev = NULL;
    for (int i = 0; i < n; i++) {
        if (order[i]->begin == order[i]->end) continue; /* empty tensors occupy nothing */
        if (prev && prev->end > order[i]->begin) {
            io_err(err, errlen,
                   "%s: tensor '%s': data_offsets [%llu, %llu] overlap tensor '%s' [%llu, %llu]: the header is "
                   "corrupt; re-export the file",
                   src->name, order[i]->name, (unsigned long long)order[i]->begin, (unsigned long long)order[i]->end,
                   prev->name, (unsigned long long)prev->begin, (unsigned long long)prev->end);
            rc = -1;
            break;
        }
        prev = order[i];
    }
    free(order);
    return rc;
}

/* Reads each tensor's bytes (the data section starts at data_start) into set. */
static int read_tensors(const io_src *src, uint64_t data_start, const st_spec *specs, int n, io_set *set, char *err,
                        size_t errlen) {
    const char *f = src->name;
    for (int i = 0; i < n; i++) {
        const st_spec *sp = &specs[i];
        tensor *t = tensor_new(sp->name, sp->dt, sp->ndim, sp->shape);
        if (!t) {
            io_err(err, errlen, "%s: tensor '%s': out of memory for %llu bytes", f, sp->name,
                   (unsigned long long)(sp->end - sp->begin));
            return -1;
        }
        if (io_src_read(src, data_start + sp->begin, t->data, (size_t)(sp->end - sp->begin)) != 0) {
            io_err(err, errlen, "%s: tensor '%s': read error (did the file change while reading?)", f, sp->name);
            tensor_free(t);
            return -1;
        }
        if (io_set_add(set, t, IO_ROLE_UNKNOWN) != 0) {
            io_err(err, errlen, "%s: out of memory", f);
            return -1;
        }
    }
    return 0;
}

/* Layout: u64 header length (little-endian), the JSON header, the data section. */
int safetensors_parse(const io_src *src, io_set *out, char *err, size_t errlen) {
    char *hdr = NULL;
    uint64_t hlen;
    if (read_header_text(src, &hdr, &hlen, err, errlen) != 0) return -1;
    uint64_t data_size = src->size - 8 - hlen;
    int rc = -1;
    io_set set = {0};
    st_spec *specs = NULL;
    cJSON *root = parse_header_json(src, hdr, hlen, err, errlen);
    if (!root) goto done;
    int n = count_entries(src, root, err, errlen);
    if (n < 0) goto done;
    specs = calloc((size_t)(n ? n : 1), sizeof *specs);
    if (!specs) {
        io_err(err, errlen, "%s: out of memory for %d tensor headers", src->name, n);
        goto done;
    }
    if (parse_entries(src, root, data_size, specs, &set, err, errlen) != 0 ||
        check_no_overlap(src, specs, n, err, errlen) != 0 ||
        read_tensors(src, 8 + hlen, specs, n, &set, err, errlen) != 0)
        goto done;
    if (io_set_move(out, &set) != 0) {
        io_err(err, errlen, "%s: out of memory", src->name);
        goto done;
    }
    rc = 0;
done:
    io_set_clear(&set);
    free(specs);
    cJSON_Delete(root);
    free(hdr);
    return rc;
}

int safetensors_parse_mem(const void *buf, size_t len, const char *name, io_set *out, char *err, size_t errlen) {
    io_src s;
    io_src_init_mem(&s, name, buf, len);
    return safetensors_parse(&s, out, err, errlen);
}

int safetensors_read(const char *path, io_set *out, char *err, size_t errlen) {
    io_src s;
    if (io_src_open_file(&s, path, err, errlen) != 0) return -1;
    int rc = safetensors_parse(&s, out, err, errlen);
    io_src_close(&s);
    return rc;
}

/* Checks what a writer is given: names usable as JSON keys and unique, dtypes known. */
static int check_tensors_for_write(tensor *const *ts, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        const tensor *t = ts[i];
        if (!t || !t->name[0] || strcmp(t->name, "__metadata__") == 0 || !safetensors_dtype_string(t->dtype) ||
            t->ndim < 0 || t->ndim > TENSOR_MAX_DIMS || (!t->data && tensor_nbytes(t) > 0)) {
            io_err(err, errlen, "cannot write tensor %d ('%s'): it needs a name, a supported dtype and data", i,
                   t ? t->name : "(null)");
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(ts[j]->name, t->name) == 0) {
                io_err(err, errlen, "cannot write tensor '%s' twice into one file", t->name);
                return -1;
            }
    }
    return 0;
}

/* The 8-byte length and the JSON header, padded so the data starts 8-byte aligned
 * (readers that mmap the file like aligned data). */
static int build_header(tensor *const *ts, int n, const io_meta *meta, int nmeta, io_buf *out, char *err,
                        size_t errlen) {
    if (check_tensors_for_write(ts, n, err, errlen) != 0) return -1;
    io_buf h = {0};
    io_buf_append(&h, "{", 1);
    int first = 1;
    if (nmeta > 0) {
        io_buf_json_string(&h, "__metadata__");
        io_buf_append(&h, ":{", 2);
        for (int i = 0; i < nmeta; i++) {
            if (i) io_buf_append(&h, ",", 1);
            io_buf_json_string(&h, meta[i].key);
            io_buf_append(&h, ":", 1);
            io_buf_json_string(&h, meta[i].value);
        }
        io_buf_append(&h, "}", 1);
        first = 0;
    }
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        const tensor *t = ts[i];
        uint64_t nb = tensor_nbytes(t);
        if (!first) io_buf_append(&h, ",", 1);
        first = 0;
        io_buf_json_string(&h, t->name);
        io_buf_printf(&h, ":{\"dtype\":\"%s\",\"shape\":[", safetensors_dtype_string(t->dtype));
        for (int d = 0; d < t->ndim; d++) io_buf_printf(&h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        io_buf_printf(&h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                      (unsigned long long)(off + nb));
        off += nb;
    }
    io_buf_append(&h, "}", 1);
    while ((h.len + 8) % 8 != 0) io_buf_append(&h, " ", 1);
    uint8_t lenbytes[8];
    for (int i = 0; i < 8; i++) lenbytes[i] = (uint8_t)((uint64_t)h.len >> (8 * i));
    io_buf_append(out, lenbytes, 8);
    io_buf_append(out, h.p, h.len);
    int oom = h.oom || out->oom;
    io_buf_free(&h);
    if (oom) {
        io_buf_free(out);
        io_err(err, errlen, "out of memory building the header of %d tensors", n);
        return -1;
    }
    return 0;
}

int safetensors_serialize(tensor *const *ts, int n, const io_meta *meta, int nmeta, uint8_t **buf, size_t *len,
                          char *err, size_t errlen) {
    io_buf out = {0};
    if (build_header(ts, n, meta, nmeta, &out, err, errlen) != 0) return -1;
    for (int i = 0; i < n; i++) io_buf_append(&out, ts[i]->data, tensor_nbytes(ts[i]));
    if (out.oom) {
        io_buf_free(&out);
        io_err(err, errlen, "out of memory serialising %d tensors", n);
        return -1;
    }
    *buf = out.p;
    *len = out.len;
    return 0;
}

int safetensors_write(const char *path, tensor *const *ts, int n, const io_meta *meta, int nmeta, char *err,
                      size_t errlen) {
    io_buf hdr = {0};
    char e[256];
    if (build_header(ts, n, meta, nmeta, &hdr, e, sizeof e) != 0) {
        io_err(err, errlen, "%s: %s", path, e);
        return -1;
    }
    /* data goes straight from the tensors to the file: no second copy of a large dump */
    io_writer w;
    int rc = io_writer_open(&w, path, err, errlen);
    if (rc == 0) {
        io_writer_put(&w, hdr.p, hdr.len);
        for (int i = 0; i < n; i++) io_writer_put(&w, ts[i]->data, tensor_nbytes(ts[i]));
        rc = io_writer_commit(&w, err, errlen);
    }
    io_buf_free(&hdr);
    return rc;
}
