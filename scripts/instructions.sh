#!/usr/bin/env bash
# Instructions per call, counted by callgrind: the same on every run and every machine of the
# same architecture.
#
# - The success path: each pair of benches/support/pairs.rs, the plain function and the same
#   function under #[retry], sync and async. The difference is the retry machinery's true cost.
# - The failure path, side by side with backon (benches/support/failing.rs): a call that fails
#   4 times with zero waits and then succeeds, and a fresh schedule's delay draws (per draw), at
#   default features and again with feature `metrics` (no recorder installed: the facade's
#   no-op, so what is counted is our calls into the facade).
#
# - The tower layer's success path (benches/support/layers.rs, built with feature `tower`): one
#   request through a service answering `Ok` at once, plain, under tower's own `Retry` with a
#   policy that never retries, and under our `RetryLayer`: a `u64`, an
#   `http::Request<UnsyncBoxBody>`, an `http::Request<Full<Bytes>>`.
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

target=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release --example instructions
bin=$target/release/examples/instructions
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
# each attempt starts). The `floor_` rows are not `#[retry]`: hand-written loops with one
# `.await` of a timer and no retry state (`floor_await`) or a failure count (`floor_counter`),
# the least any retry loop inside an `async fn` costs over the plain one. The `backon_` rows are
# not ours: the same one-multiply body under backon's `#[backon]` (backon-macros), its defaults.
while read -r label plain retried; do
    p=$(per_call "$plain")
    a=$(per_call "$retried")
    awk -v b="$label" -v p="$p" -v a="$a" \
        'BEGIN { printf "%-22s %10.2f %10.2f %+9.2f\n", b, p, a, a - p }'
done <<'ROWS'
one_multiply plain annotated
no_budget plain annotated_no_budget
by_value plain_by_value annotated_by_value
on_stack plain_on_stack annotated_on_stack
parse plain_parse annotated_parse
async plain_async annotated_async
async_no_budget plain_async annotated_async_no_budget
await plain_await annotated_await
parse_async plain_parse_async annotated_parse_async
parse_async_nested plain_parse_async nested_parse_async
floor_await plain_async floor_await
floor_counter plain_async floor_counter
async_failed plain_async_failed annotated_async_failed
async_timeout plain_async_failed timeout_async
async_timeout_eager plain_async_failed timeout_async_eager
async_hedge plain_async_failed hedge_async
await_failed plain_await_failed annotated_await_failed
await_timeout plain_await_failed timeout_await
backon_one_multiply plain backon_annotated
backon_async plain_async backon_annotated_async
ROWS

# The failure path, ours against backon's. Each row: a label, our function, backon's, and how
# many units one call is (a fresh schedule's row draws 4 waits: printed per draw). The `_attr`
# rows are backon's under its attribute, `#[backon]` (backon-macros), against our `#[retry]`.
failure_table() {
    printf '\n%-22s %10s %10s %9s\n' "$1" "ours" "backon" "ours-backon"
    while read -r label ours theirs per; do
        o=$(per_call "$ours")
        t=$(per_call "$theirs")
        awk -v b="$label" -v o="$o" -v t="$t" -v n="$per" \
            'BEGIN { printf "%-22s %10.2f %10.2f %+9.2f\n", b, o / n, t / n, (o - t) / n }'
    done <<'ROWS'
fail4_sync fail4 fail4_backon 1
fail4_closure fail4_closure fail4_backon 1
fail4_async fail4_async fail4_backon_async 1
fail4_attr fail4 fail4_backon_attr 1
fail4_attr_async fail4_async fail4_backon_attr_async 1
draw_fresh_schedule draws draws_backon 4
ROWS
}

failure_table "failure path"

# Again with feature `metrics`, built apart so that neither build undoes the other.
CARGO_TARGET_DIR=$target/metrics cargo build --quiet --release --example instructions --features metrics
bin=$target/metrics/release/examples/instructions
failure_table "failure path, metrics"
# With a recorder installed (the facade's `NoopRecorder`, set as the global one: `_noop` rows),
# each event goes to it: what a retry costs once something listens.
printf '\n%-22s %10s\n' "metrics, NoopRecorder" "per call"
for f in fail4_noop fail4_closure_noop fail4_async_noop; do
    printf '%-22s %10.2f\n' "$f" "$(per_call "$f")"
done

# The tower layer's success path, built apart with feature `tower`.
CARGO_TARGET_DIR=$target/tower cargo build --quiet --release --example instructions --features tower
bin=$target/tower/release/examples/instructions
printf '\n%-22s %10s\n' "tower layer, success" "per call"
for f in layer_plain layer_tower_retry layer_ours layer_http_plain layer_http_ours \
    layer_full_plain layer_full_tower_retry layer_full_ours; do
    printf '%-22s %10.2f\n' "$f" "$(per_call "$f")"
done
