#!/usr/bin/env bash
# test_launch_limits.sh — the Apple GPU launch limits as warnings (issue 31 part 3,
# core/gpu_limits.h): launch facts, so any backend warns of what a Mac refuses or runs
# badly, in the table (WARNING lines) and the record's JSON `warnings`.  Kernel cases
# on the software device: a threadgroup of 48 threads (a partial simdgroup), 1024
# threads (over the 896 an M2 Ultra gives register-heavy pipelines), 16 KiB of
# threadgroup memory for 32 threads (4 threadgroups, 128 threads a core: under 768),
# each beside its control (64 threads, 896 threads, 128 bytes) that warns of nothing;
# an op (kkt: 24 KiB for 256 threads) warns on the software device and not on the cpu
# backend, which launches no kernel.  Limits over Metal's hard maxima (1024 threads,
# 32 KiB) are refused before a case runs; the unit tests (test_launch_limits.c) cover
# their warnings.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
here=$(cd "$(dirname "$0")" && pwd)
if ! "$G" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "launch limits: the software device is not available here ($("$G" info 2>&1 | grep '^  sw'))"
fi
D=$TMPD/lim
mkdir -p "$D"
cp "$here/kernels/cases/add_one.metal" "$here/kernels/cases/controls.metal" "$D/"

add_one() { # TG N JSON
    (cd "$D" && "$G" kernel add_one.metal --function add_one --grid "$2" --threadgroup "$1" \
        --buffer "x=float32[$2]" --buffer "out=float32[$2]" --buffer "n=uint32:$2" --iters 1 --warmup 0 --json "$3")
}
check_json() { # desc file regex present(1/0)
    local got=0
    grep -Eq "$3" "$2" 2>/dev/null && got=1
    if [ "$got" = "$4" ]; then pass "$1"; else fail "$1: $(grep -A2 '"warnings"' "$2" 2>/dev/null | head -c 400)"; fi
}

expect_exit 0 "limits: 48 threads per threadgroup runs" add_one 48 64 "$D/w48.json"
expect_match "limits: ... warns of the partial simdgroup in the table" "$OUT" \
    'WARNING threads per threadgroup not a multiple of the 32-lane simdgroup.*add_one 48 \(48x1x1: 16 of 32 lanes in the last\)'
check_json "limits: ... and in the JSON warnings" "$D/w48.json" '"warnings":.*not a multiple of the 32-lane simdgroup' 1
expect_exit 0 "limits: 64 threads (control) runs" add_one 64 64 "$D/w64.json"
expect_no_match "limits: ... with no warning" "$OUT" 'WARNING'
check_json "limits: ... and none in the JSON" "$D/w64.json" '"warnings":[[:space:]]*\[\]' 1

expect_exit 0 "limits: 1024 threads runs on the software device" add_one 1024 1024 "$D/w1024.json"
expect_match "limits: ... warns it is over M2 Ultra's 896 for register-heavy pipelines" "$OUT" \
    'WARNING threads per threadgroup over 896.*Blaizzy/mlx-vlm#1799.*add_one 1024 \(1024x1x1\)'
check_json "limits: ... in the JSON too" "$D/w1024.json" '"warnings":.*over 896' 1
expect_exit 0 "limits: 896 threads (control) runs" add_one 896 896 "$D/w896.json"
expect_no_match "limits: ... with no warning" "$OUT" 'WARNING'

occ() { # BYTES JSON
    cat >"$D/occ.json" <<JSON
{"case": 1, "source": "controls.metal", "function": "neighbour_fixed",
 "dispatch": {"threadgroups": [2], "threadgroup": [32], "threadgroup_memory": {"0": $1}},
 "buffers": {"out": {"dtype": "float32", "shape": [32]}}}
JSON
    "$G" kernel "$D/occ.json" --iters 1 --warmup 0 --json "$2"
}
expect_exit 0 "limits: 16 KiB of threadgroup memory for 32 threads runs" occ 16384 "$D/occ16k.json"
expect_match "limits: ... warns the core holds 4 threadgroups, 128 threads" "$OUT" \
    'WARNING low occupancy: threadgroup memory lets fewer than 768 threads share a GPU core.*64 KiB of threadgroup memory per core on M1/M2.*neighbour_fixed 16384 bytes x 32 threads: 4 threadgroups, 128 threads a core'
check_json "limits: ... in the JSON too" "$D/occ16k.json" '"warnings":.*lets fewer than 768 threads share a GPU core' 1
expect_exit 0 "limits: 128 bytes (control) runs" occ 128 "$D/occ128.json"
expect_no_match "limits: ... with no warning" "$OUT" 'WARNING'

small=(--T 64 --H 1 --Hg 1 --iters 1 --warmup 0)
expect_exit 0 "limits: kkt on the software device" "$G" kkt --backend sw "${small[@]}" --json "$D/kkt.json"
expect_match "limits: ... warns its 24 KiB caps occupancy (an op's stage)" "$OUT" \
    'WARNING low occupancy: threadgroup memory lets fewer than 768 threads.*: kkt 24576 bytes x 256 threads: 2 threadgroups, 512 threads a core'
check_json "limits: ... in the JSON too" "$D/kkt.json" '"warnings":.*kkt 24576 bytes' 1
expect_exit 0 "limits: kkt on the cpu backend" "$G" kkt --backend cpu "${small[@]}" --json "$D/kcpu.json"
expect_no_match "limits: ... launches no kernel, so no limit warning" "$OUT" 'WARNING threadgroup'

finish
