#!/usr/bin/env bash
# test_source_archive.sh — the tree as a user without git gets it (GitHub's "Download
# ZIP", a release tarball, a Homebrew or distro package build): `git archive HEAD`
# unpacked into a temporary directory, no .git anywhere above it.
#   - make's plan for all, run and test holds (make -n) there, with the default BUILD;
#   - gdnbench is really built there into an out-of-tree BUILD (an absolute directory
#     outside the sources) — at -O0: this checks the build, not the code, and -O0 is
#     quick — and says the commit is unknown: --version, and tool.git_sha null in the
#     JSON report;
#   - GDNBENCH_VERSION and GDNBENCH_GIT_SHA (for packagers) change what it says, and
#     rebuild version.o alone.
# HEAD holds committed work only: what is not committed yet is not tested here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

if ! command -v git >/dev/null 2>&1 || ! git -C "$ROOT" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    skip_all "source archive: $ROOT is not a git checkout (or git is missing), so there is no HEAD to export"
fi
S=$TMPD/gdnbench-src
O=$TMPD/out-of-tree-build
mkdir -p "$S"
if ! git -C "$ROOT" archive --format=tar HEAD | tar -x -C "$S"; then
    fail "source archive: git archive HEAD | tar -x failed"
    finish
fi
if [ -e "$S/.git" ] || git -C "$S" rev-parse --git-dir >/dev/null 2>&1; then
    fail "source archive: the unpacked tree is inside a git repository ($S); the test needs a temporary directory outside any"
    finish
fi

for goal in all run test; do
    expect_exit 0 "source archive: make -n $goal plans without .git" mk -n -C "$S" --no-print-directory "$goal"
done

start=$(date +%s)
expect_exit 0 "source archive: gdnbench builds without .git into an out-of-tree BUILD" \
    mk -C "$S" -j"$JOBS" --no-print-directory BUILD="$O" CFLAGS=-O0 "$O/gdnbench"
echo "note: source archive: gdnbench built in $(($(date +%s) - start)) s"
if [ ! -x "$O/gdnbench" ]; then
    fail "source archive: no $O/gdnbench to run"
    finish
fi
if [ -e "$S/build" ]; then
    fail "source archive: BUILD=$O still wrote into the source tree ($S/build)"
else
    pass "source archive: BUILD=DIR leaves the source tree alone"
fi
expect_exit 0 "source archive: gdnbench --version" "$O/gdnbench" --version
expect_match "source archive: --version says the commit is unknown" "$OUT" '^gdnbench [0-9][^ ]* \(commit unknown\)$'
expect_exit 0 "source archive: a run writes a JSON report" "$O/gdnbench" kkt --backend cpu --T 64 --H 2 --Hg 1 \
    --iters 1 --warmup 0 --json "$TMPD/r.json"
expect_match "source archive: the report's tool.git_sha is null" "$(cat "$TMPD/r.json" 2>/dev/null)" \
    '"git_sha":[[:space:]]*null'

expect_exit 0 "source archive: GDNBENCH_VERSION and GDNBENCH_GIT_SHA given to make" \
    mk -C "$S" --no-print-directory BUILD="$O" CFLAGS=-O0 GDNBENCH_VERSION=9.8.7-pkg GDNBENCH_GIT_SHA=0123abc "$O/gdnbench"
compiled=$(printf '%s\n' "$OUT" | grep -c -- ' -c ')
expect_match "source archive: ... rebuild version.o alone" "$compiled $OUT" '^1 .* -c src/core/version\.c '
expect_exit 0 "source archive: gdnbench --version after the override" "$O/gdnbench" --version
expect_match "source archive: --version says the packager's version and sha" "$OUT" '^gdnbench 9\.8\.7-pkg \(git 0123abc\)$'
finish
