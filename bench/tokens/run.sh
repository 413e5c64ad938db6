#!/usr/bin/env bash
# The token economy suite, in one command: fetches Flask 3.0.3 from PyPI (checked against a
# pinned SHA-256) into bench/corpora/tokens/, makes it a git repository with one commit, sets up
# the official MCP Python SDK in a venv beside it and Serena (serena-agent and its pyright) in
# another, runs bench/tokens/suite.py against LOUPE, and writes bench/results/tokens.md and
# bench/results/tokens.svg. Prints the tables.
#
#   bash bench/tokens/run.sh
#   LOUPE=/path/to/loupe COUNTER=/path/to/count_tokens bash bench/tokens/run.sh
#   bash bench/tokens/run.sh --only callers review --show    # a subset, every call's faces shown
#                                                            # (a subset leaves bench/results alone)
#
# LOUPE    the loupe binary (default target/release/loupe, built if absent)
# COUNTER  reads text on stdin, prints its o200k_base token count (default
#          target/release/examples/count_tokens, built if absent)
# LOUPE_COMMIT  the commit a given LOUPE was built from, for the report (optional)
# SERENA   0: leave the Serena side out (no set-up for it); default 1
# Extra arguments go to suite.py. Idempotent: the corpus and the venv are kept when they match;
# every task starts from the committed tree (git reset --hard, git clean). Exit status 1 when an
# answer does not hold or a call fails; missed token targets are reported, not asserted.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bench=tokens
want_serena=1
# shellcheck source=bench/tokens/setup.sh
source "$here/setup.sh"

mkdir -p "$repo/bench/results"
serena_args=()
[[ -z "$serena_bin" ]] || serena_args=(--serena "$serena_bin" --serena-home "$serena_home")
status=0
"$venv/bin/python" "$here/suite.py" \
    --loupe "$LOUPE" --counter "$COUNTER" --corpus "$corpus" \
    --md "$repo/bench/results/tokens.md" --svg "$repo/bench/results/tokens.svg" \
    --meta "date=$(date -u +%Y-%m-%d)" \
           "machine=$cpu, $(nproc) cores, $(uname -sr)" \
           "${shared_meta[@]}" \
           "baseline=$(rg --version | head -n1), git $(git --version | awk '{print $3}')" \
           "serena=$serena_meta" \
           "command=bash bench/tokens/run.sh (suite at $commit)" \
    "${serena_args[@]}" "$@" || status=$?
[[ " $* " == *" --only "* || "$status" -ne 0 ]] || echo "wrote bench/results/tokens.md and bench/results/tokens.svg" >&2
exit "$status"
