#!/usr/bin/env bash
# What `#[retry]` adds to a user's cold build (issue 31): three small tokio apps, each built
# from nothing in debug, side by side in one run, and the CPU seconds (user + sys) each takes.
#
#   bash scripts/cold-build.sh [RUNS]        (default 1 run; RUNS=3 prints each run and the median)
#
#   plain   tokio with `macros`, `rt-multi-thread`, `time`, and an `async fn` that can fail
#   retry   the same, the fn under #[retry(base = "10ms", cap = "100ms", attempts = 3)],
#           depending on this repository by path (default features, as a user gets them)
#   backon  the same, the fn retried with backon's `.retry(ExponentialBuilder)` instead
#
# Incremental compilation is off (CARGO_INCREMENTAL=0, for all three): cargo builds a path
# dependency incrementally, as the user's own code, and a crates.io one not, and writing the
# incremental caches of our three crates was a quarter of their build here. Off, ours are built
# as a user who gets them from crates.io builds them. INCREMENTAL=1 keeps cargo's default.
#
# Each app has its own target directory under $OUT (default /tmp/cold-build), emptied before
# each build; the lock files are made once, before any timing. The apps are built in turn, so
# the three figures of one run saw the same load. Also printed: how many copies of syn each
# build compiled (libsyn-*.rlib in its target directory). TIMINGS=1 adds `--timings` (the HTML
# report lands in $OUT/<app>/target/cargo-timings/). REPO=<another checkout> measures that one
# (a commit before a change, from `git worktree add`).
set -euo pipefail
repo=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
RUNS=${1:-1}
OUT=${OUT:-/tmp/cold-build}
JOBS=${JOBS:-$(nproc)}
[ "${INCREMENTAL:-0}" = 1 ] || export CARGO_INCREMENTAL=0
mkdir -p "$OUT"

app() { # name extra-dependency main.rs
  local d=$OUT/$1
  rm -rf "$d"; mkdir -p "$d/src"
  cat >"$d/Cargo.toml" <<EOF
[package]
name = "cold-$1"
version = "0.1.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
tokio = { version = "1", features = ["macros", "rt-multi-thread", "time"] }
$2
EOF
  printf '%s\n' "$3" >"$d/src/main.rs"
  (cd "$d" && cargo generate-lockfile --quiet)
}

common='use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static CALLS: AtomicU32 = AtomicU32::new(0);

#[derive(Debug)]
struct Flaky;

async fn once() -> Result<u32, Flaky> {
    tokio::time::sleep(Duration::from_millis(1)).await;
    match CALLS.fetch_add(1, Ordering::Relaxed) {
        0 => Err(Flaky),
        n => Ok(n),
    }
}'

app plain '' "$common

async fn fetch() -> Result<u32, Flaky> {
    once().await
}

#[tokio::main]
async fn main() {
    println!(\"{:?}\", fetch().await);
}"

app retry "retry-jitter = { path = \"$repo\" }" "$common

#[retry_jitter::retry(base = \"10ms\", cap = \"100ms\", attempts = 3)]
async fn fetch() -> Result<u32, Flaky> {
    once().await
}

#[tokio::main]
async fn main() {
    println!(\"{:?}\", fetch().await);
}"

app backon 'backon = "1"' "$common

use backon::{ExponentialBuilder, Retryable};

async fn fetch() -> Result<u32, Flaky> {
    once.retry(
        ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(10))
            .with_max_delay(Duration::from_millis(100))
            .with_max_times(2)
            .with_jitter(),
    )
    .await
}

#[tokio::main]
async fn main() {
    println!(\"{:?}\", fetch().await);
}"

# One cold build: prints "CPU-SECONDS SYN-COPIES".
build() {
  local d=$OUT/$1 flags=(--quiet -j "$JOBS")
  [ "${TIMINGS:-0}" = 1 ] && flags+=(--timings)
  rm -rf "$d/target"
  CARGO_TARGET_DIR="$d/target" /usr/bin/time -f '%U %S' -o "$d/time" \
    cargo build --manifest-path "$d/Cargo.toml" "${flags[@]}" >"$d/build.log" 2>&1 ||
    { cat "$d/build.log" >&2; exit 1; }
  local t syns
  t=$(tail -1 "$d/time")
  syns=$(find "$d/target/debug/deps" -name 'libsyn-*.rlib' | wc -l)
  awk -v t="$t" -v s="$syns" 'BEGIN { split(t, a, " "); printf "%.1f %d\n", a[1] + a[2], s }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A cpu syn
for run in $(seq 1 "$RUNS"); do
  line="run $run:"
  for a in plain retry backon; do
    read -r c s < <(build "$a")
    cpu[$a]+="$c "; syn[$a]=$s
    line+=" $a ${c}s"
  done
  echo "$line"
done

m_plain=$(tr ' ' '\n' <<<"${cpu[plain]}" | grep . | median)
printf '\n%-8s %8s %8s %6s\n' app "CPU s" added syns
for a in plain retry backon; do
  m=$(tr ' ' '\n' <<<"${cpu[$a]}" | grep . | median)
  printf '%-8s %8.1f %+8.1f %6d\n' "$a" "$m" "$(awk -v m="$m" -v p="$m_plain" 'BEGIN { print m - p }')" "${syn[$a]}"
done
