/* test_machine.c — the machine state (src/runner/machine.c): what this platform
 * reports and what it leaves unknown, the marks a throttling condition gives a run,
 * and the JSON `environment` written from it (null for unknowns, valid against
 * results/schema-1.json). */
#include <string.h>

#include <cjson/cJSON.h>

#include "report/jsonschema.h"
#include "report/report_json.h"
#include "report_testdata.h"
#include "runner/machine.h"
#include "test.h"

static const cJSON *env_field(const cJSON *j, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "environment"), key);
}

static cJSON *validated_json(const run_record *r) {
    char path[1024], err[512] = "";
    report_test_repo_path(path, sizeof path, "results/schema-1.json");
    cJSON *schema = json_read_file(path, err, sizeof err);
    CHECK_MSG(schema != NULL, "%s", err);
    cJSON *j = report_record_json(r);
    CHECK(j != NULL);
    if (schema && j) CHECK_MSG(json_schema_validate(schema, j, err, sizeof err) == 0, "does not validate: %s", err);
    cJSON_Delete(schema);
    return j;
}

TEST(machine_platform_reports_or_leaves_unknown) {
    rec_machine m;
    machine_sample(&m, NULL);
    CHECK(m.collected);
    CHECK_EQ_INT(m.paravirtual, -1); /* no device, nothing to say */
    CHECK(m.gpu_name[0] == 0 && m.gpu_cores < 0 && m.nfamilies < 0 && m.working_set < 0);
#if defined(__APPLE__)
    CHECK(m.thermal_before >= 0 && m.thermal_before <= 3);
    CHECK(m.macos_version[0] != 0);
#else
    /* Linux has no thermal state, Low Power Mode or macOS version: unknown, not 0. */
    CHECK_EQ_INT(m.thermal_before, -1);
    CHECK_EQ_INT(m.thermal_after, -1);
    CHECK_EQ_INT(m.low_power, -1);
    CHECK(m.macos_version[0] == 0);
    CHECK_EQ_INT(machine_gpu_core_count(), -1);
#endif
    const char *src = machine_power_source();
    CHECK(!src || strcmp(src, "ac") == 0 || strcmp(src, "battery") == 0 || strcmp(src, "ups") == 0);
    char line[512];
    machine_describe(&m, line, sizeof line);
    CHECK_MSG(strstr(line, "thermal ") && strstr(line, "Low Power Mode "), "%s", line);
}

TEST(machine_marks_throttling_conditions) {
    run_record r;
    report_test_record(&r, 5, 10.0);
    char marks[4][80];
    CHECK_EQ_INT(machine_marks(&r.machine, marks, 4), 0); /* cool, AC, Low Power Mode off */
    r.machine.thermal_after = THERMAL_SERIOUS;
    CHECK_EQ_INT(machine_marks(&r.machine, marks, 4), 1);
    CHECK_MSG(strcmp(marks[0], "thermal state nominal before, serious after the runs") == 0, "%s", marks[0]);
    r.machine.low_power = 1;
    snprintf(r.machine.power_source, sizeof r.machine.power_source, "battery");
    CHECK_EQ_INT(machine_marks(&r.machine, marks, 4), 3);
    CHECK(strcmp(marks[1], "Low Power Mode on") == 0 && strcmp(marks[2], "on battery power") == 0);

    cJSON *j = validated_json(&r);
    CHECK(cJSON_IsTrue(env_field(j, "marked")));
    CHECK_EQ_INT(cJSON_GetArraySize(env_field(j, "marks")), 3);
    CHECK(strcmp(env_field(j, "thermal_state_after")->valuestring, "serious") == 0);
    CHECK(strcmp(env_field(j, "power_source")->valuestring, "battery") == 0);
    CHECK(cJSON_IsTrue(env_field(j, "low_power_mode")));
    cJSON_Delete(j);

    /* Unknown is not a mark: a Linux run is never marked for what it cannot know. */
    r.machine.thermal_before = r.machine.thermal_after = r.machine.low_power = -1;
    r.machine.power_source[0] = 0;
    CHECK_EQ_INT(machine_marks(&r.machine, marks, 4), 0);
    run_record_free(&r);
}

TEST(machine_environment_json_known_and_null) {
    run_record r;
    report_test_record(&r, 5, 10.0);
    cJSON *j = validated_json(&r);
    CHECK(strcmp(env_field(j, "macos_version")->valuestring, "15.1") == 0);
    CHECK(strcmp(env_field(j, "thermal_state_before")->valuestring, "nominal") == 0);
    CHECK(cJSON_IsFalse(env_field(j, "low_power_mode")));
    CHECK(strcmp(env_field(j, "gpu_name")->valuestring, "Apple M4 Max") == 0);
    CHECK_NEAR(env_field(j, "gpu_cores")->valuedouble, 40, 0);
    CHECK_EQ_INT(cJSON_GetArraySize(env_field(j, "gpu_families")), 4);
    CHECK_NEAR(env_field(j, "recommended_max_working_set_bytes")->valuedouble, 4e10, 0);
    CHECK(cJSON_IsFalse(env_field(j, "paravirtual")));
    CHECK(cJSON_IsFalse(env_field(j, "marked")));
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "timing"), "stage_timing");
    CHECK(cJSON_IsString(st) && strcmp(st->valuestring, "counters") == 0);
    cJSON_Delete(j);

    /* A device that answers supportsFamily: with none of the families: [], not null. */
    r.machine.nfamilies = 0;
    j = validated_json(&r);
    CHECK(cJSON_IsArray(env_field(j, "gpu_families")) && cJSON_GetArraySize(env_field(j, "gpu_families")) == 0);
    cJSON_Delete(j);

    /* Not collected (a record built without the runner): every field null. */
    memset(&r.machine, 0, sizeof r.machine);
    r.stage_timing[0] = 0;
    j = validated_json(&r);
    static const char *const keys[] = {"macos_version", "thermal_state_before", "thermal_state_after",
                                       "low_power_mode", "power_source", "gpu_name", "gpu_cores", "gpu_families",
                                       "recommended_max_working_set_bytes", "paravirtual"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(cJSON_IsNull(env_field(j, keys[i])), "%s is not null", keys[i]);
    CHECK(cJSON_IsFalse(env_field(j, "marked")));
    CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "timing"), "stage_timing")));
    cJSON_Delete(j);
    run_record_free(&r);
}
