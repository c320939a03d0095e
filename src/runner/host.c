/* host.c — CPU model, core count, OS and kernel of the host. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __APPLE__
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
