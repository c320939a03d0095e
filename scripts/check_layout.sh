#!/usr/bin/env bash
# check_layout.sh [ROOT] — holds src/ to the house plan written in README.md.
#
# The rules are read from the README's Architecture section (the table between the
# `layers:begin` and `layers:end` markers), so they are written once:
#   - a file under src/DIR/ may include headers of DIR and of the layers DIR's row
#     lists, nothing else (src/main.c is the layer `main`);
#   - where a row names public headers, other layers may include only those;
#   - no .c file under src/ over MAX_C_LINES lines (the software device's prelude is
#     MSL-side C++, not checked);
#   - no function in the layers named by `long functions checked in:` over
#     MAX_FN_LINES lines, counted from its first signature line to its closing brace.
# Every breach is one line "FILE:LINE: why"; the last line counts them.  Exit 0 when
# there is none, 1 when there are, 2 when the README's rules cannot be read.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
readme=$root/README.md
src=$root/src
[ -r "$readme" ] && [ -d "$src" ] || { echo "check_layout.sh: no README.md or src/ under $root" >&2; exit 2; }

# rules: "layer<TAB>allowed layers (space separated)<TAB>public headers (space separated)"
rules=$(awk '
    /<!-- layers:begin -->/ { on = 1; next }
    /<!-- layers:end -->/ { on = 0 }
    on && /^\| *`/ {
        n = split($0, col, "|")
        if (n < 5) next
        layer = col[2]; inc = col[3]; pub = col[4]
        gsub(/[` ]/, "", layer); sub(/\(.*/, "", layer)
        gsub(/`/, "", inc); gsub(/,/, " ", inc); gsub(/—|-/, "", inc)
        gsub(/`/, "", pub); gsub(/,/, " ", pub); gsub(/—|all/, "", pub)
        gsub(/^ +| +$/, "", inc); gsub(/  +/, " ", inc)
        gsub(/^ +| +$/, "", pub); gsub(/  +/, " ", pub)
        printf "%s\t%s\t%s\n", layer, inc, pub
    }' "$readme")
limits=$(sed -n 's/^<!-- layers:limits \(.*\) -->$/\1/p' "$readme")
max_c=$(printf '%s\n' "$limits" | sed -n 's/.*max_c_lines=\([0-9]*\).*/\1/p')
max_fn=$(printf '%s\n' "$limits" | sed -n 's/.*max_fn_lines=\([0-9]*\).*/\1/p')
fn_layers=$(printf '%s\n' "$limits" | sed -n 's/.*fn_layers=\([a-z_,]*\).*/\1/p' | tr ',' ' ')
if [ -z "$rules" ] || [ -z "$max_c" ] || [ -z "$max_fn" ]; then
    echo "check_layout.sh: README.md has no readable layer table or limits (markers layers:begin/end, layers:limits)" >&2
    exit 2
fi

breaches=$(mktemp)
trap 'rm -f "$breaches"' EXIT

# layer_of PATH_UNDER_SRC: the layer a file belongs to
layer_of() {
    case $1 in
    */*) printf '%s\n' "${1%%/*}" ;;
    main.c) printf 'main\n' ;;
    *) printf '.\n' ;;
    esac
}
rule_field() { printf '%s\n' "$rules" | awk -F'\t' -v l="$1" -v f="$2" '$1 == l { print $f; found = 1 } END { exit !found }'; }

check_includes() {
    local f rel from allowed line inc target tl pub
    while IFS= read -r f; do
        rel=${f#"$src"/}
        from=$(layer_of "$rel")
        if ! allowed=$(rule_field "$from" 2); then
            echo "src/$rel:1: directory '$from' is not a layer of README.md's Architecture table" >>"$breaches"
            continue
        fi
        grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
            inc=$(printf '%s\n' "$line" | sed 's/^[0-9]*:[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/')
            # Resolved as the compiler does: beside the includer first, then from src/.
            if [ -e "$(dirname "$f")/$inc" ]; then
                target=$(cd "$(dirname "$f")" && realpath -m "$inc")
            elif [ -e "$src/$inc" ]; then
                target=$(realpath -m "$src/$inc")
            else
                continue # generated (build/gen) or absent: the compiler reports that
            fi
            case $target in "$(realpath "$src")"/*) ;; *) continue ;; esac
            target=${target#"$(realpath "$src")"/}
            tl=$(layer_of "$target")
            [ "$tl" = "$from" ] && continue
            if ! printf ' %s ' "$allowed" | grep -q " $tl "; then
                echo "src/$rel:${line%%:*}: includes $target: layer '$from' may include only: ${allowed:-nothing} (README.md, Architecture)" >>"$breaches"
                continue
            fi
            pub=$(rule_field "$tl" 3)
            if [ -n "$pub" ] && ! printf ' %s ' "$pub" | grep -q " $target "; then
                echo "src/$rel:${line%%:*}: includes $target: outside src/$tl only $pub may be included" >>"$breaches"
            fi
        done
    done < <(find "$src" -name '*.[ch]' -not -path '*/prelude/*' | sort)
}

check_file_sizes() {
    local f n
    while IFS= read -r f; do
        n=$(wc -l <"$f")
        [ "$n" -le "$max_c" ] || echo "${f#"$root"/}:1: $n lines, over $max_c: it holds more than one concern; split it" >>"$breaches"
    done < <(find "$src" -name '*.c' -not -path '*/prelude/*' | sort)
}

# A function starts at a column-0 line with a '(' that is not a declaration or an
# initialiser, and ends at the next column-0 '}'.
check_function_sizes() {
    local layer
    for layer in $fn_layers; do
        [ -d "$src/$layer" ] || continue
        find "$src/$layer" -name '*.c' | sort | while IFS= read -r f; do
            awk -v max="$max_fn" -v file="${f#"$root"/}" '
                start == 0 && /^[A-Za-z_][^;=]*\(/ && !/^(typedef|extern) / {
                    start = NR; name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
                }
                start && !body && /;[[:space:]]*$/ && !/\{/ { start = 0; next }
                start && !body && /\{/ { body = 1 }
                start && body && /^\}/ {
                    n = NR - start + 1
                    if (n > max) printf "%s:%d: function %s is %d lines, over %d\n", file, start, name, n, max
                    start = 0; body = 0
                }' "$f" >>"$breaches"
        done
    done
}

check_includes
check_file_sizes
check_function_sizes
cat "$breaches"
n=$(grep -c . "$breaches")
echo "check_layout.sh: $n breach(es) of README.md's Architecture rules"
[ "$n" -eq 0 ]
