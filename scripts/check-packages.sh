#!/usr/bin/env bash
# Installs the Linux x86_64 packages scripts/package.sh built, as a user without Rust would, and
# drives the installed commands with the official MCP Python SDK:
#   scripts/check-packages.sh REPOSITORY
# Each install goes into a fresh directory (a virtual environment, a pipx home, a uv tool dir,
# an npm prefix) with no `cargo` or `rustc` on PATH, from the local files only (no index is
# asked: nothing is published yet). Every installed command must answer `--version`, and
# `serve` through it must pass bench/clients/python_sdk_check.py (initialize, every tool, the
# refusals). Needs python3 with `mcp>=2`, pipx and uv (PyPI), node and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

repo="$(realpath "${1:?usage: scripts/check-packages.sh REPOSITORY}")"
packages="$PWD/target/packages"
wheel=$(ls "$packages"/wheels/loupe_mcp-*x86_64*.whl)
launcher=$(ls "$packages"/npm/loupe-mcp-[0-9]*.tgz)
platform=$(ls "$packages"/npm/loupe-mcp-linux-x64-*.tgz)
python=$(python3 -c 'import sys; print(sys.executable)')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A PATH with the system's tools and the installers, and none of Rust's.
mkdir -p "$work/tools"
for tool in pipx uv node npm; do
    real=$( (command -v pyenv >/dev/null && pyenv which "$tool" 2>/dev/null) || command -v "$tool")
    ln -s "$real" "$work/tools/$tool"
done
clean_path="$work/tools:/usr/local/bin:/usr/bin:/bin"
for tool in cargo rustc; do
    if PATH="$clean_path" command -v "$tool" >/dev/null; then
        echo "$tool is on the clean PATH ($clean_path); this check needs a machine view without it" >&2
        exit 2
    fi
done

failures=0
check() { # name, command...: --version, then the SDK check through `serve`
    local name=$1
    shift
    local version
    if ! version=$(PATH="$clean_path" "$@" --version 2>&1); then
        echo "FAIL $name: --version: $version"
        failures=$((failures + 1))
        return
    fi
    echo "ok   $name: --version says '$version'"
    if PATH="$clean_path" "$python" bench/clients/python_sdk_check.py "$1" "$repo" >"$work/$name.log" 2>&1; then
        echo "ok   $name: serve passes bench/clients/python_sdk_check.py ($(grep -c '^>>> ' "$work/$name.log") calls, $(tail -1 "$work/$name.log"))"
    else
        echo "FAIL $name: serve: see below"
        tail -20 "$work/$name.log"
        failures=$((failures + 1))
    fi
}

echo "== the wheel: $(basename "$wheel")"
PATH="$clean_path" "$python" -m venv "$work/venv"
PATH="$clean_path" "$work/venv/bin/pip" install --quiet --no-index "$wheel"
check "venv loupe" "$work/venv/bin/loupe"
check "venv loupe-mcp" "$work/venv/bin/loupe-mcp"

PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/pipx-bin" PATH="$clean_path" pipx install --quiet --pip-args=--no-index "$wheel"
check "pipx loupe-mcp" "$work/pipx-bin/loupe-mcp"

# What `uvx loupe-mcp serve` will run once published: the package's command of its own name.
UV_TOOL_DIR="$work/uv-tools" UV_CACHE_DIR="$work/uv-cache" PATH="$clean_path" \
    uv tool install --quiet --offline --tool-bin-dir "$work/uv-bin" "$wheel" 2>/dev/null ||
    UV_TOOL_DIR="$work/uv-tools" UV_CACHE_DIR="$work/uv-cache" UV_TOOL_BIN_DIR="$work/uv-bin" PATH="$clean_path" \
        uv tool install --quiet --offline "$wheel"
check "uv tool loupe-mcp" "$work/uv-bin/loupe-mcp"

echo "== npm: $(basename "$launcher") and $(basename "$platform")"
# The launcher names every platform package as optional; the other four are not published yet,
# so npm, asked offline, skips them as it skips every optional package it cannot install.
PATH="$clean_path" npm install --silent --offline --no-audit --no-fund --prefix "$work/npm" "$platform" "$launcher"
check "npm loupe-mcp" "$work/npm/node_modules/.bin/loupe-mcp"
check "npm loupe" "$work/npm/node_modules/.bin/loupe"

if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "every installed command answered and served"
