# Set-up of the review bench: git repositories with real history from successive releases on
# PyPI, the official MCP Python SDK in a venv, and the binaries LOUPE and COUNTER. Sourced by
# bench/review/run.sh (which sets `repo`); also runs on its own:
#
#   bash bench/review/setup.sh
#
# Idempotent: a repository already built from the same sdists (its stamp) is kept; every run
# prints one line per repository (commits, tags, files changed per range).
#
# Each repository forks and moves on, so a three-dot range has something to leave out:
#   flask:  main    = 2.3.3 (tag v2.3.3, the fork) ─ 3.1.0
#           feature = 2.3.3 ─ 3.0.0 ─ 3.0.3
#   django: main    = 5.1.4 (tag v5.1.4, the fork) ─ 5.1.8 ─ 5.1.15 (the last 5.1 release)
#           feature = 5.1.4 ─ 5.2
# 5.1.8 and 5.2 came out the same day with the same security fixes, so 5.1.4..5.1.8 is a
# 100+-file range whose symbols a three-dot review of main...feature may name (feature changed
# them too); 5.1.9..5.1.15 came after 5.2, so their fixes are main's alone.
# One commit per release, its tree the sdist's files with the top directory stripped (PKG-INFO
# and the egg-info kept, as the sdist has them), deterministic (fixed author, committer and
# dates: the commit ids below do not change between runs or machines), every release tagged
# v<version>; HEAD is `feature` with a clean working tree.

set -euo pipefail
if [[ -z "${repo:-}" ]]; then
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fi
base="$repo/bench/corpora/review"
downloads="$base/.downloads"
venv="$base/.venv"
mkdir -p "$downloads"

# The sdists' SHA-256, as PyPI's JSON API publishes them (https://pypi.org/pypi/<name>/json).
declare -A SDIST_SHA256=(
    [flask-2.3.3]=09c347a92aa7ff4a8e7f3206795f30d826654baf38b873d0744cd571ca609efc
    [flask-3.0.0]=cfadcdb638b609361d29ec22360d6070a77d7463dcb3ab08d2c2f2f168845f58
    [flask-3.0.3]=ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842
    [flask-3.1.0]=5f873c5184c897c8d9d1b05df1e3d01b14910ce69607a117bd3277098a5836ac
    [django-5.1.4]=de450c09e91879fa5a307f696e57c851955c910a438a35e6b4c895e86bedc82a
    [django-5.1.8]=42e92a1dd2810072bcc40a39a212b693f94406d0ba0749e68eb642f31dc770b4
    [django-5.1.15]=46a356b5ff867bece73fc6365e081f21c569973403ee7e9b9a0316f27d0eb947
    [django-5.2]=1a47f7a7a3d43ce64570d350e008d2949abe8c7e21737b351b6a1611277c6d89
)
# The commits a correct build gives (checked after a build: a mismatch is reported, not fatal).
declare -A EXPECTED_COMMIT=(
    [flask]="v2.3.3=ca52199 v3.0.0=7d2cf4c v3.0.3=6f2c092 v3.1.0=8374e3d"
    [django]="v5.1.4=a1abe4d v5.2=7f8501a v5.1.8=8e96a82 v5.1.15=f41f9dc"
)

# name version → the sdist's path: downloaded once by pip from PyPI, checked against its SHA-256.
sdist() {
    local name=$1 version=$2 file want got
    want="${SDIST_SHA256[$name-$version]:-}"
    [[ -n "$want" ]] || { echo "review bench: no SHA-256 pinned for $name $version" >&2; exit 1; }
    find_sdist() { ls "$downloads"/"$name"-"$version".tar.gz "$downloads"/"${name^}"-"$version".tar.gz 2>/dev/null | head -1 || true; }
    file="$(find_sdist)"
    if [[ -z "$file" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$downloads" "$name==$version" >&2
        file="$(find_sdist)"
        [[ -n "$file" ]] || { echo "review bench: no sdist of $name $version from PyPI" >&2; exit 1; }
    fi
    got="$(sha256sum "$file" | cut -d' ' -f1)"
    if [[ "$got" != "$want" ]]; then
        echo "review bench: $file has SHA-256 $got, expected $want (PyPI)" >&2
        exit 1
    fi
    echo "$file"
}

# dir tarball version date → commits the sdist's tree (top directory stripped) on the branch
# checked out, tagged v<version>.
commit_release() {
    local dir=$1 tarball=$2 version=$3 when=$4
    find "$dir" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
    tar --no-same-owner -xzf "$tarball" -C "$dir" --strip-components=1
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
    local version day=1 tarball
    # Every sdist is checked (and fetched if absent) even when the repository is kept.
    for version in $fork $feature $later; do sdist "$name" "$version" >/dev/null; done
    if [[ -d "$dir/.git" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]] &&
        git -C "$dir" diff --quiet HEAD && [[ "$(git -C "$dir" branch --show-current)" == feature ]]; then
        return
    fi
    echo "building $dir from $name sdists: fork $fork, feature $feature, main $later ..." >&2
    rm -rf "$dir" "$stamp" && mkdir -p "$dir"
    git -C "$dir" init -q -b main
    git -C "$dir" config core.autocrlf false
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
    local pair tag id
    for pair in ${EXPECTED_COMMIT[$name]}; do
        tag="${pair%%=*}" id="${pair#*=}"
        [[ "$id" == @* ]] && continue
        if [[ "$(git -C "$dir" rev-parse --short=7 "$tag")" != "$id" ]]; then
            echo "review bench: $name $tag is $(git -C "$dir" rev-parse --short=7 "$tag"), expected $id (not deterministic?)" >&2
        fi
    done
}

# name "range ..." → one line: commits, tags, and files changed per range.
summarize() {
    local name=$1 dir="$base/$1" spec line
    shift
    line="$name: $(git -C "$dir" rev-list --all --count) commits, tags"
    for tag in $(git -C "$dir" tag --sort=creatordate); do
        line+=" $tag=$(git -C "$dir" rev-parse --short=7 "$tag")"
    done
    line+=", HEAD=$(git -C "$dir" branch --show-current);"
    for spec in "$@"; do
        line+=" $spec: $(git -C "$dir" diff --shortstat "$spec" | sed -E 's/ files? changed.*//; s/^ //') files"
        line+=" ($(git -C "$dir" diff --name-only "$spec" -- '*.py' | wc -l) .py),"
    done
    echo "${line%,}" >&2
}

build_history flask 2.3.3 "3.0.0 3.0.3" "3.1.0"
build_history django 5.1.4 "5.2" "5.1.8 5.1.15"
summarize flask main...feature v3.0.0..v3.0.3 v2.3.3..main
summarize django main...feature v5.1.4..v5.1.8 v5.1.8..v5.1.15

if ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    echo "setting up $venv (mcp>=2,<3) ..." >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "mcp>=2,<3" >&2
fi

LOUPE="${LOUPE:-$repo/target/release/loupe}"
COUNTER="${COUNTER:-$repo/target/release/examples/count_tokens}"
[[ "$LOUPE" == /* ]] || LOUPE="$PWD/$LOUPE"
[[ "$COUNTER" == /* ]] || COUNTER="$PWD/$COUNTER"
if [[ "$LOUPE" == "$repo/target/release/loupe" && ! -x "$LOUPE" ]]; then
    (cd "$repo" && cargo build --release --locked -p loupe >&2)
fi
if [[ "$COUNTER" == "$repo/target/release/examples/count_tokens" && ! -x "$COUNTER" ]]; then
    (cd "$repo" && cargo build --release --locked -p loupe-core --example count_tokens >&2)
fi
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
cpu="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || uname -m)"
