#!/usr/bin/env bash
# test_floors.sh — the floor model in the --counters table (issue 31 item 2): by
# default a summary of the range over the chip table (not a row per chip), with
# --all-floors every chip's row, on an op and on `gdnbench kernel`; both say it is a
# model and mark derived peaks; the JSON's counters.floors is the same either way,
# one entry per chip.  (The run's own chip first: tests/unit/test_floor_model.c, as
# only a Metal run knows its chip and no Mac runs here.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "floors: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi
need_testdata
Q() { "$TESTDATA" json "$@" 2>&1; }
same() { # description got want
    if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got $2, want $3"; fi
}
rows() { grep -c '^    Apple M' "$1"; }
copy() { # name args...
    local name=$1
    shift
    "$GDNBENCH" micro.copy --MB 1 --backend sw --iters 1 --warmup 0 --counters --json "$TMPD/$name.json" "$@" \
        >"$TMPD/$name.out" 2>&1 || fail "floors: micro.copy $* ran: $(tail -2 "$TMPD/$name.out")"
}

copy short
same "floors: default view: no row per chip" "$(rows "$TMPD/short.out")" 0
expect_match "floors: ... the range: fastest and slowest chip with their floors" "$(cat "$TMPD/short.out")" \
    "31 chips: fastest Apple M3 Ultra \(60 cores\) 2\.56 us, slowest Apple M1 \(7 cores\) 30\.7 us \*"
expect_match "floors: ... the bound across the table, and how to see every chip" "$(cat "$TMPD/short.out")" \
    "bound: memory on every chip; --all-floors prints every chip's row"
expect_match "floors: ... says it is a model and what * means" "$(cat "$TMPD/short.out")" \
    "floor per chip \(a MODEL, not a measurement: .*\* = a derived peak\)"

copy all --all-floors
same "floors: --all-floors: a row per chip" "$(rows "$TMPD/all.out")" 31
expect_match "floors: ... still says it is a model" "$(cat "$TMPD/all.out")" "a MODEL, not a measurement.*\* = a derived peak"
expect_match "floors: ... the M1's row, its derived bandwidth marked" "$(cat "$TMPD/all.out")" \
    "Apple M1 +7 +30\.7 us +0 us +30\.7 us +memory \*"

same "floors: the JSON has every chip either way" \
    "$(Q "$TMPD/short.json" '.counters.floors#') $(Q "$TMPD/all.json" '.counters.floors#')" "31 31"
same "floors: ... the same floors either way" \
    "$(Q "$TMPD/short.json" .counters.floors | md5sum)" "$(Q "$TMPD/all.json" .counters.floors | md5sum)"

# gdnbench kernel: the same two views (30 chips: its flops need an FP32 peak, the M5 has none)
P=$here/kernels/counters_patterns.metal
kern() { # name args...
    local name=$1
    shift
    "$GDNBENCH" kernel "$P" --function uniform_work --grid 64 --threadgroup 32 --buffer x=float32[64]:arange=0,1 \
        --buffer y=float32[64]:zeros --iters 1 --warmup 0 --counters "$@" >"$TMPD/$name.out" 2>&1 ||
        fail "floors: kernel $* ran: $(tail -2 "$TMPD/$name.out")"
}
kern kshort
kern kall --all-floors
same "floors: kernel: summary by default, every chip with --all-floors" \
    "$(rows "$TMPD/kshort.out") $(grep -c 'slowest' "$TMPD/kshort.out") $(rows "$TMPD/kall.out")" "0 1 30"
finish
