#!/usr/bin/env bash
# Runs loupe's benchmarks and records their tables under bench/results/.
#
#   bash bench/run.sh                     # the full run; writes bench/results/read_latency.md
#   bash bench/run.sh --iterations 20 --cold-starts 5
#                                         # a smoke run; extra arguments go to read_latency and
#                                         # the table goes to bench/results/read_latency.tmp
#
# Steps: fetch the corpus (bench/fetch-corpus.sh), build loupe and the benchmark in release,
# run read_latency, and write its table under a header that says where and how it was measured.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"

bash "$here/fetch-corpus.sh"
cargo build --release --quiet -p loupe -p loupe-bench

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/read_latency"
loupe="$target_dir/release/loupe"
corpus="$here/corpora/read/big.c"

mkdir -p "$here/results"
if [[ $# -eq 0 ]]; then
    out="$here/results/read_latency.md"
else
    out="$here/results/read_latency.tmp"
fi

cmd=(bench/run.sh "$@")
run=("${bin#"$repo"/}" --corpus "${corpus#"$repo"/}" --loupe "${loupe#"$repo"/}" "$@")
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain --untracked-files=no -- . ':!bench' 2>/dev/null)" ]]; then
    commit="$commit (with uncommitted changes outside bench/)"
elif [[ -n "$(git status --porcelain -- bench 2>/dev/null)" ]]; then
    commit="$commit (with uncommitted changes in bench/ only)"
fi
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"

tmp="$out.tmp"
{
    echo "# read latency"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(nproc) cores${cpu:+ ($cpu)}, $(uname -sr), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- toolchain: $(rustc --version); release profile"
    echo "- commit: $commit"
    echo "- command: \`bash ${cmd[*]}\`, which runs \`${run[*]}\`"
    echo
} > "$tmp"
"${run[@]}" | tee -a "$tmp"
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp"
mv "$tmp" "$out"
echo "written: ${out#"$repo"/}" >&2
