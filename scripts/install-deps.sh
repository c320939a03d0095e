#!/usr/bin/env bash
# install-deps.sh — install what gdnbench needs to build, test and run.
#
# Idempotent: installs only what is missing, so `make run`/`make test` can call it
# every time.  Debian/Ubuntu: apt-get only (one `apt-get update`, then install).
# macOS: prints what Homebrew would install; it never installs anything itself.
# Test-only on x86-64 Debian: what tests/cli/test_arm64_qemu.sh needs (see below).
set -euo pipefail

need_debian=(make gcc g++ libcjson-dev libobjc-12-dev clang-19 python3)

missing_debian() {
    local p out=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
    done
    echo "${out[@]:-}"
}

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
    [ "$(uname -m)" = x86_64 ] && [ -z "${GDNBENCH_NO_ARM64:-}" ] || return 0
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

# Must run before the one `apt-get update`, so that it fetches the arm64 lists too.
arm64_enable_architecture() {
    dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
}

case "$(uname -s)" in
Linux)
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "install-deps: not a Debian-like system; install by hand: ${need_debian[*]}" >&2
        exit 0
    fi
    todo=$(missing_debian "${need_debian[@]}")
    arm64_todo=$(arm64_test_missing)
    if [ -z "$todo$arm64_todo" ]; then
        exit 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        SUDO=sudo
    else
        SUDO=
    fi
    if [ -n "$arm64_todo" ]; then
        arm64_enable_architecture
        echo "install-deps: installing (test-only, arm64 under qemu) $arm64_todo"
        todo="${todo:+$todo }$arm64_todo"
    fi
    echo "install-deps: installing $todo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $todo
    ;;
Darwin)
    for tool in cjson; do
        brew list "$tool" >/dev/null 2>&1 || echo "install-deps: run 'brew install $tool'"
    done
    xcrun -f metal >/dev/null 2>&1 || echo "install-deps: Xcode command-line tools are needed (xcode-select --install)"
    ;;
*)
    echo "install-deps: unsupported OS $(uname -s)" >&2
    exit 2
    ;;
esac
