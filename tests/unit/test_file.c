/* test_file.c — the whole-file reader (src/core/file.c): contents and length, the
 * size limit for regular files and for streams, and each failure's status and
 * message. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "io_test_util.h"
#include "test.h"

TEST(file_read_all_returns_every_byte_and_a_nul) {
    char dir[512], path[600], err[700] = "untouched";
    io_test_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/a.bin", dir);
    /* larger than the first 4 KiB buffer, with NUL bytes inside */
    size_t n = 10000;
    char *want = malloc(n);
    for (size_t i = 0; i < n; i++) want[i] = (char)(i * 7);
    io_test_write(path, want, n);
    file_text ft;
    CHECK_EQ_INT(file_read_all(path, n, FILE_REGULAR_ONLY, &ft, err, sizeof err), FILE_OK);
    CHECK_EQ_INT(ft.len, n);
    CHECK(ft.data && memcmp(ft.data, want, n) == 0 && ft.data[n] == 0);
    CHECK(strcmp(err, "untouched") == 0);
    free(ft.data);

    snprintf(path, sizeof path, "%s/empty", dir);
    io_test_write(path, "", 0);
    CHECK_EQ_INT(file_read_all(path, 0, 0, &ft, NULL, 0), FILE_OK);
    CHECK(ft.data && ft.len == 0 && ft.data[0] == 0);
    free(ft.data);
    free(want);
    io_test_rmdir(dir);
}

TEST(file_read_all_refuses_a_regular_file_over_the_limit_by_its_size) {
    char dir[512], path[600], err[700], want[800];
    io_test_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/hundred", dir);
    char data[100];
    memset(data, 'x', sizeof data);
    io_test_write(path, data, sizeof data);
    file_text ft;
    CHECK_EQ_INT(file_read_all(path, 99, 0, &ft, err, sizeof err), FILE_TOO_LARGE);
    CHECK(ft.data == NULL);
    CHECK_EQ_INT(ft.size, 100);
    snprintf(want, sizeof want, "%s: 100 bytes is more than the limit of 99 bytes", path);
    CHECK_MSG(strcmp(err, want) == 0, "err '%s'", err);
    CHECK_EQ_INT(file_read_all(path, 100, 0, &ft, err, sizeof err), FILE_OK);
    CHECK_EQ_INT(ft.len, 100);
    free(ft.data);
    io_test_rmdir(dir);
}

/* A pipe has no size up front: the limit applies to what arrives. */
TEST(file_read_all_reads_a_stream_and_holds_it_to_the_limit) {
    for (int over = 0; over < 2; over++) {
        int fds[2];
        CHECK(pipe(fds) == 0);
        char data[6000];
        memset(data, 'p', sizeof data);
        CHECK(write(fds[1], data, sizeof data) == (ssize_t)sizeof data);
        close(fds[1]);
        char path[64], err[200], want[200];
        snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
        file_text ft;
        file_status s = file_read_all(path, over ? 5999 : 6000, 0, &ft, err, sizeof err);
        if (over) {
            CHECK_EQ_INT(s, FILE_TOO_LARGE);
            CHECK_EQ_INT(ft.size, 0);
            snprintf(want, sizeof want, "%s: more than the limit of 5999 bytes", path);
            CHECK_MSG(strcmp(err, want) == 0, "err '%s'", err);
        } else {
            CHECK_EQ_INT(s, FILE_OK);
            CHECK(ft.len == sizeof data && memcmp(ft.data, data, sizeof data) == 0);
            free(ft.data);
        }
        close(fds[0]);
    }
}

TEST(file_read_all_names_the_file_in_each_failure) {
    char dir[512], path[600], err[700], want[800];
    io_test_tmpdir(dir, sizeof dir);
    file_text ft;
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK_EQ_INT(file_read_all(path, FILE_NO_LIMIT, 0, &ft, err, sizeof err), FILE_CANNOT_OPEN);
    CHECK_EQ_INT(ft.sys_errno, ENOENT);
    snprintf(want, sizeof want, "%s: cannot open: %s", path, strerror(ENOENT));
    CHECK_MSG(strcmp(err, want) == 0, "err '%s'", err);

    /* a directory opens but is not a file */
    CHECK_EQ_INT(file_read_all(dir, FILE_NO_LIMIT, FILE_REGULAR_ONLY, &ft, err, sizeof err), FILE_NOT_REGULAR);
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    CHECK_MSG(strcmp(err, want) == 0, "err '%s'", err);
    CHECK_EQ_INT(file_read_all(dir, FILE_NO_LIMIT, 0, &ft, err, sizeof err), FILE_READ_ERROR);
    CHECK(ft.data == NULL && ft.sys_errno != 0);
    snprintf(want, sizeof want, "%s: cannot read: read error", dir);
    CHECK_MSG(strcmp(err, want) == 0, "err '%s'", err);
    io_test_rmdir(dir);
}
