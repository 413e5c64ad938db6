#!/usr/bin/env bash
# The agent's first minutes on a big tree (issue 35): a fresh `loupe serve` on Linux and django
# from the registries (bench/index/fetch-corpora.sh: Debian linux-source, the Django sdist), a
# search a second from the start through the official MCP Python SDK, another process keeping
# one core busy; beside it, in the same run and under the same load, `loupe index` alone and
# `ctags -R`. Writes bench/results/firstmin.md (a subset of corpora: bench/results/firstmin.tmp).
#
#   bash bench/firstmin/run.sh                 # linux and django, one run each
#   RUNS=2 bash bench/firstmin/run.sh linux    # two runs of linux
#   LOUPE=/path/to/loupe bash bench/firstmin/run.sh django
#
# Each corpus takes: the cold `loupe index`, `ctags -R`, the served build until 30 s after ready,
# and a settled minute (Linux: about 10 minutes on 2 cores).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
bench=firstmin

all=(linux django)
if [[ $# -gt 0 ]]; then
    corpora=("$@")
    out="bench/results/firstmin.tmp"
else
    corpora=("${all[@]}")
    out="bench/results/firstmin.md"
fi
runs="${RUNS:-1}"

bash "$repo/bench/index/fetch-corpora.sh" "${corpora[@]}"
# The client venv (the official MCP Python SDK) and LOUPE, set up as the token suite does.
# shellcheck source=bench/tokens/setup.sh
source "$repo/bench/tokens/setup.sh"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sections=()
for name in "${corpora[@]}"; do
    for run in $(seq 1 "$runs"); do
        echo "firstmin: $name, run $run of $runs ..." >&2
        section="$("$venv/bin/python" "$here/firstmin.py" --loupe "$LOUPE" \
            --corpus "$name=bench/corpora/index/$name" --work "$work" \
            --json "$work/$name-$run.json")"
        sections+=("${section/\#\#\# $name (/\#\#\# $name, run $run (}")
    done
done

{
    echo "# The first minutes on a big tree: a served cold build under an agent's searches"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $cpu, $(nproc) cores, $(uname -sr); load average at the start $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- loupe: $("$LOUPE" --version), $built"
    echo "- client: official MCP Python SDK $mcp_version"
    echo "- corpora: $(awk -F'\t' 'NR > 1 {printf "%s%s (%s files)", sep, $2, $3; sep = ", "}' bench/corpora/index/MANIFEST.tsv)"
    echo "- peers: $(ctags --version | head -n1 | cut -d, -f1), loupe index (cold, no queries)"
    echo "- command: bash bench/firstmin/run.sh${*:+ $*}${RUNS:+ (RUNS=$RUNS)}"
    echo
    echo "A fresh server with an empty index dir; a search every second from the spawn (the next"
    echo "starts a second after the last began, or at once when it took longer), symbol and literal"
    echo "queries in turn (bench/firstmin/firstmin.py); another process keeps one core busy for the"
    echo "whole run, peers included. *First useful hit*: the first answer holding the file the query"
    echo "is about. *Ready*: the first answer that says the index is ready. *Settled*: a new server on"
    echo "the built index, a minute after it starts, the same queries three times."
    echo
    for section in "${sections[@]}"; do
        echo "$section"
        echo
    done
} > "$out"
cat "$out"
echo "wrote $out" >&2
