#!/usr/bin/env python3
"""make_fixtures.py — write safetensors fixtures for gdnbench's Gated DeltaNet and
attention ops.

For each op (cumsum, kkt, solve_tril, wy, chunk_h, chunk_o, chunk_fwd, recurrent,
decode, prep_step, decode_seq, attn_fwd, attn_bwd) one OUT/<op>.safetensors holds the op's inputs, in the kernel ABI's dtypes and
layouts (/work/shared/spec/kernels.md), and its expected outputs, computed in float64
by the torch implementation below from exactly those (rounded) inputs.  Tensor names
are the op buffer names gdnbench uses (k, q, v, g, g_cumsum, beta, h0, A, Ai, w, u, h,
v_new, o, final); __metadata__ records the shapes, seed, scale and which tensors are
inputs and outputs.  Expected outputs are stored as F64 (the ideal reference, not
rounded to the kernel's output dtype).

prep_step/decode_seq (the fused Qwen3.5 decode from conv output) take --Hg, --H, --K,
--V as their Hk, Hv, Dk, Dv and --N tokens (decode_seq); attn_fwd/attn_bwd take --Hq,
--Hkv, --qL, --kL, --D, --causal, and their gradients come from torch autograd in
float64 (the fixture of decode_seq also serves decode_seq_steps).

When the `fla` package imports and CUDA is available, FLA's chunk_gated_delta_rule is
run as a second oracle for chunk_fwd and recurrent; its results are stored as o_fla
and final_fla (listed under "oracles", not "outputs").

Only torch is needed (numpy is used when present, for speed); gdnbench itself never
runs Python.  Load a fixture with `gdnbench <op> --fixture OUT/<op>.safetensors`.
"""
import argparse
import json
import math
import os
import struct
import sys

OPS = ["cumsum", "kkt", "solve_tril", "wy", "chunk_h", "chunk_o", "chunk_fwd", "recurrent", "decode",
       "prep_step", "decode_seq", "attn_fwd", "attn_bwd"]


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="make_fixtures.py",
        description="Write safetensors fixtures (inputs + float64 expected outputs) for gdnbench's GDN ops.",
        epilog="Example: scripts/make_fixtures.py --out fixtures/gdn --T 1000 --H 8 --Hg 4 --seed 7",
    )
    p.add_argument("--out", default="fixtures-gen", help="output directory (created; default %(default)s)")
    p.add_argument("--ops", default=",".join(OPS), help="comma list of ops (default: all of %(default)s)")
    p.add_argument("--B", type=int, default=1, help="batch (default %(default)s)")
    p.add_argument("--T", type=int, default=256, help="tokens (default %(default)s; decode always uses 1)")
    p.add_argument("--Hg", type=int, default=2, help="key/query heads (default %(default)s)")
    p.add_argument("--H", type=int, default=4, help="value heads, a multiple of Hg (default %(default)s)")
    p.add_argument("--K", type=int, default=128, help="key head dim (default %(default)s)")
    p.add_argument("--V", type=int, default=128, help="value head dim (default %(default)s)")
    p.add_argument("--BT", type=int, default=64, help="chunk length (default %(default)s; kernels support 64)")
    p.add_argument("--N", type=int, default=5, help="decode_seq tokens (default %(default)s)")
    p.add_argument("--Hq", type=int, default=4, help="attention query heads (default %(default)s)")
    p.add_argument("--Hkv", type=int, default=2, help="attention key/value heads (default %(default)s)")
    p.add_argument("--qL", type=int, default=96, help="attention query length (default %(default)s)")
    p.add_argument("--kL", type=int, default=160, help="attention key length (default %(default)s)")
    p.add_argument("--D", type=int, default=64, help="attention head dim: 64, 128 or 256 (default %(default)s)")
    p.add_argument("--causal", type=int, default=1, choices=(0, 1),
                   help="bottom-right causal mask (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    p.add_argument("--h0-std", type=float, default=0.1, help="stddev of the initial state h0; 0 = zero state")
    p.add_argument("--no-fla", action="store_true", help="do not run FLA even when it is importable")
    p.add_argument("--verify-mlx", metavar="DIR",
                   help="instead of writing fixtures, run this script's float64 math on the inputs of the "
                        "mlx-native fixture sets in DIR and report the relative L2 error against their "
                        "expected outputs (exit 1 above 2e-2)")
    a = p.parse_args(argv)
    bad = [o for o in a.ops.split(",") if o not in OPS]
    if bad:
        p.error("unknown op %s (choose from %s)" % (",".join(bad), ",".join(OPS)))
    for name in ("B", "T", "Hg", "H", "K", "V", "BT", "N", "Hq", "Hkv", "qL", "kL", "D"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name)
    if a.H % a.Hg != 0:
        p.error("--H %d is not a multiple of --Hg %d (GQA needs H %% Hg == 0)" % (a.H, a.Hg))
    if a.Hq % a.Hkv != 0:
        p.error("--Hq %d is not a multiple of --Hkv %d (GQA needs Hq %% Hkv == 0)" % (a.Hq, a.Hkv))
    if a.causal and a.qL > a.kL:
        p.error("--qL %d > --kL %d with --causal 1 leaves queries with no key: use qL <= kL" % (a.qL, a.kL))
    if a.K % 32 != 0 and any(o in ("prep_step", "decode_seq") for o in a.ops.split(",")):
        p.error("--K %d: prep_step/decode_seq need Dk (--K) a multiple of 32" % a.K)
    return a


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        sys.stderr.write(
            "make_fixtures.py: PyTorch is required but `import torch` failed (%s): install it "
            "(pip install torch, or apt-get install python3-torch) and run again; gdnbench itself "
            "does not need Python\n" % e
        )
        sys.exit(2)
    return torch


# ---------------------------------------------------------------- safetensors writer
ST_DTYPES = None  # filled once torch is imported


def tensor_bytes(torch, t):
    flat = t.detach().contiguous().cpu().reshape(-1)
    if flat.numel() == 0:
        return b""
    raw = flat.view(torch.uint8)
    try:
        return raw.numpy().tobytes()
    except (RuntimeError, TypeError, ImportError):  # torch without numpy
        return bytes(raw.tolist())


def write_safetensors(torch, path, tensors, meta):
    """tensors: list of (name, tensor); meta: dict str -> str."""
    header = {"__metadata__": {str(k): str(v) for k, v in meta.items()}}
    blobs, off = [], 0
    for name, t in tensors:
        b = tensor_bytes(torch, t)
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)  # data section 8-byte aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


# ---------------------------------------------------------------- float64 math (kernels.md)
def chunk_ranges(T, BT):
    return [(s, min(s + BT, T)) for s in range(0, T, BT)]


def expand_heads(x, H):
    """[B,T,Hg,D] -> [B,T,H,D]: value head h uses key head h // (H/Hg)."""
    return x.repeat_interleave(H // x.shape[2], dim=2)


def bhl(x):
    """[B,L,H,...] -> [B,H,L,...]"""
    return x.transpose(1, 2)


def cumsum_ref(g, BT):
    gc = g.clone()
    for s, e in chunk_ranges(g.shape[1], BT):
        gc[:, s:e] = g[:, s:e].cumsum(1)
    return gc


def kkt_ref(torch, k, beta, gc, BT):
    B, T, H = beta.shape
    kh = expand_heads(k, H)
    A = torch.zeros(B, T, H, BT, dtype=torch.float64)
    for s, e in chunk_ranges(T, BT):
        L = e - s
        kc, gcc, bc = bhl(kh[:, s:e]), bhl(gc[:, s:e]), bhl(beta[:, s:e])
        strictly_lower = torch.ones(L, L, dtype=torch.bool).tril(-1)
        diff = torch.where(strictly_lower, gcc[..., :, None] - gcc[..., None, :], torch.tensor(-math.inf, dtype=torch.float64))
        Ac = bc[..., None] * (kc @ kc.transpose(-1, -2)) * torch.exp(diff)
        A[:, s:e, :, :L] = bhl(Ac)
    return A


def solve_tril_ref(torch, A, BT):
    Ai = torch.zeros_like(A)
    T = A.shape[1]
    for s, e in chunk_ranges(T, BT):
        L = e - s
        Ac = bhl(A[:, s:e, :, :L])
        eye = torch.eye(L, dtype=torch.float64).expand_as(Ac)
        Ai[:, s:e, :, :L] = bhl(torch.linalg.solve_triangular(eye + Ac, eye, upper=False, unitriangular=True))
    return Ai


def wy_ref(torch, k, v, beta, gc, Ai, BT):
    B, T, H = beta.shape
    kh = expand_heads(k, H)
    w = torch.zeros(B, T, H, k.shape[3], dtype=torch.float64)
    u = torch.zeros(B, T, H, v.shape[3], dtype=torch.float64)
    for s, e in chunk_ranges(T, BT):
        L = e - s
        Aic = bhl(Ai[:, s:e, :, :L])
        bc, gcc = bhl(beta[:, s:e])[..., None], bhl(gc[:, s:e])[..., None]
        w[:, s:e] = bhl(Aic @ (bc * torch.exp(gcc) * bhl(kh[:, s:e])))
        u[:, s:e] = bhl(Aic @ (bc * bhl(v[:, s:e])))
    return w, u


def chunk_h_ref(torch, k, w, u, gc, h0, BT):
    B, T, H, V = u.shape
    kh = expand_heads(k, H)
    ranges = chunk_ranges(T, BT)
    S = h0.clone()  # [B,H,V,K]
    h = torch.zeros(B, len(ranges), H, V, k.shape[3], dtype=torch.float64)
    v_new = torch.zeros(B, T, H, V, dtype=torch.float64)
    for c, (s, e) in enumerate(ranges):
        h[:, c] = S
        wc, uc, kc, gcc = bhl(w[:, s:e]), bhl(u[:, s:e]), bhl(kh[:, s:e]), bhl(gc[:, s:e])
        vn = uc - wc @ S.transpose(-1, -2)  # v_new_t = u_t - S w_t
        v_new[:, s:e] = bhl(vn)
        glast = gcc[..., -1]
        S = torch.exp(glast)[..., None, None] * S + (torch.exp(glast[..., None] - gcc)[..., None] * vn).transpose(-1, -2) @ kc
    return h, v_new, S


def chunk_o_ref(torch, q, k, v_new, h, gc, scale, BT):
    B, T, H, V = v_new.shape
    qh, kh = expand_heads(q, H), expand_heads(k, H)
    o = torch.zeros(B, T, H, V, dtype=torch.float64)
    for c, (s, e) in enumerate(chunk_ranges(T, BT)):
        L = e - s
        qc, kc, vc, gcc = bhl(qh[:, s:e]), bhl(kh[:, s:e]), bhl(v_new[:, s:e]), bhl(gc[:, s:e])
        inter = torch.exp(gcc)[..., None] * (qc @ h[:, c].transpose(-1, -2))
        causal = torch.ones(L, L, dtype=torch.bool).tril()
        diff = torch.where(causal, gcc[..., :, None] - gcc[..., None, :], torch.tensor(-math.inf, dtype=torch.float64))
        intra = ((qc @ kc.transpose(-1, -2)) * torch.exp(diff)) @ vc
        o[:, s:e] = bhl(scale * (inter + intra))
    return o


def recurrent_ref(torch, q, k, v, g, beta, h0, scale):
    """The definition: S = exp(g_t) S; S += beta_t (v_t - S k_t) k_t^T; o_t = scale S q_t."""
    B, T, H, V = v.shape
    qh, kh = expand_heads(q, H), expand_heads(k, H)
    S = h0.clone()
    o = torch.zeros(B, T, H, V, dtype=torch.float64)
    for t in range(T):
        S = torch.exp(g[:, t])[..., None, None] * S
        kt, qt = kh[:, t], qh[:, t]  # [B,H,K]
        err = v[:, t] - (S @ kt[..., None])[..., 0]
        S = S + (beta[:, t][..., None] * err)[..., None] * kt[..., None, :]
        o[:, t] = scale * (S @ qt[..., None])[..., 0]
    return o, S


def chunk_fwd_ref(torch, q, k, v, g, beta, h0, scale, BT):
    gc = cumsum_ref(g, BT)
    Ai = solve_tril_ref(torch, kkt_ref(torch, k, beta, gc, BT), BT)
    w, u = wy_ref(torch, k, v, beta, gc, Ai, BT)
    h, v_new, final = chunk_h_ref(torch, k, w, u, gc, h0, BT)
    return chunk_o_ref(torch, q, k, v_new, h, gc, scale, BT), final


def attention_ref(torch, Q, K, V, causal, scale):
    """O, L of softmax(scale Q K^T) V with GQA (query head h reads kv head h // (Hq/Hkv))
    and a bottom-right causal mask (key j visible to query i when j <= i + kL - qL);
    L is the natural-log logsumexp of the scaled, masked scores."""
    group = Q.shape[1] // K.shape[1]
    Kh, Vh = K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)
    S = scale * (Q @ Kh.transpose(-1, -2))
    if causal:
        qL, kL = Q.shape[2], K.shape[2]
        i = torch.arange(qL)[:, None]
        j = torch.arange(kL)[None, :]
        S = S.masked_fill(j > i + (kL - qL), -math.inf)
    L = torch.logsumexp(S, dim=-1)
    return torch.exp(S - L[..., None]) @ Vh, L


def prep_seq_ref(torch, conv, a_log, dt_bias, a_raw, b_raw, qw, kw, state, Hk, Hv, Dk, Dv):
    """The fused decode (kernels.md "Fused decode prep_step") over N tokens: conv
    [N,B,2*Hk*Dk+Hv*Dv], a_raw/b_raw [N,B,Hv], state [B,Hv,Dv,Dk] -> y [N,B,Hv,Dv], state."""
    N, B = conv.shape[0], conv.shape[1]
    S = state.clone()
    y = torch.zeros(N, B, Hv, Dv, dtype=torch.float64)
    ratio = Hv // Hk
    for t in range(N):
        q = conv[t, :, :Hk * Dk].reshape(B, Hk, Dk)
        k = conv[t, :, Hk * Dk:2 * Hk * Dk].reshape(B, Hk, Dk)
        v = conv[t, :, 2 * Hk * Dk:].reshape(B, Hv, Dv)

        def rms(x, w):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w.reshape(Hk, Dk)

        q = rms(q, qw).repeat_interleave(ratio, dim=1)
        k = rms(k, kw).repeat_interleave(ratio, dim=1)
        g = torch.exp(-torch.exp(a_log) * torch.nn.functional.softplus(a_raw[t] + dt_bias))  # [B,Hv]
        beta = torch.sigmoid(b_raw[t])
        S = g[..., None, None] * S
        err = v - (S @ k[..., None])[..., 0]
        S = S + (beta[..., None] * err)[..., None] * k[..., None, :]
        y[t] = (S @ q[..., None])[..., 0]
    return y, S


def rel_l2(torch, x, ref):
    x, ref = x.to(torch.float64), ref.to(torch.float64)
    return float(torch.linalg.norm((x - ref).reshape(-1)) / max(float(torch.linalg.norm(ref.reshape(-1))), 1e-300))


# ---------------------------------------------------------------- inputs (kernels.md "Realistic synthetic inputs")
def make_inputs(torch, a, T):
    gen = torch.Generator().manual_seed(a.seed)
    f64 = torch.float64

    def normal(*shape):
        return torch.randn(*shape, generator=gen, dtype=f64)

    def unit_rows(x):
        return x / torch.sqrt((x * x).sum(-1, keepdim=True) + 1e-12)

    q = unit_rows(normal(a.B, T, a.Hg, a.K))
    k = unit_rows(normal(a.B, T, a.Hg, a.K))
    v = normal(a.B, T, a.H, a.V)
    x = 2.5 + 1.5 * normal(a.B, T, a.H)
    g = torch.nn.functional.logsigmoid(x).clamp(-8.0, -1e-6)  # natural-log decay in [-8, 0)
    beta = torch.sigmoid(normal(a.B, T, a.H))
    h0 = a.h0_std * normal(a.B, a.H, a.V, a.K)
    return dict(q=q, k=k, v=v, g=g, beta=beta, h0=h0)


def rounded(torch, x, dt):
    """Round to the ABI dtype (round-to-nearest-even, as the kernels) and back to f64."""
    return x.to(dt).to(torch.float64)


# ---------------------------------------------------------------- FLA oracle
def run_fla(torch, q, k, v, g, beta, h0, scale, ref_o, dev="cuda"):
    """FLA's chunk_gated_delta_rule on CUDA.  The public API takes the natural-log g
    (recent FLA converts to log2 internally and uses exp2); if an installed version
    disagrees badly, g / ln 2 (log2 units) is tried and the better one kept."""
    try:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        import fla
    except Exception as e:  # noqa: BLE001 - any import failure means no oracle
        return None, "fla not importable (%s)" % e
    if dev == "cuda" and not torch.cuda.is_available():
        return None, "fla importable but CUDA is not available"
    H = v.shape[2]
    qf = expand_heads(q, H).to(dev, torch.bfloat16).contiguous()
    kf = expand_heads(k, H).to(dev, torch.bfloat16).contiguous()
    vf = v.to(dev, torch.bfloat16).contiguous()
    h0f = h0.transpose(-1, -2).to(dev, torch.float32).contiguous()  # FLA's state is [K, V]
    import inspect
    layout = {}
    try:  # older FLA versions take head_first (and once defaulted it to True); we pass [B,T,H,D]
        if "head_first" in inspect.signature(chunk_gated_delta_rule).parameters:
            layout["head_first"] = False
    except (TypeError, ValueError):
        pass
    best = None
    for units, gin in (("natural-log", g), ("log2 (g / ln 2)", g / math.log(2.0))):
        for beta_dt in (torch.float32, torch.bfloat16):
            try:
                o, final = chunk_gated_delta_rule(
                    qf, kf, vf, gin.to(dev, torch.float32).contiguous(), beta.to(dev, beta_dt).contiguous(),
                    scale=scale, initial_state=h0f, output_final_state=True, **layout)
                break
            except Exception as e:  # noqa: BLE001 - older versions want beta in q's dtype
                err = e
        else:
            return None, "fla chunk_gated_delta_rule failed: %s" % err
        o = o.float().cpu()
        final = final.float().cpu().transpose(-1, -2).contiguous()
        r = rel_l2(torch, o, ref_o)
        if best is None or r < best[3]:
            best = (o, final, units, r)
        if r < 5e-2:
            break
    o, final, units, r = best
    return (o, final, {"fla_version": getattr(fla, "__version__", "?"), "fla_g_input": units,
                       "fla_o_rel_l2_vs_f64": "%.3e" % r}), None


# ---------------------------------------------------------------- mlx-native cross-check
def load_mlx_set(torch, d, prefix):
    with open(os.path.join(d, prefix + "_meta.json")) as f:
        meta = json.load(f)
    ts = {}
    for table in ("inputs", "outputs"):
        for name, e in meta.get(table, {}).items():
            with open(os.path.join(d, e["file"]), "rb") as f:
                raw = bytearray(f.read())
            dt = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}[e["dtype"]]
            ts[(table, name)] = torch.frombuffer(raw, dtype=dt).reshape(e["shape"]).to(torch.float64)
    return meta, ts


def verify_mlx(torch, d):
    """Our float64 math against mlx-native's fixtures (FLA-derived, bf16 outputs): agreement
    at the bf16 level (~3e-3) confirms layouts, head mapping and g conventions."""
    worst, rows = 0.0, []

    def check(what, x, ref):
        nonlocal worst
        r = rel_l2(torch, x, ref)
        worst = max(worst, r)
        rows.append("%-40s rel L2 %.2e" % (what, r))

    sets = {p[:-len("_meta.json")] for p in os.listdir(d) if p.endswith("_meta.json")}
    if "gated_delta_net_kkt" in sets:
        m, t = load_mlx_set(torch, d, "gated_delta_net_kkt")
        check("kkt A", kkt_ref(torch, t["inputs", "k"], t["inputs", "beta"], t["inputs", "g"], m["BT"]),
              t["outputs", "A"])
    if "gated_delta_net_recompute_wu" in sets:
        m, t = load_mlx_set(torch, d, "gated_delta_net_recompute_wu")
        w, u = wy_ref(torch, t["inputs", "k"], t["inputs", "v"], t["inputs", "beta"], t["inputs", "g"],
                      t["inputs", "A"], m["BT"])
        check("wy w", w, t["outputs", "w"])
        check("wy u", u, t["outputs", "u"])
    if "gated_delta_net_chunk" in sets:
        m, t = load_mlx_set(torch, d, "gated_delta_net_chunk")
        h, vn, fin = chunk_h_ref(torch, t["inputs", "k"], t["inputs", "w"], t["inputs", "u"], t["inputs", "g"],
                                 t["inputs", "h0"], m["BT"])
        check("chunk_h h", h, t["outputs", "h"])
        check("chunk_h v_new", vn, t["outputs", "v_new"])
        check("chunk_h final", fin, t["outputs", "final_state"])
    if "gated_delta_net_chunk_o" in sets:
        m, t = load_mlx_set(torch, d, "gated_delta_net_chunk_o")
        check("chunk_o o", chunk_o_ref(torch, t["inputs", "q"], t["inputs", "k"], t["inputs", "v_new"],
                                       t["inputs", "h"], t["inputs", "g"], m["scale"], m["BT"]), t["outputs", "o"])
    if "chunk_gated_delta_rule_fwd" in sets:
        m, t = load_mlx_set(torch, d, "chunk_gated_delta_rule_fwd")
        q, k = t["inputs", "q"], t["inputs", "k"]
        if m.get("use_qk_l2norm_in_kernel"):
            eps = m.get("eps_l2", 1e-6)
            q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + eps)
            k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + eps)
        o, fin = recurrent_ref(torch, q, k, t["inputs", "v"], t["inputs", "g_log_decay"], t["inputs", "beta"],
                               t["inputs", "h0"], m["scale"])
        check("recurrence o (chunk_gated_delta_rule_fwd)", o, t["outputs", "o"])
        check("recurrence final", fin, t["outputs", "final_state"])
    if "chunk_tri_solve_invert" in sets:
        with open(os.path.join(d, "chunk_tri_solve_invert_meta.json")) as f:
            m = json.load(f)
        shape = [m["B"], m["T"], m["H"], m["BT"]]

        def f32file(name):
            with open(os.path.join(d, name), "rb") as f:
                return torch.frombuffer(bytearray(f.read()), dtype=torch.float32).reshape(shape).to(torch.float64)

        check("solve_tril Ai", solve_tril_ref(torch, f32file("chunk_tri_solve_invert_input_a_strict.bin"), m["BT"]),
              f32file("chunk_tri_solve_invert_a_inv_ref.bin"))
    if not rows:
        sys.stderr.write("make_fixtures.py: no mlx-native fixture sets (*_meta.json) in %s\n" % d)
        return 2
    print("\n".join(rows))
    return 1 if worst > 2e-2 else 0


# ---------------------------------------------------------------- fixtures
def main(argv):
    a = parse_args(argv)
    torch = import_torch()
    if a.verify_mlx:
        return verify_mlx(torch, a.verify_mlx)
    global ST_DTYPES
    ST_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.bfloat16: "BF16", torch.float16: "F16",
                 torch.int32: "I32"}
    bf16, f32, f64 = torch.bfloat16, torch.float32, torch.float64
    os.makedirs(a.out, exist_ok=True)
    ops = a.ops.split(",")
    scale = a.K ** -0.5
    BT = a.BT
    T = a.T
    NT = (T + BT - 1) // BT
    inp = make_inputs(torch, a, T)
    # inputs as the kernels see them: q/k/v bf16, g/beta/h0 f32
    q, k, v = (rounded(torch, inp[n], bf16) for n in ("q", "k", "v"))
    g, beta, h0 = (rounded(torch, inp[n], f32) for n in ("g", "beta", "h0"))
    # each stage's inputs are the previous stage's f64 results rounded to the ABI dtype
    gc = rounded(torch, cumsum_ref(g, BT), f32)
    A = rounded(torch, kkt_ref(torch, k, beta, gc, BT), f32)
    Ai = rounded(torch, solve_tril_ref(torch, A, BT), f32)
    w64, u64 = wy_ref(torch, k, v, beta, gc, Ai, BT)
    w, u = rounded(torch, w64, bf16), rounded(torch, u64, bf16)
    h64, vn64, fin64 = chunk_h_ref(torch, k, w, u, gc, h0, BT)
    h, v_new = rounded(torch, h64, bf16), rounded(torch, vn64, bf16)

    base_meta = {"B": a.B, "T": T, "Hg": a.Hg, "H": a.H, "K": a.K, "V": a.V, "BT": BT, "NT": NT,
                 "seed": a.seed, "scale": repr(scale), "g_units": "natural log",
                 "reference": "float64 torch, scripts/make_fixtures.py (kernels.md math)",
                 "torch_version": torch.__version__}

    def fixture(op, ins, outs, extra=None, oracles=None, T_op=T):
        meta = dict(base_meta, op=op, T=T_op, NT=(T_op + BT - 1) // BT,
                    inputs=",".join(n for n, _, _ in ins), outputs=",".join(n for n, _ in outs))
        meta.update(extra or {})
        tensors = [(n, x.to(dt)) for n, x, dt in ins] + [(n, x.to(f64)) for n, x in outs]
        if oracles:
            meta["oracles"] = ",".join(n for n, _ in oracles)
            tensors += [(n, x.to(f32)) for n, x in oracles]
        path = os.path.join(a.out, op + ".safetensors")
        write_safetensors(torch, path, tensors, meta)
        print("wrote %s (%s)" % (path, ", ".join("%s%s" % (n, list(x.shape)) for n, x in tensors)))

    if "cumsum" in ops:
        fixture("cumsum", [("g", g, f32)], [("g_cumsum", cumsum_ref(g, BT))])
    if "kkt" in ops:
        fixture("kkt", [("k", k, bf16), ("beta", beta, f32), ("g_cumsum", gc, f32)],
                [("A", kkt_ref(torch, k, beta, gc, BT))])
    if "solve_tril" in ops:
        fixture("solve_tril", [("A", A, f32)], [("Ai", solve_tril_ref(torch, A, BT))])
    if "wy" in ops:
        fixture("wy", [("k", k, bf16), ("v", v, bf16), ("beta", beta, f32), ("g_cumsum", gc, f32), ("Ai", Ai, f32)],
                [("w", w64), ("u", u64)])
    if "chunk_h" in ops:
        fixture("chunk_h", [("k", k, bf16), ("w", w, bf16), ("u", u, bf16), ("g_cumsum", gc, f32), ("h0", h0, f32)],
                [("h", h64), ("v_new", vn64), ("final", fin64)])
    if "chunk_o" in ops:
        fixture("chunk_o", [("q", q, bf16), ("k", k, bf16), ("v_new", v_new, bf16), ("h", h, bf16),
                            ("g_cumsum", gc, f32)],
                [("o", chunk_o_ref(torch, q, k, v_new, h, gc, scale, BT))])
    if "chunk_fwd" in ops or "recurrent" in ops:
        o_rec, fin_rec = recurrent_ref(torch, q, k, v, g, beta, h0, scale)
        o_chk, fin_chk = chunk_fwd_ref(torch, q, k, v, g, beta, h0, scale, BT)
        # the chunked form and the recurrence are the same math: in f64 they must agree
        d = max(rel_l2(torch, o_chk, o_rec), rel_l2(torch, fin_chk, fin_rec))
        if d > 1e-9:
            sys.stderr.write("make_fixtures.py: internal error: chunked and recurrent f64 references differ "
                             "(rel L2 %.3e)\n" % d)
            return 1
        print("chunked vs recurrent f64 reference: rel L2 %.1e" % d)
        oracles, extra = None, {"use_qk_l2norm": "false"}
        if not a.no_fla:
            res, why = run_fla(torch, q, k, v, g, beta, h0, scale, o_rec)
            if res:
                o_fla, fin_fla, info = res
                oracles = [("o_fla", o_fla), ("final_fla", fin_fla)]
                extra.update(info)
                print("FLA oracle: %s" % info)
            else:
                print("FLA oracle skipped: %s" % why)
        ins = [("q", q, bf16), ("k", k, bf16), ("v", v, bf16), ("g", g, f32), ("beta", beta, f32), ("h0", h0, f32)]
        if "chunk_fwd" in ops:
            fixture("chunk_fwd", ins, [("o", o_chk), ("final", fin_chk)], extra, oracles)
        if "recurrent" in ops:
            fixture("recurrent", ins, [("o", o_rec), ("final", fin_rec)], extra, oracles)
    if "prep_step" in ops or "decode_seq" in ops:
        # the fused Qwen3.5 decode: Hk, Hv, Dk, Dv from --Hg, --H, --K, --V; f32 throughout
        gen = torch.Generator().manual_seed(a.seed + 1)
        Hk, Hv, Dk, Dv = a.Hg, a.H, a.K, a.V

        def normal(*shape):
            return torch.randn(*shape, generator=gen, dtype=f64)

        for op, N in (("prep_step", 1), ("decode_seq", a.N)):
            if op not in ops:
                continue
            conv = rounded(torch, normal(N, a.B, 2 * Hk * Dk + Hv * Dv), f32)
            a_log = rounded(torch, torch.log(1 + 15 * torch.rand(Hv, generator=gen, dtype=f64)), f32)
            dt = torch.exp(math.log(1e-3) + (math.log(0.1) - math.log(1e-3)) * torch.rand(Hv, generator=gen,
                                                                                           dtype=f64))
            dt_bias = rounded(torch, torch.log(torch.expm1(dt)), f32)  # softplus^-1(dt)
            a_raw, b_raw = rounded(torch, normal(N, a.B, Hv), f32), rounded(torch, normal(N, a.B, Hv), f32)
            qw = rounded(torch, (1 + 0.05 * normal(Hk * Dk)) / Dk, f32)  # the attention scale folded in
            kw = rounded(torch, (1 + 0.05 * normal(Hk * Dk)) / math.sqrt(Dk), f32)  # unit-length k
            state = rounded(torch, 0.1 * normal(a.B, Hv, Dv, Dk), f32)
            y, fin = prep_seq_ref(torch, conv, a_log, dt_bias, a_raw, b_raw, qw, kw, state, Hk, Hv, Dk, Dv)
            lead = (lambda x: x[0]) if op == "prep_step" else (lambda x: x)  # prep_step's ABI is one token
            meta = {"op": op, "B": a.B, "Hk": Hk, "Hv": Hv, "Dk": Dk, "Dv": Dv, "seed": a.seed,
                    "reference": base_meta["reference"], "torch_version": torch.__version__}
            if op == "decode_seq":
                meta["N"] = N
            ins = [("conv_out", lead(conv)), ("a_log", a_log), ("dt_bias", dt_bias), ("a_raw", lead(a_raw)),
                   ("b_raw", lead(b_raw)), ("q_norm_weight", qw), ("k_norm_weight", kw), ("state_in", state)]
            outs = [("state_out", fin), ("y", lead(y))]
            meta["inputs"] = ",".join(n for n, _ in ins)
            meta["outputs"] = ",".join(n for n, _ in outs)
            path = os.path.join(a.out, op + ".safetensors")
            tensors = [(n, x.to(f32)) for n, x in ins] + [(n, x.to(f64)) for n, x in outs]
            write_safetensors(torch, path, tensors, meta)
            print("wrote %s (%s)" % (path, ", ".join("%s%s" % (n, list(x.shape)) for n, x in tensors)))
    if "attn_fwd" in ops or "attn_bwd" in ops:
        gen = torch.Generator().manual_seed(a.seed + 2)

        def normal_bf16(*shape):
            return rounded(torch, torch.randn(*shape, generator=gen, dtype=f64), bf16)

        Q = normal_bf16(a.B, a.Hq, a.qL, a.D)
        K = normal_bf16(a.B, a.Hkv, a.kL, a.D)
        V = normal_bf16(a.B, a.Hkv, a.kL, a.D)
        dO = normal_bf16(a.B, a.Hq, a.qL, a.D)
        ascale = a.D ** -0.5
        meta = {"B": a.B, "Hq": a.Hq, "Hkv": a.Hkv, "qL": a.qL, "kL": a.kL, "D": a.D, "causal": a.causal,
                "scale": repr(ascale), "seed": a.seed, "torch_version": torch.__version__,
                "reference": "float64 torch autograd, scripts/make_fixtures.py (kernels.md math)"}
        Qg, Kg, Vg = (x.clone().requires_grad_(True) for x in (Q, K, V))
        O, L = attention_ref(torch, Qg, Kg, Vg, a.causal, ascale)
        # dQ, dK, dV are the gradient of sum(O * dO); dK/dV sum over each GQA group
        # through repeat_interleave's backward
        (O * dO).sum().backward()
        O, L = O.detach(), L.detach()
        Dvec = (O * dO).sum(-1)
        for op in ("attn_fwd", "attn_bwd"):
            if op not in ops:
                continue
            if op == "attn_fwd":
                ins, outs = [("Q", Q, bf16), ("K", K, bf16), ("V", V, bf16)], [("O", O), ("L", L)]
            else:
                ins = [("Q", Q, bf16), ("K", K, bf16), ("V", V, bf16), ("L", L, f32), ("dO", dO, bf16),
                       ("D_vec", Dvec, f32)]
                outs = [("dQ", Qg.grad), ("dK", Kg.grad), ("dV", Vg.grad), ("dK_bf16", Kg.grad),
                        ("dV_bf16", Vg.grad)]
            m = dict(meta, op=op, inputs=",".join(n for n, _, _ in ins), outputs=",".join(n for n, _ in outs))
            tensors = [(n, x.to(dt)) for n, x, dt in ins] + [(n, x.to(f64)) for n, x in outs]
            path = os.path.join(a.out, op + ".safetensors")
            write_safetensors(torch, path, tensors, m)
            print("wrote %s (%s)" % (path, ", ".join("%s%s" % (n, list(x.shape)) for n, x in tensors)))
    if "decode" in ops:
        # One token, f32 throughout, in mlx-native's gated_delta_net_decode_f32 conventions
        # (src/ops/decode.c): g is a positive rate (decay exp(-g)), q comes pre-scaled by
        # K^-0.5 and value head h reads key head h % Hg (tiled GQA, not blocked).
        d = {n: x[:, :1] for n, x in inp.items() if n != "h0"}
        dq = rounded(torch, d["q"] * scale, f32)
        dk, dv = rounded(torch, d["k"], f32), rounded(torch, d["v"], f32)
        rate, db = rounded(torch, -d["g"], f32), rounded(torch, d["beta"], f32)
        Hg, H = dq.shape[2], dv.shape[2]
        tiled = [h % Hg for h in range(H)]
        qh, kh = dq[:, 0, tiled], dk[:, 0, tiled]  # [B,H,K]
        s_in = rounded(torch, h0, f32)
        S = torch.exp(-rate[:, 0])[..., None, None] * s_in
        err = dv[:, 0] - (S @ kh[..., None])[..., 0]
        S = S + (db[:, 0][..., None] * err)[..., None] * kh[..., None, :]
        out = (S @ qh[..., None])[..., 0][:, None]  # [B,1,H,V]
        fixture("decode", [("q", dq, f32), ("k", dk, f32), ("v", dv, f32), ("g", rate, f32), ("beta", db, f32),
                           ("state_in", s_in, f32)], [("output", out), ("state_out", S)], T_op=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
