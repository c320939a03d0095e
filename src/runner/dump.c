/* dump.c — writing a case and its references for offline inspection. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/fixture.h"
#include "runner/dump.h"

int dump_make_dir(const char *dir, char *err, size_t errlen) {
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return 0;
    snprintf(err, errlen, "--dump %s: cannot create the directory (%s)", dir, strerror(errno));
    return -1;
}

int dump_case(const char *dir, const op_case *c, char *path_out, size_t pathlen, char *err, size_t errlen) {
    const op_desc *op = c->op;
    if (dump_make_dir(dir, err, errlen)) return -1;
    char path[4096];
    size_t off = (size_t)snprintf(path, sizeof path, "%s/%s", dir, op->name);
    for (int i = 0; i < op->ndims && off < sizeof path; i++)
        off += (size_t)snprintf(path + off, sizeof path - off, "_%s%lld", op->dims[i].name, (long long)c->dim[i]);
    if (off < sizeof path) snprintf(path + off, sizeof path - off, ".safetensors");

    tensor *list[OP_MAX_BUFS * 3];
    int n = 0, rc = -1;
    tensor *owned[OP_MAX_BUFS * 2];
    int nowned = 0;
    for (int i = 0; i < op->nbufs; i++) list[n++] = c->t[i];
    for (int k = 0; k < 2; k++) {
        double *out[OP_MAX_BUFS] = {0};
        for (int i = 0; i < op->nbufs; i++) {
            if (op->bufs[i].role != BUF_OUT && op->bufs[i].role != BUF_INOUT) continue;
            char name[TENSOR_NAME_MAX];
            snprintf(name, sizeof name, "%.32s.%s", op->bufs[i].name, k == REF_F64 ? "ref_f64" : "ref_parity");
            tensor *t = tensor_new(name, DT_F64, c->t[i]->ndim, c->t[i]->shape);
            if (!t) {
                snprintf(err, errlen, "--dump: out of memory");
                goto done;
            }
            owned[nowned++] = t;
            list[n++] = t;
            out[i] = t->data;
        }
        if (op->reference(c, (ref_kind)k, out) != 0) {
            snprintf(err, errlen, "--dump: the %s reference failed", k == REF_F64 ? "f64" : "parity");
            goto done;
        }
    }
    /* The shape goes into __metadata__ so `--fixture` on the dump needs no flags. */
    char keys[OP_MAX_DIMS][32], vals[OP_MAX_DIMS][32];
    io_meta meta[OP_MAX_DIMS + 1];
    int nmeta = 0;
    for (int i = 0; i < op->ndims; i++, nmeta++) {
        snprintf(keys[i], sizeof keys[i], "%s", op->dims[i].name);
        snprintf(vals[i], sizeof vals[i], "%lld", (long long)c->dim[i]);
        meta[nmeta] = (io_meta){keys[i], vals[i]};
    }
    char opname[64];
    snprintf(opname, sizeof opname, "%s", op->name);
    char opkey[] = "gdnbench_op";
    meta[nmeta++] = (io_meta){opkey, opname};
    if (fixture_write_safetensors_meta(path, list, n, meta, nmeta, err, errlen) != 0) goto done;
    if (path_out) snprintf(path_out, pathlen, "%s", path);
    rc = 0;
done:
    for (int i = 0; i < nowned; i++) tensor_free(owned[i]);
    return rc;
}
