/* chips.h — peak figures of Apple GPUs, for % of peak in the report.
 *
 * One entry per (name as MTLDevice.name reports it, GPU core count).  Binned
 * variants share a Metal name ("Apple M4 Max" has 32- and 40-core GPUs, with
 * different memory bandwidth), so a lookup takes the core count too.
 *
 * Figures and their standing (every one has its public source in chips.c):
 *   bandwidth  — Apple's published unified-memory bandwidth (tech specs and
 *                newsroom), except the M1 whose 68.25 GB/s is derived from its
 *                LPDDR4X-4266 128-bit interface;
 *   fp32       — Apple's keynote figures for the full M1 family parts; all others
 *                are derived as cores x 128 ALUs x 2 flop (FMA) x GPU clock, with the
 *                clock from third-party measurements or listings — not verified
 *                against an Apple figure (flops_verified = 0);
 *   fp16       — equal to fp32: Apple GPUs from M1 on issue FP16 FMA at the FP32
 *                rate (third-party microbenchmarks, philipturner/metal-benchmarks);
 *                unknown for the M5, whose per-core neural accelerators change the
 *                FP16 matrix rate and have no public peak. */
#ifndef GDN_CHIPS_H
#define GDN_CHIPS_H

typedef struct chip_info {
    const char *name;        /* "Apple M4 Max" */
    int gpu_cores;
    double bandwidth_gbps;   /* GB/s (1e9 bytes/s) */
    double fp32_tflops;      /* < 0: unknown */
    double fp16_tflops;      /* < 0: unknown */
    int bandwidth_verified;  /* 1: Apple-published figure; 0: derived, see above */
    int flops_verified;      /* 1: Apple-published FP32 figure; 0: derived, see above
                              * (FP16 peaks are never Apple-published) */
} chip_info;

/* Looks a chip up by its Metal name and GPU core count.
 *   gpu_cores > 0: the entry with that name and core count, or NULL when the
 *                  table has no such variant (peaks are then unknown, not guessed);
 *   gpu_cores <= 0 (count unknown): the variant of that name with the fewest
 *                  cores — the lower peaks, so % of peak is never understated by
 *                  crediting a binned part with the full chip's figures.
 * NULL for a name not in the table (the caller prints a note; peaks are null). */
const chip_info *chip_find(const char *name, int gpu_cores);

/* The whole table, for `gdnbench info`: n entries. */
const chip_info *chip_table(int *n);

/* 1 when a Metal device name is a virtual machine's paravirtual GPU ("Apple
 * Paravirtual device", e.g. on hosted macOS CI runners), whose timings and results
 * are not an Apple GPU's; 0 otherwise (NULL included). */
int chip_is_paravirtual(const char *metal_name);
/* The one-line warning every table and report carries for such a device. */
const char *chip_paravirtual_warning(void);

#endif
