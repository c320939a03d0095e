/* kernel_opts.c — parsing of the kernel-choice and tolerance options. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/kernel_opts.h"
#include "msl/msl_include.h"
#include "cli/stage_opts.h"

int cli_split_option(int argc, char **argv, int *i, const char *const *bare, char *name, size_t namelen,
                     const char **val, char *err, size_t errlen) {
    const char *a = argv[*i];
    const char *eq = strchr(a + 2, '=');
    size_t nl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (nl >= namelen) nl = namelen - 1;
    memcpy(name, a + 2, nl);
    name[nl] = 0;
    for (int k = 0; bare && bare[k]; k++) {
        if (strcmp(name, bare[k]) == 0) {
            *val = NULL;
            return 0;
        }
    }
    if (eq) {
        *val = eq + 1;
    } else if (*i + 1 < argc) {
        *val = argv[++*i];
    } else {
        snprintf(err, errlen, "--%s needs a value", name);
        return -1;
    }
    return 0;
}

/* "ID=VALUE": a function constant by index; VALUE is converted to the type the function
 * declares for ID when the pipeline is built (metal/mtl_constant.c). */
static int parse_constant(run_opts *o, const char *val, char *err, size_t errlen) {
    const char *e = strchr(val, '=');
    char ibuf[32];
    size_t il = e ? (size_t)(e - val) : 0;
    int64_t idx;
    if (!e || il == 0 || il >= sizeof ibuf || !e[1] || strlen(e + 1) >= sizeof o->constants[0].value) {
        snprintf(err, errlen, "--constant '%s' must be ID=VALUE (e.g. --constant 301=true)", val);
        return -1;
    }
    memcpy(ibuf, val, il);
    ibuf[il] = 0;
    if (args_parse_int("constant", ibuf, &idx, err, errlen)) return -1;
    if (idx < 0 || idx > 65535 || o->nconstants >= RUN_MAX_CONSTANTS) {
        snprintf(err, errlen, "--constant '%s': index must be 0..65535, at most %d constants", val, RUN_MAX_CONSTANTS);
        return -1;
    }
    o->constants[o->nconstants].index = (int)idx;
    snprintf(o->constants[o->nconstants].value, sizeof o->constants[0].value, "%s", e + 1);
    o->nconstants++;
    return 0;
}

int cli_parse_kernel_option(const char *name, const char *val, run_opts *o, char *err, size_t errlen) {
    if (strcmp(name, "stage") == 0) return cli_parse_stage_option(val, o, err, errlen) ? -1 : 1;
    if (strcmp(name, "shader") == 0) {
        o->shader = val;
    } else if (strcmp(name, "function") == 0) {
        o->function = val;
    } else if (strcmp(name, "constant") == 0) {
        if (parse_constant(o, val, err, errlen)) return -1;
    } else if (strcmp(name, "include") == 0) {
        if (o->source.ninclude_dirs == MSL_MAX_INCLUDE_DIRS) {
            snprintf(err, errlen, "--include %s: at most %d include directories", val, MSL_MAX_INCLUDE_DIRS);
            return -1;
        }
        o->source.include_dirs[o->source.ninclude_dirs++] = val;
    } else if (strcmp(name, "define") == 0) {
        if (msl_check_define(val, err, errlen)) return -1;
        if (o->source.ndefines == MSL_MAX_DEFINES) {
            snprintf(err, errlen, "--define %s: at most %d definitions", val, MSL_MAX_DEFINES);
            return -1;
        }
        o->source.defines[o->source.ndefines++] = val;
    } else if (strcmp(name, "atol") == 0 || strcmp(name, "rtol") == 0) {
        double d;
        if (args_parse_double(name, val, &d, err, errlen)) return -1;
        if (d < 0) {
            snprintf(err, errlen, "--%s %s must be >= 0", name, val);
            return -1;
        }
        if (name[0] == 'a') o->has_atol = 1, o->atol = d;
        else o->has_rtol = 1, o->rtol = d;
    } else if (strcmp(name, "sw-timeout") == 0) {
        double d;
        if (args_parse_double(name, val, &d, err, errlen)) return -1;
        if (!(d >= 0 && d <= 86400)) {
            snprintf(err, errlen, "--sw-timeout %s is out of range: seconds per dispatch, 0..86400 (0 = no watchdog)",
                     val);
            return -1;
        }
        o->has_sw_timeout = 1;
        o->sw_timeout = d;
    } else if (strcmp(name, "sw-max-findings") == 0) {
        int64_t n;
        if (args_parse_int(name, val, &n, err, errlen)) return -1;
        if (n < 0 || n > 100000) {
            snprintf(err, errlen, "--sw-max-findings %s is out of range: accepted 0..100000 (the JSON report has all)",
                     val);
            return -1;
        }
        o->has_sw_max_findings = 1;
        o->sw_max_findings = (int)n;
    } else {
        return 0;
    }
    return 1;
}

int cli_check_kernel_options(const run_opts *o, char *err, size_t errlen) {
    /* --shader alone runs FILE's kernels under their default names (stage_opts.h). */
    if (o->function && !o->shader) {
        snprintf(err, errlen, "--function %s needs --shader FILE: name the .metal file that defines it", o->function);
        return -1;
    }
    if (!cli_has_kernel_choice(o) && (o->source.ninclude_dirs || o->source.ndefines)) {
        snprintf(err, errlen, "--include and --define apply to a kernel file of yours: give --shader FILE or --stage "
                              "NAME=FILE");
        return -1;
    }
    return 0;
}
