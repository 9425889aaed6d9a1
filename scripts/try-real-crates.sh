#!/usr/bin/env bash
# Puts #[::retry_jitter::retry(attempts = 2)] on every Result-returning fn of real crates and
# `cargo check`s them, to find expansions that fail on code the attribute was not written for.
#
#   scripts/try-real-crates.sh NAME-VERSION[:FEATURES]...
#   e.g. scripts/try-real-crates.sh toml-1.2.2+spec-1.1.0 hyper-util-0.1.21:client-legacy,http1,tokio
#
# RETRY_KEYS replaces the keys (default `attempts = 2`); with a cancel token beside every argument:
#   RETRY_KEYS='attempts = 2, cancel = { static T: ::retry_jitter::CancelToken = ::retry_jitter::CancelToken::new(); &T }'
#
# Each crate is copied from cargo's registry sources (~/.cargo/registry/src/*/NAME-VERSION) to
# $OUT/NAME-VERSION (default OUT=/tmp/try-real-crates): base/ is the crate reformatted by
# prettyplease only (the baseline: its errors and warnings are the crate's own), annot/ the
# annotated copy. Its [dev-dependencies] are dropped (only the library is checked) and
# retry-jitter is added to [dependencies]. The annotated copy is checked in rounds: the fns
# that got an error are left unannotated in the next round, until a round has none, so an
# error cannot hide another. A probe build finds which candidates are compiled at all (not
# cfg'd out): $OUT/NAME/compiled-candidates. Logs: $OUT/NAME/round-N.{errors,warnings,failed}, base.*.
# CARGO_TARGET_DIR is shared by all crates: target/real-crates under the repository.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/scripts/try-real-crates
OUT=${OUT:-/tmp/try-real-crates}
ROUNDS=${ROUNDS:-8}
export CARGO_TARGET_DIR=$repo/target/real-crates
tool=$CARGO_TARGET_DIR/tool/release/annotate-retry
CARGO_TARGET_DIR=$CARGO_TARGET_DIR/tool nice -n 15 cargo build --release --quiet --manifest-path "$here/Cargo.toml"

patch_manifest() { # Cargo.toml: drop dev-dependencies tables, add retry-jitter.
  python3 - "$1" "$repo" <<'PY'
import re, sys
path, repo = sys.argv[1:]
out, skipping, added = [], False, False
dep = f'retry-jitter = {{ path = "{repo}", features = ["tokio"] }}\n'
for line in open(path):
    m = re.match(r'\s*\[\[?([^\]]+)\]\]?\s*(#.*)?$', line)
    if m:
        name = m.group(1).strip()
        skipping = bool(re.search(r'(^|\.)dev-dependencies(\.|$)', name))
        if not skipping:
            out.append(line)
            if name == "dependencies":
                out.append(dep); added = True
        continue
    if not skipping:
        out.append(line)
if not added:
    out.append("\n[dependencies]\n" + dep)
open(path, "w").write("".join(out))
PY
}

check() { # dir features json-out
  local feat=()
  [ -n "$2" ] && feat=(--features "$2")
  (cd "$1" && nice -n 15 cargo check --lib -j2 "${feat[@]}" --message-format=json >"$3" 2>"$3.stderr") || true
}

for arg in "$@"; do
  name=${arg%%:*}; features=; [ "$arg" != "$name" ] && features=${arg#*:}
  src=$(ls -d "$HOME"/.cargo/registry/src/*/"$name" | head -1)
  w=$OUT/$name; rm -rf "$w"; mkdir -p "$w"
  echo "### $name ${features:+(features $features)}"
  for d in base annot; do
    cp -r "$src" "$w/$d"; chmod -R u+w "$w/$d"; rm -f "$w/$d/Cargo.lock"
    patch_manifest "$w/$d/Cargo.toml"
  done
  "$tool" --format-only --manifest "$w/base.manifest" "$w/base/src"
  start=$SECONDS
  check "$w/base" "$features" "$w/base.json"
  echo "base ($((SECONDS-start))s): $(python3 "$here/analyze.py" "$w/base.manifest" "$w/base.json" "$w/base" "$w/base")"
  # Which candidates rustc compiles at all (not cfg'd out): a probe variable in each, unused.
  cp -r "$w/base" "$w/probe"; rm -rf "$w/probe/src"; cp -r "$src/src" "$w/probe/src"; chmod -R u+w "$w/probe/src"
  "$tool" --format-only --probe "$w/probe/src" 2>/dev/null
  check "$w/probe" "$features" "$w/probe.json"
  jq -r 'select(.reason=="compiler-message") | .message | select(.message|test("unused variable: `retry_probe_")) | (.spans[0].file_name|sub("^src/";"")) + "#" + (.message|capture("retry_probe_(?<n>[0-9]+)").n)' "$w/probe.json" | sort -u >"$w/compiled-candidates"
  echo "candidates compiled with these features: $(wc -l <"$w/compiled-candidates")"
  rm -rf "$w/probe"
  : >"$w/skip"
  pristine=$(mktemp -d); cp -r "$src/src" "$pristine/src"
  for round in $(seq 1 "$ROUNDS"); do
    rm -rf "$w/annot/src"; cp -r "$pristine/src" "$w/annot/src"; chmod -R u+w "$w/annot/src"
    "$tool" --skip "$w/skip" --manifest "$w/round-$round.manifest" "$w/annot/src"
    start=$SECONDS
    check "$w/annot" "$features" "$w/round-$round.json"
    echo "round $round ($((SECONDS-start))s): $(python3 "$here/analyze.py" "$w/round-$round.manifest" "$w/round-$round.json" "$w/annot" "$w/round-$round")"
    [ -s "$w/round-$round.failed" ] || break
    cat "$w/round-$round.failed" >>"$w/skip"
  done
  rm -rf "$pristine"
done
