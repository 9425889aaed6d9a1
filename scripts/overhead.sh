#!/usr/bin/env bash
# The success-path bench (benches/overhead.rs) as a table of ratios: each `#[retry]` row over
# its plain twin, from criterion's medians. Target: every ratio ≤ 1.05.
#
#   bash scripts/overhead.sh [RUNS]     run the bench RUNS times (default 1); with several,
#                                       print each row's median ratio and its range
#   bash scripts/overhead.sh --report   the table of the last run, without running
#
# Rows of under a nanosecond move by several percent from one process to the next on a shared
# machine. The last line is a control: one hand-written function measured twice (under two
# names that the linker folds into one), whose ratio is that noise with no code of ours in it.
# Code placement moves a row too (where a loop falls against 64-byte lines); to take it out,
# build with loops aligned:
#   RUSTFLAGS="-C llvm-args=-align-loops=64" CARGO_TARGET_DIR=target/align64 bash scripts/overhead.sh 3
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${CARGO_TARGET_DIR:-target}/criterion/success_path

# The median of one row, in ns.
median() {
    grep -o '"median":{[^}]*}[^}]*}' "$dir/$1/new/estimates.json" |
        grep -o '"point_estimate":[0-9.e+-]*' | cut -d: -f2
}

# One line per pair of the last run: body, plain ns, retried ns.
pairs() {
    for row in "sync_" "sync_ by value" "sync_ parse" "sync_ stack slot" \
        "async_" "async_ await" "async_ parse"; do
        local kind=${row%%_*} rest=${row#*_}
        local name="$kind${rest:- one multiply}"
        printf '%s\t%s\t%s\n' "${name// /_}" "$(median "${kind}_plain${rest}")" \
            "$(median "${kind}_#[retry]${rest}")"
    done
    # An attempt the macro cannot write inline (the body calls a macro of the user's).
    printf '%s\t%s\t%s\n' "async_parse,_nested" "$(median "async_plain parse")" \
        "$(median "async_#[retry] parse, nested attempt")"
    printf '%s\t%s\t%s\n' "control:_plain_parse_again" "$(median "sync_plain parse")" \
        "$(median "sync_plain parse (twin)")"
}

runs=1
log=$(mktemp)
rows=$(mktemp)
trap 'rm -f "$log" "$rows"' EXIT
if [ "${1:-}" != "--report" ]; then
    runs=${1:-1}
    for _ in $(seq "$runs"); do
        cargo bench --quiet --bench overhead -- --noplot >"$log" 2>&1 || { cat "$log"; exit 1; }
        pairs >>"$rows"
    done
else
    pairs >"$rows"
fi

# Per body: the ratio of the median run (by ratio), its times, and the range over runs.
awk -F'\t' -v runs="$runs" '
    { r = $3 / $2; key = $1; n[key]++; ratio[key, n[key]] = r; p[key, n[key]] = $2; a[key, n[key]] = $3
      if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    END {
        printf "%-27s %9s %9s %7s %s\n", "body", "plain ns", "retry ns", "ratio", (runs > 1 ? "  range over " runs " runs" : "")
        for (i = 1; i <= k; i++) {
            key = order[i]; m = n[key]
            # insertion sort of this key'"'"'s runs by ratio
            for (x = 1; x <= m; x++) idx[x] = x
            for (x = 2; x <= m; x++) for (y = x; y > 1 && ratio[key, idx[y]] < ratio[key, idx[y-1]]; y--) { t = idx[y]; idx[y] = idx[y-1]; idx[y-1] = t }
            mid = idx[int((m + 1) / 2)]
            name = key; gsub("_", " ", name)
            printf "%-27s %9.2f %9.2f %7.3f", name, p[key, mid], a[key, mid], ratio[key, mid]
            if (m > 1) printf "  %.3f-%.3f", ratio[key, idx[1]], ratio[key, idx[m]]
            printf "\n"
        }
    }' "$rows"
