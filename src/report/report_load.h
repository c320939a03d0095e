/* report_load.h — reading JSON reports (schema 1) back: files or directories of
 * *.json, each holding one record object or an array of them.
 *
 * compare and report work on the JSON (never on run_record), so these helpers
 * also give typed access to the fields they need, with null/absent handled. */
#ifndef GDN_REPORT_LOAD_H
#define GDN_REPORT_LOAD_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct report_item {
    const cJSON *rec;      /* one record object, owned by the set's documents */
    const char *file;      /* the file it came from */
} report_item;

typedef struct report_set {
    int n, cap;
    report_item *items;
    int ndocs, docs_cap;
    cJSON **docs;
    char **files;
} report_set;

/* Adds the records of path (a .json file, or a directory whose *.json files are read
 * in name order) to s.  Returns 0, or -1 with a one-line message naming the file:
 * unreadable, not JSON, not a record/array of records, or a schema other than 1. */
int report_set_load(report_set *s, const char *path, char *err, size_t errlen);
void report_set_free(report_set *s);

/* Field access: obj.a(.b) as string/number, or the fallback when absent or null. */
const char *rj_str(const cJSON *obj, const char *a, const char *b, const char *fallback);
double rj_num(const cJSON *obj, const char *a, const char *b, double fallback);

/* "B=1 T=4096 H=32" from the record's shape (dtypes left out). */
void rj_shape_str(const cJSON *rec, char *out, size_t n);

/* 1 when the record's machine state is marked (environment.marked: thermal state
 * not nominal, Low Power Mode, battery), with its marks joined by "; " into out. */
int rj_marked(const cJSON *rec, char *out, size_t n);
/* 1 when two records' machine states differ in what moves timings (thermal state
 * before and after the runs, Low Power Mode, power source), compared where both
 * record a field, with the differences into why ("power source ac in BASE, battery
 * in NEW").  *unknown = 1 when a field is recorded on one side only (an older
 * report, another platform): not a difference, but not a match either. */
int rj_machine_differs(const cJSON *a, const cJSON *b, const char *name_a, const char *name_b, char *why, size_t n,
                       int *unknown);

/* Timing samples of a record into a new array (caller frees); *n = count (0 with
 * NULL when there are none). Returns -1 only when memory runs out. */
int rj_samples(const cJSON *rec, double **out, int *n);

#endif
