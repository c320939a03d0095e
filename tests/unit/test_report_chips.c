/* test_report_chips.c — chip table lookups: exact variants, unknown core counts,
 * unknown chips. */
#include <string.h>

#include "core/chips.h"
#include "test.h"

TEST(report_chips_binned_variants) {
    const chip_info *c = chip_find("Apple M4 Max", 40);
    CHECK(c && c->gpu_cores == 40);
    CHECK(c && c->bandwidth_gbps == 546);
    c = chip_find("Apple M4 Max", 32);
    CHECK(c && c->bandwidth_gbps == 410);
    c = chip_find("Apple M3 Max", 30);
    CHECK(c && c->bandwidth_gbps == 300);
    /* Core count unknown: the variant with the fewest cores. */
    c = chip_find("Apple M4 Max", 0);
    CHECK(c && c->gpu_cores == 32);
    c = chip_find("Apple M1", -1);
    CHECK(c && c->gpu_cores == 7);
    /* A core count the table does not list: unknown, not a neighbour's figures. */
    CHECK(chip_find("Apple M4 Max", 36) == NULL);
    CHECK(chip_find("Apple M9 Hyper", 0) == NULL);
    CHECK(chip_find("gdnbench software device", 0) == NULL);
    CHECK(chip_find(NULL, 0) == NULL);
}

TEST(report_chips_table_sane) {
    int n = 0;
    const chip_info *t = chip_table(&n);
    CHECK(n > 20);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(strncmp(t[i].name, "Apple M", 7) == 0, "%s", t[i].name);
        CHECK_MSG(t[i].gpu_cores > 0 && t[i].bandwidth_gbps > 0, "%s", t[i].name);
        /* Derived FP32 figures follow cores * 256 flop/clk * clock for a clock
         * between 1.2 and 1.7 GHz; a typo in either column breaks that. */
        if (t[i].fp32_tflops > 0) {
            double ghz = t[i].fp32_tflops * 1000 / (t[i].gpu_cores * 256.0);
            CHECK_MSG(ghz > 1.2 && ghz < 1.7, "%s %d: implied clock %.3f GHz", t[i].name, t[i].gpu_cores, ghz);
        }
        for (int j = 0; j < i; j++)
            CHECK_MSG(!(strcmp(t[i].name, t[j].name) == 0 && t[i].gpu_cores == t[j].gpu_cores),
                      "duplicate %s %d", t[i].name, t[i].gpu_cores);
    }
}

/* The standing of each peak: M1's bandwidth is derived (no Apple figure), the M1
 * family's keynote FLOP/s are Apple's, later FLOP/s are derived. */
TEST(report_chips_verified_flags) {
    const chip_info *c = chip_find("Apple M1", 8);
    CHECK(c && !c->bandwidth_verified && c->flops_verified);
    c = chip_find("Apple M1 Max", 32);
    CHECK(c && c->bandwidth_verified && c->flops_verified);
    c = chip_find("Apple M4 Max", 40);
    CHECK(c && c->bandwidth_verified && !c->flops_verified);
}

/* Hosted macOS runners' "Apple Paravirtual device" is recognised (its numbers get a
 * warning); real chips and the software device are not. */
TEST(report_chips_paravirtual_device_by_name) {
    CHECK(chip_is_paravirtual("Apple Paravirtual device"));
    CHECK(chip_is_paravirtual("apple paravirtual device"));
    CHECK(chip_is_paravirtual("Apple PARAVIRTUAL Device (2)"));
    CHECK(!chip_is_paravirtual("Apple M4 Max"));
    CHECK(!chip_is_paravirtual("Apple M1"));
    CHECK(!chip_is_paravirtual("gdnbench software device"));
    CHECK(!chip_is_paravirtual("Apple Paravirt"));
    CHECK(!chip_is_paravirtual(""));
    CHECK(!chip_is_paravirtual(NULL));
    CHECK(chip_find("Apple Paravirtual device", 0) == NULL); /* no peaks are credited to it */
    const char *w = chip_paravirtual_warning();
    CHECK(w && strstr(w, "not those of an Apple GPU"));
}

/* Every Mac GPU the floor model is asked for (issue 31): M1 to M4 with their Pro and
 * Max, and every Ultra Apple has made (M1, M2, M3: there is no M4 Ultra), each with a
 * bandwidth and, for M1-M4, FP32 and FP16 peaks. */
TEST(report_chips_cover_m1_to_m4) {
    static const char *const names[] = {"Apple M1",     "Apple M1 Pro", "Apple M1 Max", "Apple M1 Ultra",
                                        "Apple M2",     "Apple M2 Pro", "Apple M2 Max", "Apple M2 Ultra",
                                        "Apple M3",     "Apple M3 Pro", "Apple M3 Max", "Apple M3 Ultra",
                                        "Apple M4",     "Apple M4 Pro", "Apple M4 Max"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int n, variants = 0;
        const chip_info *t = chip_table(&n);
        for (int k = 0; k < n; k++) {
            if (strcmp(t[k].name, names[i]) != 0) continue;
            variants++;
            CHECK_MSG(t[k].bandwidth_gbps > 0 && t[k].fp32_tflops > 0 && t[k].fp16_tflops > 0, "%s %d", names[i],
                      t[k].gpu_cores);
        }
        CHECK_MSG(variants >= 1, "%s is not in the chip table", names[i]);
    }
}
