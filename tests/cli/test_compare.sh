#!/usr/bin/env bash
# test_compare.sh — `gdnbench compare` on synthetic reports with known shifts.
# Fixtures come from `gdnbench-testdata reports` (tests/tools/report_fixtures.c:
# deterministic samples, median + spread*z).
source "$(dirname "$0")/lib.sh"
need_testdata
D=$TMPD/work # lib.sh owns $TMPD/out and $TMPD/err
mkdir -p "$D"
# All fixtures from one run of the writer.
mkdir -p "$D/dirA" "$D/dirB"
"$TESTDATA" reports - <<EOF_FX
$D/base.json|median=100,spread=1
$D/slow.json|median=110,spread=1
$D/noisy_base.json|median=100,spread=15
$D/noisy_new.json|median=102,spread=15
$D/wide_base.json|median=100,spread=30,n=6
$D/wide_new.json|median=108,spread=30,n=6
$D/three_base.json|median=100,n=3
$D/three_new.json|median=150,n=3
$D/fast.json|median=90,spread=1
$D/broken.json|median=90,spread=1,status=fail
$D/edited.json|median=100.5,spread=1,sha=b
$D/dirA/r1.json|T=4096,median=100|T=8192,median=200
$D/dirA/r2.json|T=4096,median=300,dev=gdnbench software device,backend=sw,emulated=1,bw=null
$D/dirB/r1.json|T=4096,median=101|T=8192,median=230
$D/schema2.json|schema=2
$D/other_op.json|op=kkt,fn=kkt_kernel
$D/sw.json|dev=gdnbench software device,backend=sw,emulated=1,bw=null
$D/env_cool.json|thermal=nominal,power=ac,lowpower=0
$D/env_cool_slow.json|median=110,thermal=nominal,power=ac,lowpower=0
$D/env_hot_slow.json|median=110,thermal=nominal,thermal_after=serious,power=ac,lowpower=0
$D/env_battery.json|median=100.5,thermal=nominal,power=battery,lowpower=0
$D/env_lowpower.json|thermal=nominal,power=ac,lowpower=1
$D/env_unknown.json|thermal=null,power=null,lowpower=null
$D/env_linux.json|thermal=null,power=ac,lowpower=null
EOF_FX
fx_rc=$?
if [ "$fx_rc" -ne 0 ]; then
    fail "compare: gdnbench-testdata reports exited $fx_rc writing the fixtures"
    finish
fi

# 10% slower with 1% noise, 21 samples each: a clear regression.
expect_exit 1 "compare: 10% slower, low noise -> regression, exit 1" "$GDNBENCH" compare "$D/base.json" "$D/slow.json"
expect_match "compare: regression verdict and change shown" "$OUT" "regression: slower by 10\.0%"
expect_match "compare: summary counts the regression" "$OUT" "1 regression,"

# 2% slower with 15% noise: within the threshold -> same, exit 0.
expect_exit 0 "compare: 2% slower, high noise -> same, exit 0" "$GDNBENCH" compare "$D/noisy_base.json" "$D/noisy_new.json"
expect_match "compare: verdict same" "$OUT" "same: within 5%"

# 8% slower but so noisy (n=6, spread 30) that the U test cannot tell: noisy, exit 0.
expect_exit 0 "compare: change beyond threshold but p >= alpha -> noisy, exit 0" "$GDNBENCH" compare "$D/wide_base.json" "$D/wide_new.json"
expect_match "compare: noisy verdict names alpha" "$OUT" "noisy: \+8\.0% but p = .* >= alpha 0\.01"

# 3 samples per side: too few to judge, even at +50%.
expect_exit 0 "compare: 3 samples -> noisy, exit 0" "$GDNBENCH" compare "$D/three_base.json" "$D/three_new.json"
expect_match "compare: too few samples" "$OUT" "noisy: too few samples \(3 vs 3; need 5\)"

# 10% faster: improvement, exit 0.
expect_exit 0 "compare: 10% faster -> improvement, exit 0" "$GDNBENCH" compare "$D/base.json" "$D/fast.json"
expect_match "compare: improvement verdict" "$OUT" "improvement: faster by 10\.0%"

# pass -> fail is a regression whatever the timing (here it even got faster).
expect_exit 1 "compare: pass -> fail -> regression, exit 1" "$GDNBENCH" compare "$D/base.json" "$D/broken.json"
expect_match "compare: correctness regression named" "$OUT" "regression: correctness: pass -> fail"

# Edited kernel (source hash differs): still paired, and marked.
expect_exit 0 "compare: edited kernel pairs by function" "$GDNBENCH" compare "$D/base.json" "$D/edited.json"
expect_match "compare: kernel source change noted" "$OUT" "kernel source changed"

# Directories, arrays, several pairs; one NEW record on another backend stays unpaired.
expect_exit 1 "compare: directories of reports" "$GDNBENCH" compare "$D/dirA" "$D/dirB"
expect_match "compare: 2 pairs" "$OUT" "^2 pairs: 1 regression"
expect_match "compare: the sw record is unpaired, not compared with metal" "$OUT" "unpaired in BASE: cumsum .*backend differs \(sw here, metal in NEW\): records are never compared across backends"

# Machine state (environment): the same state compares as before.
expect_exit 1 "compare: same machine state -> compared, regression found" "$GDNBENCH" compare "$D/env_cool.json" "$D/env_cool_slow.json"
expect_match "compare: same machine state, regression verdict" "$OUT" "regression: slower by 10\.0%"
# A run that got hot: not a regression to report but a refusal, exit 2, naming the difference.
expect_exit 2 "compare: thermal state differs -> exit 2" "$GDNBENCH" compare "$D/env_cool.json" "$D/env_hot_slow.json"
expect_match "compare: refusal names the thermal difference and the override" "$ERR" "machine state differs .*thermal state after the runs nominal in BASE, serious in NEW.*--ignore-machine-state"
if [ -z "$OUT" ]; then pass "compare: refusal prints no verdicts"; else fail "compare: refusal printed verdicts: $OUT"; fi
expect_exit 1 "compare: --ignore-machine-state compares anyway" "$GDNBENCH" compare --ignore-machine-state "$D/env_cool.json" "$D/env_hot_slow.json"
expect_match "compare: the note says the machine state differs" "$OUT" "regression: slower by 10\.0%.*machine state differs \(--ignore-machine-state\): thermal state after the runs nominal in BASE, serious in NEW"
expect_exit 2 "compare: battery vs AC -> exit 2" "$GDNBENCH" compare "$D/env_cool.json" "$D/env_battery.json"
expect_match "compare: names the power source" "$ERR" "power source ac in BASE, battery in NEW"
expect_exit 2 "compare: Low Power Mode differs -> exit 2" "$GDNBENCH" compare "$D/env_lowpower.json" "$D/env_cool.json"
expect_match "compare: names Low Power Mode" "$ERR" "Low Power Mode on in BASE, off in NEW"
# Unknown (null) or unrecorded states are not a difference: compared, and said.
expect_exit 0 "compare: null machine state vs known -> compared" "$GDNBENCH" compare "$D/env_unknown.json" "$D/env_cool.json"
expect_match "compare: notes the state is not recorded on one side" "$OUT" "same: .*machine state not recorded on one side"
expect_exit 0 "compare: both null -> compared" "$GDNBENCH" compare "$D/env_unknown.json" "$D/env_unknown.json"
expect_exit 0 "compare: report without environment vs with -> compared" "$GDNBENCH" compare "$D/base.json" "$D/env_cool.json"
expect_exit 0 "compare: partly known states that agree -> compared" "$GDNBENCH" compare "$D/env_linux.json" "$D/env_cool.json"
# Both on battery: the same state, compared, and the marks named.
expect_exit 0 "compare: both marked the same -> compared" "$GDNBENCH" compare "$D/env_battery.json" "$D/env_battery.json"
expect_match "compare: marked sides named in the note" "$OUT" "BASE marked: on battery power; NEW marked: on battery power"
expect_exit 1 "compare: --format json with --ignore-machine-state" "$GDNBENCH" compare --format json --ignore-machine-state "$D/env_cool.json" "$D/env_hot_slow.json"
printf '%s' "$OUT" > "$D/cmp_env.json"
if ! command -v python3 >/dev/null 2>&1; then
    skip "compare: json says machine_state_differs: python3 (to parse the JSON) is not installed"
elif python3 - "$D/cmp_env.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["pairs"][0]
assert p["machine_state_differs"] is True, p
assert "serious in NEW" in p["note"], p
PY
then pass "compare: json says machine_state_differs"; else fail "compare: json machine_state_differs"; fi

# Markdown and JSON formats.
expect_exit 1 "compare: --format markdown" "$GDNBENCH" compare "$D/base.json" "$D/slow.json" --format markdown
expect_match "compare: markdown table row" "$OUT" "^\| \*\*regression\*\* \| cumsum \| chunk_local_cumsum_g_f32 \|"
expect_exit 1 "compare: --format json" "$GDNBENCH" compare --format json "$D/base.json" "$D/slow.json"
printf '%s' "$OUT" > "$D/cmp.json"
if ! command -v python3 >/dev/null 2>&1; then
    skip "compare: json output has verdict, change, p: python3 (to parse the JSON) is not installed"
elif python3 - "$D/cmp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["pairs"][0]
assert p["verdict"] == "regression", p
assert abs(p["change_pct"] - 10.0) < 1e-9, p
assert p["base_samples"] == 21 and p["new_samples"] == 21
assert p["p_value"] < 1e-6
assert d["summary"]["regressions"] == 1
PY
then pass "compare: json output has verdict, change, p"; else fail "compare: json output content"; fi

# --threshold / --alpha change the decision.
expect_exit 0 "compare: --threshold 15 makes 10% slower 'same'" "$GDNBENCH" compare "$D/base.json" "$D/slow.json" --threshold 15
expect_exit 2 "compare: bad --alpha" "$GDNBENCH" compare "$D/base.json" "$D/slow.json" --alpha 2
expect_match "compare: bad --alpha names the flag" "$ERR" "--alpha 2"

# Fast math on one side only: the same source, but not the same compiled kernel.  The
# software device records fast_math false whatever the flag (it has none), so NEW's
# report is BASE's with the field turned on, as a Metal run with --fast-math writes it.
"$GDNBENCH" cumsum --B 1 --T 64 --H 2 --iters 5 --warmup 0 --json "$D/fm_off.json" >/dev/null 2>&1
sed 's/"fast_math":[[:space:]]*false/"fast_math":true/' "$D/fm_off.json" > "$D/fm_on.json"
if grep -q '"fast_math":true' "$D/fm_on.json"; then
    expect_exit 0 "compare: fast math on one side only still pairs" "$GDNBENCH" compare "$D/fm_off.json" "$D/fm_on.json"
    expect_match "compare: ... marked as a changed kernel, naming fast math" "$OUT" \
        "fast math off in BASE, fast math on in NEW"
    expect_exit 0 "compare: fast math on both sides" "$GDNBENCH" compare "$D/fm_on.json" "$D/fm_on.json"
    if printf '%s' "$OUT" | grep -q "fast math"; then fail "compare: ... is not a change"; else pass "compare: ... is not a change"; fi
else
    fail "compare: a sw report records kernel.fast_math (got: $(grep -o '"fast_math":[^,}]*' "$D/fm_off.json"))"
fi

# Bad input: exit 2 with a one-line message naming the file.
expect_exit 2 "compare: different schema -> exit 2" "$GDNBENCH" compare "$D/base.json" "$D/schema2.json"
expect_match "compare: schema message names the file" "$ERR" "schema2\.json: report schema 2, but this gdnbench reads schema 1"
expect_exit 2 "compare: unreadable file -> exit 2" "$GDNBENCH" compare "$D/base.json" "$D/missing.json"
expect_match "compare: unreadable message names the file" "$ERR" "missing\.json: cannot open"
printf '{"schema": 1, "op": ' > "$D/truncated.json"
expect_exit 2 "compare: truncated JSON -> exit 2" "$GDNBENCH" compare "$D/truncated.json" "$D/base.json"
expect_match "compare: invalid JSON names the file" "$ERR" "truncated\.json: not valid JSON"
expect_exit 2 "compare: nothing to pair -> exit 2" "$GDNBENCH" compare "$D/base.json" "$D/other_op.json"
expect_match "compare: nothing-to-pair message" "$ERR" "nothing to pair"
expect_exit 2 "compare: only another backend -> nothing to pair" "$GDNBENCH" compare "$D/base.json" "$D/sw.json"
expect_match "compare: says the backend differs" "$ERR" "backend differs"
expect_exit 2 "compare: one path only" "$GDNBENCH" compare "$D/base.json"
expect_exit 2 "compare: empty directory" "$GDNBENCH" compare "$D/base.json" "$(mktemp -d "$D/emptyXXXX")"
expect_exit 0 "compare: --help" "$GDNBENCH" compare --help

finish
