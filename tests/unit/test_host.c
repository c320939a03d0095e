/* test_host.c — facts about the host: where our own executable is (it finds
 * shaders/ next to itself from there). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/host.h"
#include "test.h"

TEST(host_executable_path_is_this_binary_resolved) {
    char p[PATH_MAX];
    CHECK(host_executable_path(p, sizeof p) == 0);
    CHECK_MSG(p[0] == '/', "not absolute: %s", p);
    const char *base = strrchr(p, '/');
    CHECK_MSG(base && strcmp(base + 1, "gdnbench-tests") == 0, "not this binary: %s", p);
    CHECK(access(p, X_OK) == 0);
    char real[PATH_MAX];
    CHECK(realpath(p, real) != NULL);
    CHECK_MSG(strcmp(real, p) == 0, "%s is not its own real path %s", p, real);
    char small[4];
    CHECK(host_executable_path(small, sizeof small) == -1);
    CHECK(host_executable_path(small, 0) == -1);
}
