#!/usr/bin/env bash
# The review bench in one command (issue 33, item 5): builds git repositories with real history
# from PyPI sdists (bench/review/setup.sh), then for each range names the changed symbols with
# Python's own `ast` (oracle.py) and lists what a three-dot review must leave out (three_dot.py),
# and drives loupe's review of the range through the official MCP Python SDK (measure.py).
# Writes bench/results/review.md; raw results in bench/corpora/review/.results/.
#
#   bash bench/review/run.sh
#
# LOUPE, COUNTER: the loupe binary and the o200k counter (default: the release builds, built
# when absent). No goal is asserted: the report says whether each is met.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=bench/review/setup.sh
source "$here/setup.sh"

results="$base/.results"
mkdir -p "$results"
ranges=("flask main...feature" "flask v3.0.0..v3.0.3" "django v5.1.4..v5.1.8" "django main...feature")
outs=()
for entry in "${ranges[@]}"; do
    read -r corpus range <<<"$entry"
    name="$corpus-${range//[^A-Za-z0-9]/_}"
    echo "== $corpus $range ==" >&2
    python3 "$here/oracle.py" --repo "$base/$corpus" --range "$range" --json "$results/$name.oracle.json"
    three_dot=()
    if [[ "$range" == *...* ]]; then
        python3 "$here/three_dot.py" --repo "$base/$corpus" --range "$range" --json "$results/$name.three_dot.json"
        three_dot=(--three-dot "$results/$name.three_dot.json")
    fi
    "$venv/bin/python" "$here/measure.py" --loupe "$LOUPE" --counter "$COUNTER" --repo "$base/$corpus" \
        --range "$range" --oracle "$results/$name.oracle.json" "${three_dot[@]}" --out "$results/$name.json"
    outs+=("$corpus:$results/$name.json")
done

python3 "$here/report.py" --md "$repo/bench/results/review.md" \
    --meta "date=$(date -u +%Y-%m-%d)" \
           "command=bash bench/review/run.sh (bench at $commit)" \
           "machine=$cpu, $(nproc) cores, $(uname -sr)" \
    --results "${outs[@]}"
echo "wrote bench/results/review.md" >&2
