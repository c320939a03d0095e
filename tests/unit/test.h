/* test.h — the unit-test harness: TEST(name) { CHECK(...); } in any tests/unit file.
 *
 * Tests register themselves at load time; tests/unit/test_main.c runs each one in a
 * forked child (a crash or a hang fails that test only) and prints one line per test:
 *   PASS name (0.12 s) | FAIL name: file:line: message | SKIP name: reason
 * tests/run.sh counts those lines. */
#ifndef GDN_TEST_H
#define GDN_TEST_H

#include <math.h>
#include <stdio.h>

typedef void (*test_fn)(void);

void test_register(const char *name, const char *file, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2))) __attribute__((noreturn));
int test_failed(void);

#define TEST(name)                                                                                               \
    static void test_##name(void);                                                                               \
    __attribute__((constructor)) static void test_register_##name(void) {                                        \
        test_register(#name, __FILE__, test_##name);                                                             \
    }                                                                                                            \
    static void test_##name(void)

#define CHECK(cond)                                                                                              \
    do {                                                                                                         \
        if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                                     \
    do {                                                                                                         \
        if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__);                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                                    \
    do {                                                                                                         \
        double check_a_ = (double)(a), check_b_ = (double)(b);                                                   \
        if (!(fabs(check_a_ - check_b_) <= (double)(tol)))                                                       \
            test_fail(__FILE__, __LINE__, "%s = %.9g, %s = %.9g, |diff| > %g", #a, check_a_, #b, check_b_,       \
                      (double)(tol));                                                                            \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                                       \
    do {                                                                                                         \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                          \
        if (check_a_ != check_b_)                                                                                \
            test_fail(__FILE__, __LINE__, "%s = %lld, expected %s = %lld", #a, check_a_, #b, check_b_);          \
    } while (0)

#define SKIP(...) test_skip(__VA_ARGS__)

#endif
