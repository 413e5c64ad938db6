#!/usr/bin/env bash
# Runs the index benchmark and records its tables.
#
#   bash bench/index/run.sh                  # every corpus; writes bench/results/index.md
#   bash bench/index/run.sh django zod       # a subset; writes bench/results/index.tmp
#   INDEX_BENCH_ARGS="--search-runs 3 --warm-starts 2" bash bench/index/run.sh zod
#                                            # extra arguments for index_bench (see --help)
#
# Steps: fetch the corpora and the peers (bench/index/fetch-corpora.sh: Debian linux-source-6.12
# and rust-src, the Django sdist, the zod and rxjs npm tarballs, ripgrep, universal-ctags), build
# loupe and the benchmark in release, run index_bench on each corpus (one child process per
# corpus), print the tables and write them under a header saying where and how they were measured.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

all=(zod rxjs django rust-src linux)
if [[ $# -gt 0 ]]; then
    corpora=("$@")
    out="bench/results/index.tmp"
else
    corpora=("${all[@]}")
    out="bench/results/index.md"
fi

bash "$here/fetch-corpora.sh" "${corpora[@]}"
cargo build --release --quiet -p loupe -p loupe-bench

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/index_bench"
loupe="$target_dir/release/loupe"

specs=()
for name in "${corpora[@]}"; do
    specs+=("$name=bench/corpora/index/$name")
done
# shellcheck disable=SC2206 # INDEX_BENCH_ARGS is split on purpose
extra=(${INDEX_BENCH_ARGS:-})
run=("${bin#"$repo"/}" --loupe "${loupe#"$repo"/}" --out "$out" "${extra[@]}" "${specs[@]}")
command="bash bench/index/run.sh${*:+ $*}${INDEX_BENCH_ARGS:+ (INDEX_BENCH_ARGS=\"$INDEX_BENCH_ARGS\")}, which runs ${run[*]}"
"${run[@]}" --command "$command"
