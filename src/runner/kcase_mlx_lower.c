/* kcase_mlx_lower.c — an "mlx_metal_kernel" case turned into a plain case the runner
 * already knows how to run: the MSL text MLX would generate around the body
 * (msl/mlx_kernel.h) as the case's source, MLX's host name as its function, and one
 * value buffer per generated `<input>_shape` (int32), `<input>_strides` (int64, row
 * major, in elements) and `<input>_ndim` (int32) parameter, taken from the input
 * buffer's own shape, as MLX passes them.  The input dtypes, ranks and element counts
 * the signature depends on come from the buffers' contents (a file's own header). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcase/kcase_data.h"
#include "msl/mlx_kernel.h"
#include "runner/kcase_run.h"

/* MLX's own utils.h under one of the case's include directories: the body may use
 * what it defines (elem_to_loc, ...), so the text includes it as MLX compiles it. */
static int has_mlx_utils(const kc_case *c) {
    int found = 0;
    for (int i = 0; i < c->nincludes && !found; i++) {
        char *dir = kc_path(c, c->includes[i]);
        if (!dir) continue;
        size_t n = strlen(dir) + 48;
        char *p = malloc(n);
        if (p) {
            snprintf(p, n, "%s/mlx/backend/metal/kernels/utils.h", dir);
            FILE *f = fopen(p, "rb");
            found = f != NULL;
            if (f) fclose(f);
        }
        free(p);
        free(dir);
    }
    return found;
}

/* The shape of each named buffer (its contents: a file's header, or dtype + shape). */
static int array_of(const kc_case *c, const char *name, int output, uint64_t seed, mlxk_array *a, kc_tensor *t,
                    char *err, size_t errlen) {
    int i = kc_find_buffer(c, name);
    if (i < 0) return snprintf(err, errlen, "%s: mlx_metal_kernel: \"%s\" is not in \"buffers\"", c->path, name), -1;
    if (c->bufs[i].kind == KC_BUF_STRUCT)
        return snprintf(err, errlen, "%s: buffers.%s: an mlx_metal_kernel array cannot be a struct: give dtype and "
                        "shape, a file or a value", c->path, name), -1;
    if (kc_buffer_contents(c, i, seed, KC_POISON_NAN, output, t, err, errlen) < 0) return -1;
    a->name = c->bufs[i].name;
    a->dtype = kc_dtype_name(t->dtype);
    a->ndim = t->ndim;
    a->nelem = t->numel;
    return 0;
}

static int add_values(kc_case *L, const char *name, kc_dtype dt, const double *v, int n) {
    kc_buffer *b = kc_add_buffer(L, name);
    if (!b || !(b->value.v = malloc((size_t)(n ? n : 1) * sizeof *v))) return -1;
    b->kind = KC_BUF_VALUE;
    b->has_dtype = 1;
    b->dtype = dt;
    b->readonly = 1;
    memcpy(b->value.v, v, (size_t)n * sizeof *v);
    b->value.n = n;
    b->value.is_array = n != 1;
    return 0;
}

/* The value buffer of one generated shape/strides/ndim parameter of input t. */
static int add_param_buffer(kc_case *L, const mlxk_param *p, const kc_tensor *t) {
    double v[TENSOR_MAX_DIMS];
    int n = t->ndim;
    if (p->kind == MLXK_PARAM_NDIM) {
        v[0] = t->ndim;
        return add_values(L, p->name, KC_I32, v, 1);
    }
    double stride = 1;
    for (int d = n - 1; d >= 0; d--) {
        v[d] = p->kind == MLXK_PARAM_SHAPE ? (double)t->shape[d] : stride;
        stride *= (double)t->shape[d];
    }
    return add_values(L, p->name, p->kind == MLXK_PARAM_SHAPE ? KC_I32 : KC_I64, v, n);
}

static void fill_targs(const kc_mlx *m, mlxk_spec *s) {
    for (int i = 0; i < m->ntmpl && i < MLXK_MAX_NAMES; i++) {
        const kc_template_arg *a = &m->tmpl[i];
        s->targs[i].name = a->name;
        s->targs[i].kind = a->kind == 0 ? MLXK_TARG_DTYPE : a->kind == 1 ? MLXK_TARG_INT : MLXK_TARG_BOOL;
        s->targs[i].dtype = a->dtype;
        s->targs[i].value = a->ivalue;
        s->ntargs = i + 1;
    }
}

/* Source, function and parameter buffers of the generated kernel into L. */
static int apply(kc_case *L, const mlxk_kernel *k, const kc_tensor *in, char *err, size_t errlen) {
    free(L->source_text);
    free(L->source_path);
    L->source_path = NULL;
    free(L->launches[0].function);
    L->source_text = kc_strdup(k->text);
    L->launches[0].function = kc_strdup(k->function);
    if (!L->source_text || !L->launches[0].function) return snprintf(err, errlen, "out of memory"), -1;
    for (int i = 0; i < k->nparams; i++) {
        const mlxk_param *p = &k->params[i];
        if (p->kind == MLXK_PARAM_INPUT || p->kind == MLXK_PARAM_OUTPUT) continue;
        if (kc_find_buffer(L, p->name) >= 0)
            return snprintf(err, errlen, "%s: buffers.%s: MLX generates a parameter of that name from input '%s': "
                            "drop the buffer or rename it", L->path, p->name, L->mlx->input_names[p->of]), -1;
        if (add_param_buffer(L, p, &in[p->of]) < 0) return snprintf(err, errlen, "out of memory"), -1;
    }
    return 0;
}

kc_case *kc_mlx_lower(const kc_case *c, uint64_t seed, char *err, size_t errlen) {
    const kc_mlx *m = c->mlx;
    mlxk_spec *s = calloc(1, sizeof *s);
    kc_tensor *t = calloc(2 * MLXK_MAX_NAMES, sizeof *t);
    mlxk_kernel k;
    memset(&k, 0, sizeof k);
    kc_case *L = NULL;
    char *json = NULL, msg[512];
    int ok = 0;
    if (!s || !t) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    s->name = m->name;
    s->source = m->source;
    s->header = m->header && m->header[0] ? m->header : NULL;
    s->ensure_row_contiguous = m->ensure_row_contiguous;
    s->atomic_outputs = m->atomic_outputs;
    s->preamble = has_mlx_utils(c) ? MLXK_PREAMBLE_MLX_UTILS : MLXK_PREAMBLE_OWN;
    fill_targs(m, s);
    for (int i = 0; i < m->ninputs && i < MLXK_MAX_NAMES; i++, s->ninputs++)
        if (array_of(c, m->input_names[i], 0, seed, &s->inputs[i], &t[i], err, errlen) < 0) goto done;
    for (int i = 0; i < m->noutputs && i < MLXK_MAX_NAMES; i++, s->noutputs++)
        if (array_of(c, m->output_names[i], 1, seed, &s->outputs[i], &t[MLXK_MAX_NAMES + i], err, errlen) < 0)
            goto done;
    if (mlxk_generate(s, &k, msg, sizeof msg) < 0) {
        snprintf(err, errlen, "%s: mlx_metal_kernel: %s", c->path, msg);
        goto done;
    }
    /* A deep copy through the printer and parser: the two forms are one case. */
    if (!(json = kc_to_json(c))) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (!(L = kc_parse(json, strlen(json), c->path, c->dir, err, errlen))) goto done;
    ok = L->nlaunches == 1 && apply(L, &k, t, err, errlen) == 0;
    if (L->nlaunches != 1) snprintf(err, errlen, "%s: mlx_metal_kernel: is one launch", c->path);
done:
    for (int i = 0; t && i < 2 * MLXK_MAX_NAMES; i++) kc_tensor_free(&t[i]);
    free(t);
    free(s);
    free(json);
    mlxk_kernel_free(&k);
    if (!ok) {
        kc_free(L);
        return NULL;
    }
    return L;
}
