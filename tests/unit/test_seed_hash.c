/* test_seed_hash.c — `--seed N` gives the same bits on every machine: the generated
 * inputs, and the bf16-parity reference computed from them.
 *
 * The generators and the references use only core/rng.c, libm and f32/bf16 rounding,
 * and the Makefile builds all host code with -ffp-contract=off, so no compiler fuses
 * a*b+c into an fma on one platform and not another (Apple clang and gcc for arm64
 * in GNU mode would by default: the parity reference would then stop rounding where
 * it documents, and these hashes change).  The SHA-256 of the inputs and of the
 * parity outputs of a few ops at a fixed seed and shape are pinned here from x86-64
 * Linux; arm64 (the unit tests under qemu, a Mac) must get the same.  The f64
 * reference is not pinned: it is the ideal, free to use fma (it does, with AVX2).
 * A deliberate change to a generator or a parity reference changes these hashes:
 * pin the new ones in the same commit and say so in its message. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/sha256.h"
#include "gdn_test_util.h"

/* Name, dtype, shape and bytes of every input (BUF_IN, BUF_INOUT) in bufs order. */
static void inputs_hash(const op_case *c, char hex[65], int verbose) {
    sha256_ctx all;
    sha256_init(&all);
    for (int i = 0; i < c->op->nbufs; i++) {
        buf_role r = c->op->bufs[i].role;
        if (r != BUF_IN && r != BUF_INOUT) continue;
        const tensor *t = c->t[i];
        uint8_t head[1 + 8 * TENSOR_MAX_DIMS] = {(uint8_t)t->dtype};
        for (int d = 0; d < t->ndim; d++)
            for (int b = 0; b < 8; b++) head[1 + 8 * d + b] = (uint8_t)((uint64_t)t->shape[d] >> (8 * b));
        sha256_update(&all, t->name, strlen(t->name) + 1);
        sha256_update(&all, head, 1 + 8 * (size_t)t->ndim);
        sha256_update(&all, t->data, tensor_nbytes(t));
        if (verbose) {
            char one[65];
            sha256_hex(t->data, tensor_nbytes(t), one);
            printf("  %s input %s: %s\n", c->op->name, t->name, one);
        }
    }
    uint8_t d[32];
    sha256_final(&all, d);
    sha256_to_hex(d, hex);
}

/* The parity reference's outputs (doubles, bufs order); -1 if it failed. */
static int parity_hash(const op_case *c, char hex[65]) {
    double **out = gt_outs(c);
    int rc = c->op->reference(c, REF_PARITY, out);
    sha256_ctx h;
    sha256_init(&h);
    for (int i = 0; i < c->op->nbufs; i++)
        if (out[i]) sha256_update(&h, out[i], sizeof(double) * (size_t)tensor_numel(c->t[i]));
    uint8_t d[32];
    sha256_final(&h, d);
    sha256_to_hex(d, hex);
    gt_outs_free(out);
    return rc;
}

static void check_case(op_case *c, const char *what, const char *pinned_inputs, const char *pinned_parity) {
    CHECK_MSG(c != NULL, "%s: no case", what);
    if (!c) return;
    char hex[65];
    inputs_hash(c, hex, 0);
    if (strcmp(hex, pinned_inputs) != 0) {
        inputs_hash(c, hex, 1);
        CHECK_MSG(0, "%s: inputs hash to %s, pinned %s (a generator or its floating-point build changed)", what,
                  hex, pinned_inputs);
    }
    CHECK_MSG(parity_hash(c, hex) == 0, "%s: the parity reference failed", what);
    CHECK_MSG(strcmp(hex, pinned_parity) == 0,
              "%s: parity reference hashes to %s, pinned %s (the reference, its floating-point build — fused "
              "multiply-adds? — or this platform's libm differs)",
              what, hex, pinned_parity);
    op_case_free(c);
}

TEST(seed_hash_kkt) {
    check_case(gt_case("kkt", 7, "T", (int64_t)100, "H", (int64_t)4, "Hg", (int64_t)2, "K", (int64_t)64, NULL),
               "kkt seed 7 T=100 H=4 Hg=2 K=64",
               "2954e71d3ded30c3aa66f3f98de6f34a1611f0bb4c813aeb7e6038cdbddc8812",
               "01cb68f22694a490c9f5af71292457b5558af04d8f951a52edb979c31fec9526");
}

TEST(seed_hash_chunk_fwd) {
    check_case(gt_case("chunk_fwd", 7, "T", (int64_t)100, "H", (int64_t)4, "Hg", (int64_t)2, "K", (int64_t)64, "V",
                       (int64_t)64, NULL),
               "chunk_fwd seed 7 T=100 H=4 Hg=2 K=V=64",
               "1473f631b5bfbc74c40ec4f39675ae5a7322099744b929969d5478a7cb1c0c8e",
               "1067a8f1e01e1b655bb7508ca252e397a17754b38d93406583b716b435c637c9");
}

TEST(seed_hash_decode) {
    check_case(gt_case("decode", 7, "B", (int64_t)2, "H", (int64_t)4, "Hg", (int64_t)2, "K", (int64_t)64, "V",
                       (int64_t)64, NULL),
               "decode seed 7 B=2 H=4 Hg=2 K=V=64",
               "c24589e3fd6f895e9b070b9a0d2476ef75016e2679dd4322ed88df083ec73cdf",
               "599da2ccc0107960cf3a7ea505a793762ec21249862692cc2e13c4e426dd6cba");
}

TEST(seed_hash_prep_step) {
    check_case(gt_case("prep_step", 7, "Hk", (int64_t)2, "Hv", (int64_t)4, "Dk", (int64_t)64, "Dv", (int64_t)32, NULL),
               "prep_step seed 7 Hk=2 Hv=4 Dk=64 Dv=32",
               "0057cf8f1cdbf46503b9b139116391bb5c77b3c2af6793a337e89ed75591568a",
               "e75bc6930a701c3df4fb3a9289c5494fa5bc0c6e22c450089a36b586ffb08d16");
}

TEST(seed_hash_attn_fwd) {
    check_case(gt_case("attn_fwd", 7, "Hq", (int64_t)4, "Hkv", (int64_t)2, "qL", (int64_t)33, "kL", (int64_t)65, "D",
                       (int64_t)64, NULL),
               "attn_fwd seed 7 Hq=4 Hkv=2 qL=33 kL=65 D=64",
               "542acbb73d1d052d969c0295e74d14640ae726a674ec1125cbb307a662b4ff66",
               "dff8e820eb8279a8a4231cd3ff43b75a7b878141bd6d361d9f6707da4b248c7f");
}

TEST(seed_hash_attn_bwd) {
    check_case(gt_case("attn_bwd", 7, "Hq", (int64_t)4, "Hkv", (int64_t)2, "qL", (int64_t)33, "kL", (int64_t)65, "D",
                       (int64_t)64, NULL),
               "attn_bwd seed 7 Hq=4 Hkv=2 qL=33 kL=65 D=64",
               "993fc0683fbcc8a492877c0d958d5fa1be165df24d25239ebb768c8fe9adcf8d",
               "a1cbb3259cf04c6504591f3fb2a6b79097d2dbe802c83174e4370d609a523522");
}
