/* launch_limits.h — a run record's warnings for the Apple GPU launch limits its
 * stages break (core/gpu_limits.h): one warning per limit, naming every stage (an op's
 * stage, a kernel case's launch) that breaks it, so a pipeline of many stages still
 * fits the record's few warnings.  Launch facts only, so every backend gets them. */
#ifndef GDN_LAUNCH_LIMITS_H
#define GDN_LAUNCH_LIMITS_H

#include "runner/record.h"

/* Adds the warnings for rec->stages[0..nstages) (their tg and tgmem_bytes) to rec,
 * in place of any an earlier call added.  Call once the stages are described. */
void launch_limits_warn(run_record *rec);

#endif
