/* tensor_files.c — `gdnbench-testdata tensors OUT.npy|OUT.safetensors NAME:DTYPE:SHAPE:VALUES...`:
 * small tensor files for the kernel-case tests (inputs, expected outputs), written here
 * byte by byte as numpy.save and safetensors write them (the tool links nothing of
 * gdnbench, so the files do not come from the code they test).  DTYPE: f32 f64 i32
 * u32; SHAPE: d0xd1x... ("" for a scalar); VALUES: a comma list, or arange=START,STEP.
 * An .npy takes one tensor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/testdata.h"

typedef struct tf_tensor {
    char name[64], dtype[8];
    int nd;
    long long shape[6], n;
    unsigned char *data;
    size_t nbytes;
} tf_tensor;

static const struct {
    const char *name, *npy, *st;
    size_t size;
} tf_types[] = {{"f32", "<f4", "F32", 4}, {"f64", "<f8", "F64", 8}, {"i32", "<i4", "I32", 4}, {"u32", "<u4", "U32", 4}};

static int type_of(const char *name) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(tf_types[i].name, name)) return i;
    return -1;
}

static void store(int ty, unsigned char *p, double v) {
    if (ty == 0) { float f = (float)v; memcpy(p, &f, 4); }
    else if (ty == 1) memcpy(p, &v, 8);
    else if (ty == 2) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
    else { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); }
}

static int parse_spec(const char *spec, tf_tensor *t) {
    char buf[1024], *f[4], *p = buf;
    snprintf(buf, sizeof buf, "%s", spec);
    for (int i = 0; i < 4; i++) {
        f[i] = p;
        if (i < 3 && !(p = strchr(p, ':'))) return -1;
        if (i < 3) *p++ = '\0';
    }
    int ty = type_of(f[1]);
    if (ty < 0) return -1;
    snprintf(t->name, sizeof t->name, "%s", f[0]);
    snprintf(t->dtype, sizeof t->dtype, "%s", f[1]);
    t->n = 1;
    for (char *s = f[2]; *s && t->nd < 6;) {
        t->shape[t->nd] = strtoll(s, &s, 10);
        t->n *= t->shape[t->nd++];
        if (*s == 'x') s++;
    }
    t->nbytes = (size_t)t->n * tf_types[ty].size;
    if (!(t->data = calloc(t->nbytes + 1, 1))) return -1;
    double a = 0, step = 1;
    int arange = !strncmp(f[3], "arange=", 7);
    char *s = f[3] + (arange ? 7 : 0);
    if (arange) {
        a = strtod(s, &s);
        if (*s == ',') step = strtod(s + 1, NULL);
    }
    for (long long i = 0; i < t->n; i++) {
        double v = arange ? a + (double)i * step : strtod(s, &s);
        if (!arange && *s == ',') s++;
        store(ty, t->data + (size_t)i * tf_types[ty].size, v);
    }
    return 0;
}

static void shape_text(const tf_tensor *t, char *out, size_t n, int py) {
    size_t l = (size_t)snprintf(out, n, py ? "(" : "[");
    for (int i = 0; i < t->nd; i++) l += (size_t)snprintf(out + l, n - l, "%s%lld", i ? ", " : "", t->shape[i]);
    snprintf(out + l, n - l, "%s", py ? (t->nd == 1 ? ",)" : ")") : "]");
}

static int write_npy(FILE *f, const tf_tensor *t) {
    char shape[256], header[512];
    shape_text(t, shape, sizeof shape, 1);
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     tf_types[type_of(t->dtype)].npy, shape);
    int total = 10 + n + 1, pad = (64 - total % 64) % 64;
    uint16_t hl = (uint16_t)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fwrite(&hl, 2, 1, f);
    fwrite(header, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    return fwrite(t->data, 1, t->nbytes, f) == t->nbytes ? 0 : -1;
}

static int write_safetensors(FILE *f, const tf_tensor *t, int n) {
    char header[8192], shape[256];
    size_t l = (size_t)snprintf(header, sizeof header, "{"), off = 0;
    for (int i = 0; i < n; i++) {
        shape_text(&t[i], shape, sizeof shape, 0);
        l += (size_t)snprintf(header + l, sizeof header - l, "%s\"%s\": {\"dtype\": \"%s\", \"shape\": %s, \"data_offsets\": [%zu, %zu]}",
                              i ? ", " : "", t[i].name, tf_types[type_of(t[i].dtype)].st, shape, off, off + t[i].nbytes);
        off += t[i].nbytes;
    }
    l += (size_t)snprintf(header + l, sizeof header - l, "}");
    uint64_t hl = l;
    fwrite(&hl, 8, 1, f);
    fwrite(header, 1, l, f);
    for (int i = 0; i < n; i++) fwrite(t[i].data, 1, t[i].nbytes, f);
    return 0;
}

int tensor_files_main(int argc, char **argv) {
    tf_tensor ts[16];
    int n = 0, rc = 2;
    memset(ts, 0, sizeof ts);
    if (argc < 2 || argc > 17) {
        fprintf(stderr, "usage: gdnbench-testdata tensors OUT.npy|OUT.safetensors NAME:DTYPE:SHAPE:VALUES...\n");
        return 2;
    }
    size_t len = strlen(argv[0]);
    int npy = len > 4 && !strcmp(argv[0] + len - 4, ".npy");
    for (int i = 1; i < argc; i++, n++)
        if (parse_spec(argv[i], &ts[n]) < 0) {
            fprintf(stderr, "gdnbench-testdata tensors: bad spec '%s' (NAME:DTYPE:SHAPE:VALUES, DTYPE f32 f64 i32 u32)\n", argv[i]);
            goto out;
        }
    if (npy && n != 1) {
        fprintf(stderr, "gdnbench-testdata tensors: an .npy holds one tensor\n");
        goto out;
    }
    FILE *f = fopen(argv[0], "wb");
    if (!f) {
        perror(argv[0]);
        goto out;
    }
    rc = (npy ? write_npy(f, &ts[0]) : write_safetensors(f, ts, n)) == 0 && fclose(f) == 0 ? 0 : 2;
out:
    for (int i = 0; i < 16; i++) free(ts[i].data);
    return rc;
}
