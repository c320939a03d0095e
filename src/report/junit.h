/* junit.h — JUnit XML (`--junit FILE`), the test-report format GitLab, Jenkins,
 * Buildkite and GitHub's test-report actions read.
 *
 * A document is a list of test suites, each a list of test cases; a case passed, or
 * carries one failure (a check failed), error (could not run) or skipped element
 * with a one-line message and, for a failure or error, a body: the details a person
 * reads next (every failed check, the device's findings with their source lines).
 * Commands fill it from what they already built — run records (ops and kernel
 * cases), a validate report — or case by case (compare's pairs, validate of a kernel
 * case), then write it once; counts and times are summed by the writer, so they
 * always add up. */
#ifndef GDN_REPORT_JUNIT_H
#define GDN_REPORT_JUNIT_H

#include <stddef.h>

#include "runner/record.h"
#include "runner/validate_report.h"

typedef enum junit_outcome {
    JUNIT_PASS = 0,
    JUNIT_FAILURE,   /* ran; a check failed (or a comparison found a regression) */
    JUNIT_ERROR,     /* could not run */
    JUNIT_SKIPPED    /* not run, with the reason */
} junit_outcome;

typedef struct junit_doc junit_doc;

/* An empty document named name ("gdnbench kkt"); NULL when out of memory. */
junit_doc *junit_new(const char *name);
void junit_free(junit_doc *d);

/* Starts a test suite: the cases added next go into it.  0, or -1 (out of memory). */
int junit_suite(junit_doc *d, const char *name);

/* One test case in the current suite (one is started, named as the document, when
 * none is).  message: one line (NULL or "" for a pass); body: more lines, or NULL.
 * 0, or -1 (out of memory). */
int junit_case(junit_doc *d, const char *classname, const char *name, double seconds, junit_outcome outcome,
               const char *message, const char *body);

/* One test case for a run record (an op at a shape, or a kernel case): pass, a
 * failure listing every failed check, the determinism and the device's findings, or
 * an error with the record's error text.  seconds: the case's wall time. */
int junit_add_record(junit_doc *d, const run_record *r, double seconds);

/* One test case per case of a validate sweep (unsupported shapes and cases not run
 * after an error are skipped, with the reason). */
int junit_add_validate(junit_doc *d, const validate_report *vr);

/* The usual whole job for a command that built run records: a document named name
 * with one test case per record (times from the records), written to path.  0, or
 * -1 with err set. */
int junit_write_records(const char *path, const char *name, run_record *const *recs, int n, char *err,
                        size_t errlen);

/* Writes the document to path ("-" = stdout), through PATH.tmp renamed, like the JSON
 * report.  0, or -1 with a one-line message naming the file in err. */
int junit_write(const junit_doc *d, const char *path, char *err, size_t errlen);

#endif
