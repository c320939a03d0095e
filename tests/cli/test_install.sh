#!/usr/bin/env bash
# test_install.sh — `make install` / `make uninstall` as a packager runs them: into a
# temporary DESTDIR, with PREFIX, then the installed gdnbench run from a directory
# that is not the checkout, with no way back to the checkout's files:
#   - install puts PREFIX/bin/gdnbench (executable) and PREFIX/share/doc/gdnbench/
#     README.md (the checkout's README) under DESTDIR, and nothing else;
#   - the installed binary, run from an empty directory with GDNBENCH_ROOT unset (the
#     binary looks for shaders/ in the working directory, under $GDNBENCH_ROOT and next
#     to itself, then in what it carries), runs an op and a kernel case whose kernel
#     includes <metal_stdlib>: our shaders and the MSL prelude come from the binary,
#     and the table says the kernel is the embedded copy;
#   - uninstall removes every file install put there, and the documentation directory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

BUILD_DIR=$(dirname "$GDNBENCH")
STAGE=$TMPD/stage
PREFIX=/opt/gdnbench-test

expect_exit 0 "install: make install DESTDIR=... PREFIX=$PREFIX" \
    mk -C "$ROOT" --no-print-directory BUILD="$BUILD_DIR" DESTDIR="$STAGE" PREFIX="$PREFIX" install
BIN=$STAGE$PREFIX/bin/gdnbench
DOC=$STAGE$PREFIX/share/doc/gdnbench/README.md
if [ -x "$BIN" ]; then pass "install: $PREFIX/bin/gdnbench is there and executable"
else fail "install: no executable $PREFIX/bin/gdnbench under DESTDIR: $(cd "$STAGE" 2>/dev/null && find . | head -c 300)"; fi
if cmp -s "$DOC" "$ROOT/README.md"; then pass "install: the README is $PREFIX/share/doc/gdnbench/README.md"
else fail "install: $PREFIX/share/doc/gdnbench/README.md missing or not the checkout's README"; fi
files=$(cd "$STAGE" && find . -type f | sort | tr '\n' ' ')
expect_match "install: exactly the binary and the README installed ($files)" "$files" \
    "^\./opt/gdnbench-test/bin/gdnbench \./opt/gdnbench-test/share/doc/gdnbench/README\.md $"

# Out of reach of the checkout: an empty working directory outside it, GDNBENCH_ROOT
# unset, and DESTDIR/PREFIX/shaders (next to the binary) absent.
AWAY=$TMPD/elsewhere
mkdir -p "$AWAY"
run_away() { (cd "$AWAY" && env -u GDNBENCH_ROOT "$BIN" "$@"); }
if [ -x "$BIN" ]; then
    expect_exit 0 "installed: --version from another directory" run_away --version
    expect_exit 0 "installed: kkt runs from another directory, GDNBENCH_ROOT unset" \
        run_away kkt --backend sw --T 64 --iters 1 --warmup 0
    expect_match "installed: the op's kernel is the one the binary carries" "$OUT" \
        "ours: shaders/gdn_kkt\.metal \(embedded"
    expect_no_match "installed: no file of the checkout was read" "$OUT" "$ROOT"
    cat >"$AWAY/saxpy.metal" <<'EOF'
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], constant uint &n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    if (i < n) y[i] = a * x[i] + y[i];
}
EOF
    cat >"$AWAY/saxpy.json" <<'EOF'
{"case": 1, "name": "saxpy_installed", "source": "saxpy.metal", "function": "saxpy",
 "dispatch": {"grid": [8, 1, 1], "threadgroup": [8, 1, 1]},
 "buffers": {"x": {"dtype": "float32", "shape": [8], "init": {"arange": [0, 1]}, "readonly": true},
             "y": {"dtype": "float32", "shape": [8], "init": {"fill": 1},
                   "expect": {"value": [1, 3, 5, 7, 9, 11, 13, 15], "atol": 0}},
             "a": {"dtype": "float32", "value": 2}, "n": {"dtype": "uint32", "value": 8}}}
EOF
    expect_exit 0 "installed: a kernel case (its kernel includes <metal_stdlib>: the prelude) runs from another directory" \
        run_away kernel saxpy.json --iters 1
    expect_match "installed: the kernel case passed its expected values" "$OUT" "y +buffer\(1\).* PASS  expect"
else
    fail "installed: nothing to run"
fi

expect_exit 0 "uninstall: make uninstall DESTDIR=... PREFIX=$PREFIX" \
    mk -C "$ROOT" --no-print-directory BUILD="$BUILD_DIR" DESTDIR="$STAGE" PREFIX="$PREFIX" uninstall
left=$(cd "$STAGE" && find . -type f | tr '\n' ' ')
if [ -z "$left" ]; then pass "uninstall: no file left under DESTDIR"
else fail "uninstall: left behind: $left"; fi
if [ ! -e "$STAGE$PREFIX/share/doc/gdnbench" ]; then pass "uninstall: the documentation directory is gone"
else fail "uninstall: $PREFIX/share/doc/gdnbench is still there"; fi
expect_exit 0 "uninstall: a second uninstall (nothing installed) is not an error" \
    mk -C "$ROOT" --no-print-directory BUILD="$BUILD_DIR" DESTDIR="$STAGE" PREFIX="$PREFIX" uninstall
finish
