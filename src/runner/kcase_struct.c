/* kcase_struct.c — the bytes of a `"struct": {field: value}` buffer, laid out as the
 * compiled kernel lays out its struct (the pipeline reflection's MTLStructType:
 * member names, offsets, MTLDataTypes, array strides), so no layout rule is
 * computed here: float3 is where the compiler put it, packed_float3 too, a bool's
 * padding before an int64_t as well.  Fields left out are zero.  A nested struct is
 * a JSON object of its fields and an array of structs an array of such objects,
 * placed by the nested members' reflection (offsets from their struct's start, an
 * array's stride): the same tree on both devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mtl_types.h"
#include "runner/kcase_bind.h"

/* The scalar of an MTLDataType and its vector width (1..4); -1 when not a scalar or
 * vector of one of the case dtypes. */
static int scalar_of(unsigned long t, kc_dtype *dt, int *width) {
    static const struct {
        unsigned long base;
        kc_dtype dt;
    } s[] = {{MTL_DATA_TYPE_FLOAT, KC_F32}, {MTL_DATA_TYPE_HALF, KC_F16},    {MTL_DATA_TYPE_INT, KC_I32},
             {MTL_DATA_TYPE_UINT, KC_U32},  {MTL_DATA_TYPE_SHORT, KC_I16},   {MTL_DATA_TYPE_USHORT, KC_U16},
             {MTL_DATA_TYPE_CHAR, KC_I8},   {MTL_DATA_TYPE_UCHAR, KC_U8},    {MTL_DATA_TYPE_BOOL, KC_BOOL},
             {MTL_DATA_TYPE_LONG, KC_I64},  {MTL_DATA_TYPE_ULONG, KC_U64},   {MTL_DATA_TYPE_BFLOAT, KC_BF16}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (t >= s[i].base && t < s[i].base + 4) {
            *dt = s[i].dt;
            *width = (int)(t - s[i].base) + 1;
            return 0;
        }
    return -1;
}

/* The names of the members of struct member `parent` (-1: the top) as a list. */
static void field_list(const mtl_argument *a, int parent, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; i < a->nfields; i++) {
        if (a->fields[i].parent != parent) continue;
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", l ? ", " : "", a->fields[i].name);
    }
}

/* Where a field goes: the case, the buffer, the struct's reflection, the bytes. */
typedef struct placer {
    const kc_case *c;
    const kc_buffer *b;
    const mtl_argument *a;
    unsigned char *bytes;
    size_t size;
    char *err;
    size_t errlen;
} placer;

/* Numbers f of the scalar, vector or array member m at byte `base` (the start of the
 * struct m is in); path names f.  0, or -1 with err. */
static int put_values(const placer *pl, const kc_field *f, const mtl_struct_field *m, size_t base, const char *path) {
    kc_dtype dt;
    int width;
    if (m->nested || scalar_of(m->data_type, &dt, &width) < 0) {
        snprintf(pl->err, pl->errlen, "%s: %s: a field of that type (MTLDataType %lu) cannot be given as numbers: %s",
                 pl->c->path, path, m->data_type,
                 m->nested && m->count ? "give an array of objects, one per element, of its fields by name"
                 : m->nested           ? "give an object of its fields by name"
                                       : "give the buffer as a \"value\" array");
        return -1;
    }
    size_t es = kc_dtype_size(dt);
    unsigned long elems = m->count ? m->count : 1;
    size_t want = (size_t)elems * (size_t)width;
    if (f->kind != KC_FIELD_VALUES || (size_t)f->value.n != want || (want > 1 && !f->value.is_array)) {
        snprintf(pl->err, pl->errlen, "%s: %s: %d value%s given, the field holds %zu (%s%s%s): give %s", pl->c->path,
                 path, f->value.n, f->value.n == 1 ? "" : "s", want, kc_dtype_name(dt), width > 1 ? " vector" : "",
                 m->count ? " array" : "", want > 1 ? "an array of that many" : "one number");
        return -1;
    }
    size_t stride = m->count ? m->stride : es * (size_t)width;
    for (size_t j = 0; j < want; j++) {
        double v = f->value.v[j];
        size_t at = base + m->offset + (j / (size_t)width) * stride + (j % (size_t)width) * es;
        if (!kc_value_fits(dt, v) || at + es > pl->size) {
            snprintf(pl->err, pl->errlen, "%s: %s: %g does not fit %s: give a value of the field's type", pl->c->path,
                     path, v, kc_dtype_name(dt));
            return -1;
        }
        kc_store(dt, pl->bytes + at, 0, v);
    }
    return 0;
}

static int put_fields(const placer *pl, const kc_field *fs, int n, int parent, size_t base, const char *path,
                      const char *struct_name);

/* Field f into member m (index mi) of the struct at byte `base`. */
static int put_field(const placer *pl, const kc_field *f, int mi, size_t base, const char *path) {
    const mtl_struct_field *m = &pl->a->fields[mi];
    if (!m->nested || f->kind == KC_FIELD_VALUES) return put_values(pl, f, m, base, path);
    int has_layout = mi + 1 < pl->a->nfields && pl->a->fields[mi + 1].parent == mi;
    if (!has_layout) {
        snprintf(pl->err, pl->errlen, "%s: %s: the device gives no layout for this nested %s: give the buffer's bytes "
                 "as a \"value\" array", pl->c->path, path, m->count ? "array of structs" : "struct");
        return -1;
    }
    if ((f->kind == KC_FIELD_STRUCTS) != (m->count > 0)) {
        snprintf(pl->err, pl->errlen, "%s: %s: the field is %s: give %s", pl->c->path, path,
                 m->count ? "an array of structs" : "a struct",
                 m->count ? "an array of objects, one per element" : "one object of its fields by name");
        return -1;
    }
    if (f->kind == KC_FIELD_STRUCT) return put_fields(pl, f->sub, f->nsub, mi, base + m->offset, path, m->name);
    if ((unsigned long)f->nsub > m->count) {
        snprintf(pl->err, pl->errlen, "%s: %s: %d elements given, the array holds %lu: give at most that many (those "
                 "left out are zero)", pl->c->path, path, f->nsub, m->count);
        return -1;
    }
    char sub[320];
    for (int e = 0; e < f->nsub; e++) {
        snprintf(sub, sizeof sub, "%.280s[%d]", path, e);
        if (put_fields(pl, f->sub[e].sub, f->sub[e].nsub, mi, base + m->offset + (size_t)e * m->stride, sub, m->name) < 0)
            return -1;
    }
    return 0;
}

/* Fields fs[0..n) of the struct whose members have parent `parent`, at byte base. */
static int put_fields(const placer *pl, const kc_field *fs, int n, int parent, size_t base, const char *path,
                      const char *struct_name) {
    char sub[320], names[512];
    for (int k = 0; k < n; k++) {
        snprintf(sub, sizeof sub, "%.250s.%s", path, fs[k].name);
        int mi = -1;
        for (int j = 0; j < pl->a->nfields && mi < 0; j++)
            if (pl->a->fields[j].parent == parent && strcmp(pl->a->fields[j].name, fs[k].name) == 0) mi = j;
        if (mi < 0) {
            field_list(pl->a, parent, names, sizeof names);
            snprintf(pl->err, pl->errlen, "%s: %s: %s '%s''s struct has no field '%s': its fields are %s", pl->c->path,
                     sub, parent < 0 ? "parameter" : "member", struct_name, fs[k].name, names);
            return -1;
        }
        if (put_field(pl, &fs[k], mi, base, sub) < 0) return -1;
    }
    return 0;
}

int kc_struct_contents(const kc_case *c, int i, const mtl_argument *a, kc_tensor *out, char *err, size_t errlen) {
    const kc_buffer *b = &c->bufs[i];
    memset(out, 0, sizeof *out);
    if (!a || a->struct_size == 0 || a->nfields < 0) {
        snprintf(err, errlen, "%s: buffers.%s.struct: the device gives no struct layout for parameter '%s' (%s): give "
                 "its bytes as a \"value\" array", c->path, b->name, a ? a->name : b->name,
                 a && a->nfields < 0 ? "more than 64 members, nested ones included"
                                     : "not a struct defined in the kernel's source");
        return -1;
    }
    unsigned char *bytes = calloc(1, a->struct_size);
    if (!bytes) return snprintf(err, errlen, "%s: buffers.%s: out of memory", c->path, b->name), -1;
    char path[160];
    snprintf(path, sizeof path, "buffers.%.64s.struct", b->name);
    placer pl = {c, b, a, bytes, a->struct_size, err, errlen};
    if (put_fields(&pl, b->fields, b->nfields, -1, 0, path, a->name) < 0) {
        free(bytes);
        return -1;
    }
    out->dtype = KC_U8;
    out->ndim = 1;
    out->shape[0] = (int64_t)a->struct_size;
    out->numel = (int64_t)a->struct_size;
    out->nbytes = a->struct_size;
    out->data = bytes;
    return 0;
}
