/* gdn_recurrence_f64.h — the f64 ideal recurrence (gdn_recurrence_f64.c), behind
 * gdn_recurrence_ref(REF_F64, ...).  Internal to src/ref/. */
#ifndef GDN_REF_GDN_RECURRENCE_F64_H
#define GDN_REF_GDN_RECURRENCE_F64_H

#include "ref/gdn_ref.h"

/* The whole recurrence, spread over parallel_for: writes a->o and a->final.  0, or
 * -1 out of memory. */
int gdn_recurrence_f64(const gdn_recurrence_args *a);

#endif
