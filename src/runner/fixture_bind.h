/* fixture_bind.h — running an op on recorded inputs (--fixture PATH).
 *
 * Shapes come from the fixture's parameters (a flag that contradicts them is an
 * error); the case's generated inputs are replaced by the fixture's tensors, which
 * must have the op's ABI shapes and dtypes; outputs the fixture carries become an
 * extra check (reference "fixture") next to our own references. */
#ifndef GDN_FIXTURE_BIND_H
#define GDN_FIXTURE_BIND_H

#include "io/fixture.h"
#include "ops/op.h"
#include "runner/record.h"

/* For every dimension of op found in the fixture's parameters: sets dim[i] and
 * found[i] = 1.  Returns the number found. */
int fixture_bind_dims(const fixture *f, const op_desc *op, int64_t *dim, int *found);

/* Copies the fixture's tensor into every BUF_IN/BUF_INOUT tensor of the case.
 * Returns 0, or -1 with a one-line error naming the file and the tensor. */
int fixture_bind_inputs(const fixture *f, op_case *c, char *err, size_t errlen);

/* Appends to rec one check per output the fixture has an expected value for, with
 * the fixture's tolerances (else the op's f64 tolerances; --atol/--rtol override).
 * Returns 1 if all of them pass. */
int fixture_check_outputs(const fixture *f, const op_case *c, int has_atol, double atol, int has_rtol, double rtol,
                          run_record *rec);

#endif
