/* kcase_model.c — a kc_case's life: made empty, grown by the parser or the flag form,
 * freed whole; lookups by name and paths relative to the case file. */
#include <stdlib.h>
#include <string.h>

#include "io/io_util.h"
#include "kcase/kcase.h"

char *kc_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

kc_case *kc_case_new(const char *name, const char *path, const char *dir) {
    kc_case *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->name = kc_strdup(name);
    c->path = kc_strdup(path ? path : "");
    c->dir = kc_strdup(dir ? dir : ".");
    if ((name && !c->name) || !c->path || !c->dir) {
        kc_free(c);
        return NULL;
    }
    return c;
}

kc_buffer *kc_add_buffer(kc_case *c, const char *name) {
    kc_buffer *nb = realloc(c->bufs, (size_t)(c->nbufs + 1) * sizeof *nb);
    if (!nb) return NULL;
    c->bufs = nb;
    kc_buffer *b = &nb[c->nbufs];
    memset(b, 0, sizeof *b);
    b->index = -1;
    if (!(b->name = kc_strdup(name))) return NULL;
    c->nbufs++;
    return b;
}

kc_launch *kc_add_launch(kc_case *c) {
    kc_launch *nl = realloc(c->launches, (size_t)(c->nlaunches + 1) * sizeof *nl);
    if (!nl) return NULL;
    c->launches = nl;
    memset(&nl[c->nlaunches], 0, sizeof *nl);
    return &nl[c->nlaunches++];
}

int kc_find_buffer(const kc_case *c, const char *name) {
    for (int i = 0; i < c->nbufs; i++)
        if (strcmp(c->bufs[i].name, name) == 0) return i;
    return -1;
}

char *kc_path(const kc_case *c, const char *rel) {
    if (rel[0] == '/' || !c->dir || !*c->dir || strcmp(c->dir, ".") == 0) return kc_strdup(rel);
    return io_path_join(c->dir, rel, "");
}

/* The fields f[0..n) and everything under them. */
static void free_fields(kc_field *f, int n) {
    for (int i = 0; f && i < n; i++) {
        free(f[i].name);
        free(f[i].value.v);
        free_fields(f[i].sub, f[i].nsub);
    }
    free(f);
}

static void free_buffer(kc_buffer *b) {
    free(b->name);
    free(b->file);
    free(b->tensor);
    free(b->value.v);
    free_fields(b->fields, b->nfields);
    free(b->expect.file);
    free(b->expect.tensor);
    free(b->expect.value.v);
    free(b->expect.backend);
}

static void free_launch(kc_launch *l) {
    free(l->function);
    for (int i = 0; i < l->nconstants; i++) {
        free(l->constants[i].name);
        free(l->constants[i].value);
    }
    free(l->constants);
    for (int i = 0; i < l->nbinds; i++) {
        free(l->binds[i].param);
        free(l->binds[i].buffer);
    }
    free(l->binds);
}

static void free_mlx(kc_mlx *m) {
    if (!m) return;
    free(m->name);
    free(m->source);
    free(m->header);
    for (int i = 0; i < m->ninputs; i++) free(m->input_names[i]);
    for (int i = 0; i < m->noutputs; i++) free(m->output_names[i]);
    free(m->input_names);
    free(m->output_names);
    for (int i = 0; i < m->ntmpl; i++) {
        free(m->tmpl[i].name);
        free(m->tmpl[i].dtype);
    }
    free(m->tmpl);
    free(m);
}

void kc_free(kc_case *c) {
    if (!c) return;
    free(c->name);
    free(c->path);
    free(c->dir);
    free(c->source_path);
    free(c->source_text);
    for (int i = 0; i < c->nincludes; i++) free(c->includes[i]);
    free(c->includes);
    for (int i = 0; i < c->ndefines; i++) {
        free(c->defines[i].name);
        free(c->defines[i].value);
    }
    free(c->defines);
    for (int i = 0; i < c->nlaunches; i++) free_launch(&c->launches[i]);
    free(c->launches);
    for (int i = 0; i < c->nbufs; i++) free_buffer(&c->bufs[i]);
    free(c->bufs);
    free_mlx(c->mlx);
    free(c);
}
