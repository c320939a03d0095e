/* version.c — the two build-time strings of version.h, the only place the
 * Makefile's -DGDNBENCH_VERSION / -DGDNBENCH_GIT_SHA reach. */
#include "core/version.h"

#ifndef GDNBENCH_VERSION
#define GDNBENCH_VERSION GDNBENCH_DEFAULT_VERSION
#endif
#ifndef GDNBENCH_GIT_SHA
#define GDNBENCH_GIT_SHA ""
#endif

const char gdnbench_version[] = GDNBENCH_VERSION;
const char gdnbench_git_sha[] = GDNBENCH_GIT_SHA;
