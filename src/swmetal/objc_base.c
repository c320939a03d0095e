/* objc_base.c — root class, reference counting, autorelease pools, NSString and
 * NSError for the software Metal device (see objc_base.h). */
#include "swmetal/objc_base.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SW_MAX_CLASSES 48

typedef struct class_size {
    Class cls;
    size_t size;
} class_size;

static class_size class_sizes[SW_MAX_CLASSES];
static int nclasses;

static Class root_class, string_class, error_class;

/* Instances alive now: a test can see that every autoreleased object was released
 * when the pool it went to drained. */
static _Atomic long live_objects;

long sw_objc_live_objects(void) { return atomic_load(&live_objects); }

Class sw_root_class(void) { return root_class; }
Class sw_string_class(void) { return string_class; }

/* Apple's runtime has Foundation's classes; GNU libobjc alone does not.  Only take a
 * Foundation name when nobody owns it. */
static const char *free_name(const char *ns_name, const char *sw_name) {
    return objc_getClass(ns_name) ? sw_name : ns_name;
}

void sw_method_add(Class cls, const char *sel, IMP imp, const char *types) {
    class_addMethod(cls, sel_registerName(sel), imp, types);
}

void sw_class_method_add(Class cls, const char *sel, IMP imp, const char *types) {
    class_addMethod(object_getClass((id)cls), sel_registerName(sel), imp, types);
}

Class sw_class_register(const char *name, Class super, size_t instance_size, void (*add_methods)(Class cls)) {
    Class cls = objc_allocateClassPair(super, name, 0);
    if (!cls) {
        fprintf(stderr, "gdnbench: cannot register Objective-C class %s (name taken?)\n", name);
        abort();
    }
    if (!super) class_addIvar(cls, "isa", sizeof(Class), (unsigned char)__builtin_ctz(sizeof(Class)), "#");
    if (add_methods) add_methods(cls);
    objc_registerClassPair(cls);
    if (nclasses < SW_MAX_CLASSES) class_sizes[nclasses++] = (class_size){cls, instance_size};
    return cls;
}

static size_t instance_size(Class cls) {
    for (Class c = cls; c; c = class_getSuperclass(c))
        for (int i = 0; i < nclasses; i++)
            if (class_sizes[i].cls == c) return class_sizes[i].size;
    return sizeof(sw_obj);
}

int sw_is_kind(id obj, Class cls) {
    if (!obj) return 0;
    for (Class c = object_getClass(obj); c; c = class_getSuperclass(c))
        if (c == cls) return 1;
    return 0;
}

/* ---- reference counting ---- */

id sw_obj_new(Class cls) {
    sw_obj *o = calloc(1, instance_size(cls));
    if (!o) return nil;
    o->isa = cls;
    atomic_init(&o->refs, 1);
    atomic_fetch_add(&live_objects, 1);
    return (id)o;
}

void sw_obj_free(id obj) {
    if (obj) atomic_fetch_sub(&live_objects, 1);
    free(obj);
}

id sw_retain(id obj) {
    if (obj) atomic_fetch_add(&((sw_obj *)obj)->refs, 1);
    return obj;
}

void sw_release(id obj) {
    if (!obj) return;
    long before = atomic_fetch_sub(&((sw_obj *)obj)->refs, 1);
    if (before == 1) MSG0(void, obj, "dealloc");
}

long sw_retain_count(id obj) { return obj ? atomic_load(&((sw_obj *)obj)->refs) : 0; }

static id root_alloc(id self, SEL cmd) { return sw_obj_new((Class)self); }
static id root_new(id self, SEL cmd) { return MSG0(id, sw_obj_new((Class)self), "init"); }
static id root_init(id self, SEL cmd) { return self; }
static id root_retain(id self, SEL cmd) { return sw_retain(self); }
static void root_release(id self, SEL cmd) { sw_release(self); }
static id root_autorelease(id self, SEL cmd) { return sw_autorelease(self); }
static NSUInteger root_retain_count(id self, SEL cmd) { return (NSUInteger)sw_retain_count(self); }
static void root_dealloc(id self, SEL cmd) { sw_obj_free(self); }
static Class root_class_m(id self, SEL cmd) { return object_getClass(self); }
/* Apple's runtime sends +initialize to a class before its first message, and only
 * root classes loaded from an image (NSObject) come with one: without this, the
 * first message to any software-device object is an unrecognized selector there.
 * GNU libobjc calls it only when present.  A class method, so on the metaclass. */
static void root_initialize(id self, SEL cmd) {}

static void root_methods(Class cls) {
    sw_class_method_add(cls, "initialize", SW_IMP(root_initialize), "v@:");
    sw_class_method_add(cls, "alloc", SW_IMP(root_alloc), "@@:");
    sw_class_method_add(cls, "new", SW_IMP(root_new), "@@:");
    sw_method_add(cls, "init", SW_IMP(root_init), "@@:");
    sw_method_add(cls, "retain", SW_IMP(root_retain), "@@:");
    sw_method_add(cls, "release", SW_IMP(root_release), "v@:");
    sw_method_add(cls, "autorelease", SW_IMP(root_autorelease), "@@:");
    sw_method_add(cls, "retainCount", SW_IMP(root_retain_count), "Q@:");
    sw_method_add(cls, "dealloc", SW_IMP(root_dealloc), "v@:");
    sw_method_add(cls, "class", SW_IMP(root_class_m), "#@:");
}

/* ---- autorelease pools ----
 *
 * One pool stack per thread, and it is the one the host pushes with
 * [[NSAutoreleasePool alloc] init] (src/metal/mtl.c) on every platform:
 *   - Apple: Foundation's NSAutoreleasePool is objc4's per-thread pool stack (so is
 *     @autoreleasepool).  Our -autorelease joins that stack through
 *     _objc_rootAutorelease, the entry objc4 exports for root classes that are not
 *     NSObject (NSObject's own -autorelease calls it; objc4's tests and Swift's
 *     SwiftObject root class do the same).  When the pool pops, objc4 sends our
 *     objects -release, since a custom root class always gets the message.  A pool
 *     class of our own would be a second stack that nobody drains.
 *   - GNU libobjc has no pools: we provide NSAutoreleasePool itself, under that
 *     name (registration aborts if something else owns it, rather than autorelease
 *     into a pool the host never pushes). */

#if defined(__APPLE__)

id _objc_rootAutorelease(id obj); /* libobjc.A.dylib, objc4's NSObject.mm */

id sw_autorelease(id obj) { return obj ? _objc_rootAutorelease(obj) : obj; }

#else

typedef struct sw_pool {
    sw_obj base;
    struct sw_pool *parent;
    id *objs;
    size_t n, cap;
} sw_pool;

static _Thread_local sw_pool *tls_pool;

id sw_autorelease(id obj) {
    if (!obj) return obj;
    sw_pool *p = tls_pool;
    if (!p) {
        static _Atomic int warned;
        if (!atomic_exchange(&warned, 1))
            fprintf(stderr, "gdnbench: object %p autoreleased with no NSAutoreleasePool in place - just leaking\n",
                    (void *)obj);
        return obj;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        id *objs = realloc(p->objs, cap * sizeof *objs);
        if (!objs) abort();
        p->objs = objs;
        p->cap = cap;
    }
    p->objs[p->n++] = obj;
    return obj;
}

static id pool_init(id self, SEL cmd) {
    sw_pool *p = (sw_pool *)self;
    p->parent = tls_pool;
    tls_pool = p;
    return self;
}

static void pool_drain_one(sw_pool *p) {
    /* Releasing may autorelease more objects into this pool: index, not snapshot. */
    for (size_t i = 0; i < p->n; i++) sw_release(p->objs[i]);
    free(p->objs);
    tls_pool = p->parent;
    sw_obj_free((id)p);
}

/* Draining a pool drains every pool pushed after it, as Apple's does. */
static void pool_drain(id self, SEL cmd) {
    sw_pool *p = (sw_pool *)self;
    int on_stack = 0;
    for (sw_pool *q = tls_pool; q; q = q->parent) on_stack |= q == p;
    if (!on_stack) {
        fprintf(stderr, "gdnbench: NSAutoreleasePool %p drained on a thread it is not the pool of\n", (void *)p);
        return;
    }
    while (tls_pool != p) pool_drain_one(tls_pool);
    pool_drain_one(p);
}

static id pool_retain(id self, SEL cmd) {
    fprintf(stderr, "gdnbench: NSAutoreleasePool cannot be retained\n");
    return self;
}

static void pool_methods(Class cls) {
    sw_method_add(cls, "init", SW_IMP(pool_init), "@@:");
    sw_method_add(cls, "drain", SW_IMP(pool_drain), "v@:");
    sw_method_add(cls, "release", SW_IMP(pool_drain), "v@:");
    sw_method_add(cls, "retain", SW_IMP(pool_retain), "@@:");
}

#endif

/* ---- NSString ---- */

typedef struct sw_string {
    sw_obj base;
    char *utf8;
    size_t bytes;
} sw_string;

static id string_init_utf8(id self, SEL cmd, const char *s) {
    sw_string *str = (sw_string *)self;
    if (!s) {
        sw_release(self);
        return nil;
    }
    str->bytes = strlen(s);
    str->utf8 = malloc(str->bytes + 1);
    if (!str->utf8) {
        sw_release(self);
        return nil;
    }
    memcpy(str->utf8, s, str->bytes + 1);
    return self;
}

id sw_string_new(const char *utf8) { return string_init_utf8(sw_obj_new(string_class), NULL, utf8); }
id sw_string_autoreleased(const char *utf8) { return sw_autorelease(sw_string_new(utf8)); }

const char *sw_string_utf8(id str) {
    if (!str) return NULL;
    if (sw_is_kind(str, string_class)) return ((sw_string *)str)->utf8;
    return MSG0(const char *, str, "UTF8String"); /* someone else's NSString */
}

static id string_with_utf8(id self, SEL cmd, const char *s) { return sw_string_autoreleased(s); }
static const char *string_utf8(id self, SEL cmd) { return ((sw_string *)self)->utf8; }

/* -length counts UTF-16 code units, as Foundation does. */
static NSUInteger string_length(id self, SEL cmd) {
    const unsigned char *s = (const unsigned char *)((sw_string *)self)->utf8;
    NSUInteger n = 0;
    for (; *s; s++) {
        if ((*s & 0xc0) == 0x80) continue; /* continuation byte */
        n += (*s >= 0xf0) ? 2 : 1;         /* 4-byte sequences need a surrogate pair */
    }
    return n;
}

static BOOL string_is_equal(id self, SEL cmd, id other) {
    const char *o = sw_string_utf8(other);
    return o && strcmp(((sw_string *)self)->utf8, o) == 0;
}

static id string_description(id self, SEL cmd) { return self; }

static void string_dealloc(id self, SEL cmd) {
    free(((sw_string *)self)->utf8);
    sw_obj_free(self);
}

static void string_methods(Class cls) {
    sw_class_method_add(cls, "stringWithUTF8String:", SW_IMP(string_with_utf8), "@@:*");
    sw_method_add(cls, "initWithUTF8String:", SW_IMP(string_init_utf8), "@@:*");
    sw_method_add(cls, "UTF8String", SW_IMP(string_utf8), "*@:");
    sw_method_add(cls, "length", SW_IMP(string_length), "Q@:");
    sw_method_add(cls, "isEqualToString:", SW_IMP(string_is_equal), "C@:@");
    sw_method_add(cls, "description", SW_IMP(string_description), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(string_dealloc), "v@:");
}

/* ---- NSError ---- */

typedef struct sw_error {
    sw_obj base;
    id domain, desc;
    long code;
} sw_error;

id sw_error_new(const char *domain, long code, const char *desc) {
    sw_error *e = (sw_error *)sw_obj_new(error_class);
    if (!e) return nil;
    e->domain = sw_string_new(domain);
    e->desc = sw_string_new(desc ? desc : "unknown error");
    e->code = code;
    return (id)e;
}

const char *sw_error_text(id err) {
    if (!err) return NULL;
    if (sw_is_kind(err, error_class)) return sw_string_utf8(((sw_error *)err)->desc);
    return sw_string_utf8(MSG0(id, err, "localizedDescription"));
}

void sw_error_out(id *out, id e) {
    if (out)
        *out = sw_autorelease(e);
    else
        sw_release(e);
}

static id error_desc(id self, SEL cmd) { return ((sw_error *)self)->desc; }
static id error_domain(id self, SEL cmd) { return ((sw_error *)self)->domain; }
static NSInteger error_code(id self, SEL cmd) { return ((sw_error *)self)->code; }

static void error_dealloc(id self, SEL cmd) {
    sw_error *e = (sw_error *)self;
    sw_release(e->domain);
    sw_release(e->desc);
    sw_obj_free(self);
}

static void error_methods(Class cls) {
    sw_method_add(cls, "localizedDescription", SW_IMP(error_desc), "@@:");
    sw_method_add(cls, "description", SW_IMP(error_desc), "@@:");
    sw_method_add(cls, "domain", SW_IMP(error_domain), "@@:");
    sw_method_add(cls, "code", SW_IMP(error_code), "q@:");
    sw_method_add(cls, "dealloc", SW_IMP(error_dealloc), "v@:");
}

/* ---- registration ---- */

void sw_objc_register_metal(void); /* objc_device.c */

static void register_all(void) {
    root_class = sw_class_register("SWObject", Nil, sizeof(sw_obj), root_methods);
#if !defined(__APPLE__)
    sw_class_register("NSAutoreleasePool", root_class, sizeof(sw_pool), pool_methods);
#endif
    string_class = sw_class_register(free_name("NSString", "SWString"), root_class, sizeof(sw_string), string_methods);
    error_class = sw_class_register(free_name("NSError", "SWError"), root_class, sizeof(sw_error), error_methods);
    sw_objc_register_metal();
}

static pthread_once_t register_once = PTHREAD_ONCE_INIT;

void sw_objc_init(void) { pthread_once(&register_once, register_all); }

/* The host may look up NSAutoreleasePool or NSString before it creates the device:
 * register at start-up. */
__attribute__((constructor)) static void sw_objc_init_at_load(void) { sw_objc_init(); }
