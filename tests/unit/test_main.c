/* test_main.c — runs the registered unit tests, each in a forked child.
 *
 * Usage: gdnbench-tests [-l] [SUBSTRING...]   (-l lists; substrings filter by name)
 * A test that exceeds GDN_TEST_TIMEOUT seconds (default 300) is killed and fails. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define MAX_TESTS 2048

typedef struct test_entry {
    const char *name, *file;
    test_fn fn;
} test_entry;

static test_entry tests[MAX_TESTS];
static int ntests;
static int failures;

void test_register(const char *name, const char *file, test_fn fn) {
    if (ntests < MAX_TESTS) tests[ntests++] = (test_entry){name, file, fn};
}

void test_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (failures < 20) {
        fprintf(stdout, "  %s:%d: ", file, line);
        vfprintf(stdout, fmt, ap);
        fputc('\n', stdout);
        fflush(stdout);
    }
    va_end(ap);
    failures++;
}

int test_failed(void) { return failures; }

void test_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "  skip: ");
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
    _exit(77);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_test(const void *a, const void *b) {
    const test_entry *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->name, y->name);
}

static int selected(const char *name, int argc, char **argv) {
    int any = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;
        any = 1;
        if (strstr(name, argv[i])) return 1;
    }
    return !any;
}

int main(int argc, char **argv) {
    qsort(tests, (size_t)ntests, sizeof tests[0], cmp_test);
    int list = argc > 1 && strcmp(argv[1], "-l") == 0;
    int timeout = getenv("GDN_TEST_TIMEOUT") ? atoi(getenv("GDN_TEST_TIMEOUT")) : 300;
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        if (!selected(tests[i].name, argc, argv)) continue;
        if (list) {
            printf("%s\n", tests[i].name);
            continue;
        }
        fflush(stdout);
        double t0 = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            alarm((unsigned)timeout);
            tests[i].fn();
            fflush(stdout);
            exit(failures ? 1 : 0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        double dt = now_s() - t0;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            printf("PASS %s (%.2f s)\n", tests[i].name, dt);
            passed++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
            printf("SKIP %s\n", tests[i].name);
            skipped++;
        } else {
            if (WIFSIGNALED(st))
                printf("FAIL %s: killed by signal %d%s (%.2f s)\n", tests[i].name, WTERMSIG(st),
                       WTERMSIG(st) == SIGALRM ? " (timeout)" : "", dt);
            else
                printf("FAIL %s (%.2f s)\n", tests[i].name, dt);
            failed++;
        }
        fflush(stdout);
    }
    if (!list) printf("unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
