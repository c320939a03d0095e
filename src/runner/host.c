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

#ifndef __APPLE__
/* Strips surrounding blanks from a /proc/cpuinfo key or value in place. */
static void trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    size_t lead = strspn(s, " \t");
    if (lead) memmove(s, s + lead, strlen(s + lead) + 1);
}

/* The first of these keys that /proc/cpuinfo has, in this order of preference:
 * x86 says "model name"; Arm boards say "Model" (the board), "Hardware" (the SoC),
 * or nothing at all; MIPS says "cpu model". */
static int cpuinfo_model(char *buf, size_t n) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return -1;
    static const char *const keys[] = {"model name", "Model", "Hardware", "cpu model"};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    char found[NKEYS][256] = {{0}};
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = 0;
        trim(line);
        char *value = colon + 1;
        trim(value);
        for (int k = 0; k < NKEYS; k++)
            if (!found[k][0] && strcmp(line, keys[k]) == 0) snprintf(found[k], sizeof found[k], "%s", value);
    }
    fclose(f);
    for (int k = 0; k < NKEYS; k++) {
        if (found[k][0]) {
            snprintf(buf, n, "%s", found[k]);
            return 0;
        }
    }
    return -1;
}
#endif

int host_cpu_name(char *buf, size_t n) {
#ifdef __APPLE__
    size_t len = n;
    if (sysctlbyname("machdep.cpu.brand_string", buf, &len, NULL, 0) == 0 && buf[0]) return 0;
#else
    if (cpuinfo_model(buf, n) == 0) return 0;
#endif
    snprintf(buf, n, "unknown CPU");
    return -1;
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
