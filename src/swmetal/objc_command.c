/* objc_command.c — command queue, command buffer and compute encoder of the software
 * Metal device.
 *
 * The encoder snapshots its state (pipeline, buffers, setBytes copies, threadgroup
 * memory lengths, geometry) into a command per dispatch, retaining what it uses.
 * `commit` hands the command buffer to its queue's thread, which runs the commands
 * in order on the executor's worker pool and returns at once, as on a GPU;
 * `waitUntilCompleted` waits.  Resources are released when the buffer completes.
 * The first failing dispatch (fault, limit, check diagnosis) ends the command buffer
 * with status Error and an NSError carrying the message.
 *
 * An encoder made from an MTLComputePassDescriptor whose sample buffer attachments
 * ask for timestamps (objc_counters.c) queues a sample command before its first
 * dispatch and one at endEncoding: the queue thread takes the timestamp when it
 * reaches the command, so each pass's samples bracket exactly its dispatches, on the
 * same clock as GPUStartTime/GPUEndTime, which span the first command's start to the
 * last one's end. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swmetal/exec.h"
#include "swmetal/objc_metal.h"
#include "swmetal/swmetal.h"

#define SW_CB_ERROR_DOMAIN "MTLCommandBufferErrorDomain"
#define MTLCommandBufferErrorInternal 1
#define MTLCommandBufferErrorInvalidResource 9
/* The most setBytes:length:atIndex: takes, as Metal (4 KiB). */
#define SW_SET_BYTES_MAX 4096

static Class queue_class, cb_class, encoder_class;

static _Atomic uint64_t dispatches_executed, command_buffers_executed;

uint64_t swmtl_dispatches_executed(void) { return atomic_load(&dispatches_executed); }
uint64_t swmtl_command_buffers_executed(void) { return atomic_load(&command_buffers_executed); }

/* A dispatch, or (sample_buffer set) a timestamp sample taken at a pass boundary. */
typedef struct sw_cmd {
    struct sw_cmd *next;
    id sample_buffer;                        /* retained; nil for a dispatch */
    NSUInteger sample_index;
    id pipeline;                             /* retained */
    id buffers[SW_MAX_BUFFERS];              /* retained */
    size_t offsets[SW_MAX_BUFFERS];
    sw_guarded bytes[SW_MAX_BUFFERS];        /* setBytes snapshots */
    size_t tg_len[SW_MAX_TG_PARAMS];
    uint32_t groups[3], tg[3], grid_threads[3];
} sw_cmd;

/* The queue thread's state lives apart from the queue object: the queue may be
 * deallocated on that very thread (its last command buffer released there). */
typedef struct sw_queue_worker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct sw_mtl_cb *head, *tail;
    int stop;
    int detached;                            /* the thread frees this struct */
} sw_queue_worker;

typedef struct sw_mtl_queue {
    sw_obj base;
    id device;                               /* retained */
    sw_queue_worker *worker;
} sw_mtl_queue;

typedef struct sw_mtl_cb {
    sw_obj base;
    id queue;                                /* retained */
    struct sw_mtl_cb *qnext;
    sw_cmd *cmds, *last;
    char *encode_error;                      /* first misuse found while encoding */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int status;
    id error;
    double start, end;
    char *diags[SW_DIAG_KEEP];
    int ndiags;
    uint64_t total_diags;
    dev_finding *findings;                   /* of the dispatch that failed */
    int nfindings;
} sw_mtl_cb;

/* The device whose queue made the command buffer: its settings apply. */
static id cb_device(const sw_mtl_cb *cb) { return ((sw_mtl_queue *)cb->queue)->device; }

typedef struct sw_mtl_encoder {
    sw_obj base;
    id cb;                                   /* retained */
    id pipeline;                             /* retained */
    id buffers[SW_MAX_BUFFERS];              /* retained */
    size_t offsets[SW_MAX_BUFFERS];
    void *bytes[SW_MAX_BUFFERS];             /* malloc'd copies */
    size_t bytes_len[SW_MAX_BUFFERS];
    size_t tg_len[SW_MAX_TG_PARAMS];
    int ended;
    /* end-of-encoder samples of a compute pass, queued at endEncoding */
    int nend_samples;
    id end_sample_buffer[SW_PASS_SAMPLE_ATTACHMENTS]; /* retained */
    NSUInteger end_sample_index[SW_PASS_SAMPLE_ATTACHMENTS];
} sw_mtl_encoder;

/* ---- commands ---- */

static void cmd_free(sw_cmd *c) {
    sw_release(c->sample_buffer);
    sw_release(c->pipeline);
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        sw_release(c->buffers[i]);
        sw_guarded_free(&c->bytes[i]);
    }
    free(c);
}

static void cb_free_cmds(sw_mtl_cb *cb) {
    while (cb->cmds) {
        sw_cmd *c = cb->cmds;
        cb->cmds = c->next;
        cmd_free(c);
    }
    cb->last = NULL;
}

static void cb_encode_error(sw_mtl_cb *cb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cb_encode_error(sw_mtl_cb *cb, const char *fmt, ...) {
    if (cb->encode_error) return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cb->encode_error = strdup(msg);
}

static void bind_buffer(sw_exec_binding *b, sw_guarded *mem, size_t offset, int is_bytes) {
    b->mem = mem;
    b->ptr = mem->data + offset;
    b->data = mem->data;
    b->length = mem->length;
    b->map_lo = mem->map;
    b->map_hi = mem->map + mem->map_size;
    b->is_bytes = is_bytes;
}

static void cb_add_diags(sw_mtl_cb *cb, sw_dispatch_result *res) {
    for (int i = 0; i < res->ndiags && cb->ndiags < SW_DIAG_KEEP; i++) cb->diags[cb->ndiags++] = strdup(res->diags[i]);
    cb->total_diags += res->total_diags;
    if (res->nfindings && !cb->findings) { /* taken over: the first failing dispatch ends the buffer */
        cb->findings = res->findings;
        cb->nfindings = res->nfindings;
        res->findings = NULL;
        res->nfindings = 0;
    }
}

/* Runs one command; *t0 and *t1 = when it started and ended.  Returns 0, or -1 with
 * *msg (malloc'd). */
static int cmd_run(sw_mtl_cb *cb, sw_cmd *c, int instr, swmtl_counts *counts, const swmtl_schedule *sched,
                   double timeout_s, double *t0, double *t1, char **msg) {
    if (c->sample_buffer) {
        *t0 = *t1 = sw_exec_now();
        sw_sample_buffer_store(c->sample_buffer, c->sample_index, sw_gpu_timestamp(*t0));
        return 0;
    }
    sw_dispatch d;
    memset(&d, 0, sizeof d);
    d.kernel = sw_mtl_pipeline_name(c->pipeline);
    char *err = NULL;
    int got = 0;
    if (sw_mtl_pipeline_entry(c->pipeline, instr, &d.entry, &got, &err) != 0) {
        *msg = err ? err : strdup("cannot build the check variant of the kernel");
        return -1;
    }
    if (instr == SW_INSTR_COUNT && got != SW_INSTR_COUNT) {
        *msg = strdup("this kernel cannot be counted: it is not compiled from MSL (a native library)");
        return -1;
    }
    if (got == SW_INSTR_COUNT) {
        d.counts = counts;
        d.count_table = sw_mtl_pipeline_count_table(c->pipeline);
    }
    d.instrumented = (got & SW_INSTR_TSAN) != 0;
    d.numerics = (got & SW_INSTR_NUMERICS) != 0;
    d.sync_free = sw_mtl_pipeline_sync_free(c->pipeline);
    d.atomic_free = sw_mtl_pipeline_atomic_free(c->pipeline);
    if (!got) {
        d.range = sw_mtl_pipeline_range(c->pipeline);
        d.lanes = sw_mtl_pipeline_lanes(c->pipeline);
    }
    memcpy(d.groups, c->groups, sizeof d.groups);
    memcpy(d.tg_size, c->tg, sizeof d.tg_size);
    memcpy(d.grid_threads, c->grid_threads, sizeof d.grid_threads);
    memcpy(d.tg_len, c->tg_len, sizeof d.tg_len);
    d.schedule = *sched;
    if (got == SW_INSTR_COUNT) {
        /* The counted run is in order whatever the device's schedule: which lane of a
         * simdgroup meets another at a simdgroup-matrix flush first changes a few of
         * the prelude's own instructions (count.h), never the kernel's work. */
        d.schedule.fibers = (swmtl_order){SWMTL_ORDER_INORDER, 0};
        d.schedule.groups = (swmtl_order){SWMTL_ORDER_INORDER, 0};
    }
    d.max_threads = sw_mtl_pipeline_max_threads(c->pipeline);
    d.timeout_s = timeout_s;
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        if (c->buffers[i]) bind_buffer(&d.buf[i], &((sw_mtl_buffer *)c->buffers[i])->mem, c->offsets[i], 0);
        if (c->bytes[i].map) bind_buffer(&d.buf[i], &c->bytes[i], 0, 1);
    }
    sw_dispatch_result res;
    int rc = sw_exec_dispatch(&d, &res);
    atomic_fetch_add(&dispatches_executed, 1);
    *t0 = res.start_s;
    *t1 = res.end_s;
    cb_add_diags(cb, &res);
    if (rc != 0) *msg = strdup(res.error ? res.error : "dispatch failed");
    sw_dispatch_result_free(&res);
    return rc;
}

static void cb_set_status(sw_mtl_cb *cb, int status) {
    pthread_mutex_lock(&cb->mu);
    cb->status = status;
    pthread_cond_broadcast(&cb->cv);
    pthread_mutex_unlock(&cb->mu);
}

static void cb_execute(sw_mtl_cb *cb) {
    cb_set_status(cb, MTLCommandBufferStatusScheduled);
    cb->start = cb->end = sw_exec_now();
    id device = cb_device(cb);
    int checks = sw_mtl_device_checks(device);
    int instr = checks == SW_CHECKS_FULL ? SW_INSTR_FULL : checks == SW_CHECKS_NUMERICS ? SW_INSTR_NUMERICS : 0;
    /* counting runs the counting variant alone, whatever the checks: its counts do
     * not depend on them (the checks' variants run the timed work) */
    swmtl_counts *counts = sw_mtl_device_counts(device);
    if (counts) instr = SW_INSTR_COUNT;
    swmtl_schedule sched = sw_mtl_device_schedule(device);
    char *msg = NULL;
    long code = MTLCommandBufferErrorInternal;
    if (cb->encode_error) {
        msg = strdup(cb->encode_error);
        code = MTLCommandBufferErrorInvalidResource;
    }
    for (sw_cmd *c = cb->cmds; c && !msg; c = c->next) {
        double t0, t1;
        cmd_run(cb, c, instr, counts, &sched, sw_mtl_device_timeout(device), &t0, &t1, &msg);
        if (c == cb->cmds) cb->start = t0;
        cb->end = t1;
    }
    atomic_fetch_add(&command_buffers_executed, 1);
    /* Resources are held only until completion, as on Metal. */
    cb_free_cmds(cb);
    if (msg) {
        cb->error = sw_error_new(SW_CB_ERROR_DOMAIN, code, msg);
        free(msg);
    }
    cb_set_status(cb, cb->error ? MTLCommandBufferStatusError : MTLCommandBufferStatusCompleted);
}

/* ---- queue ---- */

static void *queue_main(void *arg) {
    sw_queue_worker *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (!w->head && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        sw_mtl_cb *cb = w->head;
        if (!cb) { /* stopped and drained */
            int detached = w->detached;
            pthread_mutex_unlock(&w->mu);
            if (detached) {
                pthread_mutex_destroy(&w->mu);
                pthread_cond_destroy(&w->cv);
                free(w);
            }
            return NULL;
        }
        w->head = cb->qnext;
        if (!w->head) w->tail = NULL;
        pthread_mutex_unlock(&w->mu);
        cb_execute(cb);
        sw_release((id)cb); /* the queue's reference, taken at commit */
    }
}

id sw_mtl_queue_new(id device) {
    sw_mtl_queue *q = (sw_mtl_queue *)sw_obj_new(queue_class);
    if (!q) return nil;
    sw_queue_worker *w = calloc(1, sizeof *w);
    if (!w) {
        sw_obj_free((id)q);
        return nil;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->th, NULL, queue_main, w) != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        sw_obj_free((id)q);
        return nil;
    }
    q->worker = w;
    q->device = sw_retain(device);
    return (id)q;
}

static void queue_dealloc(id self, SEL cmd) {
    sw_mtl_queue *q = (sw_mtl_queue *)self;
    sw_queue_worker *w = q->worker;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    int on_queue_thread = pthread_equal(pthread_self(), w->th);
    if (on_queue_thread) w->detached = 1;
    pthread_mutex_unlock(&w->mu);
    if (on_queue_thread) {
        pthread_detach(w->th);
    } else {
        pthread_join(w->th, NULL);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
    }
    sw_release(q->device);
    sw_obj_free(self);
}

static id queue_command_buffer(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)sw_obj_new(cb_class);
    if (!cb) return nil;
    pthread_mutex_init(&cb->mu, NULL);
    pthread_cond_init(&cb->cv, NULL);
    cb->queue = sw_retain(self);
    cb->status = MTLCommandBufferStatusNotEnqueued;
    return sw_autorelease((id)cb);
}

static id queue_device(id self, SEL cmd) { return ((sw_mtl_queue *)self)->device; }

static void queue_methods(Class cls) {
    sw_method_add(cls, "commandBuffer", SW_IMP(queue_command_buffer), "@@:");
    sw_method_add(cls, "commandBufferWithUnretainedReferences", SW_IMP(queue_command_buffer), "@@:");
    sw_method_add(cls, "device", SW_IMP(queue_device), "@@:");
    sw_method_add(cls, "dealloc", SW_IMP(queue_dealloc), "v@:");
}

/* ---- command buffer ---- */

static id cb_compute_encoder(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    if (cb->status >= MTLCommandBufferStatusCommitted) {
        cb_encode_error(cb, "computeCommandEncoder on a committed command buffer");
        return nil;
    }
    sw_mtl_encoder *e = (sw_mtl_encoder *)sw_obj_new(encoder_class);
    if (!e) return nil;
    e->cb = sw_retain(self);
    return sw_autorelease((id)e);
}

static void cb_append(sw_mtl_cb *cb, sw_cmd *c) {
    if (cb->last)
        cb->last->next = c;
    else
        cb->cmds = c;
    cb->last = c;
}

/* Queues a timestamp sample into slot index of sample_buffer. */
static int cb_append_sample(sw_mtl_cb *cb, id sample_buffer, NSUInteger index) {
    sw_cmd *c = calloc(1, sizeof *c);
    if (!c) {
        cb_encode_error(cb, "out of memory encoding a counter sample");
        return -1;
    }
    c->sample_buffer = sw_retain(sample_buffer);
    c->sample_index = index;
    cb_append(cb, c);
    return 0;
}

/* A compute encoder for a pass: its sample buffer attachments' start-of-encoder
 * samples are queued now, the end-of-encoder ones at endEncoding.  An index past the
 * sample buffer fails the command buffer, as Metal refuses such a pass. */
static id cb_compute_encoder_with_descriptor(id self, SEL cmd, id pass) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    if (!pass || !sw_is_compute_pass(pass)) {
        cb_encode_error(cb, "computeCommandEncoderWithDescriptor: needs an MTLComputePassDescriptor");
        return nil;
    }
    id enc = cb_compute_encoder(self, cmd);
    if (!enc) return nil;
    sw_mtl_encoder *e = (sw_mtl_encoder *)enc;
    NSUInteger dont = sw_counter_dont_sample();
    for (int i = 0; i < SW_PASS_SAMPLE_ATTACHMENTS; i++) {
        id sb;
        NSUInteger start, end;
        if (!sw_pass_attachment(pass, i, &sb, &start, &end)) continue;
        if (!sw_is_sample_buffer(sb)) {
            cb_encode_error(cb, "sampleBufferAttachments[%d].sampleBuffer is not a counter sample buffer", i);
            continue;
        }
        NSUInteger count = sw_sample_buffer_count(sb);
        if ((start != dont && start >= count) || (end != dont && end >= count)) {
            cb_encode_error(cb, "sampleBufferAttachments[%d]: sample index %lu is past the sample buffer (%lu samples)",
                            i, (unsigned long)(start != dont && start >= count ? start : end), (unsigned long)count);
            continue;
        }
        if (start != dont) cb_append_sample(cb, sb, start);
        if (end != dont) {
            e->end_sample_buffer[e->nend_samples] = sw_retain(sb);
            e->end_sample_index[e->nend_samples++] = end;
        }
    }
    return enc;
}

static void cb_enqueue(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    pthread_mutex_lock(&cb->mu);
    if (cb->status == MTLCommandBufferStatusNotEnqueued) cb->status = MTLCommandBufferStatusEnqueued;
    pthread_mutex_unlock(&cb->mu);
}

static void cb_commit(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    pthread_mutex_lock(&cb->mu);
    if (cb->status >= MTLCommandBufferStatusCommitted) {
        pthread_mutex_unlock(&cb->mu);
        fprintf(stderr, "gdnbench: command buffer %p committed twice; ignored\n", (void *)self);
        return;
    }
    cb->status = MTLCommandBufferStatusCommitted;
    pthread_mutex_unlock(&cb->mu);
    sw_queue_worker *w = ((sw_mtl_queue *)cb->queue)->worker;
    sw_retain(self);
    pthread_mutex_lock(&w->mu);
    cb->qnext = NULL;
    if (w->tail)
        w->tail->qnext = cb;
    else
        w->head = cb;
    w->tail = cb;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void cb_wait_for(sw_mtl_cb *cb, int status) {
    pthread_mutex_lock(&cb->mu);
    /* An uncommitted buffer would never complete: return rather than hang. */
    if (cb->status >= MTLCommandBufferStatusCommitted)
        while (cb->status < status) pthread_cond_wait(&cb->cv, &cb->mu);
    pthread_mutex_unlock(&cb->mu);
}

static void cb_wait_completed(id self, SEL cmd) {
    cb_wait_for((sw_mtl_cb *)self, MTLCommandBufferStatusCompleted);
}

static void cb_wait_scheduled(id self, SEL cmd) {
    cb_wait_for((sw_mtl_cb *)self, MTLCommandBufferStatusScheduled);
}

static NSUInteger cb_status(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    pthread_mutex_lock(&cb->mu);
    int s = cb->status;
    pthread_mutex_unlock(&cb->mu);
    return (NSUInteger)s;
}

static int cb_done(sw_mtl_cb *cb) { return cb_status((id)cb, NULL) >= MTLCommandBufferStatusCompleted; }

static id cb_error(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    return cb_done(cb) ? cb->error : nil;
}

/* CFTimeInterval: seconds on the executor's monotonic clock (0 until completed). */
static double cb_gpu_start(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    return cb_done(cb) ? cb->start : 0.0;
}

static double cb_gpu_end(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    return cb_done(cb) ? cb->end : 0.0;
}

static void cb_dealloc(id self, SEL cmd) {
    sw_mtl_cb *cb = (sw_mtl_cb *)self;
    cb_free_cmds(cb);
    free(cb->encode_error);
    for (int i = 0; i < cb->ndiags; i++) free(cb->diags[i]);
    free(cb->findings);
    sw_release(cb->error);
    pthread_mutex_destroy(&cb->mu);
    pthread_cond_destroy(&cb->cv);
    id queue = cb->queue;
    sw_obj_free(self);
    sw_release(queue); /* last: may end the queue (and this thread's queue loop) */
}

/* Extension selectors (swmetal.h): the checks' findings and diagnostics of a
 * completed command buffer. */
static const dev_finding *cb_ext_findings(id self, SEL cmd, int *n) { return swmtl_command_buffer_findings(self, n); }
static uint64_t cb_ext_diagnostic_count(id self, SEL cmd, int *kept) {
    return swmtl_command_buffer_diagnostic_count(self, kept);
}
static const char *cb_ext_diagnostic(id self, SEL cmd, int i) { return swmtl_command_buffer_diagnostic(self, i); }

static void cb_methods(Class cls) {
    sw_method_add(cls, "gdn_findings:", SW_IMP(cb_ext_findings), "^v@:^i");
    sw_method_add(cls, "gdn_diagnosticCount:", SW_IMP(cb_ext_diagnostic_count), "Q@:^i");
    sw_method_add(cls, "gdn_diagnosticAtIndex:", SW_IMP(cb_ext_diagnostic), "*@:i");
    sw_method_add(cls, "computeCommandEncoder", SW_IMP(cb_compute_encoder), "@@:");
    sw_method_add(cls, "computeCommandEncoderWithDescriptor:", SW_IMP(cb_compute_encoder_with_descriptor), "@@:@");
    sw_method_add(cls, "enqueue", SW_IMP(cb_enqueue), "v@:");
    sw_method_add(cls, "commit", SW_IMP(cb_commit), "v@:");
    sw_method_add(cls, "waitUntilCompleted", SW_IMP(cb_wait_completed), "v@:");
    sw_method_add(cls, "waitUntilScheduled", SW_IMP(cb_wait_scheduled), "v@:");
    sw_method_add(cls, "status", SW_IMP(cb_status), "Q@:");
    sw_method_add(cls, "error", SW_IMP(cb_error), "@@:");
    sw_method_add(cls, "GPUStartTime", SW_IMP(cb_gpu_start), "d@:");
    sw_method_add(cls, "GPUEndTime", SW_IMP(cb_gpu_end), "d@:");
    sw_method_add(cls, "dealloc", SW_IMP(cb_dealloc), "v@:");
}

uint64_t swmtl_command_buffer_diagnostic_count(id command_buffer, int *kept) {
    sw_mtl_cb *cb = (sw_mtl_cb *)command_buffer;
    if (!cb || !cb_done(cb)) {
        if (kept) *kept = 0;
        return 0;
    }
    if (kept) *kept = cb->ndiags;
    return cb->total_diags;
}

const char *swmtl_command_buffer_diagnostic(id command_buffer, int i) {
    sw_mtl_cb *cb = (sw_mtl_cb *)command_buffer;
    if (!cb || !cb_done(cb) || i < 0 || i >= cb->ndiags) return NULL;
    return cb->diags[i];
}

const dev_finding *swmtl_command_buffer_findings(id command_buffer, int *n) {
    sw_mtl_cb *cb = (sw_mtl_cb *)command_buffer;
    *n = 0;
    if (!cb || !sw_is_kind(command_buffer, cb_class) || !cb_done(cb)) return NULL;
    *n = cb->nfindings;
    return cb->findings;
}

/* ---- compute encoder ---- */

static sw_mtl_cb *enc_cb(id self) { return (sw_mtl_cb *)((sw_mtl_encoder *)self)->cb; }

static int enc_index_ok(id self, const char *what, NSUInteger index, int limit) {
    if (index < (NSUInteger)limit) return 1;
    cb_encode_error(enc_cb(self), "%s index %lu is out of range (0..%d)", what, (unsigned long)index, limit - 1);
    return 0;
}

static void enc_set_pipeline(id self, SEL cmd, id pipeline) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    if (pipeline && !sw_is_kind(pipeline, sw_mtl_pipeline_class())) {
        cb_encode_error(enc_cb(self), "setComputePipelineState: got an object that is not a pipeline state");
        return;
    }
    sw_retain(pipeline);
    sw_release(e->pipeline);
    e->pipeline = pipeline;
}

static void enc_clear_bytes(sw_mtl_encoder *e, NSUInteger index) {
    free(e->bytes[index]);
    e->bytes[index] = NULL;
    e->bytes_len[index] = 0;
}

static void enc_set_buffer(id self, SEL cmd, id buffer, NSUInteger offset, NSUInteger index) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    if (!enc_index_ok(self, "buffer", index, SW_MAX_BUFFERS)) return;
    if (buffer && !sw_is_kind(buffer, sw_mtl_buffer_class())) {
        cb_encode_error(enc_cb(self), "setBuffer:offset:atIndex: %lu got an object that is not a buffer",
                        (unsigned long)index);
        return;
    }
    if (buffer && offset > ((sw_mtl_buffer *)buffer)->mem.length) {
        cb_encode_error(enc_cb(self), "setBuffer:offset:atIndex: offset %lu is past the buffer's end (length %zu)",
                        (unsigned long)offset, ((sw_mtl_buffer *)buffer)->mem.length);
        return;
    }
    sw_retain(buffer);
    sw_release(e->buffers[index]);
    e->buffers[index] = buffer;
    e->offsets[index] = offset;
    enc_clear_bytes(e, index);
}

static void enc_set_buffer_offset(id self, SEL cmd, NSUInteger offset, NSUInteger index) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    if (!enc_index_ok(self, "buffer", index, SW_MAX_BUFFERS)) return;
    enc_set_buffer(self, cmd, e->buffers[index], offset, index);
}

static void enc_set_bytes(id self, SEL cmd, const void *bytes, NSUInteger length, NSUInteger index) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    if (!enc_index_ok(self, "buffer", index, SW_MAX_BUFFERS)) return;
    if (!bytes || length == 0) {
        cb_encode_error(enc_cb(self), "setBytes:length:atIndex: %lu needs data and a length > 0",
                        (unsigned long)index);
        return;
    }
    /* Metal's limit ("data smaller than 4 KB"; its API validation refuses more): a
     * kernel that works here must not need more on a GPU. */
    if (length > SW_SET_BYTES_MAX) {
        cb_encode_error(enc_cb(self), "setBytes:length:%lu atIndex:%lu: Metal takes at most %d bytes this way; bind "
                        "a buffer (setBuffer:offset:atIndex:) instead", (unsigned long)length, (unsigned long)index,
                        SW_SET_BYTES_MAX);
        return;
    }
    void *copy = malloc(length);
    if (!copy) {
        cb_encode_error(enc_cb(self), "setBytes:length:atIndex: out of memory for %lu bytes", (unsigned long)length);
        return;
    }
    memcpy(copy, bytes, length);
    sw_release(e->buffers[index]);
    e->buffers[index] = nil;
    enc_clear_bytes(e, index);
    e->bytes[index] = copy;
    e->bytes_len[index] = length;
}

static void enc_set_tg_memory(id self, SEL cmd, NSUInteger length, NSUInteger index) {
    if (!enc_index_ok(self, "threadgroup memory", index, SW_MAX_TG_PARAMS)) return;
    if (length % 16 != 0) { /* Metal's API validation refuses it; a GPU without it misbehaves */
        cb_encode_error(enc_cb(self),
                        "setThreadgroupMemoryLength:%lu atIndex:%lu: the length must be a multiple of 16 bytes; "
                        "round it up to %lu",
                        (unsigned long)length, (unsigned long)index, (unsigned long)((length + 15) / 16 * 16));
        return;
    }
    ((sw_mtl_encoder *)self)->tg_len[index] = length;
}

static void enc_dispatch(id self, const uint32_t groups[3], const uint32_t tg[3], const uint32_t threads[3]) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    sw_mtl_cb *cb = enc_cb(self);
    if (e->ended) {
        cb_encode_error(cb, "dispatch after endEncoding");
        return;
    }
    if (!e->pipeline) {
        cb_encode_error(cb, "dispatch without setComputePipelineState:");
        return;
    }
    sw_cmd *c = calloc(1, sizeof *c);
    if (!c) {
        cb_encode_error(cb, "out of memory encoding a dispatch");
        return;
    }
    c->pipeline = sw_retain(e->pipeline);
    int mode = sw_mtl_device_checks(cb_device(cb));
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        c->buffers[i] = sw_retain(e->buffers[i]);
        c->offsets[i] = e->offsets[i];
        if (e->bytes[i]) {
            if (sw_guarded_alloc(&c->bytes[i], e->bytes_len[i], mode) != 0) {
                cb_encode_error(cb, "out of memory for setBytes data");
                cmd_free(c);
                return;
            }
            memcpy(c->bytes[i].data, e->bytes[i], e->bytes_len[i]);
        }
    }
    memcpy(c->tg_len, e->tg_len, sizeof c->tg_len);
    memcpy(c->groups, groups, sizeof c->groups);
    memcpy(c->tg, tg, sizeof c->tg);
    if (threads) memcpy(c->grid_threads, threads, sizeof c->grid_threads);
    cb_append(cb, c);
}

static int size_to_u32(id self, MTLSize s, uint32_t out[3], const char *what) {
    NSUInteger v[3] = {s.width, s.height, s.depth};
    for (int i = 0; i < 3; i++) {
        if (v[i] > UINT32_MAX) {
            cb_encode_error(enc_cb(self), "%s dimension %d is %lu, larger than 2^32-1", what, i, (unsigned long)v[i]);
            return -1;
        }
        out[i] = (uint32_t)v[i];
    }
    return 0;
}

static void enc_dispatch_threadgroups(id self, SEL cmd, MTLSize groups, MTLSize tg) {
    uint32_t g[3], t[3];
    if (size_to_u32(self, groups, g, "threadgroups") || size_to_u32(self, tg, t, "threadsPerThreadgroup")) return;
    enc_dispatch(self, g, t, NULL);
}

static void enc_dispatch_threads(id self, SEL cmd, MTLSize threads, MTLSize tg) {
    uint32_t n[3], t[3], g[3];
    if (size_to_u32(self, threads, n, "threads") || size_to_u32(self, tg, t, "threadsPerThreadgroup")) return;
    for (int i = 0; i < 3; i++) {
        if (t[i] == 0) {
            cb_encode_error(enc_cb(self), "dispatchThreads: threadsPerThreadgroup dimension %d is 0", i);
            return;
        }
        g[i] = (uint32_t)(((uint64_t)n[i] + t[i] - 1) / t[i]);
    }
    enc_dispatch(self, g, t, n);
}

/* Commands run one after another: every barrier Metal offers already holds. */
static void enc_memory_barrier(id self, SEL cmd, NSUInteger scope) {}

static void enc_end(id self, SEL cmd) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    if (e->ended) return;
    e->ended = 1;
    for (int i = 0; i < e->nend_samples; i++) cb_append_sample(enc_cb(self), e->end_sample_buffer[i], e->end_sample_index[i]);
}

static void enc_dealloc(id self, SEL cmd) {
    sw_mtl_encoder *e = (sw_mtl_encoder *)self;
    sw_release(e->pipeline);
    for (int i = 0; i < SW_MAX_BUFFERS; i++) {
        sw_release(e->buffers[i]);
        free(e->bytes[i]);
    }
    for (int i = 0; i < e->nend_samples; i++) sw_release(e->end_sample_buffer[i]);
    sw_release(e->cb);
    sw_obj_free(self);
}

static void encoder_methods(Class cls) {
    sw_method_add(cls, "setComputePipelineState:", SW_IMP(enc_set_pipeline), "v@:@");
    sw_method_add(cls, "setBuffer:offset:atIndex:", SW_IMP(enc_set_buffer), "v@:@QQ");
    sw_method_add(cls, "setBufferOffset:atIndex:", SW_IMP(enc_set_buffer_offset), "v@:QQ");
    sw_method_add(cls, "setBytes:length:atIndex:", SW_IMP(enc_set_bytes), "v@:^vQQ");
    sw_method_add(cls, "setThreadgroupMemoryLength:atIndex:", SW_IMP(enc_set_tg_memory), "v@:QQ");
    sw_method_add(cls, "dispatchThreadgroups:threadsPerThreadgroup:", SW_IMP(enc_dispatch_threadgroups),
                  "v@:{MTLSize=QQQ}{MTLSize=QQQ}");
    sw_method_add(cls, "dispatchThreads:threadsPerThreadgroup:", SW_IMP(enc_dispatch_threads),
                  "v@:{MTLSize=QQQ}{MTLSize=QQQ}");
    sw_method_add(cls, "memoryBarrierWithScope:", SW_IMP(enc_memory_barrier), "v@:Q");
    sw_method_add(cls, "endEncoding", SW_IMP(enc_end), "v@:");
    sw_method_add(cls, "dealloc", SW_IMP(enc_dealloc), "v@:");
}

void sw_objc_register_commands(void) {
    Class root = sw_root_class();
    queue_class = sw_class_register("SWMTLCommandQueue", root, sizeof(sw_mtl_queue), queue_methods);
    cb_class = sw_class_register("SWMTLCommandBuffer", root, sizeof(sw_mtl_cb), cb_methods);
    encoder_class = sw_class_register("SWMTLComputeCommandEncoder", root, sizeof(sw_mtl_encoder), encoder_methods);
}
