#!/usr/bin/env bash
# run.sh BUILD_DIR — the whole test suite: unit tests, then the CLI scripts.
#
# Every test prints one line starting with PASS, FAIL or SKIP; the last line of
# output is "N passed, N failed" over all of them.  Exit 1 if anything failed.
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
trap 'rm -f "$log"' EXIT

if [ -x "$bdir/gdnbench-tests" ]; then
    "$bdir/gdnbench-tests" "${@:2}" 2>&1 | tee -a "$log"
else
    echo "FAIL build: $build/gdnbench-tests is missing (did make fail?)" | tee -a "$log"
fi

for t in "$root"/tests/cli/test_*.sh; do
    [ -e "$t" ] || continue
    bash "$t" 2>&1 | tee -a "$log"
done

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
skipped=$(grep -c '^SKIP ' "$log")
echo "($skipped skipped)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
