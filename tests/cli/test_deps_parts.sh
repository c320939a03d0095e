#!/usr/bin/env bash
# test_deps_parts.sh — scripts/install-deps.sh's three nested parts (issue 34: `make
# run` installs only what running needs):
#   - `--list run|test|ci` (nothing installed): run ⊂ test ⊂ ci; run holds the
#     compiler, pkg-config, cJSON, GNU libobjc and clang-19, and none of the test-only
#     packages (arm64 cross toolchain, qemu-user, npm/nodejs, python3, torch);
#   - make's plan: `make run` calls the run part only, `make test`, `make check` and
#     `make deps` the test part; .ci/run the ci part before `make test`;
#   - an unknown part is one line and exit 2;
#   - idempotent: where every package of a part is installed already (Debian), the
#     part prints nothing and changes nothing (timed, as information).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

S="$ROOT/scripts/install-deps.sh"
run=$(bash "$S" --list run) test=$(bash "$S" --list test) ci=$(bash "$S" --list ci)
subset() { # A B: every word of A is in B
    local w
    for w in $1; do
        case " $2 " in *" $w "*) ;; *) return 1 ;; esac
    done
}
if subset "$run" "$test" && subset "$test" "$ci"; then pass "deps: the parts nest (run in test in ci)"
else fail "deps: the parts do not nest: run '$run' / test '$test' / ci '$ci'"; fi
for p in gcc pkg-config libcjson-dev libobjc-12-dev clang-19; do
    case " $run " in *" $p "*) pass "deps: run installs $p" ;; *) fail "deps: run lacks $p: $run" ;; esac
done
for p in gcc-aarch64-linux-gnu qemu-user npm nodejs python3 python3-torch; do
    case " $run " in *" $p "*) fail "deps: run installs the test-only $p: $run" ;; *) pass "deps: run leaves out the test-only $p" ;; esac
done
case " $test " in *" python3-torch "*) fail "deps: test installs torch (CI's only): $test" ;; *) pass "deps: test leaves torch to ci" ;; esac
case " $ci " in *" python3-torch "*) pass "deps: ci installs python3-torch" ;; *) fail "deps: ci lacks python3-torch: $ci" ;; esac

plan() { mk -n -C "$ROOT" --no-print-directory BUILD="$TMPD/plan-build" "$@" 2>&1; }
out=$(plan run)
expect_match "deps: make run calls the run part" "$out" "install-deps\.sh run"
expect_no_match "deps: make run does not call the test part" "$out" "install-deps\.sh (test|ci)"
for goal in test check deps; do
    expect_match "deps: make $goal calls the test part" "$(plan "$goal")" "install-deps\.sh test"
done
expect_match "deps: .ci/run installs the ci part" "$(cat "$ROOT/.ci/run")" "^bash scripts/install-deps\.sh ci$"
expect_exit 2 "deps: an unknown part is bad input" bash "$S" everything
expect_match "deps: ... named in one line" "$ERR" "^install-deps: unknown part 'everything'"

if command -v dpkg-query >/dev/null 2>&1; then
    missing=
    for p in $run; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -z "$missing" ]; then
        t0=$(date +%s%N)
        expect_exit 0 "deps: the run part, all of it installed already" bash "$S" run
        echo "note: install-deps.sh run with everything installed: $((($(date +%s%N) - t0) / 1000000)) ms"
        expect_match "deps: ... says nothing and installs nothing" "[$OUT$ERR]" "^\[\]$"
    else
        skip "deps: idempotence: the run part is not all installed here ($missing), and the test installs nothing"
    fi
else
    skip "deps: idempotence: not a Debian-like system"
fi
finish
