#!/usr/bin/env bash
# install-deps.sh — install what gdnbench needs to build, test and run.
#
# Idempotent: installs only what is missing, so `make run`/`make test` can call it
# every time.  Debian/Ubuntu: apt-get only (one `apt-get update`, then install).
# macOS: prints what Homebrew would install; it never installs anything itself.
set -euo pipefail

need_debian=(make gcc g++ libcjson-dev libobjc-12-dev clang-19 python3)

missing_debian() {
    local p out=()
    for p in "${need_debian[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
    done
    echo "${out[@]:-}"
}

# Source lines in the software device's findings (issue 16): llvm-symbolizer reads the
# line tables of the compiled kernels.  Debian's clang-19 does not pull it in; llvm-19
# has /usr/bin/llvm-symbolizer-19.
need_debian+=(llvm-19)

case "$(uname -s)" in
Linux)
    if ! command -v dpkg-query >/dev/null 2>&1; then
        echo "install-deps: not a Debian-like system; install by hand: ${need_debian[*]}" >&2
        exit 0
    fi
    todo=$(missing_debian)
    if [ -z "$todo" ]; then
        exit 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        SUDO=sudo
    else
        SUDO=
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
