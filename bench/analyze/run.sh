#!/usr/bin/env bash
# Runs the analyze benchmark and records its table.
#
#   bash bench/analyze/run.sh                  # django, rxjs and linux; writes bench/results/analyze.md
#   bash bench/analyze/run.sh django --runs 5  # a subset or a smoke run; writes bench/results/analyze.tmp
#
# Steps: fetch the corpora (bench/index/fetch-corpora.sh, which also installs ripgrep), build
# the benchmark in release, run analyze_bench (index build, then `impact` of a central file and
# `calls` depth 3 of a central function, each first and then repeated, next to rg), and write
# its table under a header saying how it ran.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

corpora=()
for arg in "$@"; do
    case "$arg" in
        -*) break ;;
        *) corpora+=("$arg") ;;
    esac
done
[[ ${#corpora[@]} -gt 0 ]] || corpora=(django rxjs linux)
bash bench/index/fetch-corpora.sh "${corpora[@]}"
cargo build --release --quiet -p loupe-bench --bin analyze_bench

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/analyze_bench"

if [[ $# -eq 0 ]]; then out="bench/results/analyze.md"; else out="bench/results/analyze.tmp"; fi
table="$("$bin" "$@")"
echo "$table"
{
    echo "# analyze latency"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -sr)), load average $(cut -d' ' -f1-3 /proc/loadavg), $(rustc --version | cut -d' ' -f1-2),"
    echo "commit $(git rev-parse --short HEAD), with \`bash bench/analyze/run.sh $*\`. Per corpus: one engine on"
    echo "the corpus (index built first); \`first analyze\` is the first call, which builds the import"
    echo "graph; each query's \`first\` parses the files it touches; p50/p95 over the repetitions that"
    echo "follow. The peer is rg run in the same process on the same tree: \`rg -l -w <module>\` for"
    echo "impact, \`rg -n -w <function>\` for calls (what an agent without loupe would start from)."
    echo
    echo "$table"
} > "$out"
echo "wrote $out"
