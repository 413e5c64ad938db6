#!/usr/bin/env bash
# Fetches the soak's corpus: the Django 5.2.8 sdist from PyPI (`pip download --no-binary :all:
# --no-deps`, pip checks PyPI's hash; the archive is also checked against a pinned SHA-256),
# unpacked into bench/corpora/soak/django-5.2.8. This copy stays pristine: `soak.py` copies it
# into its work directory, makes it a git repository with one commit (so `diff_preview` has a
# HEAD) and runs there. Idempotent: a present, matching corpus is kept.
set -euo pipefail

VERSION=5.2.8
SHA256=23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base="$here/../corpora/soak"
out="$base/django-$VERSION"
sdist="$base/.downloads/django-$VERSION.tar.gz"
stamp="$base/.stamp-django-$VERSION"

if [[ -d "$out" && -f "$stamp" && "$(cat "$stamp")" == "$SHA256" ]]; then
    echo "corpus up to date: $out"
    exit 0
fi
mkdir -p "$base/.downloads"
if [[ ! -f "$sdist" ]]; then
    pip download --quiet --no-binary :all: --no-deps --dest "$base/.downloads" "django==$VERSION" >&2
fi
got="$(sha256sum "$sdist" | cut -d' ' -f1)"
if [[ "$got" != "$SHA256" ]]; then
    echo "fetch-corpus: $sdist has SHA-256 $got, expected $SHA256" >&2
    exit 1
fi
rm -rf "$out" "$base/.tmp" && mkdir -p "$base/.tmp"
tar -xzf "$sdist" -C "$base/.tmp"
mv "$base/.tmp/django-$VERSION" "$out"
rm -rf "$base/.tmp"
echo "$SHA256" > "$stamp"
echo "corpus written: $out ($(find "$out" -type f | wc -l) files, $(du -sm "$out" | cut -f1) MB)"
