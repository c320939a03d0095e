# lib.sh — helpers for CLI tests: each check prints one PASS/FAIL line.
#   expect_exit CODE "description" cmd args...   (stderr captured into $ERR, stdout into $OUT)
#   expect_match "description" "$text" REGEX
: "${GDNBENCH:?run through tests/run.sh}"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

expect_exit() {
    local want=$1 desc=$2
    shift 2
    "$@" >"$TMPD/out" 2>"$TMPD/err"
    local rc=$?
    OUT=$(cat "$TMPD/out")
    ERR=$(cat "$TMPD/err")
    if [ "$rc" -eq "$want" ]; then
        echo "PASS $desc"
    else
        echo "FAIL $desc: exit $rc, expected $want; stderr: $(head -c 300 "$TMPD/err")"
    fi
}

expect_match() {
    local desc=$1 text=$2 re=$3
    if printf '%s' "$text" | grep -Eq -- "$re"; then
        echo "PASS $desc"
    else
        echo "FAIL $desc: no match for /$re/ in: $(printf '%s' "$text" | head -c 300)"
    fi
}
