/* clang_step.c — clang_step.h: the clang runs of one variant's build — a single
 * run, and the IR stage's front end, (canonical) middle end, passes and back end —
 * with what each run is told and what its failure says. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/clang_step.h"
#include "swmetal/compile_stats.h"
#include "swmetal/ir_target.h"
#include "swmetal/sw_compile.h"
#include "swmetal/sw_files.h"

static uint64_t invocations;

uint64_t sw_compile_invocations(void) { return __atomic_load_n(&invocations, __ATOMIC_RELAXED); }
void sw_clang_invoked(void) { __atomic_fetch_add(&invocations, 1, __ATOMIC_RELAXED); }

/* clang's stderr from the first error on (warnings and include chains before it
 * dropped), at most ~4 KB; names .metal lines thanks to the line markers. */
char *sw_clang_message(const char *stderr_path, const char *what) {
    char *text = sw_read_file(stderr_path, NULL);
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

/* This host's flags for one build mode. */
int sw_clang_flags(int instr, int mode, const char **flags, int max) {
    const char *all[SW_CXX_MAX_FLAGS];
#ifdef __APPLE__
    int darwin = 1;
#else
    int darwin = 0;
#endif
    /* the counting variant's scalar code for the baseline CPU is what its IR is
     * counted as; once counted (BUILD_CODEGEN), it runs as well as the host can */
    if (mode == BUILD_CODEGEN) instr &= ~SW_INSTR_COUNT;
    int n = sw_cxx_kernel_flags(instr, darwin, all, SW_CXX_MAX_FLAGS);
    int k = 0;
    for (int i = 0; i < n && k < max; i++) {
        const char *f = all[i];
        if (mode == BUILD_LISTING && strcmp(f, "-O2") == 0) f = "-O0";
        if (mode == BUILD_CHECK) {
            /* what only the object or the link needs */
            if (strcmp(f, "-shared") == 0 || strcmp(f, "-fPIC") == 0 || strncmp(f, "-g", 2) == 0 ||
                strncmp(f, "-fdebug-", 8) == 0)
                continue;
            if (strcmp(f, "-undefined") == 0) {
                i++; /* and its argument */
                continue;
            }
        }
        flags[k++] = f;
    }
    if (mode == BUILD_CHECK && k < max) flags[k++] = "-fsyntax-only";
    return k;
}

/* One clang run of a build: the mode's flags, the prelude's include directory,
 * `extra` (what this step adds), then "-o out" (none for a syntax check) and the
 * input.  Adds its phases to *times (fields < 0 stay unknown until a run reports
 * them) and its wall time to *wall; a failure's message in *err. */

static void times_add(sw_clang_times *sum, const sw_clang_times *t) {
    double *s[] = {&sum->execute_s, &sum->frontend_s, &sum->optimise_s, &sum->backend_s};
    const double v[] = {t->execute_s, t->frontend_s, t->optimise_s, t->backend_s};
    for (int i = 0; i < 4; i++)
        if (v[i] >= 0) *s[i] = (*s[i] < 0 ? 0 : *s[i]) + v[i];
}

int sw_clang_step(const build_step *b, const char *const *extra, int nextra, const char *out, const char *in,
                    sw_clang_times *times, double *wall, char **err) {
    char errp[4400], trace[4400], trace_arg[4500];
    sw_pathf(errp, sizeof errp, "%s.err", b->tmp_base);
    /* clang's own account of its phases (compile_stats.c); it changes nothing in the
     * object, so it is not part of the key */
    sw_pathf(trace, sizeof trace, "%s.trace.json", b->tmp_base);
    sw_pathf(trace_arg, sizeof trace_arg, "-ftime-trace=%s", trace);
    char *argv[SW_CXX_MAX_FLAGS + 16];
    int a = 0;
    argv[a++] = (char *)b->cc->path;
    const char *flags[SW_CXX_MAX_FLAGS];
    int nflags = sw_clang_flags(b->instr, b->mode, flags, SW_CXX_MAX_FLAGS);
    for (int i = 0; i < nflags; i++) argv[a++] = (char *)flags[i];
    argv[a++] = (char *)b->incl;
    argv[a++] = trace_arg;
    for (int i = 0; i < nextra && i < 8; i++) argv[a++] = (char *)extra[i];
    if (out) {
        argv[a++] = "-o";
        argv[a++] = (char *)out;
    }
    argv[a++] = (char *)in;
    argv[a] = NULL;
    sw_clang_invoked();
    double t0 = sw_stats_now();
    int rc = sw_run_process(argv, NULL, errp);
    *wall += sw_stats_now() - t0;
    sw_clang_times t;
    sw_clang_times_read(trace, &t);
    times_add(times, &t);
    unlink(trace);
    if (rc != 0) {
        *err = rc < 0 ? sw_fmt_err("cannot run %s: %s", b->cc->path, strerror(errno))
                      : sw_clang_message(errp, "compiling the kernel");
        /* only the compiler's verdict on the C++ (not a kill, a full disk) is final */
        if (rc > 0 && rc < 128 && *err && strstr(*err, "error:")) rc = 1;
        else rc = 2;
    }
    unlink(errp);
    return rc;
}

/* GDNBENCH_SW_KEEP_IR=DIR writes the IR each variant built through the IR stage
 * gives its last clang run (the passes' edits in) as DIR/<key>.ll: what
 * tests/cli/test_ir_canonical.sh compares across front-end targets.  Best effort. */
static void keep_ir(const char *key, const char *text, size_t len) {
    const char *dir = getenv("GDNBENCH_SW_KEEP_IR");
    if (!dir || !*dir || sw_mkdir_p(dir) != 0) return;
    char path[4200];
    sw_pathf(path, sizeof path, "%s/%s.ll", dir, key);
    (void)sw_write_file_atomic(path, text, len);
}

/* The canonical middle end (ir_target.h): the host front end's IR at ll, without
 * its target, optimised for SW_IR_CANONICAL_TRIPLE into *text; *host keeps the
 * front end's target for the way back.  Returns as sw_clang_step. */
static int canonical_middle(const build_step *b, const char *ll, sw_ir_target **host, char **text, size_t *len,
                            sw_clang_times *times, double *wall, char **err) {
    static const char target[] = "--target=" SW_IR_CANONICAL_TRIPLE;
    static const char *const middle[] = {"-x", "ir", target, "-S", "-emit-llvm"};
    char mid[4400];
    sw_pathf(mid, sizeof mid, "%s.mid.ll", b->tmp_base);
    size_t fe_len = 0;
    char *fe = sw_read_file(ll, &fe_len);
    if (!fe) {
        *err = sw_fmt_err("cannot read %s: %s", ll, strerror(errno));
        return 2;
    }
    int rc = 2;
    msl_buf canon = {0};
    *host = sw_ir_target_read(fe, fe_len, err);
    if (*host) {
        sw_ir_strip_target(fe, fe_len, &canon);
        if (sw_write_file_atomic(ll, canon.p ? canon.p : "", canon.len) == 0) rc = 0;
        else *err = sw_fmt_err("cannot write %s: %s", ll, strerror(errno));
    }
    free(msl_buf_take(&canon));
    if (rc == 0) rc = sw_clang_step(b, middle, 5, mid, ll, times, wall, err);
    if (rc == 0 && !(*text = sw_read_file(mid, len))) {
        *err = sw_fmt_err("cannot read %s: %s", mid, strerror(errno));
        rc = 2;
    }
    /* the middle end may call what the canonical target's C library has and this
     * host's may lack (exp10f: macOS's libm names it __exp10f): no object that
     * fails to load */
    if (rc == 0 && sw_ir_check_new_calls(fe, fe_len, *text, *len, err) != 0) rc = 2;
    free(fe);
    unlink(mid);
    return rc;
}

/* The IR stage (ir_pass.h): C++ -> optimised IR -> the passes -> the object, with
 * LLVM's pipeline off in the second run unless a pass asks for it.  For a
 * canonical pass: C++ -> the front end's IR -> canonical_middle -> the passes ->
 * the host's target again -> the object.  Returns as sw_clang_step. */
int sw_clang_through_ir(const build_step *b, const sw_ir_pass *const *passes, int npasses, const char *cpp_path,
                            const char *tmp_so, sw_clang_times *times, double *wall, char **err) {
    char ll[4400];
    sw_pathf(ll, sizeof ll, "%s.ll", b->tmp_base);
    static const char *const to_ir[] = {"-S", "-emit-llvm", "-Xclang", "-disable-llvm-passes"};
    static const char *const from_ir[] = {"-x", "ir", "-Xclang", "-disable-llvm-passes"};
    int canonical = sw_ir_canonical(passes, npasses);
    int nfrom = sw_ir_reoptimise(passes, npasses) ? 2 : 4; /* without the last two: -O2 again */
    int rc = sw_clang_step(b, to_ir, canonical ? 4 : 2, ll, cpp_path, times, wall, err);
    sw_ir_target *host = NULL;
    char *text = NULL;
    size_t len = 0;
    if (rc == 0 && canonical) rc = canonical_middle(b, ll, &host, &text, &len, times, wall, err);
    else if (rc == 0 && !(text = sw_read_file(ll, &len))) {
        *err = sw_fmt_err("cannot read %s: %s", ll, strerror(errno));
        rc = 2;
    }
    msl_buf out = {0};
    double t0 = sw_stats_now();
    if (rc == 0 && sw_ir_run_passes(text, len, passes, npasses, &out, err) != 0) rc = 2;
    if (rc == 0 && host) {
        /* the counts are in the IR now: the last run compiles it as the plain
         * variant is compiled on this host (its CPU — -march=native on x86-64 Linux —
         * and its vectorisers); a count is program state, which no code generation
         * changes.  attn_fwd counted: 13% less CPU (scripts/bench/counters_cost.sh) */
        sw_ir_target_forget_cpu(host);
        msl_buf back = {0};
        sw_ir_put_target(out.p ? out.p : "", out.len, host, &back);
        free(msl_buf_take(&out));
        out = back;
    }
    *wall += sw_stats_now() - t0;
    free(text);
    sw_ir_target_free(host);
    if (rc == 0) keep_ir(b->key, out.p ? out.p : "", out.len);
    if (rc == 0 && sw_write_file_atomic(ll, out.p ? out.p : "", out.len) != 0) {
        *err = sw_fmt_err("cannot write %s: %s", ll, strerror(errno));
        rc = 2;
    }
    free(msl_buf_take(&out));
    build_step last = *b;
    if (canonical) last.mode = BUILD_CODEGEN;
    if (rc == 0) rc = sw_clang_step(&last, from_ir, nfrom, tmp_so, ll, times, wall, err);
    unlink(ll);
    return rc;
}
