#!/usr/bin/env bash
# test_layout.sh — src/ keeps the house plan of README.md's Architecture section
# (scripts/check_layout.sh), and the checker catches each kind of breach when one is
# planted in a copy of the tree (its negative controls).
. "$(dirname "$0")/lib.sh"
ROOT=$GDNBENCH_ROOT
CHECK=$ROOT/scripts/check_layout.sh

if out=$(bash "$CHECK" "$ROOT" 2>&1); then
    pass "layout: src/ follows README.md's layer table and size limits"
else
    fail "layout: $(printf '%s\n' "$out" | grep -v '^check_layout.sh:' | head -n 5 | tr '\n' ';')"
fi

# plant FILE_UNDER_SRC LINE_TEXT: a copy of the tree with LINE_TEXT appended to FILE
copy_tree() {
    rm -rf "$TMPD/t"
    mkdir -p "$TMPD/t"
    cp "$ROOT/README.md" "$TMPD/t/"
    cp -r "$ROOT/src" "$TMPD/t/src"
}
# expect_breach DESC REGEX: the checker run on the planted copy fails naming it
expect_breach() {
    local desc=$1 re=$2 rc
    out=$(bash "$CHECK" "$TMPD/t" 2>&1)
    rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "layout control: $desc: checker exited $rc, expected 1"
    elif ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
        fail "layout control: $desc: no line matching /$re/ in: $(printf '%s' "$out" | head -c 300)"
    else
        pass "layout control: $desc is caught"
    fi
}

copy_tree
printf '#include "runner/record.h"\n' >>"$TMPD/t/src/core/dtype.h"
n=$(wc -l <"$TMPD/t/src/core/dtype.h")
expect_breach "core including runner (an upward include)" "^src/core/dtype.h:$n: includes runner/record.h: layer 'core' may include only: nothing"

copy_tree
printf '#include "cli/cli.h"\n' >>"$TMPD/t/src/ops/registry.c"
expect_breach "ops including cli" "^src/ops/registry.c:[0-9]+: includes cli/cli.h"

copy_tree
private=$(cd "$ROOT/src/swmetal" && ls *.h | grep -vx swmetal.h | head -n 1)
printf '#include "swmetal/%s"\n' "$private" >>"$TMPD/t/src/runner/backend.c"
expect_breach "a private header of the software device included from runner" \
    "^src/runner/backend.c:[0-9]+: includes swmetal/$private: outside src/swmetal only swmetal/swmetal.h"

copy_tree
mkdir -p "$TMPD/t/src/extra"
printf '#include "core/dtype.h"\n' >"$TMPD/t/src/extra/x.c"
expect_breach "a directory the table does not know" "^src/extra/x.c:1: directory 'extra' is not a layer"

copy_tree
{ echo "/* long.c */"; for i in $(seq 1 1300); do echo "static int v$i;"; done; } >"$TMPD/t/src/core/long.c"
expect_breach "a .c file over the line limit" "^src/core/long.c:1: 1301 lines, over 1200"

copy_tree
{ echo "int too_long(int x)"; echo "{"; for i in $(seq 1 130); do echo "    x += $i;"; done; echo "    return x;"; echo "}"; } \
    >>"$TMPD/t/src/runner/sampling.c"
expect_breach "a function over the length limit in runner" "^src/runner/sampling.c:[0-9]+: function too_long is 134 lines, over 120"

# The same long function in a layer the limit does not cover is no breach.
copy_tree
{ echo "int too_long(int x)"; echo "{"; for i in $(seq 1 130); do echo "    x += $i;"; done; echo "    return x;"; echo "}"; } \
    >>"$TMPD/t/src/ref/gdn_ref_common.c"
if bash "$CHECK" "$TMPD/t" >/dev/null 2>&1; then
    pass "layout control: a long function outside cli/runner is not a breach"
else
    fail "layout control: a long function in ref was reported: $(bash "$CHECK" "$TMPD/t" 2>&1 | head -c 300)"
fi

# A README without the table is an error (exit 2), not a pass over no rules.
copy_tree
sed -i.bak '/layers:begin/,/layers:end/d' "$TMPD/t/README.md"
bash "$CHECK" "$TMPD/t" >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 2 ]; then
    pass "layout control: a README without the layer table stops the checker (exit 2)"
else
    fail "layout control: README without the table: exit $rc, expected 2"
fi
finish
