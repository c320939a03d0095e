/* kcase_record.c — a kernel case's run as a run record, so the JSON report, compare
 * and report take it as they take an op's: op "kernel", the case's own facts under
 * "case" (name, file, sha256 of the source and of the case file, each buffer's
 * binding), a check per buffer with an expectation (reference "expected"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "io/io_util.h"
#include "runner/kcase_run.h"
#include "runner/runner.h"
#include "runner/record.h"

static const op_desc kernel_case_op = {.name = "kernel", .group = "case", .summary = "a kernel case file"};

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
    for (int i = 0; i < r->nbufs && rec->nchecks < REC_MAX_CHECKS; i++) {
        const kc_buf_result *b = &r->bufs[i];
        if (!b->checked) continue;
        rec_check *x = &rec->checks[rec->nchecks++];
        snprintf(x->output, sizeof x->output, "%.47s", b->name);
        snprintf(x->reference, sizeof x->reference, "expected");
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

int kc_fill_record(const kc_case *c, const kc_result *r, const char *device_name, const char *backend, uint64_t seed,
                   run_record *rec, char *err, size_t errlen) {
    memset(rec, 0, sizeof *rec);
    rec->op = &kernel_case_op;
    snprintf(rec->device.name, sizeof rec->device.name, "%s", device_name);
    snprintf(rec->device.backend, sizeof rec->device.backend, "%s", backend);
    rec->device.emulated = strcmp(backend, "sw") == 0;
    rec->device.gpu_cores = -1;
    rec->device.bandwidth_gbps = rec->device.fp32_tflops = rec->device.fp16_tflops = -1;
    rec->device.bandwidth_verified = rec->device.flops_verified = -1;
    rec->seed = seed;
    fill_case(c, r, rec);
    rec->nstages = c->nlaunches < REC_MAX_STAGES ? c->nlaunches : REC_MAX_STAGES;
    for (int l = 0; l < rec->nstages; l++) {
        rec_stage *st = &rec->stages[l];
        const kc_dispatch *d = &c->launches[l].dispatch;
        snprintf(st->name, sizeof st->name, "%d", l);
        snprintf(st->function, sizeof st->function, "%s", c->launches[l].function ? c->launches[l].function : "");
        snprintf(st->source, sizeof st->source, "%s", rec->kernel.source);
        snprintf(st->sha256, sizeof st->sha256, "%s", rec->kcase.source_sha256);
        st->theirs = 1;
        memcpy(st->grid, d->size, sizeof st->grid);
        memcpy(st->tg, d->tg, sizeof st->tg);
        for (int k = 0; k < d->ntgmem; k++) st->tgmem_bytes += d->tgmem[k].bytes;
        st->repeat = 1;
    }
    rec->dispatches = c->nlaunches;
    rec->command_buffers = 1;
    rec->iterations = r->nsamples;
    snprintf(rec->timing_source, sizeof rec->timing_source, "gpu");
    snprintf(rec->sampling, sizeof rec->sampling, "iters");
    snprintf(rec->stop, sizeof rec->stop, "iters");
    rec->noise = -1;
    rec->timing.n = r->nsamples;
    if (r->nsamples && !(rec->timing.samples = malloc((size_t)r->nsamples * sizeof(double)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (r->nsamples) memcpy(rec->timing.samples, r->samples, (size_t)r->nsamples * sizeof(double));
    stats_compute(&rec->timing);
    fill_checks(r, rec);
    rec->determinism_runs = r->nsamples;
    rec->bitwise_identical = r->deterministic;
    rec->status = r->pass ? RUN_PASS : RUN_FAIL;
    snprintf(rec->error, sizeof rec->error, "%.500s", r->fault);
    if (rec->device.emulated) runner_note_compile(rec);
    return 0;
}
