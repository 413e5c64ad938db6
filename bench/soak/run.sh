#!/usr/bin/env bash
# The soak: fetches the corpus, builds the release binary, installs the official MCP
# Python SDK in a virtualenv, and runs bench/soak/soak.py. Arguments go to soak.py:
#
#   bash bench/soak/run.sh                       # 4 clients x 30 min, writes bench/results/soak.md
#   bash bench/soak/run.sh --minutes 2           # a short run, writes bench/results/soak.tmp
#
# SOAK_VENV (default $TMPDIR/loupe-soak-venv) is where the SDK goes; CARGO_TARGET_DIR is honoured.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

bash "$here/fetch-corpus.sh"
cargo build --release --locked -p loupe
target="${CARGO_TARGET_DIR:-$repo/target}"

venv="${SOAK_VENV:-${TMPDIR:-/tmp}/loupe-soak-venv}"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -c 'import mcp' 2>/dev/null || "$venv/bin/pip" install --quiet "mcp>=2"

# A run other than 4 clients x 30 minutes is a smoke run: it must not overwrite the record.
out="bench/results/soak.md"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[i]}" in
        --minutes | --clients)
            value="${args[i + 1]:-}"
            if [[ "${args[i]}" == --minutes && "$value" != 30 ]] || [[ "${args[i]}" == --clients && "$value" != 4 ]]; then
                out="bench/results/soak.tmp"
            fi
            ;;
    esac
done
exec "$venv/bin/python" "$here/soak.py" --loupe "$target/release/loupe" \
    --corpus bench/corpora/soak/django-5.2.8 --out "$out" "$@"
