#!/usr/bin/env bash
# test_clang_build.sh — the whole tree built with clang (clang-19 here, standing in for
# Apple clang, whose warnings gcc does not give) and the Makefile's -Werror, into its
# own BUILD directory (BUILD/clang, kept: a re-run rebuilds only what changed), then
# both binaries linked and the tool run once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

if [ "$(uname -s)" = Darwin ]; then
    skip_all "clang build: this is macOS, where make itself builds with Apple clang and -Werror"
fi
cc=${GDNBENCH_CLANG:-clang-19}
command -v "$cc" >/dev/null 2>&1 ||
    missing_tool "clang build: $cc not found (apt-get install clang-19, or set GDNBENCH_CLANG)"

B=$(cd "$(dirname "$GDNBENCH")" && pwd)/clang
margs=(BUILD="$B" CC="$cc")
start=$(date +%s)
# -k: every file that fails is reported (objects_report compiles those again alone).
mk -k -j"$JOBS" -C "$ROOT" --no-print-directory "${margs[@]}" objects >/dev/null 2>&1
objects_report "clang build" "$B" "${margs[@]}"
if mk -C "$ROOT" --no-print-directory "${margs[@]}" all >"$TMPD/link" 2>&1; then
    pass "clang build: gdnbench and gdnbench-tests link"
    expect_exit 0 "clang build: the clang-built gdnbench runs (--version)" "$B/gdnbench" --version
    expect_exit 0 "clang build: the clang-built gdnbench lists its ops" "$B/gdnbench" list
    expect_match "clang build: its list names kkt" "$OUT" '^  kkt '
else
    fail "clang build: make all with CC=$cc: $(grep -E 'error|warning' "$TMPD/link" | head -n 5 | tr '\n' ' ')"
fi
echo "note: clang build: $B, $(($(date +%s) - start)) s"
finish
