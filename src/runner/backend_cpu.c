/* backend_cpu.c — the `cpu` backend: times the bf16-parity CPU reference as if it
 * were the kernel.
 *
 * This lets every op run end to end on any machine; its timings measure our C
 * reference on the host CPU (multi-threaded), not a GPU, and are labelled so.  Its
 * output is the bf16-parity reference, so only the f64 check (and a fixture's) says
 * anything about it; parity is reported as "self, not a check". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "runner/backend.h"
#include "runner/check.h"
#include "runner/host.h"
#include "runner/runner.h"

typedef struct cpu_state {
    double *out[OP_MAX_BUFS];
} cpu_state;

static void cpu_release_case(backend *b) {
    cpu_state *s = b->state;
    for (int i = 0; i < OP_MAX_BUFS; i++) {
        free(s->out[i]);
        s->out[i] = NULL;
    }
}

static int cpu_prepare(backend *b, op_case *c, const run_opts *o, char *err, size_t errlen) {
    cpu_state *s = b->state;
    cpu_release_case(b);
    for (int i = 0; i < c->op->nbufs; i++) {
        buf_role r = c->op->bufs[i].role;
        if (r != BUF_OUT && r != BUF_INOUT) continue;
        if (tensor_numel(c->t[i]) == 0) continue; /* unused at this shape */
        s->out[i] = host_alloc_large(sizeof(double) * (size_t)tensor_numel(c->t[i]));
        if (!s->out[i]) {
            snprintf(err, errlen, "out of memory for the %s reference output %s", c->op->name, c->op->bufs[i].name);
            return -1;
        }
    }
    return 0;
}

static int cpu_run_once(backend *b, op_case *c, backend_timing *t, char *err, size_t errlen) {
    cpu_state *s = b->state;
    for (int i = 0; i < c->op->nbufs; i++)
        if (c->op->bufs[i].role == BUF_OUT) poison_tensor(c->t[i]);
    double t0 = clock_now_us();
    if (c->op->reference(c, REF_PARITY, s->out) != 0) {
        snprintf(err, errlen, "%s: the CPU reference failed", c->op->name);
        return -1;
    }
    for (int i = 0; i < c->op->nbufs; i++) {
        if (!s->out[i]) continue;
        int64_t n = tensor_numel(c->t[i]);
        for (int64_t j = 0; j < n; j++) tensor_set(c->t[i], j, s->out[i][j]);
    }
    double t1 = clock_now_us();
    t->wall_us = t1 - t0;
    t->gpu_us = -1;
    t->nstages = 1;
    t->stage_us[0] = t->wall_us;
    return 0;
}

static void cpu_describe(backend *b, op_case *c, int s, op_launch *l) {
    memset(l, 0, sizeof *l);
    l->stage = "reference";
    l->function = "bf16-parity CPU reference";
    l->params_index = -1;
}

static void cpu_destroy(backend *b) {
    cpu_release_case(b);
    free(b->state);
    free(b);
}

backend *backend_cpu_open(char *err, size_t errlen) {
    backend *b = calloc(1, sizeof *b);
    cpu_state *s = calloc(1, sizeof *s);
    if (!b || !s) {
        free(b);
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->desc = backend_desc_of(BACKEND_CPU);
    host_cpu_name(b->device_name, sizeof b->device_name);
    b->gpu_cores = -1;
    b->self_references = CHECK_PARITY;
    b->prepare = cpu_prepare;
    b->run_once = cpu_run_once;
    b->describe = cpu_describe;
    b->release_case = cpu_release_case;
    b->destroy = cpu_destroy;
    b->state = s;
    return b;
}
