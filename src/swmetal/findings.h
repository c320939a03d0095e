/* findings.h — the executor's collector of check findings (internal to src/swmetal).
 *
 * The checks (checks.c, exec.c) report each occurrence as a raw finding: kind, the
 * memory and byte range, and one or two accesses, each a code address and a thread
 * (threadgroup linear index + thread index).  Occurrences are grouped on the spot by
 * (kind, memory, buffer or variable, code address of each access), with counts of
 * occurrences and of distinct threads and threadgroups.  When the dispatch ends,
 * sw_findings_finish maps the code addresses to .metal lines (symbolize.h), merges
 * groups that land on the same lines, and hands the dispatch result dev_finding
 * records (core/finding.h) plus one-line texts.
 *
 * Nothing here depends on how threads are scheduled: a faster executor calls the
 * same functions with the same data. */
#ifndef GDN_SW_FINDINGS_H
#define GDN_SW_FINDINGS_H

#include <stdint.h>

#include "core/finding.h"

struct sw_job;
struct sw_worker;
struct sw_dispatch_result;

enum { SW_ACC_NONE = 0, SW_ACC_READ, SW_ACC_WRITE, SW_ACC_ATOMIC, SW_ACC_BARRIER };
enum { SW_MEM_NONE = 0, SW_MEM_DEVICE, SW_MEM_THREADGROUP };

/* One access as a check saw it. */
typedef struct sw_access {
    const void *pc;        /* address of the instruction (not a return address); NULL = unknown */
    const void *caller;    /* call site of the function pc is in, when that function is the prelude's; NULL */
    uint8_t kind;          /* SW_ACC_* */
    uint8_t has_thread;
    uint16_t size;         /* bytes */
    uint32_t tid;          /* thread_index_in_threadgroup */
    uint64_t tg;           /* linear threadgroup index in the dispatch */
    uint32_t nthreads;     /* threads at this site (divergent barriers), 0 */
    int line;              /* .metal line known without the symbolizer (barriers, faults), 0 */
} sw_access;

typedef struct sw_raw_finding {
    int kind;              /* dev_finding_kind */
    int memory;            /* SW_MEM_* */
    int buffer;            /* buffer / [[threadgroup(n)]] index, -1 */
    const char *variable;  /* threadgroup variable name (static storage of the kernel library), NULL */
    int variable_line;
    int has_range;
    int64_t offset_lo, offset_hi;
    uint64_t length;
    const char *detail;    /* copied; NULL */
    int nsides;            /* 1 or 2: side[0] the earlier access */
    sw_access side[2];
    int has_interval;      /* a race: interval_pc opened the barrier interval both lie in */
    const void *interval_pc; /* the barrier's address; NULL = the threadgroup's start */
    int fatal;             /* the dispatch stops here: this finding becomes its error */
} sw_raw_finding;

/* The collector of one dispatch. */
typedef struct sw_findings sw_findings;

sw_findings *sw_findings_new(void);
void sw_findings_free(sw_findings *fs);

/* Records one occurrence (thread-safe).  w: the reporting worker (NULL outside
 * one); a new group whose barrier interval is still open waits on w for the
 * barrier that closes it (sw_findings_close_interval). */
void sw_findings_add(struct sw_job *job, struct sw_worker *w, const sw_raw_finding *f);

/* The barrier at pc (NULL = the threadgroup ended) closes the interval that w's
 * pending groups were found in.  Cheap when nothing is pending. */
void sw_findings_close_interval(struct sw_job *job, struct sw_worker *w, const void *pc);

/* Occurrences recorded so far. */
uint64_t sw_findings_count(const sw_findings *fs);

/* Groups, symbolizes and fills res->findings / diags / total_diags; when a fatal
 * finding was recorded (or res->failed is set with no error yet) res->error gets a
 * one-line summary naming the kernel.  kernel: its name for the texts. */
void sw_findings_finish(struct sw_job *job, struct sw_dispatch_result *res);

/* A small id for a code address (device-memory shadow cells store ids, not
 * pointers): 1..SW_SITE_MAX, 0 when the table is full.  Cached per worker. */
#define SW_SITE_BITS 14
#define SW_SITE_MAX ((1u << SW_SITE_BITS) - 1)
#define SW_SITE_INDEX (1u << (SW_SITE_BITS + 1)) /* hash slots: at most half full */
uint32_t sw_site_id(struct sw_job *job, struct sw_worker *w, const void *pc);
const void *sw_site_pc(const struct sw_job *job, uint32_t id);

#endif
