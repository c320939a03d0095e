#!/usr/bin/env bash
# run.sh BUILD_DIR [UNIT_FILTER...] — the whole test suite: unit tests, then the CLI scripts.
#
# UNIT_FILTER: substrings of unit test names (all when none); GDN_CLI_TESTS="a b": run
# only the CLI scripts whose names contain one of these words (all when unset).
#
# Every test prints one line starting with PASS, FAIL or SKIP; the last line of
# output is "N passed, N failed" over all of them.  Exit 1 if anything failed.
#
# Each part of the suite is held to a contract, so that a broken harness cannot look
# green:
#   - build/gdnbench-tests prints "unit: N passed, N failed, N skipped" last and exits 0
#     when no test failed, 1 when one did (tests/unit/test_main.c);
#   - each tests/cli/test_*.sh ends with "test_x.sh: N passed, N failed, N skipped"
#     from `finish` / `skip_all` in tests/cli/lib.sh and exits 0 or 1 the same way.
# run.sh records every exit status and adds a FAIL line naming the part when it
# exits with another status (a crash, a kill, a shell error), exits 0 despite a FAIL
# or 1 without one, prints no summary line (it died or exited early), prints a
# summary that disagrees with its PASS/FAIL/SKIP lines, or reports nothing.  A suite
# in which no test passed fails too: it tested nothing.
set -u
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in
/*) bdir=$build ;; # make test BUILD=/abs/dir
*) bdir=$root/$build ;;
esac
export GDNBENCH="$bdir/gdnbench"
export GDNBENCH_ROOT="$root"
log=$(mktemp)
one=$(mktemp)
trap 'rm -f "$log" "$one"' EXIT

# judge NAME RC: checks the output of one part (in $one) against the contract above.
judge() {
    local name=$1 rc=$2 p f s summary want_rc
    p=$(grep -c '^PASS ' "$one")
    f=$(grep -c '^FAIL ' "$one")
    s=$(grep -c '^SKIP ' "$one")
    if [ "$rc" -gt 128 ]; then
        echo "FAIL $name: killed by signal $((rc - 128)) (exit $rc)"
        return
    fi
    want_rc=0
    [ "$f" -gt 0 ] && want_rc=1
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit $rc with $f FAIL line(s) (the contract: 0 with none, 1 with some)"
    fi
    # The summary line, after which no result may follow.
    summary=$(grep -nE "^$name: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$" "$one" | tail -n 1)
    if [ -z "$summary" ]; then
        echo "FAIL $name: no summary line '$name: N passed, N failed, N skipped' (it died or exited early)"
        return
    fi
    local at=${summary%%:*}
    if tail -n "+$((at + 1))" "$one" | grep -qE '^(PASS|FAIL|SKIP) '; then
        echo "FAIL $name: results printed after its summary line"
    fi
    if [ "${summary#*: }" != "$p passed, $f failed, $s skipped" ]; then
        echo "FAIL $name: summary '${summary#*: }' disagrees with the $p PASS, $f FAIL, $s SKIP lines printed"
    fi
    if [ $((p + f + s)) -eq 0 ]; then
        echo "FAIL $name: reported no result at all"
    fi
}

if [ -x "$bdir/gdnbench-tests" ]; then
    "$bdir/gdnbench-tests" "${@:2}" </dev/null 2>&1 | tee "$one"
    rc=${PIPESTATUS[0]}
    cat "$one" >>"$log"
    judge unit "$rc" | tee -a "$log"
else
    echo "FAIL build: $build/gdnbench-tests is missing (did make fail?)" | tee -a "$log"
fi

selected() { # SCRIPT: in GDN_CLI_TESTS, or no filter
    local w
    [ -z "${GDN_CLI_TESTS:-}" ] && return 0
    for w in $GDN_CLI_TESTS; do
        case "$(basename "$1")" in *"$w"*) return 0 ;; esac
    done
    return 1
}

for t in "$root"/tests/cli/test_*.sh; do
    [ -e "$t" ] || continue
    selected "$t" || continue
    bash "$t" </dev/null 2>&1 | tee "$one"
    rc=${PIPESTATUS[0]}
    cat "$one" >>"$log"
    judge "$(basename "$t")" "$rc" | tee -a "$log"
done

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
skipped=$(grep -c '^SKIP ' "$log")
if [ "$passed" -eq 0 ]; then
    echo "FAIL suite: no test passed — nothing was tested"
    failed=$((failed + 1))
fi
echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
