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

VERSION=3.0.3
SHA256=ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
base="$repo/bench/corpora/tokens"
corpus="$base/flask-$VERSION"
sdist="$base/.downloads/flask-$VERSION.tar.gz"
stamp="$base/.stamp-flask-$VERSION"
venv="$base/.venv"

sudo_if_needed() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# ripgrep produces the built-in Grep's output (Claude Code's Grep runs ripgrep).
if ! command -v rg >/dev/null 2>&1; then
    echo "installing ripgrep ..." >&2
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >&2
fi

# The corpus, exactly as bench/tokens/run.sh makes it: the sdist, unpacked, one deterministic
# commit.
if [[ ! -d "$corpus/.git" || ! -f "$stamp" || "$(cat "$stamp")" != "$SHA256" ]]; then
    mkdir -p "$base/.downloads"
    if [[ ! -f "$sdist" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$base/.downloads" "flask==$VERSION" >&2
    fi
    got="$(sha256sum "$sdist" | cut -d' ' -f1)"
    if [[ "$got" != "$SHA256" ]]; then
        echo "adoption: $sdist has SHA-256 $got, expected $SHA256" >&2
        exit 1
    fi
    rm -rf "$corpus" "$base/.tmp" && mkdir -p "$base/.tmp"
    tar -xzf "$sdist" -C "$base/.tmp"
    mv "$base/.tmp/flask-$VERSION" "$corpus"
    rm -rf "$base/.tmp"
    (
        cd "$corpus"
        export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@loupe.invalid GIT_AUTHOR_DATE="2024-04-07T00:00:00Z"
        export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@loupe.invalid GIT_COMMITTER_DATE="2024-04-07T00:00:00Z"
        git init -q -b main
        git add -A
        git -c commit.gpgsign=false commit -q -m "flask $VERSION sdist"
    )
    echo "$SHA256" > "$stamp"
    echo "corpus written: $corpus ($(git -C "$corpus" rev-parse --short HEAD))" >&2
fi

# The client: the official MCP Python SDK.
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    echo "setting up $venv (mcp>=2,<3) ..." >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "mcp>=2,<3" >&2
fi

# The binaries.
LOUPE="${LOUPE:-$repo/target/release/loupe}"
COUNTER="${COUNTER:-$repo/target/release/examples/count_tokens}"
[[ "$LOUPE" == /* ]] || LOUPE="$PWD/$LOUPE"
[[ "$COUNTER" == /* ]] || COUNTER="$PWD/$COUNTER"
if [[ ! -x "$LOUPE" ]]; then
    [[ "$LOUPE" == "$repo/target/release/loupe" ]] || { echo "adoption: LOUPE=$LOUPE is not an executable" >&2; exit 1; }
    (cd "$repo" && cargo build --release --locked -p loupe >&2)
fi
if [[ ! -x "$COUNTER" ]]; then
    [[ "$COUNTER" == "$repo/target/release/examples/count_tokens" ]] || { echo "adoption: COUNTER=$COUNTER is not an executable" >&2; exit 1; }
    (cd "$repo" && cargo build --release --locked -p loupe-core --example count_tokens >&2)
fi

# What the report says it measured.
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ "$LOUPE" == "$repo/target/release/loupe" ]]; then
    built="built from this checkout ($commit$(git -C "$repo" diff --quiet HEAD -- crates Cargo.lock 2>/dev/null || echo ', with uncommitted changes'))"
else
    built="${LOUPE_COMMIT:+commit $LOUPE_COMMIT, }LOUPE=$LOUPE"
fi
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || uname -m)"
mcp_version="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"

mkdir -p "$repo/bench/results"
status=0
"$venv/bin/python" "$here/replay.py" \
    --loupe "$LOUPE" --counter "$COUNTER" --corpus "$corpus" --calls "$here/calls.jsonl" \
    --md "$repo/bench/results/adoption.md" --notes "$here/notes.md" \
    --meta "date=$(date -u +%Y-%m-%d)" \
           "machine=$cpu, $(nproc) cores, $(uname -sr); load average at the start $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)" \
           "loupe=$("$LOUPE" --version), $built, sha256 $(sha256sum "$LOUPE" | cut -c1-12)" \
           "corpus=Flask $VERSION sdist from PyPI (sha256 ${SHA256:0:12}), $(git -C "$corpus" ls-files | wc -l) files, one commit" \
           "client=official MCP Python SDK $mcp_version; tokenizer o200k_base ($(basename "$COUNTER"))" \
           "baseline=$(rg --version | head -n1), coreutils $(cat --version | head -n1 | awk '{print $NF}'), git $(git --version | awk '{print $3}')" \
           "command=bash bench/adoption/run.sh (replay at $commit)" \
    "$@" || status=$?
[[ " $* " == *" --only "* || "$status" -ne 0 ]] || echo "wrote bench/results/adoption.md" >&2
exit "$status"
