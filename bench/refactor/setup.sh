# Set-up of the refactor bench (loupe's rename_symbol against language servers). Sourced by
# bench/refactor/run.sh, which sets `repo` and `bench`; also runs on its own:
#
#   bash bench/refactor/setup.sh
#
# Idempotent: what is there and matches is kept. It installs
#   - the language servers from npm into bench/refactor/node_modules (package.json pins them,
#     `npm ci` from package-lock.json): pyright, typescript-language-server, typescript;
#   - rust-analyzer and rust-src with rustup (rust-src: rust-analyzer resolves std with it);
# and writes four corpora under bench/corpora/refactor/, each a git repository with one
# deterministic commit (the bench renames in them for real when a rename has over 200 sites,
# and resets them with git), each from its registry, checked against a pinned SHA-256:
#   flask       Flask 3.0.3 sdist (PyPI; the tokens bench's download is reused when present)
#   django      Django 5.0.14 sdist (PyPI)
#   query-core  @tanstack/query-core 5.108.4 (npm): src/, package.json, LICENSE; build/ is left
#               out (compiled .js and .d.ts copies of src/)
#   bytes       the bytes 1.12.1 crate (crates.io, through `cargo fetch`), its dependencies
#               fetched so that `cargo metadata` (rust-analyzer's start) needs no network later
# Each corpus gets the one file its server needs to see the whole tree the way loupe does:
# pyrightconfig.json (include everything; Flask's pyproject.toml would limit pyright to src/flask
# and tests), tsconfig.json (the tarball has none; without it tsserver sees only open files and
# their imports), and for bytes an empty [workspace] table (the copy is inside loupe's own
# Cargo workspace) and a .gitignore for target/.
# Sets: nm (node_modules), rust_analyzer, LOUPE, corpora (the base directory), and the *_meta
# lines for the report.

set -euo pipefail
if [[ -z "${repo:-}" ]]; then
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    repo="$(cd "$here/../.." && pwd)"
fi
bench="${bench:-refactor}"
refactor_dir="$repo/bench/refactor"
corpora="$repo/bench/corpora/refactor"
downloads="$corpora/.downloads"
mkdir -p "$downloads"

FLASK_VERSION=3.0.3
FLASK_SHA256=ceb27b0af3823ea2737928a4d99d125a06175b8512c445cbd9a9ce200ef76842
DJANGO_VERSION=5.0.14
DJANGO_SHA256=29019a5763dbd48da1720d687c3522ef40d1c61be6fb2fad27ed79e9f655bc11
QUERY_CORE_VERSION=5.108.4
QUERY_CORE_SHA256=7660b37f747ce33f1e5456299009dbe217a08514f402c13e633ae95727e361e0
BYTES_VERSION=1.12.1
BYTES_SHA256=fc652a48c352aef3ea3aed32080501cf3ef6ed5da78602a020c991775b0aff04
# Bump when what this script writes into a corpus changes: the corpora are then rewritten.
LAYOUT=1

sha() { sha256sum "$1" | cut -d' ' -f1; }

check_sha() {  # file expected
    local got
    got="$(sha "$1")"
    if [[ "$got" != "$2" ]]; then
        echo "$bench: $1 has SHA-256 $got, expected $2" >&2
        exit 1
    fi
}

# One deterministic commit of everything in the current directory.
commit_corpus() {
    export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@loupe.invalid GIT_AUTHOR_DATE="2024-04-07T00:00:00Z"
    export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@loupe.invalid GIT_COMMITTER_DATE="2024-04-07T00:00:00Z"
    git init -q -b main
    git add -A
    git -c commit.gpgsign=false commit -q -m "$1"
}

corpus_ok() {  # name sha
    [[ -d "$corpora/$1/.git" && -f "$corpora/.stamp-$1" && "$(cat "$corpora/.stamp-$1")" == "$2 layout $LAYOUT" ]]
}
corpus_done() {  # name sha
    echo "$2 layout $LAYOUT" > "$corpora/.stamp-$1"
    echo "corpus written: $corpora/$1 ($(git -C "$corpora/$1" ls-files | wc -l) files)" >&2
}

pyright_config() {
    cat > pyrightconfig.json <<'JSON'
{
  "include": ["."],
  "typeCheckingMode": "basic"
}
JSON
}

# --- the language servers -------------------------------------------------------------------
nm="$refactor_dir/node_modules"
want_versions="$(cd "$refactor_dir" && node -e 'const p=require("./package.json").dependencies; console.log(Object.keys(p).sort().map(k=>k+"@"+p[k]).join(" "))')"
have_versions="$(cd "$refactor_dir" && node -e 'const p=require("./package.json").dependencies; console.log(Object.keys(p).sort().map(k=>{try{return k+"@"+require("./node_modules/"+k+"/package.json").version}catch(e){return k+"@none"}}).join(" "))')"
if [[ "$want_versions" != "$have_versions" ]]; then
    echo "installing $want_versions into $nm (npm ci) ..." >&2
    (cd "$refactor_dir" && npm ci --silent --no-audit --no-fund >&2)
fi

if ! rust-analyzer --version >/dev/null 2>&1 || [[ ! -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]]; then
    echo "adding rust-analyzer and rust-src with rustup ..." >&2
    rustup component add rust-analyzer rust-src >&2
fi
rust_analyzer="$(rustup which rust-analyzer 2>/dev/null || command -v rust-analyzer)"

# --- the corpora ----------------------------------------------------------------------------
# Flask: the tokens bench's sdist when it is there, else PyPI.
if ! corpus_ok flask "$FLASK_SHA256"; then
    sdist="$downloads/flask-$FLASK_VERSION.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        tokens_sdist="$repo/bench/corpora/tokens/.downloads/flask-$FLASK_VERSION.tar.gz"
        if [[ -f "$tokens_sdist" ]]; then
            cp "$tokens_sdist" "$sdist"
        else
            pip download --quiet --no-binary :all: --no-deps --dest "$downloads" "flask==$FLASK_VERSION" >&2
        fi
    fi
    check_sha "$sdist" "$FLASK_SHA256"
    rm -rf "$corpora/flask" "$corpora/.tmp" && mkdir -p "$corpora/.tmp"
    tar --no-same-owner -xzf "$sdist" -C "$corpora/.tmp"
    mv "$corpora/.tmp/flask-$FLASK_VERSION" "$corpora/flask"
    rm -rf "$corpora/.tmp"
    (cd "$corpora/flask" && pyright_config && commit_corpus "flask $FLASK_VERSION sdist")
    corpus_done flask "$FLASK_SHA256"
fi

if ! corpus_ok django "$DJANGO_SHA256"; then
    sdist="$(ls "$downloads"/[Dd]jango-"$DJANGO_VERSION".tar.gz 2>/dev/null | head -n1 || true)"
    if [[ -z "$sdist" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$downloads" "django==$DJANGO_VERSION" >&2
        sdist="$(ls "$downloads"/[Dd]jango-"$DJANGO_VERSION".tar.gz | head -n1)"
    fi
    check_sha "$sdist" "$DJANGO_SHA256"
    rm -rf "$corpora/django" "$corpora/.tmp" && mkdir -p "$corpora/.tmp"
    tar --no-same-owner -xzf "$sdist" -C "$corpora/.tmp"
    mv "$corpora/.tmp/"[Dd]jango-"$DJANGO_VERSION" "$corpora/django"
    rm -rf "$corpora/.tmp"
    (cd "$corpora/django" && pyright_config && commit_corpus "django $DJANGO_VERSION sdist")
    corpus_done django "$DJANGO_SHA256"
fi

if ! corpus_ok query-core "$QUERY_CORE_SHA256"; then
    tgz="$downloads/tanstack-query-core-$QUERY_CORE_VERSION.tgz"
    if [[ ! -f "$tgz" ]]; then
        (cd "$downloads" && npm pack --silent "@tanstack/query-core@$QUERY_CORE_VERSION" >/dev/null)
    fi
    check_sha "$tgz" "$QUERY_CORE_SHA256"
    rm -rf "$corpora/query-core" "$corpora/.tmp" && mkdir -p "$corpora/.tmp" "$corpora/query-core"
    tar --no-same-owner -xzf "$tgz" -C "$corpora/.tmp"
    mv "$corpora/.tmp/package/src" "$corpora/.tmp/package/package.json" "$corpora/.tmp/package/LICENSE" "$corpora/query-core/"
    rm -rf "$corpora/.tmp"
    cat > "$corpora/query-core/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "lib": ["ES2022", "DOM"],
    "strict": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["src"]
}
JSON
    (cd "$corpora/query-core" && commit_corpus "@tanstack/query-core $QUERY_CORE_VERSION (npm), src only")
    corpus_done query-core "$QUERY_CORE_SHA256"
fi

if ! corpus_ok bytes "$BYTES_SHA256"; then
    crate="$downloads/bytes-$BYTES_VERSION.crate"
    if [[ ! -f "$crate" ]]; then
        cargo_home="${CARGO_HOME:-$HOME/.cargo}"
        find_crate() { compgen -G "$cargo_home/registry/cache/*/bytes-$BYTES_VERSION.crate" | head -n 1 || true; }
        cached="$(find_crate)"
        if [[ -z "$cached" ]]; then
            # A throwaway package whose only dependency is the crate; `cargo fetch` downloads it
            # (Cargo checks the registry's checksum).
            tmp="$(mktemp -d)"
            mkdir -p "$tmp/src" && : > "$tmp/src/lib.rs"
            printf '[package]\nname = "loupe-bench-refactor-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nbytes = "=%s"\n\n[workspace]\n' \
                "$BYTES_VERSION" > "$tmp/Cargo.toml"
            cargo fetch --quiet --manifest-path "$tmp/Cargo.toml" >&2
            rm -rf "$tmp"
            cached="$(find_crate)"
            [[ -n "$cached" ]] || { echo "$bench: cargo fetch left no bytes-$BYTES_VERSION.crate" >&2; exit 1; }
        fi
        cp "$cached" "$crate"
    fi
    check_sha "$crate" "$BYTES_SHA256"
    rm -rf "$corpora/bytes" "$corpora/.tmp" && mkdir -p "$corpora/.tmp"
    tar --no-same-owner -xzf "$crate" -C "$corpora/.tmp"
    mv "$corpora/.tmp/bytes-$BYTES_VERSION" "$corpora/bytes"
    rm -rf "$corpora/.tmp"
    printf '\n# added by bench/refactor: keep this copy out of the loupe workspace around it\n[workspace]\n' >> "$corpora/bytes/Cargo.toml"
    printf 'target/\n' > "$corpora/bytes/.gitignore"
    # Its dependencies (the crate ships Cargo.lock), so that rust-analyzer's `cargo metadata`
    # finds them all in Cargo's cache.
    cargo fetch --quiet --locked --manifest-path "$corpora/bytes/Cargo.toml" >&2
    (cd "$corpora/bytes" && commit_corpus "bytes $BYTES_VERSION crate")
    corpus_done bytes "$BYTES_SHA256"
fi

# --- loupe ----------------------------------------------------------------------------------
LOUPE="${LOUPE:-$repo/target/release/loupe}"
[[ "$LOUPE" == /* ]] || LOUPE="$PWD/$LOUPE"
if [[ ! -x "$LOUPE" ]]; then
    [[ "$LOUPE" == "$repo/target/release/loupe" ]] || { echo "$bench: LOUPE=$LOUPE is not an executable" >&2; exit 1; }
    (cd "$repo" && cargo build --release --locked -p loupe >&2)
fi

# --- what the report says it measured -------------------------------------------------------
commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ "$LOUPE" == "$repo/target/release/loupe" ]]; then
    built="built from this checkout ($commit$(git -C "$repo" diff --quiet HEAD -- crates Cargo.lock 2>/dev/null || echo ', with uncommitted changes'))"
else
    built="${LOUPE_COMMIT:+commit $LOUPE_COMMIT, }LOUPE=$LOUPE"
fi
npm_version() { node -p "require('$nm/$1/package.json').version"; }
servers_meta="pyright $(npm_version pyright), typescript-language-server $(npm_version typescript-language-server) with typescript $(npm_version typescript) (npm, bench/refactor/package-lock.json), $("$rust_analyzer" --version) (rustup, with rust-src; node $(node --version))"
loupe_meta="$("$LOUPE" --version), $built, sha256 $(sha256sum "$LOUPE" | cut -c1-12)"
corpora_meta="Flask $FLASK_VERSION sdist (PyPI, sha256 ${FLASK_SHA256:0:12}); Django $DJANGO_VERSION sdist (PyPI, sha256 ${DJANGO_SHA256:0:12}); @tanstack/query-core $QUERY_CORE_VERSION (npm, sha256 ${QUERY_CORE_SHA256:0:12}); bytes $BYTES_VERSION (crates.io, sha256 ${BYTES_SHA256:0:12})"
