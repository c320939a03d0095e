/* sw_files.h — what the software device's compile step needs from the host system:
 * running the compiler, whole-file reads, atomic writes, and its cache directory.
 *
 * Shared by compile.c (kernels) and cxx.c (finding and probing the compiler). */
#ifndef GDN_SW_FILES_H
#define GDN_SW_FILES_H

#include <stddef.h>

/* Runs argv (argv[0] found on PATH) with stdin from /dev/null and stdout and
 * stderr sent to files (NULL: /dev/null).  Returns the exit status (128 + signal
 * when killed), or -1 if it could not start. */
int sw_run_process(char *const argv[], const char *out_path, const char *err_path);

/* The whole file, NUL-terminated (malloc'd; *len_out = bytes without the NUL), or
 * NULL when it cannot be read. */
char *sw_read_file(const char *path, size_t *len_out);

/* Writes under a temporary name and renames into place, so that concurrent
 * processes sharing the cache never see half a file.  Returns 0 or -1 (errno). */
int sw_write_file_atomic(const char *path, const char *data, size_t len);

/* snprintf for paths: a path that does not fit is cut, and the file operation on
 * it then fails with a message naming it. */
void sw_pathf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fmt with its two %s as a and b ("" for NULL), malloc'd: a file operation's error. */
char *sw_fmt_err(const char *fmt, const char *a, const char *b);

/* mkdir -p.  Returns 0 or -1 (errno). */
int sw_mkdir_p(const char *path);

/* The kernel cache directory, created if needed: $GDNBENCH_CACHE_DIR, else
 * $XDG_CACHE_HOME/gdnbench/sw, else ~/.cache/gdnbench/sw.  Returns 0, or -1 with
 * *err (malloc'd) naming the directory and the fix. */
int sw_cache_dir(char *out, size_t n, char **err);

#endif
