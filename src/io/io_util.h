/* io_util.h — what the fixture readers and writers share: byte sources (a file or a
 * memory buffer, so the parsers can be fuzzed without touching disk), the tensor set a
 * reader produces, one-line error messages, directory listings and small JSON/string
 * helpers.
 *
 * Ownership: an io_set owns its tensors and metadata strings (io_set_clear frees them).
 * Readers fill a set completely or leave it exactly as they found it. */
#ifndef GDN_IO_UTIL_H
#define GDN_IO_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/tensor.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fixture I/O assumes a little-endian host (every supported format stores little-endian data)"
#endif

/* A readable sequence of bytes: a file (read with pread) or a memory buffer. */
typedef struct io_src {
    char name[512];          /* what messages call it: the path as given */
    uint64_t size;
    const uint8_t *mem;      /* memory source, or NULL */
    int fd;                  /* file source, or -1 */
    uint64_t base;           /* offset of byte 0 in the file or memory (a slice), else 0 */
    int borrowed_fd;         /* 1: a slice's fd belongs to its parent; close leaves it open */
} io_src;

int io_src_open_file(io_src *s, const char *path, char *err, size_t errlen);
void io_src_init_mem(io_src *s, const char *name, const void *buf, size_t len);
/* Copies n bytes at offset off into dst; -1 when the range is outside the source
 * or the read fails. */
int io_src_read(const io_src *s, uint64_t off, void *dst, size_t n);
void io_src_close(io_src *s);
/* A view of len bytes of parent from byte off (a member of an archive): reads go to
 * the parent's file or memory, which must outlive the slice.  -1 when the range is
 * outside the parent. */
int io_src_slice(io_src *slice, const io_src *parent, uint64_t off, uint64_t len, const char *name);

/* Where a tensor sits in a fixture: fed to the kernel, or the expected result. */
typedef enum io_role { IO_ROLE_UNKNOWN = 0, IO_ROLE_INPUT, IO_ROLE_OUTPUT } io_role;

typedef struct io_entry {
    tensor *t;
    io_role role;
} io_entry;

typedef struct io_meta {
    char *key, *value;
} io_meta;

typedef struct io_set {
    io_entry *e;
    int n, cap;
    io_meta *meta;
    int nmeta, metacap;
} io_set;

/* Takes ownership of t (also on failure, when it frees it).  -1 on out of memory. */
int io_set_add(io_set *s, tensor *t, io_role role);
/* Copies key and value; a key already present gets the new value. */
int io_set_add_meta(io_set *s, const char *key, const char *value);
const char *io_set_meta(const io_set *s, const char *key);
int io_set_find(const io_set *s, const char *name); /* index or -1, exact match */
void io_set_clear(io_set *s);
/* Moves every entry of src to the end of dst, leaving src empty. */
int io_set_move(io_set *dst, io_set *src);

/* vsnprintf into err with every newline replaced by a space: messages stay one line. */
void io_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Bytes of a tensor of this dtype and shape into *out; -1 when a dim is negative,
 * ndim is outside [0, TENSOR_MAX_DIMS] or the product overflows 2^62. */
int io_shape_bytes(dtype dt, int ndim, const int64_t *shape, uint64_t *out);
void io_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

/* Reads a whole file of at most max bytes into a NUL-terminated malloc'd buffer. */
int io_read_small_file(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen);

/* Writes a file atomically: data goes to a temporary file next to path that commit
 * renames over path, so a failed write never leaves a half-written fixture behind.
 * put() remembers the first failure; commit reports it (and removes the temporary). */
typedef struct io_writer {
    char *path, *tmp;
    FILE *f;
    int failed;
} io_writer;

int io_writer_open(io_writer *w, const char *path, char *err, size_t errlen);
void io_writer_put(io_writer *w, const void *data, size_t n);
int io_writer_commit(io_writer *w, char *err, size_t errlen);
int io_write_file(const char *path, const void *buf, size_t len, char *err, size_t errlen);

/* Growable byte buffer for the writers. */
typedef struct io_buf {
    uint8_t *p;
    size_t len, cap;
    int oom;                 /* set once an append failed; later appends do nothing */
} io_buf;

void io_buf_append(io_buf *b, const void *data, size_t n);
void io_buf_printf(io_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal (quotes and escapes included). */
void io_buf_json_string(io_buf *b, const char *s);
void io_buf_free(io_buf *b);

/* Parses text[0..len) as one JSON value followed by nothing but white space.  NULL on
 * failure, *at then the byte offset of the trouble and *trailing 1 when it is text
 * after a complete value (0 when the value itself is malformed). */
struct cJSON *io_json_parse_whole(const char *text, size_t len, long *at, int *trailing);
/* A JSON number that is a non-negative integer a double holds exactly (<= 2^53) into
 * *out; -1 for anything else. */
int io_json_uint(const struct cJSON *x, uint64_t *out);

/* "dir/sub/name.npy" -> "name.npy" (pointer into path). */
const char *io_basename(const char *path);
int io_has_suffix(const char *s, const char *suffix);

/* "dir/name" followed by suffix (may be ""), malloc'd; NULL when memory runs out. */
char *io_path_join(const char *dir, const char *name, const char *suffix);

/* The names of the entries of dir that end in suffix ("": all), without those starting
 * with '.', in the directory's own order; malloc'd, free with io_free_names.  -1 when
 * dir cannot be opened, -2 when memory runs out (errno says why). */
int io_list_dir(const char *dir, const char *suffix, char ***names, int *n);
void io_sort_names(char **names, int n);
void io_free_names(char **names, int n);

#endif
