#!/usr/bin/env bash
# sw_speed.sh [--ops a,b,c] [--iters N] [--no-copy] [--no-numpy] [BUILD_DIR] — how fast the software
# Metal device runs each op against the op's own bf16-parity CPU reference, from one run.
#
# Per op, at its default shape: `gdnbench OP --iters 1 --warmup 0 --check parity` and read
# the two times the tool prints (the sw median and "CPU references computed in: ...
# bf16-parity"); ratio = sw / reference.  Then micro.copy (16 MiB, float4, warm; the best
# of 20 runs) on sw against a host memcpy of the same size (the best of 5), and the f64 recurrence reference (the `f64`
# reference time of `recurrent --backend cpu`) against scripts/bench/recurrence_numpy.py
# at T=4096 H=32 K=V=128 when python3 with numpy is there.
#
# One iteration per op, so it is quick but noisy: compare ratios measured in the same run,
# not absolute times across runs.  The load average is printed for that reason.
# --iters N (N >= 2) times N runs after one warmup instead and reports their median, for
# steadier numbers on small ops; the reference is still computed once per op.
# --ops takes a comma-separated subset (default: every non-micro op of `gdnbench list`).
#
# Exit 0 when every row ran; 2 when something could not run (missing build, an op failed).
set -u
ops="" copy=1 numpy=1 iters=1
while [ $# -gt 0 ]; do
    case "$1" in
    --ops) ops=${2:-}; shift 2 ;;
    --ops=*) ops=${1#--ops=}; shift ;;
    --iters) iters=${2:-}; shift 2 ;;
    --iters=*) iters=${1#--iters=}; shift ;;
    --no-copy) copy=0; shift ;;
    --no-numpy) numpy=0; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "sw_speed.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
case "$iters" in
'' | *[!0-9]* | 0) echo "sw_speed.sh: --iters needs a whole number >= 1, got '$iters'" >&2; exit 2 ;;
esac
warmup=0
[ "$iters" -eq 1 ] || warmup=1
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in
/*) gdn="$build/gdnbench" ;;
*) gdn="$root/$build/gdnbench" ;;
esac
[ -x "$gdn" ] || { echo "sw_speed.sh: build first (make all): no $gdn" >&2; exit 2; }
if [ -z "$ops" ]; then
    ops=$("$gdn" list | sed -n 's/^  \([a-z_]*\)  .*/\1/p' | tr '\n' ',')
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# secs VALUE UNIT: the value in seconds
secs() { awk -v v="$1" -v u="$2" 'BEGIN { m = u == "s" ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : u == "ns" ? 1e-9 : -1;
                                          if (m < 0) exit 1; printf "%.6f", v * m }'; }
# loadavg: the 1-minute load average (Linux /proc, else sysctl on macOS)
loadavg() { if [ -r /proc/loadavg ]; then cut -d' ' -f1 /proc/loadavg; else sysctl -n vm.loadavg 2>/dev/null | tr -d '{}' | awk '{ print $1 }'; fi; }

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
echo "sw_speed.sh: $(uname -m), $cores cores, load average $(loadavg) at start; $([ "$iters" -eq 1 ] && echo 'one iteration per op' || echo "median of $iters iterations after 1 warmup per op"), default shapes"
printf '%-18s %12s %14s %8s  %s\n' op "sw (s)" "parity ref (s)" ratio "wall (s)  load"
failed=0
IFS=, read -r -a oplist <<<"$ops"
for op in "${oplist[@]}"; do
    [ -n "$op" ] || continue
    t0=$(date +%s.%N)
    "$gdn" "$op" --iters "$iters" --warmup "$warmup" --check parity >"$tmp/out" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    read -r sv su < <(sed -n "s/.*time ([a-z ]*clock, n=$iters) *median \\([0-9.]*\\) \\([a-z]*\\).*/\\1 \\2/p" "$tmp/out" | head -n 1)
    read -r rv ru < <(sed -n 's/.*bf16-parity \([0-9.]*\) \([a-z]*\) (host wall.*/\1 \2/p' "$tmp/out" | head -n 1)
    if [ -z "${sv:-}" ] || [ -z "${rv:-}" ] || [ "$rc" -eq 2 ]; then
        echo "sw_speed.sh: $op did not run (exit $rc):" >&2
        tail -n 3 "$tmp/out" >&2
        failed=1
        continue
    fi
    s=$(secs "$sv" "$su") r=$(secs "$rv" "$ru")
    note=""
    [ "$rc" -eq 0 ] || note="  (parity check FAILED, exit $rc)"
    printf '%-18s %12.4f %14.4f %7.2fx  %8.1f  %s%s\n' "$op" "$s" "$r" "$(awk -v s="$s" -v r="$r" 'BEGIN { print (r > 0 ? s / r : 0) }')" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$(loadavg)" "$note"
    unset sv su rv ru
done

if [ "$copy" -eq 1 ]; then
    # host memcpy of 16 MiB, warm destination, best of 5
    cat >"$tmp/memcpy.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
    size_t n = (size_t)16 << 20;
    char *a = malloc(n), *b = malloc(n);
    if (!a || !b) return 2;
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        double t = now();
        memcpy(b, a, n);
        t = now() - t;
        if (t < best) best = t;
        a[i] = b[n - 1 - i];
    }
    printf("%.6f\n", best);
    free(a);
    free(b);
    return 0;
}
EOF
    if ${CC:-cc} -O2 -o "$tmp/memcpy" "$tmp/memcpy.c" 2>"$tmp/cc.err"; then
        host=$("$tmp/memcpy")
        # 20 timed runs (they take milliseconds): best against best, as memcpy is
        "$gdn" micro.copy --MB 16 --vec 4 --iters 20 --warmup 1 --check none >"$tmp/out" 2>&1
        read -r sv su < <(sed -n 's/.*time ([a-z ]*clock, n=20) *median [0-9.]* [a-z]* *min \([0-9.]*\) \([a-z]*\).*/\1 \2/p' "$tmp/out" | head -n 1)
        if [ -n "${sv:-}" ]; then
            s=$(secs "$sv" "$su")
            # bandwidth counts bytes read + written, as micro.copy does
            awk -v s="$s" -v h="$host" 'BEGIN { mb = 2 * 16 * 1048576 / 1e9;
                printf "micro.copy 16 MiB float4: sw best %.4f s (%.2f GB/s), host memcpy %.4f s (%.2f GB/s): sw at %.1f%% of memcpy\n",
                       s, mb / s, h, mb / h, 100 * h / s }'
        else
            echo "sw_speed.sh: micro.copy did not run:" >&2
            tail -n 3 "$tmp/out" >&2
            failed=1
        fi
    else
        echo "sw_speed.sh: no C compiler for the memcpy baseline (set CC): $(head -n 1 "$tmp/cc.err")" >&2
        failed=1
    fi
fi

if [ "$numpy" -eq 1 ]; then
    py=""
    for c in ${PYTHON:-} python3 /usr/bin/python3; do
        if "$c" -c 'import numpy' 2>/dev/null; then py=$c; break; fi
    done
    if [ -n "$py" ]; then
        np=$("$py" "$root/scripts/bench/recurrence_numpy.py" --T 4096 --H 32 --Hg 16 --K 128 --V 128 | sed -n 's/.*: \([0-9.]*\) s .*/\1/p')
        "$gdn" recurrent --backend cpu --iters 1 --warmup 0 --check f64 >"$tmp/out" 2>&1
        read -r rv ru < <(sed -n 's/.*computed in: f64 \([0-9.]*\) \([a-z]*\).*/\1 \2/p' "$tmp/out" | head -n 1)
        if [ -n "$np" ] && [ -n "${rv:-}" ]; then
            r=$(secs "$rv" "$ru")
            awk -v r="$r" -v n="$np" 'BEGIN { printf "f64 recurrence T=4096 H=32 K=V=128: C reference %.3f s, numpy %.3f s: %.1fx faster\n", r, n, n / r }'
        else
            echo "sw_speed.sh: the f64 recurrence comparison did not run" >&2
            failed=1
        fi
    else
        echo "f64 recurrence vs numpy: SKIP (no python3 with numpy; set PYTHON)"
    fi
fi
echo "load average $(loadavg) at end"
[ "$failed" -eq 0 ] || exit 2
exit 0
