/* machine.c — the machine's state around a run (see machine.h).
 *
 * macOS: thermal state and Low Power Mode from NSProcessInfo (Foundation, through
 * the objc message layer), the power source from IOKit's power-source API, the GPU
 * core count from the IORegistry (AGXAccelerator's "gpu-core-count"), the OS
 * version from sysctl.  Linux: the power source from /sys/class/power_supply; the
 * rest does not exist there and stays unknown. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__APPLE__)
#include <sys/sysctl.h>

#include "core/objc_call.h"
#endif

#include "runner/machine.h"

#if defined(__APPLE__)
/* CoreFoundation and IOKit are C APIs, but their headers are not in every SDK copy
 * this file is checked against, so the few functions used are declared here with
 * Apple's prototypes (CFBase.h, CFString.h, CFNumber.h, IOKitLib.h,
 * IOPowerSources.h), their types written out: CFTypeRef is const void *,
 * CFStringRef const struct __CFString *, CFIndex signed long, CFStringEncoding and
 * IOOptionBits UInt32, Boolean unsigned char, CFNumberType CFIndex, io_object_t a
 * mach_port_t (natural_t: unsigned int), kern_return_t int. */
typedef const void *cf_type;
typedef const struct __CFString *cf_string;
typedef const struct __CFDictionary *cf_dictionary;
typedef struct __CFDictionary *cf_mutable_dictionary;
typedef const struct __CFAllocator *cf_allocator;
typedef const struct __CFNumber *cf_number;
typedef unsigned int io_object;
extern cf_type IOPSCopyPowerSourcesInfo(void);
extern cf_string IOPSGetProvidingPowerSourceType(cf_type snapshot);
extern unsigned char CFStringGetCString(cf_string string, char *buffer, long size, unsigned int encoding);
extern cf_string CFStringCreateWithCString(cf_allocator alloc, const char *cstr, unsigned int encoding);
extern unsigned char CFNumberGetValue(cf_number number, long type, void *value);
extern unsigned long CFGetTypeID(cf_type cf);
extern unsigned long CFNumberGetTypeID(void);
extern void CFRelease(cf_type cf);
extern cf_mutable_dictionary IOServiceMatching(const char *name);
extern io_object IOServiceGetMatchingService(unsigned int main_port, cf_dictionary matching);
extern cf_type IORegistryEntryCreateCFProperty(io_object entry, cf_string key, cf_allocator allocator,
                                               unsigned int options);
extern int IOObjectRelease(io_object object);
enum { CF_STRING_ENCODING_UTF8 = 0x08000100, CF_NUMBER_SINT64 = 4 };

static id process_info(void) { return MSG0(id, objc_class_named("NSProcessInfo"), "processInfo"); }
#endif

int machine_thermal_state(void) {
#if defined(__APPLE__)
    id pool = objc_pool_push(); /* +processInfo may hand out an autoreleased object */
    id pi = process_info();
    NSInteger s = objc_responds(pi, "thermalState") ? MSG0(NSInteger, pi, "thermalState") : -1;
    objc_pool_pop(pool);
    return s >= THERMAL_NOMINAL && s <= THERMAL_CRITICAL ? (int)s : -1;
#else
    return -1;
#endif
}

int machine_low_power_mode(void) {
#if defined(__APPLE__)
    id pool = objc_pool_push();
    id pi = process_info();
    int on = !objc_responds(pi, "isLowPowerModeEnabled") ? -1 /* before macOS 12 */
                                                          : MSG0(BOOL, pi, "isLowPowerModeEnabled") ? 1 : 0;
    objc_pool_pop(pool);
    return on;
#else
    return -1;
#endif
}

#if !defined(__APPLE__)
/* First line of /sys/class/power_supply/NAME/FIELD into buf; 0 when readable. */
static int supply_field(const char *name, const char *field, char *buf, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "/sys/class/power_supply/%s/%s", name, field);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}
#endif

const char *machine_power_source(void) {
#if defined(__APPLE__)
    cf_type info = IOPSCopyPowerSourcesInfo();
    if (!info) return NULL;
    cf_string type = IOPSGetProvidingPowerSourceType(info); /* not retained */
    char buf[64] = "";
    const char *source = NULL;
    if (type && CFStringGetCString(type, buf, sizeof buf, CF_STRING_ENCODING_UTF8)) {
        /* IOPSKeys.h: kIOPMACPowerKey, kIOPMBatteryPowerKey, kIOPMUPSPowerKey */
        if (strcmp(buf, "AC Power") == 0) source = "ac";
        else if (strcmp(buf, "Battery Power") == 0) source = "battery";
        else if (strcmp(buf, "UPS Power") == 0) source = "ups";
    }
    CFRelease(info);
    return source;
#else
    /* Mains online: AC.  A battery discharging (and no mains online): battery.  No
     * power supply class at all (servers, most VMs): unknown. */
    DIR *dir = opendir("/sys/class/power_supply");
    if (!dir) return NULL;
    int mains_online = 0, discharging = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char type[32], value[32];
        if (supply_field(e->d_name, "type", type, sizeof type) != 0) continue;
        if (strcmp(type, "Mains") == 0 && supply_field(e->d_name, "online", value, sizeof value) == 0)
            mains_online |= strcmp(value, "1") == 0;
        if (strcmp(type, "Battery") == 0 && supply_field(e->d_name, "status", value, sizeof value) == 0)
            discharging |= strcmp(value, "Discharging") == 0;
    }
    closedir(dir);
    if (mains_online) return "ac";
    if (discharging) return "battery";
    return NULL;
#endif
}

void machine_macos_version(char *buf, size_t n) {
    if (n) buf[0] = 0;
#if defined(__APPLE__)
    size_t len = n;
    if (sysctlbyname("kern.osproductversion", buf, &len, NULL, 0) != 0 && n) buf[0] = 0;
#endif
}

int machine_gpu_core_count(void) {
#if defined(__APPLE__)
    /* IOServiceGetMatchingService consumes the matching dictionary; port 0 is
     * kIOMainPortDefault (MACH_PORT_NULL). */
    io_object service = IOServiceGetMatchingService(0, IOServiceMatching("AGXAccelerator"));
    if (!service) return -1;
    int cores = -1;
    cf_string key = CFStringCreateWithCString(NULL, "gpu-core-count", CF_STRING_ENCODING_UTF8);
    cf_type value = key ? IORegistryEntryCreateCFProperty(service, key, NULL, 0) : NULL;
    long long v = 0;
    if (value && CFGetTypeID(value) == CFNumberGetTypeID() && CFNumberGetValue(value, CF_NUMBER_SINT64, &v) &&
        v > 0 && v < 100000)
        cores = (int)v;
    if (value) CFRelease(value);
    if (key) CFRelease(key);
    IOObjectRelease(service);
    return cores;
#else
    return -1;
#endif
}

const char *machine_thermal_name(int state) {
    static const char *const names[] = {"nominal", "fair", "serious", "critical"};
    return state >= 0 && state <= THERMAL_CRITICAL ? names[state] : NULL;
}

static void copy_str(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

void machine_sample(rec_machine *m, const backend *b) {
    memset(m, 0, sizeof *m);
    m->collected = 1;
    m->thermal_before = m->thermal_after = machine_thermal_state();
    m->low_power = machine_low_power_mode();
    copy_str(m->power_source, sizeof m->power_source, machine_power_source());
    machine_macos_version(m->macos_version, sizeof m->macos_version);
    /* The GPU fields describe the Metal GPU the numbers come from: none for the cpu
     * and sw backends, which are not a paravirtual GPU either. */
    m->gpu_cores = -1;
    m->nfamilies = -1;
    m->working_set = -1;
    m->paravirtual = b ? 0 : -1;
    if (b && b->device_facts) b->device_facts((backend *)b, m);
}

void machine_resample_after(rec_machine *m) {
    if (!m->collected) return;
    m->thermal_after = machine_thermal_state();
    int low = machine_low_power_mode();
    if (low > m->low_power) m->low_power = low;
    const char *src = machine_power_source();
    /* Battery at either sample is what matters for the timings. */
    if (src && (!m->power_source[0] || strcmp(src, "battery") == 0)) copy_str(m->power_source, sizeof m->power_source, src);
}

int machine_marks(const rec_machine *m, char out[][80], int max) {
    int n = 0;
    if (!m->collected) return 0;
    const char *before = machine_thermal_name(m->thermal_before), *after = machine_thermal_name(m->thermal_after);
    if ((before && m->thermal_before != THERMAL_NOMINAL) || (after && m->thermal_after != THERMAL_NOMINAL)) {
        if (n < max) snprintf(out[n], 80, "thermal state %s before, %s after the runs", before ? before : "unknown",
                              after ? after : "unknown");
        n++;
    }
    if (m->low_power == 1) {
        if (n < max) snprintf(out[n], 80, "Low Power Mode on");
        n++;
    }
    if (strcmp(m->power_source, "battery") == 0) {
        if (n < max) snprintf(out[n], 80, "on battery power");
        n++;
    }
    return n;
}

static void append(char *buf, size_t n, size_t *off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *off, const char *fmt, ...) {
    if (*off >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *off, n - *off, fmt, ap);
    va_end(ap);
    if (w > 0) *off += (size_t)w;
}

void machine_describe(const rec_machine *m, char *buf, size_t n) {
    size_t off = 0;
    buf[0] = 0;
    const char *th = machine_thermal_name(m->thermal_before);
    append(buf, n, &off, "thermal %s, power %s, Low Power Mode %s", th ? th : "?",
           m->power_source[0] ? m->power_source : "?", m->low_power < 0 ? "?" : m->low_power ? "ON" : "off");
    if (m->macos_version[0]) append(buf, n, &off, ", macOS %s", m->macos_version);
    if (m->gpu_name[0]) {
        append(buf, n, &off, "; GPU %s", m->gpu_name);
        if (m->gpu_cores > 0) append(buf, n, &off, ", %d cores", m->gpu_cores);
        for (int i = 0; i < m->nfamilies && i < REC_MAX_FAMILIES; i++)
            append(buf, n, &off, "%s%s", i ? " " : ", families ", m->families[i]);
        if (m->working_set > 0) append(buf, n, &off, ", working set %.1f GB", (double)m->working_set / 1e9);
        if (m->paravirtual == 1) append(buf, n, &off, ", PARAVIRTUAL");
    }
    if (m->thermal_before < 0 || !m->power_source[0] || m->low_power < 0)
        append(buf, n, &off, " (? = not reported on this platform)");
}
