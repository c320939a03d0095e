/* kcase_json_util.c — checked readers of JSON values for the case parser: each wrong
 * type or range is one line naming the key path and the fix. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase_json_util.h"

int kc_perr(kc_pctx *p, const char *path, const char *fmt, ...) {
    if (!p->err || !p->errlen) return -1;
    int n = snprintf(p->err, p->errlen, "%s: %s%s", p->where, path, *path ? ": " : "");
    if (n < 0) n = 0;
    if ((size_t)n < p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    for (char *s = p->err; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
    return -1;
}

void kc_key(char *out, const char *base, const char *key) {
    if (*base) snprintf(out, KC_PATH_MAX, "%s.%.120s", base, key);
    else snprintf(out, KC_PATH_MAX, "%.120s", key);
}

void kc_idx(char *out, const char *base, int i) { snprintf(out, KC_PATH_MAX, "%s[%d]", base, i); }

static const char *json_type_name(const cJSON *x) {
    if (cJSON_IsObject(x)) return "an object";
    if (cJSON_IsArray(x)) return "an array";
    if (cJSON_IsString(x)) return "a string";
    if (cJSON_IsNumber(x)) return "a number";
    if (cJSON_IsBool(x)) return "a boolean";
    if (cJSON_IsNull(x)) return "null";
    return "not a JSON value";
}

int kc_check_object(kc_pctx *p, const cJSON *obj, const char *path, const char *const *known) {
    if (!cJSON_IsObject(obj)) return kc_perr(p, path, "must be an object, not %s", json_type_name(obj));
    for (const cJSON *k = obj->child; k; k = k->next) {
        int ok = 0;
        for (int i = 0; known && known[i] && !ok; i++) ok = strcmp(k->string, known[i]) == 0;
        if (known && !ok) {
            char list[512] = "";
            for (int i = 0; known[i]; i++) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", known[i]);
            }
            return kc_perr(p, path, "unknown key \"%.80s\" (known keys: %s)", k->string, list);
        }
        for (const cJSON *j = obj->child; j != k; j = j->next)
            if (strcmp(j->string, k->string) == 0)
                return kc_perr(p, path, "key \"%.80s\" is given twice: keep one", k->string);
    }
    return 0;
}

int kc_is_identifier(const char *s) {
    if (!s || !*s || strlen(s) > 63) return 0;
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return 0;
    for (const char *q = s + 1; *q; q++)
        if (!(*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            return 0;
    return 1;
}

int kc_get_string(kc_pctx *p, const cJSON *x, const char *path, char **out) {
    if (!cJSON_IsString(x)) return kc_perr(p, path, "must be a string, not %s", json_type_name(x));
    if (strlen(x->valuestring) > 65536) return kc_perr(p, path, "is longer than 65536 bytes");
    free(*out);
    *out = kc_strdup(x->valuestring);
    return *out ? 0 : kc_perr(p, path, "out of memory");
}

int kc_get_bool(kc_pctx *p, const cJSON *x, const char *path, int *out) {
    if (!cJSON_IsBool(x)) return kc_perr(p, path, "must be true or false, not %s", json_type_name(x));
    *out = cJSON_IsTrue(x);
    return 0;
}

int kc_get_number(kc_pctx *p, const cJSON *x, const char *path, double *out) {
    if (!cJSON_IsNumber(x)) return kc_perr(p, path, "must be a number, not %s", json_type_name(x));
    if (!isfinite(x->valuedouble)) return kc_perr(p, path, "must be a finite number");
    *out = x->valuedouble;
    return 0;
}

int kc_get_int(kc_pctx *p, const cJSON *x, const char *path, int64_t lo, int64_t hi, int64_t *out) {
    double v;
    if (!cJSON_IsNumber(x)) return kc_perr(p, path, "must be an integer, not %s", json_type_name(x));
    v = x->valuedouble;
    if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi)
        return kc_perr(p, path, "must be an integer from %lld to %lld, not %.17g", (long long)lo, (long long)hi, v);
    *out = (int64_t)v;
    return 0;
}

static int one_value(kc_pctx *p, const cJSON *x, const char *path, int dt, double *out) {
    if (cJSON_IsBool(x)) *out = cJSON_IsTrue(x);
    else if (kc_get_number(p, x, path, out) < 0) return -1;
    if (dt >= 0 && !kc_value_fits((kc_dtype)dt, *out))
        return kc_perr(p, path, "%.17g is not a %s value: give one in the type's range%s", *out,
                       kc_dtype_name((kc_dtype)dt), dt == KC_BOOL ? " (true, false, 1 or 0)" : ", a whole number");
    return 0;
}

int kc_get_values(kc_pctx *p, const cJSON *x, const char *path, int dt, kc_values *out) {
    char sub[KC_PATH_MAX];
    int n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : 1;
    if (cJSON_IsArray(x) && n == 0) return kc_perr(p, path, "is an empty array: give at least one value");
    if (n > (1 << 24)) return kc_perr(p, path, "has more than 16777216 values: use a file");
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) return kc_perr(p, path, "out of memory");
    if (!cJSON_IsArray(x)) {
        if (one_value(p, x, path, dt, &v[0]) < 0) return free(v), -1;
    } else {
        int i = 0;
        for (const cJSON *e = x->child; e; e = e->next, i++) {
            kc_idx(sub, path, i);
            if (one_value(p, e, sub, dt, &v[i]) < 0) return free(v), -1;
        }
    }
    free(out->v);
    out->v = v;
    out->n = n;
    out->is_array = cJSON_IsArray(x);
    return 0;
}

int kc_get_dims3(kc_pctx *p, const cJSON *x, const char *path, uint32_t v[3]) {
    char sub[KC_PATH_MAX];
    int n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : 0;
    if (!cJSON_IsArray(x) || n < 1 || n > 3)
        return kc_perr(p, path, "must be an array of 1 to 3 positive integers, such as [256, 1, 1]");
    v[0] = v[1] = v[2] = 1;
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        int64_t d;
        kc_idx(sub, path, i);
        if (kc_get_int(p, e, sub, 1, 4294967295LL, &d) < 0) return -1;
        v[i] = (uint32_t)d;
    }
    return 0;
}
