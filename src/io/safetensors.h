/* safetensors.h — read and write the safetensors format (huggingface/safetensors).
 *
 * Layout: u64 little-endian N, N bytes of JSON header (maybe space-padded), data.
 * The header maps tensor name -> {"dtype", "shape", "data_offsets": [begin, end]}
 * (offsets relative to the start of the data) plus an optional "__metadata__" object
 * of string -> string, kept in the set's meta map.
 *
 * Accepted dtypes: BF16 F16 F32 F64 I32 U32.  Checked on read: header length within
 * the file (and <= 100 MB), offsets inside the data section, begin <= end, no two
 * tensors overlapping, end - begin == numel * dtype size, at most TENSOR_MAX_DIMS dims,
 * names 1..47 bytes and unique.  Gaps between tensors and bytes after the last one are
 * allowed (other writers align tensors).  On error nothing is added to the set. */
#ifndef GDN_IO_SAFETENSORS_H
#define GDN_IO_SAFETENSORS_H

#include "io/io_util.h"

#define SAFETENSORS_MAX_HEADER (100u * 1024u * 1024u)

int safetensors_parse(const io_src *src, io_set *out, char *err, size_t errlen);
int safetensors_parse_mem(const void *buf, size_t len, const char *name, io_set *out, char *err, size_t errlen);
int safetensors_read(const char *path, io_set *out, char *err, size_t errlen);

/* Serialises tensors (in order, no gaps, data start 8-byte aligned) and metadata
 * (may be NULL/0) into a malloc'd buffer. */
int safetensors_serialize(tensor *const *ts, int n, const io_meta *meta, int nmeta, uint8_t **buf, size_t *len,
                          char *err, size_t errlen);
int safetensors_write(const char *path, tensor *const *ts, int n, const io_meta *meta, int nmeta, char *err,
                      size_t errlen);

/* "BF16" etc. <-> dtype; -1 for dtypes gdnbench does not read. */
int safetensors_dtype_from_string(const char *s, dtype *out);
const char *safetensors_dtype_string(dtype dt);

#endif
