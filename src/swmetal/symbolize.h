/* symbolize.h — which .metal line a code address of a compiled kernel came from.
 *
 * Kernel libraries are compiled with line tables (-gline-tables-only); the C++ they
 * come from carries the pre-pass's line markers, so the tables name the user's
 * .metal file and included headers, never the generated code.  A packaged
 * symbolizer reads them: llvm-symbolizer (the clang toolchain's, Debian package
 * llvm-19; Homebrew's llvm on macOS) or, on macOS without it, Xcode's atos.  It is
 * run as a separate process once per batch of new addresses; answers are cached
 * for the life of the process.
 *
 * Frames inlined from the MSL prelude (metal_stdlib.h and friends) are skipped: an
 * address inside simdgroup_load() is reported at the user's line that called it. */
#ifndef GDN_SW_SYMBOLIZE_H
#define GDN_SW_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sw_srcloc {
    char file[256];      /* "" = unknown */
    int line, column;    /* 0 = unknown */
    int in_prelude;      /* only prelude frames were found: file/line are the prelude's */
    char text[160];      /* the source line, leading blanks dropped; "" when unreadable */
} sw_srcloc;

/* Locations of n code addresses (each the address of an instruction: subtract 1
 * from a return address first).  Addresses outside any loaded object, or without
 * line information, get line 0.  Returns 0, or -1 when no symbolizer could run
 * (every location left unknown; sw_symbolize_problem says why). */
int sw_symbolize(const uintptr_t *pcs, int n, sw_srcloc *out);

/* Why the last sw_symbolize returned -1 ("" when it did not). */
const char *sw_symbolize_problem(void);

/* The source of `file` as the library at so_path was compiled from: the in-memory
 * text handed to newLibraryWithSource: under that name.  Files not registered
 * are read from disk.  The text is copied; one with `#line N "FILE"` markers (the
 * headers msl_include.c inlined) is split into the files it names. */
void sw_symbolize_register(const char *so_path, const char *file, const char *text);
void sw_symbolize_unregister(const char *so_path);

/* Line `line` of `file` as the library at so_path (NULL: any) sees it: registered
 * text first, then the file on disk; leading blanks dropped, cut to fit; "" when
 * unknown. */
void sw_source_line(const char *so_path, const char *file, int line, char *buf, size_t n);

/* The source file the library holding code address pc was compiled from (as
 * registered), "" when unknown. */
void sw_symbolize_main_file(const void *pc, char *buf, size_t n);

/* The symbolizer command in use ("llvm-symbolizer-19", ...), or NULL when none. */
const char *sw_symbolizer_name(void);

#endif
