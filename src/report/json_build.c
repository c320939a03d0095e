/* json_build.c — the out-of-memory-checked cJSON helpers of json_build.h. */
#include <math.h>

#include "report/json_build.h"

cJSON *jb_check(json_build *b, cJSON *item) {
    if (!item) b->ok = 0;
    return item;
}

void jb_put(json_build *b, cJSON *obj, const char *key, cJSON *item) {
    if (!item) {
        b->ok = 0;
        return;
    }
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        b->ok = 0;
    }
}

void jb_append(json_build *b, cJSON *arr, cJSON *item) {
    if (!item || !cJSON_AddItemToArray(arr, item)) {
        cJSON_Delete(item);
        b->ok = 0;
    }
}

cJSON *jb_put_obj(json_build *b, cJSON *obj, const char *key) {
    cJSON *o = jb_check(b, cJSON_CreateObject());
    jb_put(b, obj, key, o);
    return b->ok ? o : NULL;
}

cJSON *jb_put_array(json_build *b, cJSON *obj, const char *key) {
    cJSON *a = jb_check(b, cJSON_CreateArray());
    jb_put(b, obj, key, a);
    return b->ok ? a : NULL;
}

cJSON *jb_append_obj(json_build *b, cJSON *arr) {
    cJSON *o = cJSON_CreateObject();
    jb_append(b, arr, o);
    return b->ok ? o : NULL;
}

void jb_num(json_build *b, cJSON *obj, const char *key, double v) {
    jb_put(b, obj, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

void jb_num_or_null(json_build *b, cJSON *obj, const char *key, double v, int known) {
    jb_put(b, obj, key, known && isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

void jb_str(json_build *b, cJSON *obj, const char *key, const char *s) { jb_put(b, obj, key, cJSON_CreateString(s)); }

void jb_str_or_null(json_build *b, cJSON *obj, const char *key, const char *s) {
    jb_put(b, obj, key, s && s[0] ? cJSON_CreateString(s) : cJSON_CreateNull());
}

void jb_bool(json_build *b, cJSON *obj, const char *key, int v) { jb_put(b, obj, key, cJSON_CreateBool(v != 0)); }

void jb_null(json_build *b, cJSON *obj, const char *key) { jb_put(b, obj, key, cJSON_CreateNull()); }
