/* fixture.h — one API over every fixture format gdnbench reads (--fixture PATH) and
 * the writers behind --dump DIR.
 *
 * fixture_open accepts:
 *   - a .safetensors file (params/tolerances from __metadata__; the optional metadata
 *     keys "inputs" and "outputs", comma lists of tensor names, give tensor roles);
 *   - a .npy file: one tensor named by the file stem;
 *   - a .npz file (numpy.savez: a zip of .npy members, stored; see io/npz.h);
 *   - an mlx-native PREFIX_meta.json, or DIR/PREFIX (the meta.json is found);
 *   - a directory: the single *_meta.json set in it (several: an error listing them),
 *     else all of its *.npy files, else its single *.npz, else its single *.safetensors file.
 * Files with another extension are recognised by their first bytes.
 * Every failure is one line naming the file (and tensor) and what would fix it; a
 * fixture is either fully loaded or not returned at all. */
#ifndef GDN_IO_FIXTURE_H
#define GDN_IO_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "io/io_util.h"
#include "ops/op.h"

typedef struct fixture fixture;

fixture *fixture_open(const char *path, char *err, size_t errlen);
void fixture_free(fixture *f);

const char *fixture_path(const fixture *f);
/* "safetensors", "npy", "npy-dir", "npz" or "mlx-native". */
const char *fixture_format(const fixture *f);

int fixture_count(const fixture *f);
const tensor *fixture_at(const fixture *f, int i);      /* i in [0, count) */
io_role fixture_role_at(const fixture *f, int i);
/* Exact-name lookup; NULL when absent. */
const tensor *fixture_get(const fixture *f, const char *name);

/* Parameter from the metadata (mlx-native: "B", "T", "seed" = "0x00C0FFEE", booleans
 * as 1/0; safetensors: a __metadata__ string holding an integer).  0 when found and
 * an integer, -1 otherwise (*out untouched). */
int fixture_param(const fixture *f, const char *name, int64_t *out);
int fixture_param_f64(const fixture *f, const char *name, double *out);
/* Raw metadata string, NULL when absent. */
const char *fixture_meta(const fixture *f, const char *key);

/* Tolerance for a tensor from the metadata keys NAME_atol / NAME_rtol; when absent,
 * shorter '_'-separated prefixes of NAME are tried ("final_state" -> "final", as
 * mlx-native writes).  Returns a mask: 1 = atol found, 2 = rtol found (each written
 * only when found); 0 = none. */
int fixture_tolerance(const fixture *f, const char *name, double *atol, double *rtol);

/* Finds the fixture tensor for an op buffer: for each candidate name — b->name, then
 * each entry of b->fixture_names — tries NAME, input_NAME and NAME_ref (the forms
 * mlx-native file names use), first exactly, then ignoring case.  0 and *out set
 * when found, -1 when not. */
int fixture_match_op_buf(const fixture *f, const op_buf *b, const tensor **out);

/* -1 (err names the tensor, the count and first position of NaN/Inf) when t holds a
 * non-finite value; source (a file name, may be NULL) goes at the start of the message. */
int fixture_check_finite(const tensor *t, const char *source, char *err, size_t errlen);
/* fixture_check_finite over every tensor of the fixture. */
int fixture_check_all_finite(const fixture *f, char *err, size_t errlen);

/* --dump: all tensors into one safetensors file, or one NAME.npy per tensor in dir
 * (created if missing). */
int fixture_write_safetensors(const char *path, tensor *const *ts, int n, char *err, size_t errlen);
int fixture_write_safetensors_meta(const char *path, tensor *const *ts, int n, const io_meta *meta, int nmeta,
                                   char *err, size_t errlen);
int fixture_write_npy_dir(const char *dir, tensor *const *ts, int n, char *err, size_t errlen);

#endif
