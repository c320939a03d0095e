/* sw_test_env.c — see sw_test_env.h. */
#include "sw_test_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/sw_compile.h"
#include "swmetal/swmetal.h"
#include "test.h"

id sw_test_str(const char *s) {
    return MSG1(id, objc_class_named("NSString"), "stringWithUTF8String:", const char *, s);
}

id sw_test_named_source(const char *src, const char *name) {
    if (!name) return sw_test_str(src);
    size_t n = strlen(src) + strlen(name) + 16;
    char *text = malloc(n);
    CHECK(text != NULL);
    if (!text) return nil;
    snprintf(text, n, "#line 1 \"%s\"\n%s", name, src);
    id s = sw_test_str(text);
    free(text);
    return s;
}

char *sw_test_read_repo_file(const char *rel, char *path, size_t n) {
    const char *root = getenv("GDNBENCH_ROOT");
    snprintf(path, n, "%s/%s", root ? root : ".", rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t len = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    if (buf) buf[len] = 0;
    return buf;
}

void sw_test_env_open(sw_test_env *e, const char *checks, const char *src, const char *source_name) {
    const char *path, *version;
    char *err = NULL;
    if (sw_compiler_info(&path, &version, &err) != 0) SKIP("%s", err ? err : "no clang++ >= 17");
    char cache[96];
    snprintf(cache, sizeof cache, "/tmp/gdnbench-test-cache-%ld", (long)getuid());
    setenv("GDNBENCH_CACHE_DIR", cache, 1);
    swmtl_options o;
    swmtl_options_init(&o);
    CHECK(swmtl_parse_checks(checks, &o.checks, "checks", NULL, 0) == 0);
    e->pool = MSG0(id, MSG0(id, objc_class_named("NSAutoreleasePool"), "alloc"), "init");
    e->dev = swmtl_device_new(&o);
    id error = nil;
    e->lib = MSG3(id, e->dev, "newLibraryWithSource:options:error:", id, sw_test_named_source(src, source_name), id,
                  nil, id *, &error);
    CHECK_MSG(e->lib != nil, "compile: %s",
              error ? MSG0(const char *, MSG0(id, error, "localizedDescription"), "UTF8String") : "?");
    e->queue = MSG0(id, e->dev, "newCommandQueue");
}

void sw_test_env_close(sw_test_env *e) {
    if (e->queue) MSG0(void, e->queue, "release");
    if (e->lib) MSG0(void, e->lib, "release");
    if (e->dev) MSG0(void, e->dev, "release");
    if (e->pool) MSG0(void, e->pool, "drain");
}

id sw_test_run(sw_test_env *e, const char *name, id *bufs, int n, const char *dispatch, MTLSize size, MTLSize tg) {
    id fn = MSG1(id, e->lib, "newFunctionWithName:", id, sw_test_str(name));
    CHECK_MSG(fn != nil, "no function %s", name);
    id err = nil;
    id pso = MSG2(id, e->dev, "newComputePipelineStateWithFunction:error:", id, fn, id *, &err);
    id cb = MSG0(id, e->queue, "commandBuffer");
    id enc = MSG0(id, cb, "computeCommandEncoder");
    MSG1(void, enc, "setComputePipelineState:", id, pso);
    for (int i = 0; i < n; i++)
        MSG3(void, enc, "setBuffer:offset:atIndex:", id, bufs[i], NSUInteger, 0, NSUInteger, (NSUInteger)i);
    MSG2(void, enc, dispatch, MTLSize, size, MTLSize, tg);
    MSG0(void, enc, "endEncoding");
    MSG0(void, cb, "commit");
    MSG0(void, cb, "waitUntilCompleted");
    MSG0(void, pso, "release");
    MSG0(void, fn, "release");
    return cb;
}
