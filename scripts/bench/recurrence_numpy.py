#!/usr/bin/env python3
"""recurrence_numpy.py — the Gated DeltaNet token recurrence in plain numpy (f64).

The baseline the C f64 reference (src/ref/gdn_recurrence_ref.c) is timed against:
what a reasonable person writes in numpy — one Python step per token, vectorised
over all (batch, head) states with einsum.  Math (kernels.md "The recurrence"):

    S  = exp(g_t) * S
    S += beta_t * (v_t - S k_t) k_t^T
    o_t = scale * S q_t

Inputs are random with the shapes of `gdnbench chunk_fwd` (q, k unit rows; v ~ N(0,1);
g = logsigmoid-like log decay; beta = sigmoid); the values are not the C tool's (its
generator is different), which does not matter for timing.

Usage: recurrence_numpy.py [--B 1] [--T 4096] [--Hg 16] [--H 32] [--K 128] [--V 128]
Prints the wall time of the recurrence (input generation excluded).
"""
import argparse
import time

import numpy as np


def recurrence(q, k, v, g, beta, h0, scale):
    """q,k [B,T,Hg,K]; v [B,T,H,V]; g, beta [B,T,H]; h0 [B,H,V,K] -> o [B,T,H,V], S."""
    B, T, Hg, K = q.shape
    H = v.shape[2]
    group = H // Hg
    S = h0.copy()
    o = np.empty(v.shape, dtype=np.float64)
    for t in range(T):
        kt = np.repeat(k[:, t], group, axis=1)  # [B,H,K]: value head h uses key head h // group
        qt = np.repeat(q[:, t], group, axis=1)
        S *= np.exp(g[:, t])[:, :, None, None]
        sk = np.einsum("bhvk,bhk->bhv", S, kt)
        delta = beta[:, t][:, :, None] * (v[:, t] - sk)
        S += delta[:, :, :, None] * kt[:, :, None, :]
        o[:, t] = scale * np.einsum("bhvk,bhk->bhv", S, qt)
    return o, S


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("B", 1), ("T", 4096), ("Hg", 16), ("H", 32), ("K", 128), ("V", 128)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    q = rng.standard_normal((a.B, a.T, a.Hg, a.K))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    k = rng.standard_normal((a.B, a.T, a.Hg, a.K))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v = rng.standard_normal((a.B, a.T, a.H, a.V))
    x = 2.5 + 1.5 * rng.standard_normal((a.B, a.T, a.H))
    g = np.clip(-np.log1p(np.exp(-x)), -8.0, -1e-6)
    beta = 1.0 / (1.0 + np.exp(-rng.standard_normal((a.B, a.T, a.H))))
    h0 = 0.1 * rng.standard_normal((a.B, a.H, a.V, a.K))
    t0 = time.perf_counter()
    o, S = recurrence(q, k, v, g, beta, h0, a.K ** -0.5)
    dt = time.perf_counter() - t0
    print(f"numpy f64 recurrence B={a.B} T={a.T} Hg={a.Hg} H={a.H} K={a.K} V={a.V}: "
          f"{dt:.3f} s  (|o|={np.linalg.norm(o):.6g}, |S|={np.linalg.norm(S):.6g})")


if __name__ == "__main__":
    main()
