/* machine.h — the machine's state around a run: what moves GPU timings by tens of
 * percent (thermal pressure, Low Power Mode, running on battery) and what identifies
 * the GPU (macOS version, core count, Metal GPU families, working set, paravirtual).
 *
 * Every field is read from the platform (NSProcessInfo, IOKit, sysctl, the Metal
 * device) or left unknown: nothing is guessed.  The runner samples the state before
 * and after a case's timed runs; the table, the JSON `environment` and compare/report
 * read it back. */
#ifndef GDN_MACHINE_H
#define GDN_MACHINE_H

#include <stddef.h>

#include "runner/backend.h"
#include "runner/record.h"

enum { THERMAL_NOMINAL = 0, THERMAL_FAIR = 1, THERMAL_SERIOUS = 2, THERMAL_CRITICAL = 3 };

/* Fills m now: host state (thermal before = after = now) and the backend's device
 * facts. */
void machine_sample(rec_machine *m, const backend *b);
/* Samples the host state again after the timed runs: thermal_after, and Low Power
 * Mode / battery if they were on at either sample. */
void machine_resample_after(rec_machine *m);

/* The facts themselves (-1 / NULL / "" when the platform does not say). */
int machine_thermal_state(void);       /* NSProcessInfo.thermalState */
int machine_low_power_mode(void);      /* NSProcessInfo.isLowPowerModeEnabled */
const char *machine_power_source(void); /* "ac" | "battery" | "ups" */
void machine_macos_version(char *buf, size_t n);
int machine_gpu_core_count(void);      /* IORegistry AGXAccelerator "gpu-core-count" */

/* "nominal" | "fair" | "serious" | "critical", NULL for anything else. */
const char *machine_thermal_name(int state);
/* The reasons a run is marked (its timings may be throttled): thermal state not
 * nominal before or after, Low Power Mode, battery.  Writes up to max reasons into
 * out and returns how many there are. */
int machine_marks(const rec_machine *m, char out[][80], int max);
/* One line for the table: what is known, "?" for what is not. */
void machine_describe(const rec_machine *m, char *buf, size_t n);

#endif
