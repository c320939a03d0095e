#!/usr/bin/env bash
# test_report.sh — `gdnbench report`: tables match the input, emulated devices are
# kept apart and labelled, the SVG charts are well-formed XML (python3's parser, where
# python3 is installed). Fixtures: `gdnbench-testdata reports` (tests/tools/report_fixtures.c).
source "$(dirname "$0")/lib.sh"
need_testdata
fx() { "$TESTDATA" reports "$@" || fail "report: gdnbench-testdata reports $1: exit $?"; }
D=$TMPD/work # lib.sh owns $TMPD/out and $TMPD/err
mkdir -p "$D/in" "$D/out"
sw="dev=gdnbench software device,backend=sw,emulated=1,bw=null"
fx "$D/in/a.json" "T=4096,median=100" "T=8192,median=200" "T=4096,median=3000,$sw" "T=8192,median=6000,$sw"
fx "$D/in/b.json" "T=4096,median=150,dev=Apple M1 Max,bw=400" "T=4096,median=95" \
    "op=kkt,fn=kkt_f32,T=1024,median=12.5,dev=Odd <GPU> & \"co\"" "op=kkt,fn=kkt_f32,T=1024,median=50,backend=cpu,dev=Host CPU,bw=null"

expect_exit 0 "report: renders markdown, charts and html" "$GDNBENCH" report "$D/in" --out "$D/out/r.md" --html "$D/out/r.html"
md=$(cat "$D/out/r.md" 2>/dev/null)
# 8*4096*32 bytes in 95 us = 11.04 GB/s = 2.0% of 546 GB/s; two records for that cell -> best of 2
expect_match "report: cell = median, GB/s, % of peak" "$md" '\| B=1 T=4096 H=32 BT=64 \| 95\.0 us · 11\.0 GB/s · 2\.0% \(best of 2\) \| 150\.0 us · 7\.0 GB/s · 1\.7% \|'
expect_match "report: missing cell shown as -" "$md" '\| B=1 T=8192 H=32 BT=64 \| 200\.0 us · 10\.5 GB/s · 1\.9% \| - \|'
expect_match "report: emulated devices in their own labelled table" "$md" '### Emulated devices \(software Metal device on the host CPU: times are not GPU performance\)'
expect_match "report: emulated cell" "$md" '\| B=1 T=4096 H=32 BT=64 \| 3000 us · 0\.3 GB/s \|'
gpu_header=$(printf '%s\n' "$md" | grep -A2 '^### GPU hardware' | head -3 | grep '^| shape')
if printf '%s' "$gpu_header" | grep -q 'Apple M4 Max' && ! printf '%s' "$gpu_header" | grep -q 'software device'; then
    pass "report: GPU hardware table has no emulated column"
else
    fail "report: GPU hardware table header: $gpu_header"
fi
expect_match "report: CPU backend in its own table" "$md" '### CPU reference backend'
expect_match "report: markdown escapes device names" "$md" 'Odd \\<GPU> & "co"'

# Every chart linked from the Markdown exists next to it and is well-formed SVG.
links=$(printf '%s\n' "$md" | sed -n 's/^!\[.*\](\(.*\.svg\))$/\1/p')
nlinks=$(printf '%s\n' "$links" | grep -c .)
if [ "$nlinks" -eq 4 ]; then pass "report: 4 charts linked"; else fail "report: $nlinks charts linked, expected 4"; fi
if ! command -v python3 >/dev/null 2>&1; then
    skip "report: SVG charts are well-formed, one bar per cell: python3 (its XML parser) is not installed"
elif python3 - "$D/out" $links <<'PY'
import sys, xml.etree.ElementTree as ET
out, names = sys.argv[1], sys.argv[2:]
ns = "{http://www.w3.org/2000/svg}"
bars = {}
for n in names:
    root = ET.parse(f"{out}/{n}").getroot()
    assert root.tag == ns + "svg", root.tag
    bars[n] = [t.text for t in root.iter(ns + "title")]
gpu = bars["r-cumsum-gpu.svg"]
# one bar per non-empty cell: 3 of 4 cells in the cumsum GPU table
assert len(gpu) == 3, gpu
assert any("Apple M1 Max" in t and "6.99" in t for t in gpu), gpu
assert any("Odd <GPU> & \"co\"" in t for t in bars["r-kkt-gpu.svg"]), bars["r-kkt-gpu.svg"]
PY
then pass "report: SVG charts are well-formed, one bar per cell"; else fail "report: SVG charts"; fi
html=$(cat "$D/out/r.html" 2>/dev/null)
expect_match "report: html has inline charts" "$html" '<div><svg xmlns="http://www.w3.org/2000/svg"'
expect_match "report: html escapes names" "$html" 'Odd &lt;GPU&gt; &amp; &quot;co&quot;'

# % of peak against a derived peak is marked, and only then: M1's 68.25 GB/s is derived
# (found through the chip table in a report without device.peak_verified), a record
# may say so itself (bwok=0); Apple's published 546 GB/s (bwok=1) is not marked.
mkdir -p "$D/peaks"
fx "$D/peaks/p.json" "dev=Apple M1,cores=8,bw=68.25" "dev=Apple M4 Max,bwok=1" "dev=Odd GPU,cores=10,bw=100,bwok=0"
expect_exit 0 "report: peaks of mixed standing" "$GDNBENCH" report "$D/peaks/p.json"
expect_match "report: derived peak named in the column header" "$OUT" 'Apple M1 \(metal, 8-core GPU, peak 68\.25 GB/s, derived\)'
expect_match "report: % of a derived peak marked (chip table)" "$OUT" '\| 100\.0 us · 10\.5 GB/s · 15%† \|'
expect_match "report: % of a derived peak marked (peak_verified false)" "$OUT" ' 10\.5 GB/s · 10%† \|'
expect_match "report: % of Apple's published peak not marked" "$OUT" ' 10\.5 GB/s · 1\.9% \|'
expect_match "report: the mark is explained under the table" "$OUT" '^† % of a derived peak: not an Apple-published figure'
if printf '%s' "$md" | grep -q '†'; then
    fail "report: a report with no derived peak has a derived mark"
else
    pass "report: a report with no derived peak has no derived mark"
fi

# Machine state: a marked record's cell carries a double dagger (‡) explained under its table;
# unmarked and unrecorded (null) states do not.
mkdir -p "$D/env"
fx "$D/env/m.json" "T=4096,median=100,thermal=nominal,power=ac,lowpower=0" \
    "T=4096,median=120,dev=Apple M1 Max,bw=400,thermal=nominal,thermal_after=serious,power=battery,lowpower=0" \
    "T=8192,median=200,thermal=null,power=null,lowpower=null"
expect_exit 0 "report: renders marked records" "$GDNBENCH" report "$D/env/m.json" --html "$D/out/env.html"
expect_match "report: marked cell carries a double dagger" "$OUT" '\| B=1 T=4096 H=32 BT=64 \| 100\.0 us · 10\.5 GB/s · 1\.9% \| 120\.0 us · 8\.7 GB/s · 2\.2% ‡ \|'
expect_match "report: the mark is explained under the table" "$OUT" '‡ B=1 T=4096 H=32 BT=64 on Apple M1 Max .*machine state marked \(thermal state nominal before, serious after the runs; on battery power\); timings may be throttled'
if printf '%s\n' "$OUT" | grep -q '^| B=1 T=8192.*‡'; then fail "report: a null machine state was marked"; else pass "report: null machine state not marked"; fi
expect_match "report: html explains the mark" "$(cat "$D/out/env.html" 2>/dev/null)" 'machine state marked \(thermal state nominal before, serious after the runs; on battery power\)'

# A record's warnings (here: --fast-math, which the software device cannot honour) mark
# its cell and are written under the table, in Markdown and HTML alike.
mkdir -p "$D/warn"
"$GDNBENCH" cumsum --B 1 --T 64 --H 2 --iters 3 --warmup 0 --fast-math --json "$D/warn/w.json" >/dev/null 2>&1
expect_exit 0 "report: renders a record with warnings" "$GDNBENCH" report "$D/warn/w.json" --html "$D/out/warn.html"
expect_match "report: ... its cell carries a section sign" "$OUT" '^\| B=1 T=64 H=2 BT=64 \| .* § \|$'
expect_match "report: ... and the warning is under the table" "$OUT" \
    '^§ B=1 T=64 H=2 BT=64 on gdnbench software device \(sw, emulated\): --fast-math has no effect on the software device'
expect_match "report: ... in the HTML page too" "$(cat "$D/out/warn.html" 2>/dev/null)" '§ B=1 T=64 H=2 BT=64 on .*--fast-math has no effect'

expect_exit 0 "report: markdown to stdout without --out" "$GDNBENCH" report "$D/in/a.json"
expect_match "report: stdout markdown" "$OUT" '^# gdnbench report'
expect_exit 2 "report: missing input -> exit 2" "$GDNBENCH" report "$D/nope"
expect_match "report: names the missing input" "$ERR" 'nope: cannot open'
expect_exit 2 "report: unwritable --out -> exit 2" "$GDNBENCH" report "$D/in" --out "$D/no/such/dir/r.md"
expect_match "report: names the output file" "$ERR" 'r\.md: cannot create'
expect_exit 2 "report: no inputs" "$GDNBENCH" report

finish
