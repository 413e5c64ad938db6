#!/usr/bin/env bash
# Runs the edit benchmark and records its table.
#
#   bash bench/edit/run.sh                   # writes bench/results/edit.md
#   bash bench/edit/run.sh --iterations 10   # a smoke run; writes bench/results/edit.tmp
#
# Steps: fetch the corpus (bench/fetch-corpus.sh: sqlite3.c's first 10,000 lines), build the
# benchmark in release, run edit_bench (3-file edit and undo on 1k- and 20k-line files, against a
# bare atomic write of the same files), and write its table under a header saying how it ran.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

bash bench/fetch-corpus.sh
cargo build --release --quiet -p loupe-bench --bin edit_bench

target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/edit_bench"

if [[ $# -eq 0 ]]; then out="bench/results/edit.md"; else out="bench/results/edit.tmp"; fi
table="$("$bin" "$@")"
echo "$table"
{
    echo "# edit and undo latency"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -sr)), load average $(cut -d' ' -f1-3 /proc/loadavg), $(rustc --version | cut -d' ' -f1-2),"
    echo "with \`bash bench/edit/run.sh $*\`. Each row: one engine on a temporary root with three C"
    echo "files of the given size (cut from bench/corpora/read/big.c); an edit call replaces one marker"
    echo "line in each file (validation, tree-sitter syntax check, journal with fsync, three atomic"
    echo "renames, index update), then \`manage undo\` restores them. The last column compares the edit"
    echo "with the floor of any durable write: the same three files written with temp file, fsync and"
    echo "rename each, measured in the same run."
    echo
    echo "$table"
} > "$out"
echo "wrote $out"
