/* gdn_recurrence_f64.h — the f64 ideal recurrence for a block of state rows
 * (gdn_recurrence_f64.c; gdn_recurrence_ref.c hands out the blocks).  Internal to
 * src/ref/. */
#ifndef GDN_REF_GDN_RECURRENCE_F64_H
#define GDN_REF_GDN_RECURRENCE_F64_H

#include "ref/gdn_ref.h"

/* Rows v0..v0+R of the state of batch b, value head h, over every token: writes
 * those rows' outputs a->o and final state a->final.  0, or -1 out of memory. */
int gdn_recurrence_f64_rows(const gdn_recurrence_args *a, int64_t b, int64_t h, int64_t v0, int64_t R);

#endif
