#!/usr/bin/env bash
# test_arm64_qemu.sh — the arm64 code paths, executed on an x86-64 Linux host.
#
# Cross-builds gdnbench-tests for aarch64 Linux with Debian's cross gcc into
# build/arm64 (incrementally) and runs, under qemu-user, the unit tests of the fiber
# switch, the executor (barriers, simd exchanges, schedules, faults), the CPU
# references, the IO layer and the reports; and, with the host's clang++ building the
# kernels for aarch64 (clang runs natively: qemu-user hands an exec of a host binary to
# the host), the software Metal device end to end.  A few of them run a second time
# with 16 KiB pages (qemu -p 16384), the page size of Apple arm64.  Last, the arm64
# gdnbench runs the whole chunked GDN forward on the software device (all six
# kernels, references checked) and its --dump must equal the x86-64 build's bit for
# bit: inputs, every kernel output and the bf16-parity references.  (Not the f64
# references: x86-64 computes those with AVX2 fused multiply-adds; both are checked
# against the kernels within tolerance.)  Then the numeric checks: test_numerics.sh
# with the arm64 gdnbench, and each of its kernels' findings compared, word for
# word, with this host's (the numerics IR pass is one mechanism on both).
#
# Prints "PASS arm64: <test>" (or FAIL/SKIP) per unit test ("arm64 kernels:" for those
# that compile MSL, "arm64 16k-pages:" for the second run).  Without the toolchain
# (scripts/install-deps.sh installs it on Debian): SKIP, or FAIL when CI is set.  Not
# on other hosts: macOS and arm64 Linux run the unit tests natively.
set -u
source "$(dirname "$0")/lib.sh"
root=${GDNBENCH_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bdir=$root/build/arm64
t0=$(date +%s)

# The unit tests that run (substrings of test names, as gdnbench-tests takes them).
core_tests=(fiber_ sw_exec_ sw_front_ ref_hand_ ref_fixture_ ref_solve_tril_inverts ref_chunk_fwd_launch_stages
    ref_op_descriptors attn_params attn_ops attn_ref_causal attn_ref_gqa prep_step_ decode_seq bf16_ f16_ sha256_
    io_fixture io_match io_mlx io_nan io_npy io_safetensors io_fuzz_ report_json report_stats report_mann
    report_chips report_gbench report_write validate_ runner_inout npz_ fixture_dims fixture_f32 kernel_choice_)
# These compile MSL with clang++ (for aarch64) and run it on the software device.
kernel_tests=(sw_msl_ sw_objc_ sw_checks_ mtl_ sw_compile_char_is_signed sw_compile_simd_barrier_matrix
    sw_compile_bf16_half)
# Again with 16 KiB pages: what sizes stacks, guard pages and the threadgroup arena.
page16k_tests=(fiber_ sw_exec_ sw_checks_guarded sw_checks_fast sw_msl_oob sw_objc_oob)

unavailable() {
    if [ -n "${CI:-}" ]; then
        fail "arm64: $1"
        finish
    fi
    skip_all "arm64: $1"
}

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ;;
Linux/aarch64) skip_all "arm64: the host is arm64 Linux: the unit tests already run natively" ;;
*) skip_all "arm64: not an x86-64 Linux host (arm64 hosts run the unit tests natively)" ;;
esac

fix="scripts/install-deps.sh installs it on Debian (make test does)"
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || unavailable "no aarch64-linux-gnu-gcc (Debian's cross gcc): $fix"
command -v qemu-aarch64 >/dev/null 2>&1 || unavailable "no qemu-aarch64 (qemu-user): $fix"
for lib in /lib/ld-linux-aarch64.so.1 /usr/lib/aarch64-linux-gnu/libcjson.so /usr/lib/aarch64-linux-gnu/libobjc.so.4; do
    [ -e "$lib" ] || unavailable "no $lib (the arm64 libc6, libcjson-dev and libobjc4 packages): $fix"
done

# ---- cross-build (only what changed since the last run) ----
mkdir -p "$bdir"
log=$bdir/build.log
# A make that runs this script must not lend us its jobserver or its variables.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES PKG_CONFIG_PATH= \
    PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
    make -C "$root" --no-print-directory -j"$(nproc)" CC=aarch64-linux-gnu-gcc BUILD=build/arm64 \
    build/arm64/gdnbench-tests build/arm64/gdnbench >"$log" 2>&1; then
    fail "arm64: cross-build for aarch64 Linux failed ($log): $(grep -m3 -E 'error:|Error [0-9]' "$log" | tr '\n' ' ' | head -c 600)"
    finish
fi
t_build=$(($(date +%s) - t0))
# ELF e_machine (bytes 18-19) is 0xb7 for aarch64.
if [ "$(od -An -tx1 -j18 -N2 "$bdir/gdnbench-tests" 2>/dev/null | tr -d ' ')" != b700 ]; then
    fail "arm64: $bdir/gdnbench-tests is not an aarch64 executable"
    finish
fi

# ---- the kernels' compiler: the host's clang++, told to build for aarch64 ----
cxx=$(kernel_cxx)
wrapper=$bdir/clang++-aarch64
if [ -n "$cxx" ]; then
    printf '#!/bin/sh\nexec %s --target=aarch64-linux-gnu "$@"\n' "$cxx" >"$wrapper.tmp" && chmod +x "$wrapper.tmp" &&
        mv -f "$wrapper.tmp" "$wrapper"
fi

work=$TMPD

# run_under_qemu LABEL QEMU_ARGS... -- FILTERS...: runs the selected unit tests, their
# output into $work/LABEL.out, and notes there too a filter that selects nothing.
run_under_qemu() {
    local label=$1 qemu_args=() f n
    shift
    while [ "$1" != -- ]; do qemu_args+=("$1"); shift; done
    shift
    local res="$work/${label// /-}"
    : >"$res.missing"
    for f in "$@"; do
        n=$(qemu-aarch64 "${qemu_args[@]}" "$bdir/gdnbench-tests" -l "$f" 2>/dev/null | wc -l)
        [ "$n" -gt 0 ] || echo "$f" >>"$res.missing"
    done
    # QEMU_LD_PREFIX is not for us: the multiarch libc is the one the loader belongs to.
    env -u QEMU_LD_PREFIX GDNBENCH_ROOT="$root" GDNBENCH_CACHE_DIR="$res.cache" GDN_TEST_TIMEOUT=240 \
        GDN_FUZZ_ITERS=10000 GDNBENCH_CXX="${cxx:+$wrapper}" GDNBENCH_TEST_EMULATOR="qemu-aarch64 ${qemu_args[*]}" \
        timeout 900 qemu-aarch64 "${qemu_args[@]}" "$bdir/gdnbench-tests" "$@" </dev/null >"$res.out" 2>&1
}

# report_run LABEL: its results as this script's, each line prefixed with LABEL.
report_run() {
    local label=$1 res="$work/${1// /-}" line f
    while IFS= read -r f; do fail "$label: no unit test matches '$f' (renamed?)"; done <"$res.missing"
    while IFS= read -r line; do
        case $line in
        "PASS "*) pass "$label: ${line#PASS }" ;;
        "FAIL "*) fail "$label: ${line#FAIL }" ;;
        "SKIP "*) skip "$label: ${line#SKIP }" ;;
        "unit: "*) echo "$label: unit totals ${line#unit: }" ;;
        *) printf '%s\n' "$line" ;;
        esac
    done <"$res.out"
    grep -q '^unit: ' "$res.out" || fail "$label: gdnbench-tests under qemu did not finish (the runner exited or crashed)"
}

# e2e_arm64: the arm64 gdnbench runs the GDN forward on the software device.
e2e_args=(chunk_fwd --T 128 --H 2 --Hg 1 --iters 1 --warmup 0)
e2e_arm64() {
    mkdir -p "$work/dump-arm64"
    env -u QEMU_LD_PREFIX GDNBENCH_ROOT="$root" GDNBENCH_CACHE_DIR="$work/e2e.cache" GDNBENCH_CXX="$wrapper" \
        timeout 600 qemu-aarch64 "$bdir/gdnbench" "${e2e_args[@]}" --dump "$work/dump-arm64" </dev/null \
        >"$work/e2e.out" 2>&1
    echo $? >"$work/e2e.rc"
}

# st_tensors FILE: "name start end" per tensor of a safetensors file (offsets into
# the data, which starts at byte 8 + the header length printed first as "@header N").
st_tensors() {
    local n
    n=$(od -An -tu8 -N8 "$1" | tr -d ' ')
    echo "@header $n"
    head -c $((8 + n)) "$1" | tail -c "$n" |
        grep -oE '"[^"]+":\{"dtype":"[A-Z0-9]+","shape":\[[0-9,]*\],"data_offsets":\[[0-9]+,[0-9]+\]\}' |
        sed -E 's/^"([^"]+)".*"data_offsets":\[([0-9]+),([0-9]+)\].*/\1 \2 \3/'
}

# same_tensors A B: every tensor but the f64 references byte-identical in both files.
same_tensors() {
    local a=$1 b=$2 hn name start end same=0 differ=
    st_tensors "$a" >"$work/ta"
    st_tensors "$b" >"$work/tb"
    if ! cmp -s "$work/ta" "$work/tb"; then
        fail "arm64 vs x86-64: the dumps' tensor lists differ ($(basename "$a"))"
        return
    fi
    hn=$(sed -n 's/^@header //p' "$work/ta")
    while read -r name start end; do
        [ "$name" = @header ] && continue
        case $name in *.ref_f64) continue ;; esac
        if cmp -s -n $((end - start)) -i $((8 + hn + start)):$((8 + hn + start)) "$a" "$b"; then
            same=$((same + 1))
        else
            differ="$differ $name"
        fi
    done <"$work/ta"
    if [ -z "$differ" ] && [ "$same" -gt 0 ]; then
        pass "arm64 vs x86-64: ${e2e_args[*]}: inputs, kernel outputs and bf16-parity references bit-identical ($same tensors)"
    else
        fail "arm64 vs x86-64: ${e2e_args[*]}: tensors differ:${differ:- (none compared)}"
    fi
}

# Two lanes side by side (most tests use one core), then the 16 KiB-page run.
t1=$(date +%s)
run_under_qemu arm64 -- "${core_tests[@]}" &
if [ -n "$cxx" ]; then
    { run_under_qemu "arm64 kernels" -- "${kernel_tests[@]}"; e2e_arm64; } &
fi
wait
report_run arm64
if [ -z "$cxx" ]; then
    skip "arm64 kernels: the software device's kernels (${kernel_tests[*]}) and gdnbench ${e2e_args[*]}: no clang++ >= 17 on the host"
    run_under_qemu "arm64 16k-pages" -p 16384 -- fiber_ sw_exec_ sw_checks_guarded
    report_run "arm64 16k-pages"
    echo "arm64: cross-build ${t_build} s, tests under qemu $(($(date +%s) - t1)) s"
    finish
fi
report_run "arm64 kernels"
run_under_qemu "arm64 16k-pages" -p 16384 -- "${page16k_tests[@]}" &

rc=$(cat "$work/e2e.rc" 2>/dev/null || echo missing)
if [ "$rc" = 0 ] && [ "$(grep -cE '^ +(o|final) +(f64|bf16-parity) .* PASS$' "$work/e2e.out")" -eq 4 ]; then
    pass "arm64 gdnbench: ${e2e_args[*]} on the software device passes its f64 and bf16-parity checks"
else
    fail "arm64 gdnbench: ${e2e_args[*]}: exit $rc: $(tail -n 5 "$work/e2e.out" | tr '\n' ' ' | head -c 600)"
fi
# The same case on this host's own build, for the bit-for-bit comparison.
if [ -x "${GDNBENCH:-}" ] && [ "$rc" = 0 ]; then
    mkdir -p "$work/dump-x86"
    if "$GDNBENCH" "${e2e_args[@]}" --dump "$work/dump-x86" </dev/null >"$work/e2e-x86.out" 2>&1; then
        f=$(cd "$work/dump-arm64" && ls -- *.safetensors 2>/dev/null | head -n 1)
        if [ -n "$f" ] && [ -f "$work/dump-x86/$f" ]; then
            same_tensors "$work/dump-arm64/$f" "$work/dump-x86/$f"
        else
            fail "arm64 vs x86-64: no matching --dump files (arm64: '${f:-none}')"
        fi
    else
        fail "arm64 vs x86-64: the x86-64 run failed: $(tail -n 3 "$work/e2e-x86.out" | tr '\n' ' ' | head -c 400)"
    fi
elif [ "$rc" = 0 ]; then
    skip "arm64 vs x86-64: no x86-64 gdnbench to compare with (GDNBENCH=${GDNBENCH:-unset})"
fi
# ---- the numeric checks on arm64 ----
qg=$bdir/gdnbench-qemu
printf '#!/bin/sh\nexec env -u QEMU_LD_PREFIX GDNBENCH_ROOT="%s" GDNBENCH_CXX="%s" GDNBENCH_CACHE_DIR="%s" qemu-aarch64 "%s" "$@"\n' \
    "$root" "$wrapper" "$work/num.cache" "$bdir/gdnbench" >"$qg.tmp" && chmod +x "$qg.tmp" && mv -f "$qg.tmp" "$qg"
GDNBENCH=$qg GDNBENCH_TARGET_ARCH=aarch64 timeout 1200 bash "$root/tests/cli/test_numerics.sh" </dev/null >"$work/num.out" 2>&1
while IFS= read -r line; do
    case $line in
    "PASS "*) pass "arm64 numerics: ${line#PASS }" ;;
    "FAIL "*) fail "arm64 numerics: ${line#FAIL }" ;;
    "SKIP "*) skip "arm64 numerics: ${line#SKIP }" ;;
    esac
done <"$work/num.out"
grep -q '^test_numerics.sh: ' "$work/num.out" || fail "arm64 numerics: test_numerics.sh did not finish: $(tail -n 3 "$work/num.out" | tr '\n' ' ')"
# findings NAME S K X: the numeric findings' lines of one kernel of numerics.metal
findings() {
    local g=$1 name=$2
    "$g" kernel "$root/tests/cli/kernels/numerics.metal" --function "$name" --grid 64 --threadgroup 32 --iters 1 \
        --sw-checks numerics --buffer "x=float32[64]:fill=$5" --buffer "y=float32[64]:fill=0" \
        --buffer "s=float32:$3" --buffer "k=int32:$4" 2>&1 </dev/null | grep -E '^ +(numeric error|at) ' | sed 's/  */ /g'
}
if [ -x "${GDNBENCH:-}" ]; then
    same=0 differ=
    for c in "half_acc 10000 8 1" "to_half 100000 8 1" "to_half4 100000 8 1" "to_bfloat 3.4e38 8 1" \
        "float_overflow 1e30 8 1e10" "zero_div_zero 1 8 1" "zero_times_inf 1 0 1" "div_zero 1 8 1" \
        "div_zero_ok 1 8 1" "exp_overflow 100 8 1" "sqrt_domain 2 8 1" "to_int 1e10 8 1"; do
        read -r n a b x <<<"$c"
        findings "$qg" "$n" "$a" "$b" "$x" >"$work/num-arm64"
        findings "$GDNBENCH" "$n" "$a" "$b" "$x" >"$work/num-x86"
        if cmp -s "$work/num-arm64" "$work/num-x86" && { [ -s "$work/num-x86" ] || [ "${n%_ok}" != "$n" ]; }; then
            same=$((same + 1))
        else
            differ="$differ $n"
        fi
    done
    if [ -z "$differ" ]; then pass "arm64 vs x86-64: the numeric findings of $same kernels of numerics.metal are the same, word for word"
    else fail "arm64 vs x86-64: numeric findings differ for:$differ"; fi
else
    skip "arm64 vs x86-64: numeric findings: no x86-64 gdnbench to compare with"
fi
wait
# --counters: the same counts on arm64 as on x86-64, every one of counters.total:
# memory, flops, integer operations, simd instructions and active lanes, barriers,
# atomics.  The counting variant's IR is optimised for one canonical target on every
# host before it is counted (src/swmetal/ir_target.h; test_ir_canonical.sh checks
# the static tables of Apple's arm64 front end too).
cnt_args=(attn_fwd --qL 32 --kL 32 --D 64 --Hq 2 --Hkv 1 --iters 1 --warmup 0 --check none --quiet --counters)
if [ -x "${GDNBENCH:-}" ] && [ -x "$TESTDATA" ]; then
    env -u QEMU_LD_PREFIX GDNBENCH_ROOT="$root" GDNBENCH_CACHE_DIR="$work/e2e.cache" GDNBENCH_CXX="$wrapper" \
        timeout 600 qemu-aarch64 "$bdir/gdnbench" "${cnt_args[@]}" --json "$work/cnt-arm64.json" </dev/null >/dev/null 2>&1
    "$GDNBENCH" "${cnt_args[@]}" --json "$work/cnt-x86.json" </dev/null >/dev/null 2>&1
    "$TESTDATA" json "$work/cnt-arm64.json" .counters.total >"$work/cnt-arm64" 2>&1
    "$TESTDATA" json "$work/cnt-x86.json" .counters.total >"$work/cnt-x86" 2>&1
    if grep -q '"float"' "$work/cnt-x86" && grep -q '"int_ops"' "$work/cnt-x86" && grep -q '"instructions"' "$work/cnt-x86" &&
        cmp -s "$work/cnt-arm64" "$work/cnt-x86"; then
        pass "arm64 vs x86-64: ${cnt_args[*]}: the same counters.total (bytes, lines, coalescing, flops, int ops, simd instructions and lanes, barriers, atomics)"
    else
        fail "arm64 vs x86-64: ${cnt_args[*]}: counters differ: $(diff "$work/cnt-arm64" "$work/cnt-x86" | head -c 400)"
    fi
fi
report_run "arm64 16k-pages"
echo "arm64: cross-build ${t_build} s, tests under qemu $(($(date +%s) - t1)) s"
finish
