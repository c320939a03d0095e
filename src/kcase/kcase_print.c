/* kcase_print.c — a kc_case back to case-file JSON (`gdnbench kernel ... --print-case`):
 * the flag form's equivalent file, and the normal form the fuzz test reads back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kcase/kcase.h"

static cJSON *values_json(const kc_values *v) {
    if (!v->is_array) return cJSON_CreateNumber(v->n ? v->v[0] : 0);
    return cJSON_CreateDoubleArray(v->v, v->n);
}

static cJSON *dims_json(const uint32_t d[3]) {
    double v[3] = {d[0], d[1], d[2]};
    return cJSON_CreateDoubleArray(v, 3);
}

static cJSON *dispatch_json(const kc_dispatch *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, d->mode == KC_DISPATCH_GRID ? "grid" : "threadgroups", dims_json(d->size));
    cJSON_AddItemToObject(o, "threadgroup", dims_json(d->tg));
    if (d->ntgmem) {
        cJSON *m = cJSON_AddObjectToObject(o, "threadgroup_memory");
        for (int i = 0; i < d->ntgmem; i++) {
            char k[16];
            snprintf(k, sizeof k, "%d", d->tgmem[i].index);
            cJSON_AddNumberToObject(m, k, d->tgmem[i].bytes);
        }
    }
    return o;
}

static void add_launch(cJSON *o, const kc_launch *l) {
    if (l->function) cJSON_AddStringToObject(o, "function", l->function);
    if (l->nconstants) {
        cJSON *k = cJSON_AddObjectToObject(o, "constants");
        for (int i = 0; i < l->nconstants; i++) {
            const kc_constant *c = &l->constants[i];
            char idx[16];
            snprintf(idx, sizeof idx, "%d", c->index);
            const char *key = c->name ? c->name : idx;
            if (!strcmp(c->value, "true") || !strcmp(c->value, "false"))
                cJSON_AddBoolToObject(k, key, c->value[0] == 't');
            else
                cJSON_AddNumberToObject(k, key, strtod(c->value, NULL));
        }
    }
    cJSON_AddItemToObject(o, "dispatch", dispatch_json(&l->dispatch));
    if (l->nbinds) {
        cJSON *b = cJSON_AddObjectToObject(o, "bind");
        for (int i = 0; i < l->nbinds; i++) cJSON_AddStringToObject(b, l->binds[i].param, l->binds[i].buffer);
    }
}

static cJSON *init_json(const kc_buffer *b) {
    static const char *const names[] = {"zeros", "poison", "fill", "arange", "uniform", "normal"};
    if (b->init == KC_INIT_ZEROS || b->init == KC_INIT_POISON) return cJSON_CreateString(names[b->init]);
    cJSON *o = cJSON_CreateObject();
    if (b->init == KC_INIT_FILL) cJSON_AddNumberToObject(o, "fill", b->init_arg[0]);
    else cJSON_AddItemToObject(o, names[b->init], cJSON_CreateDoubleArray(b->init_arg, 2));
    return o;
}

static cJSON *expect_json(const kc_expect *e) {
    static const char *const tol[] = {"atol", "rtol", "rel_l2", "ulp"};
    const double val[] = {e->atol, e->rtol, e->rel_l2, e->ulp};
    cJSON *o = cJSON_CreateObject();
    if (e->kind == KC_EXPECT_FILE) {
        cJSON_AddStringToObject(o, "file", e->file);
        if (e->tensor) cJSON_AddStringToObject(o, "tensor", e->tensor);
    } else if (e->kind == KC_EXPECT_VALUE) {
        cJSON_AddItemToObject(o, "value", values_json(&e->value));
    } else {
        cJSON_AddStringToObject(o, "backend", e->backend);
    }
    for (int i = 0; i < 4; i++)
        if (e->has & (1u << i)) cJSON_AddNumberToObject(o, tol[i], val[i]);
    return o;
}

/* Struct fields as written: numbers, nested objects, arrays of objects. */
static cJSON *fields_json(const kc_field *f, int n) {
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        cJSON *v;
        if (f[i].kind == KC_FIELD_STRUCT) {
            v = fields_json(f[i].sub, f[i].nsub);
        } else if (f[i].kind == KC_FIELD_STRUCTS) {
            v = cJSON_CreateArray();
            for (int k = 0; k < f[i].nsub; k++) cJSON_AddItemToArray(v, fields_json(f[i].sub[k].sub, f[i].sub[k].nsub));
        } else {
            v = values_json(&f[i].value);
        }
        cJSON_AddItemToObject(o, f[i].name, v);
    }
    return o;
}

static cJSON *buffer_json(const kc_buffer *b) {
    cJSON *o = cJSON_CreateObject();
    if (b->has_dtype) cJSON_AddStringToObject(o, "dtype", kc_dtype_name(b->dtype));
    if (b->has_shape) {
        double s[TENSOR_MAX_DIMS];
        for (int i = 0; i < b->ndim; i++) s[i] = (double)b->shape[i];
        cJSON_AddItemToObject(o, "shape", cJSON_CreateDoubleArray(s, b->ndim));
    }
    if (b->kind == KC_BUF_ARRAY && b->has_init) cJSON_AddItemToObject(o, "init", init_json(b));
    if (b->kind == KC_BUF_FILE) {
        cJSON_AddStringToObject(o, "file", b->file);
        if (b->tensor) cJSON_AddStringToObject(o, "tensor", b->tensor);
    }
    if (b->kind == KC_BUF_VALUE) cJSON_AddItemToObject(o, "value", values_json(&b->value));
    if (b->kind == KC_BUF_STRUCT) {
        cJSON_AddItemToObject(o, "struct", fields_json(b->fields, b->nfields));
    }
    if (b->index >= 0) cJSON_AddNumberToObject(o, "index", b->index);
    if (b->readonly) cJSON_AddBoolToObject(o, "readonly", 1);
    if (b->expect.kind != KC_EXPECT_NONE) cJSON_AddItemToObject(o, "expect", expect_json(&b->expect));
    return o;
}

static cJSON *mlx_json(const kc_mlx *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "source", m->source);
    if (m->header) cJSON_AddStringToObject(o, "header", m->header);
    cJSON_AddItemToObject(o, "input_names", cJSON_CreateStringArray((const char *const *)m->input_names, m->ninputs));
    cJSON_AddItemToObject(o, "output_names", cJSON_CreateStringArray((const char *const *)m->output_names, m->noutputs));
    if (m->ntmpl) {
        cJSON *t = cJSON_AddObjectToObject(o, "template");
        for (int i = 0; i < m->ntmpl; i++) {
            const kc_template_arg *a = &m->tmpl[i];
            if (a->kind == 0) cJSON_AddStringToObject(t, a->name, a->dtype);
            else if (a->kind == 2) cJSON_AddBoolToObject(t, a->name, (int)a->ivalue);
            else cJSON_AddNumberToObject(t, a->name, (double)a->ivalue);
        }
    }
    cJSON_AddBoolToObject(o, "ensure_row_contiguous", m->ensure_row_contiguous);
    cJSON_AddBoolToObject(o, "atomic_outputs", m->atomic_outputs);
    return o;
}

static void add_sources(cJSON *o, const kc_case *c) {
    if (c->source_path) cJSON_AddStringToObject(o, "source", c->source_path);
    else if (c->source_text) cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "source"), "text", c->source_text);
    if (c->nincludes) cJSON_AddItemToObject(o, "include", cJSON_CreateStringArray((const char *const *)c->includes, c->nincludes));
    if (c->ndefines) {
        cJSON *d = cJSON_AddObjectToObject(o, "define");
        for (int i = 0; i < c->ndefines; i++) cJSON_AddStringToObject(d, c->defines[i].name, c->defines[i].value);
    }
}

char *kc_to_json(const kc_case *c) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "case", 1);
    cJSON_AddStringToObject(o, "name", c->name ? c->name : "");
    add_sources(o, c);
    if (c->mlx) cJSON_AddItemToObject(o, "mlx_metal_kernel", mlx_json(c->mlx));
    if (c->sequence) {
        cJSON *a = cJSON_AddArrayToObject(o, "dispatches");
        for (int i = 0; i < c->nlaunches; i++) {
            cJSON *l = cJSON_CreateObject();
            add_launch(l, &c->launches[i]);
            cJSON_AddItemToArray(a, l);
        }
    } else if (c->nlaunches) {
        add_launch(o, &c->launches[0]);
    }
    cJSON *bufs = cJSON_AddObjectToObject(o, "buffers");
    for (int i = 0; i < c->nbufs; i++) cJSON_AddItemToObject(bufs, c->bufs[i].name, buffer_json(&c->bufs[i]));
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        memcpy(out + n, "\n", 2);
    }
    cJSON_free(text);
    return out;
}
