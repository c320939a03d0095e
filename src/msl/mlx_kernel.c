/* mlx_kernel.c — the signature MLX's `mx.fast.metal_kernel` wraps a body in
 * (rules in mlx_kernel.h), and the table of buffer parameters it declares, so
 * the runner can bind `<name>_shape/_strides/_ndim` from the input's own shape. */
#include "msl/mlx_kernel.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msl/msl_lex.h"

/* MLX's get_type_string for the case.md dtypes. */
static const struct {
    const char *dtype, *msl;
} type_names[] = {
    {"float32", "float"},       {"float16", "float16_t"}, {"bfloat16", "bfloat16_t"},
    {"int8", "int8_t"},         {"uint8", "uint8_t"},     {"int16", "int16_t"},
    {"uint16", "uint16_t"},     {"int32", "int32_t"},     {"uint32", "uint32_t"},
    {"int64", "int64_t"},       {"uint64", "uint64_t"},   {"bool", "bool"},
};

/* MLX's list of thread attributes a body may name, in MLX's order. */
static const struct {
    const char *name, *type;
} attributes[] = {
    {"dispatch_quadgroups_per_threadgroup", "uint"},
    {"dispatch_simdgroups_per_threadgroup", "uint"},
    {"dispatch_threads_per_threadgroup", "uint3"},
    {"grid_origin", "uint3"},
    {"grid_size", "uint3"},
    {"quadgroup_index_in_threadgroup", "uint"},
    {"quadgroups_per_threadgroup", "uint"},
    {"simdgroup_index_in_threadgroup", "uint"},
    {"simdgroups_per_threadgroup", "uint"},
    {"thread_execution_width", "uint"},
    {"thread_index_in_quadgroup", "uint"},
    {"thread_index_in_simdgroup", "uint"},
    {"thread_index_in_threadgroup", "uint"},
    {"thread_position_in_grid", "uint3"},
    {"thread_position_in_threadgroup", "uint3"},
    {"threadgroup_position_in_grid", "uint3"},
    {"threadgroups_per_grid", "uint3"},
    {"threads_per_grid", "uint3"},
    {"threads_per_simdgroup", "uint"},
    {"threads_per_threadgroup", "uint3"},
};
#define NATTRS ((int)(sizeof attributes / sizeof attributes[0]))

/* MLX passes inputs with fewer elements than this in the constant address space. */
enum { MAX_CONSTANT_ARRAY_SIZE = 8 };

const char *mlxk_type_name(const char *dtype) {
    if (!dtype) return NULL;
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (strcmp(type_names[i].dtype, dtype) == 0) return type_names[i].msl;
    return NULL;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int is_ident(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* Does the body name `<name><suffix>`?  A plain substring search, as MLX's. */
static int body_mentions(const char *body, const char *name, const char *suffix) {
    char word[96];
    snprintf(word, sizeof word, "%s%s", name, suffix);
    return strstr(body, word) != NULL;
}

static int check_spec(const mlxk_spec *s, char *err, size_t errlen) {
    if (!is_ident(s->name)) return fail(err, errlen, "mlx_metal_kernel.name must be an identifier");
    if (!s->source) return fail(err, errlen, "mlx_metal_kernel.source is missing");
    if (s->noutputs < 1) return fail(err, errlen, "mlx_metal_kernel.output_names must name at least one output");
    if (s->ninputs < 0 || s->ninputs > MLXK_MAX_NAMES || s->noutputs > MLXK_MAX_NAMES || s->ntargs < 0 ||
        s->ntargs > MLXK_MAX_NAMES)
        return fail(err, errlen, "mlx_metal_kernel: at most %d inputs, outputs and template arguments each",
                    MLXK_MAX_NAMES);
    for (int i = 0; i < s->ninputs + s->noutputs; i++) {
        const mlxk_array *a = i < s->ninputs ? &s->inputs[i] : &s->outputs[i - s->ninputs];
        const char *what = i < s->ninputs ? "input_names" : "output_names";
        if (!is_ident(a->name) || strlen(a->name) > 60)
            return fail(err, errlen, "mlx_metal_kernel.%s: '%s' is not an identifier of at most 60 characters",
                        what, a->name ? a->name : "");
        if (!mlxk_type_name(a->dtype))
            return fail(err, errlen, "buffers.%s.dtype: '%s' is not a dtype (float32 float16 bfloat16 int8 uint8 "
                        "int16 uint16 int32 uint32 int64 uint64 bool)", a->name, a->dtype ? a->dtype : "");
        if (i < s->ninputs && (a->ndim < 0 || a->ndim > MLXK_MAX_DIMS))
            return fail(err, errlen, "buffers.%s.shape: %d dimensions; at most %d", a->name, a->ndim, MLXK_MAX_DIMS);
    }
    for (int i = 0; i < s->ntargs; i++) {
        const mlxk_targ *t = &s->targs[i];
        if (!is_ident(t->name))
            return fail(err, errlen, "mlx_metal_kernel.template: '%s' is not an identifier", t->name ? t->name : "");
        if (t->kind == MLXK_TARG_DTYPE && !mlxk_type_name(t->dtype))
            return fail(err, errlen, "mlx_metal_kernel.template.%s: '%s' is not a dtype name", t->name,
                        t->dtype ? t->dtype : "");
        if (t->kind != MLXK_TARG_DTYPE && t->kind != MLXK_TARG_INT && t->kind != MLXK_TARG_BOOL)
            return fail(err, errlen, "mlx_metal_kernel.template.%s: give a dtype name, an integer or a boolean",
                        t->name);
    }
    return 0;
}

/* MLX's write_template: "<float, 4, 1>" (a bool as 0 or 1, as an ostream writes it). */
static void put_template_args(msl_buf *b, const mlxk_spec *s) {
    msl_buf_puts(b, "<");
    for (int i = 0; i < s->ntargs; i++) {
        const mlxk_targ *t = &s->targs[i];
        if (i) msl_buf_puts(b, ", ");
        if (t->kind == MLXK_TARG_DTYPE) msl_buf_puts(b, mlxk_type_name(t->dtype));
        else msl_buf_printf(b, "%lld", t->kind == MLXK_TARG_BOOL ? (long long)(t->value != 0) : t->value);
    }
    msl_buf_puts(b, ">");
}

/* The host name: custom_kernel_<name>, then "_" and the template arguments with
 * '<', '>' and ", " made '_' and the last '_' dropped, then each input's type
 * (suffix s: 0-d, c: in constant memory) and each output's type. */
static void put_host_name(msl_buf *b, const mlxk_spec *s) {
    msl_buf_printf(b, "custom_kernel_%s", s->name);
    if (s->ntargs) {
        msl_buf def = {0};
        put_template_args(&def, s);
        msl_buf_puts(b, "_");
        for (size_t i = 0; def.p && i < def.len; i++) {
            if (i + 1 == def.len) break;   /* the closing '>' would become the dropped '_' */
            if (def.p[i] == '<' || def.p[i] == '>') msl_buf_puts(b, "_");
            else if (def.p[i] == ',' && i + 1 < def.len && def.p[i + 1] == ' ') msl_buf_puts(b, "_"), i++;
            else msl_buf_put(b, &def.p[i], 1);
        }
        if (def.oom) b->oom = 1;
        free(def.p);
    }
    for (int i = 0; i < s->ninputs; i++) {
        const mlxk_array *a = &s->inputs[i];
        msl_buf_printf(b, "_%s%s", mlxk_type_name(a->dtype),
                       a->ndim == 0 ? "s" : a->nelem < MAX_CONSTANT_ARRAY_SIZE ? "c" : "");
    }
    for (int i = 0; i < s->noutputs; i++) msl_buf_printf(b, "_%s", mlxk_type_name(s->outputs[i].dtype));
}

static void add_param(mlxk_kernel *k, const char *name, const char *suffix, int kind, int of) {
    mlxk_param *p = &k->params[k->nparams];
    snprintf(p->name, sizeof p->name, "%s%s", name, suffix);
    p->kind = kind;
    p->of = of;
    p->index = k->nparams++;
}

/* The buffer parameters in binding order (the text is written from this table). */
static void plan_params(const mlxk_spec *s, mlxk_kernel *k) {
    for (int i = 0; i < s->ninputs; i++) {
        const mlxk_array *a = &s->inputs[i];
        add_param(k, a->name, "", MLXK_PARAM_INPUT, i);
        if (a->ndim == 0) continue;
        if (body_mentions(s->source, a->name, "_shape")) add_param(k, a->name, "_shape", MLXK_PARAM_SHAPE, i);
        if (body_mentions(s->source, a->name, "_strides")) add_param(k, a->name, "_strides", MLXK_PARAM_STRIDES, i);
        if (body_mentions(s->source, a->name, "_ndim")) add_param(k, a->name, "_ndim", MLXK_PARAM_NDIM, i);
    }
    for (int i = 0; i < s->noutputs; i++) add_param(k, s->outputs[i].name, "", MLXK_PARAM_OUTPUT, i);
}

static void put_param(msl_buf *b, const mlxk_spec *s, const mlxk_param *p) {
    const mlxk_array *in = &s->inputs[p->of];
    switch (p->kind) {
    case MLXK_PARAM_INPUT:
        msl_buf_printf(b, "  const %s %s%s %s",
                       in->nelem < MAX_CONSTANT_ARRAY_SIZE || in->ndim == 0 ? "constant" : "device",
                       mlxk_type_name(in->dtype), in->ndim == 0 ? "&" : "*", p->name);
        break;
    case MLXK_PARAM_SHAPE: msl_buf_printf(b, "  const constant int* %s", p->name); break;
    case MLXK_PARAM_STRIDES: msl_buf_printf(b, "  const constant int64_t* %s", p->name); break;
    case MLXK_PARAM_NDIM: msl_buf_printf(b, "  const constant int& %s", p->name); break;
    default: {
        const char *t = mlxk_type_name(s->outputs[p->of].dtype);
        if (s->atomic_outputs) msl_buf_printf(b, "  device atomic<%s>* %s", t, p->name);
        else msl_buf_printf(b, "  device %s* %s", t, p->name);
    }
    }
    msl_buf_printf(b, " [[buffer(%d)]]", p->index);
}

static void put_preamble(msl_buf *b, int preamble) {
    if (preamble == MLXK_PREAMBLE_MLX_UTILS) {
        msl_buf_puts(b, "#include \"mlx/backend/metal/kernels/utils.h\"\n");
        return;
    }
    /* What MLX's utils.h gives a custom kernel's text: the standard library in
     * scope and MLX's names for the 16-bit floats. */
    msl_buf_puts(b, "#include <metal_stdlib>\nusing namespace metal;\ntypedef half float16_t;\n"
                    "typedef bfloat bfloat16_t;\n");
}

static void put_kernel(msl_buf *b, const mlxk_spec *s, const mlxk_kernel *k, const char *host) {
    int used[NATTRS], nused = 0;
    for (int a = 0; a < NATTRS; a++)
        if ((used[a] = strstr(s->source, attributes[a].name) != NULL)) nused++;
    put_preamble(b, s->preamble);
    if (s->header) msl_buf_puts(b, s->header);
    if (s->ntargs) {
        msl_buf_puts(b, "template <");
        for (int i = 0; i < s->ntargs; i++) {
            const mlxk_targ *t = &s->targs[i];
            msl_buf_printf(b, "%s%s %s", i ? ", " : "",
                           t->kind == MLXK_TARG_INT ? "int" : t->kind == MLXK_TARG_BOOL ? "bool" : "typename", t->name);
        }
        msl_buf_puts(b, ">\n");
    }
    msl_buf_printf(b, "[[kernel]] void %s(\n", host);
    for (int i = 0; i < k->nparams; i++) {
        put_param(b, s, &k->params[i]);
        msl_buf_puts(b, i + 1 < k->nparams || nused ? ",\n" : ") {\n");
    }
    for (int a = 0, n = 0; a < NATTRS; a++) {
        if (!used[a]) continue;
        msl_buf_printf(b, "  %s %s [[%s]]%s", attributes[a].type, attributes[a].name, attributes[a].name,
                       ++n < nused ? ",\n" : ") {\n");
    }
    msl_buf_puts(b, s->source);
    msl_buf_puts(b, "\n}\n");
    if (s->ntargs) {
        msl_buf def = {0};
        msl_buf_puts(&def, host);
        put_template_args(&def, s);
        if (def.oom) b->oom = 1;
        const char *d = def.p ? def.p : "";
        msl_buf_printf(b, "\ntemplate [[host_name(\"%s\")]] [[kernel]] decltype(%s) %s;\n", host, d, d);
        free(def.p);
    }
}

int mlxk_generate(const mlxk_spec *spec, mlxk_kernel *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (check_spec(spec, err, errlen) != 0) return -1;
    plan_params(spec, out);
    msl_buf host = {0}, text = {0};
    put_host_name(&host, spec);
    char *name = msl_buf_take(&host);
    if (name) put_kernel(&text, spec, out, name);
    char *src = name ? msl_buf_take(&text) : NULL;
    if (!name || !src) {
        free(name);
        free(src);
        free(text.p);
        memset(out, 0, sizeof *out);
        return fail(err, errlen, "out of memory generating the MLX kernel's signature");
    }
    out->text = src;
    out->function = name;
    return 0;
}

void mlxk_kernel_free(mlxk_kernel *k) {
    if (!k) return;
    free(k->text);
    free(k->function);
    k->text = k->function = NULL;
    k->nparams = 0;
}
