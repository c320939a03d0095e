/* make_seeds.c — writes starting corpora for the libFuzzer targets into DIR/{safetensors,npy,mlxfix,kcase}
 * using gdnbench's own writers.  Usage: make_seeds DIR (run by tests/fuzz/run.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/npy.h"
#include "io/safetensors.h"

static void put(const char *dir, const char *sub, const char *name, const void *buf, size_t len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    static const dtype dts[] = {DT_F32, DT_BF16, DT_F16, DT_F64, DT_I32, DT_U32};
    tensor *ts[6];
    char err[256], name[32];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "t%d", i);
        ts[i] = tensor_new(name, dts[i], 2, (int64_t[]){2, i + 1});
        for (int64_t j = 0; j < tensor_numel(ts[i]); j++) tensor_set(ts[i], j, (double)j - 1.5);
        uint8_t *buf;
        size_t len;
        if (npy_serialize(ts[i], &buf, &len, err, sizeof err) != 0) return 1;
        snprintf(name, sizeof name, "%s.npy", dtype_name(dts[i]));
        put(argv[1], "npy", name, buf, len);
        free(buf);
        io_meta meta[1] = {{"T", "4"}};
        if (safetensors_serialize(ts, i + 1, meta, i % 2, &buf, &len, err, sizeof err) != 0) return 1;
        snprintf(name, sizeof name, "seed%d.safetensors", i);
        put(argv[1], "safetensors", name, buf, len);
        free(buf);
    }
    for (int i = 0; i < 6; i++) tensor_free(ts[i]);
    static const char meta[] =
        "{\"seed\": \"0x1\", \"B\": 1, \"T\": 8, \"H\": 2, \"BT\": 8, \"scale\": 0.5, \"flag\": true,"
        " \"inputs\": {\"k\": {\"shape\": [1, 8, 2, 4], \"dtype\": \"bf16\", \"file\": \"fz_input_k.bin\"},"
        " \"beta\": {\"shape\": [1, 8, 2], \"dtype\": \"f32\", \"file\": \"fz_input_beta.bin\"},"
        " \"s\": {\"shape\": [2, 2], \"dtype\": \"float32\"}},"
        " \"outputs\": {\"A\": {\"shape\": [1, 8, 2, 8], \"dtype\": \"f32\", \"file\": \"fz_A_ref.bin\"},"
        " \"s\": {\"shape\": [16], \"dtype\": \"u32\"}},"
        " \"tolerance\": {\"A_atol\": 0.005, \"A_rtol\": 0.02}}";
    static const char untabled[] = "{\"B\": 1, \"T\": 8, \"H\": 2, \"BT\": 8}";
    put(argv[1], "mlxfix", "tabled.json", meta, sizeof meta - 1);
    put(argv[1], "mlxfix", "untabled.json", untabled, sizeof untabled - 1);
    static const char kcase[] =
        "{\"case\": 1, \"name\": \"n\", \"source\": \"k.metal\", \"include\": [\".\"], \"define\": {\"N\": \"4\"},"
        " \"function\": \"f\", \"constants\": {\"has_w\": true, \"3\": 7},"
        " \"dispatch\": {\"threadgroups\": [8, 1, 1], \"threadgroup\": [1024], \"threadgroup_memory\": {\"0\": 128}},"
        " \"buffers\": {\"x\": {\"dtype\": \"float32\", \"shape\": [8, 4], \"init\": {\"normal\": [0, 1]}, \"readonly\": true},"
        " \"w\": {\"file\": \"w.npz\", \"tensor\": \"w\"}, \"out\": {\"dtype\": \"bfloat16\", \"shape\": [8, 4], \"init\": \"poison\","
        " \"expect\": {\"file\": \"out.npy\", \"atol\": 1e-5, \"rtol\": 1e-5}}, \"eps\": {\"dtype\": \"float32\", \"value\": 1e-5},"
        " \"args\": {\"struct\": {\"ne00\": 4096, \"nb\": [1, 2]}, \"index\": 3}}}";
    static const char kseq[] =
        "{\"case\": 1, \"source\": {\"text\": \"kernel void a() {}\"}, \"dispatches\": [{\"function\": \"a\","
        " \"dispatch\": {\"grid\": [4], \"threadgroup\": [4]}, \"bind\": {\"p\": \"y\"}}],"
        " \"buffers\": {\"y\": {\"dtype\": \"int64\", \"shape\": [4], \"expect\": {\"backend\": \"sw\", \"ulp\": 1}}}}";
    put(argv[1], "kcase", "case.json", kcase, sizeof kcase - 1);
    put(argv[1], "kcase", "sequence.json", kseq, sizeof kseq - 1);
    return 0;
}
