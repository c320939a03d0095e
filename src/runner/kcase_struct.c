/* kcase_struct.c — the bytes of a `"struct": {field: value}` buffer, laid out as the
 * compiled kernel lays out its struct (the pipeline reflection's MTLStructType:
 * member names, offsets, MTLDataTypes, array strides), so no layout rule is
 * computed here: float3 is where the compiler put it, packed_float3 too, a bool's
 * padding before an int64_t as well.  Fields left out are zero. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/kcase_bind.h"

/* The scalar of an MTLDataType and its vector width (1..4); -1 when not a scalar or
 * vector of one of the case dtypes. */
static int scalar_of(unsigned long t, kc_dtype *dt, int *width) {
    static const struct {
        unsigned long base;
        kc_dtype dt;
    } s[] = {{3, KC_F32},  {16, KC_F16}, {29, KC_I32}, {33, KC_U32}, {37, KC_I16}, {41, KC_U16},
             {45, KC_I8},  {49, KC_U8},  {53, KC_BOOL}, {81, KC_I64}, {85, KC_U64}, {121, KC_BF16}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (t >= s[i].base && t < s[i].base + 4) {
            *dt = s[i].dt;
            *width = (int)(t - s[i].base) + 1;
            return 0;
        }
    return -1;
}

static void field_list(const mtl_argument *a, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; i < a->nfields; i++) {
        size_t l = strlen(out);
        snprintf(out + l, n - l, "%s%s", i ? ", " : "", a->fields[i].name);
    }
}

/* Writes field f's values into bytes; 0, or -1 with err. */
static int put_field(const kc_case *c, const kc_buffer *b, const kc_field *f, const mtl_struct_field *m,
                     unsigned char *bytes, size_t size, char *err, size_t errlen) {
    kc_dtype dt;
    int width;
    if (m->nested || scalar_of(m->data_type, &dt, &width) < 0) {
        snprintf(err, errlen, "%s: buffers.%s.struct.%s: a field of that type (MTLDataType %lu: a nested struct or "
                 "an array of them) is not laid out by this build: give the buffer as a \"value\" array",
                 c->path, b->name, f->name, m->data_type);
        return -1;
    }
    size_t es = kc_dtype_size(dt);
    unsigned long elems = m->count ? m->count : 1;
    size_t want = (size_t)elems * (size_t)width;
    if ((size_t)f->value.n != want || (want > 1 && !f->value.is_array)) {
        snprintf(err, errlen, "%s: buffers.%s.struct.%s: %d value%s given, the field holds %zu (%s%s%s): give %s",
                 c->path, b->name, f->name, f->value.n, f->value.n == 1 ? "" : "s", want, kc_dtype_name(dt),
                 width > 1 ? " vector" : "", m->count ? " array" : "", want > 1 ? "an array of that many" : "one number");
        return -1;
    }
    size_t stride = m->count ? m->stride : es * (size_t)width;
    for (size_t j = 0; j < want; j++) {
        double v = f->value.v[j];
        size_t at = m->offset + (j / (size_t)width) * stride + (j % (size_t)width) * es;
        if (!kc_value_fits(dt, v) || at + es > size) {
            snprintf(err, errlen, "%s: buffers.%s.struct.%s: %g does not fit %s: give a value of the field's type",
                     c->path, b->name, f->name, v, kc_dtype_name(dt));
            return -1;
        }
        kc_store(dt, bytes + at, 0, v);
    }
    return 0;
}

int kc_struct_contents(const kc_case *c, int i, const mtl_argument *a, kc_tensor *out, char *err, size_t errlen) {
    const kc_buffer *b = &c->bufs[i];
    char names[512];
    memset(out, 0, sizeof *out);
    if (!a || a->struct_size == 0 || a->nfields < 0) {
        snprintf(err, errlen, "%s: buffers.%s.struct: the device gives no struct layout for parameter '%s' (%s): give "
                 "its bytes as a \"value\" array", c->path, b->name, a ? a->name : b->name,
                 a && a->nfields < 0 ? "more than 32 members" : "not a struct defined in the kernel's source");
        return -1;
    }
    unsigned char *bytes = calloc(1, a->struct_size);
    if (!bytes) return snprintf(err, errlen, "%s: buffers.%s: out of memory", c->path, b->name), -1;
    for (int k = 0; k < b->nfields; k++) {
        const mtl_struct_field *m = NULL;
        for (int j = 0; j < a->nfields && !m; j++)
            if (strcmp(a->fields[j].name, b->fields[k].name) == 0) m = &a->fields[j];
        if (!m) {
            field_list(a, names, sizeof names);
            snprintf(err, errlen, "%s: buffers.%s.struct.%s: parameter '%s''s struct has no field '%s': its fields "
                     "are %s", c->path, b->name, b->fields[k].name, a->name, b->fields[k].name, names);
            free(bytes);
            return -1;
        }
        if (put_field(c, b, &b->fields[k], m, bytes, a->struct_size, err, errlen) < 0) {
            free(bytes);
            return -1;
        }
    }
    out->dtype = KC_U8;
    out->ndim = 1;
    out->shape[0] = (int64_t)a->struct_size;
    out->numel = (int64_t)a->struct_size;
    out->nbytes = a->struct_size;
    out->data = bytes;
    return 0;
}
