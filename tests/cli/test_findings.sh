#!/usr/bin/env bash
# test_findings.sh — what a kernel author sees of the software device's findings
# (issue 16), through the CLI: the table names each access's .metal line and source
# text, one block per distinct bug, at most --sw-max-findings of them; the JSON
# report (a run's record, validate's cases) carries every finding as a structured
# record.  Kernels: tests/cli/kernels/findings.metal (cumsum ABI), whose lines of
# interest end in "// @name" markers.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
K="$here/kernels/findings.metal"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "findings: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi

line() { grep -n -- "// @$1\$" "$K" | cut -d: -f1; }
v() { "$GDNBENCH" validate cumsum --shader "$K" --B 1 --T 65 --H 2 --profile realistic --function "$@"; }

# A wrong head index: one finding, both writes on the store line, in the table...
expect_exit 1 "findings: validate fails a kernel whose threadgroups write the same head" v head_collapse \
    --json "$TMPD/collapse.json"
expect_match "findings: ... one distinct bug, a device write-write conflict" "$OUT" \
    "found 1 distinct bug \(65 occurrences\) in kernel 'head_collapse': device_write_conflict"
expect_match "findings: ... the table's headline: kind, buffer, bytes, counts" "$OUT" \
    "^ +device memory write-write conflict on buffer\(1\) bytes 0\.\.515 of 520 \(65 occurrences, [0-9]+ threads, 4 threadgroups\)$"
n=$(printf '%s\n' "$OUT" | grep -Ec "^ +write +[^ ]*findings\.metal:$(line collapse-store)  \`gc\[i\] = acc; // @collapse-store\`$")
expect_match "findings: ... both writes named at the store's line with its source text" "$n" '^2$'
n=$(printf '%s\n' "$OUT" | grep -Ec '^ +thread_position_in_grid \([0-9]+,[01],[01]\), threadgroup \(0,[01],[01]\), thread_index_in_threadgroup 0$')
expect_match "findings: ... each with one thread that made it" "$n" '^2$'
# ... and in the JSON, as a structured record.
json=$(tr -d ' \t\n' < "$TMPD/collapse.json" 2>/dev/null)
expect_match "findings: validate's JSON lists the case's device findings" "$json" \
    '"device_findings":\[\{"kind":"device_write_conflict","kernel":"head_collapse","memory":"device","buffer":1,'
expect_match "findings: ... with the byte range, both sites' lines and the counts" "$json" \
    "\"bytes\":\{\"first\":0,\"last\":515\},\"length\":520,\"detail\":null,\"sites\":\[\{\"access\":\"write\",\"size\":(null|4),\"file\":\"[^\"]*findings.metal\",\"line\":$(line collapse-store),.*\"occurrences\":65,\"threads\":[0-9]+,\"threadgroups\":4,"
expect_match "findings: ... and which run they come from" "$json" '"device_findings_run":0'

# The in-place update without a barrier (the chunk_h pattern of issue 16): both
# accesses of the race and the barrier that ends their interval.
expect_exit 1 "findings: validate fails the in-place update without a barrier" v inplace_scale_no_barrier
expect_match "findings: ... as an uninitialised read and a race" "$OUT" \
    "found 2 distinct bugs .*: uninitialized_read, threadgroup_race"
race=$(printf '%s\n' "$OUT" | grep -A5 "threadgroup memory race on 'st'")
expect_match "findings: ... the race's headline" "$race" \
    "^ +threadgroup memory race on 'st' \(line $(line st-array)\) bytes 128\.\.255 of 256 \(128 occurrences, 256 threads, 4 threadgroups\)$"
expect_match "findings: ... the earlier access: the scale's write, by thread 0" "$(printf '%s\n' "$race" | sed -n 2,3p | tr '\n' '|')" \
    "^ +write +[^ ]*findings\.metal:$(line scale)  \`st\[tid \+ 32\] \*= scale; // @scale\`\| +thread_position_in_grid \(0,([01]),([01])\), threadgroup \(0,\1,\2\), thread_index_in_threadgroup 0\|$"
expect_match "findings: ... the later one: the load's write, by thread 32" "$(printf '%s\n' "$race" | sed -n 4,5p | tr '\n' '|')" \
    "^ +write +[^ ]*findings\.metal:$(line load)  .*// @load\`\| +thread_position_in_grid \(32,([01]),([01])\), threadgroup \(0,\1,\2\), thread_index_in_threadgroup 32\|$"
expect_match "findings: ... between the kernel's start and the barrier after the scale" "$(printf '%s\n' "$race" | sed -n 6p)" \
    "^ +no barrier between them: none since the kernel started; the next is at [^ ]*findings\.metal:$(line scale-barrier)$"

# An out-of-bounds tail in a plain run with fast checks: the guard page's fault is
# mapped to the line, and the run's JSON record carries it.
expect_exit 2 "findings: an out-of-bounds tail fails a run with fast checks" "$GDNBENCH" cumsum --shader "$K" \
    --function tail_overrun --B 1 --T 65 --H 2 --sw-checks fast --iters 1 --warmup 0 --json "$TMPD/tail.json"
tail=$(printf '%s\n' "$OUT" | grep -A2 "1 distinct finding of the software device's checks:" | tr '\n' '|')
expect_match "findings: ... the table names the read's line" "$tail" \
    "^ +1 distinct finding of the software device's checks:\| +out-of-bounds read on buffer\(0\) bytes? [0-9.]+ \(past its end; it has 520 bytes\) \([12] occurrences?, [12] threads?, [12] threadgroups?\)\| +read +[^ ]*findings\.metal:$(line tail-read)  \`acc \+= g\[i\]; // @tail-read\`\|$"
json=$(tr -d ' \t\n' < "$TMPD/tail.json" 2>/dev/null)
expect_match "findings: ... and the record's findings key has it" "$json" \
    "\"findings\":\[\{\"kind\":\"out_of_bounds\",\"kernel\":\"tail_overrun\",\"memory\":\"device\",\"buffer\":0,.*\"line\":$(line tail-read),"

# A clean run still says what the device's checks found: nothing.
expect_exit 0 "findings: a correct kernel runs clean" "$GDNBENCH" cumsum --B 1 --T 65 --H 2 --iters 1 --warmup 0 \
    --sw-checks full --json "$TMPD/clean.json"
expect_match "findings: ... and its record says so with an empty list" "$(tr -d ' \t\n' < "$TMPD/clean.json")" \
    '"findings":\[\]'

# At most N findings per case in the table (the JSON keeps all).
expect_exit 1 "findings: --sw-max-findings 1" v inplace_scale_no_barrier --sw-max-findings 1
expect_match "findings: ... shows the first" "$OUT" "read of uninitialised threadgroup memory on 'st'"
n=$(printf '%s\n' "$OUT" | grep -c "threadgroup memory race on 'st'")
expect_match "findings: ... not the second" "$n" '^0$'
expect_match "findings: ... and says how many more there are" "$OUT" \
    "\.\.\. and 1 more distinct finding \(all in the JSON report; --sw-max-findings N shows more\)"
expect_exit 2 "findings: --sw-max-findings -1 is bad input" v inplace_scale_no_barrier --sw-max-findings -1
expect_match "findings: ... naming the flag" "$ERR" "--sw-max-findings -1 is out of range"

# Without a symbolizer the findings are still there, only without source lines.
expect_exit 1 "findings: without a symbolizer validate still fails the bug" env GDNBENCH_SYMBOLIZER=/nonexistent/llvm-symbolizer \
    "$GDNBENCH" validate cumsum --shader "$K" --B 1 --T 65 --H 2 --profile realistic --function head_collapse
expect_match "findings: ... naming it without lines" "$OUT" "device memory write-write conflict on buffer\(1\) bytes"
expect_match "findings: ... at an unknown location" "$OUT" "^ +write +an unknown location$"

finish
