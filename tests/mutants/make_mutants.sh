#!/usr/bin/env bash
# make_mutants.sh OUT_DIR [SHADER_DIR] — planted bugs in copies of our own kernels.
#
# Each mutant is (shader file, a pattern that must occur exactly once in it, its
# replacement): the bugs kernel authors actually make (issue 7) — strict vs
# non-strict causal mask, wrong sign or missing gate, rounding to bf16 before the
# gate, a missing threadgroup barrier, a wrong GQA head mapping, a dropped last
# partial chunk, a wrong stride for one head.  Patterns are fixed strings (may span
# lines), not regexes.  If a pattern no longer occurs exactly once — the kernel
# changed — the script fails loudly naming the mutant, so the mutants stay in sync
# with shaders/ instead of silently testing nothing.
#
# Writes OUT_DIR/<name>.metal and OUT_DIR/mutants.tsv, one line per mutant:
#   name <TAB> op <TAB> function <TAB> file <TAB> validate args <TAB> expected-finding regex
# tests/cli/test_mutants.sh runs `gdnbench validate` on each and checks the regex.
# bash + awk only (no python), so it runs wherever the tests run.
set -euo pipefail

out=${1:?usage: make_mutants.sh OUT_DIR [SHADER_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)/shaders}
[ -d "$src" ] || { echo "make_mutants.sh: no shader directory $src" >&2; exit 2; }
mkdir -p "$out"
manifest="$out/mutants.tsv"
: > "$manifest"

# Small shapes: one case per mutant (B=1, one T with a full chunk and a 1-token
# tail, K=V=64), GQA ratio 2 with two key heads so a wrong head mapping shows;
# only the dimensions each op has.
shape_for() {
    case $1 in
    cumsum) echo "--B 1 --T 65 --H 4" ;;
    kkt | solve_tril) echo "--B 1 --T 65 --Hg 2 --H 4 --K 64" ;;
    decode) echo "--B 1 --Hg 2 --H 4 --K 64 --V 64" ;;
    *) echo "--B 1 --T 65 --Hg 2 --H 4 --K 64 --V 64" ;;
    esac
}

# mutant NAME SHADER OP FUNCTION EXPECT OLD NEW [EXTRA_ARGS]
mutant() {
    local name=$1 shader=$2 op=$3 fn=$4 expect=$5 old=$6 new=$7 extra=${8:-}
    local in="$src/$shader" dst="$out/$name.metal"
    [ -f "$in" ] || { echo "make_mutants.sh: mutant $name: $in does not exist" >&2; exit 1; }
    if ! OLD="$old" NEW="$new" awk '
        { text = text $0 "\n" }
        END {
            old = ENVIRON["OLD"]; new = ENVIRON["NEW"]
            n = 0; start = 1; at = 0
            while (length(old) > 0 && (i = index(substr(text, start), old)) > 0) {
                n++
                if (n == 1) at = start + i - 1
                start += i - 1 + length(old)
            }
            if (n != 1) { printf "%d", n > "/dev/stderr"; exit 1 }
            printf "%s%s%s", substr(text, 1, at - 1), new, substr(text, at + length(old))
        }' "$in" > "$dst" 2> "$dst.count"; then
        echo "make_mutants.sh: mutant $name: the pattern occurs $(cat "$dst.count") times in $shader, not once:" >&2
        printf '%s\n' "$old" | sed 's/^/    | /' >&2
        echo "  update the mutant to the kernel's current code (tests/mutants/make_mutants.sh)" >&2
        rm -f "$dst" "$dst.count"
        exit 1
    fi
    rm -f "$dst.count"
    cmp -s "$in" "$dst" && { echo "make_mutants.sh: mutant $name changed nothing" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$op" "$fn" "$dst" "$(shape_for "$op") --profile realistic${extra:+ $extra}" "$expect" >> "$manifest"
}

KKT=gated_delta_net_kkt_bf16
CO=gated_delta_net_chunk_o_bf16
CH=gated_delta_net_chunk_inter_state_bf16
PARITY_FAIL='vs bf16-parity: .*(outside|exceeds)|ulps, bound'
FAULT='the kernel failed under schedule .*(uninitialised|race)'

# --- causal mask -------------------------------------------------------------
mutant kkt_mask_nonstrict gdn_kkt.metal kkt $KKT 'pattern: the diagonal' \
    'out[c] = j < i ? acc[r][c]' 'out[c] = j <= i ? acc[r][c]'
mutant chunk_o_mask_strict gdn_chunk_o.metal chunk_o $CO "$PARITY_FAIL" \
    'e[i] = (j <= t && t < n)' 'e[i] = (j < t && t < n)'

# --- gate: wrong sign, missing -----------------------------------------------
mutant kkt_gate_sign gdn_kkt.metal kkt $KKT "$PARITY_FAIL" \
    'exp(gc_s[i] - gc_s[j])' 'exp(gc_s[j] - gc_s[i])'
mutant chunk_o_gate_missing gdn_chunk_o.metal chunk_o $CO "$PARITY_FAIL" \
    $'        e[0] *= eg;\n        e[1] *= eg;\n' ''
mutant chunk_h_gate_missing gdn_chunk_h.metal chunk_h $CH "$PARITY_FAIL" \
    $'                e[0] = e[0] * egl + u[0];\n                e[1] = e[1] * egl + u[1];' \
    $'                e[0] = e[0] + u[0];\n                e[1] = e[1] + u[1];' '--T 129'
mutant recurrent_gate_sign gdn_recurrent.metal recurrent gated_delta_net_recurrent_bf16 "$PARITY_FAIL" \
    'const float decay = exp(a.g[gi]);' 'const float decay = exp(-a.g[gi]);'

# --- rounding to bf16 before the gate ----------------------------------------
mutant kkt_round_before_gate gdn_kkt.metal kkt $KKT "$PARITY_FAIL" \
    'acc[r][c] * exp(gc_s[i] - gc_s[j])' 'float(bfloat(acc[r][c])) * exp(gc_s[i] - gc_s[j])'
mutant chunk_o_round_before_gate gdn_chunk_o.metal chunk_o $CO "$PARITY_FAIL" \
    'float(bfloat(e[i] * exp(gt - g_s[j])))' 'float(bfloat(e[i])) * exp(gt - g_s[j])'
mutant chunk_h_round_before_gate gdn_chunk_h.metal chunk_h $CH "$PARITY_FAIL" \
    'float(bfloat(x * exp(gl - g_s[t])))' 'float(bfloat(x)) * exp(gl - g_s[t])'

# --- missing threadgroup barrier ----------------------------------------------
mutant kkt_no_barrier gdn_kkt.metal kkt $KKT "$FAULT" \
    $'    threadgroup_barrier(mem_flags::mem_threadgroup);\n\n    const ulong k_row0' $'\n    const ulong k_row0'
mutant chunk_o_no_barrier gdn_chunk_o.metal chunk_o $CO "$FAULT" \
    $'    threadgroup_barrier(mem_flags::mem_threadgroup);\n\n    sgmat p[4];' $'\n    sgmat p[4];'
mutant chunk_h_no_barrier gdn_chunk_h.metal chunk_h $CH "$FAULT" \
    $'        threadgroup_barrier(mem_flags::mem_threadgroup);\n        for (uint e = tid; e < CH_BT * CH_BV / 4; e += CH_THREADS) {\n            const uint row = e / (CH_BV / 4), c4 = e % (CH_BV / 4);\n            if (row < n)' \
    $'        for (uint e = tid; e < CH_BT * CH_BV / 4; e += CH_THREADS) {\n            const uint row = e / (CH_BV / 4), c4 = e % (CH_BV / 4);\n            if (row < n)'

# --- GQA head mapping ---------------------------------------------------------
mutant kkt_gqa gdn_kkt.metal kkt $KKT 'pattern: .*heads h=1\.\.2 of 4' \
    'const uint kh = h / (H / Hg);' 'const uint kh = h % Hg;'
mutant chunk_o_gqa gdn_chunk_o.metal chunk_o $CO 'pattern: .*heads h=1\.\.2 of 4' \
    'const uint kh = hv / (H / Hg);' 'const uint kh = hv % Hg;'
mutant wy_gqa gdn_wy.metal wy gated_delta_net_recompute_wu_bf16 'pattern: .*heads h=1\.\.2 of 4' \
    'const uint kh = h / (H / Hg);' 'const uint kh = h % Hg;'
mutant decode_gqa gdn_decode.metal decode gated_delta_net_decode_f32_2 'pattern: .*heads h=1\.\.2 of 4' \
    'const uint kh = hv % Hg;' 'const uint kh = hv / (H / Hg);'

# --- dropped last partial chunk ------------------------------------------------
mutant cumsum_drop_tail gdn_cumsum.metal cumsum chunk_local_cumsum_g_f32 'pattern: the tail' \
    'if (t0 >= T) return;' 'if (t0 + BT > T) return;'
mutant chunk_h_drop_tail gdn_chunk_h.metal chunk_h $CH 'unwritten [1-9]' \
    'for (uint c = 0; c < a.NT; c++) {' 'for (uint c = 0; c < T / CH_BT; c++) {'

# --- wrong stride for one head -------------------------------------------------
mutant chunk_o_head_stride gdn_chunk_o.metal chunk_o $CO 'device_write_conflict' \
    '*(device bfloat4 *)(o + ((tok0 + row) * H + hv) * V + v0 + c4 * 4)' \
    '*(device bfloat4 *)(o + ((tok0 + row) * (hv == 1 ? H - 1 : H) + hv) * V + v0 + c4 * 4)'

echo "make_mutants.sh: $(wc -l < "$manifest") mutants in $out"
