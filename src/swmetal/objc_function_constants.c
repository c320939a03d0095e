/* objc_function_constants.c — MTLFunction.functionConstantsDictionary on the software
 * device: the function constants its library's source declares, as MTLFunctionConstant
 * objects (name, type, index, required) in a read-only NSDictionary keyed by name.
 *
 * A host reads the types from here before it sets values (setConstantValue:type:
 * atIndex:), as it does from Metal.  The declarations are the front end's, for the
 * whole library (Metal lists those the function uses; a constant no kernel uses is
 * harmless to list); a library of C entries declares none. */
#include <stdlib.h>
#include <string.h>

#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

static Class constant_class, dictionary_class;

typedef struct sw_fc_decl {
    sw_obj base;
    id name;           /* NSString */
    NSUInteger type;   /* MTLDataType */
    NSUInteger index;
    BOOL required;
} sw_fc_decl;

static id decl_name(id self, SEL cmd) { return ((sw_fc_decl *)self)->name; }
static NSUInteger decl_type(id self, SEL cmd) { return ((sw_fc_decl *)self)->type; }
static NSUInteger decl_index(id self, SEL cmd) { return ((sw_fc_decl *)self)->index; }
static BOOL decl_required(id self, SEL cmd) { return ((sw_fc_decl *)self)->required; }

static void decl_dealloc(id self, SEL cmd) {
    sw_release(((sw_fc_decl *)self)->name);
    sw_obj_free(self);
}

static void decl_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(decl_name), "@@:");
    sw_method_add(cls, "type", SW_IMP(decl_type), "Q@:");
    sw_method_add(cls, "index", SW_IMP(decl_index), "Q@:");
    sw_method_add(cls, "required", SW_IMP(decl_required), "C@:");
    sw_method_add(cls, "dealloc", SW_IMP(decl_dealloc), "v@:");
}

/* A read-only dictionary of name -> MTLFunctionConstant: keys and values as arrays. */
typedef struct sw_dictionary {
    sw_obj base;
    id keys, values;   /* NSArrays, retained */
} sw_dictionary;

static NSUInteger dict_count(id self, SEL cmd) {
    id values = ((sw_dictionary *)self)->values;
    return MSG0(NSUInteger, values, "count");
}
static id dict_all_keys(id self, SEL cmd) { return ((sw_dictionary *)self)->keys; }
static id dict_all_values(id self, SEL cmd) { return ((sw_dictionary *)self)->values; }

static id dict_object_for_key(id self, SEL cmd, id key) {
    sw_dictionary *d = (sw_dictionary *)self;
    const char *k = sw_string_utf8(key);
    NSUInteger n = MSG0(NSUInteger, d->keys, "count");
    for (NSUInteger i = 0; k && i < n; i++)
        if (strcmp(sw_string_utf8(MSG1(id, d->keys, "objectAtIndex:", NSUInteger, i)), k) == 0)
            return MSG1(id, d->values, "objectAtIndex:", NSUInteger, i);
    return nil;
}

static void dict_dealloc(id self, SEL cmd) {
    sw_release(((sw_dictionary *)self)->keys);
    sw_release(((sw_dictionary *)self)->values);
    sw_obj_free(self);
}

static void dict_methods(Class cls) {
    sw_method_add(cls, "count", SW_IMP(dict_count), "Q@:");
    sw_method_add(cls, "allKeys", SW_IMP(dict_all_keys), "@@:");
    sw_method_add(cls, "allValues", SW_IMP(dict_all_values), "@@:");
    sw_method_add(cls, "objectForKey:", SW_IMP(dict_object_for_key), "@@:@");
    sw_method_add(cls, "dealloc", SW_IMP(dict_dealloc), "v@:");
}

/* SW_FC_* -> MTLDataType (0: none). */
static NSUInteger metal_type(int fc_type) {
    switch (fc_type) {
    case SW_FC_BOOL: return MTL_DATA_TYPE_BOOL;
    case SW_FC_INT: return MTL_DATA_TYPE_INT;
    case SW_FC_UINT: return MTL_DATA_TYPE_UINT;
    case SW_FC_FLOAT: return MTL_DATA_TYPE_FLOAT;
    case SW_FC_HALF: return MTL_DATA_TYPE_HALF;
    case SW_FC_SHORT: return MTL_DATA_TYPE_SHORT;
    case SW_FC_USHORT: return MTL_DATA_TYPE_USHORT;
    default: return 0;
    }
}

/* -[MTLFunction functionConstantsDictionary]: autoreleased, nil when out of memory. */
id sw_function_constants_dictionary(id self, SEL cmd) {
    const sw_mtl_library *l = (const sw_mtl_library *)((sw_mtl_function *)self)->library;
    int n = l && l->compiled ? sw_library_constant_count(l->compiled) : 0;
    id *keys = calloc((size_t)(n > 0 ? n : 1), sizeof *keys), *values = calloc((size_t)(n > 0 ? n : 1), sizeof *values);
    int made = 0;
    for (; keys && values && made < n; made++) {
        int index = 0, type = 0, required = 0;
        const char *name = NULL;
        sw_library_constant_info(l->compiled, made, &index, &type, &name, &required);
        sw_fc_decl *c = (sw_fc_decl *)sw_obj_new(constant_class);
        if (!c) break;
        c->name = sw_string_new(name ? name : "");
        c->type = metal_type(type);
        c->index = (NSUInteger)index;
        c->required = (BOOL)required;
        keys[made] = sw_retain(c->name);
        values[made] = (id)c;
    }
    sw_dictionary *d = made == n ? (sw_dictionary *)sw_obj_new(dictionary_class) : NULL;
    if (d) {
        d->keys = sw_retain(sw_array_new(keys, (NSUInteger)n));
        d->values = sw_retain(sw_array_new(values, (NSUInteger)n));
    }
    for (int i = 0; i < made; i++) sw_release(keys[i]), sw_release(values[i]);
    free(keys);
    free(values);
    if (d && (!d->keys || !d->values)) {
        sw_release((id)d);
        return nil;
    }
    return d ? sw_autorelease((id)d) : nil;
}

void sw_objc_register_function_constants(void) {
    Class root = sw_root_class();
    constant_class = sw_class_register("SWMTLFunctionConstant", root, sizeof(sw_fc_decl), decl_methods);
    dictionary_class = sw_class_register("SWDictionary", root, sizeof(sw_dictionary), dict_methods);
}
