/* compile.c — sw_compile.h: MSL source -> preprocessed, rewritten C++ -> clang++ ->
 * a cached shared object -> dlopen'ed kernel.
 *
 * Cache layout under $GDNBENCH_CACHE_DIR, else $XDG_CACHE_HOME/gdnbench/sw, else
 * ~/.cache/gdnbench/sw:
 *   prelude-<hash>/      the prelude headers and sw_abi.h of this build
 *   pp-<hash>.ii         clang -E output of a source (key: source, file name, compiler)
 *   <hash>.so, <hash>.cpp  one compiled variant (key: generated C++, prelude, ABI
 *                        version, instrumentation, compiler and flags)
 * Every file is written under a temporary name and renamed into place, so
 * concurrent processes share the cache safely. */
#include <dlfcn.h>
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
#include <time.h>
#include <unistd.h>

#include "core/embedded.h"
#include "core/sha256.h"
#include "swmetal/msl_front.h"
#include "swmetal/msl_include.h"
#include "swmetal/sw_compile.h"

extern char **environ;

#define PRELUDE_PREFIX "src/swmetal/prelude/"
#define ABI_HEADER "src/swmetal/sw_abi.h"

typedef struct sw_variant {
    char key[65];
    char *sig;        /* variant_signature(): the same one needs no new C++ or hash */
    void *dl;
} sw_variant;

struct sw_library {
    char *filename;
    msl_unit unit;
    pthread_mutex_t mu;
    sw_variant *variants;
    int nvariants;
};

static uint64_t compile_invocations, compile_cache_hits;

uint64_t sw_compile_invocations(void) { return __atomic_load_n(&compile_invocations, __ATOMIC_RELAXED); }
uint64_t sw_compile_cache_hits(void) { return __atomic_load_n(&compile_cache_hits, __ATOMIC_RELAXED); }

static char *fmt_err(const char *fmt, const char *a, const char *b) {
    msl_buf m = {0};
    msl_buf_printf(&m, fmt, a ? a : "", b ? b : "");
    return msl_buf_take(&m);
}

/* snprintf for paths: a path that does not fit is cut, and the file operation on
 * it then fails with a message naming it. */
static void pathf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------ processes */

/* Runs argv with stdout and stderr sent to files (NULL: /dev/null).  Returns the
 * exit status, or -1 if it could not start. */
static int run_process(char *const argv[], const char *out_path, const char *err_path) {
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

static char *read_file(const char *path, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    msl_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) msl_buf_put(&b, chunk, n);
    fclose(f);
    msl_buf_put(&b, "", 0);
    if (len_out) *len_out = b.len;
    return msl_buf_take(&b);
}

static int write_file_atomic(const char *path, const char *data, size_t len) {
    char tmp[4096];
    pathf(tmp, sizeof tmp, "%s.tmp-%d-%lx", path, (int)getpid(), (unsigned long)pthread_self());
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

static int mkdir_p(const char *path) {
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

/* ------------------------------------------------------------- compiler */

typedef struct compiler {
    char path[512];
    char version[256];    /* first line of --version */
    int major;
    char *err;            /* why none was found */
} compiler;

static compiler the_compiler;
static pthread_once_t compiler_once = PTHREAD_ONCE_INIT;

/* Major version from `clang++ --version` ("... clang version 19.1.7 ..."), or -1. */
static int probe_compiler(const char *name, compiler *c) {
    char tmp[] = "/tmp/gdnbench-cxx-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return -1;
    close(fd);
    char *argv[] = {(char *)name, "--version", NULL};
    int rc = run_process(argv, tmp, NULL);
    char *out = rc == 0 ? read_file(tmp, NULL) : NULL;
    unlink(tmp);
    if (!out) return -1;
    const char *v = strstr(out, "clang version ");
    int major = v ? atoi(v + 14) : -1;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
    snprintf(c->path, sizeof c->path, "%s", name);
    snprintf(c->version, sizeof c->version, "%s", out);
    free(out);
    return major;
}

static void find_compiler(void) {
    compiler *c = &the_compiler;
    const char *env = getenv("GDNBENCH_CXX");
    if (env && *env) {
        int major = probe_compiler(env, c);
        if (major >= 17) {
            c->major = major;
            return;
        }
        c->err = fmt_err(major < 0 ? "GDNBENCH_CXX=%s does not run or is not clang++; the software Metal device "
                                     "needs clang++ >= 17 (apt-get install clang-19)%s"
                                   : "GDNBENCH_CXX=%s is clang older than 17; the software Metal device needs "
                                     "clang++ >= 17 (apt-get install clang-19)%s",
                         env, NULL);
        return;
    }
    static const char *names[] = {"clang++-19", "clang++-18", "clang++-17", "clang++", NULL};
    int best_old = -1;
    for (int i = 0; names[i]; i++) {
        int major = probe_compiler(names[i], c);
        if (major >= 17) {
            c->major = major;
            return;
        }
        if (major > best_old) best_old = major;
    }
    c->path[0] = 0;
    c->err = best_old >= 0 ? strdup("only clang older than 17 was found; the software Metal device needs clang++ >= "
                                    "17 for _Float16/__bf16: apt-get install clang-19 (or set GDNBENCH_CXX)")
                           : strdup("no C++ compiler for the software Metal device: clang++ >= 17 is needed "
                                    "(apt-get install clang-19, or set GDNBENCH_CXX)");
}

static const compiler *get_compiler(char **err) {
    pthread_once(&compiler_once, find_compiler);
    if (the_compiler.err) {
        *err = strdup(the_compiler.err);
        return NULL;
    }
    return &the_compiler;
}

int sw_compiler_info(const char **path, const char **version, char **err) {
    *err = NULL;
    const compiler *cc = get_compiler(err);
    if (!cc) return -1;
    if (path) *path = cc->path;
    if (version) *version = cc->version;
    return 0;
}

/* ---------------------------------------------------------- cache dirs */

static int cache_dir(char *out, size_t n, char **err) {
    const char *d = getenv("GDNBENCH_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (d && *d) pathf(out, n, "%s", d);
    else if (xdg && *xdg) pathf(out, n, "%s/gdnbench/sw", xdg);
    else if (home && *home) pathf(out, n, "%s/.cache/gdnbench/sw", home);
    else pathf(out, n, "/tmp/gdnbench-cache-%d/sw", (int)getuid());
    if (mkdir_p(out) != 0) {
        *err = fmt_err("cannot create the kernel cache directory %s (%s); set GDNBENCH_CACHE_DIR to a writable "
                       "directory",
                       out, strerror(errno));
        return -1;
    }
    return 0;
}

/* Hash of every prelude file and sw_abi.h (names and contents). */
static void prelude_hash(char hex[65]) {
    sha256_ctx c;
    uint8_t d[32];
    sha256_init(&c);
    for (const embedded_file *f = embedded_files; f->path; f++) {
        if (strncmp(f->path, PRELUDE_PREFIX, strlen(PRELUDE_PREFIX)) != 0 && strcmp(f->path, ABI_HEADER) != 0)
            continue;
        sha256_update(&c, f->path, strlen(f->path) + 1);
        sha256_update(&c, f->data, f->len);
    }
    sha256_final(&c, d);
    sha256_to_hex(d, hex);
}

/* Writes the prelude into <cache>/prelude-<hash>/ once; returns that directory. */
static int prelude_dir(const char *cache, char *out, size_t n, char **err) {
    char hex[65];
    prelude_hash(hex);
    pathf(out, n, "%s/prelude-%.16s", cache, hex);
    char marker[4200];
    pathf(marker, sizeof marker, "%s/.complete", out);
    if (access(marker, F_OK) == 0) return 0;
    if (mkdir_p(out) != 0) {
        *err = fmt_err("cannot create %s: %s", out, strerror(errno));
        return -1;
    }
    int found = 0;
    for (const embedded_file *f = embedded_files; f->path; f++) {
        const char *base;
        if (strncmp(f->path, PRELUDE_PREFIX, strlen(PRELUDE_PREFIX)) == 0) base = f->path + strlen(PRELUDE_PREFIX);
        else if (strcmp(f->path, ABI_HEADER) == 0) base = "sw_abi.h";
        else continue;
        found++;
        char path[4200];
        pathf(path, sizeof path, "%s/%s", out, base);
        if (write_file_atomic(path, f->data, f->len) != 0) {
            *err = fmt_err("cannot write %s: %s", path, strerror(errno));
            return -1;
        }
    }
    if (found < 2) {
        *err = strdup("this gdnbench build does not embed the MSL prelude (src/swmetal/prelude/*.h and "
                      "src/swmetal/sw_abi.h); rebuild with make");
        return -1;
    }
    return write_file_atomic(marker, "", 0);
}

/* ------------------------------------------------------- diagnostics */

/* clang's stderr from the first error on (warnings and include chains before it
 * dropped), at most ~4 KB; names .metal lines thanks to the line markers. */
static char *compiler_message(const char *stderr_path, const char *what) {
    char *text = read_file(stderr_path, NULL);
    msl_buf b = {0};
    if (!text || !*text) {
        msl_buf_printf(&b, "%s failed without a message", what);
    } else {
        const char *e = strstr(text, ": error:");
        const char *start = text;
        if (e) {
            while (e > text && e[-1] != '\n') e--;
            start = e;
        }
        size_t len = strlen(start);
        while (len > 0 && (start[len - 1] == '\n' || start[len - 1] == ' ')) len--;
        if (len > 4000) {
            msl_buf_put(&b, start, 4000);
            msl_buf_puts(&b, "\n... (more compiler output truncated)");
        } else {
            msl_buf_put(&b, start, len);
        }
    }
    free(text);
    return msl_buf_take(&b);
}

/* ------------------------------------------------------- preprocessing */

static char *preprocess(const compiler *cc, const char *cache, const char *prepared, const char *filename,
                        char **err) {
    sha256_ctx c;
    uint8_t d[32];
    char hex[65];
    sha256_init(&c);
    sha256_update(&c, "pp1", 4);
    sha256_update(&c, prepared, strlen(prepared) + 1);
    sha256_update(&c, filename, strlen(filename) + 1);
    sha256_update(&c, cc->path, strlen(cc->path) + 1);
    sha256_update(&c, cc->version, strlen(cc->version) + 1);
    sha256_final(&c, d);
    sha256_to_hex(d, hex);
    char ii[4200], src[4200], errp[4200];
    pathf(ii, sizeof ii, "%s/pp-%.32s.ii", cache, hex);
    char *cached = read_file(ii, NULL);
    if (cached) return cached;
    pathf(src, sizeof src, "%s/pp-%.32s.tmp-%d.metal.cpp", cache, hex, (int)getpid());
    pathf(errp, sizeof errp, "%s.err", src);
    char out_tmp[4300];
    pathf(out_tmp, sizeof out_tmp, "%s.out", src);
    if (write_file_atomic(src, prepared, strlen(prepared)) != 0) {
        *err = fmt_err("cannot write %s: %s", src, strerror(errno));
        return NULL;
    }
    char *argv[] = {(char *)cc->path,
                    "-E",
                    "-x",
                    "c++",
                    "-std=c++17",
                    "-D__METAL_VERSION__=310",
                    "-D__HAVE_BFLOAT__=1",
                    "-D__HAVE_SIMDGROUP_MATRIX__=1",
                    src,
                    NULL};
    __atomic_fetch_add(&compile_invocations, 1, __ATOMIC_RELAXED);
    int rc = run_process(argv, out_tmp, errp);
    char *text = NULL;
    if (rc != 0) *err = compiler_message(errp, "preprocessing the MSL source");
    else if (!(text = read_file(out_tmp, NULL))) *err = fmt_err("cannot read %s%s", out_tmp, NULL);
    if (text) (void)rename(out_tmp, ii); /* the cache is best effort */
    unlink(src);
    unlink(errp);
    unlink(out_tmp);
    return text;
}

/* ------------------------------------------------------------ variants */

static void variant_key(const compiler *cc, const char *cpp, int instr, char hex[65]) {
    char ph[65];
    prelude_hash(ph);
    sha256_ctx c;
    uint8_t d[32];
    sha256_init(&c);
    char hdr[128];
    snprintf(hdr, sizeof hdr, "variant1 abi=%d instr=%d", SW_ABI_VERSION, instr);
    sha256_update(&c, hdr, strlen(hdr) + 1);
    sha256_update(&c, ph, 64);
    sha256_update(&c, cc->path, strlen(cc->path) + 1);
    sha256_update(&c, cc->version, strlen(cc->version) + 1);
    sha256_update(&c, cpp, strlen(cpp) + 1);
    sha256_final(&c, d);
    sha256_to_hex(d, hex);
}

/* The compiler's target triple (`-dumpmachine`), given again as SYCL's auxiliary
 * target: in SYCL device mode clang takes __bf16's mangling from the auxiliary
 * target and crashes when there is none.  "" when it cannot be asked. */
static char target_triple[128];
static pthread_once_t triple_once = PTHREAD_ONCE_INIT;

static void find_triple(void) {
    char tmp[] = "/tmp/gdnbench-triple-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return;
    close(fd);
    char *argv[] = {the_compiler.path, "-dumpmachine", NULL};
    char *out = run_process(argv, tmp, NULL) == 0 ? read_file(tmp, NULL) : NULL;
    unlink(tmp);
    if (!out) return;
    out[strcspn(out, "\r\n")] = 0;
    snprintf(target_triple, sizeof target_triple, "%s", out);
    free(out);
}

/* Compiles cpp into <cache>/<key>.so unless it is already there. */
static int build_variant(const compiler *cc, const char *cache, const char *cpp, int instr, const char *key,
                         char *so_path, size_t n, char **err) {
    pathf(so_path, n, "%s/%s.so", cache, key);
    if (access(so_path, F_OK) == 0) {
        __atomic_fetch_add(&compile_cache_hits, 1, __ATOMIC_RELAXED);
        return 0;
    }
    char pdir[4200], cpp_path[4300], tmp_so[4300], errp[4300], incl[4300];
    if (prelude_dir(cache, pdir, sizeof pdir, err)) return -1;
    pathf(cpp_path, sizeof cpp_path, "%s/%s.cpp", cache, key);
    pathf(tmp_so, sizeof tmp_so, "%s/%s.so.tmp-%d-%lx", cache, key, (int)getpid(), (unsigned long)pthread_self());
    pathf(errp, sizeof errp, "%s.err", tmp_so);
    pathf(incl, sizeof incl, "-I%s", pdir);
    if (write_file_atomic(cpp_path, cpp, strlen(cpp)) != 0) {
        *err = fmt_err("cannot write %s: %s", cpp_path, strerror(errno));
        return -1;
    }
    char *argv[32];
    int a = 0;
    argv[a++] = (char *)cc->path;
    argv[a++] = "-std=c++17";
    argv[a++] = "-O2";
    argv[a++] = "-shared";
    argv[a++] = "-fPIC";
    argv[a++] = "-fno-exceptions";
    argv[a++] = "-fno-rtti";
    argv[a++] = "-w";
    /* MSL's address spaces: see prelude/metal_stdlib.h (SYCL device rules for them) */
    argv[a++] = "-Xclang";
    argv[a++] = "-fsycl-is-device";
    pthread_once(&triple_once, find_triple);
    if (target_triple[0]) {
        argv[a++] = "-Xclang";
        argv[a++] = "-aux-triple";
        argv[a++] = "-Xclang";
        argv[a++] = target_triple;
    }
    argv[a++] = "-Wno-static-float-init";   /* `static const constant float x = 1;` in a class, as Metal allows */
    /* no fused multiply-add unless the kernel asks (fma()): identical results on x86-64 and arm64 */
    argv[a++] = "-ffp-contract=off";
    /* half and bfloat arithmetic rounds after every operation, as on the GPU */
    argv[a++] = "-Xclang";
    argv[a++] = "-ffloat16-excess-precision=none";
    argv[a++] = "-Xclang";
    argv[a++] = "-fbfloat16-excess-precision=none";
#ifdef __APPLE__
    argv[a++] = "-undefined";   /* sw_rt_* come from the gdnbench executable */
    argv[a++] = "dynamic_lookup";
#endif
    if (instr == SW_INSTR_FULL) {
        /* every memory access calls __tsan_*; the executor implements those hooks */
        argv[a++] = "-fsanitize=thread";
    }
    argv[a++] = incl;
    argv[a++] = "-o";
    argv[a++] = tmp_so;
    argv[a++] = cpp_path;
    argv[a] = NULL;
    __atomic_fetch_add(&compile_invocations, 1, __ATOMIC_RELAXED);
    int rc = run_process(argv, NULL, errp);
    if (rc != 0) {
        *err = rc < 0 ? fmt_err("cannot run %s: %s", cc->path, strerror(errno))
                      : compiler_message(errp, "compiling the kernel");
        unlink(errp);
        unlink(tmp_so);
        return -1;
    }
    unlink(errp);
    if (rename(tmp_so, so_path) != 0) {
        *err = fmt_err("cannot move the compiled kernel into %s: %s", so_path, strerror(errno));
        unlink(tmp_so);
        return -1;
    }
    return 0;
}

/* The key of a variant and, when it is not loaded in this library yet, its .so on
 * disk (compiled if needed).  Returns 1 with *loaded set when already loaded, 0
 * with so_path filled, -1 on error. */
/* What the generated C++ of a variant depends on besides the library: the
 * instrumentation and the values given for the constants the source declares.
 * Malloc'd, NULL when out of memory. */
static char *variant_signature(const sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr) {
    msl_buf b = {0};
    msl_buf_printf(&b, "instr=%d", instr);
    for (int i = 0; i < lib->unit.nconstants; i++) {
        const sw_fc_value *v = NULL;
        for (int j = 0; j < nfcs; j++)
            if (fcs[j].index == lib->unit.constants[i].index) v = &fcs[j];
        if (v) msl_buf_printf(&b, ";%d=%d:%llx", v->index, v->type, (unsigned long long)v->v.u);
        else msl_buf_printf(&b, ";%d", lib->unit.constants[i].index);
    }
    return msl_buf_take(&b);
}

static int prepare_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, char key[65],
                           void **loaded, char *so_path, size_t n, char **err) {
    const compiler *cc = get_compiler(err);
    if (!cc) return -1;
    /* a variant already loaded for the same signature: no C++ to generate (MLX's
     * libraries have thousands of kernels; the compile command asks for each) */
    char *sig = loaded ? variant_signature(lib, fcs, nfcs, instr) : NULL;
    for (int i = 0; sig && i < lib->nvariants; i++) {
        if (lib->variants[i].sig && strcmp(lib->variants[i].sig, sig) == 0) {
            free(sig);
            memcpy(key, lib->variants[i].key, 65);
            __atomic_fetch_add(&compile_cache_hits, 1, __ATOMIC_RELAXED);
            *loaded = lib->variants[i].dl;
            return 1;
        }
    }
    free(sig);
    char *cpp = msl_front_emit(&lib->unit, fcs, nfcs, err);
    if (!cpp) return -1;
    variant_key(cc, cpp, instr, key);
    for (int i = 0; loaded && i < lib->nvariants; i++) {
        if (strcmp(lib->variants[i].key, key) == 0) {
            free(cpp);
            __atomic_fetch_add(&compile_cache_hits, 1, __ATOMIC_RELAXED);
            *loaded = lib->variants[i].dl;
            return 1;
        }
    }
    char cache[4096];
    int rc = cache_dir(cache, sizeof cache, err) || build_variant(cc, cache, cpp, instr, key, so_path, n, err);
    free(cpp);
    return rc ? -1 : 0;
}

int sw_library_compile_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, char *so_path,
                               size_t n, char **err) {
    *err = NULL;
    char key[65];
    pthread_mutex_lock(&lib->mu);
    int rc = prepare_variant(lib, fcs, nfcs, instr, key, NULL, so_path, n, err);
    pthread_mutex_unlock(&lib->mu);
    return rc < 0 ? -1 : 0;
}

/* Loads (or finds loaded) the variant for these constants.  Caller holds lib->mu. */
static void *load_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, char **err) {
    char key[65], so[4300];
    void *loaded = NULL;
    int rc = prepare_variant(lib, fcs, nfcs, instr, key, &loaded, so, sizeof so, err);
    if (rc < 0) return NULL;
    if (rc == 1) return loaded;
    /* RTLD_NOW: the binary exports every sw_rt_* and __tsan_* hook (-rdynamic), so
     * a missing symbol fails here, at load, instead of in the middle of a dispatch. */
    void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        *err = fmt_err("cannot load the compiled kernel library: %s%s", dlerror(), NULL);
        return NULL;
    }
    const int *abi = dlsym(dl, "sw_abi_version");
    if (!abi || *abi != SW_ABI_VERSION || !dlsym(dl, "sw_kernels")) {
        dlclose(dl);
        *err = fmt_err("compiled kernel library %s has a different ABI version; delete the cache directory%s", so,
                       NULL);
        return NULL;
    }
    sw_variant *v = realloc(lib->variants, sizeof *v * (size_t)(lib->nvariants + 1));
    if (!v) {
        dlclose(dl);
        *err = strdup("out of memory");
        return NULL;
    }
    lib->variants = v;
    memcpy(v[lib->nvariants].key, key, sizeof key);
    v[lib->nvariants].sig = variant_signature(lib, fcs, nfcs, instr);
    v[lib->nvariants].dl = dl;
    lib->nvariants++;
    return dl;
}

/* ------------------------------------------------------------------ API */

sw_library *sw_library_create(const char *source, const char *filename, char **err) {
    return sw_library_create_opts(source, filename, NULL, err);
}

sw_library *sw_library_create_opts(const char *source, const char *filename, const msl_source_opts *opts,
                                   char **err) {
    *err = NULL;
    if (!filename || !*filename) filename = "source.metal";
    const compiler *cc = get_compiler(err);
    if (!cc) return NULL;
    char cache[4096];
    if (cache_dir(cache, sizeof cache, err)) return NULL;
    /* the headers are inlined first, so the preprocessing cache key covers them */
    char *prepared = msl_expand_source(source, filename, opts, MSL_EXPAND_SOFTWARE, err);
    if (!prepared) return NULL;
    char *pp = preprocess(cc, cache, prepared, filename, err);
    free(prepared);
    if (!pp) return NULL;
    sw_library *lib = calloc(1, sizeof *lib);
    if (!lib || !(lib->filename = strdup(filename))) {
        free(lib);
        free(pp);
        *err = strdup("out of memory");
        return NULL;
    }
    pthread_mutex_init(&lib->mu, NULL);
    int rc = msl_front_parse(pp, filename, &lib->unit, err);
    free(pp);
    if (rc != 0) {
        sw_library_free(lib);
        return NULL;
    }
    /* compile the variant without constants now, so errors surface here as on Metal */
    if (!load_variant(lib, NULL, 0, SW_INSTR_NONE, err)) {
        sw_library_free(lib);
        return NULL;
    }
    return lib;
}

void sw_library_free(sw_library *lib) {
    if (!lib) return;
    for (int i = 0; i < lib->nvariants; i++) {
        dlclose(lib->variants[i].dl);
        free(lib->variants[i].sig);
    }
    free(lib->variants);
    msl_unit_free(&lib->unit);
    pthread_mutex_destroy(&lib->mu);
    free(lib->filename);
    free(lib);
}

int sw_library_kernel_count(const sw_library *lib) { return lib->unit.nkernels; }

const char *sw_library_kernel_name(const sw_library *lib, int i) {
    return i >= 0 && i < lib->unit.nkernels ? lib->unit.kernels[i].host_name : NULL;
}

int sw_library_constant_count(const sw_library *lib) { return lib->unit.nconstants; }

int sw_library_constant(const sw_library *lib, int i, int *index, int *type, const char **name) {
    if (i < 0 || i >= lib->unit.nconstants) return -1;
    if (index) *index = lib->unit.constants[i].index;
    if (type) *type = lib->unit.constants[i].type;
    if (name) *name = lib->unit.constants[i].name;
    return 0;
}

int sw_library_constant_info(const sw_library *lib, int i, int *index, int *type, const char **name, int *required) {
    if (sw_library_constant(lib, i, index, type, name) != 0) return -1;
    if (required) *required = !lib->unit.constants[i].tested;
    return 0;
}

const char *sw_fc_type_name(int type) { return msl_fc_type_name(type); }

int sw_library_get_kernel(sw_library *lib, const char *name, const sw_fc_value *fcs, int nfcs, int instr,
                          sw_kernel *out, char **err) {
    *err = NULL;
    int found = 0;
    for (int i = 0; i < lib->unit.nkernels; i++) found |= strcmp(lib->unit.kernels[i].host_name, name) == 0;
    if (!found) {
        msl_buf b = {0};
        msl_buf_printf(&b, "no kernel named '%s' in %s; it has:", name, lib->filename);
        for (int i = 0; i < lib->unit.nkernels; i++) msl_buf_printf(&b, " %s", lib->unit.kernels[i].host_name);
        if (lib->unit.nkernels == 0) msl_buf_puts(&b, " none");
        *err = msl_buf_take(&b);
        return -1;
    }
    pthread_mutex_lock(&lib->mu);
    void *dl = load_variant(lib, fcs, nfcs, instr, err);
    pthread_mutex_unlock(&lib->mu);
    if (!dl) return -1;
    const sw_kernel_info *k = dlsym(dl, "sw_kernels");
    for (; k && k->name; k++) {
        if (strcmp(k->name, name) == 0) {
            *out = (sw_kernel){k, dl, instr};
            return 0;
        }
    }
    *err = fmt_err("kernel '%s' is missing from its compiled library %s", name, lib->filename);
    return -1;
}
