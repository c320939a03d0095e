/* check.h — comparing a kernel's output tensor with a reference, and output poisoning.
 *
 * Outputs are filled with a poison pattern (a NaN with a payload kernels never
 * produce) before every run, so elements a kernel forgot to write are counted as
 * `unwritten` instead of passing by luck. */
#ifndef GDN_CHECK_H
#define GDN_CHECK_H

#include "ops/op.h"
#include "runner/record.h"

/* Fills t with the poison pattern of its dtype (integer tensors: 0xA5 bytes). */
void poison_tensor(tensor *t);
int is_poison(dtype dt, const void *base, int64_t i);

/* Compares out with ref (numel(out) doubles) and fills rc: max_abs, max_rel (relative
 * error over elements with |ref| > max(atol, 1e-12), so zeros do not dominate),
 * rel_l2 = ||out-ref|| / ||ref||, ulp_p99 (bf16/f16 outputs: distance in units in the
 * last place between out and ref rounded to the output type; -1 otherwise),
 * NaN/Inf/unwritten counts, n_bad and the first bad element with its coordinates.
 * An element is bad when it is NaN/Inf/unwritten while the reference is finite, or
 * |out - ref| > atol + rtol*|ref|.  pass = no bad element and rel_l2 within tol. */
void check_output(const tensor *out, const double *ref, const char *reference, op_tol tol, rec_check *rc);

#endif
