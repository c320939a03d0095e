#!/usr/bin/env bash
# counters_cost.sh [--ops a,b,c] [--runs N] [--cold] [BUILD_DIR] — what --counters
# costs on the software device, against issue 31's target: a counting run may cost at
# most 3x an uncounted run of the same kernel.
#
# Per op, at its default shape: `gdnbench OP --backend sw --iters 1 --warmup 0 --check
# none` without and with --counters, each run once untimed first so that neither time
# holds the kernel's compile (--cold times the first runs instead), then N times each
# (--runs, default 5), alternating; the run with the median CPU time of each stands
# (the least of several had moved with whatever else the machine did by more than
# the margin judged; the median moves less).  Prints wall, user and sys seconds of
# those runs (the tool and its children) and the counted/uncounted ratio
# of CPU time (user + sys) and of wall time; the verdict holds the CPU ratio against
# 3x, since wall time on a loaded machine says more about the load than the run.
# The load average is printed for the same reason.
# Default ops: kkt, chunk_o, attn_fwd (the issue's).
#
# Exit 0 when every op meets the target; 1 when one misses it (named on its row and
# in the last line); 2 when something could not run.
set -u
ops="kkt,chunk_o,attn_fwd" cold=0 target=3 runs=5
while [ $# -gt 0 ]; do
    case "$1" in
    --ops) ops=${2:-}; shift 2 ;;
    --ops=*) ops=${1#--ops=}; shift ;;
    --runs) runs=${2:-}; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    --cold) cold=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "counters_cost.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ -n "$ops" ] || { echo "counters_cost.sh: --ops needs a comma-separated list of ops" >&2; exit 2; }
case "$runs" in ''|*[!0-9]*|0) echo "counters_cost.sh: --runs needs a count of 1 or more, not '$runs'" >&2; exit 2 ;; esac
[ "$cold" -eq 1 ] && runs=1 # only the first run is cold
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in
/*) gdn="$build/gdnbench" ;;
*) gdn="$root/$build/gdnbench" ;;
esac
[ -x "$gdn" ] || { echo "counters_cost.sh: build first (make all): no $gdn" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

loadavg() { if [ -r /proc/loadavg ]; then cut -d' ' -f1 /proc/loadavg; else sysctl -n vm.loadavg 2>/dev/null | tr -d '{}' | awk '{ print $1 }'; fi; }

# timed OUT OP [FLAGS...]: "wall user sys" of one run into OUT; 1 when the run failed
timed() {
    local out=$1 op=$2
    shift 2
    local TIMEFORMAT='%R %U %S' rc
    { time "$gdn" "$op" --backend sw --iters 1 --warmup 0 --check none --quiet "$@" >"$tmp/run.out" 2>&1; } 2>"$out"
    rc=$?
    [ "$rc" -eq 0 ] || { echo "counters_cost.sh: '$op $*' exited $rc: $(tail -2 "$tmp/run.out")" >&2; return 1; }
    return 0
}

# median BASE: the "wall user sys" of BASE.* with the median user + sys (the lower
# of the middle two for an even count)
median() { cat "$1".* | awk '{ print $2 + $3, $0 }' | sort -n | awk '{ l[NR] = $2 " " $3 " " $4 } END { print l[int((NR + 1) / 2)] }'; }

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
echo "counters_cost.sh: $(uname -m), $cores cores, load average $(loadavg) at start; $([ "$cold" -eq 1 ] && echo 'first runs (compile included)' || echo "warm runs (each variant run once before), the median CPU of $runs"), default shapes, target counted <= ${target}x uncounted CPU"
printf '%-10s %22s %22s %9s %9s  %s\n' op "uncounted wall/usr/sys" "counted wall/usr/sys" "cpu ratio" "wall ratio" verdict
missed="" failed=0
for op in ${ops//,/ }; do
    if [ "$cold" -eq 0 ]; then
        timed "$tmp/warm" "$op" || { failed=1; continue; }
        timed "$tmp/warm" "$op" --counters || { failed=1; continue; }
    fi
    ok=1
    for ((r = 0; r < runs && ok; r++)); do
        timed "$tmp/plain.$r" "$op" && timed "$tmp/counted.$r" "$op" --counters || ok=0
    done
    [ "$ok" -eq 1 ] || { failed=1; continue; }
    read -r pw pu ps < <(median "$tmp/plain")
    read -r cw cu cs < <(median "$tmp/counted")
    row=$(awk -v pw="$pw" -v pu="$pu" -v ps="$ps" -v cw="$cw" -v cu="$cu" -v cs="$cs" -v t="$target" 'BEGIN {
        pc = pu + ps; cc = cu + cs
        r = pc > 0 ? cc / pc : 0; rw = pw > 0 ? cw / pw : 0
        printf "%7.2f/%6.2f/%5.2f %7.2f/%6.2f/%5.2f %8.1fx %8.1fx  %s",
               pw, pu, ps, cw, cu, cs, r, rw, r <= t ? "meets " t "x" : "MISSES " t "x" }')
    printf '%-10s %s\n' "$op" "$row"
    case "$row" in *MISSES*) missed="$missed $op" ;; esac
done
echo "load average $(loadavg) at end"
[ "$failed" -eq 0 ] || { echo "counters_cost.sh: some op could not run (above)" >&2; exit 2; }
if [ -n "$missed" ]; then
    echo "target missed (counted > ${target}x uncounted CPU):$missed"
    exit 1
fi
echo "every op meets the target (counted <= ${target}x uncounted CPU)"
exit 0
