/* sw_test_env.h — what the unit tests that run MSL kernels on the software device
 * share (test_sw_msl.c, test_sw_findings.c): a device, a library compiled from
 * source, a command queue, and one encoder sequence that runs a kernel. */
#ifndef GDN_TEST_SW_TEST_ENV_H
#define GDN_TEST_SW_TEST_ENV_H

#include "core/objc_call.h"

typedef struct sw_test_env {
    id pool, dev, lib, queue;
} sw_test_env;

/* An NSString (autoreleased). */
id sw_test_str(const char *s);
/* An NSString of src that names itself `name` (a first line `#line 1 "name"`, as
 * msl_expand_source writes it: where the software device finds the file name
 * its diagnostics report).  name NULL: src as it is. */
id sw_test_named_source(const char *src, const char *name);

/* The text of a file of the repository (`rel` under $GDNBENCH_ROOT, else the
 * working directory), malloc'd; NULL when it cannot be read.  path gets its name. */
char *sw_test_read_repo_file(const char *rel, char *path, size_t n);

/* Sets the checks mode (`none`, `fast`, `full`), then makes the device, compiles
 * `src` (findings name it `source_name`) and makes a queue.  Skips the test when
 * there is no clang++ >= 17; a compile error fails it (e->lib is then nil).  Compiled
 * variants go to one cache directory under /tmp that these tests share. */
void sw_test_env_open(sw_test_env *e, const char *checks, const char *src, const char *source_name);

/* Releases what open made and sets the checks back to `fast`. */
void sw_test_env_close(sw_test_env *e);

/* Runs kernel `name` with bufs[0..n) at buffer indices 0..n-1 through `dispatch`
 * (dispatchThreadgroups: or dispatchThreads: ...threadsPerThreadgroup:); returns the
 * committed, completed command buffer (autoreleased). */
id sw_test_run(sw_test_env *e, const char *name, id *bufs, int n, const char *dispatch, MTLSize size, MTLSize tg);

#endif
