/* json_build.h — building a cJSON document when any allocation may fail.
 *
 * Every helper takes the document's json_build, whose ok flag the first failure
 * clears for good.  Calls after a failure are harmless (they add nothing useful), so a
 * writer builds straight through and checks ok once at the end, where it frees the
 * half-built document and reports running out of memory.  Numbers that are not finite
 * are written as null: JSON has no NaN or infinity.  Used by the JSON report, the
 * validate document and the Google Benchmark writer. */
#ifndef GDN_REPORT_JSON_BUILD_H
#define GDN_REPORT_JSON_BUILD_H

#include <cjson/cJSON.h>

typedef struct json_build {
    int ok; /* 1 until an allocation or insertion fails */
} json_build;

/* item itself; ok cleared when it is NULL (its creation failed). */
cJSON *jb_check(json_build *b, cJSON *item);
/* obj[key] = item, taking item (freed when the insertion fails). */
void jb_put(json_build *b, cJSON *obj, const char *key, cJSON *item);
/* item at the end of the array arr, taking item likewise. */
void jb_append(json_build *b, cJSON *arr, cJSON *item);
/* A new object or array at obj[key] or at the end of arr; NULL once ok is cleared. */
cJSON *jb_put_obj(json_build *b, cJSON *obj, const char *key);
cJSON *jb_put_array(json_build *b, cJSON *obj, const char *key);
cJSON *jb_append_obj(json_build *b, cJSON *arr);

void jb_num(json_build *b, cJSON *obj, const char *key, double v);
/* null unless known (and finite). */
void jb_num_or_null(json_build *b, cJSON *obj, const char *key, double v, int known);
void jb_str(json_build *b, cJSON *obj, const char *key, const char *s);
/* null when s is NULL or empty. */
void jb_str_or_null(json_build *b, cJSON *obj, const char *key, const char *s);
void jb_bool(json_build *b, cJSON *obj, const char *key, int v);
void jb_null(json_build *b, cJSON *obj, const char *key);

#endif
