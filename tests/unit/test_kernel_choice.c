/* test_kernel_choice.c — which kernel each dispatch runs (runner/kernel_choice.h),
 * against a fake lookup: --function goes to the main stage, --shader FILE takes the
 * stages FILE defines by default name, --stage replaces a stage or a role, a missing
 * function is refused naming the flag; launches never read tensors. */
#include <string.h>

#include "runner/kernel_choice.h"
#include "test.h"

/* "FILE=fn1,fn2;FILE2=fn3": which functions each fake file defines. */
static int fake_lookup(void *ctx, const char *path, const char *function, char *names, size_t nameslen, char *err,
                       size_t errlen) {
    const char *files = ctx;
    size_t pl = strlen(path);
    for (const char *p = files; *p;) {
        size_t l = strcspn(p, ";");
        if (l > pl && strncmp(p, path, pl) == 0 && p[pl] == '=') {
            const char *list = p + pl + 1;
            size_t ll = l - pl - 1, fl = strlen(function);
            for (const char *q = list; q < list + ll;) {
                size_t n = strcspn(q, ",;");
                if (n == fl && strncmp(q, function, n) == 0) return 1;
                q += n + 1;
            }
            if (names) snprintf(names, nameslen, "%.*s", (int)ll, list);
            return 0;
        }
        p += l + (p[l] == ';');
    }
    snprintf(err, errlen, "%s: cannot read it", path);
    return -1;
}

static int resolve(const char *op_name, const int64_t *dim, const run_opts *o, const char *files, stage_kernel *out,
                   int *n, char *err, size_t errlen) {
    const op_desc *op = op_find(op_name);
    static op_launch ls[OP_MAX_STAGES];
    *n = kernel_choice_launches(op, dim, ls, err, errlen);
    if (*n < 0) return -1;
    return kernel_choice_resolve(op, ls, *n, o, fake_lookup, (void *)files, out, err, errlen);
}

static void add_stage(run_opts *o, const char *stage, const char *file, const char *fn) {
    run_stage_choice *c = &o->stage_choices[o->nstage_choices++];
    memset(c, 0, sizeof *c);
    snprintf(c->stage, sizeof c->stage, "%s", stage);
    snprintf(c->file, sizeof c->file, "%s", file);
    snprintf(c->function, sizeof c->function, "%s", fn);
}

TEST(kernel_choice_every_op_has_launches_from_dims_alone) {
    /* a launch() that read a tensor would crash here: the stub case has none */
    for (int i = 0; op_table[i]; i++) {
        const op_desc *op = op_table[i];
        int64_t dim[OP_MAX_DIMS] = {0};
        for (int d = 0; d < op->ndims; d++) dim[d] = op->dims[d].def;
        char err[256];
        op_launch ls[OP_MAX_STAGES];
        int n = kernel_choice_launches(op, dim, ls, err, sizeof err);
        CHECK_MSG(n >= 1, "%s: %s", op->name, err);
        int m = kernel_choice_main(op, ls, n);
        /* only a pipeline of equals has no main stage */
        CHECK_MSG(m >= 0 || strcmp(op->name, "chunk_fwd") == 0, "%s has no main stage", op->name);
    }
}

TEST(kernel_choice_rules) {
    int64_t attn[OP_MAX_DIMS] = {1, 2, 1, 40, 40, 64, 1};
    stage_kernel k[OP_MAX_STAGES];
    char err[1024];
    int n;
    run_opts o;
    /* --shader F --function mine: main stage mine, the casts F's by default name */
    memset(&o, 0, sizeof o);
    o.shader = "F";
    o.function = "mine";
    CHECK_MSG(resolve("attn_bwd", attn, &o, "F=mine,f32_to_bf16_cast", k, &n, err, sizeof err) == 0, "%s", err);
    CHECK(n == 3 && k[0].origin == KERNEL_FUNCTION && strcmp(k[0].function, "mine") == 0);
    CHECK(k[1].origin == KERNEL_SHADER && k[2].origin == KERNEL_SHADER && strcmp(k[2].path, "F") == 0);
    /* --shader F alone, F without the backward kernel: ours for it, F's casts */
    o.function = NULL;
    CHECK(resolve("attn_bwd", attn, &o, "F=f32_to_bf16_cast", k, &n, err, sizeof err) == 0);
    CHECK(k[0].origin == KERNEL_OURS && strcmp(k[0].function, "flash_attn_train_bwd_bf16_d64") == 0);
    CHECK(k[1].origin == KERNEL_SHADER);
    /* --function naming what F lacks: refused, naming the flag and what F has */
    o.function = "missing";
    CHECK(resolve("attn_bwd", attn, &o, "F=mine", k, &n, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "--function missing") && strstr(err, "it defines: mine"), "%s", err);
    /* --stage by role (both casts) and by stage name (one), the later one winning */
    memset(&o, 0, sizeof o);
    add_stage(&o, "cast", "G", "c");
    add_stage(&o, "cast_dV", "H", "");
    CHECK_MSG(resolve("attn_bwd", attn, &o, "G=c;H=f32_to_bf16_cast", k, &n, err, sizeof err) == 0, "%s", err);
    CHECK(k[0].origin == KERNEL_OURS);
    CHECK(k[1].origin == KERNEL_STAGE && strcmp(k[1].path, "G") == 0 && strcmp(k[1].function, "c") == 0);
    CHECK(k[2].origin == KERNEL_STAGE && strcmp(k[2].path, "H") == 0 && strcmp(k[2].function, "f32_to_bf16_cast") == 0);
    /* --stage FILE whose default name is missing: refused with the fix */
    memset(&o, 0, sizeof o);
    add_stage(&o, "attn_bwd", "G", "");
    CHECK(resolve("attn_bwd", attn, &o, "G=c", k, &n, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "--stage attn_bwd=G") && strstr(err, "add :FUNCTION"), "%s", err);
    /* an unreadable file names the flag */
    memset(&o, 0, sizeof o);
    add_stage(&o, "attn_bwd", "nofile", "x");
    CHECK(resolve("attn_bwd", attn, &o, "G=c", k, &n, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "--stage attn_bwd=nofile: nofile: cannot read it"), "%s", err);
    /* decode_seq_steps: one choice for every token's dispatch (role prep_step) */
    int64_t steps[OP_MAX_DIMS] = {1, 1, 2, 32, 32, 3};
    memset(&o, 0, sizeof o);
    o.shader = "F";
    o.function = "step";
    CHECK_MSG(resolve("decode_seq_steps", steps, &o, "F=step", k, &n, err, sizeof err) == 0, "%s", err);
    CHECK(n == 3);
    for (int s = 0; s < n; s++) CHECK_MSG(k[s].origin == KERNEL_FUNCTION, "token %d not replaced", s);
    /* chunk_fwd: --stage kkt replaces kkt only */
    int64_t cf[OP_MAX_DIMS] = {1, 65, 1, 2, 64, 64, 64, 0};
    memset(&o, 0, sizeof o);
    add_stage(&o, "kkt", "T", "their_kkt");
    CHECK_MSG(resolve("chunk_fwd", cf, &o, "T=their_kkt", k, &n, err, sizeof err) == 0, "%s", err);
    CHECK(n == 6);
    for (int s = 0; s < n; s++) CHECK_MSG((k[s].origin == KERNEL_STAGE) == (s == 1), "stage %d", s);
}
