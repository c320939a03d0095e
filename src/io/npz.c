/* npz.c — .npz reader: the zip central directory (zip64 included), stored members,
 * CRC-32 checks; each member parsed as a .npy in place (an io_src slice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "io/npz.h"

enum {
    SIG_LOCAL = 0x04034b50,
    SIG_CENTRAL = 0x02014b50,
    SIG_END = 0x06054b50,
    SIG_END64 = 0x06064b50,
    SIG_END64_LOCATOR = 0x07064b50,
};

#define NPZ_MAX_MEMBERS 4096
#define NPZ_MAX_DIRECTORY (16u << 20)

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

uint32_t npz_crc32(uint32_t crc, const void *data, size_t n) {
    /* Built per call (2K operations; callers pass 64 KB blocks): no shared state. */
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* Offset of the end-of-central-directory record: the last signature in the final
 * 22 + 65535 bytes (the longest comment) whose comment reaches the end exactly. */
static int find_end(const io_src *src, uint64_t *pos) {
    if (src->size < 22) return -1;
    uint64_t n = src->size < 22 + 65535 ? src->size : 22 + 65535;
    uint8_t *tail = malloc((size_t)n);
    int found = -1;
    if (tail && io_src_read(src, src->size - n, tail, (size_t)n) == 0) {
        for (uint64_t i = n - 22 + 1; i-- > 0;) {
            if (le32(tail + i) == SIG_END && le16(tail + i + 20) == n - i - 22) {
                *pos = src->size - n + i;
                found = 0;
                break;
            }
        }
    }
    free(tail);
    return found;
}

/* The directory's place and size, from the end record or, when that says "see
 * zip64" (0xffff / 0xffffffff), from the zip64 end record. */
static int read_directory_place(const io_src *src, uint64_t *entries, uint64_t *dir_off, uint64_t *dir_size,
                                char *err, size_t errlen) {
    const char *f = src->name;
    uint64_t end;
    uint8_t e[56];
    if (find_end(src, &end) != 0 || io_src_read(src, end, e, 22) != 0) {
        io_err(err, errlen, "%s: not a zip archive (no end-of-central-directory record): an .npz is written by numpy.savez",
               f);
        return -1;
    }
    if (le16(e + 4) != 0 || le16(e + 6) != 0 || le16(e + 8) != le16(e + 10)) {
        io_err(err, errlen, "%s: a multi-part zip archive is not supported: re-save it with numpy.savez", f);
        return -1;
    }
    *entries = le16(e + 10);
    *dir_size = le32(e + 12);
    *dir_off = le32(e + 16);
    if (*entries == 0xffff || *dir_size == 0xffffffffu || *dir_off == 0xffffffffu) {
        uint8_t loc[20];
        if (end < 20 || io_src_read(src, end - 20, loc, 20) != 0 || le32(loc) != SIG_END64_LOCATOR ||
            io_src_read(src, le64(loc + 8), e, 56) != 0 || le32(e) != SIG_END64) {
            io_err(err, errlen, "%s: the zip64 end record is missing or damaged: the archive is corrupt", f);
            return -1;
        }
        *entries = le64(e + 32);
        *dir_size = le64(e + 40);
        *dir_off = le64(e + 48);
    }
    if (*entries > NPZ_MAX_MEMBERS || *dir_size > NPZ_MAX_DIRECTORY || *dir_off > src->size ||
        *dir_size > src->size - *dir_off) {
        io_err(err, errlen, "%s: implausible central directory (%llu members, %llu bytes at %llu): the archive is corrupt",
               f, (unsigned long long)*entries, (unsigned long long)*dir_size, (unsigned long long)*dir_off);
        return -1;
    }
    return 0;
}

/* The zip64 extra field (id 1) holds, in order, each of the sizes and the offset
 * whose 32-bit field is 0xffffffff. */
static int apply_zip64_extra(const uint8_t *x, size_t xlen, uint64_t *usize, uint64_t *csize, uint64_t *local) {
    for (size_t i = 0; i + 4 <= xlen;) {
        uint16_t id = le16(x + i), sz = le16(x + i + 2);
        if (i + 4 + sz > xlen) return -1;
        if (id == 1) {
            const uint8_t *q = x + i + 4, *qend = q + sz;
            uint64_t *fields[3] = {usize, csize, local};
            for (int k = 0; k < 3; k++) {
                if (*fields[k] != 0xffffffffu) continue;
                if (q + 8 > qend) return -1;
                *fields[k] = le64(q);
                q += 8;
            }
        }
        i += 4 + (size_t)sz;
    }
    return 0;
}

static int check_crc(const io_src *m, uint32_t want) {
    uint8_t buf[1 << 16];
    uint32_t crc = 0;
    for (uint64_t off = 0; off < m->size;) {
        size_t n = m->size - off < sizeof buf ? (size_t)(m->size - off) : sizeof buf;
        if (io_src_read(m, off, buf, n) != 0) return -1;
        crc = npz_crc32(crc, buf, n);
        off += n;
    }
    return crc == want ? 0 : -1;
}

/* What the central directory says of one member. */
typedef struct zip_member {
    char name[256]; /* as stored, cut at 255 bytes */
    uint16_t nlen, flags, method;
    uint32_t crc;
    uint64_t csize, usize, local;
} zip_member;

/* The central directory entry at dir[*at] into z; *at moves past it. */
static int read_central_entry(const io_src *src, const uint8_t *dir, uint64_t dir_size, uint64_t *at, zip_member *z,
                              char *err, size_t errlen) {
    const char *f = src->name;
    const uint8_t *p = dir + *at;
    if (dir_size - *at < 46 || le32(p) != SIG_CENTRAL) {
        io_err(err, errlen, "%s: damaged central directory entry at byte %llu: the archive is corrupt", f,
               (unsigned long long)*at);
        return -1;
    }
    uint16_t xlen = le16(p + 30), clen = le16(p + 32);
    z->nlen = le16(p + 28);
    z->flags = le16(p + 8);
    z->method = le16(p + 10);
    z->crc = le32(p + 16);
    z->csize = le32(p + 20);
    z->usize = le32(p + 24);
    z->local = le32(p + 42);
    if (dir_size - *at - 46 < (uint64_t)z->nlen + xlen + clen) {
        io_err(err, errlen, "%s: a central directory entry runs past the directory: the archive is corrupt", f);
        return -1;
    }
    snprintf(z->name, sizeof z->name, "%.*s", (int)(z->nlen < 255 ? z->nlen : 255), (const char *)(p + 46));
    *at += 46 + (uint64_t)z->nlen + xlen + clen;
    if (apply_zip64_extra(p + 46 + z->nlen, xlen, &z->usize, &z->csize, &z->local) != 0) {
        io_err(err, errlen, "%s: member '%s': damaged zip64 extra field: the archive is corrupt", f, z->name);
        return -1;
    }
    return 0;
}

/* A member numpy.savez writes: stored, not encrypted, named NAME.npy; NAME into tname. */
static int member_tensor_name(const io_src *src, const zip_member *z, char *tname, char *err, size_t errlen) {
    const char *f = src->name, *name = z->name;
    if (z->flags & 1) {
        io_err(err, errlen, "%s: member '%s' is encrypted: save the arrays with numpy.savez, without a password", f, name);
        return -1;
    }
    if (z->method == 8) {
        io_err(err, errlen, "%s: member '%s' is deflate-compressed (numpy.savez_compressed), which gdnbench does not "
                            "read: re-save with numpy.savez, or unzip it into a directory of .npy files", f, name);
        return -1;
    }
    if (z->method != 0 || z->csize != z->usize) {
        io_err(err, errlen, "%s: member '%s' uses zip compression method %u: gdnbench reads stored members only (what "
                            "numpy.savez writes)", f, name, (unsigned)z->method);
        return -1;
    }
    size_t stem = strlen(name);
    if (!io_has_suffix(name, ".npy") || z->nlen > 255 || (stem -= 4) == 0 || stem >= TENSOR_NAME_MAX) {
        io_err(err, errlen, "%s: member '%s' is not a NAME.npy array with a name of 1..%d characters: an .npz from "
                            "numpy.savez holds only those", f, name, TENSOR_NAME_MAX - 1);
        return -1;
    }
    memcpy(tname, name, stem);
    tname[stem] = 0;
    return 0;
}

/* The member's bytes as a slice of src (named "FILE:MEMBER"), after its local header,
 * checked against its CRC-32. */
static int open_member_data(const io_src *src, const zip_member *z, io_src *m, char *err, size_t errlen) {
    const char *f = src->name, *name = z->name;
    uint8_t lh[30];
    if (io_src_read(src, z->local, lh, 30) != 0 || le32(lh) != SIG_LOCAL) {
        io_err(err, errlen, "%s: member '%s': its local header is missing: the archive is corrupt or truncated", f, name);
        return -1;
    }
    uint64_t data = z->local + 30 + le16(lh + 26) + le16(lh + 28);
    char mname[sizeof src->name];
    snprintf(mname, sizeof mname, "%.*s:%s", 200, f, name);
    if (io_src_slice(m, src, data, z->usize, mname) != 0) {
        io_err(err, errlen, "%s: member '%s' (%llu bytes) runs past the end of the file: the archive is truncated", f,
               name, (unsigned long long)z->usize);
        return -1;
    }
    if (check_crc(m, z->crc) != 0) {
        io_err(err, errlen, "%s: member '%s' fails its CRC-32 check: the archive is corrupt", f, name);
        return -1;
    }
    return 0;
}

/* One member of the central directory at dir[*at]: adds its tensor to set. */
static int read_member(const io_src *src, const uint8_t *dir, uint64_t dir_size, uint64_t *at, io_set *set, char *err,
                       size_t errlen) {
    zip_member z;
    char tname[TENSOR_NAME_MAX];
    io_src m;
    if (read_central_entry(src, dir, dir_size, at, &z, err, errlen) != 0 ||
        member_tensor_name(src, &z, tname, err, errlen) != 0 || open_member_data(src, &z, &m, err, errlen) != 0)
        return -1;
    if (io_set_find(set, tname) >= 0) {
        io_err(err, errlen, "%s: member '%s' appears twice: the archive is corrupt", src->name, z.name);
        return -1;
    }
    tensor *t;
    if (npy_parse(&m, tname, &t, err, errlen) != 0) return -1;
    if (io_set_add(set, t, IO_ROLE_UNKNOWN) != 0) {
        io_err(err, errlen, "%s: out of memory", src->name);
        return -1;
    }
    return 0;
}

int npz_parse(const io_src *src, io_set *out, char *err, size_t errlen) {
    uint64_t entries, dir_off, dir_size;
    if (read_directory_place(src, &entries, &dir_off, &dir_size, err, errlen) != 0) return -1;
    uint8_t *dir = malloc((size_t)(dir_size ? dir_size : 1));
    if (!dir || io_src_read(src, dir_off, dir, (size_t)dir_size) != 0) {
        io_err(err, errlen, "%s: cannot read the central directory: %s", src->name, dir ? "read error" : "out of memory");
        free(dir);
        return -1;
    }
    io_set tmp = {0};
    int rc = 0;
    uint64_t at = 0;
    for (uint64_t i = 0; i < entries && rc == 0; i++) rc = read_member(src, dir, dir_size, &at, &tmp, err, errlen);
    free(dir);
    if (rc == 0 && io_set_move(out, &tmp) != 0) {
        io_err(err, errlen, "%s: out of memory", src->name);
        rc = -1;
    }
    io_set_clear(&tmp);
    return rc;
}

int npz_parse_mem(const void *buf, size_t len, const char *name, io_set *out, char *err, size_t errlen) {
    io_src s;
    io_src_init_mem(&s, name, buf, len);
    return npz_parse(&s, out, err, errlen);
}

int npz_read(const char *path, io_set *out, char *err, size_t errlen) {
    io_src s;
    if (io_src_open_file(&s, path, err, errlen) != 0) return -1;
    int rc = npz_parse(&s, out, err, errlen);
    io_src_close(&s);
    return rc;
}
