/* host.c — CPU model, core count, OS and kernel of the host, and where our own
 * executable is. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#include <sys/sysctl.h>
#endif

#include "runner/host.h"

void host_cpu_name(char *buf, size_t n) {
    snprintf(buf, n, "unknown CPU");
#ifdef __APPLE__
    size_t len = n;
    if (sysctlbyname("machdep.cpu.brand_string", buf, &len, NULL, 0) != 0) snprintf(buf, n, "unknown CPU");
#else
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
            char *colon = strchr(line, ':');
            if (!colon) continue;
            colon++;
            while (*colon == ' ' || *colon == '\t') colon++;
            colon[strcspn(colon, "\n")] = 0;
            snprintf(buf, n, "%s", colon);
            break;
        }
    }
    fclose(f);
#endif
}

int host_cores(void) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void host_os(char *buf, size_t n) {
    struct utsname u;
    snprintf(buf, n, "%s", uname(&u) == 0 ? u.sysname : "unknown");
}

void host_kernel(char *buf, size_t n) {
    struct utsname u;
    snprintf(buf, n, "%s", uname(&u) == 0 ? u.release : "unknown");
}

int host_executable_path(char *buf, size_t n) {
    if (n == 0) return -1;
#ifdef __APPLE__
    /* dyld's path may be relative or go through symlinks (Homebrew's bin/ links):
     * realpath gives the file itself, whose directory is next to its shaders/. */
    char raw[PATH_MAX];
    uint32_t size = sizeof raw;
    if (_NSGetExecutablePath(raw, &size) != 0) return -1;
    char real[PATH_MAX];
    if (!realpath(raw, real)) return -1;
    if (strlen(real) >= n) return -1;
    memcpy(buf, real, strlen(real) + 1);
    return 0;
#else
    /* the kernel's link is the resolved, absolute path */
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    if (k <= 0 || (size_t)k >= n - 1) return -1;
    buf[k] = 0;
    return 0;
#endif
}
