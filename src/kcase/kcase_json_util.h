/* kcase_json_util.h — what the case parser's steps share (private to src/kcase): the
 * parse context, one-line errors naming the key path, and checked JSON readers. */
#ifndef GDN_KCASE_JSON_UTIL_H
#define GDN_KCASE_JSON_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kcase/kcase.h"

#define KC_PATH_MAX 256

typedef struct kc_pctx {
    const char *where;    /* the case file's name, first on every message */
    char *err;
    size_t errlen;
    kc_case *c;
} kc_pctx;

/* "WHERE: PATH: message"; returns -1. */
int kc_perr(kc_pctx *p, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* out = "base.key" (or "key" when base is empty); out = "base[i]". */
void kc_key(char *out, const char *base, const char *key);
void kc_idx(char *out, const char *base, int i);

/* obj must be a JSON object whose keys are all in known (NULL-ended) and none twice. */
int kc_check_object(kc_pctx *p, const cJSON *obj, const char *path, const char *const *known);

int kc_get_string(kc_pctx *p, const cJSON *x, const char *path, char **out);
int kc_get_bool(kc_pctx *p, const cJSON *x, const char *path, int *out);
/* A finite number. */
int kc_get_number(kc_pctx *p, const cJSON *x, const char *path, double *out);
/* An integer in [lo, hi]. */
int kc_get_int(kc_pctx *p, const cJSON *x, const char *path, int64_t lo, int64_t hi, int64_t *out);
/* A number or a boolean (1/0), or an array of them (is_array set), each fitting dt
 * when dt >= 0. */
int kc_get_values(kc_pctx *p, const cJSON *x, const char *path, int dt, kc_values *out);
/* An array of 1..3 integers in [1, 2^32-1] into v[3] (missing ones 1). */
int kc_get_dims3(kc_pctx *p, const cJSON *x, const char *path, uint32_t v[3]);

/* Parsing steps of other files. */
int kc_parse_buffer(kc_pctx *p, const cJSON *x, const char *path, kc_buffer *b);
int kc_parse_mlx(kc_pctx *p, const cJSON *x, const char *path, kc_mlx **out);

#endif
