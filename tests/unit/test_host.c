/* test_host.c — facts about the host: where our own executable is (it finds
 * shaders/ next to itself from there), and one CPU model for `info` and the report. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/utsname.h>

#include <cjson/cJSON.h>

#include "report/report_json.h"
#include "report_testdata.h"
#include "runner/host.h"
#include "test.h"

TEST(host_executable_path_is_this_binary_resolved) {
    char p[PATH_MAX];
    CHECK(host_executable_path(p, sizeof p) == 0);
    CHECK_MSG(p[0] == '/', "not absolute: %s", p);
    const char *base = strrchr(p, '/');
    CHECK_MSG(base && strcmp(base + 1, "gdnbench-tests") == 0, "not this binary: %s", p);
    CHECK(access(p, X_OK) == 0);
    char real[PATH_MAX];
    CHECK(realpath(p, real) != NULL);
    CHECK_MSG(strcmp(real, p) == 0, "%s is not its own real path %s", p, real);
    char small[4];
    CHECK(host_executable_path(small, sizeof small) == -1);
    CHECK(host_executable_path(small, 0) == -1);
}

/* `gdnbench info` and the cpu backend print host_cpu_name; the JSON report's
 * host.cpu must name the same CPU (it falls back to the machine name only when the
 * system does not say). */
TEST(host_cpu_name_is_the_reports_cpu) {
    char cpu[256];
    int known = host_cpu_name(cpu, sizeof cpu) == 0;
    CHECK(cpu[0] != 0);
    run_record r;
    report_test_record(&r, 3, 10.0);
    cJSON *j = report_record_json(&r);
    CHECK(j != NULL);
    const cJSON *c = j ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "host"), "cpu") : NULL;
    CHECK(cJSON_IsString(c));
    if (cJSON_IsString(c)) {
        struct utsname u;
        CHECK(uname(&u) == 0);
        const char *want = known ? cpu : u.machine;
        CHECK_MSG(strcmp(c->valuestring, want) == 0, "report says '%s', info says '%s'", c->valuestring, want);
    }
    cJSON_Delete(j);
    run_record_free(&r);
}
