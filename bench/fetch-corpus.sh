#!/usr/bin/env bash
# Fetches the read benchmark's corpus from crates.io: the first 10,000 lines of sqlite3.c, the
# SQLite amalgamation bundled in the crate libsqlite3-sys 0.30.1 (SQLite 3.46.0), written to
# bench/corpora/read/big.c. Cargo downloads the crate (it checks the registry's checksum); the
# file is then taken out of the .crate archive in Cargo's cache and checked against a pinned
# SHA-256, so every run measures the same bytes. Idempotent: a present, matching file is kept.
set -euo pipefail

CRATE=libsqlite3-sys
VERSION=0.30.1
MEMBER="$CRATE-$VERSION/sqlite3/sqlite3.c"
LINES=10000
SHA256=95de37bd82ba7af57c633d126df3dfa6b25c6ba619224f5d5f4e188a965dc8b6

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$here/corpora/read"
out="$dir/big.c"

sha() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$out" && "$(sha "$out")" == "$SHA256" ]]; then
    extra="$(find "$dir" -mindepth 1 ! -name big.c -print -quit)"
    if [[ -z "$extra" ]]; then
        echo "corpus up to date: $out"
        exit 0
    fi
fi

cargo_home="${CARGO_HOME:-$HOME/.cargo}"
find_crate() { compgen -G "$cargo_home/registry/cache/*/$CRATE-$VERSION.crate" | head -n 1 || true; }

crate_file="$(find_crate)"
if [[ -z "$crate_file" ]]; then
    # A throwaway package whose only dependency is the crate; `cargo fetch` downloads it.
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/src"
    : > "$tmp/src/lib.rs"
    cat > "$tmp/Cargo.toml" <<TOML
[package]
name = "loupe-bench-corpus-fetch"
version = "0.0.0"
edition = "2021"

[dependencies]
$CRATE = "=$VERSION"

[workspace]
TOML
    cargo fetch --quiet --manifest-path "$tmp/Cargo.toml"
    crate_file="$(find_crate)"
    [[ -n "$crate_file" ]] || { echo "fetch-corpus: cargo fetch did not leave $CRATE-$VERSION.crate in $cargo_home/registry/cache" >&2; exit 1; }
fi

rm -rf "$dir"
mkdir -p "$dir"
# `head` closes the pipe early; tar then dies of SIGPIPE, which is expected here.
(tar -xzOf "$crate_file" "$MEMBER" || true) | head -n "$LINES" > "$out.tmp"
got="$(sha "$out.tmp")"
if [[ "$got" != "$SHA256" ]]; then
    rm -f "$out.tmp"
    echo "fetch-corpus: $MEMBER (first $LINES lines) has SHA-256 $got, expected $SHA256" >&2
    exit 1
fi
mv "$out.tmp" "$out"
echo "corpus written: $out ($(wc -l < "$out") lines, $(wc -c < "$out") bytes)"
