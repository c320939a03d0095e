#!/usr/bin/env bash
# test_micro.sh — the micro group from the command line: listed, documented, bad
# shapes rejected with exit 2, and `suite micro` runs every case on the software
# device at its small sizes, passing, with a JSON report.
source "$(dirname "$0")/lib.sh"
need_testdata

expect_exit 0 "micro: list shows the group" "$GDNBENCH" list
expect_match "micro: list has the micro group and its ops" "$OUT" 'micro:'
for op in micro.dispatch micro.copy micro.reduce micro.alu micro.tgmem micro.decode_ctx; do
    expect_match "micro: list has $op" "$OUT" "$op"
done

expect_exit 0 "micro: micro.copy --help" "$GDNBENCH" micro.copy --help
expect_match "micro: copy help gives the M4 Max reference point" "$OUT" '53% of 546 GB/s'
expect_exit 0 "micro: micro.dispatch --help" "$GDNBENCH" micro.dispatch --help
expect_match "micro: dispatch help gives the M4 Max reference point" "$OUT" '7-8 us per dispatch'

expect_exit 2 "micro: copy --vec 3 is rejected" "$GDNBENCH" micro.copy --vec 3
expect_match "micro: the error names --vec" "$ERR" '--vec 3'
expect_exit 2 "micro: decode_ctx H not a multiple of Hkv is rejected" "$GDNBENCH" micro.decode_ctx --mode 1 --H 32 --Hkv 3
expect_match "micro: the error names --H and --Hkv" "$ERR" '--H 32 --Hkv 3'
expect_exit 2 "micro: alu --type 3 is out of range" "$GDNBENCH" micro.alu --type 3

expect_exit 0 "micro: suite micro on sw passes" "$GDNBENCH" suite micro --backend sw --iters 1 --warmup 0 --json "$TMPD/r"
expect_match "micro: suite says emulated and what it left out" "$OUT" 'emulated device: small sizes.*3 GPU-only cases left out'
expect_match "micro: suite prints time per dispatch" "$OUT" 'per dispatch .* 1000 dispatches in 1000 command buffers'
f="$TMPD/r/suite-micro-v1-sw.json"
if [ -s "$f" ]; then pass "micro: suite wrote $(basename "$f")"; else fail "micro: suite wrote no $f"; fi
summary="$("$TESTDATA" json "$f" '#' 2>&1) $("$TESTDATA" json "$f" '[].status' 2>&1 | grep -c '^pass$')"
summary="$summary [$("$TESTDATA" json "$f" '[].op' 2>&1 | LC_ALL=C sort -u | sed "s/.*/'&'/" | paste -sd, - | sed 's/,/, /g')]"
expect_match "micro: 36 cases less 3 GPU-only, all pass, all six ops" "$summary" "^33 33 \['micro.alu', 'micro.copy', 'micro.decode_ctx', 'micro.dispatch', 'micro.reduce', 'micro.tgmem'\]"

finish
