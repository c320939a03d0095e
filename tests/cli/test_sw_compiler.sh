#!/usr/bin/env bash
# test_sw_compiler.sh — the software device's compiler and compile options, from
# the command line: without a usable clang++, `--backend sw` is one line naming
# this platform's fix and exit 2 (other backends still work); --fast-math is
# recorded, and said to have no effect on the software device.
. "$(dirname "$0")/lib.sh"
G=$GDNBENCH
export GDNBENCH_CACHE_DIR="$TMPD/cache"
small=(--T 64 --H 1 --Hg 1)
if [ "$(uname -s)" = Darwin ]; then fix="brew install llvm"; else fix="apt-get install clang-19"; fi

one_line() { # one_line "description": $ERR is exactly one line
    local lines
    lines=$(printf '%s\n' "$ERR" | grep -c .)
    if [ "$lines" -eq 1 ]; then pass "$1 is one line"; else fail "$1 printed $lines lines: $ERR"; fi
}

no_cxx() { # no_cxx "description" REGEX GDNBENCH_CXX
    local desc=$1 re=$2
    expect_exit 2 "sw compiler: $desc exits 2" env GDNBENCH_CXX="$3" "$G" kkt --backend sw "${small[@]}"
    expect_match "sw compiler: $desc says why" "$ERR" "$re"
    expect_match "sw compiler: $desc names the fix" "$ERR" "clang\+\+ >= 17.*$fix"
    one_line "sw compiler: $desc"
}

no_cxx "missing GDNBENCH_CXX" "GDNBENCH_CXX=$TMPD/nope: .--version. does not run" "$TMPD/nope"

# Apple clang 15 is LLVM 16: too old, whatever its own number says.
printf '#!/bin/sh\necho "Apple clang version 15.0.0 (clang-1500.3.9.4)"\necho "Target: arm64-apple-darwin23.6.0"\n' >"$TMPD/apple15"
chmod +x "$TMPD/apple15"
no_cxx "Apple clang 15" "Apple clang version 15.0.0.*LLVM 16" "$TMPD/apple15"

# New enough on paper, but cannot build __bf16 arithmetic: the probe says so.
cat >"$TMPD/nobf16" <<'SH'
#!/bin/sh
if [ "$1" = --version ]; then echo "clang version 19.1.7"; exit 0; fi
echo "probe.cpp:5:5: error: __bf16 is not supported on this target" >&2
exit 1
SH
chmod +x "$TMPD/nobf16"
no_cxx "clang without __bf16" "cannot compile the probe: .*__bf16 is not supported" "$TMPD/nobf16"
expect_exit 2 "sw compiler: a failed probe stays failed (cached verdict)" env GDNBENCH_CXX="$TMPD/nobf16" "$G" kkt \
    --backend sw "${small[@]}"
expect_match "sw compiler: cached verdict has the reason" "$ERR" "__bf16 is not supported"
if ls "$GDNBENCH_CACHE_DIR"/cxx-*.bad >/dev/null 2>&1; then pass "sw compiler: the probe's verdict is cached"; else
    fail "sw compiler: no cxx-*.bad verdict in $GDNBENCH_CACHE_DIR"; fi

if [ "$(uname -s)" != Darwin ]; then
    expect_exit 2 "sw compiler: none on PATH exits 2" env -u GDNBENCH_CXX PATH=/nonexistent "$G" kkt --backend sw \
        "${small[@]}"
    expect_match "sw compiler: none on PATH lists what was tried" "$ERR" "no clang\+\+ found \(tried clang\+\+-19 .*\).*$fix"
    one_line "sw compiler: none on PATH"
else
    skip "sw compiler: none on PATH: a Mac has Xcode's clang++ outside PATH's control (covered by GDNBENCH_CXX)"
fi

# Other backends do not need the compiler.
expect_exit 0 "sw compiler: cpu backend runs without one" env GDNBENCH_CXX="$TMPD/nope" "$G" kkt --backend cpu \
    "${small[@]}" --quiet
expect_exit 0 "sw compiler: info runs without one" env GDNBENCH_CXX="$TMPD/nope" "$G" info
expect_match "sw compiler: info says sw is not available and why" "$OUT" "sw +not available: .*$fix"

# --fast-math: off by default, recorded; the software device says it has no effect.
expect_exit 0 "fast math: sw run with --fast-math" "$G" kkt --backend sw "${small[@]}" --fast-math --json "$TMPD/fm.json"
expect_match "fast math: table warns it has no effect on sw" "$OUT" "WARNING --fast-math has no effect on the software device"
fm=$(cat "$TMPD/fm.json")
expect_match "fast math: JSON records it off on sw" "$fm" '"fast_math":[[:space:]]*false'
expect_match "fast math: JSON warning" "$fm" '"warnings":[[:space:]]*\[".*--fast-math has no effect'
expect_exit 0 "fast math: sw run without it" "$G" kkt --backend sw "${small[@]}" --json "$TMPD/nofm.json"
nofm=$(cat "$TMPD/nofm.json")
expect_match "fast math: default is off in the JSON" "$nofm" '"fast_math":[[:space:]]*false'
# (kkt has a launch-limit warning of its own: its threadgroup memory caps occupancy)
if printf '%s' "$nofm" | grep -q 'fast-math has no effect'; then fail "fast math: a JSON warning without the flag"; else
    pass "fast math: no warning without the flag"; fi
if printf '%s' "$OUT" | grep -q 'WARNING --fast-math'; then fail "fast math: a WARNING without --fast-math"; else
    pass "fast math: no WARNING line without --fast-math"; fi
expect_exit 0 "fast math: cpu run" "$G" kkt --backend cpu "${small[@]}" --json "$TMPD/cpu.json" --quiet
expect_match "fast math: null for the cpu backend (no kernel)" "$(cat "$TMPD/cpu.json")" '"fast_math":[[:space:]]*null'
expect_exit 0 "fast math: suite takes --fast-math" "$G" suite --help
expect_match "fast math: suite --help lists it" "$OUT" "--fast-math"
expect_match "fast math: op --help explains it" "$("$G" kkt --help)" "--fast-math +compile kernels with Metal's fast math"

# The binary finds shaders/ next to itself through a symlink to it (Homebrew links
# bin/gdnbench into its prefix), from any directory, before the embedded copies.
mkdir -p "$TMPD/bin" "$TMPD/elsewhere"
ln -s "$G" "$TMPD/bin/gdnbench"
exe_dir=$(cd "$(dirname "$(readlink -f "$G")")" && pwd)
if [ -f "$exe_dir/../shaders/gdn_kkt.metal" ]; then
    (cd "$TMPD/elsewhere" && env -u GDNBENCH_ROOT "$TMPD/bin/gdnbench" kkt --backend sw "${small[@]}" --json "$TMPD/link.json" \
        --quiet >/dev/null 2>"$TMPD/link.err")
    expect_match "exe path: shaders found next to the binary behind a symlink" "$(cat "$TMPD/link.json")" \
        '"source":[[:space:]]*"[^"]*/\.\./shaders/gdn_kkt\.metal"'
else
    skip "exe path: the binary is built outside the checkout (no $exe_dir/../shaders/gdn_kkt.metal)"
fi
finish
