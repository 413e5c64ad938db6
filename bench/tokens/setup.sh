# Sourced by bench/tokens/run.sh and bench/adoption/run.sh, which set `bench` (the name errors
# carry) and `repo`: the corpus both measure on (Flask 3.0.3 from PyPI, checked against a pinned
# SHA-256, unpacked into bench/corpora/tokens/ as a git repository with one deterministic commit),
# the official MCP Python SDK in a venv beside it, ripgrep, and the binaries LOUPE and COUNTER
# (built when they are the defaults and absent). Sets VERSION, SHA256, corpus, venv, LOUPE,
# COUNTER, and for the report commit, built, cpu and mcp_version.

VERSION=3.0.3
SHA256=ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842

base="$repo/bench/corpora/tokens"
corpus="$base/flask-$VERSION"
sdist="$base/.downloads/flask-$VERSION.tar.gz"
stamp="$base/.stamp-flask-$VERSION"
venv="$base/.venv"

sudo_if_needed() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# ripgrep: the token suite's baseline search, the adoption replay's built-in Grep.
if ! command -v rg >/dev/null 2>&1; then
    echo "installing ripgrep ..." >&2
    sudo_if_needed apt-get update -qq
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >&2
fi

# The corpus: the sdist, unpacked, one deterministic commit.
if [[ ! -d "$corpus/.git" || ! -f "$stamp" || "$(cat "$stamp")" != "$SHA256" ]]; then
    mkdir -p "$base/.downloads"
    if [[ ! -f "$sdist" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$base/.downloads" "flask==$VERSION" >&2
    fi
    got="$(sha256sum "$sdist" | cut -d' ' -f1)"
    if [[ "$got" != "$SHA256" ]]; then
        echo "$bench: $sdist has SHA-256 $got, expected $SHA256" >&2
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
# Paths given relative to where the command ran.
[[ "$LOUPE" == /* ]] || LOUPE="$PWD/$LOUPE"
[[ "$COUNTER" == /* ]] || COUNTER="$PWD/$COUNTER"
if [[ ! -x "$LOUPE" ]]; then
    [[ "$LOUPE" == "$repo/target/release/loupe" ]] || { echo "$bench: LOUPE=$LOUPE is not an executable" >&2; exit 1; }
    (cd "$repo" && cargo build --release --locked -p loupe >&2)
fi
if [[ ! -x "$COUNTER" ]]; then
    [[ "$COUNTER" == "$repo/target/release/examples/count_tokens" ]] || { echo "$bench: COUNTER=$COUNTER is not an executable" >&2; exit 1; }
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

