/* npy.h — read and write NumPy .npy files (one array per file).
 *
 * Read: format versions 1.0, 2.0 and 3.0; the header is a Python dict literal parsed
 * by a small parser here (no Python needed) with exactly the keys 'descr',
 * 'fortran_order' and 'shape'.  Accepted descr values:
 *   '<f4' f32, '<f8' f64, '<f2' f16, '<i4' i32, '<u4' u32, and '<V2' or '|V2' read as
 *   bf16 — a 2-byte void is how arrays of ml_dtypes.bfloat16 (JAX, torch via
 *   ml_dtypes) are saved, since NumPy has no bfloat16 of its own.
 * Rejected with a message saying how to re-save: big-endian ('>f4'), native-order
 * ('=f4') and other dtypes, fortran_order True, structured dtypes, more than
 * TENSOR_MAX_DIMS dims, a data section that is not exactly numel * itemsize bytes.
 *
 * Write: version 1.0 (2.0 if the header would not fit), header padded with spaces to
 * a multiple of 64 bytes and ended by '\n', as numpy.save does; bf16 is written as '<V2'
 * (load it with np.load(f).view(ml_dtypes.bfloat16)). */
#ifndef GDN_IO_NPY_H
#define GDN_IO_NPY_H

#include "io/io_util.h"

#define NPY_MAX_HEADER (1u << 20)

/* Parses one array into *out (a new tensor named `tensor_name`); on error *out is
 * untouched. */
int npy_parse(const io_src *src, const char *tensor_name, tensor **out, char *err, size_t errlen);
int npy_parse_mem(const void *buf, size_t len, const char *file_name, const char *tensor_name, tensor **out,
                  char *err, size_t errlen);
/* Reads a file; the tensor is named by the file's stem ("dir/k.npy" -> "k"). */
int npy_read(const char *path, tensor **out, char *err, size_t errlen);

int npy_serialize(const tensor *t, uint8_t **buf, size_t *len, char *err, size_t errlen);
int npy_write(const char *path, const tensor *t, char *err, size_t errlen);

/* The tensor name a file stem gives, or -1 when it is empty or too long. */
int npy_stem_name(const char *path, char *name, size_t n);

#endif
