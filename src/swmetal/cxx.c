/* cxx.c — finding and probing the software device's C++ compiler (see cxx.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sha256.h"
#include "swmetal/cxx.h"
#include "msl/msl_lex.h"
#include "swmetal/sw_files.h"

#if defined(__APPLE__)
#define HOST_DARWIN 1
#else
#define HOST_DARWIN 0
#endif

/* The target the kernel libraries are built for: this executable's own. */
#if defined(__APPLE__) && defined(__x86_64__)
#define DARWIN_TRIPLE "x86_64-apple-macos"
#else
#define DARWIN_TRIPLE "arm64-apple-macos"
#endif
#if defined(__x86_64__)
#define HOST_TRIPLE "x86_64-unknown-linux-gnu"
#elif defined(__aarch64__)
#define HOST_TRIPLE "aarch64-unknown-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_TRIPLE "riscv64-unknown-linux-gnu"
#else
#define HOST_TRIPLE "x86_64-unknown-linux-gnu"
#endif

#define MIN_LLVM 17

/* Kernels are built for this machine's own CPU where that is an x86-64 Linux host:
 * the baseline ISA (SSE2) has no bf16/f16 conversions, and clang then builds
 * <2 x bfloat> values through the stack (two 16-bit stores read back by one wider
 * load, a store-forwarding stall per conversion: 3-4x slower flash-attention
 * backward).  Results do not change: no fused multiply-add is formed
 * (-ffp-contract=off) and vector instructions round as scalar ones do, except the
 * float->bf16 conversions of AVX512-BF16 and AVX-NE-CONVERT, which flush subnormals
 * to zero: those stay off (test sw_compile_bf16_half_round_to_nearest_even).  The CPU goes
 * into the cache key of every kernel library (sw_cxx_host_cpu).  Not on macOS, whose
 * arm64 target already names Apple's cores, nor for a cross target (the arm64 tests
 * under qemu build with the host's clang). */
#if defined(__x86_64__) && !defined(__APPLE__)
#define BUILD_FOR_HOST_CPU 1
#include <cpuid.h>
#else
#define BUILD_FOR_HOST_CPU 0
#endif

/* ------------------------------------------------------------ pure parts */

int sw_cxx_kernel_flags(int instrumented, int darwin, const char **flags, int max) {
    const char *f[SW_CXX_MAX_FLAGS];
    int n = 0;
    f[n++] = "-std=c++17";
    f[n++] = "-O2";
    f[n++] = "-shared";
    f[n++] = "-fPIC";
    f[n++] = "-fno-exceptions";
    f[n++] = "-fno-rtti";
    f[n++] = "-w";
    if (BUILD_FOR_HOST_CPU && !darwin && !(instrumented & 4)) {
        f[n++] = "-march=native";
        f[n++] = "-mno-avx512bf16";
        f[n++] = "-mno-avxneconvert";
    }
    /* MSL's address spaces as clang's (see prelude/metal_stdlib.h): SYCL device mode
     * gives the default address space the rules they need.  It takes __bf16's
     * mangling from an auxiliary target and crashes without one: the host's own. */
    f[n++] = "-Xclang";
    f[n++] = "-fsycl-is-device";
    f[n++] = "-Xclang";
    f[n++] = "-aux-triple";
    f[n++] = "-Xclang";
    f[n++] = darwin ? DARWIN_TRIPLE : HOST_TRIPLE;
    f[n++] = "-Wno-static-float-init"; /* `static const constant float x = 1;` in a class, as Metal allows */
    /* no fused multiply-add unless the kernel asks (fma()): identical results on x86-64 and arm64 */
    f[n++] = "-ffp-contract=off";
    /* MSL's char is signed, and so is C++'s on x86-64 and Apple arm64, but not on arm64 Linux */
    f[n++] = "-fsigned-char";
    /* half and bfloat arithmetic rounds after every operation, as on the GPU */
    f[n++] = "-Xclang";
    f[n++] = "-ffloat16-excess-precision=none";
    f[n++] = "-Xclang";
    f[n++] = "-fbfloat16-excess-precision=none";
    /* line tables (no effect on the code): findings name the .metal line of an
     * access; relative file names stay relative wherever the cache is used from */
    f[n++] = "-gline-tables-only";
    f[n++] = "-fdebug-compilation-dir=.";
    if (darwin) {
        f[n++] = "-undefined"; /* sw_rt_* (and __tsan_*) come from the gdnbench executable */
        f[n++] = "dynamic_lookup";
    }
    if (instrumented & 2) {
        /* The numeric checks (numerics.c): clang's checks of integer arithmetic and
         * of float -> integer conversions call __ubsan_handle_*, which the executable
         * exports as it does the __tsan_* hooks (no UBSan runtime is linked on
         * either platform); each reports and lets the kernel continue.  Truncating
         * conversions are reported by numerics.c only into 8- and 16-bit integers.
         * SW_NUMERICS=1 turns on the prelude's own check of float -> bfloat. */
        f[n++] = "-fsanitize=signed-integer-overflow,integer-divide-by-zero,shift-exponent,float-cast-overflow,"
                 "implicit-integer-truncation";
        f[n++] = "-fsanitize-recover=all";
        f[n++] = "-fno-sanitize-link-runtime";
        f[n++] = "-DSW_NUMERICS=1";
    }
    if (instrumented & 4) {
        /* The counting variant (count.h): the prelude's counting calls; and scalar
         * code for the baseline CPU, so that the IR it counts (an access's width, a
         * block's instructions) is the kernel's and not this host's vector units'. */
        f[n++] = "-DSW_COUNT=1";
        f[n++] = "-fno-vectorize";
        f[n++] = "-fno-slp-vectorize";
        /* What else makes one host's front end write other IR than another's (the
         * counted IR is optimised for one target on every host: ir_target.h):
         * Linux keeps errno for the math functions (a call to exp2f, where Darwin
         * writes llvm.exp2); and the C++ ABI's target variants — ARM's guard
         * variables test one bit, Apple's constructors return `this` — are not the
         * generic Itanium ABI's that x86-64 uses.  Neither reaches outside the
         * kernel library: its interface to the executable is extern "C", and the
         * guard byte means the same to the C++ runtime in both ABIs. */
        f[n++] = "-fno-math-errno";
        f[n++] = "-fc++-abi=itanium";
    }
    if (instrumented & 1) {
        /* Every memory access calls __tsan_*; the executor implements those hooks
         * (tsan_hooks.c).  Never link the TSan runtime itself: on Darwin the driver
         * would put its dylib into the kernel library and the hooks would bind to it.
         * On Linux a -shared link never includes it, so the flag changes nothing there
         * (same bytes with clang 19). */
        f[n++] = "-fsanitize=thread";
        if (!(instrumented & 2)) f[n++] = "-fno-sanitize-link-runtime";
        /* the read of a read-modify-write too (x += y): uninitialised reads and the
         * read side of races are seen there as well */
        f[n++] = "-mllvm";
        f[n++] = "-tsan-instrument-read-before-write";
    }
    int k = 0;
    for (; k < n && k < max; k++) flags[k] = f[k];
    return k;
}

static char host_cpu[256];
static pthread_once_t host_cpu_once = PTHREAD_ONCE_INIT;

/* What clang's -march=native looks at: the vendor, the family/model/stepping
 * signature, the feature words of CPUID leaves 1, 7 and 0x80000001, and the
 * register state the OS enables (XCR0). */
static void find_host_cpu(void) {
#if BUILD_FOR_HOST_CPU
    unsigned a = 0, b = 0, c = 0, d = 0, max = 0;
    char vendor[13] = {0};
    if (!__get_cpuid(0, &max, &b, &c, &d)) return;
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    unsigned l1[4] = {0}, l7[4] = {0}, l71 = 0, ext[2] = {0}, xcr0 = 0;
    __get_cpuid(1, &l1[0], &l1[1], &l1[2], &l1[3]);
    if (max >= 7) {
        __get_cpuid_count(7, 0, &l7[0], &l7[1], &l7[2], &l7[3]);
        __get_cpuid_count(7, 1, &l71, &b, &c, &d);
    }
    __get_cpuid(0x80000001u, &a, &b, &ext[0], &ext[1]); /* leaves ext at 0 where there is no such leaf */
    if (l1[2] & (1u << 27)) { /* OSXSAVE: xgetbv is there */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = lo;
    }
    snprintf(host_cpu, sizeof host_cpu, "x86-64 %s sig=%08x l1=%08x.%08x l7=%08x.%08x.%08x.%08x ext=%08x.%08x xcr0=%08x",
             vendor, l1[0], l1[2], l1[3], l7[1], l7[2], l7[3], l71, ext[0], ext[1], xcr0);
#endif
}

const char *sw_cxx_host_cpu(void) {
    pthread_once(&host_cpu_once, find_host_cpu);
    return host_cpu;
}

int sw_cxx_llvm_major(const char *text, int *apple) {
    if (apple) *apple = 0;
    if (!text) return -1;
    const char *v = strstr(text, "clang version ");
    if (!v) return -1;
    const char *line = v;
    while (line > text && line[-1] != '\n') line--;
    int is_apple = 0;
    for (const char *p = line; p + 5 <= v; p++) is_apple |= strncmp(p, "Apple", 5) == 0;
    const char *num = v + strlen("clang version ");
    if (*num < '0' || *num > '9') return -1;
    int major = atoi(num);
    if (apple) *apple = is_apple;
    if (!is_apple) return major;
    /* Apple clang's major is Xcode's: Xcode 15 = LLVM 16, Xcode 16.0-16.2 = LLVM 17,
     * then Apple clang 17 (Xcode 16.3, Xcode 26) = LLVM 19.  Later ones are at least
     * that far ahead; the probe, not this number, has the last word. */
    return major <= 16 ? major + 1 : major + 2;
}

char *sw_cxx_explain(const char *problem, int macos) {
    msl_buf b = {0};
    msl_buf_printf(&b, "%s; the software Metal device needs clang++ >= %d that compiles __bf16 arithmetic: %s",
                   problem, MIN_LLVM,
                   macos ? "install Xcode 16.3 or later (xcode-select --install for the command-line tools), or "
                           "`brew install llvm` (used from /opt/homebrew/opt/llvm), or set GDNBENCH_CXX to such a "
                           "clang++"
                         : "apt-get install clang-19, or set GDNBENCH_CXX to such a clang++");
    return msl_buf_take(&b);
}

/* ---------------------------------------------------------------- probing */

/* What the prelude needs from the compiler, in miniature: its standard headers,
 * and __bf16 and _Float16 arithmetic with per-operation rounding. */
static const char probe_source[] =
    "#include <limits>\n"
    "#include <stdint.h>\n"
    "#include <type_traits>\n"
    "extern \"C\" float gdnbench_cxx_probe(float a, float b) {\n"
    "    __bf16 x = (__bf16)a, y = (__bf16)b;\n"
    "    _Float16 h = (_Float16)a, k = (_Float16)b;\n"
    "    __bf16 z = x * y + x / y - x;\n"
    "    _Float16 w = h * k + h / k - h;\n"
    "    static_assert(std::is_floating_point<float>::value, \"\");\n"
    "    return (float)z + (float)w + std::numeric_limits<float>::epsilon() + (float)(uint16_t)1;\n"
    "}\n";

/* The first error line of a compiler's stderr (or its first line), at most ~200
 * characters, on one line. */
static char *first_error(const char *text) {
    msl_buf b = {0};
    const char *start = text ? strstr(text, "error:") : NULL;
    if (start) {
        while (start > text && start[-1] != '\n') start--;
    } else {
        start = text ? text : "";
        while (*start == '\n') start++;
    }
    size_t len = strcspn(start, "\n");
    if (len == 0) msl_buf_puts(&b, "it failed without a message");
    else msl_buf_put(&b, start, len > 200 ? 200 : len);
    msl_buf_put(&b, "", 0);
    return msl_buf_take(&b);
}

/* 1 when `path` compiles the probe with the kernels' flags, 0 when not (*why set,
 * malloc'd), -1 when the probe itself could not run (*why set).  The verdict is
 * kept in the cache directory under a hash of the compiler's path, its whole
 * --version text (which names its installation) and the probe. */
static int probe(const char *path, const char *version_text, const char *cache, char **why) {
    const char *all[SW_CXX_MAX_FLAGS], *flags[SW_CXX_MAX_FLAGS];
    int nall = sw_cxx_kernel_flags(0, HOST_DARWIN, all, SW_CXX_MAX_FLAGS), nflags = 0;
    /* without the line tables: on macOS they would make the driver run dsymutil and
     * leave a .dSYM behind, and they do not change what is being asked */
    for (int i = 0; i < nall; i++)
        if (strncmp(all[i], "-g", 2) != 0 && strncmp(all[i], "-fdebug-", 8) != 0) flags[nflags++] = all[i];
    sha256_ctx c;
    uint8_t d[32];
    char hex[65];
    sha256_init(&c);
    sha256_update(&c, "cxx-probe1", 11);
    sha256_update(&c, path, strlen(path) + 1);
    sha256_update(&c, version_text, strlen(version_text) + 1);
    sha256_update(&c, probe_source, sizeof probe_source);
    for (int i = 0; i < nflags; i++) sha256_update(&c, flags[i], strlen(flags[i]) + 1);
    sha256_final(&c, d);
    sha256_to_hex(d, hex);

    char ok_path[4200], bad_path[4200];
    snprintf(ok_path, sizeof ok_path, "%s/cxx-%.24s.ok", cache, hex);
    snprintf(bad_path, sizeof bad_path, "%s/cxx-%.24s.bad", cache, hex);
    if (access(ok_path, F_OK) == 0) return 1;
    char *bad = sw_read_file(bad_path, NULL);
    if (bad) {
        *why = bad;
        return 0;
    }

    char src[4300], obj[4300], errp[4300];
    snprintf(src, sizeof src, "%s/cxx-%.24s-%d.cpp", cache, hex, (int)getpid());
    snprintf(obj, sizeof obj, "%s/cxx-%.24s-%d.so", cache, hex, (int)getpid());
    snprintf(errp, sizeof errp, "%s/cxx-%.24s-%d.err", cache, hex, (int)getpid());
    if (sw_write_file_atomic(src, probe_source, sizeof probe_source - 1) != 0) {
        msl_buf m = {0};
        msl_buf_printf(&m, "cannot write %s", src);
        *why = msl_buf_take(&m);
        return -1;
    }
    char *argv[40];
    int a = 0;
    argv[a++] = (char *)path;
    for (int i = 0; i < nflags; i++) argv[a++] = (char *)flags[i];
    argv[a++] = "-o";
    argv[a++] = obj;
    argv[a++] = src;
    argv[a] = NULL;
    int rc = sw_run_process(argv, NULL, errp);
    int verdict;
    if (rc == 0) {
        verdict = 1;
        (void)sw_write_file_atomic(ok_path, "", 0); /* the cache is best effort */
    } else if (rc < 0) {
        verdict = -1;
        *why = strdup("it does not start");
    } else {
        char *text = sw_read_file(errp, NULL);
        *why = first_error(text);
        free(text);
        verdict = 0;
        if (*why) (void)sw_write_file_atomic(bad_path, *why, strlen(*why));
    }
    unlink(src);
    unlink(obj);
    unlink(errp);
    return verdict;
}

/* ----------------------------------------------------------------- finding */

/* `name --version`, whole, or NULL when it does not run. */
static char *version_of(const char *name) {
    char tmp[] = "/tmp/gdnbench-cxx-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return NULL;
    close(fd);
    char *argv[] = {(char *)name, "--version", NULL};
    int rc = sw_run_process(argv, tmp, NULL);
    char *out = rc == 0 ? sw_read_file(tmp, NULL) : NULL;
    unlink(tmp);
    return out;
}

/* How far a candidate got: the most informative failure is reported. */
enum { CAND_MISSING, CAND_NOT_CLANG, CAND_TOO_OLD, CAND_PROBE_FAILED, CAND_OK };

static int try_candidate(const char *name, const char *cache, sw_cxx *out, char **why) {
    char *text = version_of(name);
    msl_buf m = {0};
    if (!text) return CAND_MISSING;
    char first[256];
    size_t len = strcspn(text, "\n");
    snprintf(first, sizeof first, "%.*s", (int)(len < sizeof first ? len : sizeof first - 1), text);
    int apple = 0, llvm = sw_cxx_llvm_major(text, &apple);
    int result;
    if (llvm < 0) {
        msl_buf_printf(&m, "%s is not clang (%s)", name, first);
        result = CAND_NOT_CLANG;
    } else if (llvm < MIN_LLVM) {
        msl_buf_printf(&m, "%s is %s, LLVM %d", name, first, llvm);
        result = CAND_TOO_OLD;
    } else {
        char *reason = NULL;
        int ok = probe(name, text, cache, &reason);
        if (ok == 1) {
            snprintf(out->path, sizeof out->path, "%s", name);
            snprintf(out->version, sizeof out->version, "%s", first);
            out->llvm_major = llvm;
            result = CAND_OK;
        } else {
            msl_buf_printf(&m, "%s (%s) cannot compile the probe: %s", name, first, reason ? reason : "");
            result = ok == 0 ? CAND_PROBE_FAILED : CAND_NOT_CLANG;
        }
        free(reason);
    }
    free(text);
    msl_buf_put(&m, "", 0);
    if (result == CAND_OK) {
        free(msl_buf_take(&m));
    } else {
        free(*why);
        *why = msl_buf_take(&m);
    }
    return result;
}

static sw_cxx the_cxx;
static char *the_cxx_err;
static pthread_once_t cxx_once = PTHREAD_ONCE_INIT;

static void find_cxx(void) {
    char cache[4096];
    if (sw_cache_dir(cache, sizeof cache, &the_cxx_err) != 0) return;
    char *why = NULL;
    const char *env = getenv("GDNBENCH_CXX");
    if (env && *env) {
        int r = try_candidate(env, cache, &the_cxx, &why);
        if (r == CAND_OK) return;
        msl_buf m = {0};
        msl_buf_printf(&m, "GDNBENCH_CXX=%s: %s", env, r == CAND_MISSING ? "`--version` does not run" : why);
        msl_buf_put(&m, "", 0);
        char *problem = msl_buf_take(&m);
        the_cxx_err = sw_cxx_explain(problem ? problem : "GDNBENCH_CXX", HOST_DARWIN);
        free(problem);
        free(why);
        return;
    }
    /* Debian's versioned names first; on a Mac, Xcode's clang++ on PATH, then
     * Homebrew's llvm, which is keg-only (not on PATH) on Apple Silicon and Intel. */
    static const char *const names[] = {"clang++-19", "clang++-18", "clang++-17", "clang++",
#if HOST_DARWIN
                                        "/opt/homebrew/opt/llvm/bin/clang++", "/usr/local/opt/llvm/bin/clang++",
#endif
                                        NULL};
    int best = CAND_MISSING;
    char *best_why = NULL;
    for (int i = 0; names[i]; i++) {
        int r = try_candidate(names[i], cache, &the_cxx, &why);
        if (r == CAND_OK) {
            free(why);
            free(best_why);
            return;
        }
        if (r > best || (r == best && !best_why && why)) {
            best = r;
            free(best_why);
            best_why = why;
            why = NULL;
        }
    }
    free(why);
    msl_buf m = {0};
    if (best == CAND_MISSING) {
        msl_buf_puts(&m, "no clang++ found (tried");
        for (int i = 0; names[i]; i++) msl_buf_printf(&m, " %s", names[i]);
        msl_buf_puts(&m, ")");
    } else {
        msl_buf_printf(&m, "no usable clang++ found (%s)", best_why);
    }
    msl_buf_put(&m, "", 0);
    char *problem = msl_buf_take(&m);
    the_cxx_err = sw_cxx_explain(problem ? problem : "no clang++ found", HOST_DARWIN);
    free(problem);
    free(best_why);
}

const sw_cxx *sw_cxx_get(char **err) {
    pthread_once(&cxx_once, find_cxx);
    if (the_cxx_err || !the_cxx.path[0]) {
        *err = strdup(the_cxx_err ? the_cxx_err : "no C++ compiler for the software Metal device (clang++ >= 17)");
        return NULL;
    }
    return &the_cxx;
}
