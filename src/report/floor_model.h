/* floor_model.h — the floor model: the least time each chip of the chip table
 * (core/chips.h) could take for the work a run's exact counters describe (the
 * software device's `counters`, results/README.md):
 *
 *   memory_s  = total.device.distinct_bytes / the chip's bandwidth
 *   compute_s = float flops / FP32 peak + half flops / FP16 peak + bfloat flops / FP32 peak
 *   floor_s   = max(memory_s, compute_s), bound "memory" or "compute"
 *
 * A MODEL, never a measurement: distinct bytes are a floor on DRAM traffic (caches
 * can serve a rerun below it), peaks are the table's (many derived, not published),
 * and a kernel also waits on latency, occupancy and launches the model leaves out.
 * The JSON says `model: true` and every table that prints it says "model".
 *
 * It works on the JSON alone, so the run path (the record's `counters` object) and
 * `gdnbench report` (a software-device run's counters joined with a Mac's timing of
 * the same work) share it. */
#ifndef GDN_FLOOR_MODEL_H
#define GDN_FLOOR_MODEL_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/chips.h"

typedef struct floor_est {
    const chip_info *chip;
    double memory_s, compute_s, floor_s;
    int compute_bound;     /* 1: compute_s > memory_s */
    int flops_verified;    /* the peaks used are Apple-published (FP16 never is) */
} floor_est;

/* The floor of one chip for a `counters` object (its "total").  0; -1 when counters
 * has no total.device.distinct_bytes (null, or not a counters object), or when the
 * chip lacks the peak the counted flops need (the M5's FP32/FP16, unpublished). */
int floor_model_estimate(const cJSON *counters, const chip_info *chip, floor_est *out);

/* Adds "floors" to a `counters` object that has "total" (replacing any earlier
 * "floors"): one entry per chip of the table the estimate works for.  A no-op for
 * null or a counters object without a total.  0, or -1 when memory runs out. */
int floor_model_add(cJSON *counters);

/* The fastest and slowest chip's floors over the chip table, and how many chips
 * are memory-bound; returns how many chips have a floor (0: the outputs are unset). */
int floor_model_range(const cJSON *counters, floor_est *fastest, floor_est *slowest, int *n_memory);

/* Prints the model for the table (what the run prints after its counters): a header
 * saying it is a model; self's row (the run's own chip, NULL when unknown) marked as
 * this machine's; then every other chip's row when all, else a two-line summary of
 * the range over the table naming --all-floors.  Nothing for null counters. */
void floor_model_print(FILE *f, const cJSON *counters, const chip_info *self, int all);

/* "1.23 us", "45.6 ms": a time in seconds for a table cell. */
void floor_model_fmt_s(char *out, size_t n, double s);

#endif
