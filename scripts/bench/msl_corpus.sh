#!/usr/bin/env bash
# msl_corpus.sh [CORPUS_DIR] [-j N] — `gdnbench compile` over every .metal file of a
# kernel corpus (default ../shared/msl_corpus/mlx, MLX's kernels, unchanged), with
# the corpus root as the include directory (MLX includes "mlx/backend/...").
#
# Runs the whole corpus twice: once with an empty kernel cache (cold: clang runs)
# and once more with that cache (warm: the compiled libraries are found).  Prints
# one line per file (compiled / failed / unsupported, seconds, kernel count),
# the counts, the first error of each failure, and the median compile time of a
# file, cold and warm.  Not a test: no pass/fail, just the numbers.
#
# Environment: GDNBENCH (the binary; default build/gdnbench next to this script's
# repository), KEEP_CACHE=1 keeps the temporary cache directory.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
corpus="$here/../shared/msl_corpus/mlx"
jobs=1
while [ $# -gt 0 ]; do
    case "$1" in
    -j) jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) corpus=$1; shift ;;
    esac
done
bin=${GDNBENCH:-$here/build/gdnbench}
if [ ! -x "$bin" ]; then echo "msl_corpus.sh: $bin is missing: run make first" >&2; exit 2; fi
if [ ! -d "$corpus" ]; then echo "msl_corpus.sh: no corpus directory $corpus" >&2; exit 2; fi
corpus=$(cd "$corpus" && pwd)
work=$(mktemp -d)
[ "${KEEP_CACHE:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
export GDNBENCH_CACHE_DIR="$work/cache"
find "$corpus" -name '*.metal' | sort > "$work/files"
nfiles=$(wc -l < "$work/files")
[ "$nfiles" -gt 0 ] || { echo "msl_corpus.sh: no .metal file under $corpus" >&2; exit 2; }

# one file: "status<TAB>seconds<TAB>kernels<TAB>first error line"
compile_one() {
    f=$1
    out=$2/$(echo "$f" | md5sum | cut -c1-16)
    t0=$(date +%s%N)
    "$bin" compile "$f" -I "$corpus" --json "$out.json" --quiet 2> "$out.err" > /dev/null
    rc=$?
    t1=$(date +%s%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    kernels=$(grep -c '"bindings"' "$out.json" 2>/dev/null)
    first=$(grep -m1 . "$out.err" | sed 's/^gdnbench: compile: //')
    case $rc in
    0) status=compiled ;;
    1) if grep -q 'not supported by the software Metal device' "$out.err"; then status=unsupported; else status=failed; fi ;;
    *) status="error(rc=$rc)" ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "${f#$corpus/}" "$status" "$secs" "${kernels:-0}" "$first"
}
export -f compile_one
export bin corpus

run_pass() { # $1 = name
    mkdir -p "$work/$1"
    xargs -a "$work/files" -P "$jobs" -I{} bash -c 'compile_one "$1" "$2"' _ {} "$work/$1" | sort > "$work/$1.tsv"
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "corpus: $corpus ($nfiles .metal files), $("$bin" --version), $jobs parallel"
run_pass cold
run_pass warm
printf '%-58s %-12s %8s %8s %7s\n' file status cold_s warm_s kernels
join -t $'\t' "$work/cold.tsv" "$work/warm.tsv" | awk -F'\t' '{ printf "%-58s %-12s %8s %8s %7s\n", $1, $2, $3, $7, $4 }'
compiled=$(awk -F'\t' '$2 == "compiled"' "$work/cold.tsv" | wc -l)
unsupported=$(awk -F'\t' '$2 == "unsupported"' "$work/cold.tsv" | wc -l)
failed=$((nfiles - compiled - unsupported))
echo
echo "compiled: $compiled  failed: $failed  unsupported: $unsupported  (of $nfiles)"
echo "median compile time of a file: cold $(awk -F'\t' '{ print $3 }' "$work/cold.tsv" | median) s," \
     "warm $(awk -F'\t' '{ print $3 }' "$work/warm.tsv" | median) s"
echo "kernels in compiled files: $(awk -F'\t' '$2 == "compiled" { n += $4 } END { print n + 0 }' "$work/cold.tsv")"
if [ "$failed" -gt 0 ] || [ "$unsupported" -gt 0 ]; then
    echo
    echo "first error of each file that did not compile:"
    awk -F'\t' '$2 != "compiled" { printf "  %s [%s]: %s\n", $1, $2, $5 }' "$work/cold.tsv"
fi
