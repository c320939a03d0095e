/* compile_stats.h — where compiling kernels spends its time (compile_stats.c), for
 * compile.c; read through swmetal.h's sw_compile_stats_get.
 *
 * A variant kind is what a compiled object is for.  Adding one (a new check
 * variant) is one entry here and one in compile_stats.c's names, and its case in
 * compile.c's variant_kind. */
#ifndef GDN_SW_COMPILE_STATS_H
#define GDN_SW_COMPILE_STATS_H

enum {
    SW_KIND_LIBRARY,       /* making a library: expansion, clang -E, parse, syntax check */
    SW_KIND_FIBERS,        /* a kernel as it runs, a fiber per simdgroup thread */
    SW_KIND_LANES,         /* its simdgroups as 32-wide data */
    SW_KIND_FULL_CHECKS,   /* every memory access hooked (--sw-checks full) */
    SW_KIND_LISTING,       /* gdnbench compile's listing of a large library (-O0) */
    SW_KIND_COUNT
};

/* What one clang run reported through -ftime-trace, in seconds (< 0: not there). */
typedef struct sw_clang_times {
    double execute_s;      /* the compiler proper (the driver's cc1 job) */
    double frontend_s;     /* parse, semantic analysis, IR generation */
    double optimise_s;     /* LLVM's optimisation pipeline */
    double backend_s;      /* optimisation and code generation together */
} sw_clang_times;

/* Reads the totals of a -ftime-trace file; fields it lacks are -1.  Returns 0, or
 * -1 when the file cannot be read (every field -1). */
int sw_clang_times_read(const char *trace_path, sw_clang_times *t);

/* A monotonic clock, seconds. */
double sw_stats_now(void);

/* One run of our front end (a library's parse and rewrites, a variant's C++). */
void sw_stats_add_prepass(int kind, double seconds);
/* Time spent finding the front end's result in the cache: pre-pass time, no run. */
void sw_stats_add_lookup(int kind, double seconds);
void sw_stats_add_cached(int kind);
/* One clang run of `wall_s` seconds for a variant of this kind, with what its
 * trace said (NULL or fields < 0: unknown). */
void sw_stats_add_compile(int kind, double wall_s, const sw_clang_times *t);

#endif
