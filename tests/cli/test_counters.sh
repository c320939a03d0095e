#!/usr/bin/env bash
# test_counters.sh — --counters (issue 31 part 1): the software device's exact
# counters against numbers known in advance.
#   - micro.copy: requested and distinct bytes, 128-byte lines and coalescing equal
#     the analytic numbers (float4 and float);
#   - micro.alu: flops equal the op's analytic count, plus the kernel's final sum of
#     its chains (FMA chains: 8 adds a thread; MMA: 8 a thread), in the right type;
#   - every op whose kernel reads each input element at least once: distinct device
#     bytes equal the op's minimum-bytes model (throughput.bytes), requested >= it;
#   - micro.copy's kernels changed to read src twice (--shader): requested load bytes
#     grow by src's size exactly, distinct bytes do not;
#   - a strided copy's coalescing, a divergent branch's and a half simdgroup's lane
#     utilisation (gdnbench kernel);
#   - the same counts under every --sw-schedule, under --sw-checks full and with one
#     worker thread; the same --dump with and without --counters;
#   - where the backend cannot count: "counters": null and counters_unavailable.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

if ! "$GDNBENCH" info 2>/dev/null | grep -q '^  sw .*available:'; then
    skip_all "counters: the software device is not available here ($("$GDNBENCH" info 2>&1 | grep '^  sw'))"
fi
need_testdata
Q() { "$TESTDATA" json "$@" 2>&1; }
K=$here/kernels
run_sw() { # name args...: a counted run's JSON in $TMPD/name.json
    local name=$1
    shift
    "$GDNBENCH" "$@" --backend sw --iters 1 --warmup 0 --quiet --counters --json "$TMPD/$name.json" >"$TMPD/$name.out" 2>&1
}
same() { # description got want
    if [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got $2, want $3"; fi
}

# ---- micro.copy: 1 MiB each way
MB=1048576
run_sw copy4 micro.copy --MB 1 --vec 4 || fail "counters: micro.copy --vec 4 ran: $(tail -2 "$TMPD/copy4.out")"
same "counters: copy float4: requested and distinct bytes" \
    "$(Q "$TMPD/copy4.json" .counters.total.device.load_bytes .counters.total.device.store_bytes \
        .counters.total.device.load_distinct_bytes .counters.total.device.store_distinct_bytes | tr '\n' ' ')" \
    "$MB $MB $MB $MB "
same "counters: ... lines: 2 x 1 MiB / 128" "$(Q "$TMPD/copy4.json" .counters.total.device.distinct_lines)" 16384
# the kernel's own instructions, not the device's unpacking of its arguments (the
# entry around it): its bounds check (load, compare, branch), the copy (index, two
# addresses, load, store), branch and return: 10 a simdgroup, 2048 simdgroups
same "counters: ... 10 instructions a simdgroup, the kernel's alone" \
    "$(Q "$TMPD/copy4.json" .counters.total.simd.instructions)" 20480
# float4: a simdgroup moves 32 x 16 bytes = 4 lines per access, 65536 threads = 2048 simdgroups
same "counters: ... src coalescing: 2048 accesses of 4 lines, all needed" \
    "$(Q "$TMPD/copy4.json" '.counters.total.buffers[0].name' '.counters.total.buffers[0].coalescing' | tr '\n' ' ')" \
    'src {"accesses":2048,"lines":8192,"min_lines":8192,"efficiency":1} '
run_sw copy1 micro.copy --MB 1 --vec 1 || fail "counters: micro.copy --vec 1 ran"
same "counters: copy float: 8192 accesses per buffer of 1 line each" \
    "$(Q "$TMPD/copy1.json" .counters.total.device.coalescing | tr '\n' ' ')" \
    '{"accesses":16384,"lines":16384,"min_lines":16384,"efficiency":1} '
same "counters: ... one dispatch, its stage and function" \
    "$(Q "$TMPD/copy1.json" '.counters.dispatches#' '.counters.dispatches[0].stage' '.counters.dispatches[0].function' | tr '\n' ' ')" \
    "1 copy micro_copy_f32 "

# ---- micro.alu: 2 groups of 256 threads, 10 steps
for t in "0 float" "1 half" "2 bfloat"; do
    set -- $t
    run_sw "alu$1" micro.alu --groups 2 --steps 10 --type "$1" || fail "counters: micro.alu --type $1 ran"
    # in $2: 512 threads x 8 chains x 10 steps x 2; the final sums in float: 512 x 8
    if [ "$2" = float ]; then want="86016 86016 81920 "; else want="81920 86016 81920 "; fi
    same "counters: alu $2: FMA chains 2 flops a step in $2 (+ the float sums)" \
        "$(Q "$TMPD/alu$1.json" .counters.total.flops.$2 .counters.total.flops.total .throughput.flops | tr '\n' ' ')" \
        "$want"
    run_sw "mma$1" micro.alu --groups 2 --steps 10 --mma 1 --type "$1" || fail "counters: micro.alu --mma 1 --type $1 ran"
    # 16 simdgroups x 4 chains x 10 steps x 1024 in the matrices' type; 512 threads x 8 float adds
    if [ "$2" = float ]; then want="659456 659456 655360 "; else want="655360 659456 655360 "; fi
    same "counters: alu $2 MMA: 1024 flops a product in $2 (+ the float sums)" \
        "$(Q "$TMPD/mma$1.json" .counters.total.flops.$2 .counters.total.flops.total .throughput.flops | tr '\n' ' ')" \
        "$want"
    same "counters: ... every lane active (the product's evaluation by one lane is not counted)" \
        "$(Q "$TMPD/mma$1.json" .counters.total.simd.lane_utilisation)" 1
done
# A product is one instruction: the emulator's log of it is not the kernel's work.
# Ten more steps add, per simdgroup and step, the 4 chains' products and the loop's
# add, compare and branch; integer operations, per thread and step, add and compare.
run_sw mma0s20 micro.alu --groups 2 --steps 20 --mma 1 --type 0 || fail "counters: micro.alu --mma 1 --steps 20 ran"
read -r i10 n10 <<<"$(Q "$TMPD/mma0.json" .counters.total.simd.instructions .counters.total.int_ops | tr '\n' ' ')"
read -r i20 n20 <<<"$(Q "$TMPD/mma0s20.json" .counters.total.simd.instructions .counters.total.int_ops | tr '\n' ' ')"
same "counters: alu MMA: 10 more steps x 16 simdgroups: 4 products + 3 loop instructions each; 2 integer ops a thread" \
    "$(((i20 - i10) / 160)).$(((i20 - i10) % 160)) $(((n20 - n10) / 5120)).$(((n20 - n10) % 5120))" "7.0 2.0"

# ---- every op that reads each input element: distinct bytes = the op's model
ops=(
    "cumsum --T 128 --H 2"
    "kkt --T 128 --Hg 2 --H 4 --K 64"
    "solve_tril --T 128 --Hg 2 --H 4 --K 64"
    "wy --T 128 --Hg 2 --H 4 --K 64 --V 64"
    "chunk_h --T 128 --Hg 2 --H 4 --K 64 --V 64"
    "chunk_o --T 128 --Hg 2 --H 4 --K 64 --V 64"
    "recurrent --T 16 --Hg 2 --H 4 --K 64 --V 64"
    "decode --Hg 2 --H 4 --K 64 --V 64"
    "prep_step --Hk 2 --Hv 4 --Dk 64 --Dv 64"
    "decode_seq --Hk 2 --Hv 4 --Dk 64 --Dv 64 --N 2"
    "decode_seq_steps --Hk 2 --Hv 4 --Dk 64 --Dv 64 --N 2"
    "attn_fwd --qL 64 --kL 64 --D 64 --Hq 2 --Hkv 1"
    "attn_bwd --qL 64 --kL 64 --D 64 --Hq 2 --Hkv 1"
    "micro.copy --MB 1"
    "micro.reduce"
    "micro.decode_ctx --ctx 64"
)
for o in "${ops[@]}"; do
    read -r -a a <<< "$o"
    n=${a[0]}
    if ! run_sw "op_$n" "${a[@]}" --check none; then fail "counters: $n ran: $(tail -2 "$TMPD/op_$n.out")"; continue; fi
    read -r bytes distinct ld st <<< "$(Q "$TMPD/op_$n.json" .throughput.bytes .counters.total.device.distinct_bytes \
        .counters.total.device.load_bytes .counters.total.device.store_bytes | tr '\n' ' ')"
    if [ "$distinct" = "$bytes" ] && [ $((ld + st)) -ge "$bytes" ]; then
        pass "counters: $n: distinct bytes = the op's model ($bytes), requested $((ld + st)) >= it"
    else fail "counters: $n: distinct $distinct, requested $ld + $st, the op's model $bytes"; fi
done

# ---- an input read twice
run_sw twice micro.copy --MB 1 --shader "$K/counters_copy_twice.metal" || fail "counters: the read-twice copy ran: $(tail -2 "$TMPD/twice.out")"
same "counters: src read twice: requested load bytes + 1 MiB, distinct unchanged" \
    "$(Q "$TMPD/twice.json" .counters.total.device.load_bytes .counters.total.device.distinct_bytes | tr '\n' ' ')" \
    "$((2 * MB)) $((2 * MB)) "
same "counters: ... and the check still passes" "$(Q "$TMPD/twice.json" .status)" pass
# compare gates on these real counts (issue 31 part 4): the same op and shape with
# the plain kernel is the baseline; the read-twice kernel is a counter regression
# (--counters-only: the software device's timing is not judged); the plain kernel
# against itself is not (the control)
run_sw plain micro.copy --MB 1 || fail "counters: the plain copy ran: $(tail -2 "$TMPD/plain.out")"
expect_exit 1 "counters: compare --counters-only: the read-twice kernel is a regression, exit 1" \
    "$GDNBENCH" compare "$TMPD/plain.json" "$TMPD/twice.json" --counters-only
expect_match "counters: ... requested device bytes named with both values" "$OUT" \
    "regression: requested device bytes $((2 * MB)) -> $((3 * MB)) \(\+50\.0%\)"
expect_exit 0 "counters: compare --counters-only: the plain kernel against itself, exit 0" \
    "$GDNBENCH" compare "$TMPD/plain.json" "$TMPD/plain.json" --counters-only

# ---- gdnbench kernel: coalescing and lane utilisation
P=$K/counters_patterns.metal
kcount() { # name function grid tg buffers...
    local name=$1 fn=$2 grid=$3 tg=$4
    shift 4
    "$GDNBENCH" kernel "$P" --function "$fn" --grid "$grid" --threadgroup "$tg" "$@" --iters 1 --warmup 0 --quiet \
        --counters --json "$TMPD/$name.json" >"$TMPD/$name.out" 2>&1 || fail "counters: kernel $fn ran: $(tail -2 "$TMPD/$name.out")"
}
kcount strided strided_copy 256 64 --buffer src=float32[8192]:arange=0,1 --buffer dst=float32[256]:zeros
same "counters: strided copy: src 8 accesses of 32 lines where 1 would do, dst coalesced" \
    "$(Q "$TMPD/strided.json" '.counters.total.buffers[].coalescing' | tr '\n' ' ')" \
    '{"accesses":8,"lines":256,"min_lines":8,"efficiency":0.03125} {"accesses":8,"lines":8,"min_lines":8,"efficiency":1} '
# 4 bytes of each 128-byte line: as many distinct bytes as requested (a range ending
# in a line's first 64 bytes had set bits of its second word: 2048 read)
same "counters: strided copy: distinct bytes read and written, 1024 each" \
    "$(Q "$TMPD/strided.json" .counters.total.device.load_distinct_bytes .counters.total.device.store_distinct_bytes | tr '\n' ' ')" \
    "1024 1024 "
kcount rev rev_strided 256 64 --buffer src=float32[8192]:arange=0,1 --buffer dst=float32[256]:zeros
same "counters: strided backwards (lanes in descending order): distinct bytes 2048 read, 1024 written, 264 lines" \
    "$(Q "$TMPD/rev.json" .counters.total.device.load_distinct_bytes .counters.total.device.store_distinct_bytes \
        .counters.total.device.distinct_lines | tr '\n' ' ')" "2048 1024 264 "
kcount half half_busy 64 32 --buffer x=float32[64]:arange=0,1 --buffer y=float32[64]:zeros
kcount uni uniform_work 64 32 --buffer x=float32[64]:arange=0,1 --buffer y=float32[64]:zeros
u_half=$(Q "$TMPD/half.json" .counters.total.simd.lane_utilisation)
if awk -v u="$u_half" 'BEGIN { exit !(u > 0.5 && u < 0.51) }'; then
    pass "counters: half the lanes in a long loop: lane utilisation just above 1/2 ($u_half)"
else fail "counters: half the lanes in a long loop: lane utilisation $u_half, want just above 0.5"; fi
same "counters: ... every lane in it: 1" "$(Q "$TMPD/uni.json" .counters.total.simd.lane_utilisation)" 1
kcount u16 uniform_work 16 16 --buffer x=float32[16]:arange=0,1 --buffer y=float32[16]:zeros
same "counters: a threadgroup of 16 threads fills half a simdgroup: 0.5" \
    "$(Q "$TMPD/u16.json" .counters.total.simd.lane_utilisation)" 0.5
kcount odd odd_more 32 32 --buffer x=float32[96]:arange=0,1 --buffer y=float32[32]:zeros
same "counters: divergent lanes: the k-th load of a site by the lanes that reach it is one access" \
    "$(Q "$TMPD/odd.json" '.counters.total.buffers[].coalescing' | tr '\n' ' ')" \
    '{"accesses":4,"lines":4,"min_lines":4,"efficiency":1} {"accesses":1,"lines":1,"min_lines":1,"efficiency":1} '
# an in-place dispatch: one buffer at both indices is one memory in the dispatch's
# distinct bytes (it was counted once a binding); an address cannot say which binding
# it went through, so the lower index has the accesses
cat >"$TMPD/inplace.json" <<JSON
{"case": 1, "source": "$P",
 "dispatches": [{"function": "uniform_work", "dispatch": {"grid": [64], "threadgroup": [32]}, "bind": {"y": "x"}}],
 "buffers": {"x": {"dtype": "float32", "shape": [64], "init": {"arange": [0, 1]}}}}
JSON
"$GDNBENCH" kernel "$TMPD/inplace.json" --iters 1 --warmup 0 --quiet --counters --json "$TMPD/inplace.out.json" \
    >"$TMPD/inplace.out" 2>&1 || fail "counters: the in-place case ran: $(tail -2 "$TMPD/inplace.out")"
same "counters: in place: the dispatch's distinct bytes count the buffer once, the lower binding has them" \
    "$(Q "$TMPD/inplace.out.json" .counters.dispatches[0].device.distinct_bytes \
        '.counters.dispatches[0].buffers[].distinct_bytes' | tr '\n' ' ')" '256 256 0 '
# threadgroup memory: 64 threads store 4 bytes into each of two arrays and load 4 back
# from each; 2 threadgroups of 128 + 128 bytes
cat >"$TMPD/tg.json" <<JSON
{"case": 1, "source": "$P",
 "dispatches": [{"function": "tg_both", "dispatch": {"grid": [64], "threadgroup": [32], "threadgroup_memory": {"0": 128}}}],
 "buffers": {"x": {"dtype": "float32", "shape": [64], "init": {"arange": [0, 1]}},
             "y": {"dtype": "float32", "shape": [64], "init": "zeros"}}}
JSON
"$GDNBENCH" kernel "$TMPD/tg.json" --iters 1 --warmup 0 --quiet --counters --json "$TMPD/tg.out.json" \
    >"$TMPD/tg.out" 2>&1 || fail "counters: the threadgroup case ran: $(tail -2 "$TMPD/tg.out")"
same "counters: threadgroup memory: a declared array and an argument, 64 threads x 2 x 4 bytes each way" \
    "$(Q "$TMPD/tg.out.json" .counters.dispatches[0].threadgroup_memory | tr '\n' ' ')" \
    '{"bytes_per_threadgroup":256,"load_bytes":512,"store_bytes":512} '
run_sw tgmem micro.tgmem --groups 2 --rounds 16
same "counters: micro.tgmem: 2 groups store 4096 words, 256 threads x 16 rounds load one" \
    "$(Q "$TMPD/tgmem.json" .counters.total.threadgroup_memory.load_bytes .counters.total.threadgroup_memory.store_bytes | tr '\n' ' ')" \
    "32768 32768 "
kcount fma fma_chain 64 32 --buffer x=float32[64]:arange=0,1 --buffer y=float32[64]:zeros
same "counters: fma() is 2 flops: 64 threads x 100 x 2" "$(Q "$TMPD/fma.json" .counters.total.flops.float)" 12800
# a simdgroup_load and simdgroup_store of an 8x8 float tile: per lane 2 loads and 2
# stores of 4 bytes, rows 32 bytes apart (2 accesses of 4 lines per buffer, 2 at
# least); 31 instructions, none the emulation's look-up of a lane's elements (45 when
# that was counted: a call, its result and the table's load, per operation)
kcount tile tile_copy 32 32 --buffer src=float32[64]:arange=0,1 --buffer dst=float32[64]:zeros
same "counters: simdgroup_load/store of a tile: 2 accesses of 4 lines each way; 31 instructions, 4 int ops a lane" \
    "$(Q "$TMPD/tile.json" '.counters.total.buffers[].coalescing' .counters.total.simd.instructions .counters.total.int_ops | tr '\n' ' ')" \
    '{"accesses":2,"lines":4,"min_lines":2,"efficiency":0.5} {"accesses":2,"lines":4,"min_lines":2,"efficiency":0.5} 31 128 '

# ---- the same counts whatever the schedule, the checks and the workers
for o in "kkt --T 128 --Hg 2 --H 4 --K 64" "chunk_o --T 128 --Hg 2 --H 4 --K 64 --V 64" \
    "attn_fwd --qL 64 --kL 64 --D 64 --Hq 2 --Hkv 1" "micro.reduce --mode 2"; do
    read -r -a a <<< "$o"
    n=${a[0]}
    run_sw "s0_$n" "${a[@]}" --check none || fail "counters: $n ran"
    Q "$TMPD/s0_$n.json" .counters >"$TMPD/c0_$n"
    for v in "--sw-schedule reverse" "--sw-schedule random:7" "--sw-checks full" "threads=1"; do
        if [ "$v" = threads=1 ]; then GDNBENCH_THREADS=1 run_sw "s1_$n" "${a[@]}" --check none
        else read -r -a extra <<< "$v"; run_sw "s1_$n" "${a[@]}" --check none "${extra[@]}"; fi
        Q "$TMPD/s1_$n.json" .counters >"$TMPD/c1_$n"
        if [ -s "$TMPD/c0_$n" ] && cmp -s "$TMPD/c0_$n" "$TMPD/c1_$n"; then pass "counters: $n: the same counts with $v"
        else fail "counters: $n: the counts differ with $v: $(diff "$TMPD/c0_$n" "$TMPD/c1_$n" | head -c 300)"; fi
    done
done
"$GDNBENCH" kkt --backend sw --T 128 --Hg 2 --H 4 --K 64 --iters 1 --warmup 0 --quiet --dump "$TMPD/d0" >/dev/null 2>&1
"$GDNBENCH" kkt --backend sw --T 128 --Hg 2 --H 4 --K 64 --iters 1 --warmup 0 --quiet --dump "$TMPD/d1" --counters >/dev/null 2>&1
if [ -n "$(ls "$TMPD/d0" 2>/dev/null)" ] && diff -r "$TMPD/d0" "$TMPD/d1" >/dev/null; then
    pass "counters: kkt's --dump the same with --counters (the counted run computes what the others do)"
else fail "counters: kkt's --dump differs with --counters"; fi

# ---- every counted run of this script: no buffer has more distinct bytes than its
# accesses requested
over=""
for j in "$TMPD"/*.json; do
    Q "$j" .counters.total >/dev/null 2>&1 || continue
    v=$(Q "$j" '.counters.total.buffers[].load_bytes' '.counters.total.buffers[].load_distinct_bytes' \
        '.counters.total.buffers[].store_bytes' '.counters.total.buffers[].store_distinct_bytes' | tr '\n' ' ')
    if ! awk -v v="$v" 'BEGIN { n = split(v, x, " "); if (n == 0 || n % 4) exit 1; b = n / 4
        for (i = 1; i <= b; i++) if (x[b + i] > x[i] || x[3 * b + i] > x[2 * b + i]) exit 1 }'; then
        over="$over $(basename "$j"): $v;"
    fi
done
if [ -z "$over" ]; then pass "counters: distinct bytes never exceed requested ones, any buffer of any run here"
else fail "counters: distinct bytes above requested:$over"; fi

# ---- a backend that cannot count
"$GDNBENCH" micro.copy --backend cpu --MB 1 --iters 1 --warmup 0 --quiet --counters --json "$TMPD/cpu.json" >/dev/null 2>&1
same "counters: cpu backend: counters null, and why" \
    "$(Q "$TMPD/cpu.json" .counters .counters_unavailable | tr '\n' '|')" \
    "null|the cpu backend cannot count: exact counters come from the software device (--backend sw)|"
"$GDNBENCH" micro.copy --backend sw --MB 1 --iters 1 --warmup 0 --quiet --json "$TMPD/none.json" >/dev/null 2>&1
if Q "$TMPD/none.json" .counters >/dev/null 2>&1; then fail "counters: without --counters the key is absent"
else pass "counters: without --counters the key is absent"; fi
finish
