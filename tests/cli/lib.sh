# lib.sh — helpers for CLI tests (tests/cli/test_*.sh); every script sources it first.
#
# The contract of a CLI test script (tests/run.sh enforces it, and fails the script
# when it is broken):
#   - every check reports through pass / fail / skip (or expect_exit / expect_match,
#     which call them): one line starting "PASS ", "FAIL " or "SKIP ";
#   - the script ends by calling `finish`, or `skip_all "why"` when it cannot run here;
#     both print the summary line "NAME: N passed, N failed, N skipped" (NAME = the
#     script's file name) and exit 0 when no check failed, 1 when one did.
# A script that exits with any other status, whose summary line is missing (it died
# or exited early), whose summary disagrees with the lines it printed (a result
# printed with a bare echo), or that reported nothing at all is a FAIL in run.sh.
#
#   pass "description" / fail "description: why" / skip "description: why"
#   expect_exit CODE "description" cmd args...   (stderr captured into $ERR, stdout into $OUT)
#   expect_match "description" "$text" REGEX
#   finish | skip_all "why"
#   need_testdata      $TESTDATA (build/gdnbench-testdata, the fixture writer make builds
#                      next to gdnbench) must exist: a FAIL and finish when it does not
#   case_dir NAME FILE...  $D=$TMPD/NAME made for a test's case files, with the kernel
#                      sources FILE... of tests/cli/kernels/cases copied in (a case names
#                      its source relative to itself); case_kernel FILE... copies more
#   need_sw WHAT       the software Metal device must be available: else skip_all "WHAT:
#                      this build has no software Metal device (gdnbench info)"
#   kernel_cxx         prints the path of a clang++ with LLVM >= 17 (the kernels'
#                      compiler, for a test that wraps it), or nothing
: "${GDNBENCH:?run through tests/run.sh}"
TESTDATA=$(dirname "$GDNBENCH")/gdnbench-testdata
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# One line per result, appended also from subshells, so finish counts every check.
RESULTS=$TMPD/.results
: >"$RESULTS"
SCRIPT_NAME=$(basename "$0")

report_result() {
    printf '%s\n' "$1"
    printf '%s\n' "$1" >>"$RESULTS"
}
pass() { report_result "PASS $*"; }
fail() { report_result "FAIL $*"; }
skip() { report_result "SKIP $*"; }

finish() {
    local p f s
    p=$(grep -c '^PASS ' "$RESULTS")
    f=$(grep -c '^FAIL ' "$RESULTS")
    s=$(grep -c '^SKIP ' "$RESULTS")
    echo "$SCRIPT_NAME: $p passed, $f failed, $s skipped"
    [ "$f" -eq 0 ] && exit 0
    exit 1
}

skip_all() {
    skip "$*"
    finish
}

expect_exit() {
    local want=$1 desc=$2
    shift 2
    "$@" >"$TMPD/out" 2>"$TMPD/err"
    local rc=$?
    OUT=$(cat "$TMPD/out")
    ERR=$(cat "$TMPD/err")
    if [ "$rc" -eq "$want" ]; then
        pass "$desc"
    else
        fail "$desc: exit $rc, expected $want; stderr: $(head -c 300 "$TMPD/err")"
    fi
}

expect_match() {
    local desc=$1 text=$2 re=$3
    if printf '%s' "$text" | grep -Eq -- "$re"; then
        pass "$desc"
    else
        fail "$desc: no match for /$re/ in: $(printf '%s' "$text" | head -c 300)"
    fi
}

expect_no_match() {
    local desc=$1 text=$2 re=$3
    if printf '%s' "$text" | grep -Eq -- "$re"; then
        fail "$desc: /$re/ matched in: $(printf '%s' "$text" | grep -E -- "$re" | head -c 300)"
    else
        pass "$desc"
    fi
}

# The fixture writer is built by `make all` with gdnbench: missing, the build is broken
# (a FAIL, never a SKIP, so a suite without it cannot look green).
need_testdata() {
    if [ ! -x "$TESTDATA" ]; then
        fail "$SCRIPT_NAME: $TESTDATA is missing (make all builds it)"
        finish
    fi
}

# Kernel-case tests: a directory of case files beside the kernels they name.
CASE_KERNELS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kernels/cases
case_dir() {
    D=$TMPD/$1
    shift
    mkdir -p "$D" || fail "$SCRIPT_NAME: cannot make $D"
    case_kernel "$@"
}
case_kernel() {
    local f
    for f in "$@"; do cp "$CASE_KERNELS/$f" "$D/" || fail "$SCRIPT_NAME: cannot copy $f into $D"; done
}

need_sw() {
    "$GDNBENCH" info 2>/dev/null | grep -Eq '^ *sw +available' ||
        skip_all "$1: this build has no software Metal device (gdnbench info)"
}

kernel_cxx() {
    local c v
    for c in clang++-19 clang++-18 clang++-17 clang++; do
        v=$("$c" --version 2>/dev/null | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n1)
        if [ -n "$v" ] && [ "$v" -ge 17 ]; then
            command -v "$c"
            return
        fi
    done
}
