#!/usr/bin/env bash
# test_report_counters.sh — `gdnbench report` with exact counters (issue 31 parts 2 and
# 4), on reports with hand-written `counters` (tests/cli/counters/): a counters table
# per op (one row per counted shape, repeated runs once), the records that could not
# count listed with why; each Mac timing joined with the software device's counts of
# the same kernel, source and shape as a percentage of that chip's floor, the section
# and the JSON-free table labelled a model; a timing whose kernel source differs
# (negative control) or whose chip is not in the table gets no number; reports
# without counters get neither section.
. "$(dirname "$0")/lib.sh"
need_testdata
here=$(cd "$(dirname "$0")" && pwd)
C=$here/counters
D=$TMPD/rc
mkdir -p "$D/in" "$D/plain" "$D/out"
SW="dev=gdnbench software device,backend=sw,emulated=1,bw=null"
"$TESTDATA" reports - <<EOF_FX
$D/in/sw.json|$SW,counters=$C/base.json|$SW,counters=$C/base.json|$SW,T=8192,counters=$C/diverged.json
$D/in/metal.json|median=100,counters=null|T=8192,median=3,dev=Apple M1,cores=8,bw=68.25|T=8192,median=50,dev=Apple M9,cores=8,bw=68.25
$D/in/edited.json|T=8192,median=40,sha=e,dev=Apple M2,cores=10,bw=100
$D/plain/a.json|median=100|$SW
EOF_FX
[ $? -eq 0 ] || { fail "report counters: the fixtures could not be written"; finish; }

expect_exit 0 "report counters: renders" "$GDNBENCH" report "$D/in" --html "$D/out/r.html"
expect_match "report counters: a counters section per op" "$OUT" '^### Counters \(exact counts of the software device'
expect_match "report counters: ... a row per counted shape with its counts" "$OUT" \
    '^\| B=1 T=4096 H=32 BT=64 \| chunk\\_local\\_cumsum\\_g\\_f32 \| 2097152 \| 2097152 \| 16384 \| 2600000 \| 1\.24 \| 100\.0% \| 100\.0% \| 0 \|$'
expect_match "report counters: ... the diverged one's lane utilisation" "$OUT" '^\| B=1 T=8192 H=32 BT=64 \| .* \| 50\.0% \| 100\.0% \| 0 \|$'
rows=$(printf '%s\n' "$OUT" | grep -c '^| B=1 T=4096 H=32 BT=64 | chunk\\_local\\_cumsum\\_g\\_f32 | 2097152')
if [ "$rows" = 1 ]; then pass "report counters: ... a repeated run is one row"; else fail "report counters: ... $rows rows for one shape"; fi
expect_match "report counters: ... and the metal record that could not count, with why" "$OUT" \
    'B=1 T=4096 H=32 BT=64 on Apple M4 Max \(metal\): not counted: the metal backend cannot count'
expect_match "report counters: the floor section says it is a model" "$OUT" \
    '^### Measured time against the floor model \(a MODEL, not a measurement\)'
# M4 Max 40-core: 2097152 B / 546 GB/s = 3.84 us, 100 us measured: 2604%
expect_match "report counters: ... M4 Max: 100 us against a 3.84 us memory floor = 2604%" "$OUT" \
    '^\| B=1 T=4096 H=32 BT=64 \| chunk\\_local\\_cumsum\\_g\\_f32 \| Apple M4 Max \(40-core GPU\) \| 100 us \| 3\.84 us \| memory \| 2604% \|$'
# M1: 68.25 GB/s is derived, 30.7 us floor, 3 us measured (caches)
expect_match "report counters: ... M1: a derived peak is said, and under 100% is shown" "$OUT" \
    'Apple M1 \(8-core GPU\) \| 3 us \| 30\.7 us \| memory \(derived peak\) \| 10% \|$'
expect_match "report counters: ... a chip not in the table gets no number" "$OUT" \
    'Apple M9 \(8-core GPU\) \| 50 us \| - \| - \| no floor'
expect_no_match "report counters: ... a timing of edited source is not joined (control)" "$OUT" 'Apple M2 \(10-core GPU\) \|'
expect_match "report counters: ... the note says what the floor is" "$OUT" '^floor = max\(distinct bytes / bandwidth, flops / peak\)'
html=$(cat "$D/out/r.html" 2>/dev/null)
expect_match "report counters: the HTML page has both sections" "$html" '<h3>Measured time against the floor model \(a MODEL'
expect_match "report counters: ... with the percentage" "$html" '<td class="num">2604%</td>'

expect_exit 0 "report counters: reports without counters (control)" "$GDNBENCH" report "$D/plain"
expect_no_match "report counters: ... have no counters section" "$OUT" '^### Counters'
expect_no_match "report counters: ... and no floor section" "$OUT" 'floor model'
finish
