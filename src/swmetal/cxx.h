/* cxx.h — the C++ compiler the software device builds kernels with: which one,
 * whether it can (a probe compile, cached), and what to install when none can.
 *
 * A version number alone cannot answer "can it": Apple clang numbers its own
 * releases (Apple clang 16 is LLVM 17), and what the prelude needs — __bf16 and
 * _Float16 arithmetic rounding per operation — is a code-generation matter of the
 * target.  So every candidate that is new enough on paper compiles a tiny __bf16
 * program with the kernels' own flags first; the verdict is cached on disk per
 * compiler (path and full --version text). */
#ifndef GDN_SW_CXX_H
#define GDN_SW_CXX_H

typedef struct sw_cxx {
    char path[512];    /* as run: a PATH name or an absolute path */
    char version[256]; /* first line of --version */
    int llvm_major;
} sw_cxx;

/* The compiler, found once per process (GDNBENCH_CXX if set, else the first
 * candidate that passes).  NULL with *err (malloc'd, one line that names the fix
 * for this platform and contains "clang++ >= 17"). */
const sw_cxx *sw_cxx_get(char **err);

/* The flags of every kernel build, after the compiler and before -I, -o and the
 * source; instrumented, SW_INSTR_* bits (sw_compile.h): 1 adds ThreadSanitizer's
 * hooks, 2 the numeric checks' (numerics.c); darwin the Mach-O linking.
 * Writes at most max entries (SW_CXX_MAX_FLAGS hold them all); returns how many. */
#define SW_CXX_MAX_FLAGS 40
int sw_cxx_kernel_flags(int instrumented, int darwin, const char **flags, int max);

/* The CPU the kernels are built for when the flags ask for the host's own
 * (-march=native on x86-64 Linux): vendor, signature and CPUID feature words, so a
 * cache directory shared between machines never hands one a library built for
 * another's instructions.  "" where the kernels are built for the target's
 * baseline.  Part of every kernel library's cache key. */
const char *sw_cxx_host_cpu(void);

/* The LLVM major version behind a `clang++ --version` text, or -1 when it is not
 * clang.  *apple (may be NULL) is set to 1 for Apple clang, whose own numbering is
 * mapped: Apple clang 15 = LLVM 16, 16 = LLVM 17, 17 (Xcode 16.3+) = LLVM 19. */
int sw_cxx_llvm_major(const char *version_text, int *apple);

/* "<problem>; the software Metal device needs clang++ >= 17 ...: <fix>", the fix
 * for macOS (Xcode 16.3+ or Homebrew's llvm) or for Debian (apt-get).  Malloc'd. */
char *sw_cxx_explain(const char *problem, int macos);

#endif
