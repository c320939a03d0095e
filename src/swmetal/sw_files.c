/* sw_files.c — processes, files and the cache directory for the compile step (see
 * sw_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/file.h"
#include "msl/msl_lex.h"
#include "swmetal/sw_files.h"

extern char **environ;

int sw_run_process(char *const argv[], const char *out_path, const char *err_path) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path ? err_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

char *sw_read_file(const char *path, size_t *len_out) {
    file_text ft;
    file_read_all(path, FILE_NO_LIMIT, 0, &ft, NULL, 0);
    if (ft.data && len_out) *len_out = ft.len;
    return ft.data;
}

int sw_write_file_atomic(const char *path, const char *data, size_t len) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d-%lx", path, (int)getpid(), (unsigned long)pthread_self());
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int ok = fwrite(data, 1, len, f) == len;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int sw_mkdir_p(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    return 0;
}

int sw_cache_dir(char *out, size_t n, char **err) {
    const char *d = getenv("GDNBENCH_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (d && *d) snprintf(out, n, "%s", d);
    else if (xdg && *xdg) snprintf(out, n, "%s/gdnbench/sw", xdg);
    else if (home && *home) snprintf(out, n, "%s/.cache/gdnbench/sw", home);
    else snprintf(out, n, "/tmp/gdnbench-cache-%d/sw", (int)getuid());
    if (sw_mkdir_p(out) != 0) {
        msl_buf m = {0};
        msl_buf_printf(&m, "cannot create the kernel cache directory %s (%s); set GDNBENCH_CACHE_DIR to a writable "
                           "directory", out, strerror(errno));
        *err = msl_buf_take(&m);
        return -1;
    }
    return 0;
}

void sw_pathf(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

char *sw_fmt_err(const char *fmt, const char *a, const char *b) {
    msl_buf m = {0};
    msl_buf_printf(&m, fmt, a ? a : "", b ? b : "");
    return msl_buf_take(&m);
}
