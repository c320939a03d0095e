/* stage_opts.c — --stage parsing and the up-front check of a kernel choice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/stage_opts.h"
#include "cli/table.h"
#include "core/strutil.h"
#include "runner/kernel_choice.h"

static int is_identifier(const char *s) {
    if (!s[0] || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

int cli_parse_stage_option(const char *val, run_opts *o, char *err, size_t errlen) {
    const char *eq = strchr(val, '=');
    if (!eq || eq == val || !eq[1]) {
        snprintf(err, errlen, "--stage '%s' must be NAME=FILE or NAME=FILE:FUNCTION (e.g. --stage kkt=their.metal:their_kkt)",
                 val);
        return -1;
    }
    if (o->nstage_choices >= RUN_MAX_STAGE_CHOICES) {
        snprintf(err, errlen, "--stage given more than %d times: at most one per stage", RUN_MAX_STAGE_CHOICES);
        return -1;
    }
    run_stage_choice *ch = &o->stage_choices[o->nstage_choices];
    memset(ch, 0, sizeof *ch);
    size_t nl = (size_t)(eq - val);
    const char *file = eq + 1;
    /* FILE:FUNCTION splits at the last ':' when what follows is a name, so a path
     * with a colon in it still works as FILE alone. */
    const char *colon = strrchr(file, ':');
    size_t fl = colon && is_identifier(colon + 1) ? (size_t)(colon - file) : strlen(file);
    if (nl >= sizeof ch->stage || fl == 0 || fl >= sizeof ch->file ||
        (fl < strlen(file) && strlen(colon + 1) >= sizeof ch->function)) {
        snprintf(err, errlen, "--stage '%s': the stage name, file or function is empty or too long", val);
        return -1;
    }
    memcpy(ch->stage, val, nl);
    memcpy(ch->file, file, fl);
    if (fl < strlen(file)) str_copy(ch->function, sizeof ch->function, colon + 1);
    o->nstage_choices++;
    return 0;
}

int cli_has_kernel_choice(const run_opts *o) { return o->shader != NULL || o->nstage_choices > 0; }

/* Appends each stage name of ls not yet in buf. */
static void add_stage_names(const op_launch *ls, int n, char *buf, size_t len) {
    char mine[512];
    kernel_choice_stage_names(ls, n, mine, sizeof mine);
    for (char *save = NULL, *tok = strtok_r(mine, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        char *at = strstr(buf, tok);
        size_t tl = strlen(tok);
        if (at && (at == buf || at[-1] == ' ') && (at[tl] == ',' || at[tl] == 0)) continue;
        size_t off = strlen(buf);
        if (off + tl + 3 >= len) break;
        snprintf(buf + off, len - off, "%s%s", off ? ", " : "", tok);
    }
}

static int case_problem(const op_desc *op, const int64_t *dim, int n, const char *msg, char *err, size_t errlen) {
    char shape[256];
    table_shape_str(op, dim, shape, sizeof shape);
    if (n > 1) snprintf(err, errlen, "%s (%s at %s)", msg, op->name, shape);
    else snprintf(err, errlen, "%s", msg);
    return -1;
}

/* The names first, which need no file: every --stage names a stage some case runs,
 * and --function has a main stage to go to in every case.  0, or -1 with err set. */
static int check_names(const driver_case *cases, int n, const run_opts *o, op_launch *ls, char *err, size_t errlen) {
    char known[1024] = "", msg[1024];
    int found[RUN_MAX_STAGE_CHOICES] = {0};
    for (int k = 0; k < n; k++) {
        int nl = kernel_choice_launches(cases[k].op, cases[k].dim, ls, err, errlen);
        if (nl < 0) return -1;
        add_stage_names(ls, nl, known, sizeof known);
        for (int i = 0; i < o->nstage_choices; i++) found[i] |= kernel_choice_has_stage(ls, nl, o->stage_choices[i].stage);
        if (o->function && kernel_choice_main(cases[k].op, ls, nl) < 0) {
            char names[512];
            kernel_choice_stage_names(ls, nl, names, sizeof names);
            snprintf(msg, sizeof msg, "--function %s: %s runs %d stages and none is its main one (%s): choose a stage's "
                     "kernel with --stage STAGE=FILE:%s", o->function, cases[k].op->name, nl, names, o->function);
            return case_problem(cases[k].op, cases[k].dim, n, msg, err, errlen);
        }
    }
    for (int i = 0; i < o->nstage_choices; i++) {
        if (found[i]) continue;
        const run_stage_choice *ch = &o->stage_choices[i];
        int one_op = 1;
        for (int k = 1; k < n; k++) one_op &= cases[k].op == cases[0].op;
        char who[96];
        if (one_op && n > 0) snprintf(who, sizeof who, "%s has no", cases[0].op->name);
        else snprintf(who, sizeof who, "no op of the suite has a");
        snprintf(err, errlen, "--stage %s=%s: %s stage '%s' (stages: %s): use one of those names", ch->stage, ch->file,
                 who, ch->stage, known);
        return -1;
    }
    return 0;
}

/* Then every case's choice against the files themselves (each_case: see
 * cli_check_kernel_choice).  0, or -1 with err set. */
static int check_files(backend *b, const driver_case *cases, int n, const run_opts *o, int each_case, op_launch *ls,
                       stage_kernel *ks, char *err, size_t errlen) {
    char msg[1024];
    int shader_used = 0;
    for (int k = 0; k < n; k++) {
        op_case stub;
        memset(&stub, 0, sizeof stub);
        stub.op = cases[k].op;
        memcpy(stub.dim, cases[k].dim, sizeof stub.dim);
        int nk = b->check_kernels ? b->check_kernels(b, &stub, o, ks, msg, sizeof msg) : -1;
        if (!b->check_kernels) snprintf(msg, sizeof msg, "--shader and --stage need a Metal backend (--backend sw or metal)");
        if (nk < 0) return case_problem(cases[k].op, cases[k].dim, n, msg, err, errlen);
        int nl = kernel_choice_launches(cases[k].op, cases[k].dim, ls, err, errlen);
        if (nl != nk) return -1;
        /* --shader FILE alone must give the main stage (or, when the op has none or
         * --stage chose it, some stage): a file that only replaces a cast would
         * otherwise pass for the user's kernel. */
        int m = kernel_choice_main(cases[k].op, ls, nl), main_origin = m >= 0 ? (int)ks[m].origin : -1, any = 0;
        for (int s = 0; s < nk; s++) any |= ks[s].origin == KERNEL_SHADER || ks[s].origin == KERNEL_FUNCTION;
        shader_used |= any;
        int used_here = main_origin == KERNEL_SHADER || ((m < 0 || main_origin == KERNEL_STAGE) && any);
        if (each_case && o->shader && !o->function && !used_here) {
            if (m >= 0)
                snprintf(msg, sizeof msg, "--shader %s defines no kernel named %s (%s's main stage %s): name yours with "
                         "--function NAME", o->shader, ls[m].function, cases[k].op->name,
                         ls[m].role ? ls[m].role : ls[m].stage);
            else
                snprintf(msg, sizeof msg, "--shader %s defines none of %s's kernels under their default names: name one "
                         "with --stage STAGE=FILE:FUNCTION", o->shader, cases[k].op->name);
            return case_problem(cases[k].op, cases[k].dim, n, msg, err, errlen);
        }
    }
    if (o->shader && !shader_used && n > 0) {
        snprintf(err, errlen, "--shader %s defines none of the kernels these cases run under their default names: name "
                 "one with --stage STAGE=FILE:FUNCTION", o->shader);
        return -1;
    }
    return 0;
}

int cli_check_kernel_choice(backend *b, const driver_case *cases, int n, const run_opts *o, int each_case, char *err,
                            size_t errlen) {
    if (!cli_has_kernel_choice(o)) return 0;
    op_launch *ls = malloc(sizeof *ls * OP_MAX_STAGES);
    stage_kernel *ks = malloc(sizeof *ks * OP_MAX_STAGES);
    int rc = -1;
    if (!ls || !ks)
        snprintf(err, errlen, "out of memory");
    else if (check_names(cases, n, o, ls, err, errlen) == 0)
        rc = check_files(b, cases, n, o, each_case, ls, ks, err, errlen);
    free(ls);
    free(ks);
    return rc;
}

/* Stages an op runs only at some shapes (chunk_fwd's l2norm with --l2norm 1): each
 * dimension with a small range (a switch, not a size) is set to each of its other
 * values, the rest kept at their defaults, and a stage name the default shape lacks is
 * listed with the flag that brings it in. */
static void print_stages_of_other_shapes(FILE *f, const op_desc *op, const int64_t *def, const op_launch *ls_def,
                                         int n_def) {
    op_launch *ls = malloc(sizeof *ls * OP_MAX_STAGES);
    if (!ls) return;
    for (int i = 0; i < op->ndims; i++) {
        const op_dim *d = &op->dims[i];
        if (d->max - d->min < 1 || d->max - d->min > 3) continue;
        for (int64_t v = d->min; v <= d->max; v++) {
            if (v == d->def) continue;
            int64_t dim[OP_MAX_DIMS];
            memcpy(dim, def, sizeof dim);
            dim[i] = v;
            char err[256];
            int n = kernel_choice_launches(op, dim, ls, err, sizeof err);
            for (int s = 0; s < n; s++) {
                if (!ls[s].stage) continue;
                int known = 0;
                for (int e = 0; e < n_def && !known; e++) known = ls_def[e].stage && !strcmp(ls_def[e].stage, ls[s].stage);
                for (int e = 0; e < s && !known; e++) known = ls[e].stage && !strcmp(ls[e].stage, ls[s].stage);
                if (!known)
                    fprintf(f, "  and with --%s %lld: %s (%s in %s)\n", d->name, (long long)v, ls[s].stage,
                            ls[s].function, ls[s].shader);
            }
        }
    }
    free(ls);
}

void cli_print_stage_help(FILE *f, const op_desc *op) {
    int64_t dim[OP_MAX_DIMS] = {0};
    char err[256], names[512];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    op_launch *ls = malloc(sizeof *ls * OP_MAX_STAGES);
    int n = ls ? kernel_choice_launches(op, dim, ls, err, sizeof err) : -1;
    if (n <= 0) {
        free(ls);
        return;
    }
    kernel_choice_stage_names(ls, n, names, sizeof names);
    int m = kernel_choice_main(op, ls, n);
    fprintf(f, "\nstages (at the default shape): %s\n", names);
    print_stages_of_other_shapes(f, op, dim, ls, n);
    if (m >= 0)
        fprintf(f, "main stage: %s (our kernel %s in %s): what --shader FILE --function NAME replaces%s\n",
                ls[m].role ? ls[m].role : ls[m].stage, ls[m].function, ls[m].shader,
                n > 1 ? ";\n  the other stages run FILE's kernel of their default name when FILE defines it, else ours"
                      : "");
    else
        fprintf(f, "main stage: none (%d stages of equal standing): choose kernels with --stage NAME=FILE[:FUNCTION]\n"
                   "  or --shader FILE (every stage FILE defines under its default name)\n", n);
    free(ls);
}
