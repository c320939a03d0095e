/* objc_base.h — the software device's Objective-C foundation, registered at run time.
 *
 * A root class (SWObject) with an atomic reference count and Apple's ownership
 * conventions: alloc/new/copy/new* return +1, everything else is autoreleased into
 * the calling thread's innermost NSAutoreleasePool — Foundation's on Apple (objc4's
 * pool stack), ours on GNU libobjc, which has none.  Also the few Foundation classes
 * the host needs (NSString, NSError, and NSAutoreleasePool on GNU libobjc),
 * registered under their own names when the process has no Foundation, else under
 * SW* names.
 *
 * Every instance is a C struct starting with sw_obj, calloc'd by sw_obj_new. */
#ifndef GDN_SW_OBJC_BASE_H
#define GDN_SW_OBJC_BASE_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/objc_call.h"

typedef struct sw_obj {
    Class isa;
    _Atomic long refs;
} sw_obj;

/* Casts a C function to the IMP that class_addMethod takes. */
#define SW_IMP(fn) ((IMP)(void (*)(void))(fn))

/* Registers all classes of the software device once (safe from any thread). */
void sw_objc_init(void);

/* Creates and registers a class; instances are `instance_size` bytes (>= sizeof(sw_obj)). */
Class sw_class_register(const char *name, Class super, size_t instance_size, void (*add_methods)(Class cls));
void sw_method_add(Class cls, const char *sel, IMP imp, const char *types);
void sw_class_method_add(Class cls, const char *sel, IMP imp, const char *types);
Class sw_root_class(void);

/* A new instance with one reference (the caller's). */
id sw_obj_new(Class cls);
id sw_retain(id obj);
void sw_release(id obj);          /* sends -dealloc when the last reference goes */
id sw_autorelease(id obj);
long sw_retain_count(id obj);
/* The end of every -dealloc: frees the instance memory. */
void sw_obj_free(id obj);
/* Instances allocated by sw_obj_new and not yet freed, process-wide. */
long sw_objc_live_objects(void);

/* NSString: +1 new string (a copy of utf8), its bytes, autoreleased string. */
id sw_string_new(const char *utf8);
id sw_string_autoreleased(const char *utf8);
const char *sw_string_utf8(id str);

/* NSError with NSLocalizedDescription = desc: +1. */
id sw_error_new(const char *domain, long code, const char *desc);
const char *sw_error_text(id err);

/* Stores an autoreleased copy of `e` (+1, consumed) into *out when out is not NULL. */
void sw_error_out(id *out, id e);

/* Classes for type checks of message arguments. */
Class sw_string_class(void);
int sw_is_kind(id obj, Class cls);

#endif
