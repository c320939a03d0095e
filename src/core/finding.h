/* finding.h — one distinct bug the software Metal device's checks found in a kernel,
 * as the runner, the tables and the JSON report see it.
 *
 * The device groups what its checks see by (kind, source location of each access,
 * buffer or threadgroup variable): 65536 racing accesses of one line pair are one
 * finding with counts, not 65536 messages.  Every access is named by the .metal
 * file, line and source text it came from (mapped through the pre-pass by the
 * kernel's line tables), with one GPU thread that made it.
 *
 * Plain data, no pointers: a record copies and frees like any struct. */
#ifndef GDN_FINDING_H
#define GDN_FINDING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum dev_finding_kind {
    DEV_FIND_OOB = 1,              /* access outside a buffer or the threadgroup arena */
    DEV_FIND_UNINIT_READ,          /* read of threadgroup memory no thread wrote */
    DEV_FIND_TG_RACE,              /* threadgroup memory: write and access by another thread, no barrier between */
    DEV_FIND_DEVICE_WRITE_WRITE,   /* device memory: two threads write the same bytes in one dispatch */
    DEV_FIND_DEVICE_READ_WRITE,    /* device memory: one threadgroup reads what another writes */
    DEV_FIND_DIVERGENT_BARRIER,    /* threads of one threadgroup wait at different barriers */
    DEV_FIND_FAULT,                /* any other fault: division by zero, trap, stack overflow, wild pointer */
    DEV_FIND_LIMIT,                /* a device limit exceeded while running (threadgroup memory) */
    DEV_FIND_TIMEOUT,              /* the watchdog stopped a dispatch still running: where its threads were */
    DEV_FIND_NUMERIC,              /* numeric checks: Inf/NaN from finite values, a conversion or integer
                                      operation out of range (detail: which, with the operands) */
    DEV_FIND_NKINDS
} dev_finding_kind;

/* One source location with the access made there. */
typedef struct dev_site {
    char file[256];        /* as the source names it ("shaders/x.metal", an included header); "" = unknown */
    int line, column;      /* 0 = unknown */
    char text[160];        /* that source line, leading blanks dropped; "" when unreadable */
    char access[8];        /* "read" | "write" | "atomic" | "barrier" | "" */
    int size;              /* bytes accessed; 0 when not a memory access */
    int has_thread;        /* thread/threadgroup/index name one thread that made it */
    uint32_t thread[3];    /* thread_position_in_grid */
    uint32_t threadgroup[3];
    uint32_t index;        /* thread_index_in_threadgroup */
    uint32_t nthreads;     /* threads known to have been here (divergent barrier); 0 = not counted */
} dev_site;

typedef struct dev_finding {
    int kind;              /* dev_finding_kind */
    char kernel[96];
    char memory[12];       /* "device" | "threadgroup" | "" */
    int buffer;            /* [[buffer(n)]] or [[threadgroup(n)]] index; -1 = a declared variable or none */
    char variable[64];     /* threadgroup variable name, "" */
    int variable_line;     /* its declaration line, 0 = unknown */
    int has_range;
    int64_t offset_lo;     /* bytes [offset_lo, offset_hi) touched, from the buffer's or variable's start */
    int64_t offset_hi;     /* (negative: before the start; >= length: past the end) */
    uint64_t length;       /* of the buffer or variable in bytes; 0 = unknown */
    char detail[200];      /* what a fault or limit was; "" */
    int nsites;            /* 1, or 2 for races, conflicts and divergent barriers */
    dev_site site[2];      /* races/conflicts: [0] the earlier access, [1] the later one */
    int has_interval;      /* races: the barriers around the two accesses */
    dev_site barrier[2];   /* [0] the opening barrier (line 0: the kernel's start), [1] the closing one
                              (line 0: the kernel's end) */
    uint64_t occurrences;  /* accesses (or faults) of this kind at these locations */
    uint64_t threads;      /* distinct threads among them */
    uint64_t threadgroups; /* distinct threadgroups among them */
} dev_finding;

/* "out_of_bounds", "uninitialized_read", "threadgroup_race", "device_write_conflict",
 * "device_read_write_conflict", "divergent_barrier", "fault", "limit", "timeout",
 * "numeric". */
const char *dev_finding_kind_name(int kind);

/* One line: what, where (file:line of each side), counts.  Fits a message. */
void dev_finding_summary(const dev_finding *f, char *buf, size_t n);

/* The finding for a person: a headline, one line per access (kind, file:line, source
 * text, one thread), the barriers around a race.  Every line starts with indent. */
void dev_finding_print(FILE *out, const dev_finding *f, const char *indent);

/* Prints at most max findings of list (all when max < 0), then a line saying how
 * many were left out and where to see them. */
void dev_findings_print(FILE *out, const dev_finding *list, int n, int max, const char *indent);

/* "file:line" of a site, "unknown location" when the line is unknown. */
void dev_site_where(const dev_site *s, char *buf, size_t n);

#endif
