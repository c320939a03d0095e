/* fuzz_mlxfix.c — libFuzzer target: an mlx-native meta.json (the input) over a fixed
 * in-memory table of .bin files.  Built and run by tests/fuzz/run.sh.  An accepted
 * set may only hold tensors that are byte-for-byte one of the table's files. */
#include <stdlib.h>
#include <string.h>

#include "io/mlxfix.h"

static uint8_t k[128], beta[64], A[512], s_in[16], s_ref[64], ua[512], uref[512], other[64];
static const mlxfix_mem_file files[] = {
    {"fz_input_k.bin", k, sizeof k},           {"fz_input_beta.bin", beta, sizeof beta},
    {"fz_A_ref.bin", A, sizeof A},             {"fz_input_s.bin", s_in, sizeof s_in},
    {"fz_s_ref.bin", s_ref, sizeof s_ref},     {"fz_input_a.bin", ua, sizeof ua},
    {"fz_a_ref.bin", uref, sizeof uref},       {"fz_x_meta.json", "{}", 2},
    {"fz_x_input_q.bin", other, sizeof other}, {"fz_odd_ref.bin", other, 6},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const mlxfix_mem_table table = {files, 10};
    mlxfix_files fs = mlxfix_mem_files(&table);
    if (k[1] == 0)
        for (size_t i = 0; i < sizeof k; i++) k[i] = (uint8_t)(i + 1);
    io_set set = {0};
    char err[512];
    if (mlxfix_parse((const char *)data, size, "fz_meta.json", &fs, &set, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n') || set.n || set.nmeta) abort();
        return 0;
    }
    for (int i = 0; i < set.n; i++) {
        const tensor *t = set.e[i].t;
        int found = 0;
        for (int j = 0; j < table.n; j++)
            found |= files[j].len == tensor_nbytes(t) && memcmp(files[j].data, t->data, files[j].len) == 0;
        if (!found || set.e[i].role == IO_ROLE_UNKNOWN || io_set_find(&set, t->name) != i) abort();
    }
    io_set_clear(&set);
    return 0;
}
