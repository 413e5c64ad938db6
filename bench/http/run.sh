#!/usr/bin/env bash
# `loupe serve --http` under abuse (SECURITY.md, H5): a handshake flood, idle connections, and
# the stateless 2026-07-28 session of one clientInfo from two programs.
#
#   bash bench/http/run.sh                      # full run; writes bench/results/http_abuse.md
#   bash bench/http/run.sh --handshakes 500     # a smoke run; writes bench/results/http_abuse.tmp
#   bash bench/http/run.sh --loupe OTHER_BINARY # another build (the figures before a change)
#
# Builds loupe and http_abuse in release and runs them on a generated workspace (no download).
# The servers run with `ulimit -n 1024` (`--server-nofile`), the soft limit most distributions
# give a process; the client needs more than the idle connections it opens.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

cargo build --release --quiet --locked -p loupe -p loupe-bench --bin loupe --bin http_abuse
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
[[ "$target_dir" = /* ]] || target_dir="$repo/$target_dir"
bin="$target_dir/release/http_abuse"
args=("$@")
if [[ " $* " != *" --loupe "* ]]; then args=(--loupe "$target_dir/release/loupe" "$@"); fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

mkdir -p "$repo/bench/results"
if [[ $# -eq 0 ]]; then out="$repo/bench/results/http_abuse.md"; else out="$repo/bench/results/http_abuse.tmp"; fi
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then commit="$commit (with uncommitted changes)"; fi
cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"

tmp="$out.partial"
{
    echo "# loupe serve --http under abuse"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- machine: $(nproc) cores${cpu:+ ($cpu)}, $(uname -sr), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- toolchain: $(rustc --version); release profile"
    echo "- commit: $commit"
    echo "- command: \`bash bench/http/run.sh $*\`, which runs \`${bin#"$repo"/} ${args[*]#"$target_dir"/}\`"
    echo
} > "$tmp"
"$bin" "${args[@]}" | tee -a "$tmp"
echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp"
mv "$tmp" "$out"
echo "written: ${out#"$repo"/}" >&2
