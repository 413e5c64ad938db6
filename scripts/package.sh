#!/usr/bin/env bash
# Builds loupe's release binaries and the packages that carry them, into target/packages/:
#   wheels/  one Python wheel per platform (maturin, `bindings = "bin"`), distribution `loupe-mcp`
#   npm/     `loupe-mcp` (a launcher, one optional dependency per platform) and one package per
#            platform holding its binary, each packed as a .tgz
#   bin/     the bare binaries, named per target, with SHA256SUMS
#
#   scripts/package.sh [target ...]
#
# Targets (default: the ones this machine can link): x86_64-unknown-linux-musl and
# aarch64-unknown-linux-musl (static, linked by zig through `maturin --zig`), x86_64-pc-windows-gnu
# (mingw-w64);
# x86_64-apple-darwin and aarch64-apple-darwin link only on macOS, where the release workflow
# runs this script. maturin compiles each binary once (profile `dist`: stripped, no debug info);
# the npm packages and bin/ take that same binary.
#
# Needs: maturin and, for the Linux targets, zig (`pip install maturin ziglang`),
# mingw-w64 for Windows, npm for packing.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
out="$PWD/target/packages"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-pc-windows-gnu)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
rm -rf "$out"
mkdir -p "$out/wheels" "$out/npm" "$out/bin"

# npm's names for a Rust target: package suffix, `os`, `cpu`, binary name.
npm_platform() {
    case "$1" in
        x86_64-unknown-linux-musl) echo "linux-x64 linux x64 loupe" ;;
        aarch64-unknown-linux-musl) echo "linux-arm64 linux arm64 loupe" ;;
        x86_64-apple-darwin) echo "darwin-x64 darwin x64 loupe" ;;
        aarch64-apple-darwin) echo "darwin-arm64 darwin arm64 loupe" ;;
        x86_64-pc-windows-gnu | x86_64-pc-windows-msvc) echo "win32-x64 win32 x64 loupe.exe" ;;
        *) echo "unknown target $1" >&2; exit 2 ;;
    esac
}

for target in "${targets[@]}"; do
    read -r suffix os cpu binary <<<"$(npm_platform "$target")"
    echo "== $target"
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
    args=(build --locked --target "$target" --out "$out/wheels")
    case "$target" in
        # Static binaries run on every distribution: tagged for glibc and musl systems alike.
        *-linux-musl) args+=(--zig --compatibility manylinux_2_17 musllinux_1_2 --auditwheel skip) ;;
    esac
    (cd packaging/pypi && maturin "${args[@]}")
    built="$CARGO_TARGET_DIR/$target/dist/$binary"
    [ -x "$built" ] || { echo "maturin left no binary at $built" >&2; exit 1; }
    cp "$built" "$out/bin/loupe-$version-$target${binary#loupe}"

    package="$out/npm/loupe-mcp-$suffix"
    mkdir -p "$package/bin"
    cp "$built" "$package/bin/$binary"
    python3 - "$package" "$suffix" "$os" "$cpu" "$version" <<'EOF'
import json, sys
package, suffix, os_name, cpu, version = sys.argv[1:]
json.dump({
    "name": f"loupe-mcp-{suffix}",
    "version": version,
    "description": f"The loupe binary for {os_name} {cpu}; installed by the loupe-mcp package.",
    "license": "MIT OR Apache-2.0",
    "os": [os_name],
    "cpu": [cpu],
    "files": ["bin/"],
    "preferUnplugged": True,
}, open(f"{package}/package.json", "w"), indent=2)
EOF
done

# The launcher package: its optional dependencies are every platform the release publishes, of
# this version, whichever were built here (npm installs the one matching the machine and skips
# the rest).
main="$out/npm/loupe-mcp"
cp -r packaging/npm/loupe-mcp "$main"
python3 - "$main" "$version" <<'EOF'
import json, sys
main, version = sys.argv[1:]
manifest = json.load(open(f"{main}/package.json"))
manifest["version"] = version
platforms = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"]
manifest["optionalDependencies"] = {f"loupe-mcp-{platform}": version for platform in platforms}
json.dump(manifest, open(f"{main}/package.json", "w"), indent=2)
EOF
(cd "$out/npm" && for dir in */; do npm pack --silent "./$dir" >/dev/null; done)
(cd "$out/bin" && sha256sum -- * >SHA256SUMS)
ls -l "$out/wheels" "$out/npm"/*.tgz "$out/bin"
