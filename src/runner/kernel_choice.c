/* kernel_choice.c — per-dispatch kernel choice (rules in kernel_choice.h). */
#include <stdio.h>
#include <string.h>

#include "core/strutil.h"
#include "runner/kernel_choice.h"

static int names_stage(const op_launch *l, const char *name, size_t len) {
    if (l->stage && strlen(l->stage) == len && strncmp(l->stage, name, len) == 0) return 1;
    return l->role && strlen(l->role) == len && strncmp(l->role, name, len) == 0;
}

int kernel_choice_has_stage(const op_launch *ls, int n, const char *name) {
    for (int s = 0; s < n; s++)
        if (names_stage(&ls[s], name, strlen(name))) return 1;
    return 0;
}

/* The main stage's name at these launches: the first entry of op->main_stage that
 * some dispatch carries.  Writes its length; NULL when none. */
static const char *main_name(const op_desc *op, const op_launch *ls, int n, size_t *len) {
    for (const char *p = op->main_stage; p && *p;) {
        while (*p == ',' || *p == ' ') p++;
        size_t l = strcspn(p, ", ");
        for (int s = 0; l && s < n; s++)
            if (names_stage(&ls[s], p, l)) {
                *len = l;
                return p;
            }
        p += l;
    }
    return NULL;
}

int kernel_choice_is_main(const op_desc *op, const op_launch *ls, int n, int s) {
    size_t len = 0;
    const char *m = main_name(op, ls, n, &len);
    if (m) return names_stage(&ls[s], m, len);
    return n == 1 && s == 0;
}

int kernel_choice_main(const op_desc *op, const op_launch *ls, int n) {
    for (int s = 0; s < n; s++)
        if (kernel_choice_is_main(op, ls, n, s)) return s;
    return -1;
}

void kernel_choice_stage_names(const op_launch *ls, int n, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = 0;
    for (int s = 0; s < n && off + 1 < len; s++) {
        int seen = 0;
        for (int e = 0; e < s && !seen; e++) seen = ls[e].stage && ls[s].stage && strcmp(ls[e].stage, ls[s].stage) == 0;
        if (seen || !ls[s].stage) continue;
        int w = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", ls[s].stage);
        if (w < 0 || (size_t)w >= len - off) break;
        off += (size_t)w;
    }
    /* then each role once, after the stages it groups */
    for (int s = 0; s < n && off + 1 < len; s++) {
        if (!ls[s].role) continue;
        int seen = 0;
        for (int e = 0; e < s && !seen; e++) seen = ls[e].role && strcmp(ls[e].role, ls[s].role) == 0;
        if (seen) continue;
        int w = snprintf(buf + off, len - off, "%s%s (every %s dispatch)", off ? ", " : "", ls[s].role, ls[s].role);
        if (w < 0 || (size_t)w >= len - off) break;
        off += (size_t)w;
    }
}

int kernel_choice_launches(const op_desc *op, const int64_t *dim, op_launch *ls, char *err, size_t errlen) {
    if (!op->launch || !op->nstages) {
        snprintf(err, errlen, "%s has no Metal kernel; use --backend cpu", op->name);
        return -1;
    }
    op_case stub;
    memset(&stub, 0, sizeof stub);
    stub.op = op;
    memcpy(stub.dim, dim, sizeof stub.dim);
    int n = op->nstages(&stub);
    if (n < 1 || n > OP_MAX_STAGES) {
        snprintf(err, errlen, "internal error: %s reports %d stages", op->name, n);
        return -1;
    }
    for (int s = 0; s < n; s++) {
        memset(&ls[s], 0, sizeof ls[s]);
        if (op->launch(&stub, s, &ls[s]) != 0) {
            snprintf(err, errlen, "%s has no Metal kernel for stage %d; use --backend cpu", op->name, s);
            return -1;
        }
    }
    return n;
}

static void set_kernel(stage_kernel *k, const char *path, const char *function, kernel_origin origin) {
    memset(k, 0, sizeof *k);
    str_copy(k->path, sizeof k->path, path ? path : "");
    str_copy(k->function, sizeof k->function, function ? function : "");
    k->origin = origin;
}

int kernel_choice_resolve(const op_desc *op, const op_launch *ls, int n, const run_opts *o, kernel_lookup_fn lookup,
                          void *ctx, stage_kernel *out, char *err, size_t errlen) {
    char names[400], why[768];
    for (int s = 0; s < n; s++) {
        const op_launch *l = &ls[s];
        const run_stage_choice *ch = NULL;
        for (int i = 0; i < o->nstage_choices; i++)
            if (names_stage(l, o->stage_choices[i].stage, strlen(o->stage_choices[i].stage)))
                ch = &o->stage_choices[i];
        int r;
        names[0] = why[0] = 0;
        if (ch) {
            const char *fn = ch->function[0] ? ch->function : l->function;
            r = lookup(ctx, ch->file, fn, names, sizeof names, why, sizeof why);
            if (r < 0) {
                snprintf(err, errlen, "--stage %s=%s: %s", ch->stage, ch->file, why);
                return -1;
            }
            if (r == 0) {
                snprintf(err, errlen, "--stage %s=%s%s%s: %s defines no kernel function '%s' (it defines: %s): %s",
                         ch->stage, ch->file, ch->function[0] ? ":" : "", ch->function, ch->file, fn,
                         names[0] ? names : "none",
                         ch->function[0] ? "check the name after ':'" : "add :FUNCTION naming its kernel for this stage");
                return -1;
            }
            set_kernel(&out[s], ch->file, fn, KERNEL_STAGE);
        } else if (o->shader && o->function && kernel_choice_is_main(op, ls, n, s)) {
            r = lookup(ctx, o->shader, o->function, names, sizeof names, why, sizeof why);
            if (r < 0) {
                snprintf(err, errlen, "--shader %s: %s", o->shader, why);
                return -1;
            }
            if (r == 0) {
                snprintf(err, errlen, "--function %s: %s defines no kernel function '%s' (it defines: %s): check the name",
                         o->function, o->shader, o->function, names[0] ? names : "none");
                return -1;
            }
            set_kernel(&out[s], o->shader, o->function, KERNEL_FUNCTION);
        } else if (o->shader && l->function &&
                   (r = lookup(ctx, o->shader, l->function, NULL, 0, why, sizeof why)) != 0) {
            if (r < 0) {
                snprintf(err, errlen, "--shader %s: %s", o->shader, why);
                return -1;
            }
            set_kernel(&out[s], o->shader, l->function, KERNEL_SHADER);
        } else {
            set_kernel(&out[s], l->shader, l->function, KERNEL_OURS);
        }
    }
    return 0;
}
