#!/usr/bin/env bash
# test_testdata_query.sh — `gdnbench-testdata json` and `xml`, the readers the other CLI
# tests check gdnbench's JSON reports and SVG charts with (tests/tools/json_query.c,
# xml_check.c): the values they select, and that a bad file or path is exit 2, one line.
source "$(dirname "$0")/lib.sh"
need_testdata
J=$TMPD/q.json
printf '%s\n' '{"pairs":[{"verdict":"regression","change_pct":10.000000000000002,"same":false,"n":null,"p":2.5e-08}],' \
    '"list":["x","y z"],"nums":[200,-3,0.1,1e300],"obj":{"k":[1,2]},"empty":[],"rows":[{"op":"a","s":"pass"},{"op":"b","s":"fail"}]}' >"$J"

expect_exit 0 "json: scalars, arrays, lengths" "$TESTDATA" json "$J" .pairs[0].verdict .pairs[0].change_pct \
    .pairs[0].same .pairs[0].n .pairs[0].p .list '.list[]' '.list#' .obj '.obj#' '.pairs[0].verdict#' '.empty[]'
want='regression
10.000000000000002
false
null
2.5e-08
["x","y z"]
x
y z
2
{"k":[1,2]}
1
10'
[ "$OUT" = "$want" ] && pass "json: values one per line, numbers exact, strings raw" \
    || fail "json: values: got $(printf '%s' "$OUT" | tr '\n' '|')"
expect_exit 0 "json: numbers" "$TESTDATA" json "$J" '.nums[]'
expect_match "json: ... integers as integers, others in the fewest exact digits" "$(printf '%s' "$OUT" | paste -sd ' ' -)" \
    '^200 -3 0\.1 1e\+300$'
expect_exit 0 "json: [] then a key, and the root" "$TESTDATA" json "$J" '.rows[].op' '.'
expect_match "json: ... every element's key in order" "$(printf '%s' "$OUT" | paste -sd ' ' -)" '^a b \{"pairs":.*"s":"fail"\}\]\}$'

bad_path() { # bad_path "description" regex EXPR
    expect_exit 2 "json: $1 exits 2" "$TESTDATA" json "$J" .list "$3"
    expect_match "json: $1 is one line naming it" "$ERR" "$2"
    if [ -z "$OUT" ] && [ "$(printf '%s\n' "$ERR" | grep -c .)" -eq 1 ]; then pass "json: $1 prints nothing else"
    else fail "json: $1 printed stdout '$OUT' / stderr '$ERR'"; fi
}
bad_path "a missing key" "no key 'nope'" .pairs[0].nope
bad_path "an index past the end" "index 2 .*has 2 elements" .list[2]
bad_path "a key on an array" "\\.x at column 6: not an object" .list.x
bad_path "[] on an object" "not an array" '.obj[]'
bad_path "a non-numeric index" "an index is digits" '.list[a]'
bad_path "# not last" "must be the last step" '.list#.a'
bad_path "# of a number" "applies to an array, object or string" '.pairs[0].p#'
bad_path "a path without a leading step" "a step starts with" 'list'
printf '{"a":1} trailing' >"$TMPD/bad.json"
expect_exit 2 "json: trailing garbage is not JSON" "$TESTDATA" json "$TMPD/bad.json" .a
expect_match "json: ... named with its offset" "$ERR" "bad.json: not valid JSON \(at byte 8\)"
expect_exit 2 "json: a missing file exits 2" "$TESTDATA" json "$TMPD/none.json" .a
expect_exit 2 "json: no EXPR exits 2" "$TESTDATA" json "$J"

X=$TMPD/c.svg
printf '%s\n' '<?xml version="1.0"?>' '<!-- chart -->' '<svg xmlns="http://www.w3.org/2000/svg" w="1">' \
    '<g><title>Odd &lt;GPU&gt; &amp; &quot;co&quot; &#65;&#x42;</title><rect/></g>' \
    '<title><![CDATA[a<b]]></title><title>two' 'lines</title></svg>' >"$X"
expect_exit 0 "xml: a well-formed file" "$TESTDATA" xml "$X" title
want='svg http://www.w3.org/2000/svg
Odd <GPU> & "co" AB
a<b
two lines'
[ "$OUT" = "$want" ] && pass "xml: root, namespace and decoded titles" \
    || fail "xml: got $(printf '%s' "$OUT" | tr '\n' '|')"
bad_xml() { # bad_xml "description" regex text
    printf '%s' "$3" >"$TMPD/b.xml"
    expect_exit 2 "xml: $1 exits 2" "$TESTDATA" xml "$TMPD/b.xml" title
    expect_match "xml: $1 named" "$ERR" "not well-formed: line [0-9]+: $2"
    [ -z "$OUT" ] && pass "xml: $1 prints nothing on stdout" || fail "xml: $1 printed '$OUT'"
}
bad_xml "a mismatched end tag" "</svg> closes <title>" '<svg><title>x</svg>'
bad_xml "an unclosed element" "element not closed" '<svg><title>x</title>'
bad_xml "a bare &" "'&' that starts no known entity" '<svg><title>a & b</title></svg>'
bad_xml "a bare <" "expected a name" '<svg><title>a < b</title></svg>'
bad_xml "a repeated attribute" "attribute repeated" '<svg a="1" a="2"/>'
bad_xml "an unquoted attribute" "attribute value not quoted" '<svg a=1/>'
bad_xml "two roots" "content after the root" '<svg/><svg/>'
bad_xml "an empty file" "no root element" ''
bad_xml "an unclosed comment" "comment not closed" '<svg><!-- x </svg>'

finish
