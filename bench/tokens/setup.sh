# Sourced by bench/tokens/run.sh and bench/adoption/run.sh, which set `bench` (the name errors
# carry) and `repo`: the corpus both measure on (Flask 3.0.3 from PyPI, checked against a pinned
# SHA-256, unpacked into bench/corpora/tokens/ as a git repository whose deterministic commits are
# flask 3.0.0, tagged v3.0.0, then 3.0.3),
# the official MCP Python SDK in a venv beside it, ripgrep, and the binaries LOUPE and COUNTER
# (built when they are the defaults and absent). Sets VERSION, SHA256, corpus, venv, LOUPE,
# COUNTER, and for the report commit, built, cpu, mcp_version and shared_meta. When the sourcing script sets
# want_serena=1 (the token suite does) and SERENA is not 0, it also sets up Serena and sets
# serena_bin, serena_home and serena_meta (serena_bin empty when Serena is left out).

VERSION=3.0.3
SHA256=ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842
# The release before it, committed first (tag v3.0.0), so the review task has real history.
BASE_VERSION=3.0.0
BASE_SHA256=cfadcdb638b609361d29ec22360d6070a77d7463dcb3ab08d2c2f2f168845f58

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

# The corpus: two sdists as two deterministic commits, flask $BASE_VERSION (tag v$BASE_VERSION)
# then flask $VERSION (main, HEAD), each checked against its pinned SHA-256.
if [[ ! -d "$corpus/.git" || ! -f "$stamp" || "$(cat "$stamp")" != "$SHA256 $BASE_SHA256" ]]; then
    mkdir -p "$base/.downloads"
    for pair in "$BASE_VERSION $BASE_SHA256" "$VERSION $SHA256"; do
        read -r version sha <<<"$pair"
        file="$base/.downloads/flask-$version.tar.gz"
        if [[ ! -f "$file" ]]; then
            pip download --quiet --no-binary :all: --no-deps --dest "$base/.downloads" "flask==$version" >&2
        fi
        got="$(sha256sum "$file" | cut -d' ' -f1)"
        if [[ "$got" != "$sha" ]]; then
            echo "$bench: $file has SHA-256 $got, expected $sha" >&2
            exit 1
        fi
    done
    rm -rf "$corpus" && mkdir -p "$corpus"
    (
        cd "$corpus"
        git init -q -b main
        for version in "$BASE_VERSION" "$VERSION"; do
            find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
            tar -xzf "$base/.downloads/flask-$version.tar.gz" --strip-components=1
            export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@loupe.invalid GIT_AUTHOR_DATE="2024-04-07T00:00:00Z"
            export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@loupe.invalid GIT_COMMITTER_DATE="2024-04-07T00:00:00Z"
            git add -A
            git -c commit.gpgsign=false commit -q -m "flask $version sdist"
        done
        git tag "v$BASE_VERSION" HEAD~1
    )
    echo "$SHA256 $BASE_SHA256" > "$stamp"
    echo "corpus written: $corpus ($(git -C "$corpus" rev-parse --short HEAD), v$BASE_VERSION before it)" >&2
fi

# The client: the official MCP Python SDK.
if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    echo "setting up $venv (mcp>=2,<3) ..." >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "mcp>=2,<3" >&2
fi

# Serena, the token suite's fourth side: serena-agent from PyPI in its own venv (it needs Python
# 3.11 to 3.14), the pyright it pins installed with npm beside it (Serena would otherwise fetch it
# through uvx on first use; this way a run needs no network), and SERENA_HOME with its settings:
# the classic tool interface, no web dashboard, pyright's path, and the project's .serena folder
# kept under SERENA_HOME (outside the corpus, so its git status stays clean). Idempotent: what is
# there at the pinned versions is kept, and the settings are rewritten every time.
SERENA_VERSION=2.1.0
PYRIGHT_VERSION=1.1.403  # the version serena-agent 2.1.0 pins (solidlsp/language_servers/pyright_server.py)
serena_venv="$base/.serena-venv"
serena_ls="$base/.serena-ls"
serena_home="$base/.serena-home"
serena_bin=""
serena_meta="not attempted (SERENA=0)"
if [[ "${want_serena:-0}" == 1 && "${SERENA:-1}" != 0 ]]; then
    serena_python=""
    for py in python3 python3.13 python3.12 python3.11 python3.14; do
        if command -v "$py" >/dev/null 2>&1 &&
            "$py" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 15))' 2>/dev/null; then
            serena_python="$py"
            break
        fi
    done
    if [[ -z "$serena_python" ]]; then
        serena_meta="not attempted (no Python 3.11 to 3.14 for serena-agent)"
        echo "$bench: no Python 3.11 to 3.14 for serena-agent; running without Serena" >&2
    elif ! command -v npm >/dev/null 2>&1; then
        serena_meta="not attempted (no npm for its language server)"
        echo "$bench: no npm for Serena's language server (pyright); running without Serena" >&2
    else
        installed="$("$serena_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("serena-agent"))' 2>/dev/null || true)"
        if [[ "$installed" != "$SERENA_VERSION" ]]; then
            echo "setting up $serena_venv (serena-agent==$SERENA_VERSION) ..." >&2
            rm -rf "$serena_venv"
            "$serena_python" -m venv "$serena_venv"
            "$serena_venv/bin/pip" install --quiet "serena-agent==$SERENA_VERSION" >&2
        fi
        if [[ "$("$serena_ls/node_modules/.bin/pyright" --version 2>/dev/null || true)" != "pyright $PYRIGHT_VERSION" ]]; then
            echo "installing pyright@$PYRIGHT_VERSION into $serena_ls ..." >&2
            mkdir -p "$serena_ls"
            npm install --silent --no-audit --no-fund --prefix "$serena_ls" "pyright@$PYRIGHT_VERSION" >&2
        fi
        if [[ ! -f "$serena_home/serena_config.yml" ]]; then
            SERENA_HOME="$serena_home" "$serena_venv/bin/serena" init >/dev/null
        fi
        sed -i \
            -e 's|^agent_interface:.*|agent_interface: tools|' \
            -e 's|^web_dashboard:.*|web_dashboard: false|' \
            -e 's|^web_dashboard_open_on_launch:.*|web_dashboard_open_on_launch: false|' \
            -e "s|^ls_specific_settings:.*|ls_specific_settings: {python: {ls_path: \"$serena_ls/node_modules/.bin/pyright-langserver\"}}|" \
            -e "s|^project_serena_folder_location:.*|project_serena_folder_location: \"$serena_home/projects/\$projectFolderName\"|" \
            "$serena_home/serena_config.yml"
        for key in agent_interface web_dashboard web_dashboard_open_on_launch ls_specific_settings project_serena_folder_location; do
            grep -q "^$key:" "$serena_home/serena_config.yml" ||
                { echo "$bench: $serena_home/serena_config.yml has no '$key:' line to set" >&2; exit 1; }
        done
        serena_bin="$serena_venv/bin/serena"
        serena_meta="serena-agent $SERENA_VERSION (PyPI, Python $("$serena_venv/bin/python" -c 'import platform; print(platform.python_version())')), language server pyright $PYRIGHT_VERSION (npm), context agent, tool interface"
    fi
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
# The report's lines on loupe, the corpus and the client, the same in both benches.
shared_meta=(
    "loupe=$("$LOUPE" --version), $built, sha256 $(sha256sum "$LOUPE" | cut -c1-12)"
    "corpus=Flask $VERSION sdist from PyPI (sha256 ${SHA256:0:12}), $(git -C "$corpus" ls-files | wc -l) files, committed after flask $BASE_VERSION (tag v$BASE_VERSION)"
    "client=official MCP Python SDK $mcp_version; tokenizer o200k_base ($(basename "$COUNTER"))"
)

