/* host.h — facts about the machine we run on, for `info`, the cpu backend's device
 * name and the JSON report's "host" (one probe each, so they always agree). */
#ifndef GDN_HOST_H
#define GDN_HOST_H

#include <stddef.h>

/* The CPU model: "AMD EPYC 7B13", "Apple M4 Max" (machdep.cpu.brand_string on
 * macOS; /proc/cpuinfo's "model name", else "Model", "Hardware" or "cpu model" on
 * Linux).  0, or -1 with "unknown CPU" in buf when the system does not say. */
int host_cpu_name(char *buf, size_t n);
int host_cores(void);
void host_os(char *buf, size_t n);         /* "Linux" / "Darwin" */
void host_kernel(char *buf, size_t n);     /* uname release */
/* Absolute path of the running executable, symlinks resolved (/proc/self/exe on
 * Linux, _NSGetExecutablePath + realpath on macOS).  Returns 0, or -1 when unknown
 * or longer than n - 1. */
int host_executable_path(char *buf, size_t n);

#endif
