/* table.h — the human-readable result table on stdout. */
#ifndef GDN_TABLE_H
#define GDN_TABLE_H

#include <stdio.h>

#include "runner/backend.h"
#include "runner/record.h"

/* Prints the header line for a run of `op` on `backend_desc` (once per command);
 * `runs` says how many runs each shape takes (cli_sampling_desc). */
void table_print_header(FILE *f, const op_desc *op, const backend *b, const char *runs, unsigned long long seed);
/* Prints the machine's state (machine.h) as one line under the header. */
void table_print_machine(FILE *f, const rec_machine *m);
/* Prints one case: shape, timing, throughput, then one line per check. */
void table_print_record(FILE *f, const run_record *r);
/* The record's warnings (a paravirtual device, a flag without effect), one line each:
 * what a reader must know before any of its numbers. */
void table_print_warnings(FILE *f, const run_record *r);
/* The timing lines of one case: median, min, p90, how many samples and why no more,
 * the warmup runs (what table_print_record prints first; kernel cases print it in
 * their own block). */
void table_print_timing(FILE *f, const run_record *r);
/* The software device's findings of r (bugs its checks found), at most max of them. */
void table_print_findings(FILE *f, const run_record *r, int max);
/* --counters: the record's exact counters (counters_table.c); nothing when not asked. */
void table_print_counters(FILE *f, const run_record *r);
/* After nfail cases whose output checks failed on backend b: when b is the software
 * device without full checks, one line on f naming what looks for the usual causes
 * (races, out-of-bounds accesses, uninitialised reads): --sw-checks full, or
 * `gdnbench validate OP`.  Nothing otherwise. */
void table_print_checks_hint(FILE *f, const backend *b, const run_opts *o, const char *op_name, int nfail);
/* --verbose: what compiling the case's kernels cost on the software device, one
 * line per kind of variant with its phases (nothing when r has no compile facts). */
void table_print_compile(FILE *f, const run_record *r);
/* "B=1 T=4096 Hg=16 H=32 K=128" */
void table_shape_str(const op_desc *op, const int64_t *dim, char *buf, size_t n);
/* Human duration: "812 ns", "12.3 us", "4.56 ms", "1.23 s". */
void table_fmt_us(double us, char *buf, size_t n);

#endif
