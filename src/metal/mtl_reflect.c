/* mtl_reflect.c — a compute pipeline's arguments from Metal's own reflection
 * (MTLComputePipelineReflection.arguments: MTLArgument name, type, index, access,
 * isActive, bufferDataType; a struct buffer's bufferStructType members: name, offset,
 * dataType, arrayType, and a nested struct's through structType or an array's
 * elementStructType), so a host binds buffers by the kernel's parameter names
 * at the indices the compiled function declares.  The software device answers the
 * same selectors (src/swmetal/objc_reflection.c): nothing here knows which device
 * it talks to. */
#include <stdio.h>
#include <string.h>

#include "metal/mtl.h"

/* The members of MTLStructType st into m's list, as members of the struct member
 * `parent` (-1: the buffer's struct); their nested structs' members after each.
 * -1 when they do not fit (m->nfields is then -1). */
static int read_members(id st, int parent, int depth, mtl_argument *m) {
    id members = st ? MSG0(id, st, "members") : NULL;
    NSUInteger n = members ? MSG0(NSUInteger, members, "count") : 0;
    for (NSUInteger i = 0; i < n; i++) {
        if (m->nfields >= MTL_MAX_STRUCT_FIELDS || depth > 8) {
            m->nfields = -1;
            return -1;
        }
        id x = MSG1(id, members, "objectAtIndex:", NSUInteger, i);
        int at = m->nfields++;
        mtl_struct_field *f = &m->fields[at];
        memset(f, 0, sizeof *f);
        f->parent = parent;
        id name = MSG0(id, x, "name");
        const char *s = name ? MSG0(const char *, name, "UTF8String") : NULL;
        snprintf(f->name, sizeof f->name, "%s", s ? s : "");
        f->offset = (unsigned long)MSG0(NSUInteger, x, "offset");
        f->data_type = (unsigned long)MSG0(NSUInteger, x, "dataType");
        id sub = NULL;
        if (f->data_type == MTL_DATA_TYPE_ARRAY) {
            id a = MSG0(id, x, "arrayType");
            f->data_type = a ? (unsigned long)MSG0(NSUInteger, a, "elementType") : 0;
            f->count = a ? (unsigned long)MSG0(NSUInteger, a, "arrayLength") : 0;
            f->stride = a ? (unsigned long)MSG0(NSUInteger, a, "stride") : 0;
            if (a && f->data_type == MTL_DATA_TYPE_STRUCT) sub = MSG0(id, a, "elementStructType");
        } else if (f->data_type == MTL_DATA_TYPE_STRUCT) {
            sub = MSG0(id, x, "structType");
        }
        /* an array of arrays stays unknown (data_type 2): not laid out */
        f->nested = f->data_type == MTL_DATA_TYPE_STRUCT || f->data_type == MTL_DATA_TYPE_ARRAY;
        if (sub && read_members(sub, at, depth + 1, m) < 0) return -1;
    }
    return 0;
}

/* A struct buffer's members, from its MTLStructType (nil: no layout). */
static void read_struct(id a, mtl_argument *m) {
    id st = MSG0(id, a, "bufferStructType");
    if (!st || !MSG0(id, st, "members")) return;
    m->struct_size = (unsigned long)MSG0(NSUInteger, a, "bufferDataSize");
    read_members(st, -1, 0, m);
}

int mtl_reflect_arguments(id reflection, mtl_argument *out, int max) {
    id all = reflection ? MSG0(id, reflection, "arguments") : NULL;
    NSUInteger n = all ? MSG0(NSUInteger, all, "count") : 0;
    int k = 0;
    for (NSUInteger i = 0; i < n && k < max; i++) {
        id a = MSG1(id, all, "objectAtIndex:", NSUInteger, i);
        if (!a || !MSG0(BOOL, a, "isActive")) continue;
        NSUInteger type = MSG0(NSUInteger, a, "type");
        if (type != MTL_ARGUMENT_TYPE_BUFFER && type != MTL_ARGUMENT_TYPE_THREADGROUP_MEMORY) continue;
        mtl_argument *m = &out[k++];
        memset(m, 0, sizeof *m);
        id name = MSG0(id, a, "name");
        const char *s = name ? MSG0(const char *, name, "UTF8String") : NULL;
        snprintf(m->name, sizeof m->name, "%s", s ? s : "");
        m->kind = type == MTL_ARGUMENT_TYPE_BUFFER ? MTL_ARG_BUFFER : MTL_ARG_THREADGROUP;
        m->index = (int)MSG0(NSUInteger, a, "index");
        m->read_only = MSG0(NSUInteger, a, "access") == 0;
        m->data_type = (unsigned long)(type == MTL_ARGUMENT_TYPE_BUFFER ? MSG0(NSUInteger, a, "bufferDataType") : 0);
        if (m->kind == MTL_ARG_BUFFER && m->data_type == MTL_DATA_TYPE_STRUCT) read_struct(a, m);
    }
    return k;
}
