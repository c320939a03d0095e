/* test_npz.c — the .npz reader: numpy.savez's layout (stored members with zip64
 * extras), the zip64 end record, refusals (deflate, CRC, truncation, non-.npy
 * members), and a seeded mutation fuzz like test_io_fuzz.c's. */
#include "core/rng.h"
#include "io/npz.h"
#include "io_test_util.h"
#include "test.h"

static void make_pair(tensor **ts) {
    ts[0] = io_test_tensor("k", DT_F32, 4, (int64_t[]){1, 5, 2, 3}, 1);
    ts[1] = io_test_tensor("g_cum", DT_BF16, 3, (int64_t[]){1, 5, 2}, 2);
}

TEST(npz_reads_numpy_savez_layout) {
    tensor *ts[2];
    make_pair(ts);
    for (int z64 = 0; z64 < 2; z64++) {
        size_t len;
        uint8_t *b = io_test_npz(ts, 2, 0, z64, &len);
        io_set set = {0};
        char err[512] = "";
        CHECK(b != NULL);
        CHECK_MSG(npz_parse_mem(b, len, "x.npz", &set, err, sizeof err) == 0, "zip64 end %d: %s", z64, err);
        CHECK_EQ_INT(set.n, 2);
        for (int i = 0; i < set.n && i < 2; i++) CHECK(io_test_same(set.e[i].t, ts[i]));
        io_set_clear(&set);
        free(b);
    }
    tensor_free(ts[0]);
    tensor_free(ts[1]);
}

TEST(npz_refuses_what_it_cannot_read) {
    tensor *ts[2];
    make_pair(ts);
    size_t len;
    char err[512];
    io_set set = {0};
    /* savez_compressed: deflated members, with a message saying what to do */
    uint8_t *b = io_test_npz(ts, 2, 8, 0, &len);
    CHECK(npz_parse_mem(b, len, "c.npz", &set, err, sizeof err) != 0 && set.n == 0);
    CHECK_MSG(strstr(err, "c.npz") && strstr(err, "deflate-compressed") && strstr(err, "numpy.savez"), "%s", err);
    free(b);
    /* one flipped data byte: the CRC catches it */
    b = io_test_npz(ts, 2, 0, 0, &len);
    b[200] ^= 0x40;
    CHECK(npz_parse_mem(b, len, "x.npz", &set, err, sizeof err) != 0 && set.n == 0);
    CHECK_MSG(strstr(err, "CRC-32"), "%s", err);
    b[200] ^= 0x40;
    /* truncated: no end record any more */
    CHECK(npz_parse_mem(b, len - 30, "x.npz", &set, err, sizeof err) != 0 && set.n == 0);
    CHECK_MSG(strstr(err, "not a zip archive"), "%s", err);
    free(b);
    /* a member that is no .npy: "k.npy" renamed "k.txt" in both headers */
    b = io_test_npz(ts, 1, 0, 0, &len);
    for (size_t i = 0; i + 5 <= len; i++)
        if (memcmp(b + i, "k.npy", 5) == 0) memcpy(b + i, "k.txt", 5);
    CHECK(npz_parse_mem(b, len, "x.npz", &set, err, sizeof err) != 0 && set.n == 0);
    CHECK_MSG(strstr(err, "member 'k.txt' is not a NAME.npy"), "%s", err);
    free(b);
    tensor_free(ts[0]);
    tensor_free(ts[1]);
}

TEST(npz_crc32_known_value) {
    /* the check value of CRC-32/ISO-HDLC */
    CHECK_EQ_INT(npz_crc32(0, "123456789", 9), 0xcbf43926u);
    CHECK_EQ_INT(npz_crc32(npz_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
}

/* Mutations of valid archives are rejected with one line or read consistently. */
TEST(io_fuzz_npz) {
    const char *s = getenv("GDN_FUZZ_ITERS");
    long iters = s && *s ? strtol(s, NULL, 0) / 10 : 10000;
    tensor *ts[2];
    make_pair(ts);
    size_t lens[3];
    uint8_t *seeds[3] = {io_test_npz(ts, 2, 0, 0, &lens[0]), io_test_npz(ts, 2, 0, 1, &lens[1]),
                         io_test_npz(ts, 1, 0, 0, &lens[2])};
    uint8_t *buf = malloc(lens[1] + 64);
    rng r;
    rng_stream(&r, 1, "fuzz-npz");
    long accepted = 0;
    for (long it = 0; it < iters && !test_failed(); it++) {
        int k = (int)(rng_u64(&r) % 3);
        size_t len = lens[k];
        memcpy(buf, seeds[k], len);
        int edits = 1 + (int)(rng_u64(&r) % 3);
        for (int e = 0; e < edits; e++) {
            uint64_t pick = rng_u64(&r);
            size_t at = (size_t)(pick >> 8) % len;
            switch (pick % 4) {
            case 0: buf[at] ^= (uint8_t)(1u << (pick >> 40) % 8); break;
            case 1: buf[at] = (uint8_t)(pick >> 48) % 2 ? 0xff : 0x00; break;
            case 2: len = at ? at : len; break; /* truncate */
            default: buf[at] = (uint8_t)(pick >> 32); break;
            }
        }
        io_set set = {0};
        char err[512] = "";
        if (npz_parse_mem(buf, len, "fuzz.npz", &set, err, sizeof err) != 0) {
            CHECK_MSG(set.n == 0 && err[0] && !strchr(err, '\n'), "it %ld: bad rejection: %s", it, err);
            continue;
        }
        accepted++;
        for (int i = 0; i < set.n; i++) {
            const tensor *t = set.e[i].t;
            CHECK_MSG(t->name[0] && t->ndim >= 0 && t->ndim <= TENSOR_MAX_DIMS && tensor_nbytes(t) <= len,
                      "it %ld: accepted an insane tensor", it);
        }
        io_set_clear(&set);
    }
    printf("  fuzz npz: %ld inputs, %ld accepted\n", iters, accepted);
    CHECK(accepted > 0 && accepted < iters);
    for (int i = 0; i < 3; i++) free(seeds[i]);
    free(buf);
    tensor_free(ts[0]);
    tensor_free(ts[1]);
}
