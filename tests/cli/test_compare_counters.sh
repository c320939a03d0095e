#!/usr/bin/env bash
# test_compare_counters.sh — `gdnbench compare` gating on exact counters (issue 31
# part 4) on reports with hand-written `counters` (tests/cli/counters/, spliced by
# `gdnbench-testdata reports counters=FILE`): a kernel that reads its input twice
# raises requested bytes and exits 1 while its timing verdict is "same" — in the
# table, the Markdown, the JSON and JUnit — and the same counts on both sides (the
# control) exit 0; a fall of lane utilisation is a regression; --counter-tolerance
# lets a change through; a pair without counters on a side is not judged and says
# why; --counters-only leaves timing unjudged, and refuses (exit 2) when it cannot
# judge a pair (none, or one whose side lost its counters); reports without counters
# show no counters section.
. "$(dirname "$0")/lib.sh"
need_testdata
here=$(cd "$(dirname "$0")" && pwd)
C=$here/counters
D=$TMPD/cc
mkdir -p "$D"
SW="dev=gdnbench software device,backend=sw,emulated=1,bw=null"
"$TESTDATA" reports - <<EOF_FX
$D/base.json|$SW,counters=$C/base.json
$D/twice.json|$SW,sha=b,median=100.2,counters=$C/reads_twice.json
$D/same.json|$SW,sha=b,median=100.2,counters=$C/base.json
$D/diverged.json|$SW,counters=$C/diverged.json
$D/slow_same_counts.json|$SW,median=110,counters=$C/base.json
$D/none.json|$SW
$D/metal_a.json|counters=null
$D/metal_b.json|counters=null,median=100.5
$D/plain_a.json|median=100
$D/plain_b.json|median=100.5
$D/suite_base.json|$SW,counters=$C/base.json|$SW,op=kkt,fn=kkt_fn,counters=$C/base.json
$D/suite_lost.json|$SW,counters=$C/base.json|$SW,op=kkt,fn=kkt_fn,counters=null
EOF_FX
[ $? -eq 0 ] || { fail "compare counters: the fixtures could not be written"; finish; }

expect_exit 1 "counters: reading the input twice is a regression, exit 1" "$GDNBENCH" compare "$D/base.json" "$D/twice.json"
expect_match "counters: ... while the timing verdict is same" "$OUT" 'same: within 5%; kernel source changed'
expect_match "counters: ... its own section names the counter" "$OUT" \
    'regression: requested device bytes 2097152 -> 3145728 \(\+50\.0%\)'
expect_match "counters: ... and the summary counts it" "$OUT" '^counters: 1 regression, 0 improvements, 0 same, 0 not judged'
expect_exit 0 "counters: the same counts after an edit (control) exit 0" "$GDNBENCH" compare "$D/base.json" "$D/same.json"
expect_match "counters: ... same: 6 counters within 0%" "$OUT" 'same: 6 counters within 0%'
expect_exit 1 "counters: a fall of lane utilisation is a regression" "$GDNBENCH" compare "$D/base.json" "$D/diverged.json"
expect_match "counters: ... named with both values" "$OUT" 'regression: lane utilisation 1 -> 0\.5 \(-50\.0%\)'
expect_exit 0 "counters: --counter-tolerance 0.5 lets +50% through" "$GDNBENCH" compare "$D/base.json" "$D/twice.json" \
    --counter-tolerance 0.5
expect_exit 1 "counters: --counter-tolerance 0.49 does not" "$GDNBENCH" compare "$D/base.json" "$D/twice.json" \
    --counter-tolerance 0.49
expect_exit 2 "counters: a negative tolerance is bad input" "$GDNBENCH" compare "$D/base.json" "$D/twice.json" \
    --counter-tolerance -0.1
expect_match "counters: ... one line naming the flag" "$ERR" '^gdnbench compare: --counter-tolerance -0\.1: expected a relative change >= 0'

# Markdown, JSON and JUnit carry the same verdict.
expect_exit 1 "counters: markdown" "$GDNBENCH" compare "$D/base.json" "$D/twice.json" --format markdown
expect_match "counters: ... has a counters table with the regression in bold" "$OUT" \
    '^\| \*\*regression\*\* \| cumsum \| chunk_local_cumsum_g_f32 \| .* requested device bytes 2097152 -> 3145728'
expect_exit 1 "counters: json and junit" "$GDNBENCH" compare "$D/base.json" "$D/twice.json" --format json \
    --junit "$D/j.xml"
printf '%s\n' "$OUT" >"$D/cmp.json"
got=$("$TESTDATA" json "$D/cmp.json" .pairs[0].verdict .pairs[0].counters.verdict .pairs[0].counters.judged \
    .pairs[0].counters.metrics[0].name .pairs[0].counters.metrics[0].base .pairs[0].counters.metrics[0].new \
    .summary.counter_regressions .counter_tolerance .counters_only 2>&1 | tr '\n' ' ')
expect_match "counters: ... the JSON pair has a counters verdict beside the timing one" "$got" \
    '^same regression true requested_device_bytes 2097152 3145728 1 0 false $'
junit=$(cat "$D/j.xml" 2>/dev/null)
expect_match "counters: ... JUnit has a counters test case" "$junit" \
    '<testcase classname="gdnbench.compare.counters.cumsum" name="[^"]*\(counters\)"'
expect_match "counters: ... that fails on the regression" "$junit" '<failure message="counters regression: requested device bytes'

# Not judged: a side without counters, a backend that cannot count.
expect_exit 0 "counters: NEW without counters is not judged, exit 0" "$GDNBENCH" compare "$D/base.json" "$D/none.json"
expect_match "counters: ... and says why" "$OUT" 'not judged: no counters in NEW \(run it with --counters on the software device\)'
expect_exit 0 "counters: metal records (counters null) are not judged" "$GDNBENCH" compare "$D/metal_a.json" "$D/metal_b.json"
expect_match "counters: ... with the backend's reason" "$OUT" 'not judged: BASE could not count: the metal backend cannot count'
expect_exit 0 "counters: reports without counters (control): exit 0" "$GDNBENCH" compare "$D/plain_a.json" "$D/plain_b.json"
expect_no_match "counters: ... and no counters section" "$OUT" '^counters'

# --counters-only: timing is not judged (a 10% slower run with the same counts passes).
expect_exit 1 "counters: 10% slower with the same counts is a timing regression" "$GDNBENCH" compare "$D/base.json" \
    "$D/slow_same_counts.json"
expect_exit 0 "counters: ... which --counters-only does not judge, exit 0" "$GDNBENCH" compare "$D/base.json" \
    "$D/slow_same_counts.json" --counters-only
expect_match "counters: ... the timing verdict says so" "$OUT" 'not judged: timing not judged \(--counters-only\)'
expect_exit 1 "counters: --counters-only still fails a counter regression" "$GDNBENCH" compare "$D/base.json" \
    "$D/twice.json" --counters-only
expect_exit 2 "counters: --counters-only with nothing it can judge is exit 2" "$GDNBENCH" compare "$D/metal_a.json" \
    "$D/metal_b.json" --counters-only
expect_match "counters: ... naming why" "$ERR" '^gdnbench compare: --counters-only, but no pair has counters on both sides \(first: BASE could not count'
# a suite whose NEW lost one op's counters (its counting run failed: counters null):
# the gate cannot vouch for that op, so --counters-only refuses; the same suite with
# counters on both sides is the control
expect_exit 2 "counters: --counters-only with one of 2 pairs not judgeable is exit 2" "$GDNBENCH" compare \
    "$D/suite_base.json" "$D/suite_lost.json" --counters-only
expect_match "counters: ... naming the pair and why" "$ERR" \
    '^gdnbench compare: --counters-only, but 1 of 2 pairs cannot be judged \(first: kkt .*NEW could not count'
expect_exit 0 "counters: ... the same suite with counters on both sides (control): exit 0" "$GDNBENCH" compare \
    "$D/suite_base.json" "$D/suite_base.json" --counters-only
expect_exit 0 "counters: ... without --counters-only the lost pair is only not judged: exit 0" "$GDNBENCH" compare \
    "$D/suite_base.json" "$D/suite_lost.json"
expect_exit 0 "counters: --help documents the flags" "$GDNBENCH" compare --help
expect_match "counters: ... --counter-tolerance and --counters-only" "$OUT" '--counter-tolerance F.*'
expect_match "counters: ... --counters-only" "$OUT" '--counters-only +judge the exact counters alone'

finish
