#!/usr/bin/env bash
# Instructions per call on the success path, counted by callgrind: the plain function and the
# same function under #[retry], sync and async. The difference is the retry machinery's true
# cost, the same on every run and every machine of the same architecture.
#
#   bash scripts/instructions.sh [CALLS]        (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000000}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is missing: installing it with apt" >&2
    if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq valgrind >/dev/null
fi

cargo build --quiet --release --example instructions
bin=target/release/examples/instructions
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Total instructions of one run: callgrind's "summary:" line.
total() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" "$1" "$2" >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$out/cg"
}

# Per call: the difference between N calls and none, over N (start-up cancels out).
per_call() {
    local base with
    base=$(total "$1" 0)
    with=$(total "$1" "$calls")
    awk -v w="$with" -v b="$base" -v n="$calls" 'BEGIN { printf "%.2f", (w - b) / n }'
}

printf '%-18s %14s\n' "function" "instr/call"
for pair in "plain annotated" "plain_async annotated_async"; do
    set -- $pair
    p=$(per_call "$1")
    a=$(per_call "$2")
    printf '%-18s %14s\n' "$1" "$p" "$2" "$a"
    printf '%-18s %14s\n' "  overhead" "$(awk -v a="$a" -v p="$p" 'BEGIN { printf "%.2f", a - p }')"
done
