/* ir_pass.c — ir_pass.h: which IR passes a variant gets, and running them.
 *
 * The table below is the one place a pass is registered, with the instrumentation
 * bits it is for: a pass runs for a variant whose SW_INSTR_* bits include all of
 * its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/count.h"
#include "swmetal/ir_pass.h"
#include "swmetal/numerics.h"
#include "swmetal/sw_compile.h"

typedef struct pass_entry {
    const sw_ir_pass *pass;
    int instr;            /* SW_INSTR_* bits it needs, all of them */
} pass_entry;

static const pass_entry passes[] = {
    {&sw_ir_numerics_pass, SW_INSTR_NUMERICS},
    {&sw_count_pass, SW_INSTR_COUNT},
    {NULL, 0}, /* the table's end; passes go above it */
};

int sw_ir_roundtrip(void) {
    const char *e = getenv("GDNBENCH_SW_IR_ROUNDTRIP");
    return e && strcmp(e, "1") == 0;
}

int sw_ir_passes(int instr, const sw_ir_pass **out, int max) {
    int n = 0;
    for (size_t i = 0; passes[i].pass && n < max; i++)
        if (passes[i].instr && (instr & passes[i].instr) == passes[i].instr) out[n++] = passes[i].pass;
    return n;
}

int sw_ir_reoptimise(const sw_ir_pass *const *ps, int n) {
    for (int i = 0; i < n; i++)
        if (ps[i]->reoptimise) return 1;
    return 0;
}

int sw_ir_canonical(const sw_ir_pass *const *ps, int n) {
    for (int i = 0; i < n; i++)
        if (ps[i]->canonical) return 1;
    return 0;
}

/* The sources of the passes and of llir.c (a hash the Makefile passes in): an edited
 * pass must never be served an object an older one instrumented. */
#ifdef SW_IR_ID
static const char ir_id[] = SW_IR_ID;
#else
static const char ir_id[] = "";
#endif

void sw_ir_pass_signature(int instr, char *out, size_t n) {
    const sw_ir_pass *p[SW_IR_MAX_PASSES];
    int np = sw_ir_passes(instr, p, SW_IR_MAX_PASSES);
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < np && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s:%d%s", i ? "," : "", p[i]->name, p[i]->version,
                                 p[i]->canonical ? "+canonical1" : "");
    if (np == 0 && sw_ir_roundtrip()) used = (size_t)snprintf(out, n, "roundtrip");
    if ((np || sw_ir_roundtrip()) && used < n) snprintf(out + used, n - used, "@%s", ir_id);
}

int sw_ir_run_passes(const char *text, size_t len, const sw_ir_pass *const *ps, int n, msl_buf *out, char **err) {
    ll_module *m = ll_module_read(text, len);
    if (!m) {
        *err = strdup("out of memory reading the kernel's LLVM IR");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *why = NULL;
        if (ps[i]->run(m, &why) != 0) {
            msl_buf b = {0};
            msl_buf_printf(&b, "the %s pass: %s", ps[i]->name, why ? why : "failed");
            free(why);
            *err = msl_buf_take(&b);
            ll_module_free(m);
            return -1;
        }
    }
    ll_module_write(m, out);
    ll_module_free(m);
    return 0;
}
