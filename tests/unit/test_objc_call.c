/* test_objc_call.c — core/objc_call.h's objc_responds: an object that has
 * -respondsToSelector: is asked (a debug layer's or capture's wrapper forwards what
 * its class does not implement), one without it is answered from its class. */
#include <string.h>

#include "core/objc_call.h"
#include "swmetal/objc_base.h"
#include "test.h"

static void plain(id self, SEL cmd) {}

/* A wrapper that answers for what it forwards: YES for gdn_forwarded, as NSObject
 * answers for its own methods otherwise. */
static BOOL wrapper_responds(id self, SEL cmd, SEL asked) {
    return sel_isEqual(asked, sel_registerName("gdn_forwarded")) ||
           class_respondsToSelector(object_getClass(self), asked);
}

static void add_plain(Class cls) { sw_method_add(cls, "gdn_plain", SW_IMP(plain), "v@:"); }

static void add_wrapper(Class cls) {
    add_plain(cls);
    sw_method_add(cls, "respondsToSelector:", SW_IMP(wrapper_responds), "C@::");
}

TEST(objc_responds_asks_the_object_else_its_class) {
    sw_objc_init();
    static Class bare, wrapper;
    if (!bare) bare = sw_class_register("GDNTestBare", sw_root_class(), sizeof(sw_obj), add_plain);
    if (!wrapper) wrapper = sw_class_register("GDNTestWrapper", sw_root_class(), sizeof(sw_obj), add_wrapper);
    CHECK(bare && wrapper);
    if (!bare || !wrapper) return;
    id b = sw_obj_new(bare), w = sw_obj_new(wrapper);
    /* no -respondsToSelector: (SWObject's hierarchy): the class's methods */
    CHECK(objc_responds(b, "gdn_plain"));
    CHECK(!objc_responds(b, "gdn_forwarded"));
    /* with it: what the object says, beyond what its class implements */
    CHECK(!class_respondsToSelector(wrapper, sel_registerName("gdn_forwarded")));
    CHECK(objc_responds(w, "gdn_forwarded"));
    CHECK(objc_responds(w, "gdn_plain"));
    CHECK(!objc_responds(w, "gdn_absent"));
    CHECK(!objc_responds(nil, "gdn_plain"));
    sw_release(b);
    sw_release(w);
}
