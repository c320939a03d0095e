/* test_kcase_device.c — a kernel case on `--backend metal` says of its device what an
 * op run says (the record's device and environment: chip name, cores, peaks from
 * core/chips.c, paravirtual and its warning, Metal GPU families, working set), and a
 * capture records the first timed iteration of its dispatch sequence.  Linux has no
 * Metal: the GPU here is the software device dressed as a Mac's (a runtime subclass
 * that answers name, supportsFamily:, recommendedMaxWorkingSetSize and
 * gdn_supportsGPUCapture as Metal.framework's device would), run as a backend of
 * kind metal, and MTLCaptureManager, MTLCaptureDescriptor and NSURL are fakes that
 * record what the host asked of them; `gdnbench kernel --capture`'s plan runs on that
 * GPU.  Where Metal.framework is loaded (a Mac) the fakes' names are taken and the
 * capture tests skip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/kernel_plan.h"
#include "core/chips.h"
#include "kcase/kcase.h"
#include "metal/mtl.h"
#include "runner/kcase_run.h"
#include "runner/runner.h"
#include "swmetal/objc_base.h"
#include "swmetal/swmetal.h"
#include "test.h"

/* ---- the software device dressed as a Mac's GPU ---- */

static char gpu_name[64];

static id gpu_name_m(id self, SEL cmd) { return sw_string_autoreleased(gpu_name); }
static BOOL gpu_supports_family(id self, SEL cmd, NSInteger family) { return family == 1007 || family == 5001; }
static uint64_t gpu_working_set(id self, SEL cmd) { return 8000000000ull; }
static BOOL gpu_capture_yes(id self, SEL cmd) { return YES; }

static void gpu_methods(Class cls) {
    sw_method_add(cls, "name", SW_IMP(gpu_name_m), "@@:");
    sw_method_add(cls, "supportsFamily:", SW_IMP(gpu_supports_family), "C@:q");
    sw_method_add(cls, "recommendedMaxWorkingSetSize", SW_IMP(gpu_working_set), "Q@:");
    sw_method_add(cls, "gdn_supportsGPUCapture", SW_IMP(gpu_capture_yes), "C@:");
}

/* A software device that calls itself `name` and answers as a GPU does: the device's
 * class swapped for a subclass that adds methods and no ivars (never instantiated
 * itself, so it registers no instance size of its own). */
static mtl_device *dressed_device(const char *name, char *err, size_t errlen) {
    static Class dressed;
    id dev = swmtl_create_system_default_device();
    if (!dev) return NULL;
    if (!dressed) dressed = sw_class_register("GDNTestMacGPU", object_getClass(dev), 0, gpu_methods);
    object_setClass(dev, dressed);
    snprintf(gpu_name, sizeof gpu_name, "%s", name);
    return mtl_device_new(dev, err, errlen);
}

/* ---- a two-launch case and a small op, each run once on its own dressed GPU ---- */

static const char seq_case[] =
    "{\"case\": 1, \"name\": \"scale twice\", \"source\": {\"text\": \"kernel void scale(device float *y [[buffer(0)]], "
    "uint i [[thread_position_in_grid]]) { y[i] = 2.0f * y[i] + 1.0f; }\"},\n"
    " \"dispatches\": [{\"function\": \"scale\", \"dispatch\": {\"grid\": [64], \"threadgroup\": [32]}},\n"
    "                {\"function\": \"scale\", \"dispatch\": {\"grid\": [64], \"threadgroup\": [32]}}],\n"
    " \"buffers\": {\"y\": {\"dtype\": \"float32\", \"shape\": [64], \"init\": {\"fill\": 1}}}}";

static void small_opts(run_opts *o) {
    memset(o, 0, sizeof *o);
    o->backend = "metal";
    o->seed = 3;
    o->warmup = 2;
    o->iters = 3;
}

/* The case on a dressed GPU called `name` into rec (capture: o's capture path). */
static int run_case_on(const char *name, const run_opts *o, run_record *rec, char *err, size_t errlen) {
    kc_case *c = kc_parse(seq_case, strlen(seq_case), "seq.json", ".", err, errlen);
    mtl_device *d = c ? dressed_device(name, err, errlen) : NULL;
    backend *b = d ? kc_backend_on_device(d, BACKEND_METAL, err, errlen) : NULL;
    op_case *oc = b ? kc_op_case_new(c, o->seed, 0, err, errlen) : NULL;
    int rc = oc ? runner_run_case(b, oc, o, rec) : -1;
    if (oc && rc != 0) snprintf(err, errlen, "%s", rec->error);
    if (b) b->release_case(b), b->destroy(b);
    op_case_free(oc);
    kc_free(c);
    return rc;
}

static int run_op_on(const char *name, run_record *rec, char *err, size_t errlen) {
    const op_desc *op = op_find("cumsum");
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; op && i < op->ndims; i++) dim[i] = op->dims[i].def;
    if (op) dim[op_dim_index(op, "T")] = 64, dim[op_dim_index(op, "H")] = 1;
    op_case *c = op ? op_case_new(op, dim, 3, err, errlen) : NULL;
    mtl_device *d = c ? dressed_device(name, err, errlen) : NULL;
    backend *b = d ? backend_metal_open(d, BACKEND_METAL, err, errlen) : NULL;
    run_opts o;
    small_opts(&o);
    int rc = b ? runner_run_case(b, c, &o, rec) : -1;
    if (b && rc != 0) snprintf(err, errlen, "%s", rec->error);
    if (b) b->release_case(b), b->destroy(b);
    op_case_free(c);
    return rc;
}

static int has_warning(const run_record *r, const char *text) {
    for (int i = 0; i < r->nwarnings; i++)
        if (strcmp(r->warnings[i], text) == 0) return 1;
    return 0;
}

/* The kernel case's device and environment are the op's, field by field. */
static void check_same_device(const run_record *k, const run_record *op) {
    CHECK(strcmp(k->device.name, op->device.name) == 0 && strcmp(k->device.backend, op->device.backend) == 0);
    CHECK_EQ_INT(k->device.emulated, op->device.emulated);
    CHECK_EQ_INT(k->device.paravirtual, op->device.paravirtual);
    CHECK_EQ_INT(k->device.gpu_cores, op->device.gpu_cores);
    CHECK(k->device.bandwidth_gbps == op->device.bandwidth_gbps && k->device.fp32_tflops == op->device.fp32_tflops &&
          k->device.fp16_tflops == op->device.fp16_tflops);
    CHECK_EQ_INT(k->device.bandwidth_verified, op->device.bandwidth_verified);
    CHECK_EQ_INT(k->device.flops_verified, op->device.flops_verified);
    const rec_machine *a = &k->machine, *b = &op->machine;
    CHECK(strcmp(a->gpu_name, b->gpu_name) == 0);
    CHECK_EQ_INT(a->gpu_cores, b->gpu_cores);
    CHECK_EQ_INT(a->nfamilies, b->nfamilies);
    for (int i = 0; i < a->nfamilies && i < b->nfamilies; i++) CHECK(strcmp(a->families[i], b->families[i]) == 0);
    CHECK_EQ_INT(a->working_set, b->working_set);
    CHECK_EQ_INT(a->paravirtual, b->paravirtual);
    CHECK_EQ_INT(has_warning(k, chip_paravirtual_warning()), has_warning(op, chip_paravirtual_warning()));
}

TEST(kcase_device_facts_on_a_gpu_are_an_ops) {
    char err[1024] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    static const char *const names[] = {"Apple M1", "Apple Paravirtual device"};
    for (int n = 0; n < 2; n++) {
        run_record k, op;
        memset(&k, 0, sizeof k);
        memset(&op, 0, sizeof op);
        run_opts o;
        small_opts(&o);
        int krc = run_case_on(names[n], &o, &k, err, sizeof err);
        CHECK_MSG(krc == 0, "%s: the case: %s", names[n], err);
        int orc = run_op_on(names[n], &op, err, sizeof err);
        CHECK_MSG(orc == 0, "%s: the op: %s", names[n], err);
        if (krc == 0 && orc == 0) {
            check_same_device(&k, &op);
            /* what that is: a GPU's facts, not the software device's nulls */
            CHECK(strcmp(k.device.name, names[n]) == 0 && strcmp(k.device.backend, "metal") == 0 && !k.device.emulated);
            CHECK(strcmp(k.machine.gpu_name, names[n]) == 0);
            CHECK_EQ_INT(k.machine.nfamilies, 2);
            CHECK(k.machine.nfamilies == 2 && strcmp(k.machine.families[0], "Apple7") == 0 &&
                  strcmp(k.machine.families[1], "Metal3") == 0);
            CHECK_EQ_INT(k.machine.working_set, 8000000000ll);
            CHECK_EQ_INT(k.device.paravirtual, n == 1);
            CHECK_EQ_INT(k.machine.paravirtual, n == 1);
            CHECK_EQ_INT(has_warning(&k, chip_paravirtual_warning()), n == 1);
            /* the chip table's peaks for a known chip (the core count unknown off a Mac:
             * the smallest M1's) */
            if (n == 0 && k.machine.gpu_cores <= 0) CHECK(k.device.bandwidth_gbps > 0 && k.device.gpu_cores == 7);
            if (n == 1) CHECK(k.device.bandwidth_gbps < 0);
        }
        run_record_free(&k);
        run_record_free(&op);
    }
}

/* ---- MTLCaptureManager, MTLCaptureDescriptor and NSURL as fakes ---- */

typedef struct fake_url {
    sw_obj base;
    char path[512];
} fake_url;

typedef struct fake_desc {
    sw_obj base;
    id object, url;
    NSInteger destination;
} fake_desc;

static struct {
    int refuse;                       /* startCaptureWithDescriptor: fails */
    int starts, stops;
    uint64_t start_dispatches, stop_dispatches;
    id object;
    NSInteger destination;
    char path[512];
} cap;

static Class url_class;

static id url_with_path(id self, SEL cmd, id path) {
    fake_url *u = (fake_url *)sw_obj_new(url_class);
    if (u) snprintf(u->path, sizeof u->path, "%s", sw_string_utf8(path));
    return sw_autorelease((id)u);
}
static void url_methods(Class cls) { sw_class_method_add(cls, "fileURLWithPath:", SW_IMP(url_with_path), "@@:@"); }

static void desc_set_object(id self, SEL cmd, id o) { ((fake_desc *)self)->object = o; }
static void desc_set_destination(id self, SEL cmd, NSInteger v) { ((fake_desc *)self)->destination = v; }
static void desc_set_url(id self, SEL cmd, id u) { ((fake_desc *)self)->url = u; }
static void desc_methods(Class cls) {
    sw_method_add(cls, "setCaptureObject:", SW_IMP(desc_set_object), "v@:@");
    sw_method_add(cls, "setDestination:", SW_IMP(desc_set_destination), "v@:q");
    sw_method_add(cls, "setOutputURL:", SW_IMP(desc_set_url), "v@:@");
}

static id the_manager;
static id manager_shared(id self, SEL cmd) { return the_manager; }
static BOOL manager_supports(id self, SEL cmd, NSInteger dest) { return dest == 2; }
static BOOL manager_start(id self, SEL cmd, id d, id *error) {
    const fake_desc *fd = (const fake_desc *)d;
    if (cap.refuse) {
        if (error) sw_error_out(error, sw_error_new("MTLCaptureErrorDomain", 1, "Capture already in progress"));
        return NO;
    }
    cap.starts++;
    cap.start_dispatches = swmtl_dispatches_executed();
    cap.object = fd->object;
    cap.destination = fd->destination;
    snprintf(cap.path, sizeof cap.path, "%s", fd->url ? ((const fake_url *)fd->url)->path : "");
    return YES;
}
static void manager_stop(id self, SEL cmd) {
    cap.stops++;
    cap.stop_dispatches = swmtl_dispatches_executed();
}
static void manager_methods(Class cls) {
    sw_class_method_add(cls, "sharedCaptureManager", SW_IMP(manager_shared), "@@:");
    sw_method_add(cls, "supportsDestination:", SW_IMP(manager_supports), "C@:q");
    sw_method_add(cls, "startCaptureWithDescriptor:error:", SW_IMP(manager_start), "C@:@^@");
    sw_method_add(cls, "stopCapture", SW_IMP(manager_stop), "v@:");
}

/* 1 when the fakes stand in; 0 where Metal.framework's classes own the names. */
static int fake_capture(void) {
    static int done, ok;
    if (done) return ok;
    done = 1;
    sw_objc_init();
    if (objc_getClass("MTLCaptureManager") || objc_getClass("MTLCaptureDescriptor") || objc_getClass("NSURL")) return 0;
    url_class = sw_class_register("NSURL", sw_root_class(), sizeof(fake_url), url_methods);
    sw_class_register("MTLCaptureDescriptor", sw_root_class(), sizeof(fake_desc), desc_methods);
    the_manager = sw_obj_new(sw_class_register("MTLCaptureManager", sw_root_class(), sizeof(sw_obj), manager_methods));
    return ok = the_manager != NULL;
}

TEST(kcase_device_capture_records_the_first_timed_iteration) {
    char err[1024] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    if (!fake_capture()) SKIP("Metal.framework's capture classes are loaded: the fakes cannot take their names");
    memset(&cap, 0, sizeof cap);
    run_opts o;
    small_opts(&o);
    o.capture_path = "/tmp/gdnbench-test-caps/kernel-scale_twice.gputrace";
    run_record rec;
    memset(&rec, 0, sizeof rec);
    uint64_t d0 = swmtl_dispatches_executed();
    int rc = run_case_on("Apple M1", &o, &rec, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK_EQ_INT(cap.starts, 1);
    CHECK_EQ_INT(cap.stops, 1);
    CHECK(strcmp(cap.path, o.capture_path) == 0);
    CHECK_EQ_INT(cap.destination, 2); /* MTLCaptureDestinationGPUTraceDocument */
    CHECK(cap.object != NULL);
    /* after the two warmup runs of two launches each, around exactly the first timed run */
    CHECK_EQ_INT(cap.start_dispatches - d0, 2 * 2);
    CHECK_EQ_INT(cap.stop_dispatches - cap.start_dispatches, 2);
    CHECK_EQ_INT(rec.warmup, 2);
    CHECK_EQ_INT(rec.iterations, 3);
    run_record_free(&rec);

    /* Metal refuses: the case is an error naming the trace and Metal's reason */
    memset(&cap, 0, sizeof cap);
    cap.refuse = 1;
    memset(&rec, 0, sizeof rec);
    CHECK(run_case_on("Apple M1", &o, &rec, err, sizeof err) != 0);
    CHECK_EQ_INT(rec.status, RUN_ERROR);
    CHECK_MSG(strstr(rec.error, "cannot start a GPU capture to /tmp/gdnbench-test-caps/kernel-scale_twice.gputrace: "
                                "Capture already in progress") != NULL,
              "error: %s", rec.error);
    CHECK_EQ_INT(cap.stops, 0);
    run_record_free(&rec);

    /* the software device as itself: no GPU trace to record */
    memset(&rec, 0, sizeof rec);
    kc_case *c = kc_parse(seq_case, strlen(seq_case), "seq.json", ".", err, sizeof err);
    backend *b = c ? kc_backend_open("sw", &o, err, sizeof err) : NULL;
    op_case *oc = b ? kc_op_case_new(c, o.seed, 0, err, sizeof err) : NULL;
    CHECK_MSG(oc != NULL, "%s", err);
    if (oc) {
        CHECK(runner_run_case(b, oc, &o, &rec) != 0);
        CHECK_MSG(strstr(rec.error, "a GPU capture needs --backend metal") != NULL, "error: %s", rec.error);
    }
    if (b) b->release_case(b), b->destroy(b);
    op_case_free(oc);
    kc_free(c);
    run_record_free(&rec);
}

/* `gdnbench kernel --capture DIR` as the CLI plans it (cli/kernel_plan.c) on the
 * dressed GPU: DIR made, the case's trace at DIR/kernel-<case name>.gputrace (its
 * name's space as '_'), and a trace already there stops the plan before the case
 * runs, naming the file. */
TEST(kcase_device_capture_through_the_kernel_plan) {
    char err[1024] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    if (!fake_capture()) SKIP("Metal.framework's capture classes are loaded: the fakes cannot take their names");
    char tmp[] = "/tmp/gdn-kcap-XXXXXX", dir[64], trace[128];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(dir, sizeof dir, "%s/caps", tmp);
    snprintf(trace, sizeof trace, "%s/kernel-scale_twice.gputrace", dir);
    mtl_device *d = dressed_device("Apple M1", err, sizeof err);
    backend *b = d ? kc_backend_on_device(d, BACKEND_METAL, err, sizeof err) : NULL;
    CHECK_MSG(b != NULL, "%s", err);
    for (int pass = 0; b && pass < 2; pass++) {
        kernel_plan kp;
        CHECK(kernel_plan_init(&kp, "kernel", 1) == 0);
        kp.cases[0] = kc_parse(seq_case, strlen(seq_case), "seq.json", ".", err, sizeof err);
        small_opts(&kp.ro);
        kp.ro.quiet = 1;
        kp.capture_dir = dir;
        kp.on = b;
        memset(&cap, 0, sizeof cap);
        int rc = kernel_plan_run(&kp, err, sizeof err);
        if (pass == 0) {
            CHECK_MSG(rc == 0, "%s", err);
            CHECK_EQ_INT(kp.tally.npass, 1);
            CHECK_EQ_INT(cap.starts, 1);
            CHECK_MSG(strcmp(cap.path, trace) == 0, "captured to %s", cap.path);
            /* what Metal would have written: the next run must not overwrite it */
            FILE *f = fopen(trace, "w");
            CHECK(f != NULL);
            if (f) fclose(f);
        } else {
            CHECK(rc != 0);
            CHECK_EQ_INT(cap.starts, 0);
            char want[300];
            snprintf(want, sizeof want, "--capture: %s already exists: remove it or capture into another directory",
                     trace);
            CHECK_MSG(strcmp(err, want) == 0, "error: %s", err);
        }
        kernel_plan_free(&kp);
    }
    if (b) b->destroy(b);
    remove(trace);
    rmdir(dir);
    rmdir(tmp);
}
