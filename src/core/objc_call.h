/* objc_call.h — sending Objective-C messages from plain C.
 *
 * The one place that knows which runtime we are on: Apple's (objc_msgSend, cast to
 * the method's real signature) or GNU libobjc (objc_msg_lookup returns the IMP,
 * which we then call).  Everything else writes
 *     id buf = MSG(id, device, "newBufferWithLength:options:", NSUInteger, len, NSUInteger, opts);
 * with the return type first and each argument preceded by its type.
 *
 * Only arm64 is supported on Apple: there objc_msgSend returns structs and floats
 * itself, while x86-64 needs objc_msgSend_stret/_fpret for them, which MSG does not
 * pick.  An Intel Mac build stops here rather than miscall a struct-returning send. */
#ifndef GDN_OBJC_CALL_H
#define GDN_OBJC_CALL_H

#if defined(__APPLE__) && !defined(__arm64__) && !defined(__aarch64__)
#error "gdnbench supports Apple silicon (arm64) only on macOS: its objc_msgSend calls lack the x86-64 _stret/_fpret variants"
#endif

#include <stddef.h>
#include <stdint.h>

#if defined(__APPLE__)
#include <objc/message.h>
#include <objc/runtime.h>
#define OBJC_IMP_FOR(obj, sel) ((IMP)objc_msgSend)
#else
#include <objc/runtime.h>
#include <objc/message.h>
#define OBJC_IMP_FOR(obj, sel) objc_msg_lookup((obj), (sel))
#endif

typedef unsigned long NSUInteger;
typedef long NSInteger;

/* Selector by name, registered once per call site.  The IMP is cast through
 * void (*)(void) so that gcc's -Wcast-function-type accepts the cast to the
 * method's real signature. */
static inline SEL objc_sel(const char *name) { return sel_registerName(name); }

#define MSG_SEL(name) objc_sel(name)

/* MSG(ret, obj, "selector:with:", T1, a1, T2, a2, ...)
 * The receiver is evaluated once (a GNU statement expression): with
 * MSG0(id, MSG0(id, cls, "alloc"), "init") a twice-evaluated receiver would
 * allocate two objects and leak one. */
#define MSG0(ret, obj, name)                                                                                     \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(msg_obj_, msg_sel_);                 \
    })
#define MSG1(ret, obj, name, t1, a1)                                                                             \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL, t1))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(msg_obj_, msg_sel_, (a1));       \
    })
#define MSG2(ret, obj, name, t1, a1, t2, a2)                                                                     \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL, t1, t2))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(msg_obj_, msg_sel_, (a1),    \
                                                                                    (a2));                       \
    })
#define MSG3(ret, obj, name, t1, a1, t2, a2, t3, a3)                                                             \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL, t1, t2, t3))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(msg_obj_, msg_sel_,      \
                                                                                        (a1), (a2), (a3));       \
    })
#define MSG4(ret, obj, name, t1, a1, t2, a2, t3, a3, t4, a4)                                                     \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL, t1, t2, t3, t4))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(                     \
            msg_obj_, msg_sel_, (a1), (a2), (a3), (a4));                                                         \
    })

#define MSG5(ret, obj, name, t1, a1, t2, a2, t3, a3, t4, a4, t5, a5)                                             \
    __extension__({                                                                                              \
        id msg_obj_ = (id)(obj);                                                                                 \
        SEL msg_sel_ = MSG_SEL(name);                                                                            \
        ((ret(*)(id, SEL, t1, t2, t3, t4, t5))(void (*)(void))OBJC_IMP_FOR(msg_obj_, msg_sel_))(                 \
            msg_obj_, msg_sel_, (a1), (a2), (a3), (a4), (a5));                                                   \
    })

/* Class by name: Apple's Metal/Foundation classes, or the software device's
 * (registered under the same names on Linux). */
static inline id objc_class_named(const char *name) { return (id)objc_getClass(name); }

/* Whether obj answers the selector.  An object that has -respondsToSelector: is
 * asked (on Apple's runtime Metal's debug layer and GPU capture hand out wrapper
 * objects that forward what their class does not implement, so only the object can
 * say); one without it (a root class outside NSObject's hierarchy, e.g. the
 * software device's SWObject) is answered by the runtime from its class. */
static inline int objc_responds(id obj, const char *name) {
    if (!obj) return 0;
    Class cls = object_getClass(obj);
    SEL sel = sel_registerName(name);
    SEL asks = sel_registerName("respondsToSelector:");
    if (class_respondsToSelector(cls, asks)) return MSG1(BOOL, obj, "respondsToSelector:", SEL, sel) != 0;
    return class_respondsToSelector(cls, sel) != 0;
}

/* An NSAutoreleasePool around sends that may return autoreleased objects (Apple's
 * Foundation class, or the software device's of that name on GNU libobjc). */
static inline id objc_pool_push(void) {
    return MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
}
static inline void objc_pool_pop(id pool) { MSG0(void, pool, "drain"); }

/* MTLSize and MTLOrigin as Metal lays them out. */
typedef struct MTLSize {
    NSUInteger width, height, depth;
} MTLSize;

/* Foundation's NSRange (passed by value, e.g. resolveCounterRange:). */
typedef struct NSRange {
    NSUInteger location, length;
} NSRange;

#endif
