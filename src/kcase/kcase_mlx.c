/* kcase_mlx.c — the "mlx_metal_kernel" key: a kernel body as written for MLX's
 * mx.fast.metal_kernel, with its input and output names and template arguments.  Only
 * read and checked here (every input and output must be a buffer of the case); the
 * signature MLX would generate is made where kernels are compiled. */
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase_json_util.h"

static const char *const mlx_keys[] = {"name", "source", "header", "input_names", "output_names", "template",
                                       "ensure_row_contiguous", "atomic_outputs", NULL};

static int name_list(kc_pctx *p, const cJSON *x, const char *path, char ***out, int *n) {
    char sub[KC_PATH_MAX];
    int m = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : -1;
    if (m < 0 || m > 31) return kc_perr(p, path, "must be an array of at most 31 buffer names");
    if (!(*out = calloc((size_t)(m ? m : 1), sizeof **out))) return kc_perr(p, path, "out of memory");
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        kc_idx(sub, path, i);
        if (kc_get_string(p, e, sub, &(*out)[i]) < 0) return -1;
        *n = i + 1;
        if (kc_find_buffer(p->c, (*out)[i]) < 0)
            return kc_perr(p, sub, "\"%.60s\" is not in \"buffers\": describe it there", (*out)[i]);
    }
    return 0;
}

static int parse_template(kc_pctx *p, const cJSON *x, const char *path, kc_mlx *m) {
    char sub[KC_PATH_MAX];
    if (kc_check_object(p, x, path, NULL) < 0) return -1;
    int n = cJSON_GetArraySize(x);
    if (!(m->tmpl = calloc((size_t)(n ? n : 1), sizeof *m->tmpl))) return kc_perr(p, path, "out of memory");
    for (const cJSON *e = x->child; e; e = e->next) {
        kc_template_arg *t = &m->tmpl[m->ntmpl++];
        kc_key(sub, path, e->string);
        if (!kc_is_identifier(e->string)) return kc_perr(p, sub, "is not a template parameter name");
        if (!(t->name = kc_strdup(e->string))) return kc_perr(p, sub, "out of memory");
        if (cJSON_IsString(e)) {
            kc_dtype dt;
            if (kc_dtype_parse(e->valuestring, &dt) < 0)
                return kc_perr(p, sub, "\"%.40s\" is not a dtype: use one of %s", e->valuestring, kc_dtype_list());
            t->kind = 0;
            if (!(t->dtype = kc_strdup(e->valuestring))) return kc_perr(p, sub, "out of memory");
        } else if (cJSON_IsBool(e)) {
            t->kind = 2;
            t->ivalue = cJSON_IsTrue(e);
        } else {
            t->kind = 1;
            if (kc_get_int(p, e, sub, INT32_MIN, INT32_MAX, &t->ivalue) < 0) return -1;
        }
    }
    return 0;
}

int kc_parse_mlx(kc_pctx *p, const cJSON *x, const char *path, kc_mlx **out) {
    char sub[KC_PATH_MAX];
    const cJSON *e;
    if (kc_check_object(p, x, path, mlx_keys) < 0) return -1;
    kc_mlx *m = calloc(1, sizeof *m);
    if (!m) return kc_perr(p, path, "out of memory");
    *out = m;
    m->ensure_row_contiguous = 1;
    static const char *const required[] = {"name", "source", "input_names", "output_names"};
    for (int i = 0; i < 4; i++) {
        kc_key(sub, path, required[i]);
        if (!cJSON_GetObjectItemCaseSensitive(x, required[i])) return kc_perr(p, sub, "is missing");
    }
    kc_key(sub, path, "name");
    if (kc_get_string(p, cJSON_GetObjectItemCaseSensitive(x, "name"), sub, &m->name) < 0) return -1;
    if (!kc_is_identifier(m->name)) return kc_perr(p, sub, "is not a kernel name (letters, digits, _)");
    kc_key(sub, path, "source");
    if (kc_get_string(p, cJSON_GetObjectItemCaseSensitive(x, "source"), sub, &m->source) < 0) return -1;
    kc_key(sub, path, "header");
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "header")) && kc_get_string(p, e, sub, &m->header) < 0) return -1;
    kc_key(sub, path, "input_names");
    if (name_list(p, cJSON_GetObjectItemCaseSensitive(x, "input_names"), sub, &m->input_names, &m->ninputs) < 0)
        return -1;
    kc_key(sub, path, "output_names");
    if (name_list(p, cJSON_GetObjectItemCaseSensitive(x, "output_names"), sub, &m->output_names, &m->noutputs) < 0)
        return -1;
    kc_key(sub, path, "template");
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "template")) && parse_template(p, e, sub, m) < 0) return -1;
    kc_key(sub, path, "ensure_row_contiguous");
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "ensure_row_contiguous")) &&
        kc_get_bool(p, e, sub, &m->ensure_row_contiguous) < 0)
        return -1;
    kc_key(sub, path, "atomic_outputs");
    if ((e = cJSON_GetObjectItemCaseSensitive(x, "atomic_outputs")) && kc_get_bool(p, e, sub, &m->atomic_outputs) < 0)
        return -1;
    return 0;
}
