/* dump.h — --dump DIR: save a case's inputs, outputs and references as safetensors.
 *
 * One file per case, DIR/<op>_<dims>.safetensors, with every tensor of the case under
 * its op buffer name plus, per output, `<name>.ref_f64` and `<name>.ref_parity`
 * (float64).  `gdnbench <op> --fixture` reads such a file back. */
#ifndef GDN_DUMP_H
#define GDN_DUMP_H

#include <stddef.h>

#include "ops/op.h"

/* --dump DIR made if it is not there: 0, or -1 with a one-line error (an op's dump
 * and a kernel case's, kcase_dump.c). */
int dump_make_dir(const char *dir, char *err, size_t errlen);

/* Returns 0, or -1 with a one-line error naming the file. *path_out (may be NULL)
 * receives the file written. */
int dump_case(const char *dir, const op_case *c, char *path_out, size_t pathlen, char *err, size_t errlen);

#endif
