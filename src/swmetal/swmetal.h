/* swmetal.h — the software Metal device as a library (libswmetal.a): the one header
 * of src/swmetal that code outside it includes.
 *
 * The device answers Metal's selectors (see /work/shared/spec/swmetal.md and
 * objc_device.c): a host sends it the messages it sends a GPU's MTLDevice.  This
 * header has what Metal's API cannot carry: the device's settings (an options
 * struct at creation: checks, schedule, counter sampling), the extension selectors
 * below, the checks' findings of a command buffer, the offline compile/listing
 * that `gdnbench compile` prints, and counters of the work done.
 *
 * Extension selectors.  What the device offers beyond Metal's API is reached through
 * these methods, which a host asks for with objc_responds (core/objc_call.h: the
 * SWObject root class has no -respondsToSelector:, so the runtime answers from the
 * class), as it asks for Metal's optional features, so that the same code drives a
 * GPU, which answers none of them (src/metal/mtl.c does so):
 *
 *   device   - (Class)gdn_metalClassNamed:(const char *)metal_name
 *              the device's own class for a Metal class the host instantiates and
 *              hands to it (what swmtl_class() answers); Nil for any other name.
 *   device   - (BOOL)gdn_fastMathApplies
 *              NO: MTLCompileOptions' fast math changes nothing here; the device
 *              always computes as with fast math off (precise:: math, no contraction).
 *   device   - (BOOL)gdn_supportsGPUCapture
 *              NO: MTLCaptureManager has no GPU trace of this device to record.
 *   command buffer - (const dev_finding *)gdn_findings:(int *)count
 *              what swmtl_command_buffer_findings() answers.
 *   command buffer - (uint64_t)gdn_diagnosticCount:(int *)kept,
 *                    (const char *)gdn_diagnosticAtIndex:(int)i
 *              what swmtl_command_buffer_diagnostic_count()/_diagnostic() answer.
 *
 * The rest is Metal's: a library answers functionNames (an NSArray of NSString), a
 * function functionConstantsDictionary (the source's declarations: a value of another
 * type than declared is refused by newFunctionWithName:constantValues:error:), a
 * buffer asked for private storage is host memory and answers contents, and
 * newLibraryWithSource: takes the file name its diagnostics report from the
 * source's first `#line 1 "file"` (after any #define lines; msl_expand_source writes
 * it), "source.metal" without one. */
#ifndef GDN_SWMETAL_H
#define GDN_SWMETAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/finding.h"
#include "core/objc_call.h"
#include "msl/msl_include.h"     /* msl_source_opts: include directories and -D macros */
#include "swmetal/sw_abi.h"      /* the kernels' ABI: sw_kernel_info, sw_binding (native libraries, listings) */

/* ---- settings ---- */

/* Checks (--sw-checks): see the README's software-device section.  NUMERICS is fast's
 * buffers with the kernels' numerics variant (numerics.c); FULL includes it. */
typedef enum swmtl_checks {
    SWMTL_CHECKS_NONE = 0,
    SWMTL_CHECKS_FAST = 1,
    SWMTL_CHECKS_FULL = 2,
    SWMTL_CHECKS_NUMERICS = 3
} swmtl_checks;

/* An order of threadgroups, or of a threadgroup's fibers between synchronisation
 * points: "inorder", "reverse" or "random:SEED" (SEED a decimal integer). */
typedef enum swmtl_order_kind {
    SWMTL_ORDER_INORDER = 0,
    SWMTL_ORDER_REVERSE = 1,
    SWMTL_ORDER_RANDOM = 2
} swmtl_order_kind;
typedef struct swmtl_order {
    swmtl_order_kind kind;
    uint64_t seed;               /* SWMTL_ORDER_RANDOM's */
} swmtl_order;

/* The parsers of those settings, for every place that takes them as text: 0, or -1
 * with "OPTION 'text' is unknown: use ..." in err (option: "--sw-checks", say). */
int swmtl_parse_checks(const char *text, swmtl_checks *out, const char *option, char *err, size_t errlen);
int swmtl_parse_order(const char *text, swmtl_order *out, const char *option, char *err, size_t errlen);

/* How the device runs dispatches; it may change between command buffers. */
typedef struct swmtl_schedule {
    swmtl_order fibers;          /* a threadgroup's fibers between synchronisation points (--sw-schedule) */
    swmtl_order groups;          /* the order threadgroups start in (validate's determinism runs) */
    int lanes;                   /* 1: a kernel with a lanes variant (lanes.c) runs it, when its fibers
                                    would run in order; 0: fibers (lanes reconverge divergent simd
                                    calls as a GPU does, fibers may not) */
} swmtl_schedule;

typedef struct swmtl_options {
    swmtl_checks checks;         /* fixed for the device's life: buffers are laid out for it */
    swmtl_schedule schedule;
    int counter_sampling;        /* 1: supportsCounterSampling: YES at stage boundaries; 0: NO for
                                    every point, as a GPU without such counters (tests of hosts'
                                    fallbacks) */
    double timeout_s;            /* the watchdog (--sw-timeout): a dispatch still running after this
                                    many seconds is stopped and fails its command buffer with a
                                    finding naming where its threads were running; 0 = never */
} swmtl_options;

/* The watchdog's default limit: far above the longest dispatch of the shipped ops at
 * their largest default shapes with full checks (README, checks). */
#define SWMTL_DEFAULT_TIMEOUT_S 600.0

/* The defaults: checks from GDNBENCH_SW_CHECKS, else fast; fibers in the order of
 * GDNBENCH_SW_SCHEDULE, else inorder; threadgroups in order; lanes and counter
 * sampling on; the watchdog at SWMTL_DEFAULT_TIMEOUT_S.  The environment is read once per process (a bad value is reported
 * on stderr once and the default used). */
void swmtl_options_init(swmtl_options *o);

/* ---- devices ---- */

/* A new device (+1; release it) with these options (NULL: swmtl_options_init's).
 * Nil when the device's classes cannot be set up. */
id swmtl_device_new(const swmtl_options *o);
/* The Linux stand-in for MTLCreateSystemDefaultDevice(): swmtl_device_new(NULL). */
id swmtl_create_system_default_device(void);
/* The schedule of `device`'s command buffers committed from now on.  Returns 0, or
 * -1 when device is not a software device. */
int swmtl_device_set_schedule(id device, const swmtl_schedule *s);

/* The software device's class for a Metal class the host instantiates itself
 * ("MTLCompileOptions", "MTLFunctionConstantValues", "MTLCounterSampleBufferDescriptor",
 * "MTLComputePassDescriptor", "MTLComputePassSampleBufferAttachmentDescriptor"): the
 * device only takes its own, and on a Mac objc_getClass() of those names is
 * Metal.framework's.  Nil for any other name.  (gdn_metalClassNamed: answers it.) */
Class swmtl_class(const char *metal_name);

/* 1 when newLibraryWithSource: can work here (a clang++ that builds the MSL
 * prelude was found); 0 with err set to one line naming the fix for this platform.
 * Found once per process. */
int swmtl_can_compile(char *err, size_t errlen);

/* A library whose functions are C entries (the sw_kernel_info table stays owned by
 * the caller and must outlive the library; terminated by an entry with name NULL).
 * For tests and host-side kernels; +1. */
id swmtl_new_native_library(id device, const sw_kernel_info *kernels);

/* ---- what a command buffer found ---- */

/* Diagnostics of a completed command buffer: how many there were in all, and the
 * i-th of those kept (i < kept), or NULL. */
uint64_t swmtl_command_buffer_diagnostic_count(id command_buffer, int *kept);
const char *swmtl_command_buffer_diagnostic(id command_buffer, int i);

/* The findings of a completed command buffer's failing dispatch (every distinct
 * one, grouped and with source lines), owned by the command buffer; NULL with
 * *n = 0 when there are none or it is not one of ours. */
const dev_finding *swmtl_command_buffer_findings(id command_buffer, int *n);

/* ---- counters ---- */

/* Work the devices have done since the process started: dispatches run and command
 * buffers executed (what a test counts to know how often an op ran). */
uint64_t swmtl_dispatches_executed(void);
uint64_t swmtl_command_buffers_executed(void);

/* Where compiling kernels has spent its time in this process (compile_stats.c),
 * by kind of variant: "library" (making a library: include expansion, clang -E,
 * the front end's parse and rewrites, the syntax check of its kernels), "fibers"
 * (a kernel as it runs), "lanes" (its simdgroups as 32-wide data), "full_checks"
 * (every memory access hooked), "listing" (gdnbench compile of a large library).
 * Seconds of wall time per phase: pre-pass (our front end and the C++ it emits),
 * clang's front end (parse, semantic analysis, IR generation), optimisation, code
 * generation, and link (the driver's link of the shared object and the process
 * around clang, the wall time left over).  A phase clang did not report (no
 * -ftime-trace file) is < 0.  Variants taken from the on-disk cache or already
 * loaded count as cached, with no time.  prepasses counts the runs of our front
 * end (a library's parse and rewrites, a variant's C++): none when a warm run finds
 * its result in the cache (front_cache.h), whose lookup is pre-pass time. */
#define SW_COMPILE_MAX_KINDS 8
typedef struct sw_compile_phases {
    const char *kind;          /* NULL past the last kind */
    int compiles;              /* clang runs */
    int cached;                /* variants found built (on disk or loaded) */
    int prepasses;             /* front-end runs (not found in the cache) */
    double prepass_s, frontend_s, optimise_s, codegen_s, link_s;
    double wall_s;             /* the whole of it: every phase above and the rest */
} sw_compile_phases;
typedef struct sw_compile_stats {
    sw_compile_phases kinds[SW_COMPILE_MAX_KINDS];
} sw_compile_stats;
/* A snapshot of the totals so far; sw_compile_stats_diff(&later, &earlier, &out):
 * what happened in between (kinds with nothing in between left out). */
void sw_compile_stats_get(sw_compile_stats *out);
void sw_compile_stats_diff(const sw_compile_stats *later, const sw_compile_stats *earlier, sw_compile_stats *out);

/* ---- exact counters (--counters) ----
 *
 * A counting session collects what every dispatch of a device's command buffers
 * committed while it is set did, exactly (the model: src/swmetal/count.h and
 * results/README.md): each dispatch runs the kernel's counting variant (built on
 * first use, like the check variants) instead of its usual one.  Distinct bytes of
 * a buffer's memory are also kept across the session's dispatches (a union). */
#define SWMTL_LINE_BYTES 128
typedef struct swmtl_mem_counts {
    uint64_t load_bytes, store_bytes;                 /* requested */
    uint64_t load_distinct_bytes, store_distinct_bytes, distinct_bytes, distinct_lines;
    uint64_t accesses, lines, min_lines;              /* simdgroup-wide accesses (coalescing) */
} swmtl_mem_counts;
#define SWMTL_ATOMIC_KINDS 13
typedef struct swmtl_buffer_counts {
    int index;                   /* [[buffer(index)]] */
    int memory;                  /* the session's number for the buffer's memory (swmtl_counts_memory) */
    swmtl_mem_counts m;
} swmtl_buffer_counts;
typedef struct swmtl_dispatch_counts {
    char function[128];
    uint32_t grid[3], threadgroup[3];  /* threads */
    swmtl_mem_counts device;
    uint64_t tg_bytes_per_threadgroup, tg_load_bytes, tg_store_bytes;
    uint64_t flops_float, flops_half, flops_bfloat, int_ops;
    uint64_t simd_instructions, active_lanes;
    uint64_t barriers_threadgroup, barriers_simdgroup;
    uint64_t atomics_device, atomics_threadgroup, atomics_kind[SWMTL_ATOMIC_KINDS];
    int nbuffers;
    swmtl_buffer_counts buffers[SW_MAX_BUFFERS];
} swmtl_dispatch_counts;
typedef struct swmtl_counts swmtl_counts;
swmtl_counts *swmtl_counts_new(void);
void swmtl_counts_free(swmtl_counts *c);
/* Command buffers of device committed from now on count into c (NULL: stop).
 * Returns 0, or -1 when device is not a software device. */
int swmtl_device_set_counts(id device, swmtl_counts *c);
int swmtl_counts_ndispatches(const swmtl_counts *c);
const swmtl_dispatch_counts *swmtl_counts_dispatch(const swmtl_counts *c, int i);
/* The distinct fields of memory m over the whole session (the rest zero). */
int swmtl_counts_nmemories(const swmtl_counts *c);
void swmtl_counts_memory(const swmtl_counts *c, int m, swmtl_mem_counts *out);
/* An error of a counted dispatch (the first), or NULL. */
const char *swmtl_counts_error(const swmtl_counts *c);
/* "fetch_add", ... for atomics_kind[k]; NULL for a kind never counted (0). */
const char *swmtl_atomic_kind_name(int k);

/* ---- offline compile and listing (`gdnbench compile`) ---- */

typedef struct sw_library sw_library;

/* Function-constant types (sw_library_constant_info). */
enum { SW_FC_BOOL = 1, SW_FC_INT, SW_FC_UINT, SW_FC_FLOAT, SW_FC_HALF, SW_FC_SHORT, SW_FC_USHORT };

/* Parses and compiles `source`, as newLibraryWithSource: does, with include
 * directories and -D definitions (opts may be NULL); quoted includes start from
 * filename's directory, which diagnostics name.  On failure returns NULL and sets
 * *err (malloc'd, caller frees) to the compiler's message mapped to
 * "file.metal:LINE:COL: error: ...". */
sw_library *sw_library_create_opts(const char *source, const char *filename, const msl_source_opts *opts,
                                   char **err);
void sw_library_free(sw_library *lib);

/* Names of the kernels found in the library (host names). */
int sw_library_kernel_count(const sw_library *lib);
const char *sw_library_kernel_name(const sw_library *lib, int i);

/* Function constants declared in the source: count, and (index, SW_FC_* type,
 * name, whether a value is required: 0 when the source tests the constant with
 * is_function_constant_defined(), Metal's MTLFunctionConstant.required). */
int sw_library_constant_count(const sw_library *lib);
int sw_library_constant_info(const sw_library *lib, int i, int *index, int *type, const char **name, int *required);
/* "bool", "int", ... for SW_FC_* */
const char *sw_fc_type_name(int type);

/* 1 when the library is compiled a kernel at a time (more kernels than
 * GDNBENCH_SW_WHOLE_LIBRARY_MAX, default 16): newLibrary only checks it. */
int sw_library_is_per_kernel(const sw_library *lib);

/* A kernel parameter's type read as MSL (binding_type.c): the element type ("float",
 * "half4", "Params"; "?" when unknown), the address space ("device", "constant",
 * "threadgroup", "thread") and whether the kernel cannot write through it. */
typedef struct swmtl_binding_type {
    char element[160];
    const char *space;
    int read_only;
    int pointer;                 /* 1: a pointer (an array), 0: a reference or a value */
} swmtl_binding_type;
void swmtl_binding_describe(const sw_binding *b, swmtl_binding_type *out);
/* The type inside "... [T = TYPE]" in MSL spelling (half, bfloat, uint, float4). */
void swmtl_type_clean(const char *pretty, char *out, size_t n);

/* A kernel as the compile command lists it. */
typedef struct sw_kernel_listing {
    const sw_kernel_info *info;  /* name, line, bindings; valid while the library lives */
    long tg_static_bytes;        /* threadgroup memory declared in its body; -1 when unknown */
} sw_kernel_listing;
/* Builds kernel `name` for listing (without constants; for a large library, every
 * kernel at once without optimisation: for inspecting, not for timing).  Returns 0,
 * or -1 with *err (malloc'd). */
int sw_library_list_kernel(sw_library *lib, const char *name, sw_kernel_listing *out, char **err);

#endif
