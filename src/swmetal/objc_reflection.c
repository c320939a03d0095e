/* objc_reflection.c — pipeline reflection on the software device:
 * -[MTLDevice newComputePipelineStateWithFunction:options:reflection:error:] with an
 * MTLComputePipelineReflection whose `arguments` are MTLArgument objects (name,
 * type, index, access, isActive, bufferDataType) read from the compiled kernel's
 * bindings, as Metal answers them — so a host binds buffers by the kernel's
 * parameter names the same way on a GPU and here (gdnbench kernel cases).
 *
 * Thread-position attributes are not arguments (Metal lists buffers, threadgroup
 * memory, textures and samplers).  bufferDataType is the element's MTLDataType for
 * scalars and vectors of the scalar types below, MTLDataTypeStruct for any other
 * named type, MTLDataTypeNone when unknown.  A buffer of a struct defined in the
 * source also answers bufferDataSize and bufferStructType (objc_struct_type.c). */
#include <stdlib.h>
#include <string.h>

#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

static Class argument_class, reflection_class;

typedef struct sw_argument {
    sw_obj base;
    id name;                /* NSString */
    NSUInteger type;        /* MTLArgumentType: 0 buffer, 1 threadgroup memory */
    NSUInteger index;
    NSUInteger access;      /* MTLArgumentAccess: 0 read only, 1 read write */
    NSUInteger data_type;   /* MTLDataType of the element */
    NSUInteger data_size;   /* a measured struct's sizeof, else 0 */
    id struct_type;         /* MTLStructType of a measured struct, else nil */
} sw_argument;

typedef struct sw_reflection {
    sw_obj base;
    id arguments;           /* NSArray of sw_argument, retained */
} sw_reflection;

static id arg_name(id self, SEL cmd) { return ((sw_argument *)self)->name; }
static NSUInteger arg_type(id self, SEL cmd) { return ((sw_argument *)self)->type; }
static NSUInteger arg_index(id self, SEL cmd) { return ((sw_argument *)self)->index; }
static NSUInteger arg_access(id self, SEL cmd) { return ((sw_argument *)self)->access; }
static BOOL arg_active(id self, SEL cmd) { return YES; }
static NSUInteger arg_data_type(id self, SEL cmd) { return ((sw_argument *)self)->data_type; }
static NSUInteger arg_data_size(id self, SEL cmd) { return ((sw_argument *)self)->data_size; }
static id arg_struct_type(id self, SEL cmd) { return ((sw_argument *)self)->struct_type; }

static void arg_dealloc(id self, SEL cmd) {
    sw_release(((sw_argument *)self)->name);
    sw_release(((sw_argument *)self)->struct_type);
    sw_obj_free(self);
}

static void argument_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(arg_name), "@@:");
    sw_method_add(cls, "type", SW_IMP(arg_type), "Q@:");
    sw_method_add(cls, "index", SW_IMP(arg_index), "Q@:");
    sw_method_add(cls, "access", SW_IMP(arg_access), "Q@:");
    sw_method_add(cls, "isActive", SW_IMP(arg_active), "C@:");
    sw_method_add(cls, "bufferDataType", SW_IMP(arg_data_type), "Q@:");
    sw_method_add(cls, "bufferDataSize", SW_IMP(arg_data_size), "Q@:");
    sw_method_add(cls, "bufferStructType", SW_IMP(arg_struct_type), "@@:");
    sw_method_add(cls, "threadgroupMemoryDataType", SW_IMP(arg_data_type), "Q@:");
    sw_method_add(cls, "dealloc", SW_IMP(arg_dealloc), "v@:");
}

static id refl_arguments(id self, SEL cmd) { return ((sw_reflection *)self)->arguments; }

static void refl_dealloc(id self, SEL cmd) {
    sw_release(((sw_reflection *)self)->arguments);
    sw_obj_free(self);
}

static void reflection_methods(Class cls) {
    sw_method_add(cls, "arguments", SW_IMP(refl_arguments), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(refl_dealloc), "v@:");
}

/* MTLDataType of an MSL element type: Apple's values for the scalar types and their
 * 2/3/4-vectors (a vector is its scalar's value + width - 1). */
static NSUInteger data_type_of(const char *e) {
    static const struct {
        const char *name;
        NSUInteger type;
    } scalars[] = {{"float", MTL_DATA_TYPE_FLOAT}, {"half", MTL_DATA_TYPE_HALF},     {"int", MTL_DATA_TYPE_INT},
                   {"uint", MTL_DATA_TYPE_UINT},   {"short", MTL_DATA_TYPE_SHORT},   {"ushort", MTL_DATA_TYPE_USHORT},
                   {"char", MTL_DATA_TYPE_CHAR},   {"uchar", MTL_DATA_TYPE_UCHAR},   {"bool", MTL_DATA_TYPE_BOOL},
                   {"long", MTL_DATA_TYPE_LONG},   {"ulong", MTL_DATA_TYPE_ULONG},   {"bfloat", MTL_DATA_TYPE_BFLOAT}};
    if (!strcmp(e, "?")) return MTL_DATA_TYPE_NONE;
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        size_t n = strlen(scalars[i].name);
        if (strncmp(e, scalars[i].name, n) != 0) continue;
        if (!e[n]) return scalars[i].type;
        if (e[n] >= '2' && e[n] <= '4' && !e[n + 1]) return scalars[i].type + (NSUInteger)(e[n] - '1');
    }
    return MTL_DATA_TYPE_STRUCT;
}

static id argument_new(const sw_binding *b) {
    sw_argument *a = (sw_argument *)sw_obj_new(argument_class);
    if (!a) return nil;
    swmtl_binding_type t;
    swmtl_binding_describe(b, &t);
    a->name = sw_string_new(b->param ? b->param : "");
    a->type = b->kind == SW_BIND_THREADGROUP ? MTL_ARGUMENT_TYPE_THREADGROUP_MEMORY : MTL_ARGUMENT_TYPE_BUFFER;
    a->index = (NSUInteger)b->index;
    a->access = t.read_only ? 0 : 1;
    a->data_type = data_type_of(t.element);
    if (b->kind == SW_BIND_BUFFER && b->layout) {
        a->data_type = MTL_DATA_TYPE_STRUCT;
        a->data_size = (NSUInteger)b->layout->size;
        a->struct_type = sw_struct_type_new(b->layout);
    }
    if (!a->name || (b->kind == SW_BIND_BUFFER && b->layout && !a->struct_type)) {
        sw_release((id)a);
        return nil;
    }
    return (id)a;
}

/* An autoreleased reflection of the pipeline's kernel, nil when out of memory. */
static id reflection_new(id pipeline) {
    const sw_mtl_function *f = (const sw_mtl_function *)((sw_mtl_pipeline *)pipeline)->function;
    const sw_kernel_info *k = f->kernel.info;
    int n = 0, ok = 1;
    id *args = calloc((size_t)(k && k->nbindings > 0 ? k->nbindings : 1), sizeof *args);
    for (int i = 0; args && k && i < k->nbindings && ok; i++) {
        if (k->bindings[i].kind == SW_BIND_ATTR) continue;
        if ((args[n] = argument_new(&k->bindings[i])) != nil) n++;
        else ok = 0;
    }
    sw_reflection *r = args && ok ? (sw_reflection *)sw_obj_new(reflection_class) : NULL;
    if (r && !(r->arguments = sw_retain(sw_array_new(args, (NSUInteger)n)))) {
        sw_release((id)r);
        r = NULL;
    }
    for (int i = 0; i < n; i++) sw_release(args[i]); /* the array holds its own references */
    free(args);
    return r ? sw_autorelease((id)r) : nil;
}

/* MTLPipelineOption bits ask for argument info; the reflection is made whenever the
 * caller passes somewhere to put it. */
static id device_new_pipeline_reflected(id self, SEL cmd, id function, NSUInteger options, id *reflection, id *error) {
    id p = MSG2(id, self, "newComputePipelineStateWithFunction:error:", id, function, id *, error);
    if (reflection) *reflection = p ? reflection_new(p) : nil;
    if (p && reflection && !*reflection) {
        sw_release(p);
        sw_error_out(error, sw_error_new("SWMTLErrorDomain", 1, "out of memory making the pipeline's reflection"));
        return nil;
    }
    return p;
}

void sw_reflection_device_methods(Class device_class) {
    sw_method_add(device_class, "newComputePipelineStateWithFunction:options:reflection:error:",
                  SW_IMP(device_new_pipeline_reflected), "@@:@Q^@^@");
}

void sw_objc_register_reflection(void) {
    Class root = sw_root_class();
    argument_class = sw_class_register("SWMTLArgument", root, sizeof(sw_argument), argument_methods);
    sw_objc_register_struct_types();
    reflection_class = sw_class_register("SWMTLComputePipelineReflection", root, sizeof(sw_reflection),
                                         reflection_methods);
}
