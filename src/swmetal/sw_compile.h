/* sw_compile.h — MSL source -> loaded kernel library (front end + clang + cache).
 *
 * Used by the software device's Objective-C layer: newLibraryWithSource: calls
 * sw_library_create (front-end pass, then the build of a library of one kernel
 * without function constants, or else a clang -fsyntax-only check, so errors
 * surface there as on Metal); newFunctionWithName:constantValues: calls
 * sw_library_get_kernel, which compiles that kernel alone (never its siblings) for
 * those constant values (cached on disk by hash) and dlopens it, with its lanes
 * variant built beside it on another thread.  The part `gdnbench compile` uses
 * (create, kernels, constants, listing) is public, in swmetal.h. */
#ifndef GDN_SW_COMPILE_H
#define GDN_SW_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "msl/msl_include.h"
#include "swmetal/sw_abi.h"
#include "swmetal/swmetal.h"

/* A function-constant value supplied at function creation. */
typedef struct sw_fc_value {
    int index;               /* [[function_constant(index)]] */
    int type;                /* SW_FC_BOOL, SW_FC_INT, SW_FC_UINT, SW_FC_FLOAT, SW_FC_HALF, SW_FC_SHORT, SW_FC_USHORT */
    union {
        int64_t i;
        uint64_t u;
        double f;
    } v;
} sw_fc_value;

/* Instrumentation of a compiled variant, a set of bits: every memory access hooked
 * (SW_INSTR_TSAN: uninitialised threadgroup reads, threadgroup races, exact OOB), the
 * numeric checks' (SW_INSTR_NUMERICS: clang's integer/cast sanitizers reporting to
 * numerics.c, the prelude's bfloat hook); full checks have both.  SW_INSTR_COUNT is
 * the counting variant (count.h: --counters), built alone, never with the others. */
enum { SW_INSTR_NONE = 0, SW_INSTR_TSAN = 1, SW_INSTR_NUMERICS = 2, SW_INSTR_FULL = 3, SW_INSTR_COUNT = 4 };

typedef struct sw_kernel {
    const sw_kernel_info *info;  /* inside the loaded library; valid while the library lives */
    void *dl;                    /* dlopen handle owned by the sw_library */
    int instrumented;
    int sync_free;               /* no barrier or simd/quad function reachable (msl_sync.c) */
    int atomic_free;             /* no atomic anywhere in the library (msl_sync.c) */
    const sw_lanes_info *lanes;  /* its simdgroups as 32-wide data (lanes.c), or NULL */
} sw_kernel;

/* Parses and compiles `source` (file name used in diagnostics).  On failure returns
 * NULL and sets *err (malloc'd, caller frees) to the compiler's message mapped to
 * "file.metal:LINE:COL: error: ...". */
sw_library *sw_library_create(const char *source, const char *filename, char **err);

/* Function constant i: (index, type, name); sw_library_constant_info also says
 * whether it is required. */
int sw_library_constant(const sw_library *lib, int i, int *index, int *type, const char **name);

/* Compiles (or loads from cache) the variant of kernel `name` for these constant
 * values and instrumentation, and fills *out.  Returns 0, or -1 with *err set. */
int sw_library_get_kernel(sw_library *lib, const char *name, const sw_fc_value *fcs, int nfcs, int instr,
                          sw_kernel *out, char **err);

/* The kernel as the compile command lists it (bindings, static threadgroup
 * memory): the same as sw_library_get_kernel without constants for a small
 * library; for a large one, every kernel built at once without optimisation
 * (fast to build, slow to run: for inspecting, not for timing). */
int sw_library_describe_kernel(sw_library *lib, const char *name, sw_kernel *out, char **err);

/* Compiles (or finds in the on-disk cache) the variant for these constants without
 * loading it, and writes the shared object's path (for tests and tools that inspect
 * the object, e.g. the instrumented variant's __tsan_* imports).  Returns 0 or -1
 * with *err set. */
int sw_library_compile_variant(sw_library *lib, const sw_fc_value *fcs, int nfcs, int instr, char *so_path,
                               size_t so_path_len, char **err);

/* The C++ compiler the device uses: path as found and the first line of its
 * --version (for reports and tests).  Returns 0, or -1 with *err (malloc'd) saying
 * how to install one. */
int sw_compiler_info(const char **path, const char **version, char **err);

/* Counters for tests: how many times the C++ compiler was invoked in this process,
 * and how many variants came from the on-disk cache. */
uint64_t sw_compile_invocations(void);
uint64_t sw_compile_cache_hits(void);

#endif
