#!/bin/sh
# Usage: check_exports.sh NM LIBRARY [HEADER]   (NM empty: skipped)
# The library's dynamic symbol table must define nothing but the gpk_* API: any
# other export (a static CUDA runtime, an instantiated std:: template) becomes part
# of the ABI by accident and can clash with the application's own copy.
nm_tool=$1
lib=$2
if [ -z "$nm_tool" ]; then
    echo "nm not found: cannot list the exported symbols"
    exit 77
fi
if [ ! -f "$lib" ]; then
    echo "no such library: $lib"
    exit 1
fi
# Version nodes of a version script show up as absolute symbols; they are not code.
symbols=$("$nm_tool" -D --defined-only "$lib" | awk 'NF >= 3 && !($2 == "A" && $3 ~ /^[A-Z0-9_.]+$/) { print $3 }') || exit 1
if [ -z "$symbols" ]; then
    echo "$lib defines no dynamic symbols"
    exit 1
fi
# Symbols the linker itself defines in every shared object.
stray=$(printf '%s\n' "$symbols" | grep -v -E '^gpk_[A-Za-z0-9_]+(@.*)?$' |
        grep -v -x -E '_init|_fini|_edata|_end|__bss_start|_DYNAMIC|_GLOBAL_OFFSET_TABLE_')
api=$(printf '%s\n' "$symbols" | grep -c -E '^gpk_')
if [ -n "$stray" ]; then
    count=$(printf '%s\n' "$stray" | wc -l)
    echo "$lib exports $count symbols outside the gpk_ API:"
    printf '%s\n' "$stray" | head -n 40
    [ "$count" -gt 40 ] && echo "..."
    exit 1
fi
# Every function the header declares must be exported (one missing from the build,
# or hidden, would fail only in the caller's link).
header=$3
if [ -n "$header" ]; then
    declared=$(grep -E '^GPK_API ' "$header" | grep -o -E 'gpk_[A-Za-z0-9_]+\(' | tr -d '(' | sort -u)
    missing=""
    for fn in $declared; do
        printf '%s\n' "$symbols" | grep -q -x -E "$fn(@.*)?" || missing="$missing $fn"
    done
    if [ -n "$missing" ]; then
        echo "$lib does not export functions the header declares:$missing"
        exit 1
    fi
    echo "$lib exports all $(printf '%s\n' "$declared" | wc -l) functions declared in $(basename "$header")"
fi
echo "$lib exports $api gpk_ symbols and nothing else"
