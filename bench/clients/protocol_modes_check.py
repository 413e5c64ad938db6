"""Drive `loupe serve` with the official MCP Python SDK 2.x `Client` in each of its protocol
modes, over stdio and over Streamable HTTP, and check what a client of each mode gets:

- `legacy`: the `initialize` handshake, answered with 2025-11-25;
- `auto`: `server/discover` first, which loupe answers, so 2026-07-28 (no fallback);
- `2026-07-28`: the per-request `_meta` lifecycle adopted directly.

In every one: the five tools are listed, a read without a ref is refused by the gate and each
of its `next_calls` replays, a search's `candidate_id` reads in a later request (over stateless
HTTP too: §9.1 keys that session on the token and the client's `clientInfo`), and
`manage status` names the root given. Exit status 1 when any check fails.

Usage: python bench/clients/protocol_modes_check.py LOUPE_BINARY REPOSITORY
(the SDK: `pip install "mcp>=2.3"`; the repository is any checkout, e.g. flask).
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters
from mcp.types import Implementation

MODES = [("legacy", "2025-11-25"), ("auto", "2026-07-28"), ("2026-07-28", "2026-07-28")]
TOOLS = ["read", "search", "analyze", "edit", "manage"]


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def structured(result):
    return result.structured_content or {}


def text(result):
    return "".join(getattr(block, "text", "") for block in result.content)


async def exercise(client, expected_version, root):
    """The checks of one connection; returns a one-line summary."""
    version = client.protocol_version
    check(version == expected_version, f"negotiated {version}, expected {expected_version}")
    names = [tool.name for tool in (await client.list_tools()).tools]
    check(names == TOOLS, f"tools/list gave {names}")

    # The gate refuses a whole-file read without a ref; each next_calls entry replays as given.
    refused = await client.call_tool("read", {"mode": "file", "target": "src/flask/app.py"})
    envelope = structured(refused)
    check(refused.is_error, f"a read without a ref was served: {text(refused)[:200]}")
    code = envelope.get("error", {}).get("code")
    check(code in ("SEARCH_FIRST_REQUIRED", "SEARCH_REF_REQUIRED"), f"refusal code {code}")
    replays = envelope.get("meta", {}).get("next_calls") or envelope.get("next_calls") or []
    check(replays, f"the refusal offers no next_calls: {json.dumps(envelope)[:300]}")
    for call in replays:
        replay = await client.call_tool(call["tool"], call["arguments"])
        check(not replay.is_error, f"replaying {call} failed: {text(replay)[:300]}")

    # A search's ref reads in a later request (the same session).
    found = await client.call_tool("search", {"query": "register_blueprint", "type": "symbol"})
    hits = structured(found).get("meta", {}).get("results") or []
    check(hits, f"search found nothing: {text(found)[:300]}")
    read = await client.call_tool("read", {"candidate_id": hits[0]["candidate_id"]})
    check(not read.is_error, f"reading the search's candidate failed: {text(read)[:300]}")
    check("register_blueprint" in text(read), "the candidate's read does not show the symbol")

    status = await client.call_tool("manage", {"command": "status"})
    first = text(status).splitlines()[0] if text(status) else ""
    check(os.path.realpath(root) in first, f"manage status names another root: {first}")
    session = (status.meta or {}).get("loupe/session_id")
    return f"{version}; {len(replays)} next_calls replayed; candidate read; session {session or 'connection'}"


def identity(mode):
    # Over stateless HTTP the session is keyed on this (§9.1): one per mode keeps them apart.
    return Implementation(name=f"protocol-modes-check-{mode}", version="1.0")


async def run_stdio(binary, root, mode, expected):
    params = StdioServerParameters(
        command=binary, args=["serve", "--root", root], env={**os.environ, "LOUPE_STRUCTURED_CONTENT": "full"}
    )
    async with Client(params, mode=mode, client_info=identity(mode)) as client:
        return await exercise(client, expected, root)


async def run_http(url, root, mode, expected):
    async with Client(url, mode=mode, client_info=identity(mode)) as client:
        return await exercise(client, expected, root)


def start_http(binary, root, index_dir):
    env = {**os.environ, "LOUPE_STRUCTURED_CONTENT": "full"}
    env.pop("LOUPE_TOKEN", None)
    process = subprocess.Popen(
        [binary, "serve", "--http", "127.0.0.1:0", "--root", root, "--index-dir", index_dir],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        match = re.search(r"serving MCP at (http://\S+)", line)
        if match:
            return process, match.group(1)
        if not line and process.poll() is not None:
            break
    process.kill()
    raise Failed("loupe serve --http did not say where it serves")


async def main(binary, root):
    failures = 0
    results = []
    with tempfile.TemporaryDirectory() as index_dir:
        server, url = start_http(binary, root, index_dir)
        try:
            for transport in ("stdio", "http"):
                for mode, expected in MODES:
                    # A fresh connection per mode, with a client identity of its own.
                    started = time.monotonic()
                    try:
                        if transport == "stdio":
                            summary = await run_stdio(binary, root, mode, expected)
                        else:
                            summary = await run_http(url, root, mode, expected)
                        outcome = "ok"
                    except Exception as error:  # noqa: BLE001 - every failure is reported, then counted
                        failures += 1
                        outcome, summary = "FAIL", f"{type(error).__name__}: {error}"
                    elapsed = time.monotonic() - started
                    results.append((transport, mode, outcome, elapsed, summary))
                    print(f"{transport:5} {mode:10} {outcome:4} {elapsed:5.1f}s  {summary}", flush=True)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
    print(f"{len(results) - failures}/{len(results)} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))
