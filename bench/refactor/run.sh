#!/usr/bin/env bash
# The refactor bench in one command (issue 32, item 3, "proof against language servers"): sets up
# the language servers and the corpora (bench/refactor/setup.sh), then for each corpus renames a
# seeded sample of symbols with loupe's rename_symbol (dry run, through `loupe serve`) and with the
# language server's textDocument/rename at the same definition, and compares the sites. Writes
# bench/results/refactor.md and bench/results/refactor-disagreements.md.
#
#   bash bench/refactor/run.sh                       # every corpus, 60 symbols each
#   N=20 bash bench/refactor/run.sh flask bytes      # a subset: the report goes to
#                                                    # bench/results/refactor.tmp instead
#
# N      symbols per corpus (default 60; Python has two corpora, so 120)
# SEED   the sample's seed (default 32)
# LOUPE  the loupe binary (default target/release/loupe, built if absent)
# Raw results: bench/corpora/refactor/.results/<corpus>.json, server and loupe logs beside them.
# No target is asserted: the report says whether the goal (precision >= 0.99, recall >= 0.95) is met.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bench=refactor
start=$(date +%s)
# shellcheck source=bench/refactor/setup.sh
source "$here/setup.sh"
setup_s=$(( $(date +%s) - start ))

N="${N:-60}"
SEED="${SEED:-32}"
all=(flask django query-core bytes)
if [[ $# -gt 0 ]]; then wanted=("$@"); else wanted=("${all[@]}"); fi
declare -A language=([flask]=python [django]=python [query-core]=typescript [bytes]=rust)
for name in "${wanted[@]}"; do
    [[ -n "${language[$name]:-}" ]] || { echo "unknown corpus: $name (known: ${all[*]})" >&2; exit 2; }
done

results="$corpora/.results"
mkdir -p "$results" "$repo/bench/results"
jsons=()
for name in "${wanted[@]}"; do
    echo "== $name (${language[$name]}) ==" >&2
    python3 "$here/compare.py" --corpus "$name" --language "${language[$name]}" \
        --root "$corpora/$name" --index-dir "$corpora/.index/$name" --loupe "$LOUPE" \
        --node-modules "$nm" --rust-analyzer "$rust_analyzer" --n "$N" --seed "$SEED" \
        --out "$results/$name.json"
    jsons+=("$results/$name.json")
done

if [[ $# -eq 0 && "$N" == 60 && "$SEED" == 32 ]]; then
    md="$repo/bench/results/refactor.md"
    dis="$repo/bench/results/refactor-disagreements.md"
else
    md="$repo/bench/results/refactor.tmp"
    dis="$repo/bench/results/refactor-disagreements.tmp"
fi
total_s=$(( $(date +%s) - start ))
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || uname -m)"
python3 "$here/report.py" --md "$md" --disagreements "$dis" \
    --meta "date=$(date -u +%Y-%m-%d)" \
           "command=bash bench/refactor/run.sh (bench at $commit; N=$N symbols per corpus, seed $SEED)" \
           "machine=$cpu, $(nproc) cores, $(uname -sr)" \
           "loupe=$loupe_meta" \
           "servers=$servers_meta" \
           "corpora=$corpora_meta" \
           "wall time=${total_s} s in all (set-up ${setup_s} s)" \
    --results "${jsons[@]}"
echo "wrote ${md#"$repo/"} and ${dis#"$repo/"} (${total_s} s)" >&2
