/* chips.c — the Apple GPU table (see chips.h for what each figure means).
 *
 * Sources (all public):
 *  [A-M1]    Apple newsroom 2020-11-10 "Apple unleashes M1": 8-core GPU, "2.6 teraflops".
 *  [M1-BW]   M1 bandwidth: LPDDR4X-4266 on a 128-bit bus = 68.25 GB/s (derived; Apple
 *            published no figure).
 *  [A-M1PM]  Apple newsroom 2021-10-18 "Introducing M1 Pro and M1 Max": 200 GB/s and
 *            400 GB/s; keynote figures 5.2 TFLOPS (16-core) and 10.4 TFLOPS (32-core).
 *  [A-M1U]   Apple newsroom 2022-03-08 "Apple unveils M1 Ultra": 800 GB/s, 64-core GPU;
 *            keynote figure 21 TFLOPS.
 *  [A-M2]    Apple newsroom 2022-06-06 "Apple unveils M2": 100 GB/s, up to 10-core GPU.
 *  [A-M2PM]  Apple newsroom 2023-01-17 "Apple unveils M2 Pro and M2 Max": 200 / 400 GB/s,
 *            up to 19 / 38 GPU cores.
 *  [A-M2U]   Apple newsroom 2023-06-05 "Apple introduces M2 Ultra": 800 GB/s, up to 76 cores.
 *  [A-M3]    Apple MacBook Pro (Nov 2023) tech specs: M3 100 GB/s; M3 Pro 150 GB/s
 *            (14/18 cores); M3 Max 300 GB/s with the 30-core GPU, 400 GB/s with the 40-core.
 *  [A-M3U]   Apple newsroom 2025-03-05 "Apple reveals M3 Ultra": 819 GB/s, 60/80-core GPU.
 *  [A-M4]    Apple newsroom 2024-05-07 "Apple introduces M4 chip": 120 GB/s, 10-core GPU
 *            (8-core in binned iPad/Mac configurations).
 *  [A-M4PM]  Apple newsroom 2024-10-30 "Apple introduces M4 Pro and M4 Max": 273 GB/s
 *            (16/20 cores); M4 Max up to 546 GB/s (40-core); MacBook Pro tech specs:
 *            410 GB/s with the 32-core M4 Max.
 *  [A-M5]    Apple newsroom 2025-10-15 "Apple unleashes M5": 10-core GPU, 153 GB/s.
 *  [MB]      github.com/philipturner/metal-benchmarks (README overview table): GPU clocks
 *            M1 1278 MHz, M1 Pro/Max/Ultra 1296 MHz, M2 family >= 1398 MHz; FP16 rate
 *            equal to FP32 from M1 on.
 *  [TP-CLK]  Third-party spec listings (e.g. hmc-tech.com GPU pages): M3 family 1398 MHz,
 *            M4 family 1470 MHz.  Listings disagree (some give 1.6 GHz boost clocks), so
 *            every M3/M4 FLOP figure is unverified.
 * Derived FP32 = cores * 128 ALUs * 2 flop/FMA * clock.
 * Coverage: M1-M4 with Pro and Max, and each Ultra Apple has made (M1, M2, M3; there
 * is no M4 Ultra), every binned GPU core count; the M5 as far as Apple published it.
 * The floor model (report/floor_model.h) reads these figures, so each row's standing
 * (verified or derived) is shown wherever a floor is. */
#include <stddef.h>
#include <string.h>

#include "core/chips.h"

static const chip_info chips[] = {
    /* name              cores  GB/s    FP32    FP16  bw-ok flops-ok */
    {"Apple M1", 7, 68.25, 2.29, 2.29, 0, 0},        /* [M1-BW], [MB] 7*256*1.278 GHz */
    {"Apple M1", 8, 68.25, 2.6, 2.6, 0, 1},          /* [M1-BW], [A-M1] */
    {"Apple M1 Pro", 14, 200, 4.64, 4.64, 1, 0},     /* [A-M1PM], [MB] 14*256*1.296 */
    {"Apple M1 Pro", 16, 200, 5.2, 5.2, 1, 1},       /* [A-M1PM] */
    {"Apple M1 Max", 24, 400, 7.96, 7.96, 1, 0},     /* [A-M1PM], [MB] 24*256*1.296 */
    {"Apple M1 Max", 32, 400, 10.4, 10.4, 1, 1},     /* [A-M1PM] */
    {"Apple M1 Ultra", 48, 800, 15.93, 15.93, 1, 0}, /* [A-M1U], [MB] 48*256*1.296 */
    {"Apple M1 Ultra", 64, 800, 21.0, 21.0, 1, 1},   /* [A-M1U] */
    {"Apple M2", 8, 100, 2.86, 2.86, 1, 0},          /* [A-M2], [MB] 1.398 GHz */
    {"Apple M2", 10, 100, 3.58, 3.58, 1, 0},         /* [A-M2], [MB] */
    {"Apple M2 Pro", 16, 200, 5.73, 5.73, 1, 0},     /* [A-M2PM], [MB] >= 1.398 GHz */
    {"Apple M2 Pro", 19, 200, 6.80, 6.80, 1, 0},     /* [A-M2PM], [MB] */
    {"Apple M2 Max", 30, 400, 10.74, 10.74, 1, 0},   /* [A-M2PM], [MB] */
    {"Apple M2 Max", 38, 400, 13.6, 13.6, 1, 0},     /* [A-M2PM], [MB] */
    {"Apple M2 Ultra", 60, 800, 21.47, 21.47, 1, 0}, /* [A-M2U], [MB] */
    {"Apple M2 Ultra", 76, 800, 27.2, 27.2, 1, 0},   /* [A-M2U], [MB] */
    {"Apple M3", 8, 100, 2.86, 2.86, 1, 0},          /* [A-M3], [TP-CLK] 1.398 GHz */
    {"Apple M3", 10, 100, 3.58, 3.58, 1, 0},         /* [A-M3], [TP-CLK] */
    {"Apple M3 Pro", 14, 150, 5.01, 5.01, 1, 0},     /* [A-M3], [TP-CLK] */
    {"Apple M3 Pro", 18, 150, 6.44, 6.44, 1, 0},     /* [A-M3], [TP-CLK] */
    {"Apple M3 Max", 30, 300, 10.74, 10.74, 1, 0},   /* [A-M3], [TP-CLK] */
    {"Apple M3 Max", 40, 400, 14.32, 14.32, 1, 0},   /* [A-M3], [TP-CLK] */
    {"Apple M3 Ultra", 60, 819, 21.47, 21.47, 1, 0}, /* [A-M3U], [TP-CLK] */
    {"Apple M3 Ultra", 80, 819, 28.63, 28.63, 1, 0}, /* [A-M3U], [TP-CLK] */
    {"Apple M4", 8, 120, 3.01, 3.01, 1, 0},          /* [A-M4], [TP-CLK] 1.470 GHz */
    {"Apple M4", 10, 120, 3.76, 3.76, 1, 0},         /* [A-M4], [TP-CLK] */
    {"Apple M4 Pro", 16, 273, 6.02, 6.02, 1, 0},     /* [A-M4PM], [TP-CLK] */
    {"Apple M4 Pro", 20, 273, 7.53, 7.53, 1, 0},     /* [A-M4PM], [TP-CLK] */
    {"Apple M4 Max", 32, 410, 12.04, 12.04, 1, 0},   /* [A-M4PM], [TP-CLK] */
    {"Apple M4 Max", 40, 546, 15.05, 15.05, 1, 0},   /* [A-M4PM], [TP-CLK] */
    /* M5: no public GPU clock, and the neural accelerators make FP16 peaks unknown.
     * M5 Pro/Max had no public figures when this table was written. */
    {"Apple M5", 10, 153, -1, -1, 1, 0}, /* [A-M5] */
};

const chip_info *chip_find(const char *name, int gpu_cores) {
    if (!name) return NULL;
    const chip_info *fewest = NULL;
    for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++) {
        if (strcmp(chips[i].name, name) != 0) continue;
        if (gpu_cores > 0) {
            if (chips[i].gpu_cores == gpu_cores) return &chips[i];
        } else if (!fewest || chips[i].gpu_cores < fewest->gpu_cores) {
            fewest = &chips[i];
        }
    }
    return fewest;
}

const chip_info *chip_table(int *n) {
    *n = (int)(sizeof chips / sizeof chips[0]);
    return chips;
}

/* macOS virtual machines (Virtualization.framework, which hosted macOS arm64 CI
 * runners use) expose the host GPU through a paravirtual Metal device named
 * "Apple Paravirtual device".  Custom compute kernels have been reported returning
 * zeros there, and hosted runners document no GPU acceleration: numbers from it are
 * not an Apple GPU's.  Matched without regard to case so a renamed variant
 * ("Apple paravirtual device") is still caught. */
int chip_is_paravirtual(const char *metal_name) {
    static const char word[] = "paravirtual";
    if (!metal_name) return 0;
    for (const char *p = metal_name; *p; p++) {
        size_t i = 0;
        while (word[i] && p[i] && (p[i] | 0x20) == word[i]) i++;
        if (!word[i]) return 1;
    }
    return 0;
}

const char *chip_paravirtual_warning(void) {
    return "paravirtual Metal device (a virtual machine's GPU): its timings and results are not those of an Apple "
           "GPU; run on a real Mac for numbers, use --backend sw for correctness";
}
