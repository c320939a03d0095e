/* msl_include.h — one self-contained MSL text from a .metal file and the headers
 * it includes, as Metal's compiler resolves them.
 *
 * Quoted includes resolve relative to the including file's directory, then in the
 * -I directories (in order); angle includes in the -I directories.  Each header
 * found is inlined between `#line` markers, so diagnostics, __FILE__ and __LINE__
 * still name the header and its lines; a header with `#pragma once` is wrapped in a
 * guard macro, so a second inclusion is skipped exactly when the preprocessor has
 * already seen the first (an inclusion inside a false #if does not count).  An
 * include that is not found stays as written (the compiler then reports it where it
 * is, unless a false #if skips it).  -D definitions become `#define` lines in front.
 *
 * Both Metal devices use it: a real GPU gets the text through newLibraryWithSource:
 * (which has no include path of its own); the software device compiles it, and so
 * its compile cache, keyed by this text, covers every file the compile read. */
#ifndef GDN_MSL_INCLUDE_H
#define GDN_MSL_INCLUDE_H

#include <stddef.h>

#define MSL_MAX_INCLUDE_DIRS 32
#define MSL_MAX_DEFINES 64

typedef struct msl_source_opts {
    const char *include_dirs[MSL_MAX_INCLUDE_DIRS];
    int ninclude_dirs;
    const char *defines[MSL_MAX_DEFINES];   /* "NAME" or "NAME=VALUE" (-D) */
    int ndefines;
} msl_source_opts;

enum {
    MSL_EXPAND_KEEP_SYSTEM = 0,   /* leave <metal_*> and other unresolved angle includes (real Metal) */
    MSL_EXPAND_SOFTWARE = 1       /* blank <metal_*> (the prelude provides them); frameworks the software
                                     device cannot provide become #error lines that say so */
};

/* Checks a -D argument: NAME or NAME=VALUE, NAME an identifier, no newline.
 * Returns 0, or -1 with a one-line reason in err. */
int msl_check_define(const char *def, char *err, size_t errlen);

/* Expands `source`, read from `path` (which names it in diagnostics and whose
 * directory quoted includes start from; NULL or a bare name: the current
 * directory).  Returns malloc'd text, or NULL with *err (malloc'd) set:
 * "file:line:col: error: ..." for an unreadable header or a cycle. */
char *msl_expand_source(const char *source, const char *path, const msl_source_opts *o, int mode, char **err);

/* The SHA-256 (hex) of what a kernel really is: the source alone when it includes
 * no header and has no -D, else the expanded text.  Returns 0, or -1 with err set
 * (a header that cannot be read). */
int msl_source_sha256(const char *source, const char *path, const msl_source_opts *o, char hex[65], char *err,
                      size_t errlen);

#endif
