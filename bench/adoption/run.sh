#!/usr/bin/env bash
# The hook adoption replay, in one command: sets up the corpus of the token economy suite (Flask
# 3.0.3 from PyPI, checked against a pinned SHA-256, in bench/corpora/tokens/, one git commit;
# shared with bench/tokens/run.sh) and its venv with the official MCP Python SDK, then replays
# bench/adoption/calls.jsonl through `loupe hook claude-code --mode redirect` and, for each routed
# call, the loupe call it names through `loupe serve`; writes bench/results/adoption.md.
#
#   bash bench/adoption/run.sh
#   LOUPE=/path/to/loupe COUNTER=/path/to/count_tokens bash bench/adoption/run.sh
#   bash bench/adoption/run.sh --only grep-def-url_for --show   # some calls, every face shown
#                                                               # (bench/results left alone)
#
# LOUPE    the loupe binary (default target/release/loupe, built if absent)
# COUNTER  reads text on stdin, prints its o200k_base token count (default
#          target/release/examples/count_tokens, built if absent)
# LOUPE_COMMIT  the commit a given LOUPE was built from, for the report (optional)
# Extra arguments go to replay.py. bench/adoption/notes.md (findings, written by a person) goes in
# the report after the result. Exit status 1 when a label does not hold on the built-in output
# (a broken label); a loupe answer that fails its check is a wrongly routed call, and missed goals
# are reported, not asserted. Not part of CI: it times processes on whatever machine runs it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bench=adoption
# The corpus, venv and binaries of the token suite, set up the same way.
# shellcheck source=bench/tokens/setup.sh
source "$repo/bench/tokens/setup.sh"

mkdir -p "$repo/bench/results"
status=0
"$venv/bin/python" "$here/replay.py" \
    --loupe "$LOUPE" --counter "$COUNTER" --corpus "$corpus" --calls "$here/calls.jsonl" \
    --md "$repo/bench/results/adoption.md" --notes "$here/notes.md" \
    --meta "date=$(date -u +%Y-%m-%d)" \
           "machine=$cpu, $(nproc) cores, $(uname -sr); load average at the start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" \
           "${shared_meta[@]}" \
           "baseline=$(rg --version | head -n1), coreutils $(cat --version | head -n1 | awk '{print $NF}'), git $(git --version | awk '{print $3}')" \
           "command=bash bench/adoption/run.sh (replay at $commit)" \
    "$@" || status=$?
[[ " $* " == *" --only "* || "$status" -ne 0 ]] || echo "wrote bench/results/adoption.md" >&2
exit "$status"
