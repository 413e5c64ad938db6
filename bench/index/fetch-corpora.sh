#!/usr/bin/env bash
# Fetches the corpora of the index benchmark into bench/corpora/index/ and installs the peer
# tools (ripgrep, universal-ctags). Idempotent: a corpus whose stamp matches is left alone.
#
#   bash bench/index/fetch-corpora.sh                 # every corpus
#   bash bench/index/fetch-corpora.sh django zod      # a subset
#
# Corpora, each from a package registry:
#   linux     Debian `linux-source-6.12`, else `linux-source-6.1` (apt-get download, dpkg-deb -x,
#             untar the inner tarball; LINUX_SOURCE_PACKAGE picks one)
#   linux4    four copies of linux (about 350k files, 6 GB), only when named (bench/index/scale.sh)
#   django    the Django sdist from PyPI (pip download --no-binary :all: --no-deps)
#   rust-src  Debian `rust-src`: the rustc source tree it ships (/usr/src/rustc-*: compiler,
#             library, tools, tests)
#   zod, rxjs the npm tarballs (npm pack)
#
# Versions are pinned below; the Debian ones default to what apt offers (Debian's security
# archive drops old kernel builds) and can be pinned with LINUX_DEB_VERSION / RUST_SRC_DEB_VERSION.
# What was fetched is recorded in bench/corpora/index/MANIFEST.tsv.
set -euo pipefail

DJANGO_VERSION="${DJANGO_VERSION:-5.2.8}"
ZOD_VERSION="${ZOD_VERSION:-4.1.12}"
RXJS_VERSION="${RXJS_VERSION:-7.8.2}"
LINUX_DEB_VERSION="${LINUX_DEB_VERSION:-}"
RUST_SRC_DEB_VERSION="${RUST_SRC_DEB_VERSION:-}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
base="$repo/bench/corpora/index"
downloads="$base/.downloads"
stamps="$base/.stamps"
mkdir -p "$downloads" "$stamps"

all=(zod rxjs django rust-src linux)
known=("${all[@]}" linux4)
if [[ $# -gt 0 ]]; then wanted=("$@"); else wanted=("${all[@]}"); fi
for name in "${wanted[@]}"; do
    case " ${known[*]} " in *" $name "*) ;; *) echo "unknown corpus: $name (known: ${known[*]})" >&2; exit 2 ;; esac
done

sudo_if_needed() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_update_once() {
    if [[ $apt_updated -eq 0 ]]; then
        sudo_if_needed apt-get update -qq
        apt_updated=1
    fi
}

# The version apt would download for package $1 (updating the lists once if it knows none).
apt_candidate() {
    local version
    version="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    if [[ -z "$version" || "$version" == "(none)" ]]; then
        apt_update_once
        version="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')"
    fi
    if [[ -z "$version" || "$version" == "(none)" ]]; then
        echo "apt knows no package $1" >&2
        return 1
    fi
    echo "$version"
}

# Downloads package $1 at version $2 into $downloads; prints the .deb path.
apt_fetch() {
    local package="$1" version="$2" deb
    deb="$(ls "$downloads/${package}_${version//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)"
    if [[ -z "$deb" ]]; then
        # apt-get download as root warns that it runs unsandboxed; that is expected here.
        (cd "$downloads" && apt-get download -q "$package=$version" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
        deb="$(ls "$downloads/${package}_${version//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)"
        [[ -n "$deb" ]] || { echo "apt-get download $package=$version failed" >&2; return 1; }
    fi
    echo "$deb"
}

stamp_ok() { [[ -f "$stamps/$1" && "$(cat "$stamps/$1")" == "$2" && -d "$base/$1" ]]; }
stamp_set() { echo "$2" > "$stamps/$1"; }

fetch_tools() {
    local missing=()
    command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
    if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then missing+=(universal-ctags); fi
    if [[ ${#missing[@]} -gt 0 ]]; then
        apt_update_once
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    fi
}

fetch_linux() {
    local package version deb tarball work
    # 6.12 comes from bookworm's security archive; when apt cannot reach it (or it has dropped the
    # build), bookworm's own 6.1 is the tree. LINUX_SOURCE_PACKAGE picks one.
    package="${LINUX_SOURCE_PACKAGE:-}"
    if [[ -z "$package" ]]; then
        for package in linux-source-6.12 linux-source-6.1; do
            apt_candidate "$package" > /dev/null 2>&1 && break
        done
    fi
    version="${LINUX_DEB_VERSION:-$(apt_candidate "$package")}"
    stamp_ok linux "$package $version" && return 0
    deb="$(apt_fetch "$package" "$version")"
    work="$base/.linux.tmp"
    rm -rf "$work" && mkdir -p "$work"
    dpkg-deb -x "$deb" "$work/deb"
    tarball="$(ls "$work"/deb/usr/src/"$package".tar.* | head -n1)"
    echo "untarring $(basename "$tarball") ..." >&2
    tar -xf "$tarball" -C "$work"
    # Debian appends "ignore everything at the top level" (`/*`, `!/debian/`) to the kernel's
    # .gitignore for its packaging repository. Inside a git work tree (this one) that rule hides
    # the whole tree from loupe and rg alike; drop it so the tree has upstream's ignore rules.
    sed -i -e '/^\/\*$/d' -e '/^!\/debian\/$/d' "$work/$package/.gitignore"
    rm -rf "$base/linux"
    mv "$work/$package" "$base/linux"
    rm -rf "$work"
    stamp_set linux "$package $version"
}

# Linux ×4, a monorepo-sized tree for the cost-against-size bench (bench/index/scale.sh): four
# real copies of the linux corpus (not hard links: the page cache holds four times the bytes,
# as it would for a monorepo) under linux4/{a,b,c,d}.
fetch_linux4() {
    local version part
    fetch_linux
    version="$(cat "$stamps/linux") x4"
    stamp_ok linux4 "$version" && return 0
    rm -rf "$base/linux4" "$base/.linux4.tmp" && mkdir -p "$base/.linux4.tmp"
    for part in a b c d; do
        echo "copying linux to linux4/$part ..." >&2
        cp -r "$base/linux" "$base/.linux4.tmp/$part"
    done
    mv "$base/.linux4.tmp" "$base/linux4"
    stamp_set linux4 "$version"
}

fetch_rust_src() {
    local version deb work
    version="${RUST_SRC_DEB_VERSION:-$(apt_candidate rust-src)}"
    stamp_ok rust-src "rust-src $version" && return 0
    deb="$(apt_fetch rust-src "$version")"
    work="$base/.rust-src.tmp"
    rm -rf "$work" && mkdir -p "$work"
    dpkg-deb -x "$deb" "$work"
    rm -rf "$base/rust-src"
    mv "$(ls -d "$work"/usr/src/rustc-* | head -n1)" "$base/rust-src"
    rm -rf "$work"
    stamp_set rust-src "rust-src $version"
}

fetch_django() {
    stamp_ok django "django $DJANGO_VERSION" && return 0
    local sdist="$downloads/django-$DJANGO_VERSION.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        pip download --quiet --no-binary :all: --no-deps --dest "$downloads" "django==$DJANGO_VERSION" >&2
    fi
    rm -rf "$base/django" "$base/.django.tmp" && mkdir -p "$base/.django.tmp"
    tar -xzf "$sdist" -C "$base/.django.tmp"
    mv "$base/.django.tmp/django-$DJANGO_VERSION" "$base/django"
    rm -rf "$base/.django.tmp"
    stamp_set django "django $DJANGO_VERSION"
}

# npm pack $1@$2, unpacked into corpora/index/$1.
fetch_npm() {
    local name="$1" version="$2" tgz
    stamp_ok "$name" "$name $version" && return 0
    tgz="$downloads/$name-$version.tgz"
    if [[ ! -f "$tgz" ]]; then
        (cd "$downloads" && npm pack --silent "$name@$version" >/dev/null 2>&1) || {
            echo "npm pack $name@$version failed" >&2
            return 1
        }
    fi
    rm -rf "$base/$name" "$base/.$name.tmp" && mkdir -p "$base/.$name.tmp"
    tar -xzf "$tgz" -C "$base/.$name.tmp"
    mv "$base/.$name.tmp/package" "$base/$name"
    rm -rf "$base/.$name.tmp"
    stamp_set "$name" "$name $version"
}

fetch_tools
for name in "${wanted[@]}"; do
    echo "fetching $name ..." >&2
    case "$name" in
        linux) fetch_linux ;;
        linux4) fetch_linux4 ;;
        rust-src) fetch_rust_src ;;
        django) fetch_django ;;
        zod) fetch_npm zod "$ZOD_VERSION" ;;
        rxjs) fetch_npm rxjs "$RXJS_VERSION" ;;
    esac
done

# What is there now: one line per corpus, also kept in MANIFEST.tsv.
manifest="$base/MANIFEST.tsv"
printf 'corpus\tversion\tfiles\tMB\tpath\n' > "$manifest"
printf '%-9s %-40s %9s %9s\n' corpus version files MB >&2
for name in "${known[@]}"; do
    [[ -f "$stamps/$name" && -d "$base/$name" ]] || continue
    files="$(find "$base/$name" -type f | wc -l)"
    bytes="$(find "$base/$name" -type f -printf '%s\n' | awk '{s+=$1} END {printf "%.1f", s/1e6}')"
    version="$(cat "$stamps/$name")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$version" "$files" "$bytes" "bench/corpora/index/$name" >> "$manifest"
    printf '%-9s %-40s %9s %9s\n' "$name" "$version" "$files" "$bytes" >&2
done
printf 'ripgrep: %s; ctags: %s\n' "$(rg --version | head -n1)" "$(ctags --version | head -n1)" >&2
