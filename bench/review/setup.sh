# Sourced by bench/review/run.sh (which sets `repo`): git repositories with real history from
# successive releases on PyPI, the official MCP Python SDK in a venv, and the binaries LOUPE and
# COUNTER (built when they are the defaults and absent). Idempotent: a repository already built
# from the same sdists is kept.
#
# Each repository forks and moves on, so a three-dot range has something to leave out:
#   flask:  main = 2.3.3 (the fork) ─ 3.1.0 (main moves on);  feature = 2.3.3 ─ 3.0.0 ─ 3.0.3
#   django: main = 5.1.4 (the fork) ─ 5.1.8 (main moves on);  feature = 5.1.4 ─ 5.2
# Commits are deterministic (fixed author, committer and dates), every release is tagged
# v<version>, and HEAD is `feature` with a clean working tree.

base="$repo/bench/corpora/review"
downloads="$base/.downloads"
venv="$base/.venv"
mkdir -p "$downloads"

# name version → the sdist's path, downloaded once by pip from PyPI (pip checks the digest the
# index publishes for it), its SHA-256 printed to stderr for the record.
sdist() {
    local name=$1 version=$2 file
    file="$(ls "$downloads"/"$name"-"$version".tar.gz "$downloads"/"${name^}"-"$version".tar.gz 2>/dev/null | head -1)"
    if [[ -z "$file" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$downloads" "$name==$version" >&2
        file="$(ls "$downloads"/"$name"-"$version".tar.gz "$downloads"/"${name^}"-"$version".tar.gz 2>/dev/null | head -1)"
    fi
    if [[ -z "$file" ]]; then
        echo "review bench: no sdist of $name $version from PyPI" >&2
        exit 1
    fi
    echo "  $(basename "$file") sha256 $(sha256sum "$file" | cut -d' ' -f1)" >&2
    echo "$file"
}

# dir tarball version → commits the sdist's tree (top directory stripped) on the branch checked out.
commit_release() {
    local dir=$1 tarball=$2 version=$3 when=$4
    if [[ ! -f "$tarball" ]]; then
        echo "review bench: no sdist for $(basename "$dir") $version" >&2
        exit 1
    fi
    find "$dir" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
    tar -xzf "$tarball" -C "$dir" --strip-components=1
    (
        cd "$dir"
        export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@loupe.invalid GIT_AUTHOR_DATE="$when"
        export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@loupe.invalid GIT_COMMITTER_DATE="$when"
        git add -A
        git -c commit.gpgsign=false commit -q -m "$(basename "$dir") $version"
        git tag "v$version"
    )
}

# name fork "feature releases" "main releases" → bench/corpora/review/<name>.
build_history() {
    local name=$1 fork=$2 feature=$3 later=$4
    local dir="$base/$name" stamp="$base/.stamp-$name" want="$fork|$feature|$later"
    if [[ -d "$dir/.git" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return
    fi
    echo "building $dir from $name sdists: fork $fork, feature $feature, main $later ..." >&2
    rm -rf "$dir" && mkdir -p "$dir"
    git -C "$dir" init -q -b main
    local day=1
    commit_release "$dir" "$(sdist "$name" "$fork")" "$fork" "2024-01-0${day}T00:00:00Z"
    git -C "$dir" checkout -q -b feature
    for version in $feature; do
        day=$((day + 1))
        commit_release "$dir" "$(sdist "$name" "$version")" "$version" "2024-01-0${day}T00:00:00Z"
    done
    git -C "$dir" checkout -q main
    for version in $later; do
        day=$((day + 1))
        commit_release "$dir" "$(sdist "$name" "$version")" "$version" "2024-01-0${day}T00:00:00Z"
    done
    git -C "$dir" checkout -q feature
    echo "$want" > "$stamp"
}

build_history flask 2.3.3 "3.0.0 3.0.3" "3.1.0"
build_history django 5.1.4 "5.2" "5.1.8"

if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    echo "setting up $venv (mcp>=2,<3) ..." >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "mcp>=2,<3" >&2
fi

LOUPE="${LOUPE:-$repo/target/release/loupe}"
COUNTER="${COUNTER:-$repo/target/release/examples/count_tokens}"
if [[ "$LOUPE" == "$repo/target/release/loupe" && ! -x "$LOUPE" ]]; then
    (cd "$repo" && cargo build --release --locked -p loupe >&2)
fi
if [[ "$COUNTER" == "$repo/target/release/examples/count_tokens" && ! -x "$COUNTER" ]]; then
    (cd "$repo" && cargo build --release --locked -p loupe-core --example count_tokens >&2)
fi
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || uname -m)"
