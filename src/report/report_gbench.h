/* report_gbench.h — `--format gbench`: run records as Google Benchmark JSON, so
 * existing tooling (compare.py with its U-test, dashboards that ingest gbench
 * output) can read gdnbench results.
 *
 * Layout: {"context": {...}, "benchmarks": [...]}.  Per record:
 *   - one "iteration" entry per timing sample (repetitions = n, iterations = 1,
 *     real_time = the sample in us, cpu_time = the host wall-clock sample when the
 *     runner measured one per iteration, else the same as real_time: a GPU kernel
 *     has no CPU time of its own);
 *   - "aggregate" entries mean, median, stddev (time unit) and cv (percentage),
 *     named NAME_mean etc. as Google Benchmark names them;
 *   - a record that did not run (status error, or no samples) is one entry with
 *     error_occurred / error_message.
 * NAME = op/function/dim:value/.../backend (e.g. "cumsum/chunk_local_cumsum_g_f32/
 * B:1/T:4096/H:32/BT:64/sw"); label = the device name.  Counters on every entry:
 * bytes_per_second and items_per_second (flops/s) from that entry's time, plus
 * bytes, flops, and, on the median, gbps, tflops and pct_of_peak_bandwidth. */
#ifndef GDN_REPORT_GBENCH_H
#define GDN_REPORT_GBENCH_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "runner/record.h"

/* New document (caller frees with cJSON_Delete), or NULL when memory runs out. */
cJSON *report_gbench_json(run_record *const *recs, int n);

/* Writes it to path or stdout ("-"); 0, or -1 with a message naming the file. */
int report_gbench_write(const char *path_or_dash, run_record *const *recs, int n, char *err, size_t errlen);

#endif
