/* front_cache.c — front_cache.h: the front end's result and variant keys on disk.
 *
 * An entry is: 8 bytes of magic (kind and format version), the payload's length
 * (u64, little-endian), the payload, and a 64-bit checksum of the payload.  The
 * reader checks all three before it parses, and the parser checks every length
 * against what is left, so a truncated, corrupt or foreign file is a miss (and
 * removed: the caller rebuilds it), never a unit with wrong kernels in it.  The
 * payload starts with the entry's own key, so a file under the wrong name is one
 * too.  The checksum guards against damage, not against someone who writes the
 * cache on purpose (who could as well write its shared objects). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sha256.h"
#include "swmetal/front_cache.h"
#include "swmetal/sw_abi.h"
#include "swmetal/sw_files.h"

#define FRONT_MAGIC "gdnfe01\n"
#define ALIAS_MAGIC "gdnvk01\n"
#define HEADER_BYTES 16 /* magic + length */
#define NULL_STRING 0xffffffffu

int sw_front_cache_enabled(void) {
#ifdef SW_FRONT_ID
    const char *e = getenv("GDNBENCH_SW_FRONT_CACHE");
    return !(e && strcmp(e, "0") == 0);
#else
    return 0;
#endif
}

void sw_front_key(const char *expanded, const char *filename, const char *settings, const char *cc_path,
                  const char *cc_version, char hex[65]) {
#ifdef SW_FRONT_ID
    const char *id = SW_FRONT_ID;
#else
    const char *id = "";
#endif
    char hdr[96];
    snprintf(hdr, sizeof hdr, "front1 abi=%d", SW_ABI_VERSION);
    const char *parts[] = {hdr, id, settings, filename, cc_path, cc_version, expanded};
    sha256_ctx c;
    uint8_t d[32];
    sha256_init(&c);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) sha256_update(&c, parts[i], strlen(parts[i]) + 1);
    sha256_final(&c, d);
    sha256_to_hex(d, hex);
}

/* A 64-bit checksum: each step is a bijection of the state for a given word, so
 * two payloads of one length that differ in any one word always differ here. */
static uint64_t checksum(const unsigned char *p, size_t n) {
    const uint64_t m = 0x9e3779b97f4a7c15ull;
    uint64_t h = 0x6a09e667f3bcc908ull ^ (uint64_t)n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * m;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w ^ ((uint64_t)(n - i) << 56)) * m;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static void put_u64_at(unsigned char *at, uint64_t v) {
    for (int i = 0; i < 8; i++) at[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64_at(const unsigned char *at) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)at[i] << (8 * i);
    return v;
}

/* ------------------------------------------------------------ writing */

static void put_u32(msl_buf *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    msl_buf_put(b, (const char *)x, 4);
}

static void put_int(msl_buf *b, int v) { put_u32(b, (uint32_t)v); }

static void put_str(msl_buf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (!s || n >= NULL_STRING) {
        put_u32(b, NULL_STRING);
        return;
    }
    put_u32(b, (uint32_t)n);
    msl_buf_put(b, s, n);
}

/* Frames the payload b holds after its first HEADER_BYTES and writes it to path. */
static void write_entry(msl_buf *b, const char *magic, const char *path) {
    unsigned char sum[8];
    if (!b->oom && b->len >= HEADER_BYTES) {
        size_t n = b->len - HEADER_BYTES;
        put_u64_at(sum, checksum((const unsigned char *)b->p + HEADER_BYTES, n));
        msl_buf_put(b, (const char *)sum, 8);
        if (!b->oom) {
            memcpy(b->p, magic, 8);
            put_u64_at((unsigned char *)b->p + 8, (uint64_t)n);
            (void)sw_write_file_atomic(path, b->p, b->len);
        }
    }
    free(b->p);
    *b = (msl_buf){0};
}

static void begin_entry(msl_buf *b) { msl_buf_put(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", HEADER_BYTES); }

static void put_kernel(msl_buf *b, const msl_kernel *k) {
    put_str(b, k->host_name);
    put_str(b, k->callee);
    put_str(b, k->file);
    put_int(b, k->line);
    put_int(b, k->nbindings);
    for (int i = 0; i < k->nbindings; i++) {
        const msl_binding *x = &k->bindings[i];
        put_int(b, x->kind);
        put_int(b, x->index);
        put_int(b, x->line);
        put_str(b, x->param);
        put_str(b, x->type_word);
    }
    put_int(b, k->inst);
    put_int(b, k->inst_lo);
    put_int(b, k->inst_hi);
    put_str(b, k->max_threads);
}

static void entry_path(char *out, size_t n, const char *cache, const char *prefix, const char *key, const char *ext) {
    snprintf(out, n, "%s/%s%.64s.%s", cache, prefix, key, ext);
}

void sw_front_store(const char *cache, const char *key, const sw_front_result *r) {
    msl_buf b = {0};
    begin_entry(&b);
    put_str(&b, key);
    put_int(&b, r->sync_free);
    put_int(&b, r->atomic_free);
    put_int(&b, r->unit.emit_range);
    put_int(&b, r->unit.atomic_free);
    put_str(&b, r->unit.text);
    put_str(&b, r->lanes_text);
    put_str(&b, r->lanes_why);
    put_int(&b, r->unit.nkernels);
    for (int k = 0; k < r->unit.nkernels; k++) put_kernel(&b, &r->unit.kernels[k]);
    put_int(&b, r->unit.nconstants);
    for (int i = 0; i < r->unit.nconstants; i++) {
        const msl_constant *c = &r->unit.constants[i];
        put_str(&b, c->name);
        put_int(&b, c->index);
        put_int(&b, c->type);
        put_int(&b, c->tested);
    }
    char path[4300];
    entry_path(path, sizeof path, cache, "fe-", key, "front");
    write_entry(&b, FRONT_MAGIC, path);
}

void sw_alias_store(const char *cache, const char *alias, const char *vkey) {
    msl_buf b = {0};
    begin_entry(&b);
    put_str(&b, alias);
    put_str(&b, vkey);
    char path[4300];
    entry_path(path, sizeof path, cache, "vk-", alias, "vkey");
    write_entry(&b, ALIAS_MAGIC, path);
}

/* ------------------------------------------------------------ reading */

typedef struct reader {
    const unsigned char *p, *end;
    int bad;
} reader;

static uint32_t get_u32(reader *r) {
    if (r->bad || r->end - r->p < 4) {
        r->bad = 1;
        return 0;
    }
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static int get_int(reader *r) { return (int)get_u32(r); }

/* A count of items of at least `min_bytes` each: one the rest cannot hold is bad. */
static int get_count(reader *r, size_t min_bytes) {
    int n = get_int(r);
    if (n < 0 || (size_t)n > (size_t)(r->end - r->p) / min_bytes) r->bad = 1;
    return r->bad ? 0 : n;
}

/* Malloc'd (NULL for a stored NULL, and when bad: check r->bad). */
static char *get_str(reader *r) {
    uint32_t n = get_u32(r);
    if (r->bad || n == NULL_STRING) return NULL;
    if ((size_t)(r->end - r->p) < n || memchr(r->p, 0, n)) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}

/* Whether the stored key is `key`. */
static int get_key(reader *r, const char *key) {
    char *k = get_str(r);
    int ok = k && strcmp(k, key) == 0;
    free(k);
    if (!ok) r->bad = 1;
    return ok;
}

static void get_kernel(reader *r, msl_kernel *k) {
    k->host_name = get_str(r);
    k->callee = get_str(r);
    k->file = get_str(r);
    k->line = get_int(r);
    int n = get_count(r, 20);
    k->bindings = n ? calloc((size_t)n, sizeof *k->bindings) : NULL;
    if (n && !k->bindings) r->bad = 1;
    for (int i = 0; i < n && !r->bad; i++) {
        msl_binding *x = &k->bindings[i];
        k->nbindings = i + 1; /* what msl_unit_free frees */
        x->kind = get_int(r);
        x->index = get_int(r);
        x->line = get_int(r);
        x->param = get_str(r);
        x->type_word = get_str(r);
    }
    k->inst = get_int(r);
    k->inst_lo = get_int(r);
    k->inst_hi = get_int(r);
    k->max_threads = get_str(r);
}

static void get_unit_lists(reader *r, msl_unit *u) {
    int n = get_count(r, 40);
    u->kernels = n ? calloc((size_t)n, sizeof *u->kernels) : NULL;
    if (n && !u->kernels) r->bad = 1;
    for (int k = 0; k < n && !r->bad; k++) {
        u->nkernels = k + 1;
        get_kernel(r, &u->kernels[k]);
    }
    n = get_count(r, 16);
    u->constants = n ? calloc((size_t)n, sizeof *u->constants) : NULL;
    if (n && !u->constants) r->bad = 1;
    for (int i = 0; i < n && !r->bad; i++) {
        msl_constant *c = &u->constants[i];
        u->nconstants = i + 1;
        c->name = get_str(r);
        c->index = get_int(r);
        c->type = get_int(r);
        c->tested = get_int(r);
    }
}

/* The verified payload of the entry at path: 1 with r over it (*data to free), or
 * 0 when there is none; one that does not verify is removed. */
static int open_entry(const char *path, const char *magic, char **data, reader *r) {
    size_t len = 0;
    *data = sw_read_file(path, &len);
    if (!*data) return 0;
    const unsigned char *p = (const unsigned char *)*data;
    int ok = len >= HEADER_BYTES + 8 && memcmp(p, magic, 8) == 0 && get_u64_at(p + 8) == len - HEADER_BYTES - 8 &&
             checksum(p + HEADER_BYTES, len - HEADER_BYTES - 8) == get_u64_at(p + len - 8);
    if (!ok) {
        free(*data);
        *data = NULL;
        (void)unlink(path);
        return 0;
    }
    *r = (reader){p + HEADER_BYTES, p + len - 8, 0};
    return 1;
}

static void result_free(sw_front_result *f) {
    msl_unit_free(&f->unit);
    free(f->lanes_text);
    free(f->lanes_why);
    *f = (sw_front_result){0};
}

int sw_front_load(const char *cache, const char *key, sw_front_result *out) {
    *out = (sw_front_result){0};
    char path[4300], *data;
    reader r;
    entry_path(path, sizeof path, cache, "fe-", key, "front");
    if (!open_entry(path, FRONT_MAGIC, &data, &r)) return 0;
    get_key(&r, key);
    out->sync_free = get_int(&r);
    out->atomic_free = get_int(&r);
    out->unit.emit_range = get_int(&r);
    out->unit.atomic_free = get_int(&r);
    out->unit.text = get_str(&r);
    out->lanes_text = get_str(&r);
    out->lanes_why = get_str(&r);
    if (!out->unit.text) r.bad = 1;
    get_unit_lists(&r, &out->unit);
    if (r.p != r.end) r.bad = 1;
    free(data);
    if (r.bad) {
        result_free(out);
        (void)unlink(path);
        return 0;
    }
    return 1;
}

int sw_alias_load(const char *cache, const char *alias, char vkey[65]) {
    char path[4300], *data;
    reader r;
    entry_path(path, sizeof path, cache, "vk-", alias, "vkey");
    if (!open_entry(path, ALIAS_MAGIC, &data, &r)) return 0;
    get_key(&r, alias);
    char *v = get_str(&r);
    int ok = !r.bad && r.p == r.end && v && strlen(v) == 64 && strspn(v, "0123456789abcdef") == 64;
    if (ok) memcpy(vkey, v, 65);
    else (void)unlink(path);
    free(v);
    free(data);
    return ok;
}
