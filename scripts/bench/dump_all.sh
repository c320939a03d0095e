#!/usr/bin/env bash
# dump_all.sh OUT_DIR [BUILD_DIR] — every op's --dump (inputs, kernel outputs, both CPU
# references) at shapes with partial chunks, into OUT_DIR, for proving that a change
# leaves every bit as it was:
#
#     bash scripts/bench/dump_all.sh /tmp/before build-old
#     bash scripts/bench/dump_all.sh /tmp/after build
#     diff -r /tmp/before /tmp/after && echo identical
#
# The shapes are the ones the software device's speed work was checked at: every GDN
# stage at T=300 (a 44-token last chunk), chunk_fwd with l2norm and at K=64/V=256,
# chunk_h/chunk_o at their other head dims, the decode ops at their defaults, and
# attention at lengths that are not multiples of its blocks.  One untimed-warmup-free
# sample each (--iters 1 --warmup 0): the dump is of that run.
# Exit 0 when every run wrote its dump; 2 when one could not run.
set -u
[ $# -ge 1 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1
build=${2:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in /*) gdn="$build/gdnbench" ;; *) gdn="$root/$build/gdnbench" ;; esac
[ -x "$gdn" ] || { echo "dump_all.sh: build first (make all): no $gdn" >&2; exit 2; }
mkdir -p "$out" || exit 2

runs=(
    "cumsum --T 300"
    "kkt --T 300"
    "solve_tril --T 300"
    "wy --T 300"
    "chunk_h --T 300"
    "chunk_o --T 300"
    "chunk_fwd --T 300"
    "chunk_fwd --T 200 --l2norm 1"
    "chunk_fwd --T 129 --K 64 --V 256 --Hg 8"
    "recurrent --T 100"
    "decode"
    "prep_step"
    "decode_seq"
    "attn_fwd --qL 100 --kL 130"
    "attn_fwd --qL 128 --kL 128 --causal 0"
    "attn_bwd --qL 100 --kL 130"
    "chunk_h --T 300 --K 64"
    "chunk_h --T 300 --K 256 --V 64"
    "chunk_h --B 2 --T 65 --Hg 4 --H 8"
    "chunk_o --T 300 --K 64 --V 64"
    "chunk_o --T 300 --K 256 --Hg 32"
)
failed=0
for r in "${runs[@]}"; do
    # shellcheck disable=SC2086
    "$gdn" $r --iters 1 --warmup 0 --dump "$out" >"$out/.log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "dump_all.sh: '$r' exited $rc:" >&2
        tail -n 3 "$out/.log" >&2
        failed=1
    fi
done
rm -f "$out/.log"
echo "dump_all.sh: $(ls "$out" | wc -l) dumps in $out"
[ "$failed" -eq 0 ] || exit 2
