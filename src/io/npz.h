/* npz.h — read NumPy .npz archives: a zip file of .npy members, one tensor each.
 *
 * numpy.savez writes every member stored (uncompressed), each with a zip64 extra
 * field; that is what is read, through the zip's central directory (zip64 records
 * included), with the CRC-32 of every member checked.  numpy.savez_compressed
 * deflates its members: gdnbench has no inflater (it would mean a zlib dependency),
 * so such a member is refused with a message saying to re-save with numpy.savez.
 * Member "k.npy" is tensor "k"; the .npy inside is read by npy_parse. */
#ifndef GDN_IO_NPZ_H
#define GDN_IO_NPZ_H

#include "io/io_util.h"

/* Adds every member of the archive to out (which it fills completely or leaves as
 * it was).  0, or -1 with a one-line error naming the file and the member. */
int npz_parse(const io_src *src, io_set *out, char *err, size_t errlen);
int npz_parse_mem(const void *buf, size_t len, const char *name, io_set *out, char *err, size_t errlen);
int npz_read(const char *path, io_set *out, char *err, size_t errlen);

/* CRC-32 (IEEE 802.3, as zip uses) of n bytes, continuing from crc (0 to start). */
uint32_t npz_crc32(uint32_t crc, const void *data, size_t n);

#endif
