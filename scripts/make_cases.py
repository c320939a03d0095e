#!/usr/bin/env python3
"""make_cases.py — the input and expected-output files of the example kernel cases in
fixtures/cases/ (`gdnbench kernel CASE.json`; format in ../shared/spec/case.md).

Python's standard library only: the data are small, seeded (random.Random), written as
.npy (format 1.0) or, for bfloat16 tensors that .npy cannot hold, .safetensors.  Each
expected output is computed in float64 from exactly the inputs written (f32 or bf16
values) and rounded once to the output's dtype; the case files' tolerances cover the
kernels' own f32 arithmetic (summation order, exp/rsqrt ulps).

    python3 scripts/make_cases.py [--out fixtures/cases/data]

The llama.cpp (ggml-metal) cases live in fixtures/cases/ggml/ with their data in
fixtures/cases/ggml/data/ (`--ggml-out`); their expected outputs follow ggml's own
definitions of the ops (ggml.c: ADD with src1 broadcast, RMS_NORM, MUL_MAT with src0
broadcast over dim 2, SOFT_MAX_EXT with a mask, ALiBi slopes and attention sinks),
never the kernels' code paths.

Running it again writes the same bytes (the files are committed; a change shows in git).
"""
import argparse
import json
import math
import os
import random
import struct


def f32(x):
    """x rounded to the nearest float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16_bits(x):
    """The bfloat16 bit pattern nearest to float32(x), ties to even (as Metal rounds)."""
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    u += 0x7FFF + ((u >> 16) & 1)
    return (u >> 16) & 0xFFFF


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


NPY_DESCR = {"f4": ("<f4", "<f"), "u4": ("<u4", "<I"), "i4": ("<i4", "<i")}


def write_npy(path, kind, shape, values):
    """A .npy file (version 1.0, C order), as numpy.save writes it."""
    descr, fmt = NPY_DESCR[kind]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt[1]), *values))


def write_safetensors_bf16(path, tensors):
    """A .safetensors file of BF16 tensors: {name: (shape, [bf16 bit patterns])}."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        shape, bits = tensors[name]
        blob = struct.pack("<%dH" % len(bits), *bits)
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def uniform(rng, n, lo, hi):
    return [f32(rng.uniform(lo, hi)) for _ in range(n)]


def normal(rng, n, std=1.0):
    return [f32(rng.gauss(0.0, std)) for _ in range(n)]


def case_unary_exp(d, rng):
    """mlx_unary_exp: v_Expfloat32float32 over 1000 elements."""
    x = uniform(rng, 1000, -4.0, 4.0)
    write_npy(os.path.join(d, "x.npy"), "f4", [1000], x)
    write_npy(os.path.join(d, "out.npy"), "f4", [1000], [f32(math.exp(v)) for v in x])


def case_binary_add(d, rng):
    """mlx_binary_add: vv_Addfloat32; a float32 sum is exactly the rounded exact sum."""
    a, b = normal(rng, 1000), normal(rng, 1000)
    write_npy(os.path.join(d, "a.npy"), "f4", [1000], a)
    write_npy(os.path.join(d, "b.npy"), "f4", [1000], b)
    write_npy(os.path.join(d, "c.npy"), "f4", [1000], [f32(x + y) for x, y in zip(a, b)])


def case_all_reduce(d, rng):
    """mlx_all_reduce_sum_2pass: 8192 floats (over MLX's 4096 one-pass limit)."""
    x = uniform(rng, 8192, -1.0, 1.0)
    write_npy(os.path.join(d, "x.npy"), "f4", [8192], x)
    write_npy(os.path.join(d, "out.npy"), "f4", [1], [f32(math.fsum(x))])


def case_rms_norm(d, rng):
    """mlx_rms_norm: rmsfloat32, 4 rows of 256, eps 1e-5."""
    rows, n, eps = 4, 256, f32(1e-5)
    x, w = normal(rng, rows * n), [f32(1.0 + 0.1 * rng.gauss(0, 1)) for _ in range(n)]
    out = []
    for r in range(rows):
        row = x[r * n:(r + 1) * n]
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in row) / n + eps)
        out += [f32(w[i] * f32(row[i] * inv)) for i in range(n)]
    write_npy(os.path.join(d, "x.npy"), "f4", [rows, n], x)
    write_npy(os.path.join(d, "w.npy"), "f4", [n], w)
    write_npy(os.path.join(d, "out.npy"), "f4", [rows, n], out)


def case_sort(d, rng):
    """mlx_sort_multiblock: 8192 distinct floats, 4 blocks of 2048, two merge rounds."""
    n = 8192
    perm = list(range(n))
    rng.shuffle(perm)
    x = [f32((p - n / 2) * 0.25) for p in perm]   # distinct and exact: argsort is unique
    order = sorted(range(n), key=lambda i: x[i])
    write_npy(os.path.join(d, "x.npy"), "f4", [n], x)
    write_npy(os.path.join(d, "vals.npy"), "f4", [n], [x[i] for i in order])
    write_npy(os.path.join(d, "idxs.npy"), "u4", [n], order)


def case_micro_reduce(d, rng):
    """ours_micro_reduce_tree: 4096 floats, 4 items a thread -> 4 partial sums."""
    n, tg, items = 4096, 256, 4
    x = uniform(rng, n, -1.0, 1.0)
    block = tg * items
    write_npy(os.path.join(d, "x.npy"), "f4", [n], x)
    write_npy(os.path.join(d, "partial.npy"), "f4", [n // block],
              [f32(math.fsum(x[g * block:(g + 1) * block])) for g in range(n // block)])


def case_l2norm(d, rng):
    """ours_l2norm_bf16: gdn_l2norm_qk_bf16 on 8 rows of 128 (bf16 in and out)."""
    rows, k, eps = 8, 128, f32(1e-6)
    q = [bf16_bits(rng.gauss(0, 1)) for _ in range(rows * k)]
    kk = [bf16_bits(rng.gauss(0, 1)) for _ in range(rows * k)]

    def norm(bits):
        vals, out = [bf16_value(b) for b in bits], []
        for r in range(rows):
            row = vals[r * k:(r + 1) * k]
            inv = 1.0 / math.sqrt(math.fsum(v * v for v in row) + eps)
            out += [bf16_bits(v * inv) for v in row]
        return out

    write_safetensors_bf16(os.path.join(d, "qk.safetensors"), {
        "q": ([rows, k], q), "k": ([rows, k], kk), "q_out": ([rows, k], norm(q)), "k_out": ([rows, k], norm(kk))})


def case_metal_kernel_exp(d, rng):
    """mlx_metal_kernel_exp and mlx_metal_kernel_strided: exp over a [4, 250] array."""
    x = uniform(rng, 1000, -2.0, 2.0)
    write_npy(os.path.join(d, "inp.npy"), "f4", [4, 250], x)
    write_npy(os.path.join(d, "out.npy"), "f4", [4, 250], [f32(math.exp(v)) for v in x])


CASES = {
    "mlx_unary_exp": case_unary_exp,
    "mlx_binary_add": case_binary_add,
    "mlx_all_reduce_sum_2pass": case_all_reduce,
    "mlx_rms_norm": case_rms_norm,
    "mlx_sort_multiblock": case_sort,
    "ours_micro_reduce_tree": case_micro_reduce,
    "ours_l2norm_bf16": case_l2norm,
    "mlx_metal_kernel_exp": case_metal_kernel_exp,
}


# --- llama.cpp ggml-metal kernels (fixtures/cases/ggml/) -----------------------------
# Shapes below are ggml's [ne0, ne1, ne2, ne3] (ne0 innermost); the .npy files hold the
# same bytes in C order, so their shapes are the reverse.

def case_ggml_add(d, rng):
    """ggml_add: kernel_bin_fuse_f32_f32_f32 (op 0, one src1), src0 [1001, 5, 3],
    src1 [1001, 1, 3] broadcast over rows (ggml_add's ggml_can_repeat)."""
    ne0, ne1, ne2 = 1001, 5, 3
    a, b = normal(rng, ne0 * ne1 * ne2), normal(rng, ne0 * ne2)
    out = [f32(a[(i2 * ne1 + i1) * ne0 + i0] + b[i2 * ne0 + i0])
           for i2 in range(ne2) for i1 in range(ne1) for i0 in range(ne0)]
    write_npy(os.path.join(d, "src0.npy"), "f4", [ne2, ne1, ne0], a)
    write_npy(os.path.join(d, "src1.npy"), "f4", [ne2, 1, ne0], b)
    write_npy(os.path.join(d, "dst.npy"), "f4", [ne2, ne1, ne0], out)


def case_ggml_rms_norm(d, rng):
    """ggml_rms_norm: kernel_rms_norm_f32, rows of 203 (not a multiple of 4: the
    scalar kernel), [203, 3, 2], eps 1e-6: y = x / sqrt(mean(x^2) + eps)."""
    n, rows, eps = 203, 6, f32(1e-6)
    x = normal(rng, n * rows, 2.0)
    out = []
    for r in range(rows):
        row = x[r * n:(r + 1) * n]
        scale = 1.0 / math.sqrt(math.fsum(v * v for v in row) / n + eps)
        out += [f32(v * scale) for v in row]
    write_npy(os.path.join(d, "src0.npy"), "f4", [2, 3, n], x)
    write_npy(os.path.join(d, "dst.npy"), "f4", [2, 3, n], out)


def case_ggml_mul_mv(d, rng):
    """ggml_mul_mat: kernel_mul_mv_f32_f32, src0 [301, 34] (one matrix), src1
    [301, 3, 2] (3 columns, 2 batches: src0 broadcast, r2 = 2), dst [34, 3, 2]:
    dst[b][j][i] = sum_k src0[i][k] * src1[b][j][k]."""
    k, m, ncols, nb = 301, 34, 3, 2
    w, x = normal(rng, m * k), normal(rng, nb * ncols * k)
    out = []
    for b in range(nb):
        for j in range(ncols):
            col = x[(b * ncols + j) * k:(b * ncols + j + 1) * k]
            out += [f32(math.fsum(w[i * k + t] * col[t] for t in range(k))) for i in range(m)]
    write_npy(os.path.join(d, "src0.npy"), "f4", [m, k], w)
    write_npy(os.path.join(d, "src1.npy"), "f4", [nb, ncols, k], x)
    write_npy(os.path.join(d, "dst.npy"), "f4", [nb, ncols, m], out)


def case_ggml_soft_max(d, rng):
    """ggml_soft_max_ext: kernel_soft_max_f32, src0 [203, 2, 2] (2 rows, 2 heads),
    an f32 mask [203, 2] shared by the heads (some -inf), scale 0.125, ALiBi
    max_bias 8 (n_head_log2 2: slopes m0^(h+1), m0 = 2^-4), and one sink logit a head:
    y = exp(v - m) / (sum exp(v - m) + exp(sink - m)), v = x*scale + slope*mask,
    m = max(max v, sink)."""
    n, rows, heads, scale = 203, 2, 2, 0.125
    x = normal(rng, n * rows * heads, 3.0)
    mask = []
    for r in range(rows):
        mask += [float("-inf") if (j * 7 + r) % 23 == 0 else f32(rng.uniform(-1.0, 1.0)) for j in range(n)]
    sinks = normal(rng, heads)
    m0 = 2.0 ** -4
    out = []
    for h in range(heads):
        slope = f32(m0 ** (h + 1))
        for r in range(rows):
            xs = x[(h * rows + r) * n:(h * rows + r + 1) * n]
            v = [xs[j] * scale + slope * mask[r * n + j] for j in range(n)]
            mx = max(max(v), sinks[h])
            e = [math.exp(t - mx) for t in v]
            tot = math.fsum(e) + math.exp(sinks[h] - mx)
            out += [f32(t / tot) for t in e]
    write_npy(os.path.join(d, "src0.npy"), "f4", [heads, rows, n], x)
    write_npy(os.path.join(d, "mask.npy"), "f4", [rows, n], mask)
    write_npy(os.path.join(d, "sinks.npy"), "f4", [heads], sinks)
    write_npy(os.path.join(d, "dst.npy"), "f4", [heads, rows, n], out)


GGML_CASES = {
    "ggml_add": case_ggml_add,
    "ggml_rms_norm": case_ggml_rms_norm,
    "ggml_mul_mv": case_ggml_mul_mv,
    "ggml_soft_max": case_ggml_soft_max,
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "fixtures", "cases", "data"))
    ap.add_argument("--ggml-out", default=os.path.join(here, "..", "fixtures", "cases", "ggml", "data"))
    args = ap.parse_args()
    # Each set has its own seeds, so adding a case to one never changes the other's bytes.
    for out, cases, seed in ((args.out, CASES, 1000), (args.ggml_out, GGML_CASES, 2000)):
        for i, (name, make) in enumerate(sorted(cases.items())):
            d = os.path.join(out, name)
            os.makedirs(d, exist_ok=True)
            make(d, random.Random(seed + i))
            print("%s: %s" % (name, ", ".join(sorted(os.listdir(d)))))


if __name__ == "__main__":
    main()
