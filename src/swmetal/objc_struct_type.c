/* objc_struct_type.c — MTLStructType, MTLStructMember and MTLArrayType on the
 * software device: what -[MTLArgument bufferStructType] answers for a buffer of a
 * struct defined in the kernel's source, from the layout table the compiler
 * measured (sw_abi.h sw_struct_layout; msl_emit_struct.c).  The selectors are
 * Metal's (members, name, offset, dataType, arrayType, structType, elementType,
 * arrayLength, stride, elementStructType), so a host reads a struct's layout the
 * same way on both devices (src/metal/mtl_reflect.c); a member of a struct type, or
 * an array of them, answers structType / elementStructType with that struct's. */
#include <stdlib.h>

#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

static Class struct_class, member_class, array_class;

typedef struct sw_struct_type {
    sw_obj base;
    id members;             /* NSArray of sw_struct_member_obj, retained */
} sw_struct_type;

typedef struct sw_struct_member_obj {
    sw_obj base;
    id name;                /* NSString */
    NSUInteger offset, data_type;
    id array;               /* sw_array_type when data_type is MTLDataTypeArray, else nil */
    id nested;              /* sw_struct_type of a struct member with a table, else nil */
} sw_struct_member_obj;

typedef struct sw_array_type {
    sw_obj base;
    NSUInteger element_type, length, stride;
    id element_struct;      /* sw_struct_type of an array of structs with a table, else nil */
} sw_array_type;

static id st_members(id self, SEL cmd) { return ((sw_struct_type *)self)->members; }
static id st_none(id self, SEL cmd) { return nil; }
static void st_dealloc(id self, SEL cmd) {
    sw_release(((sw_struct_type *)self)->members);
    sw_obj_free(self);
}

static id mb_name(id self, SEL cmd) { return ((sw_struct_member_obj *)self)->name; }
static NSUInteger mb_offset(id self, SEL cmd) { return ((sw_struct_member_obj *)self)->offset; }
static NSUInteger mb_type(id self, SEL cmd) { return ((sw_struct_member_obj *)self)->data_type; }
static id mb_array(id self, SEL cmd) { return ((sw_struct_member_obj *)self)->array; }
static id mb_struct(id self, SEL cmd) { return ((sw_struct_member_obj *)self)->nested; }
static void mb_dealloc(id self, SEL cmd) {
    sw_release(((sw_struct_member_obj *)self)->name);
    sw_release(((sw_struct_member_obj *)self)->array);
    sw_release(((sw_struct_member_obj *)self)->nested);
    sw_obj_free(self);
}

static NSUInteger ar_element(id self, SEL cmd) { return ((sw_array_type *)self)->element_type; }
static NSUInteger ar_length(id self, SEL cmd) { return ((sw_array_type *)self)->length; }
static NSUInteger ar_stride(id self, SEL cmd) { return ((sw_array_type *)self)->stride; }
static id ar_struct(id self, SEL cmd) { return ((sw_array_type *)self)->element_struct; }
static void ar_dealloc(id self, SEL cmd) {
    sw_release(((sw_array_type *)self)->element_struct);
    sw_obj_free(self);
}

static void struct_methods(Class cls) {
    sw_method_add(cls, "members", SW_IMP(st_members), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(st_dealloc), "v@:");
}

static void member_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(mb_name), "@@:");
    sw_method_add(cls, "offset", SW_IMP(mb_offset), "Q@:");
    sw_method_add(cls, "dataType", SW_IMP(mb_type), "Q@:");
    sw_method_add(cls, "arrayType", SW_IMP(mb_array), "@@:");
    sw_method_add(cls, "structType", SW_IMP(mb_struct), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(mb_dealloc), "v@:");
}

static void array_methods(Class cls) {
    sw_method_add(cls, "elementType", SW_IMP(ar_element), "Q@:");
    sw_method_add(cls, "arrayLength", SW_IMP(ar_length), "Q@:");
    sw_method_add(cls, "stride", SW_IMP(ar_stride), "Q@:");
    sw_method_add(cls, "elementStructType", SW_IMP(ar_struct), "@@:");
    sw_method_add(cls, "elementArrayType", SW_IMP(st_none), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(ar_dealloc), "v@:");
}

static id member_new(const sw_struct_member *m) {
    sw_struct_member_obj *o = (sw_struct_member_obj *)sw_obj_new(member_class);
    if (!o) return nil;
    o->name = sw_string_new(m->name);
    o->offset = (NSUInteger)m->offset;
    o->data_type = m->data_type;
    int ok = o->name != nil;
    /* a nested struct's own type (the front end bounds the nesting) */
    id nested = ok && m->nested ? sw_struct_type_new(m->nested) : nil;
    if (m->nested && !nested) ok = 0;
    if (ok && m->data_type == MTL_DATA_TYPE_ARRAY) {
        sw_array_type *a = (sw_array_type *)sw_obj_new(array_class);
        if (a) {
            a->element_type = m->element_type;
            a->length = (NSUInteger)m->array_length;
            a->stride = (NSUInteger)m->stride;
            if (m->element_type == MTL_DATA_TYPE_STRUCT) a->element_struct = nested, nested = nil;
        }
        o->array = (id)a;
        ok = a != NULL;
    }
    if (ok && m->data_type == MTL_DATA_TYPE_STRUCT) o->nested = nested, nested = nil;
    sw_release(nested);
    if (!ok) {
        sw_release((id)o);
        return nil;
    }
    return (id)o;
}

id sw_struct_type_new(const sw_struct_layout *l) {
    id *members = calloc((size_t)(l->nmembers > 0 ? l->nmembers : 1), sizeof *members);
    int n = 0;
    while (members && n < l->nmembers && (members[n] = member_new(&l->members[n])) != nil) n++;
    sw_struct_type *t = members && n == l->nmembers ? (sw_struct_type *)sw_obj_new(struct_class) : NULL;
    if (t && !(t->members = sw_retain(sw_array_new(members, (NSUInteger)n)))) {
        sw_release((id)t);
        t = NULL;
    }
    for (int i = 0; i < n; i++) sw_release(members[i]); /* the array holds its own references */
    free(members);
    return (id)t;
}

void sw_objc_register_struct_types(void) {
    Class root = sw_root_class();
    struct_class = sw_class_register("SWMTLStructType", root, sizeof(sw_struct_type), struct_methods);
    member_class = sw_class_register("SWMTLStructMember", root, sizeof(sw_struct_member_obj), member_methods);
    array_class = sw_class_register("SWMTLArrayType", root, sizeof(sw_array_type), array_methods);
}
