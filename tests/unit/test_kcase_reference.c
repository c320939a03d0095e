/* test_kcase_reference.c — {"backend": "sw"} as a kernel case's expectation: the
 * path `gdnbench kernel --backend metal` takes (the case run on one device, then once
 * more on the software device for the reference, kc_reference_run, and compared by
 * kc_check_case), driven here with a second software device in the GPU's place,
 * since Linux has no Metal.  The comparison passes on equal outputs and fails on one
 * changed element (negative control: a GPU that got one element wrong); with no
 * reference run (the case ran on sw itself) the output is listed as its own
 * reference, not checked. */
#include <stdio.h>
#include <string.h>

#include "kcase/kcase.h"
#include "runner/kcase_run.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"
#include "test.h"

static const char case_text[] =
    "{\"case\": 1, \"name\": \"twice\", \"source\": {\"text\": \"kernel void twice(device const float *x [[buffer(0)]], "
    "device float *y [[buffer(1)]], uint i [[thread_position_in_grid]]) { y[i] = 2.0f * x[i] + 0.25f; }\"},\n"
    " \"function\": \"twice\", \"dispatch\": {\"grid\": [64], \"threadgroup\": [32]},\n"
    " \"buffers\": {\"x\": {\"dtype\": \"float32\", \"shape\": [64], \"init\": {\"normal\": [0, 1]}},\n"
    "  \"y\": {\"dtype\": \"float32\", \"shape\": [64], \"expect\": {\"backend\": \"sw\", \"atol\": 0, \"rtol\": 0}}}}";

TEST(kcase_reference_from_the_software_device) {
    char err[1024] = "";
    if (!swmtl_can_compile(err, sizeof err)) SKIP("no clang++ for the software device: %s", err);
    kc_case *c = kc_parse(case_text, strlen(case_text), "twice.json", ".", err, sizeof err);
    CHECK_MSG(c != NULL, "%s", err);
    if (!c) return;
    CHECK(kc_case_wants_backend(c));
    run_opts o;
    memset(&o, 0, sizeof o);
    o.backend = "sw";
    o.seed = 3;
    o.iters = 2;
    o.warmup = 0;
    backend *run = kc_backend_open("sw", &o, err, sizeof err), *ref = kc_backend_open("sw", &o, err, sizeof err);
    op_case *oc = kc_op_case_new(c, o.seed, 0, err, sizeof err);
    CHECK_MSG(run && ref && oc, "%s", err);
    run_record rec;
    memset(&rec, 0, sizeof rec);
    if (run && ref && oc && runner_run_case(run, oc, &o, &rec) == 0) {
        run->release_case(run);
        op_case *r = kc_reference_run(ref, oc, &o, err, sizeof err);
        CHECK_MSG(r != NULL, "%s", err);
        kc_result res;
        CHECK(r && kc_check_case(oc, r, &res, err, sizeof err) == 0);
        CHECK(res.pass && res.bufs[1].checked && strcmp(res.bufs[1].reference, "sw") == 0 && res.bufs[1].bad == 0);
        /* a "GPU" that got element 5 wrong: the comparison names it */
        float *y = (float *)oc->t[0]->data;
        CHECK(oc->op->nbufs == 1 && strcmp(oc->op->bufs[0].name, "y") == 0);
        y[5] += 1.0f;
        CHECK(r && kc_check_case(oc, r, &res, err, sizeof err) == 0);
        CHECK(!res.pass && res.bufs[1].bad == 1 && res.bufs[1].first_bad == 5);
        /* no reference run: the software device's own output, listed, not checked */
        y[5] -= 1.0f;
        CHECK(kc_check_case(oc, NULL, &res, err, sizeof err) == 0);
        CHECK(res.pass && res.bufs[1].self_ref && !res.bufs[1].checked);
        op_case_free(r);
    } else {
        CHECK_MSG(0, "the run failed: %s", rec.error);
    }
    run_record_free(&rec);
    op_case_free(oc);
    if (run) run->destroy(run);
    if (ref) ref->destroy(ref);
    kc_free(c);
}
