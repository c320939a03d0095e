#!/usr/bin/env python3
"""torch_style.py — fixtures written the way PyTorch users write them, without torch
or numpy (standard library only), for the CLI tests of --fixture/--map.

Usage: torch_style.py DUMP.safetensors OUT [--deflate] SPEC...

DUMP is a `gdnbench OP --dump DIR` file (inputs, outputs, NAME.ref_f64 references).
OUT is written with one tensor per SPEC and no gdnbench metadata:
  *.safetensors  as safetensors.torch.save_file(tensors, OUT) writes it: no
                 "__metadata__" (save_file writes one only when given metadata),
                 tensors sorted by dtype then name, data packed in that order, the
                 header padded with spaces to a multiple of 8;
  *.npz          as numpy.savez(OUT, **arrays): a zip of NAME.npy members, stored,
                 each opened with force_zip64=True; --deflate writes what
                 numpy.savez_compressed does (deflated members).
SPEC is NEW=OLD[:DTYPE][@SHAPE]: tensor OLD of the dump saved as NEW, converted to
DTYPE (f32, f16, bf16; default: its dtype in the dump; .npz has no bf16, so bf16
becomes f32 there, as `t.float().numpy()` would), and with @SHAPE (comma list) its
first prod(SHAPE) elements saved with that shape (a tensor that contradicts the
others)."""
import json
import struct
import sys
import zipfile
from array import array

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = (info["dtype"], list(info["shape"]), data[b:e])
    return out


def to_floats(dtype, raw):
    if dtype == "F64":
        return array("d", raw).tolist()
    if dtype == "F32":
        return array("f", raw).tolist()
    if dtype == "BF16":
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in array("H", raw)]
    if dtype == "F16":
        return list(struct.unpack("<%de" % (len(raw) // 2), raw))
    raise SystemExit("unsupported dtype " + dtype)


def bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    if (u & 0x7FFFFFFF) > 0x7F800000:
        return (u >> 16) | 0x40
    u += 0x7FFF + ((u >> 16) & 1)  # round to nearest even
    return (u >> 16) & 0xFFFF


def from_floats(dtype, values):
    if dtype == "F32":
        return array("f", values).tobytes()
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "BF16":
        return array("H", [bf16_bits(v) for v in values]).tobytes()
    raise SystemExit("unsupported target dtype " + dtype)


def build(dump, specs, npz):
    tensors = {}
    for spec in specs:
        new, old = spec.split("=", 1)
        shape = None
        if "@" in old:
            old, s = old.split("@", 1)
            shape = [int(x) for x in s.split(",")]
        want = None
        if ":" in old:
            old, want = old.split(":", 1)
            want = want.upper()
        dtype, oshape, raw = dump[old]
        target = want or dtype
        if npz and target == "BF16":
            target = "F32"
        values = to_floats(dtype, raw)
        if shape is not None:
            n = 1
            for d in shape:
                n *= d
            values, oshape = values[:n], shape
        raw = raw if target == dtype and shape is None else from_floats(target, values)
        tensors[new] = (target, oshape, raw)
    return tensors


def write_safetensors(path, tensors):
    order = sorted(tensors, key=lambda k: (-SIZES[tensors[k][0]], k))
    header, offset, body = {}, 0, []
    for name in order:
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        body.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(body))


def npy_bytes(dtype, shape, raw):
    descr = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}[dtype]
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    head = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(head) + 1) % 64
    head = head + " " * (pad % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode("latin1") + raw


def write_npz(path, tensors, deflate):
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, mode="w", compression=method, allowZip64=True) as zf:
        for name, (dtype, shape, raw) in tensors.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(npy_bytes(dtype, shape, raw))


def main(argv):
    if len(argv) < 4:
        raise SystemExit(__doc__)
    dump, out, rest = read_safetensors(argv[1]), argv[2], argv[3:]
    deflate = "--deflate" in rest
    specs = [s for s in rest if s != "--deflate"]
    npz = out.endswith(".npz")
    tensors = build(dump, specs, npz)
    if npz:
        write_npz(out, tensors, deflate)
    else:
        write_safetensors(out, tensors)


if __name__ == "__main__":
    main(sys.argv)
