#!/usr/bin/env bash
# Instructions per call on the success path, counted by callgrind: each pair of
# benches/support/pairs.rs, the plain function and the same function under #[retry], sync and
# async. The difference is the retry machinery's true
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
bin=${CARGO_TARGET_DIR:-target}/release/examples/instructions
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Total instructions of one run: callgrind's "summary:" line.
total() {
    valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bin" "$1" "$2" </dev/null >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$out/cg"
}

# Per call: the difference between N calls and none, over N (start-up cancels out).
per_call() {
    local base with
    base=$(total "$1" 0)
    with=$(total "$1" "$calls")
    awk -v w="$with" -v b="$base" -v n="$calls" 'BEGIN { printf "%.2f", (w - b) / n }'
}

printf '%-22s %10s %10s %9s\n' "body" "plain" "#[retry]" "overhead"
# Each row: a label, the plain function, the retried one. `parse_async_nested` is an attempt the
# macro cannot write inline (the body calls a macro of the user's); the `_failed` rows are the
# same bodies with an error a timeout can make, under `#[retry]`, for the `_timeout` rows, under
# `#[retry(timeout = "1s")]` (`_eager`: with `sleep = tokio::time::sleep`, a timer made when
# each attempt starts).
while read -r label plain retried; do
    p=$(per_call "$plain")
    a=$(per_call "$retried")
    awk -v b="$label" -v p="$p" -v a="$a" \
        'BEGIN { printf "%-22s %10.2f %10.2f %+9.2f\n", b, p, a, a - p }'
done <<'ROWS'
one_multiply plain annotated
by_value plain_by_value annotated_by_value
on_stack plain_on_stack annotated_on_stack
parse plain_parse annotated_parse
async plain_async annotated_async
await plain_await annotated_await
parse_async plain_parse_async annotated_parse_async
parse_async_nested plain_parse_async nested_parse_async
async_failed plain_async_failed annotated_async_failed
async_timeout plain_async_failed timeout_async
async_timeout_eager plain_async_failed timeout_async_eager
async_hedge plain_async_failed hedge_async
await_failed plain_await_failed annotated_await_failed
await_timeout plain_await_failed timeout_await
ROWS
