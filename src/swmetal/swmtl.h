/* swmtl.h — C entry points of the software Metal device.
 *
 * swmtl_create_system_default_device() is the Linux stand-in for
 * MTLCreateSystemDefaultDevice(): it returns a device object (+1) that answers the
 * Metal selectors (see /work/shared/spec/swmetal.md and objc_device.c).  The rest
 * configures the device process-wide or reads what Metal's API cannot carry. */
/* Extension selectors.  What the device offers beyond Metal's API is reached through
 * these methods, which a host asks for with class_respondsToSelector (as it asks for
 * Metal's optional features) so that the same code drives a GPU, which answers none
 * of them (src/metal/mtl.c does so):
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
 * buffer asked for private storage is host memory and answers contents, and
 * newLibraryWithSource: takes the file name its diagnostics report from the
 * source's first `#line 1 "file"` (after any #define lines; msl_expand_source writes
 * it), "source.metal" without one. */
#ifndef GDN_SWMTL_H
#define GDN_SWMTL_H

#include <stddef.h>
#include <stdint.h>

#include "core/finding.h"
#include "core/objc_call.h"
#include "swmetal/sw_abi.h"

/* A new reference to a software device (+1; release it). */
id swmtl_create_system_default_device(void);

/* The software device's class for a Metal class the host instantiates itself
 * ("MTLCompileOptions", "MTLFunctionConstantValues", "MTLCounterSampleBufferDescriptor",
 * "MTLComputePassDescriptor", "MTLComputePassSampleBufferAttachmentDescriptor"): the
 * device only takes its own, and on a Mac objc_getClass() of those names is
 * Metal.framework's.  Nil for any other name. */
Class swmtl_class(const char *metal_name);

/* 1 when newLibraryWithSource: can work here (a clang++ that builds the MSL
 * prelude was found); 0 with err set to one line naming the fix for this platform.
 * Found once per process. */
int swmtl_can_compile(char *err, size_t errlen);

/* 0: the device answers supportsCounterSampling: NO for every sampling point, as a
 * GPU without stage-boundary counters does (tests of the hosts' fallback); 1 (the
 * default): YES for MTLCounterSamplingPointAtStageBoundary. */
void swmtl_set_counter_sampling(int enabled);

/* Work the device has done since the process started: dispatches run and command
 * buffers executed (what a test counts to know how often an op ran). */
uint64_t swmtl_dispatches_executed(void);
uint64_t swmtl_command_buffers_executed(void);

/* Checks: "none", "fast" (default) or "full".  Returns 0, or -1 for another value
 * (the mode is left unchanged).  Overrides GDNBENCH_SW_CHECKS.  Buffers keep the
 * layout of the mode they were created in; set the mode before creating them. */
int swmtl_set_checks(const char *mode);
/* Fiber order within a threadgroup between synchronisation points:
 * "inorder", "reverse" or "random:SEED".  Returns 0 or -1.  Overrides
 * GDNBENCH_SW_SCHEDULE. */
int swmtl_set_schedule(const char *spec);
/* Order threadgroups start in: "inorder", "reverse" or "random:SEED" (the
 * determinism check runs a second, permuted order).  Returns 0 or -1. */
int swmtl_set_threadgroup_order(const char *spec);
/* 0: kernels with a lanes variant (msl_lanes.c) run on fibers too; 1 (default): lanes. */
void swmtl_set_lanes(int on);

/* A library whose functions are C entries (the sw_kernel_info table stays owned by
 * the caller and must outlive the library; terminated by an entry with name NULL).
 * For tests and host-side kernels; +1. */
id swmtl_new_native_library(id device, const sw_kernel_info *kernels);

/* The kernel functions a library defines (host names, as newFunctionWithName: takes
 * them): how many, and the i-th (NULL when i is out of range).  What MTLLibrary's
 * functionNames answers on Metal. */
int swmtl_library_function_count(id library);
const char *swmtl_library_function_name(id library, int i);

/* Diagnostics of a completed command buffer: how many there were in all, and the
 * i-th of those kept (i < kept), or NULL. */
uint64_t swmtl_command_buffer_diagnostic_count(id command_buffer, int *kept);
const char *swmtl_command_buffer_diagnostic(id command_buffer, int i);

/* The findings of a completed command buffer's failing dispatch (every distinct
 * one, grouped and with source lines), owned by the command buffer; NULL with
 * *n = 0 when there are none or it is not one of ours. */
const dev_finding *swmtl_command_buffer_findings(id command_buffer, int *n);

#endif
