/* count_internal.h — the executor's calls into the counters (count.c): a job that
 * counts (sw_dispatch.counts set) sets up at its start, each worker's storage before
 * a threadgroup, the reduction after it, and the session's record at the end. */
#ifndef GDN_SW_COUNT_INTERNAL_H
#define GDN_SW_COUNT_INTERNAL_H

#include "swmetal/count.h"
#include "swmetal/exec_internal.h"

/* 0, or -1 with *why (out of memory). */
int sw_cnt_job_begin(sw_job *job, char *why, size_t n);
/* Before threadgroup of n threads runs on w: 0, or -1 (reported; abandon). */
int sw_cnt_group_begin(sw_worker *w, uint32_t n);
/* After it ran to its end. */
void sw_cnt_group_end(sw_worker *w);
/* The dispatch is over: its record goes to the session when ok, and the job's
 * storage is freed either way. */
void sw_cnt_job_end(sw_job *job, int ok);
/* A worker's storage (the pool's teardown). */
void sw_cnt_worker_free(sw_worker *w);

#endif
