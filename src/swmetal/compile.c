/* compile.c — sw_compile.h: MSL source -> preprocessed, rewritten C++ -> clang++ ->
 * a cached shared object -> dlopen'ed kernel.
 *
 * Cache layout under $GDNBENCH_CACHE_DIR, else $XDG_CACHE_HOME/gdnbench/sw, else
 * ~/.cache/gdnbench/sw:
 *   prelude-<hash>/      the prelude headers and sw_abi.h of this build
 *   pp-<hash>.ii         clang -E output of a source (key: source, file name, compiler)
 *   <hash>.so, <hash>.cpp  one compiled variant (key: generated C++, prelude, ABI
 *                        version, instrumentation, compiler and flags, host CPU)
 *   <hash>.checked       a source that passed clang -fsyntax-only
 *   fe-<hash>.front      the front end's result for a source, vk-<hash>.vkey the
 *                        variant key a signature leads to (front_cache.h): a warm
 *                        run finds its variants without the front end or its C++
 *   cxx-<hash>.ok|.bad   whether a compiler passed the probe (cxx.c)
 * Every file is written under a temporary name (process and thread) and renamed
 * into place, so concurrent processes and threads share the cache safely.  Where
 * the time goes is counted in compile_stats.c (clang's own -ftime-trace); the clang
 * runs of one variant's build, the IR stage's included, are clang_step.c's. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/embedded.h"
#include "core/sha256.h"
#include "swmetal/clang_step.h"
#include "swmetal/compile_stats.h"
#include "swmetal/cxx.h"
#include "swmetal/front_cache.h"
#include "swmetal/ir_pass.h"
#include "swmetal/msl_front.h"
#include "msl/msl_include.h"
#include "swmetal/sw_compile.h"
#include "swmetal/sw_files.h"
#include "swmetal/symbolize.h"

#define PRELUDE_PREFIX "src/swmetal/prelude/"
#define ABI_HEADER "src/swmetal/sw_abi.h"

typedef struct sw_variant {
    char key[65];
    char *sig;        /* variant_signature(): the same one needs no new C++ or hash */
    void *dl;
    char *so_path;           /* registered with the symbolizer (symbolize.h) */
} sw_variant;

/* A variant being built on a thread of its own (prebuild_lanes), so that a
 * library's lanes and fibers builds run side by side.  Owned by the library;
 * claimed by prepare_variant when it comes to that key. */
typedef struct sw_pending {
    int started, joined;
    pthread_t th;
    const sw_cxx *cc;
    char key[65];
    char *cpp;
    int instr, mode, rc;
    char so_path[4300];
    char *err;
} sw_pending;

struct sw_library {
    char *filename;
    char *source;            /* the text as given: findings quote its lines */
    msl_unit unit;
    pthread_mutex_t mu;
    sw_variant *variants;
    int nvariants;
    int sync_free;               /* msl_text_sync_free of the preprocessed source */
    int atomic_free;             /* msl_text_atomic_free of it */
    char *lanes_text;            /* msl_lanes_rewrite of the unit, NULL when not eligible */
    char *lanes_why;             /* why not (GDNBENCH_SW_DEBUG), or why its compile failed */
    sw_pending pending;          /* the lanes build running beside the fibers build */
    char fe_key[65];             /* its front-end cache key (front_cache.h), "" when none */
};

static uint64_t compile_cache_hits;

uint64_t sw_compile_cache_hits(void) { return __atomic_load_n(&compile_cache_hits, __ATOMIC_RELAXED); }


/* ------------------------------------------------------------- compiler */

typedef sw_cxx compiler;

static const compiler *get_compiler(char **err) { return sw_cxx_get(err); }

int sw_compiler_info(const char **path, const char **version, char **err) {
    *err = NULL;
    const compiler *cc = get_compiler(err);
    if (!cc) return -1;
    if (path) *path = cc->path;
    if (version) *version = cc->version;
    return 0;
}

/* ---------------------------------------------------------- cache dirs */

/* Hash of every prelude file and sw_abi.h (names and contents), once a process:
 * the files are the binary's own. */
static char prelude_hex[65];
static pthread_once_t prelude_once = PTHREAD_ONCE_INIT;

static void prelude_hash_once(void) {
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
    sha256_to_hex(d, prelude_hex);
}

static void prelude_hash(char hex[65]) {
    pthread_once(&prelude_once, prelude_hash_once);
    memcpy(hex, prelude_hex, 65);
}

/* Writes the prelude into <cache>/prelude-<hash>/ once; returns that directory. */
static int prelude_dir(const char *cache, char *out, size_t n, char **err) {
    char hex[65];
    prelude_hash(hex);
    sw_pathf(out, n, "%s/prelude-%.16s", cache, hex);
    char marker[4200];
    sw_pathf(marker, sizeof marker, "%s/.complete", out);
    if (access(marker, F_OK) == 0) return 0;
    if (sw_mkdir_p(out) != 0) {
        *err = sw_fmt_err("cannot create %s: %s", out, strerror(errno));
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
        sw_pathf(path, sizeof path, "%s/%s", out, base);
        if (sw_write_file_atomic(path, f->data, f->len) != 0) {
            *err = sw_fmt_err("cannot write %s: %s", path, strerror(errno));
            return -1;
        }
    }
    if (found < 2) {
        *err = strdup("this gdnbench build does not embed the MSL prelude (src/swmetal/prelude/*.h and "
                      "src/swmetal/sw_abi.h); rebuild with make");
        return -1;
    }
    return sw_write_file_atomic(marker, "", 0);
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
    sw_pathf(ii, sizeof ii, "%s/pp-%.32s.ii", cache, hex);
    char *cached = sw_read_file(ii, NULL);
    if (cached) return cached;
    sw_pathf(src, sizeof src, "%s/pp-%.32s.tmp-%d.metal.cpp", cache, hex, (int)getpid());
    sw_pathf(errp, sizeof errp, "%s.err", src);
    char out_tmp[4300];
    sw_pathf(out_tmp, sizeof out_tmp, "%s.out", src);
    if (sw_write_file_atomic(src, prepared, strlen(prepared)) != 0) {
        *err = sw_fmt_err("cannot write %s: %s", src, strerror(errno));
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
    sw_clang_invoked();
    int rc = sw_run_process(argv, out_tmp, errp);
    char *text = NULL;
    if (rc != 0) *err = sw_clang_message(errp, "preprocessing the MSL source");
    else if (!(text = sw_read_file(out_tmp, NULL))) *err = sw_fmt_err("cannot read %s%s", out_tmp, NULL);
    if (text) (void)rename(out_tmp, ii); /* the cache is best effort */
    unlink(src);
    unlink(errp);
    unlink(out_tmp);
    return text;
}

/* ------------------------------------------------------------ variants */

/* What a variant is for, as the compile statistics name it (compile_stats.h). */
static int variant_kind(int instr, int mode) {
    switch (mode) {
    case BUILD_CHECK: return SW_KIND_LIBRARY;
    case BUILD_LISTING: return SW_KIND_LISTING;
    case BUILD_LANES: return SW_KIND_LANES;
    default: return instr == SW_INSTR_FULL ? SW_KIND_FULL_CHECKS : SW_KIND_FIBERS;
    }
}

/* Libraries with more kernels than this are checked whole when created and
 * compiled one kernel at a time when a pipeline asks for one (MLX's files
 * instantiate hundreds to thousands of kernels from a few templates: the
 * optimiser takes many minutes over all of them and seconds over one).
 * GDNBENCH_SW_WHOLE_LIBRARY_MAX=N overrides it; tests set 0 to put small sources
 * on the per-kernel path. */
#define SW_WHOLE_LIBRARY_MAX 16

static int whole_library_max(void) {
    const char *e = getenv("GDNBENCH_SW_WHOLE_LIBRARY_MAX");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == 0 && v >= 0 && v < 1000000) return (int)v;
    }
    return SW_WHOLE_LIBRARY_MAX;
}

static int per_kernel(const sw_library *lib) { return lib->unit.nkernels > whole_library_max(); }

/* Whether creating the library builds the variant a run of it will load: one
 * kernel and no function constants (the host's constants make another variant, and
 * a library of several kernels runs one of them at a time).  Otherwise creation
 * only checks the source (clang -fsyntax-only, errors surface there as on Metal)
 * and each kernel is built for its constants when a function asks for it. */
static int create_builds(const sw_library *lib) {
    return !per_kernel(lib) && lib->unit.nkernels <= 1 && lib->unit.nconstants == 0;
}

/* What a variant's key hashes besides its C++: the ABI version, instrumentation
 * and mode, the prelude, the compiler, the host CPU and the flags. */
static void key_begin(sha256_ctx *c, const char *tag, const compiler *cc, int instr, int mode) {
    char ph[65];
    prelude_hash(ph);
    sha256_init(c);
    char hdr[512];
    char ir[256] = "";
    if (mode != BUILD_CHECK) sw_ir_pass_signature(instr, ir, sizeof ir);
    snprintf(hdr, sizeof hdr, "%s abi=%d instr=%d mode=%d%s%s", tag, SW_ABI_VERSION, instr, mode, *ir ? " ir=" : "",
             ir);
    sha256_update(c, hdr, strlen(hdr) + 1);
    sha256_update(c, ph, 64);
    sha256_update(c, cc->path, strlen(cc->path) + 1);
    sha256_update(c, cc->version, strlen(cc->version) + 1);
    const char *cpu = sw_cxx_host_cpu();
    sha256_update(c, cpu, strlen(cpu) + 1);
    const char *flags[SW_CXX_MAX_FLAGS];
    int nflags = sw_clang_flags(instr, mode, flags, SW_CXX_MAX_FLAGS);
    for (int i = 0; i < nflags; i++) sha256_update(c, flags[i], strlen(flags[i]) + 1);
}

static void key_end(sha256_ctx *c, char hex[65]) {
    uint8_t d[32];
    sha256_final(c, d);
    sha256_to_hex(d, hex);
}

static void variant_key(const compiler *cc, const char *cpp, int instr, int mode, char hex[65]) {
    sha256_ctx c;
    key_begin(&c, "variant3", cc, instr, mode);
    sha256_update(&c, cpp, strlen(cpp) + 1);
    key_end(&c, hex);
}

/* On macOS the driver runs dsymutil after linking with -g: the line tables land in
 * TMP.dSYM/Contents/Resources/DWARF/<TMP's name>.  They follow the library to its
 * final name, where the symbolizer looks for them (best effort: without them
 * findings only lack source lines). */
static void move_dsym(const char *tmp_so, const char *so_path) {
#ifdef __APPLE__
    char from[4400], to[4400], inner_from[4600], inner_to[4600];
    const char *tb = strrchr(tmp_so, '/'), *sb = strrchr(so_path, '/');
    tb = tb ? tb + 1 : tmp_so;
    sb = sb ? sb + 1 : so_path;
    sw_pathf(from, sizeof from, "%s.dSYM", tmp_so);
    sw_pathf(to, sizeof to, "%s.dSYM", so_path);
    sw_pathf(inner_from, sizeof inner_from, "%s/Contents/Resources/DWARF/%s", from, tb);
    sw_pathf(inner_to, sizeof inner_to, "%s/Contents/Resources/DWARF/%s", from, sb);
    if (access(from, F_OK) != 0) return;
    if (rename(inner_from, inner_to) != 0 || rename(from, to) != 0) {
        char *argv[] = {"rm", "-rf", from, NULL};
        sw_run_process(argv, NULL, NULL);
    }
#else
    (void)tmp_so;
    (void)so_path;
#endif
}

/* Compiles cpp into <cache>/<key>.so (BUILD_CHECK: checks it and writes
 * <key>.checked) unless that is already there. */
static int build_variant(const compiler *cc, const char *cache, const char *cpp, int instr, int mode,
                         const char *key, char *so_path, size_t n, char **err) {
    sw_pathf(so_path, n, "%s/%s.%s", cache, key, mode == BUILD_CHECK ? "checked" : "so");
    if (access(so_path, F_OK) == 0) {
        __atomic_fetch_add(&compile_cache_hits, 1, __ATOMIC_RELAXED);
        sw_stats_add_cached(variant_kind(instr, mode));
        return 0;
    }
    char pdir[4200], cpp_path[4300], tmp_so[4300], incl[4300], failed[4300];
    /* A lanes variant that did not compile is remembered (the key hashes its C++ and
     * the compiler): the device runs the library's fibers instead, and every later
     * process would otherwise pay for the same failed compile. */
    sw_pathf(failed, sizeof failed, "%s/%s.lanes-failed", cache, key);
    if (mode == BUILD_LANES && access(failed, F_OK) == 0) {
        char *msg = sw_read_file(failed, NULL);
        *err = msg ? msg : strdup("its C++ did not compile (an earlier run)");
        return -1;
    }
    if (prelude_dir(cache, pdir, sizeof pdir, err)) return -1;
    sw_pathf(cpp_path, sizeof cpp_path, "%s/%s.cpp", cache, key);
    sw_pathf(tmp_so, sizeof tmp_so, "%s.tmp-%d-%lx", so_path, (int)getpid(), (unsigned long)pthread_self());
    sw_pathf(incl, sizeof incl, "-I%s", pdir);
    if (sw_write_file_atomic(cpp_path, cpp, strlen(cpp)) != 0) {
        *err = sw_fmt_err("cannot write %s: %s", cpp_path, strerror(errno));
        return -1;
    }
    const build_step b = {cc, instr, mode, incl, tmp_so, key};
    const sw_ir_pass *passes[SW_IR_MAX_PASSES];
    int npasses = mode == BUILD_CHECK ? 0 : sw_ir_passes(instr, passes, SW_IR_MAX_PASSES);
    sw_clang_times times = {-1, -1, -1, -1};
    double wall = 0;
    int rc = npasses || (mode != BUILD_CHECK && sw_ir_roundtrip())
                 ? sw_clang_through_ir(&b, passes, npasses, cpp_path, tmp_so, &times, &wall, err)
                 : sw_clang_step(&b, NULL, 0, mode == BUILD_CHECK ? NULL : tmp_so, cpp_path, &times, &wall, err);
    /* clang writes no trace for -fsyntax-only: a syntax check is front end through and through */
    if (mode == BUILD_CHECK && times.execute_s < 0) {
        times.execute_s = times.frontend_s = wall;
        times.optimise_s = times.backend_s = 0;
    }
    sw_stats_add_compile(variant_kind(instr, mode), wall, &times);
    if (rc != 0) {
        unlink(tmp_so);
        if (mode == BUILD_LANES && rc == 1) (void)sw_write_file_atomic(failed, *err, strlen(*err));
        return -1;
    }
    if (mode == BUILD_CHECK) {
        unlink(cpp_path); /* only the verdict is kept */
        if (sw_write_file_atomic(so_path, "", 0) != 0) {
            *err = sw_fmt_err("cannot write %s: %s", so_path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (rename(tmp_so, so_path) != 0) {
        *err = sw_fmt_err("cannot move the compiled kernel into %s: %s", so_path, strerror(errno));
        unlink(tmp_so);
        return -1;
    }
    move_dsym(tmp_so, so_path);
    return 0;
}

/* GDNBENCH_SW_KEEP_CPP=DIR also writes each variant's C++ as DIR/<key>.cpp, cache hit
 * or not, so that tests/cli/test_macos_cross.sh can compile exactly what this build
 * generates for another target.  Best effort: a test that finds nothing there fails. */
static void keep_cpp(const char *cpp, const char *key) {
    const char *dir = getenv("GDNBENCH_SW_KEEP_CPP");
    if (!dir || !*dir || sw_mkdir_p(dir) != 0) return;
    char path[4200];
    sw_pathf(path, sizeof path, "%s/%s.cpp", dir, key);
    (void)sw_write_file_atomic(path, cpp, strlen(cpp));
}

/* What the generated C++ of a variant depends on besides the library: the build,
 * the kernel (per-kernel variants), the instrumentation and the values given for
 * the constants the source declares.  Malloc'd, NULL when out of memory. */
static char *variant_signature(const sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, int only,
                               int mode) {
    msl_buf b = {0};
    msl_buf_printf(&b, "instr=%d;only=%d;mode=%d", instr, only, mode);
    for (int i = 0; i < lib->unit.nconstants; i++) {
        const sw_fc_value *v = NULL;
        for (int j = 0; j < nfcs; j++)
            if (fcs[j].index == lib->unit.constants[i].index) v = &fcs[j];
        if (v) msl_buf_printf(&b, ";%d=%d:%llx", v->index, v->type, (unsigned long long)v->v.u);
        else msl_buf_printf(&b, ";%d", lib->unit.constants[i].index);
    }
    return msl_buf_take(&b);
}

static void *pending_main(void *arg) {
    sw_pending *p = arg;
    char cache[4096];
    p->rc = sw_cache_dir(cache, sizeof cache, &p->err) ||
            build_variant(p->cc, cache, p->cpp, p->instr, p->mode, p->key, p->so_path, sizeof p->so_path, &p->err);
    return NULL;
}

static void pending_wait(sw_pending *p) {
    if (p->started && !p->joined) {
        pthread_join(p->th, NULL);
        p->joined = 1;
    }
}

/* Hands over the pending build's outcome (as build_variant's) and forgets it. */
static int pending_claim(sw_pending *p, char *so_path, size_t n, char **err) {
    pending_wait(p);
    int rc = p->rc ? -1 : 0;
    if (rc == 0) sw_pathf(so_path, n, "%s", p->so_path);
    else *err = p->err ? p->err : strdup("building the variant failed");
    free(p->cpp);
    memset(p, 0, sizeof *p);
    return rc;
}

static void pending_free(sw_pending *p) {
    pending_wait(p);
    free(p->cpp);
    free(p->err);
    memset(p, 0, sizeof *p);
}

/* The key under which the variant key of (this library's front-end result, a
 * variant signature) is kept: what variant_key hashes, with the front-end key and
 * the signature in place of the C++ they generate.  0 when the library has no
 * front-end key, or GDNBENCH_SW_KEEP_CPP asks for every variant's C++. */
static int alias_key(const sw_library *lib, const compiler *cc, const char *sig, int instr, int mode,
                     char hex[65]) {
    const char *keep = getenv("GDNBENCH_SW_KEEP_CPP");
    if (!lib->fe_key[0] || !sig || (keep && *keep)) return 0;
    sha256_ctx c;
    key_begin(&c, "alias1", cc, instr, mode);
    sha256_update(&c, lib->fe_key, sizeof lib->fe_key);
    sha256_update(&c, sig, strlen(sig) + 1);
    key_end(&c, hex);
    return 1;
}

static void note_cached(int instr, int mode) {
    __atomic_fetch_add(&compile_cache_hits, 1, __ATOMIC_RELAXED);
    sw_stats_add_cached(variant_kind(instr, mode));
}

/* The variant an alias names, found without generating its C++: 1 loaded in this
 * library (*loaded), 2 built on disk or by the build running beside (so_path), -1
 * with *err (a lanes variant known not to compile, or that build failed), 0 not
 * known or not built (generate its C++).  Caller holds lib->mu. */
static int variant_by_alias(sw_library *lib, const char *alias, int instr, int mode, char key[65], void **loaded,
                            char *so_path, size_t n, char **err) {
    char cache[4096], failed[4300];
    char *no_dir = NULL;
    if (sw_cache_dir(cache, sizeof cache, &no_dir) != 0) {
        free(no_dir); /* the build path says it again */
        return 0;
    }
    if (!sw_alias_load(cache, alias, key)) return 0;
    for (int i = 0; loaded && i < lib->nvariants; i++) {
        if (strcmp(lib->variants[i].key, key) == 0) {
            note_cached(instr, mode);
            *loaded = lib->variants[i].dl;
            return 1;
        }
    }
    if (lib->pending.started && strcmp(lib->pending.key, key) == 0)
        return pending_claim(&lib->pending, so_path, n, err) == 0 ? 2 : -1;
    sw_pathf(so_path, n, "%s/%s.%s", cache, key, mode == BUILD_CHECK ? "checked" : "so");
    if (access(so_path, F_OK) == 0) {
        note_cached(instr, mode);
        return 2;
    }
    sw_pathf(failed, sizeof failed, "%s/%s.lanes-failed", cache, key);
    char *msg = mode == BUILD_LANES ? sw_read_file(failed, NULL) : NULL;
    if (msg) *err = msg;
    return msg ? -1 : 0;
}

/* Remembers which variant key an alias leads to (best effort). */
static void alias_store(const char *alias, const char *key) {
    char cache[4096];
    char *no_dir = NULL;
    if (sw_cache_dir(cache, sizeof cache, &no_dir) == 0) sw_alias_store(cache, alias, key);
    free(no_dir);
}

/* GDNBENCH_SW_PARALLEL_BUILDS=0 builds one variant at a time (for comparisons). */
static int parallel_builds(void) {
    const char *e = getenv("GDNBENCH_SW_PARALLEL_BUILDS");
    return !(e && strcmp(e, "0") == 0);
}

/* Whether the lanes variant an alias names is on disk, built or known not to compile. */
static int known_lanes(const char *alias) {
    char cache[4096], key[65], path[4300];
    char *no_dir = NULL;
    int dir = sw_cache_dir(cache, sizeof cache, &no_dir) == 0;
    free(no_dir);
    if (!dir || !sw_alias_load(cache, alias, key)) return 0;
    sw_pathf(path, sizeof path, "%s/%s.so", cache, key);
    if (access(path, F_OK) == 0) return 1;
    sw_pathf(path, sizeof path, "%s/%s.lanes-failed", cache, key);
    return access(path, F_OK) == 0;
}

/* Starts building the lanes variant for these constants on a thread of its own
 * when a run will load it next to the fibers variant the caller is about to build
 * and it is neither loaded nor on disk: two clang runs side by side instead of one
 * after the other.  Caller holds lib->mu.  Anything amiss (no thread, out of
 * memory) leaves the build to lanes_entry, as without it. */
static void prebuild_lanes(sw_library *lib, const sw_fc_value *fcs, int nfcs) {
    if (!lib->lanes_text || lib->pending.started || !parallel_builds()) return;
    char *err = NULL;
    const compiler *cc = get_compiler(&err);
    char *sig = cc ? variant_signature(lib, fcs, nfcs, SW_INSTR_NONE, -1, BUILD_LANES) : NULL;
    for (int i = 0; sig && i < lib->nvariants; i++)
        if (lib->variants[i].sig && strcmp(lib->variants[i].sig, sig) == 0) {
            free(sig);
            sig = NULL;
        }
    char cache[4096], so[4300], key[65], alias[65];
    /* built already, or known not to compile: nothing to start (a pending build
     * claimed here would be the same as none) */
    int aliased = alias_key(lib, cc, sig, SW_INSTR_NONE, BUILD_LANES, alias);
    if (aliased && known_lanes(alias)) {
        free(sig);
        return;
    }
    char *cpp = sig ? msl_front_emit_lanes(&lib->unit, lib->lanes_text, fcs, nfcs, &err) : NULL;
    free(sig);
    sw_pending *p = &lib->pending;
    if (cpp && sw_cache_dir(cache, sizeof cache, &err) == 0) {
        variant_key(cc, cpp, SW_INSTR_NONE, BUILD_LANES, key);
        if (aliased) sw_alias_store(cache, alias, key);
        sw_pathf(so, sizeof so, "%s/%s.so", cache, key);
        if (access(so, F_OK) != 0) {
            *p = (sw_pending){.cc = cc, .cpp = cpp, .instr = SW_INSTR_NONE, .mode = BUILD_LANES};
            memcpy(p->key, key, sizeof key);
            p->started = pthread_create(&p->th, NULL, pending_main, p) == 0;
            if (p->started) cpp = NULL;
            else memset(p, 0, sizeof *p);
        }
    }
    free(cpp);
    free(err);
}

/* The key of a variant and, when it is not loaded in this library yet, its file on
 * disk (built if needed).  Returns 1 with *loaded set when already loaded, 0 with
 * so_path filled, -1 on error.  loaded == NULL: only build it. */
static int prepare_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, int only, int mode,
                           char key[65], void **loaded, char *so_path, size_t n, char **err) {
    const compiler *cc = get_compiler(err);
    if (!cc) return -1;
    /* a variant already loaded for the same signature: no C++ to generate (MLX's
     * libraries have thousands of kernels; the compile command asks for each) */
    char *sig = variant_signature(lib, fcs, nfcs, instr, only, mode);
    for (int i = 0; sig && loaded && i < lib->nvariants; i++) {
        if (lib->variants[i].sig && strcmp(lib->variants[i].sig, sig) == 0) {
            free(sig);
            memcpy(key, lib->variants[i].key, 65);
            note_cached(instr, mode);
            *loaded = lib->variants[i].dl;
            return 1;
        }
    }
    /* one built before, by any process: no C++ to generate either */
    char alias[65];
    int aliased = alias_key(lib, cc, sig, instr, mode, alias);
    free(sig);
    int found = aliased ? variant_by_alias(lib, alias, instr, mode, key, loaded, so_path, n, err) : 0;
    if (found) return found < 0 ? -1 : found == 1 ? 1 : 0;
    double t0 = sw_stats_now();
    char *cpp = mode == BUILD_LANES ? msl_front_emit_lanes(&lib->unit, lib->lanes_text, fcs, nfcs, err)
                                    : msl_front_emit(&lib->unit, fcs, nfcs, only, err);
    sw_stats_add_prepass(variant_kind(instr, mode), sw_stats_now() - t0);
    if (!cpp) return -1;
    variant_key(cc, cpp, instr, mode, key);
    if (aliased) alias_store(alias, key);
    /* a lanes variant is kept once it compiled (below): one that does not runs
     * nowhere, so there is nothing to check for another target */
    if (mode != BUILD_CHECK && mode != BUILD_LANES) keep_cpp(cpp, key);
    for (int i = 0; loaded && i < lib->nvariants; i++) {
        if (strcmp(lib->variants[i].key, key) == 0) {
            if (mode == BUILD_LANES) keep_cpp(cpp, key);
            free(cpp);
            note_cached(instr, mode);
            *loaded = lib->variants[i].dl;
            return 1;
        }
    }
    char cache[4096];
    int rc = lib->pending.started && strcmp(lib->pending.key, key) == 0
                 ? pending_claim(&lib->pending, so_path, n, err)
                 : sw_cache_dir(cache, sizeof cache, err) || build_variant(cc, cache, cpp, instr, mode, key, so_path, n, err);
    if (rc == 0 && mode == BUILD_LANES) keep_cpp(cpp, key);
    free(cpp);
    return rc ? -1 : 0;
}

int sw_library_compile_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, char *so_path,
                               size_t n, char **err) {
    *err = NULL;
    char key[65];
    pthread_mutex_lock(&lib->mu);
    int rc = prepare_variant(lib, fcs, nfcs, instr, -1, BUILD_RUN, key, NULL, so_path, n, err);
    pthread_mutex_unlock(&lib->mu);
    return rc < 0 ? -1 : 0;
}

/* Loads (or finds loaded) a variant.  Caller holds lib->mu. */
static void *load_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, int only, int mode,
                          char **err) {
    char key[65], so[4300];
    void *loaded = NULL;
    int rc = prepare_variant(lib, fcs, nfcs, instr, only, mode, key, &loaded, so, sizeof so, err);
    if (rc < 0) return NULL;
    if (rc == 1) return loaded;
    /* RTLD_NOW: the binary exports every sw_rt_* and __tsan_* hook (-rdynamic), so
     * a missing symbol fails here, at load, instead of in the middle of a dispatch. */
    void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        *err = sw_fmt_err("cannot load the compiled kernel library: %s%s", dlerror(), NULL);
        return NULL;
    }
    const int *abi = dlsym(dl, "sw_abi_version");
    if (!abi || *abi != SW_ABI_VERSION || !dlsym(dl, mode == BUILD_LANES ? "sw_lanes_kernels" : "sw_kernels")) {
        dlclose(dl);
        *err = sw_fmt_err("compiled kernel library %s has a different ABI version; delete the cache directory%s", so,
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
    v[lib->nvariants].sig = variant_signature(lib, fcs, nfcs, instr, only, mode);
    v[lib->nvariants].dl = dl;
    v[lib->nvariants].so_path = strdup(so);
    lib->nvariants++;
    sw_symbolize_register(so, lib->filename, lib->source);
    return dl;
}

/* Checks every kernel of a large library with clang -fsyntax-only (cached). */
static int check_library(sw_library *lib, char **err) {
    char key[65], marker[4300];
    return prepare_variant(lib, NULL, 0, SW_INSTR_NONE, -1, BUILD_CHECK, key, NULL, marker, sizeof marker, err) < 0
               ? -1
               : 0;
}

/* GDNBENCH_SW_LANES=0 turns the lanes variant off (every simdgroup as fibers). */
static int lanes_enabled(void) {
    const char *e = getenv("GDNBENCH_SW_LANES");
    return !(e && strcmp(e, "0") == 0);
}

/* GDNBENCH_SW_DEBUG=1: say on stderr which libraries do not get the lanes variant. */
static void lanes_debug(const sw_library *lib, const char *what, const char *why) {
    const char *e = getenv("GDNBENCH_SW_DEBUG");
    if (e && *e && strcmp(e, "0") != 0)
        fprintf(stderr, "gdnbench: sw: %s %s: %s\n", lib->filename, what, why ? why : "?");
}

/* The lanes entry of kernel `name` for these constants, or NULL (not eligible, or
 * its C++ did not compile: the fibers run it).  Caller holds lib->mu. */
static const sw_lanes_info *lanes_entry(sw_library *lib, const char *name, const sw_fc_value *fcs, int nfcs) {
    if (!lib->lanes_text) return NULL;
    char *err = NULL;
    void *dl = load_variant(lib, fcs, nfcs, SW_INSTR_NONE, -1, BUILD_LANES, &err);
    if (!dl) {
        lanes_debug(lib, "has no lanes variant; its C++ did not compile", err);
        free(err);
        free(lib->lanes_text); /* do not try again */
        lib->lanes_text = NULL;
        return NULL;
    }
    for (const sw_lanes_info *k = dlsym(dl, "sw_lanes_kernels"); k && k->name; k++)
        if (strcmp(k->name, name) == 0) return k;
    return NULL;
}

/* ------------------------------------------------------------------ API */

sw_library *sw_library_create(const char *source, const char *filename, char **err) {
    return sw_library_create_opts(source, filename, NULL, err);
}

/* The front end's result, from the cache when it holds a verified entry for this
 * expanded source (front_cache.h): 1 with lib filled; else 0, lib->fe_key set when
 * the result is to be stored.  t0: when the library's creation began. */
static int front_cached(sw_library *lib, const compiler *cc, const char *cache, const char *prepared, double t0) {
    if (!sw_front_cache_enabled()) return 0;
    char settings[64];
    snprintf(settings, sizeof settings, "lanes=%d whole_library_max=%d", lanes_enabled(), whole_library_max());
    sw_front_key(prepared, lib->filename, settings, cc->path, cc->version, lib->fe_key);
    sw_front_result r;
    if (!sw_front_load(cache, lib->fe_key, &r)) return 0;
    lib->unit = r.unit;
    lib->sync_free = r.sync_free;
    lib->atomic_free = r.atomic_free;
    lib->lanes_text = r.lanes_text;
    lib->lanes_why = r.lanes_why;
    sw_stats_add_lookup(SW_KIND_LIBRARY, sw_stats_now() - t0);
    if (lanes_enabled() && !lib->sync_free && !per_kernel(lib) && !lib->lanes_text)
        lanes_debug(lib, "runs its simdgroups as fibers", lib->lanes_why);
    return 1;
}

/* The front end over the expanded source: clang -E, the parse and rewrites, the
 * lanes rewrite; the result stored when lib has a front-end key.  0, or -1 with
 * *err set. */
static int front_run(sw_library *lib, const compiler *cc, const char *cache, const char *prepared, double t0,
                     char **err) {
    char *pp = preprocess(cc, cache, prepared, lib->filename, err);
    if (!pp) return -1;
    lib->sync_free = msl_text_sync_free(pp, lib->filename);
    lib->atomic_free = msl_text_atomic_free(pp, lib->filename);
    int rc = msl_front_parse(pp, lib->filename, &lib->unit, err);
    free(pp);
    lib->unit.emit_range = lib->sync_free;
    lib->unit.atomic_free = lib->atomic_free;
    sw_stats_add_prepass(SW_KIND_LIBRARY, sw_stats_now() - t0);
    if (rc != 0) return -1;
    if (lanes_enabled() && !lib->sync_free && !per_kernel(lib)) {
        t0 = sw_stats_now();
        lib->lanes_text = msl_lanes_rewrite(&lib->unit, &lib->lanes_why);
        if (!lib->lanes_text) lanes_debug(lib, "runs its simdgroups as fibers", lib->lanes_why);
        sw_stats_add_prepass(SW_KIND_LANES, sw_stats_now() - t0);
    }
    if (lib->fe_key[0]) {
        sw_front_result r = {lib->unit, lib->sync_free, lib->atomic_free, lib->lanes_text, lib->lanes_why};
        sw_front_store(cache, lib->fe_key, &r);
    }
    return 0;
}

sw_library *sw_library_create_opts(const char *source, const char *filename, const msl_source_opts *opts,
                                   char **err) {
    *err = NULL;
    if (!filename || !*filename) filename = "source.metal";
    const compiler *cc = get_compiler(err);
    if (!cc) return NULL;
    char cache[4096];
    if (sw_cache_dir(cache, sizeof cache, err)) return NULL;
    double t0 = sw_stats_now();
    /* the headers are inlined first, so the cache keys of what follows cover them */
    char *prepared = msl_expand_source(source, filename, opts, MSL_EXPAND_SOFTWARE, err);
    if (!prepared) return NULL;
    sw_library *lib = calloc(1, sizeof *lib);
    if (!lib || !(lib->filename = strdup(filename)) || !(lib->source = strdup(source))) {
        if (lib) free(lib->filename);
        free(lib);
        free(prepared);
        *err = strdup("out of memory");
        return NULL;
    }
    pthread_mutex_init(&lib->mu, NULL);
    int rc = front_cached(lib, cc, cache, prepared, t0) ? 0 : front_run(lib, cc, cache, prepared, t0, err);
    free(prepared);
    if (rc != 0) {
        sw_library_free(lib);
        return NULL;
    }
    /* build the variant a run will load, or check the source, so that errors
     * surface here as on Metal */
    if (create_builds(lib)) prebuild_lanes(lib, NULL, 0);
    int bad = create_builds(lib) ? !load_variant(lib, NULL, 0, SW_INSTR_NONE, -1, BUILD_RUN, err)
                                 : check_library(lib, err) != 0;
    pending_wait(&lib->pending); /* nothing runs on when creation returns */
    if (bad) {
        sw_library_free(lib);
        return NULL;
    }
    return lib;
}

void sw_library_free(sw_library *lib) {
    if (!lib) return;
    pending_free(&lib->pending);
    for (int i = 0; i < lib->nvariants; i++) {
        sw_symbolize_unregister(lib->variants[i].so_path);
        free(lib->variants[i].so_path);
        free(lib->variants[i].sig);
        dlclose(lib->variants[i].dl);
    }
    free(lib->variants);
    msl_unit_free(&lib->unit);
    free(lib->lanes_text);
    free(lib->lanes_why);
    pthread_mutex_destroy(&lib->mu);
    free(lib->filename);
    free(lib->source);
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

static int get_kernel(sw_library *lib, const char *name, const sw_fc_value *fcs, int nfcs, int instr, int listing,
                      sw_kernel *out, char **err) {
    *err = NULL;
    int found = -1;
    for (int i = 0; i < lib->unit.nkernels && found < 0; i++)
        if (strcmp(lib->unit.kernels[i].host_name, name) == 0) found = i;
    if (found < 0) {
        msl_buf b = {0};
        msl_buf_printf(&b, "no kernel named '%s' in %s; it has:", name, lib->filename);
        for (int i = 0; i < lib->unit.nkernels; i++) msl_buf_printf(&b, " %s", lib->unit.kernels[i].host_name);
        if (lib->unit.nkernels == 0) msl_buf_puts(&b, " none");
        *err = msl_buf_take(&b);
        return -1;
    }
    /* a run builds the asked kernel alone, never its siblings; the compile
     * command's listing builds them all at once */
    int only = -1, mode = BUILD_RUN;
    if (per_kernel(lib) && listing) mode = BUILD_LISTING;
    else if (!listing && lib->unit.nkernels > 1) only = found;
    pthread_mutex_lock(&lib->mu);
    if (instr == SW_INSTR_NONE && mode == BUILD_RUN && !per_kernel(lib)) prebuild_lanes(lib, fcs, nfcs);
    void *dl = load_variant(lib, fcs, nfcs, instr, only, mode, err);
    const sw_lanes_info *lanes = dl && instr == SW_INSTR_NONE && mode == BUILD_RUN && !per_kernel(lib)
                            ? lanes_entry(lib, name, fcs, nfcs) : NULL;
    pthread_mutex_unlock(&lib->mu);
    if (!dl) return -1;
    const sw_kernel_info *k = dlsym(dl, "sw_kernels");
    for (; k && k->name; k++) {
        if (strcmp(k->name, name) == 0) {
            *out = (sw_kernel){k, dl, instr, lib->sync_free, lib->atomic_free, lanes};
            return 0;
        }
    }
    *err = sw_fmt_err("kernel '%s' is missing from its compiled library %s", name, lib->filename);
    return -1;
}

int sw_library_get_kernel(sw_library *lib, const char *name, const sw_fc_value *fcs, int nfcs, int instr,
                          sw_kernel *out, char **err) {
    return get_kernel(lib, name, fcs, nfcs, instr, 0, out, err);
}

int sw_library_describe_kernel(sw_library *lib, const char *name, sw_kernel *out, char **err) {
    return get_kernel(lib, name, NULL, 0, SW_INSTR_NONE, 1, out, err);
}

int sw_library_is_per_kernel(const sw_library *lib) { return per_kernel(lib); }

int sw_library_list_kernel(sw_library *lib, const char *name, sw_kernel_listing *out, char **err) {
    sw_kernel k;
    if (sw_library_describe_kernel(lib, name, &k, err) != 0) return -1;
    out->info = k.info;
    /* the body's threadgroup variables, as the library measures them */
    sw_tg_static_bytes_fn fn = (sw_tg_static_bytes_fn)dlsym(k.dl, "sw_tg_static_bytes");
    out->tg_static_bytes = fn && k.info->fn ? fn(k.info->fn) : -1;
    return 0;
}
