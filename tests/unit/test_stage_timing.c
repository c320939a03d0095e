/* test_stage_timing.c — per-stage GPU times from one submission, on the software
 * device: src/metal/mtl.c's counter path (stage timestamps monotonic, nested in the
 * command buffer's interval, adding up to at most its length) and the runner
 * (chunk_fwd's stages timed by counters run the op once per iteration; without
 * counters the report says "separate command buffers" and the op runs again per
 * stage), and the JSON written from such runs against the schema. */
#include <string.h>

#include <cjson/cJSON.h>

#include "metal/mtl.h"
#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "runner/runner.h"
#include "swmetal/swmetal.h"
#include "test.h"

static const char *busy_src =
    "#include <metal_stdlib>\n"
    "using namespace metal;\n"
    "kernel void busy(device float *y [[buffer(0)]], constant uint &n [[buffer(1)]],\n"
    "                 uint i [[thread_position_in_grid]]) {\n"
    "    float acc = y[i];\n"
    "    for (uint k = 0; k < n; k++) acc = acc * 0.5f + 1.0f;\n"
    "    y[i] = acc;\n"
    "}\n";

/* Sums of a few stage times in one command buffer may round a little past it. */
#define EPS_S 1e-7

TEST(stage_timing_counters_nest_in_the_command_buffer) {
    char err[512] = "";
    mtl_device *d = mtl_device_new(swmtl_create_system_default_device(), err, sizeof err);
    CHECK_MSG(d != NULL, "%s", err);
    if (!d) return;
    CHECK_MSG(mtl_device_stage_counters(d, err, sizeof err), "no stage counters: %s", err);
    mtl_library *lib = mtl_library_new(d, busy_src, "busy.metal", NULL, 0, err, sizeof err);
    mtl_pipeline *p = lib ? mtl_pipeline_new(d, lib, "busy", NULL, 0, err, sizeof err) : NULL;
    mtl_buffer *y = mtl_buffer_new(d, 256 * sizeof(float), err, sizeof err);
    CHECK_MSG(p && y, "%s", err);
    if (p && y) {
        uint32_t work[3] = {2000, 200, 8000};
        mtl_dispatch ds[3];
        memset(ds, 0, sizeof ds);
        for (int k = 0; k < 3; k++) {
            ds[k].pipeline = p;
            ds[k].nbuffers = 1;
            ds[k].buffers[0].index = 0;
            ds[k].buffers[0].buffer = y;
            ds[k].nbytes = 1;
            ds[k].bytes[0].index = 1;
            ds[k].bytes[0].data = &work[k];
            ds[k].bytes[0].length = sizeof work[k];
            ds[k].grid[0] = 4, ds[k].grid[1] = ds[k].grid[2] = 1;
            ds[k].tg[0] = 64, ds[k].tg[1] = ds[k].tg[2] = 1;
        }
        ds[1].repeat = 3; /* three dispatches in stage 1's pass */
        uint64_t cbs0 = swmtl_command_buffers_executed();
        for (int rep = 0; rep < 3; rep++) {
            mtl_timing t;
            CHECK_MSG(mtl_run_timed(d, ds, 3, 1, &t, err, sizeof err) == 0, "%s", err);
            CHECK_EQ_INT(t.nstages, 3);
            double sum = 0;
            for (int k = 0; k < 3; k++) {
                CHECK_MSG(t.stage_start_s[k] <= t.stage_end_s[k], "stage %d ends before it starts", k);
                if (k > 0)
                    CHECK_MSG(t.stage_start_s[k] >= t.stage_end_s[k - 1] - EPS_S, "stage %d starts before %d ends", k,
                              k - 1);
                CHECK_NEAR(t.stage_us[k], (t.stage_end_s[k] - t.stage_start_s[k]) * 1e6, 1e-3);
                CHECK(t.stage_us[k] > 0);
                sum += t.stage_us[k];
            }
            CHECK_MSG(t.stage_start_s[0] >= t.gpu_start_s - EPS_S && t.stage_end_s[2] <= t.gpu_end_s + EPS_S,
                      "stages %.9f..%.9f outside the command buffer %.9f..%.9f", t.stage_start_s[0], t.stage_end_s[2],
                      t.gpu_start_s, t.gpu_end_s);
            CHECK_MSG(sum <= t.gpu_us + EPS_S * 1e6, "stages add up to %.3f us, the command buffer took %.3f us", sum,
                      t.gpu_us);
        }
        /* One command buffer per run: the stages were not run again. */
        CHECK_EQ_INT(swmtl_command_buffers_executed() - cbs0, 3);

        /* A stage whose dispatches each have a command buffer of their own: its pass
         * starts in the first and ends in the last. */
        ds[1].own_command_buffers = 1;
        mtl_timing t;
        CHECK_MSG(mtl_run_timed(d, ds, 3, 1, &t, err, sizeof err) == 0, "%s", err);
        CHECK_EQ_INT(t.nstages, 3);
        CHECK(t.stage_end_s[0] <= t.stage_start_s[1] + EPS_S && t.stage_end_s[1] <= t.stage_start_s[2] + EPS_S);
        CHECK(t.stage_start_s[0] >= t.gpu_start_s - EPS_S && t.stage_end_s[2] <= t.gpu_end_s + EPS_S);

        /* Without asking: no stage times. */
        CHECK(mtl_run_timed(d, ds, 3, 0, &t, err, sizeof err) == 0);
        CHECK_EQ_INT(t.nstages, 0);
    }
    mtl_buffer_free(y);
    mtl_pipeline_free(p);
    mtl_library_free(lib);
    mtl_device_free(d);
}

/* A software device whose supportsCounterSampling: says NO, as a GPU without stage
 * boundary counters does. */
static id device_without_counters(void) {
    swmtl_options so;
    swmtl_options_init(&so);
    so.counter_sampling = 0;
    return swmtl_device_new(&so);
}

TEST(stage_timing_device_without_counters_says_why) {
    char err[512] = "";
    mtl_device *d = mtl_device_new(device_without_counters(), err, sizeof err);
    CHECK_MSG(d != NULL, "%s", err);
    if (!d) return;
    char why[200] = "";
    CHECK(!mtl_device_stage_counters(d, why, sizeof why));
    CHECK_MSG(strstr(why, "stage boundaries") != NULL, "reason: %s", why);
    mtl_device_free(d);
}

/* chunk_fwd at a small shape with a tail chunk, on the software device. */
static int run_chunk_fwd(run_record *rec, int warmup, int iters, int check, int counters, uint64_t *dispatches,
                         uint64_t *cbs, char *err, size_t errlen) {
    const op_desc *op = op_find("chunk_fwd");
    if (!op) {
        snprintf(err, errlen, "no chunk_fwd op");
        return -1;
    }
    int64_t dim[OP_MAX_DIMS];
    for (int i = 0; i < op->ndims; i++) dim[i] = op->dims[i].def;
    static const struct {
        const char *name;
        int64_t v;
    } small[] = {{"T", 100}, {"H", 2}, {"Hg", 1}, {"K", 64}, {"V", 64}, {"B", 1}};
    for (size_t k = 0; k < sizeof small / sizeof small[0]; k++) dim[op_dim_index(op, small[k].name)] = small[k].v;
    op_case *c = op_case_new(op, dim, 3, err, errlen);
    backend *b = NULL;
    if (c && counters) b = backend_open("sw", NULL, err, errlen);
    else if (c) b = backend_metal_open(mtl_device_new(device_without_counters(), err, errlen), 1, err, errlen);
    if (!b) {
        op_case_free(c);
        return -1;
    }
    run_opts o = {.backend = "sw", .seed = 3, .warmup = warmup, .iters = iters, .check = check};
    uint64_t d0 = swmtl_dispatches_executed(), c0 = swmtl_command_buffers_executed();
    int rc = runner_run_case(b, c, &o, rec);
    *dispatches = swmtl_dispatches_executed() - d0;
    *cbs = swmtl_command_buffers_executed() - c0;
    if (rc != 0) snprintf(err, errlen, "%s", rec->error);
    b->release_case(b);
    b->destroy(b);
    op_case_free(c);
    return rc;
}

static void check_json_validates(const run_record *rec) {
    char path[1024], err[512] = "";
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *schema = json_read_file(path, err, sizeof err);
    CHECK_MSG(schema != NULL, "%s", err);
    cJSON *j = report_record_json(rec);
    CHECK(j != NULL);
    if (schema && j) CHECK_MSG(json_schema_validate(schema, j, err, sizeof err) == 0, "%s", err);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "timing");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(t, "stage_timing");
    CHECK(cJSON_IsString(st) && strcmp(st->valuestring, rec->stage_timing) == 0);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(j, "environment");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(env, "paravirtual")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(env, "gpu_name"))); /* the sw device is no GPU */
    cJSON_Delete(j);
    cJSON_Delete(schema);
}

TEST(stage_timing_chunk_fwd_runs_once_per_iteration) {
    char err[512] = "";
    run_record rec;
    uint64_t dispatches = 0, cbs = 0;
    int rc = run_chunk_fwd(&rec, 1, 3, CHECK_NONE, 1, &dispatches, &cbs, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc != 0) return;
    CHECK_MSG(strcmp(rec.stage_timing, "counters") == 0, "stage_timing '%s' (%s)", rec.stage_timing,
              rec.stage_timing_why);
    CHECK(rec.nstages >= 6);
    /* warmup + iterations runs of the op, each rec.dispatches dispatches in
     * rec.command_buffers command buffers: nothing ran a second time for stage times. */
    CHECK_EQ_INT(dispatches, 4 * rec.dispatches);
    CHECK_EQ_INT(cbs, 4 * rec.command_buffers);
    for (int i = 0; i < rec.timing.n; i++) {
        double sum = 0;
        for (int s = 0; s < rec.nstages; s++) {
            CHECK_EQ_INT(rec.stages[s].timing.n, 3);
            CHECK(rec.stages[s].timing.samples[i] > 0);
            sum += rec.stages[s].timing.samples[i];
        }
        CHECK_MSG(sum <= rec.timing.samples[i] + 0.1, "iteration %d: stages add up to %.3f us > total %.3f us", i, sum,
                  rec.timing.samples[i]);
    }
    check_json_validates(&rec);
    run_record_free(&rec);
}

TEST(stage_timing_without_counters_runs_stages_again) {
    char err[512] = "";
    run_record rec;
    uint64_t dispatches = 0, cbs = 0;
    int rc = run_chunk_fwd(&rec, 0, 2, CHECK_F64, 0, &dispatches, &cbs, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc != 0) return;
    CHECK_MSG(strcmp(rec.stage_timing, "separate command buffers") == 0, "stage_timing '%s'", rec.stage_timing);
    CHECK_MSG(strstr(rec.stage_timing_why, "stage boundaries") != NULL, "why: %s", rec.stage_timing_why);
    /* Each iteration: the op once, then every stage again in a buffer of its own. */
    CHECK_EQ_INT(dispatches, 2 * 2 * rec.dispatches);
    CHECK_EQ_INT(cbs, 2 * (rec.command_buffers + rec.nstages));
    /* The checked outputs are those of the one-submission run, and right. */
    CHECK_MSG(rec.status == RUN_PASS, "status %s: %s", run_status_name(rec.status), rec.error);
    for (int s = 0; s < rec.nstages; s++) CHECK_EQ_INT(rec.stages[s].timing.n, 2);
    check_json_validates(&rec);
    run_record_free(&rec);
}
