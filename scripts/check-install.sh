#!/usr/bin/env bash
# The official clients judge what `loupe install` writes:
#   scripts/check-install.sh REPOSITORY [LOUPE]
# In a home directory of its own (nothing of the user's is touched), installs loupe into Claude
# Code (user scope, then project scope) and Codex, and asks each CLI about it: `claude mcp list`
# must show loupe connected (it starts `loupe serve` and initializes), `codex mcp list` must
# parse the config and list loupe. Then uninstalls and asks again: loupe must be gone and every
# file as it was. The CLIs come from npm (@anthropic-ai/claude-code, @openai/codex) into a
# scratch prefix unless they are on PATH; neither needs an account for these commands.
set -euo pipefail
cd "$(dirname "$0")/.."

repo="$(realpath "${1:?usage: scripts/check-install.sh REPOSITORY [LOUPE]}")"
loupe="$(realpath "${2:-target/release/loupe}")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config"
unset CODEX_HOME LOUPE_ROOT
mkdir -p "$HOME"

for cli in claude:@anthropic-ai/claude-code codex:@openai/codex; do
    name=${cli%%:*}
    if ! command -v "$name" >/dev/null; then
        npm install --silent --prefix "$work/npm" "${cli#*:}" >/dev/null
        export PATH="$work/npm/node_modules/.bin:$PATH"
    fi
done
echo "claude $(claude --version | head -1); codex $(codex --version 2>/dev/null | head -1)"

failures=0
check() { # NAME, then a command that must succeed
    local name=$1; shift
    if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}
connected() { (cd "$repo" && claude mcp list 2>&1) | grep -q "^loupe: .* - ✔ Connected"; }
listed_by_codex() { (cd "$repo" && codex mcp list 2>/dev/null) | grep -q "^loupe  *$loupe  *serve"; }
absent() { ! (cd "$repo" && claude mcp list 2>&1 && codex mcp list 2>/dev/null) | grep -q "^loupe"; }
# The user's own settings, which must survive: another server in each client.
printf '{\n  "mcpServers": {"other": {"command": "true"}}\n}\n' > "$HOME/.claude.json"
mkdir -p "$HOME/.codex" && printf '# mine\n[mcp_servers.other]\ncommand = "true"\n' > "$HOME/.codex/config.toml"
(cd "$repo" && claude mcp list >/dev/null 2>&1 || true) # let Claude Code add its own keys first
cp "$HOME/.codex/config.toml" "$work/codex.before"

(cd "$repo" && "$loupe" install claude-code codex --yes --command "$loupe")
check "claude mcp list: loupe connected (user scope)" connected
check "codex mcp list: loupe listed" listed_by_codex
check "a second install changes nothing" \
    bash -c "cd '$repo' && '$loupe' install claude-code codex --command '$loupe' | tail -1 | grep -qx 'nothing to change'"
(cd "$repo" && "$loupe" uninstall claude-code codex --yes)
check "after uninstall neither client lists loupe" absent
check "the Codex config is as it was" cmp -s "$HOME/.codex/config.toml" "$work/codex.before"
check "the other Claude Code server is kept" bash -c "grep -q '\"other\"' '$HOME/.claude.json'"

# Project scope: .mcp.json, approved in .claude/settings.local.json.
status_before=$(cd "$repo" && git status --porcelain --ignored -- .mcp.json .claude 2>/dev/null || true)
(cd "$repo" && "$loupe" install claude-code --scope project --yes --command "$loupe")
check "claude mcp list: loupe connected (project scope)" connected
(cd "$repo" && "$loupe" uninstall claude-code --scope project --yes)
check "after uninstall the project is as it was" \
    test "$(cd "$repo" && git status --porcelain --ignored -- .mcp.json .claude 2>/dev/null || true)" = "$status_before"
check "after uninstall Claude Code lists no loupe" absent

echo "$failures failure(s)"
exit $((failures > 0))
