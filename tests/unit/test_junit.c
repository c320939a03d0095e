/* test_junit.c — the JUnit writer (src/report/junit.c): what reaches the file is
 * escaped (& < > " ' in text and attributes, control characters replaced), the
 * counts add up, and a failed record's test case carries the failed check in its
 * message and the device's findings with their source lines in its body.  The CLI
 * side (tests/cli/test_junit.sh) parses real output with an XML parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/utf8.h"
#include "report/junit.h"
#include "report_testdata.h"
#include "test.h"

/* The document written to a temporary file and read back (caller frees). */
static char *written(const junit_doc *d) {
    char path[] = "/tmp/gdn-junit-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    close(fd);
    char err[256] = "";
    char *text = NULL;
    if (junit_write(d, path, err, sizeof err) == 0) {
        FILE *f = fopen(path, "rb");
        if (f) {
            text = calloc(1, 1 << 16);
            if (text) fread(text, 1, (1 << 16) - 1, f);
            fclose(f);
        }
    } else {
        test_fail(__FILE__, __LINE__, "junit_write: %s", err);
    }
    unlink(path);
    return text;
}

TEST(junit_escapes_text_and_attributes) {
    junit_doc *d = junit_new("esc <&\"'>");
    CHECK(d != NULL);
    if (!d) return;
    CHECK(junit_case(d, "gdnbench.k", "a<b&c\"d'e>", 0.5, JUNIT_FAILURE, "why <&\"'>\x01 end", "x<y & z>\"q'\nnext\x02") == 0);
    char *t = written(d);
    CHECK(t != NULL);
    if (t) {
        CHECK_MSG(strstr(t, "name=\"a&lt;b&amp;c&quot;d&apos;e&gt;\""), "testcase name not escaped: %s", t);
        CHECK_MSG(strstr(t, "<testsuites name=\"esc &lt;&amp;&quot;&apos;&gt;\""), "document name: %s", t);
        CHECK_MSG(strstr(t, "message=\"why &lt;&amp;&quot;&apos;&gt;? end\""), "message (control char '?'): %s", t);
        CHECK_MSG(strstr(t, ">x&lt;y &amp; z&gt;\"q'\nnext?</failure>"), "body text: %s", t);
        /* nothing raw: every '<' starts markup, every '&' an entity */
        for (const char *p = strchr(t, '&'); p; p = strchr(p + 1, '&'))
            CHECK_MSG(!strncmp(p, "&amp;", 5) || !strncmp(p, "&lt;", 4) || !strncmp(p, "&gt;", 4) ||
                          !strncmp(p, "&quot;", 6) || !strncmp(p, "&apos;", 6),
                      "raw '&' at %.20s", p);
    }
    free(t);
    junit_free(d);
}

TEST(junit_replaces_bytes_that_are_not_utf8) {
    junit_doc *d = junit_new("bytes");
    CHECK(d != NULL);
    if (!d) return;
    /* a Latin-1 e-acute, a truncated sequence at the end, and a real U+00E9 kept */
    CHECK(junit_case(d, "gdnbench.k", "caf\xe9 \xc3\xa9", 0, JUNIT_FAILURE, "cut \xe2\x82", "ok") == 0);
    char *t = written(d);
    CHECK(t != NULL);
    if (t) {
        CHECK_MSG(utf8_invalid_offset(t, strlen(t)) < 0, "not UTF-8: %s", t);
        CHECK_MSG(strstr(t, "name=\"caf\xef\xbf\xbd \xc3\xa9\""), "name: %s", t);
        CHECK_MSG(strstr(t, "message=\"cut \xef\xbf\xbd\xef\xbf\xbd\""), "message: %s", t);
    }
    free(t);
    junit_free(d);
}

TEST(junit_counts_add_up_per_suite_and_document) {
    junit_doc *d = junit_new("counts");
    CHECK(d != NULL);
    if (!d) return;
    CHECK(junit_suite(d, "one") == 0);
    CHECK(junit_case(d, "c", "pass", 0.25, JUNIT_PASS, NULL, NULL) == 0);
    CHECK(junit_case(d, "c", "fail", 0.25, JUNIT_FAILURE, "bad", NULL) == 0);
    CHECK(junit_suite(d, "two") == 0);
    CHECK(junit_case(d, "c", "error", 0, JUNIT_ERROR, "could not run", "details") == 0);
    CHECK(junit_case(d, "c", "skip", 0, JUNIT_SKIPPED, "unsupported", NULL) == 0);
    CHECK(junit_case(d, "c", "skip without a reason", 0, JUNIT_SKIPPED, NULL, NULL) == 0);
    char *t = written(d);
    CHECK(t != NULL);
    if (t) {
        CHECK_MSG(strstr(t, "<testsuites name=\"counts\" tests=\"5\" failures=\"1\" errors=\"1\" skipped=\"2\" time=\"0.500000\""),
                  "document counts: %s", t);
        CHECK_MSG(strstr(t, "<testsuite name=\"one\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.500000\""),
                  "suite one: %s", t);
        CHECK_MSG(strstr(t, "<testsuite name=\"two\" tests=\"3\" failures=\"0\" errors=\"1\" skipped=\"2\" time=\"0.000000\""),
                  "suite two: %s", t);
        CHECK_MSG(strstr(t, "<skipped message=\"(no reason given)\"/>"), "a skip always says why: %s", t);
        CHECK_MSG(strstr(t, "<error message=\"could not run\" type=\"error\">details</error>"), "error: %s", t);
    }
    free(t);
    junit_free(d);
}

TEST(junit_record_failure_names_check_and_finding_lines) {
    run_record ok, bad, err;
    report_test_record(&ok, 3, 10.0);
    report_test_record(&bad, 3, 10.0);
    report_test_record(&err, 0, 1.0);
    ok.status = RUN_PASS;
    for (int i = 0; i < ok.nchecks; i++) ok.checks[i].pass = 1;
    err.status = RUN_ERROR;
    snprintf(err.error, sizeof err.error, "kernel failed to compile: x.metal:3: error");
    bad.findings = calloc(1, sizeof *bad.findings);
    CHECK(bad.findings != NULL);
    if (!bad.findings) return;
    bad.nfindings = 1;
    dev_finding *f = &bad.findings[0];
    f->kind = DEV_FIND_OOB;
    snprintf(f->kernel, sizeof f->kernel, "kkt");
    snprintf(f->memory, sizeof f->memory, "device");
    f->nsites = 1;
    snprintf(f->site[0].file, sizeof f->site[0].file, "their_kkt.metal");
    f->site[0].line = 42;
    snprintf(f->site[0].text, sizeof f->site[0].text, "A[i] = x;");
    snprintf(f->site[0].access, sizeof f->site[0].access, "write");
    f->occurrences = f->threads = f->threadgroups = 1;
    junit_doc *d = junit_new("records");
    CHECK(d != NULL);
    if (!d) return;
    CHECK(junit_add_record(d, &ok, -1) == 0);
    CHECK(junit_add_record(d, &bad, 2.0) == 0);
    CHECK(junit_add_record(d, &err, -1) == 0);
    char *t = written(d);
    CHECK(t != NULL);
    if (t) {
        CHECK_MSG(strstr(t, "tests=\"3\" failures=\"1\" errors=\"1\" skipped=\"0\""), "counts: %s", t);
        const rec_check *failed = NULL;
        for (int i = 0; i < bad.nchecks && !failed; i++)
            if (!bad.checks[i].pass) failed = &bad.checks[i];
        CHECK(failed != NULL);
        /* the message is the record's own line when it has one, else the failed check */
        char want[600];
        snprintf(want, sizeof want, "<failure message=\"%s (and 1 more: see the details)\" type=\"check\">", bad.error);
        CHECK_MSG(strstr(t, want), "the message (%s): %s", want, t);
        snprintf(want, sizeof want, "\n%s vs %s: max_abs", failed ? failed->output : "?", failed ? failed->reference : "?");
        CHECK_MSG(strstr(t, want), "the failed check in the body (%s): %s", want, t);
        CHECK_MSG(strstr(t, "their_kkt.metal:42"), "the finding's source line in the body: %s", t);
        CHECK_MSG(strstr(t, "<error message=\"kernel failed to compile: x.metal:3: error\" type=\"error\""),
                  "the record's error: %s", t);
        CHECK_MSG(strstr(t, "classname=\"gdnbench.") && strstr(t, "time=\"2.000000\""), "classname and time: %s", t);
    }
    free(t);
    junit_free(d);
    run_record_free(&ok);
    run_record_free(&bad);
    run_record_free(&err);
}
