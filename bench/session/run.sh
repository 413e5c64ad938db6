#!/usr/bin/env bash
# The session layer's benchmark: its overhead per call and the tokens aggregation saves.
#
#   bash bench/session/run.sh                    # full run; writes bench/results/session.md
#   bash bench/session/run.sh --iterations 300   # a smoke run; writes bench/results/session.tmp
#
# Builds session_bench in release and runs it on a generated workspace (no download).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

cargo build --release --quiet -p loupe-bench --bin session_bench
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/session_bench"

mkdir -p "$repo/bench/results"
if [[ $# -eq 0 ]]; then out="$repo/bench/results/session.md"; else out="$repo/bench/results/session.tmp"; fi
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then commit="$commit (with uncommitted changes)"; fi
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"

tmp="$out.partial"
{
    echo "# session layer"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(nproc) cores${cpu:+ ($cpu)}, $(uname -sr), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- toolchain: $(rustc --version); release profile"
    echo "- commit: $commit"
    echo "- command: \`bash bench/session/run.sh $*\`, which runs \`${bin#"$repo"/} $*\`"
    echo
} > "$tmp"
"$bin" "$@" | tee -a "$tmp"
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp"
mv "$tmp" "$out"
echo "written: ${out#"$repo"/}" >&2
