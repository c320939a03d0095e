/* test_op_double.h — a one-buffer test op for the runner's and driver's unit tests:
 * y = 2 x over N floats (x[i] = i), N even (validate rejects odd N, so the driver's
 * shape check has a rule to enforce).  Defined in test_op_double.c. */
#ifndef GDN_TEST_OP_DOUBLE_H
#define GDN_TEST_OP_DOUBLE_H

#include "ops/op.h"

extern const op_desc test_op_double;

#endif
