/* kcase_record.c — a kernel case's run as a run record, so the JSON report, compare
 * and report take it as they take an op's: the runner's timing, sampling and
 * determinism as for an op, and op "kernel", the case's own facts under "case" (name,
 * file, sha256 of the source and of the case file, each buffer's binding), each
 * launch as a stage, a check per buffer with an expectation (reference "expected"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "io/io_util.h"
#include "runner/kcase_run.h"
#include "runner/launch_limits.h"
#include "runner/record.h"

/* sha256 of a file's bytes into hex ("" when it cannot be read). */
static void file_sha256(const char *path, char hex[65]) {
    char *text = NULL, msg[256];
    size_t len = 0;
    hex[0] = '\0';
    if (path && io_read_small_file(path, 64u << 20, &text, &len, msg, sizeof msg) == 0) sha256_hex(text, len, hex);
    free(text);
}

static void fill_case(const kc_case *c, const kc_result *r, run_record *rec) {
    rec_case *k = &rec->kcase;
    k->present = 1;
    snprintf(k->name, sizeof k->name, "%s", c->name);
    snprintf(k->file, sizeof k->file, "%s", c->path);
    char *src = c->source_path ? kc_path(c, c->source_path) : NULL;
    if (src) file_sha256(src, k->source_sha256);
    else if (c->source_text) sha256_hex(c->source_text, strlen(c->source_text), k->source_sha256);
    else if (c->mlx) sha256_hex(c->mlx->source, strlen(c->mlx->source), k->source_sha256);
    free(src);
    if (io_has_suffix(c->path, ".json")) file_sha256(c->path, k->case_sha256);
    for (int i = 0; i < r->nbufs && i < REC_MAX_CASE_BUFFERS; i++) {
        const kc_buf_result *b = &r->bufs[i];
        snprintf(k->buffers[i].name, sizeof k->buffers[i].name, "%s", b->name);
        k->buffers[i].index = b->index;
        snprintf(k->buffers[i].dtype, sizeof k->buffers[i].dtype, "%s", kc_dtype_name(b->dtype));
        k->buffers[i].elements = b->numel;
        k->buffers[i].writable = b->writable;
        k->buffers[i].readonly = b->readonly;
        k->nbuffers = i + 1;
    }
    snprintf(rec->kernel.source, sizeof rec->kernel.source, "%s", c->source_path ? c->source_path : "(text)");
    snprintf(rec->kernel.function, sizeof rec->kernel.function, "%s", 
             c->launches[0].function ? c->launches[0].function : c->mlx ? c->mlx->name : "");
    snprintf(rec->kernel.sha256, sizeof rec->kernel.sha256, "%s", k->source_sha256);
    rec->kernel.theirs = 1;
}

static void fill_checks(const kc_result *r, run_record *rec) {
    for (int i = 0; i < r->nbufs && rec->nself < REC_MAX_CHECKS; i++) {
        if (!r->bufs[i].self_ref) continue; /* its own reference: listed, not checked */
        snprintf(rec->self_refs[rec->nself].output, sizeof rec->self_refs[0].output, "%.47s", r->bufs[i].name);
        snprintf(rec->self_refs[rec->nself].reference, sizeof rec->self_refs[0].reference, "%s", r->bufs[i].reference);
        rec->nself++;
    }
    for (int i = 0; i < r->nbufs && rec->nchecks < REC_MAX_CHECKS; i++) {
        const kc_buf_result *b = &r->bufs[i];
        if (!b->checked) continue;
        rec_check *x = &rec->checks[rec->nchecks++];
        snprintf(x->output, sizeof x->output, "%.47s", b->name);
        snprintf(x->reference, sizeof x->reference, "%s", b->reference[0] ? b->reference : "expected");
        x->max_abs = b->max_abs;
        x->max_rel = b->max_rel;
        x->rel_l2 = b->rel_l2;
        x->ulp_p99 = -1;
        x->nan = b->nan;
        x->inf = b->inf;
        x->unwritten = b->unwritten;
        x->n_bad = b->bad;
        x->first_bad_index = b->first_bad;
        x->first_bad_got = x->first_bad_want = 0;
        x->atol = b->atol;
        x->rtol = b->rtol;
        x->rel_l2_max = b->rel_l2_max;
        x->pass = b->pass;
    }
}

/* Each launch as the record's stage: function, geometry, source (the case's own). */
static void fill_stages(const kc_case *plain, run_record *rec) {
    rec->nstages = plain->nlaunches < REC_MAX_STAGES ? plain->nlaunches : REC_MAX_STAGES;
    for (int l = 0; l < rec->nstages; l++) {
        rec_stage *st = &rec->stages[l];
        const kc_dispatch *d = &plain->launches[l].dispatch;
        snprintf(st->name, sizeof st->name, "%d", l);
        snprintf(st->function, sizeof st->function, "%s", plain->launches[l].function ? plain->launches[l].function : "");
        snprintf(st->source, sizeof st->source, "%s", rec->kernel.source);
        snprintf(st->sha256, sizeof st->sha256, "%s", rec->kcase.source_sha256);
        st->theirs = 1;
        memcpy(st->grid, d->size, sizeof st->grid);
        memcpy(st->tg, d->tg, sizeof st->tg);
        st->tgmem_bytes = 0;
        for (int k = 0; k < d->ntgmem; k++) st->tgmem_bytes += d->tgmem[k].bytes;
        st->repeat = 1;
        st->own_command_buffers = 0;
    }
    rec->dispatches = plain->nlaunches;
    rec->command_buffers = 1;
}

int kc_record_case(const kc_case *source, const kc_case *plain, const kc_result *r, run_record *rec, char *err,
                   size_t errlen) {
    (void)err, (void)errlen;
    rec->op = &kc_record_op;
    kc_result none;
    memset(&none, 0, sizeof none);
    fill_case(source, r && r->prepared ? r : &none, rec);
    if (!rec->kernel.function[0] && plain->nlaunches && plain->launches[0].function)
        snprintf(rec->kernel.function, sizeof rec->kernel.function, "%s", plain->launches[0].function);
    fill_stages(plain, rec);
    launch_limits_warn(rec);
    if (!r || !r->prepared || rec->status == RUN_ERROR) return 0;
    fill_checks(r, rec);
    if (rec->status == RUN_PASS && !r->pass) rec->status = RUN_FAIL;
    return 0;
}
