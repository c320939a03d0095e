/* capture_opts.h — `--capture DIR` as every command that runs kernels takes it (an op
 * run, `gdnbench kernel`, `suite`): only on a backend that records GPU traces
 * (BACKEND_CAPTURE: metal), Metal told before its device is created, the directory
 * made and no trace overwritten before a case runs, the first timed iteration of each
 * case recorded (runner.c) as DIR/<stem>.gputrace, and one line saying where. */
#ifndef GDN_CAPTURE_OPTS_H
#define GDN_CAPTURE_OPTS_H

#include <stddef.h>

/* 0 when a run on `backend` can take --capture DIR; else -1 with err naming the
 * backend (nothing is created). */
int cli_capture_check_backend(const char *dir, const char *backend, char *err, size_t errlen);

/* Before the device is created: MTL_CAPTURE_ENABLED=1, which Metal reads then. */
void cli_capture_enable(void);

/* DIR exists (made if need be).  0, or -1 with err. */
int cli_capture_dir(const char *dir, char *err, size_t errlen);
/* DIR/<stem>.gputrace: where a case's capture goes. */
void cli_capture_path(const char *dir, const char *stem, char *out, size_t n);
/* 0 when nothing is at path yet (Metal refuses to overwrite a trace); else -1 with
 * err. */
int cli_capture_unused(const char *path, char *err, size_t errlen);

/* The line that says where a case's capture went. */
void cli_capture_note(const char *path);

#endif
