/* report_testdata.h — hand-built run_records for the report tests: every field of
 * the record set, without the runner. */
#ifndef GDN_REPORT_TESTDATA_H
#define GDN_REPORT_TESTDATA_H

#include "runner/record.h"

/* The test op: dims B, T, H, K; tensors k (bf16 in), beta (f32 in), A (f32 out). */
extern const op_desc report_test_op;

/* Fills *r (zeroed first) with a complete record: metal on "Apple M4 Max" with chip
 * peaks, its machine state (macOS, AC power, thermal nominal), a 3-stage pipeline
 * timed by counters, n timing samples base_us*(1 + small pattern), two checks (one
 * failing), determinism measured, status "fail". Samples are malloc'ed: release
 * with run_record_free. */
void report_test_record(run_record *r, int n, double base_us);

/* Path of a file in the repository ($GDNBENCH_ROOT/rel, or rel from the cwd). */
void report_test_repo_path(char *out, size_t n, const char *rel);

#endif
