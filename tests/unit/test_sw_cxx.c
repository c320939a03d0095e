/* test_sw_cxx.c — choosing the software device's compiler (src/swmetal/cxx.c):
 * version texts of every vendor, the fix each platform is told, and the kernel
 * build flags, including what the Darwin driver links with them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swmetal/cxx.h"
#include "swmetal/sw_compile.h"
#include "test.h"

TEST(sw_cxx_version_texts) {
    int apple = -1;
    CHECK_EQ_INT(sw_cxx_llvm_major("Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64-pc-linux-gnu\n", &apple), 19);
    CHECK_EQ_INT(apple, 0);
    CHECK_EQ_INT(sw_cxx_llvm_major("clang version 17.0.6\n", &apple), 17);
    CHECK_EQ_INT(sw_cxx_llvm_major("Homebrew clang version 20.1.8\nTarget: arm64-apple-darwin24.6.0\n", &apple), 20);
    CHECK_EQ_INT(apple, 0);
    CHECK_EQ_INT(sw_cxx_llvm_major("Ubuntu clang version 14.0.0-1ubuntu1.1\n", &apple), 14);
    /* Apple clang counts Xcode's releases, not LLVM's */
    CHECK_EQ_INT(sw_cxx_llvm_major("Apple clang version 15.0.0 (clang-1500.3.9.4)\nTarget: arm64-apple-darwin23\n", &apple),
                 16);
    CHECK_EQ_INT(apple, 1);
    CHECK_EQ_INT(sw_cxx_llvm_major("Apple clang version 16.0.0 (clang-1600.0.26.6)\n", &apple), 17);
    CHECK_EQ_INT(sw_cxx_llvm_major("Apple clang version 17.0.0 (clang-1700.0.13.3)\n", &apple), 19);
    CHECK_EQ_INT(apple, 1);
    /* "Apple" on another line (a Target: triple) does not make it Apple clang */
    CHECK_EQ_INT(sw_cxx_llvm_major("clang version 18.1.8\nTarget: arm64-apple-darwin23\n", &apple), 18);
    CHECK_EQ_INT(apple, 0);
    CHECK_EQ_INT(sw_cxx_llvm_major("g++ (Debian 12.2.0-14+deb12u1) 12.2.0\n", &apple), -1);
    CHECK_EQ_INT(sw_cxx_llvm_major("clang version x\n", NULL), -1);
    CHECK_EQ_INT(sw_cxx_llvm_major("", NULL), -1);
    CHECK_EQ_INT(sw_cxx_llvm_major(NULL, NULL), -1);
}

/* The fix named is the platform's: Xcode or Homebrew on a Mac, apt-get on Debian;
 * both say what is needed ("clang++ >= 17", which tests also use to SKIP). */
TEST(sw_cxx_messages_name_the_platforms_fix) {
    char *mac = sw_cxx_explain("Apple clang 15 cannot", 1);
    char *deb = sw_cxx_explain("clang 14 cannot", 0);
    CHECK(mac && deb);
    if (mac && deb) {
        CHECK(strstr(mac, "Apple clang 15 cannot") == mac);
        CHECK(strstr(mac, "Xcode 16.3") && strstr(mac, "brew install llvm") && strstr(mac, "GDNBENCH_CXX"));
        CHECK(!strstr(mac, "apt-get"));
        CHECK(strstr(deb, "apt-get install clang-19") && strstr(deb, "GDNBENCH_CXX"));
        CHECK(!strstr(deb, "brew") && !strstr(deb, "Xcode"));
        CHECK(strstr(mac, "clang++ >= 17") && strstr(deb, "clang++ >= 17"));
        CHECK(!strchr(mac, '\n') && !strchr(deb, '\n'));
    }
    free(mac);
    free(deb);
}

static int has(const char **f, int n, const char *flag) {
    for (int i = 0; i < n; i++)
        if (strcmp(f[i], flag) == 0) return 1;
    return 0;
}

TEST(sw_cxx_kernel_flags_per_platform) {
    const char *f[SW_CXX_MAX_FLAGS];
    int n = sw_cxx_kernel_flags(0, 0, f, SW_CXX_MAX_FLAGS);
    CHECK(has(f, n, "-ffp-contract=off") && has(f, n, "-shared") && has(f, n, "-fbfloat16-excess-precision=none"));
    CHECK(!has(f, n, "-fsanitize=thread") && !has(f, n, "-undefined"));
    n = sw_cxx_kernel_flags(1, 0, f, SW_CXX_MAX_FLAGS);
    CHECK(has(f, n, "-fsanitize=thread") && has(f, n, "-fno-sanitize-link-runtime"));
    n = sw_cxx_kernel_flags(1, 1, f, SW_CXX_MAX_FLAGS);
    CHECK(has(f, n, "-fsanitize=thread") && has(f, n, "-fno-sanitize-link-runtime"));
    CHECK(has(f, n, "-undefined") && has(f, n, "dynamic_lookup"));
    CHECK_EQ_INT(sw_cxx_kernel_flags(1, 1, f, 3), 3); /* never past max */
}

/* x86-64 Linux builds kernels for its own CPU, and that CPU is part of the cache
 * key: a cache shared with another machine must not hand it these instructions.
 * Darwin (the cross-compiled macOS kernels) and other hosts keep the baseline. */
TEST(sw_cxx_kernels_built_for_the_host_cpu_on_x86_64_linux) {
    const char *f[SW_CXX_MAX_FLAGS];
    int n = sw_cxx_kernel_flags(0, 1, f, SW_CXX_MAX_FLAGS);
    CHECK(!has(f, n, "-march=native"));
    n = sw_cxx_kernel_flags(0, 0, f, SW_CXX_MAX_FLAGS);
    const char *cpu = sw_cxx_host_cpu();
#if defined(__x86_64__) && !defined(__APPLE__)
    CHECK(has(f, n, "-march=native"));
    CHECK(strncmp(cpu, "x86-64 ", 7) == 0 && strstr(cpu, " l7=") && strstr(cpu, " xcr0="));
    CHECK(strcmp(cpu, sw_cxx_host_cpu()) == 0);
#else
    CHECK(!has(f, n, "-march=native"));
    CHECK(cpu[0] == 0);
#endif
}

/* What the clang driver would link for the instrumented kernel on arm64 macOS: the
 * TSan runtime dylib must stay out (our __tsan_* hooks must bind), and the
 * executable's symbols must be looked up at load.  clang is a cross compiler, so
 * `-###` shows the Darwin link line here. */
TEST(sw_cxx_darwin_tsan_kernel_links_no_tsan_runtime) {
    const char *cxx, *version;
    char *err = NULL;
    if (sw_compiler_info(&cxx, &version, &err) != 0) {
        free(err);
        SKIP("no clang++ >= 17 here");
    }
    char dir[] = "/tmp/gdnbench-cxxtest-XXXXXX", src[64];
    if (!mkdtemp(dir)) SKIP("cannot create a temporary directory");
    snprintf(src, sizeof src, "%s/k.cpp", dir);
    FILE *s = fopen(src, "w");
    CHECK(s != NULL);
    if (!s) return;
    fputs("extern \"C\" void k(int *p) { *p += 1; }\n", s);
    fclose(s);
    const char *f[SW_CXX_MAX_FLAGS];
    int n = sw_cxx_kernel_flags(1, 1, f, SW_CXX_MAX_FLAGS);
    char cmd[4096];
    int off = snprintf(cmd, sizeof cmd, "%s -target arm64-apple-macos14", cxx);
    for (int i = 0; i < n; i++) off += snprintf(cmd + off, sizeof cmd - (size_t)off, " %s", f[i]);
    snprintf(cmd + off, sizeof cmd - (size_t)off, " -o %s/k.dylib %s -### 2>&1", dir, src);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) return;
    static char line[65536];
    int link_lines = 0, tsan_rt = 0, dyn_lookup = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strstr(line, "\"-dylib\"")) continue; /* the ld64 command */
        link_lines++;
        tsan_rt |= strstr(line, "clang_rt.tsan") != NULL;
        dyn_lookup |= strstr(line, "\"dynamic_lookup\"") != NULL;
    }
    pclose(p);
    remove(src);
    rmdir(dir);
    CHECK_MSG(link_lines == 1, "no Darwin link command in `%s`", cmd);
    CHECK_MSG(!tsan_rt, "the TSan runtime would be linked into the kernel library");
    CHECK(dyn_lookup);
}
