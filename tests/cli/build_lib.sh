# build_lib.sh — helpers for the tests that build the tree another way (with clang,
# for macOS, from a source archive).  Sourced after lib.sh.
#
#   mk ARGS...               make without the outer make's MAKEFLAGS
#   missing_tool WHAT        SKIP outside CI, FAIL in CI (when $CI is set), then finish
#   objects_report LABEL BUILD_DIR MAKEARGS...
#                            one PASS/FAIL line per group of sources (src/<layer>,
#                            tests/<dir>, the generated embedded.c) from the objects a
#                            `make -k ... objects` left in BUILD_DIR; a FAIL line carries
#                            the compiler's first errors for each failing file, got by
#                            compiling that file alone again with MAKEARGS.  Sets
#                            OBJECTS_TOTAL and OBJECTS_FAILED (source files).
ROOT=${GDNBENCH_ROOT:?run through tests/run.sh}
JOBS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

# make, free of the flags and jobserver of a make that may be running the suite.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "$@"; }

missing_tool() {
    if [ -n "${CI:-}" ]; then
        fail "$1 (CI is set, so a missing toolchain is a failure: scripts/install-deps.sh installs it)"
        finish
    fi
    skip_all "$1"
}

# The object a source compiles to under BUILD_DIR (the Makefile's layout).
object_of() {
    local b=$1 src=$2
    case $src in
    src/*) echo "$b/obj/${src#src/}" | sed 's/\.c$/.o/' ;;
    tests/*) echo "$b/obj/$src" | sed 's/\.c$/.o/' ;;
    gen/embedded.c) echo "$b/obj/gen/embedded.o" ;;
    esac
}

objects_report() {
    local label=$1 b=$2
    shift 2
    local groups g f obj n nfail msg
    OBJECTS_TOTAL=0 OBJECTS_FAILED=0
    groups=$(cd "$ROOT" && { ls -d src/*/ tests/*/ | sed 's:/$::'; echo gen; })
    for g in $groups; do
        local files
        if [ "$g" = gen ]; then
            files=gen/embedded.c
        elif [ "$g" = src/cli ]; then
            files=$(cd "$ROOT" && ls src/main.c src/cli/*.c)
        else
            files=$(cd "$ROOT" && find "$g" -name '*.c' | sort)
        fi
        [ -n "$files" ] || continue
        n=0 nfail=0 msg=
        for f in $files; do
            n=$((n + 1))
            obj=$(object_of "$b" "$f")
            [ -s "$obj" ] && continue
            nfail=$((nfail + 1))
            # Again alone, so the message is this file's and not interleaved with -j.
            msg="$msg | $f: $(mk -s -C "$ROOT" --no-print-directory "$@" "$obj" 2>&1 |
                grep -E 'error|warning' | head -n 4 | tr '\n' ' ')"
        done
        [ "$g" = src/cli ] && g="src/cli + src/main.c"
        [ "$g" = gen ] && g="generated embedded.c"
        OBJECTS_TOTAL=$((OBJECTS_TOTAL + n))
        OBJECTS_FAILED=$((OBJECTS_FAILED + nfail))
        if [ "$nfail" -eq 0 ]; then
            pass "$label: $g ($n files)"
        else
            fail "$label: $g: $nfail of $n files do not compile$(printf '%s' "$msg" | head -c 1500)"
        fi
    done
}
