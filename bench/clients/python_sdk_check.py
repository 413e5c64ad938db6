"""Drive `loupe serve` over stdio with the official MCP Python SDK (2.x `ClientSession`), as a
client would: list the tools, check every schema is well formed, call each tool once, and
print both faces a client may hand the model (the text, and JSON of structuredContent) with
their sizes. Exit status 1 when a call that should succeed fails.

Usage: python bench/clients/python_sdk_check.py LOUPE_BINARY REPOSITORY [TOKEN_COUNTER]
(install the SDK with `pip install "mcp>=2"`). TOKEN_COUNTER is the o200k counter loupe uses
(`cargo build --release -p loupe-core --example count_tokens`, then
`target/release/examples/count_tokens`): with it, both faces are counted in tokens and the
structured face's ratio to the text face is printed per call and in all.
"""

import asyncio
import json
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


CALLS = [
    ("search", {"query": "register_blueprint", "type": "symbol"}),
    ("read", {"mode": "snippet", "target": "src/flask/app.py", "start_line": 1, "end_line": 12}),
    ("search", {"query": "blueprints.py", "type": "file"}),
    ("read", {"mode": "outline", "target": "src/flask/blueprints.py", "candidate_id": "FROM_LAST_SEARCH"}),
    ("search", {"query": "url_for", "type": "text"}),
    ("read", {"candidate_id": "FROM_LAST_SEARCH"}),
    ("read", {"mode": "file", "target": "src/flask/helpers.py", "offset": 1, "limit": 40}),
    ("search", {"query": "json/", "type": "directory"}),
    ("read", {"candidate_id": "FROM_LAST_SEARCH"}),
    ("read", {"mode": "diff_preview", "target": "."}),
    ("read", {"mode": "diff_preview", "target": "src/flask/app.py", "against": "HEAD..."}),
    ("read", {"mode": "diff_preview", "path": "src/flask/config.py", "target": "Config.from_file", "against": "HEAD"}),
    ("read", {"mode": "diff_preview", "target": ".", "against": "HEAD~1..."}),
    ("analyze", {"mode": "impact", "target": "HEAD~1...", "target_type": "range", "max_nodes": 20}),
    ("read", {"mode": "symbol", "target": "Config.from_file", "revision": "HEAD"}),
    ("read", {"mode": "outline", "target": "src/flask/config.py", "revision": "main"}),
    ("analyze", {"mode": "calls", "target": "url_for", "path": "src/flask/helpers.py", "direction": "upstream", "max_nodes": 10}),
    ("edit", {"edits": [{"path": "src/flask/app.py", "operation": "insert", "line": 0, "new_string": "# x\n"}], "dry_run": True}),
    ("edit", {"edits": [{"operation": "rename_symbol", "symbol": "get_load_dotenv", "new_name": "should_load_dotenv"}], "dry_run": True}),
    ("edit", {"edits": [{"operation": "replace_symbol", "symbol": "Config.__repr__", "new_body": "return f\"<Config {len(self)}>\""},
                        {"operation": "insert_after_symbol", "symbol": "Config.__repr__", "new_string": "def size(self) -> int:\n    return len(self)"}],
              "dry_run": True}),
    ("edit", {"edits": [{"operation": "delete_symbol", "symbol": "_path_is_ancestor"}], "dry_run": True}),
    ("manage", {"command": "status"}),
]

REFUSED = [
    ("read", {"mode": "file", "target": "src/flask/app.py", "colour": "red"}, "INVALID_ARGS"),
    ("search", {"query": "q" * 5000}, "INVALID_ARGS"),
    ("read", {"mode": "snippet", "target": ".git/config", "start_line": 1, "end_line": 5}, "PATH_EXCLUDED"),
    ("read", {"mode": "diff_preview", "target": ".", "against": "mian..."}, "INVALID_ARGS"),
    ("read", {"mode": "diff_preview", "path": "src/flask/config.py", "target": "Config.no_such", "against": "HEAD"}, "SYMBOL_NOT_FOUND"),
    ("analyze", {"mode": "calls", "target": "HEAD...", "target_type": "range"}, "INVALID_ARGS"),
    ("read", {"mode": "snippet", "target": "src/flask/app.py", "start_line": 1, "end_line": 5, "revision": "v9"}, "INVALID_ARGS"),
    ("edit", {"edits": [{"operation": "rename_symbol", "symbol": "get_load_dotenv", "new_name": "def"}], "dry_run": True}, "INVALID_ARGS"),
    ("edit", {"edits": [{"operation": "delete_symbol", "symbol": "get_load_dotenv"}], "dry_run": True}, "SYMBOL_IN_USE"),
    ("edit", {"edits": [{"operation": "rename_symbol", "symbol": "Config.from_file", "new_name": "from_mapping"}], "dry_run": True}, "NAME_COLLISION"),
]


def tokens(counter, text):
    if not counter:
        return None
    return int(subprocess.run([counter], input=text.encode(), capture_output=True, check=True).stdout)


async def main(binary: str, repository: str, counter=None) -> int:
    params = StdioServerParameters(command=binary, args=["serve", "--root", repository])
    failures = 0
    totals = [0, 0]
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            listing = json.dumps([tool.model_dump(mode="json", exclude_none=True) for tool in listed.tools])
            print(f"tools/list: {len(listed.tools)} tools, {len(listing)} bytes")
            for tool in listed.tools:
                properties = tool.input_schema.get("properties", {})
                missing = [name for name, schema in properties.items() if not schema.get("description")]
                print(f"  {tool.name}: {len(properties)} parameters, required {tool.input_schema.get('required')}")
                if missing:
                    failures += 1
                    print(f"    no description: {missing}")
            last_hits = []

            async def progress(done, total, message):
                print(f"  progress {done}/{total} {message or ''}")

            for name, arguments in CALLS:
                if arguments.get("candidate_id") == "FROM_LAST_SEARCH":
                    # A symbol hit's row carries its id; a text hit's is its path and line, a
                    # file's its path (§6): read by what the row gives.
                    row = last_hits[0]
                    rest = {key: value for key, value in arguments.items() if key != "candidate_id"}
                    if len(row) == 4:
                        arguments = dict(rest, candidate_id=row[2])
                    elif len(row) >= 3:
                        arguments = {"mode": "snippet", "target": row[0], "start_line": max(1, row[1] - 3), "end_line": row[1] + 3}
                    else:
                        arguments = {"mode": "outline", **rest, "target": row[0]}
                # A progress token lets the server wait for its first index build (§7).
                result = await session.call_tool(name, arguments, progress_callback=progress)
                if name == "search":
                    # A row per hit (§3.3): `[path, line, candidate_id, shown]` for a symbol,
                    # `[path, line, shown, …]` for a file's text hits, the path alone for a file.
                    rows = (result.structured_content or {}).get("results") or []
                    last_hits = [[hit] if isinstance(hit, str) else hit for hit in rows if isinstance(hit, (list, str))]
                text = result.content[0].text if result.content else ""
                # What Claude Code and Codex hand the model: JSON.stringify(structuredContent).
                structured = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
                print(f"\n>>> {name} {json.dumps(arguments)}")
                print(f"text {len(text)} chars, structuredContent {len(structured)} chars, isError={result.is_error}")
                text_tokens, json_tokens = tokens(counter, text), tokens(counter, structured)
                if text_tokens is not None:
                    totals[0] += text_tokens
                    totals[1] += json_tokens
                    bound = text_tokens * 1.3 + 40
                    print(f"tokens: text {text_tokens}, structured {json_tokens} ({json_tokens / text_tokens:.2f}×; bound {bound:.0f})")
                print(text[:600])
                if result.is_error:
                    failures += 1
            for name, arguments, code in REFUSED:
                result = await session.call_tool(name, arguments)
                got = (result.structured_content or {}).get("error", {}).get("code")
                text = result.content[0].text if result.content else ""
                print(f"\n>>> {name} (refused) → {got}: {text.splitlines()[0] if text else ''}")
                if got != code or len(text) > 1000:
                    failures += 1
            # The workflows as prompts: listed, each expanded with its arguments, a bad one refused.
            prompts = (await session.list_prompts()).prompts
            print(f"\nprompts/list: {[prompt.name for prompt in prompts]}")
            samples = {"symbol": "url_for", "target": "src/flask/app.py", "old": "url_for", "new": "link_for"}
            for prompt in prompts:
                given = {argument.name: samples[argument.name] for argument in prompt.arguments or [] if argument.required}
                expanded = await session.get_prompt(prompt.name, given)
                text = expanded.messages[0].content.text
                print(f">>> prompt {prompt.name} {given}: {len(text)} chars, first line: {text.splitlines()[0]}")
                if not all(value in text for value in given.values()) or " {" not in text:
                    failures += 1
            try:
                await session.get_prompt("rename", {"old": "a"})
                failures += 1
                print("prompt rename without `new` was not refused")
            except Exception as error:  # McpError
                print(f">>> prompt rename without new (refused): {error}")
    if totals[0]:
        print(f"\nall calls: text {totals[0]} tokens, structured {totals[1]} tokens, {totals[1] / totals[0]:.2f}×")
    print(f"\n{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:4])))
