#!/usr/bin/env bash
# action.sh — the logic of the GitHub Action .github/actions/gdnbench/action.yml, kept
# here so that it runs (and is tested: tests/cli/test_action.sh) outside GitHub.
#
#   action.sh key      prints key=<sha256 of gdnbench's sources> to $GITHUB_OUTPUT
#                      (the build cache's key: a new gdnbench version misses it)
#   action.sh build    installs what running needs (scripts/install-deps.sh run) and
#                      builds gdnbench into $GDNBENCH_BUILD; prints bin=PATH to $GITHUB_OUTPUT
#   action.sh run      runs the caller's cases, suites and validations, compares the
#                      reports with the caller's baseline, writes the step summary and
#                      the outputs; exits 0 whatever was found (the verdict step fails)
#   action.sh verdict  exits 1 when `run` found a regression, a failed check or a run
#                      that could not run; 0 otherwise
#
# Inputs come as environment variables, as action.yml passes them (paths relative to
# $GITHUB_WORKSPACE, the caller's checkout; lists separated by blanks or newlines):
#   INPUT_CASES      case files (`gdnbench kernel FILE`) and directories of them
#                    (`gdnbench suite DIR`)
#   INPUT_SUITES     named suites (`gdnbench suite NAME`: smoke, qwen35, ...)
#   INPUT_VALIDATE   case files (`gdnbench validate FILE`) or op names (`gdnbench validate OP`)
#   INPUT_BASELINE   a report file or directory committed in the caller's repository
#                    (`gdnbench compare BASELINE NEW`); none: nothing is compared
#   INPUT_BACKEND    sw (default on Linux) or metal (default on macOS)
#   INPUT_ARGS       more flags for every run (e.g. --iters 20)
#   INPUT_THRESHOLD  compare's --threshold in % (default 5)
#   INPUT_TIMING     on | off | auto (default): whether compare's timing verdicts count.
#                    auto = on only where the timings are a real GPU's: not on the
#                    software device (emulated) nor on a virtual machine's paravirtual
#                    GPU (hosted macOS runners); off leaves correctness verdicts only.
# Also: GDNBENCH_BIN (the binary; from `build`), GDNBENCH_OUT (where reports go;
# default $RUNNER_TEMP/gdnbench), GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_OS,
# RUNNER_ENVIRONMENT (github-hosted on GitHub's own runners).
#
# Outputs (GITHUB_OUTPUT): status (pass | fail | regression | error), regressions (pairs
# compare called a regression), failed (runs that failed a check or could not run),
# reports (the directory of JSON and JUnit reports), summary (the Markdown file).
set -uo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
ws=${GITHUB_WORKSPACE:-$PWD}
out=${GDNBENCH_OUT:-${RUNNER_TEMP:-/tmp}/gdnbench}

die() {
    echo "gdnbench action: $*" >&2
    exit 2
}
output() { [ -n "${GITHUB_OUTPUT:-}" ] && printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; }

# sha256 of every file gdnbench is built from (sources, shaders, prelude, Makefile).
source_key() {
    local sha=sha256sum
    command -v sha256sum >/dev/null 2>&1 || sha="shasum -a 256"
    (cd "$here" && find Makefile scripts/embed.sh src shaders -type f | LC_ALL=C sort | xargs $sha | $sha) |
        cut -c1-16
}

# A build restored from the cache is used as it is when it was built from these very
# sources (its source-key file says so): the fresh checkout's files are newer than
# the cached objects, so make alone would rebuild everything.
cmd_build() {
    local build=${GDNBENCH_BUILD:-$HOME/.cache/gdnbench-build} key
    key=$(source_key)
    bash "$here/scripts/install-deps.sh" run || die "installing what gdnbench needs failed"
    if [ -x "$build/gdnbench" ] && [ "$(cat "$build/source-key" 2>/dev/null)" = "$key" ]; then
        echo "gdnbench action: using the cached build of sources $key"
    else
        make -C "$here" -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" --no-print-directory \
            BUILD="$build" "$build/gdnbench" || die "building gdnbench failed"
        printf '%s\n' "$key" >"$build/source-key"
    fi
    output bin "$build/gdnbench"
}

# ---- run ---------------------------------------------------------------------

nfailed=0 nerror=0
rows=

# one_run LABEL gdnbench-args...: runs it, logs it, adds its row; counts failures.
one_run() {
    local label=$1 log rc verdict
    shift
    log="$out/logs/$(printf '%s' "$label" | tr -c 'A-Za-z0-9._-' '_').log"
    echo "::group::gdnbench $*"
    "$bin" "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    echo "::endgroup::"
    case $rc in
    0) verdict=pass ;;
    1) verdict="**FAIL**: a check failed"; nfailed=$((nfailed + 1)) ;;
    *) verdict="**ERROR** (exit $rc): $(grep -m1 'gdnbench' "$log" | cut -c1-200)"; nerror=$((nerror + 1)) ;;
    esac
    rows="$rows| \`$label\` | $verdict |
"
}

words() { printf '%s\n' "${1:-}" | tr ' \t' '\n\n' | sed '/^$/d'; }

run_inputs() {
    local p n=0 backend=(--backend "$backend") extra
    read -r -a extra <<<"${INPUT_ARGS:-}"
    while read -r p; do
        n=$((n + 1))
        if [ -d "$ws/$p" ]; then
            one_run "suite $p" suite "$ws/$p" "${backend[@]}" "${extra[@]}" --quiet \
                --json "$out/new/cases-$n.json" --junit "$out/junit/cases-$n.xml"
        elif [ -f "$ws/$p" ]; then
            one_run "kernel $p" kernel "$ws/$p" "${backend[@]}" "${extra[@]}" \
                --json "$out/new/case-$n.json" --junit "$out/junit/case-$n.xml"
        else
            rows="$rows| \`$p\` | **ERROR**: no such case file or directory in the repository |
"
            nerror=$((nerror + 1))
        fi
    done < <(words "${INPUT_CASES:-}")
    while read -r p; do
        mkdir -p "$out/new/suite-$p"
        one_run "suite $p" suite "$p" "${backend[@]}" "${extra[@]}" --quiet --json "$out/new/suite-$p" \
            --junit "$out/junit/suite-$p.xml"
    done < <(words "${INPUT_SUITES:-}")
    n=0
    while read -r p; do
        n=$((n + 1))
        if [ -f "$ws/$p" ]; then
            one_run "validate $p" validate "$ws/$p" --junit "$out/junit/validate-$n.xml"
        else # an op; validate runs on the software device whatever the backend
            one_run "validate $p" validate "$p" "${extra[@]}" --quiet --json "$out/validate/validate-$p.json" \
                --junit "$out/junit/validate-$p.xml"
        fi
    done < <(words "${INPUT_VALIDATE:-}")
}

# Whether the timings of this run are a real GPU's (auto), from the device gdnbench
# reports and the runner.
timing_counts() {
    case ${INPUT_TIMING:-auto} in
    on) return 0 ;;
    off) return 1 ;;
    esac
    [ "$backend" = metal ] && [ -z "$paravirtual" ]
}

compare_baseline() {
    local base=$ws/${INPUT_BASELINE} threshold=${INPUT_THRESHOLD:-5} rc
    if [ ! -e "$base" ]; then
        printf '**ERROR**: the baseline %s is not in the repository: commit a report written with `--json`\n\n' \
            "\`${INPUT_BASELINE}\`" >>"$md"
        nerror=$((nerror + 1))
        return
    fi
    if [ -z "$(find "$out/new" -name '*.json' -print -quit)" ]; then
        printf 'Nothing to compare with the baseline: no run wrote a report.\n\n' >>"$md"
        return
    fi
    # Timing verdicts off: a threshold no change reaches leaves correctness alone deciding.
    local judged=1
    timing_counts || { threshold=999999; judged=0; }
    (cd "$ws" && "$bin" compare "$INPUT_BASELINE" "$out/new" --format markdown --threshold "$threshold" \
        --junit "$out/junit/compare.xml") >"$out/compare.raw" 2>"$out/compare.err"
    rc=$?
    # say "not judged" where the threshold no change reaches stands in for it (only there:
    # with timing on, the threshold the user gave is the verdict's)
    if [ "$judged" = 1 ]; then
        cp "$out/compare.raw" "$out/compare.md"
    else
        sed -e "s/(threshold $threshold%, /(timing not judged, /" -e "s/| within $threshold% |/| timing not judged |/" \
            -e "s/; 0 unpaired (threshold $threshold%, /; 0 unpaired (timing not judged, /" \
            "$out/compare.raw" >"$out/compare.md"
    fi
    cat "$out/compare.md" "$out/compare.err"
    if [ "$rc" -ge 2 ]; then
        printf '**ERROR**: gdnbench compare could not compare: %s\n\n' "$(head -c 400 "$out/compare.err")" >>"$md"
        nerror=$((nerror + 1))
        return
    fi
    timing_counts || printf '%s\n\n' "Timing verdicts are off (timing: ${INPUT_TIMING:-auto}): these timings are not a real GPU's, so only correctness decides; the times below are for information." >>"$md"
    sed "s/^### gdnbench compare/### Compared with the baseline/" "$out/compare.md" >>"$md"
    echo >>"$md"
    regressions=$(grep -c '^| \*\*regression\*\* |' "$out/compare.md")
    failing=$(grep -c '^| \*\*failing\*\* |' "$out/compare.md")
}

cmd_run() {
    bin=${GDNBENCH_BIN:-$here/build/gdnbench}
    [ -x "$bin" ] || die "no gdnbench at $bin: run 'action.sh build' first (or set GDNBENCH_BIN)"
    [ -n "${INPUT_CASES:-}${INPUT_SUITES:-}${INPUT_VALIDATE:-}" ] ||
        die "nothing to run: give cases, suites or validate (paths in your repository, suite names, ops)"
    backend=${INPUT_BACKEND:-}
    [ -n "$backend" ] || { [ "${RUNNER_OS:-$(uname -s)}" = macOS ] || [ "$(uname -s)" = Darwin ] && backend=metal || backend=sw; }
    rm -rf "$out"
    mkdir -p "$out/new" "$out/junit" "$out/validate" "$out/logs" || die "cannot create $out"
    md=$out/summary.md
    regressions=0 failing=0 paravirtual=
    if [ "$backend" = metal ] && "$bin" info 2>/dev/null | grep -q 'Paravirtual'; then paravirtual=1; fi
    if [ "${RUNNER_OS:-}" = macOS ] && [ "${RUNNER_ENVIRONMENT:-}" = github-hosted ]; then paravirtual=1; fi
    run_inputs
    {
        echo "## gdnbench ($("$bin" --version 2>/dev/null | sed 's/^gdnbench //'), backend $backend)"
        echo
        if [ -n "$paravirtual" ]; then
            echo "> **Note:** this is a hosted macOS runner: its GPU is the Apple Paravirtual device of a virtual" \
                "machine. Its timings (and results) are not those of an Apple GPU's chip: do not read them as a chip's."
            echo
        fi
        [ "$backend" = sw ] && echo "Runs on the gdnbench software Metal device: its timings are emulated (not a GPU's)." && echo
        echo "| run | result |"
        echo "|---|---|"
        printf '%s\n' "$rows"
    } >"$md"
    [ -n "${INPUT_BASELINE:-}" ] && compare_baseline
    local status=pass
    [ "$nfailed" -gt 0 ] || [ "$failing" -gt 0 ] && status=fail
    [ "$regressions" -gt 0 ] && status=regression
    [ "$nerror" -gt 0 ] && status=error
    echo "**$status**: $nfailed run(s) failed a check, $nerror could not run, $regressions regression(s) against the baseline." >>"$md"
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$md" >>"$GITHUB_STEP_SUMMARY"
    output status "$status"
    output regressions "$regressions"
    output failed "$((nfailed + nerror))"
    output reports "$out"
    output summary "$md"
    printf '%s\n' "$status" >"$out/status"
    echo "gdnbench action: $status"
    return 0
}

cmd_verdict() {
    local status
    status=$(cat "$out/status" 2>/dev/null) || die "no result under $out: the run step did not run"
    case $status in
    pass) return 0 ;;
    *)
        echo "::error::gdnbench: $status (see the step summary and the gdnbench-reports artifact)"
        return 1
        ;;
    esac
}

case ${1:-} in
key) output key "$(source_key)"; echo "key=$(source_key)" ;;
build) cmd_build ;;
run) cmd_run ;;
verdict) cmd_verdict ;;
*) die "usage: action.sh key|build|run|verdict (see the comment at the top)" ;;
esac
