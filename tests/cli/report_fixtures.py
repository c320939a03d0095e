#!/usr/bin/env python3
"""report_fixtures.py — synthetic gdnbench JSON reports (schema 1) for the CLI tests
of `compare` and `report`.

Usage: report_fixtures.py OUT.json SPEC [SPEC...]
       report_fixtures.py - < LINES     (each line: OUT.json|SPEC|SPEC...; one python
                                          start for many files keeps the tests fast)
Each SPEC is comma-separated key=value pairs describing one record:
  op, fn (kernel function), sha (one hex digit, repeated to 64), T (shape dim),
  dev (device name), backend, emulated (0/1), bw (peak GB/s or 'null'),
  median (us), spread (us: samples are median + spread * z for fixed z), n
  (samples), status, schema, cores (GPU cores), bwok (1/0: device.peak_verified's
  bandwidth flag; left out, the record has no peak_verified, as older reports); the
  machine state (`environment`, written only when one of these is given, as a
  report from before it existed has none): thermal (before and after the runs),
  thermal_after, power (ac/battery/null), lowpower (0/1/null).
Samples are deterministic: z are the n evenly spaced normal quantiles, so the
sample median is exactly `median` (n odd) and the spread is controlled.
One SPEC writes an object, several write an array."""
import json
import statistics
import sys
from statistics import NormalDist

DEFAULTS = dict(op="cumsum", fn="chunk_local_cumsum_g_f32", sha="a", T="4096", dev="Apple M4 Max",
                backend="metal", emulated="0", bw="546", median="100", spread="1", n="21",
                status="pass", schema="1", cores="40", bwok=None)


def record(spec):
    p = dict(DEFAULTS)
    for kv in filter(None, spec.split(",")):
        k, v = kv.split("=", 1)
        p[k] = v
    n = int(p["n"])
    med, spread = float(p["median"]), float(p["spread"])
    z = [NormalDist().inv_cdf((i + 0.5) / n) for i in range(n)] if n else []
    # interleave so the order of measurement is not sorted
    samples = [round(med + spread * zi, 6) for zi in z[::2] + z[1::2]]
    T = int(p["T"])
    nbytes = 8.0 * T * 32
    bw = None if p["bw"] == "null" else float(p["bw"])
    m = statistics.median(samples) if samples else None
    gbps = nbytes / m / 1e3 if m else None

    def s(f):
        return f(samples) if samples else None

    device = {"name": p["dev"], "backend": p["backend"], "emulated": p["emulated"] == "1",
              "gpu_cores": int(p["cores"]) if bw else None, "bandwidth_gbps": bw, "fp32_tflops": None,
              "fp16_tflops": None}
    if p["bwok"] is not None:
        device["peak_verified"] = {"bandwidth_gbps": p["bwok"] == "1" if bw else None, "fp32_tflops": None,
                                   "fp16_tflops": None}
    rec = {
        "schema": int(p["schema"]),
        "tool": {"name": "gdnbench", "version": "0.1.0", "git_sha": None},
        "host": {"os": "Linux", "kernel": "6", "arch": "x86_64", "cpu": "test", "cores": 2,
                 "hostname_hash": "0123456789abcdef"},
        "device": device,
        "op": p["op"],
        "kernel": {"source": "shaders/gdn_cumsum.metal", "function": p["fn"], "sha256": p["sha"] * 64,
                   "constants": []},
        "seed": 1,
        "shape": {"B": 1, "T": T, "H": 32, "BT": 64, "dtypes": {"g": "f32", "g_cumsum": "f32"}},
        "launch": {"grid": [1, 32, T // 64], "threadgroup": [64, 1, 1], "threadgroup_memory_bytes": 0},
        "timing": {"unit": "us", "warmup": 2, "iterations": n, "samples": samples,
                   "min": s(min), "median": m, "mean": s(statistics.fmean),
                   "p90": s(lambda x: sorted(x)[int(0.9 * (len(x) - 1))]), "max": s(max),
                   "stddev": s(lambda x: statistics.stdev(x) if len(x) > 1 else 0.0),
                   "cv": s(lambda x: (statistics.stdev(x) if len(x) > 1 else 0.0) / statistics.fmean(x)),
                   "source": "gpu", "wall": None},
        "throughput": {"bytes": nbytes, "flops": T * 32.0, "gbps": gbps, "tflops": None,
                       "pct_of_peak_bandwidth": 100 * gbps / bw if (gbps and bw) else None,
                       "pct_of_peak_flops": None},
        "check": [],
        "determinism": None,
        "status": p["status"],
        "error": None if p["status"] == "pass" else "A: 3 elements outside tolerance",
    }
    if any(k in p for k in ("thermal", "thermal_after", "power", "lowpower")):
        rec["environment"] = environment(p)
    return rec


def environment(p):
    def val(key):
        v = p.get(key, "null")
        return None if v == "null" else v
    before = val("thermal")
    after = p["thermal_after"] if "thermal_after" in p else before
    after = None if after == "null" else after
    low = val("lowpower")
    low = None if low is None else low == "1"
    power = val("power")
    marks = []
    if (before and before != "nominal") or (after and after != "nominal"):
        marks.append("thermal state %s before, %s after the runs" % (before or "unknown", after or "unknown"))
    if low:
        marks.append("Low Power Mode on")
    if power == "battery":
        marks.append("on battery power")
    return {"macos_version": "15.1", "thermal_state_before": before, "thermal_state_after": after,
            "low_power_mode": low, "power_source": power, "gpu_name": p["dev"], "gpu_cores": 40,
            "gpu_families": ["Apple7", "Apple8", "Apple9", "Metal3"],
            "recommended_max_working_set_bytes": 40000000000, "paravirtual": False,
            "marked": bool(marks), "marks": marks}


def write(out, specs):
    recs = [record(s) for s in specs]
    with open(out, "w") as f:
        json.dump(recs[0] if len(recs) == 1 else recs, f, indent=1)


def main():
    if sys.argv[1] == "-":
        for line in sys.stdin:
            fields = line.strip().split("|")
            if fields[0]:
                write(fields[0], fields[1:])
    else:
        write(sys.argv[1], sys.argv[2:])


if __name__ == "__main__":
    main()
