/* host.h — facts about the machine we run on (for `info` and the report). */
#ifndef GDN_HOST_H
#define GDN_HOST_H

#include <stddef.h>

void host_cpu_name(char *buf, size_t n);   /* "AMD EPYC 7B13" / "Apple M4 Max" */
int host_cores(void);
void host_os(char *buf, size_t n);         /* "Linux" / "Darwin" */
void host_kernel(char *buf, size_t n);     /* uname release */
/* Absolute path of the running executable, symlinks resolved (/proc/self/exe on
 * Linux, _NSGetExecutablePath + realpath on macOS).  Returns 0, or -1 when unknown
 * or longer than n - 1. */
int host_executable_path(char *buf, size_t n);

#endif
