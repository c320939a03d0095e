/* mtl_reflect.c — a compute pipeline's arguments from Metal's own reflection
 * (MTLComputePipelineReflection.arguments: MTLArgument name, type, index, access,
 * isActive, bufferDataType), so a host binds buffers by the kernel's parameter names
 * at the indices the compiled function declares.  The software device answers the
 * same selectors (src/swmetal/objc_reflection.c): nothing here knows which device
 * it talks to. */
#include <stdio.h>
#include <string.h>

#include "metal/mtl.h"

/* MTLArgumentType values (Apple's). */
enum { MTL_ARGUMENT_TYPE_BUFFER = 0, MTL_ARGUMENT_TYPE_THREADGROUP_MEMORY = 1 };

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
    }
    return k;
}
