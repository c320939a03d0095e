#!/usr/bin/env bash
# run.sh [SECONDS] [TARGET...] — build the libFuzzer targets of the fixture parsers
# with clang (-fsanitize=fuzzer,address,undefined) and run each for SECONDS (default 30)
# on one core.  Targets: safetensors npy mlxfix kcase (default: all).  Crashes are written to
# build-fuzz/<target>/crash-*; the corpus grows in build-fuzz/<target>/corpus.
# Needs clang with compiler-rt's libFuzzer (Debian: clang-19 + libclang-rt-19-dev).
# Not part of tests/run.sh: the seeded mutation test (tests/unit/test_io_fuzz.c) is.
set -eu
secs=${1:-30}
shift || true
targets=${*:-safetensors npy mlxfix kcase}
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-$(command -v clang-19 || command -v clang || true)}
if [ -z "$cc" ]; then
    echo "run.sh: no clang found: install clang-19 and libclang-rt-19-dev" >&2
    exit 2
fi
out=$root/build-fuzz
mkdir -p "$out"
src="$root/src/io/io_util.c $root/src/io/safetensors.c $root/src/io/npy.c $root/src/io/mlxfix.c
     $root/src/core/tensor.c $root/src/core/dtype.c $root/src/core/file.c
     $root/src/kcase/kcase_model.c $root/src/kcase/kcase_parse.c $root/src/kcase/kcase_json_util.c
     $root/src/kcase/kcase_buffer.c $root/src/kcase/kcase_mlx.c $root/src/kcase/kcase_print.c $root/src/kcase/kcase_dtype.c"
cjson_libs=$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
flags="-std=c11 -D_GNU_SOURCE -ffp-contract=off -g -O1 -I$root/src $(pkg-config --cflags libcjson 2>/dev/null)"
# shellcheck disable=SC2086
"$cc" $flags -o "$out/make_seeds" "$root/tests/fuzz/make_seeds.c" $src $cjson_libs -lm
mkdir -p "$out/seeds"
"$out/make_seeds" "$out/seeds"
for t in $targets; do
    mkdir -p "$out/$t/corpus"
    # shellcheck disable=SC2086
    "$cc" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -o "$out/fuzz_$t" "$root/tests/fuzz/fuzz_$t.c" $src $cjson_libs -lm
    echo "== $t: ${secs}s"
    (cd "$out/$t" && "$out/fuzz_$t" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
        corpus "$out/seeds/$t" 2>&1 | grep -E 'stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Done' || true)
    if ls "$out/$t"/crash-* >/dev/null 2>&1; then
        echo "FAIL fuzz_$t: crash inputs in $out/$t" >&2
        exit 1
    fi
done
