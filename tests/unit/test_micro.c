/* test_micro.c — the micro ops on the software Metal device: each one's self-check
 * passes at a small size, its JSON record validates against results/schema-1.json,
 * and kernels that skip work (the last element of a copy, the last step of an FMA
 * chain) fail their self-checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/embedded.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "runner/runner.h"
#include "test.h"

/* Runs op at its defaults overridden by spec ("K=V ..."), 2 timed iterations on the
 * sw backend, optionally with a --shader/--function.  Returns 0 when it ran. */
static int run_micro(const char *name, const char *spec, const char *shader, const char *function,
                     run_record *rec) {
    char err[512] = "";
    const op_desc *op = op_find(name);
    CHECK_MSG(op != NULL, "op %s is not registered", name);
    if (!op) return -1;
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        int d = op_dim_index(op, tok);
        CHECK_MSG(d >= 0, "%s has no dimension %s", name, tok);
        if (d < 0) return -1;
        dim[d] = strtoll(eq + 1, NULL, 10);
    }
    run_opts o = {.backend = "sw", .warmup = 0, .iters = 2, .check = CHECK_BOTH, .shader = shader,
                  .function = function, .quiet = 1};
    backend *b = backend_open("sw", &o, err, sizeof err);
    if (!b) SKIP("software device unavailable: %s", err);
    op_case *c = op_case_new(op, dim, 0, err, sizeof err);
    CHECK_MSG(c != NULL, "%s %s: %s", name, spec, err);
    int rc = -1;
    if (c) {
        rc = runner_run_case(b, c, &o, rec);
        if (b->release_case) b->release_case(b);
        op_case_free(c);
    }
    b->destroy(b);
    return rc;
}

static void check_schema(const run_record *rec) {
    char path[1024], err[512];
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *schema = json_read_file(path, err, sizeof err);
    CHECK_MSG(schema != NULL, "%s", err);
    cJSON *j = report_record_json(rec);
    CHECK(j != NULL);
    if (schema && j) {
        int n = json_schema_validate(schema, j, err, sizeof err);
        CHECK_MSG(n == 0, "%s record does not validate: %s", rec->op->name, err);
        const cJSON *dev = cJSON_GetObjectItem(j, "device");
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(dev, "emulated")));
    }
    cJSON_Delete(j);
    cJSON_Delete(schema);
}

/* Runs a passing case: ran, every check passed, JSON valid. */
static void expect_pass(const char *name, const char *spec, run_record *rec) {
    int rc = run_micro(name, spec, NULL, NULL, rec);
    CHECK_MSG(rc == 0, "%s %s did not run: %s", name, spec, rec->error);
    CHECK_MSG(rec->status == RUN_PASS, "%s %s: status %s %s", name, spec, run_status_name(rec->status), rec->error);
    CHECK_MSG(rec->nchecks >= 2, "%s %s: only %d checks", name, spec, rec->nchecks);
    check_schema(rec);
}

/* Writes our shader with one substring replaced to a temporary file. */
static int broken_shader(const char *path, const char *from, const char *to, char *out, size_t n) {
    const embedded_file *e = embedded_find(path);
    CHECK_MSG(e != NULL, "%s is not embedded", path);
    const char *at = e ? strstr(e->data, from) : NULL;
    CHECK_MSG(at != NULL, "'%s' is not in %s", from, path);
    if (!at) return -1;
    snprintf(out, n, "/tmp/gdnbench-micro-%d.metal", (int)getpid());
    FILE *f = fopen(out, "w");
    if (!f) return -1;
    fprintf(f, "%.*s%s%s", (int)(at - e->data), e->data, to, at + strlen(from));
    fclose(f);
    return 0;
}

TEST(micro_dispatch_selfcheck_and_counts) {
    run_record rec;
    expect_pass("micro.dispatch", "N=10 percb=0", &rec);
    CHECK_EQ_INT(rec.dispatches, 10);
    CHECK_EQ_INT(rec.command_buffers, 1);
    run_record_free(&rec);
    expect_pass("micro.dispatch", "N=10 percb=1", &rec);
    CHECK_EQ_INT(rec.dispatches, 10);
    CHECK_EQ_INT(rec.command_buffers, 10);
    CHECK(rec.wall.n == 2);
    run_record_free(&rec);
}

TEST(micro_copy_selfcheck_shared_and_private) {
    run_record rec;
    expect_pass("micro.copy", "MB=1 vec=4 storage=0", &rec);
    CHECK_NEAR(rec.bytes, 2.0 * 1024 * 1024, 0);
    run_record_free(&rec);
    expect_pass("micro.copy", "MB=1 vec=1 storage=1", &rec);
    run_record_free(&rec);
}

TEST(micro_copy_skipping_last_element_fails) {
    char path[256];
    if (broken_shader("shaders/micro/copy.metal", "if (gid < params[0]) dst[gid] = src[gid];\n}\n\nkernel void micro_copy_f32x4",
                      "if (gid + 1 < params[0]) dst[gid] = src[gid];\n}\n\nkernel void micro_copy_f32x4", path,
                      sizeof path))
        return;
    run_record rec;
    int rc = run_micro("micro.copy", "MB=1 vec=1", path, "micro_copy_f32", &rec);
    unlink(path);
    CHECK_MSG(rc == 0, "did not run: %s", rec.error);
    CHECK_MSG(rec.status == RUN_FAIL, "a copy that skips the last element has status %s", run_status_name(rec.status));
    CHECK(rec.nchecks > 0 && !rec.checks[0].pass && rec.checks[0].unwritten == 1);
    run_record_free(&rec);
}

TEST(micro_reduce_selfcheck_every_mode) {
    for (int mode = 0; mode < 3; mode++) {
        char spec[64];
        snprintf(spec, sizeof spec, "N=64 mode=%d items=4", mode);
        run_record rec;
        expect_pass("micro.reduce", spec, &rec);
        run_record_free(&rec);
    }
}

TEST(micro_alu_selfcheck_fma_and_mma) {
    static const char *const specs[] = {
        "type=0 mma=0 groups=2", "type=1 mma=0 groups=1 steps=64", "type=2 mma=0 groups=1",
        "type=0 mma=1 groups=1 steps=8", "type=1 mma=1 groups=1 steps=8", "type=2 mma=1 groups=1 steps=8",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        run_record rec;
        expect_pass("micro.alu", specs[i], &rec);
        CHECK(rec.flops > 0);
        run_record_free(&rec);
    }
}

TEST(micro_alu_one_step_short_fails) {
    char path[256];
    if (broken_shader("shaders/micro/alu.metal", "for (uint i = 0; i < steps; i++)\n        for (uint c = 0; c < CHAINS",
                      "for (uint i = 1; i < steps; i++)\n        for (uint c = 0; c < CHAINS", path, sizeof path))
        return;
    run_record rec;
    int rc = run_micro("micro.alu", "type=2 mma=0 groups=1", path, "micro_alu_bf16", &rec);
    unlink(path);
    CHECK_MSG(rc == 0, "did not run: %s", rec.error);
    CHECK_MSG(rec.status == RUN_FAIL, "an FMA chain one step short has status %s", run_status_name(rec.status));
    run_record_free(&rec);
}

TEST(micro_tgmem_selfcheck_strides) {
    static const int strides[] = {1, 2, 32, 33};
    for (int i = 0; i < 4; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "stride=%d groups=2 rounds=5000", strides[i]);
        run_record rec;
        expect_pass("micro.tgmem", spec, &rec);
        run_record_free(&rec);
    }
}

TEST(micro_decode_ctx_selfcheck_gdn_and_attention) {
    run_record rec;
    expect_pass("micro.decode_ctx", "ctx=100 mode=0 H=2", &rec);
    CHECK_EQ_INT(rec.nchecks, 4); /* state_out and o, against both references */
    run_record_free(&rec);
    /* 1100 keys: a second chunk whose last simdgroups have no keys at all. */
    expect_pass("micro.decode_ctx", "ctx=1100 mode=1 H=2 Hkv=1", &rec);
    CHECK_EQ_INT(rec.nchecks, 2); /* only o: the GDN state buffers are empty */
    CHECK_EQ_INT(rec.nstages, 2);
    run_record_free(&rec);
}
