"""Measure loupe's review of one revision range through the official MCP Python SDK, against
the independent oracle (`oracle.py`, Python's own `ast`) and `git diff` of the same range.

    python bench/review/measure.py --loupe BIN --counter COUNT_TOKENS --repo DIR --range A...B \
        --oracle ORACLE.json --three-dot THREE_DOT.json [--opens 3] [--runs 3] --out OUT.json

(a) recall and precision: the (path, qualified name) pairs loupe names as changed, over every
    page of the review, against the oracle's, both restricted to Python functions, methods and
    classes (loupe's renames and moves count as the removal and the addition the oracle sees);
(b) tokens: the review's first page plus the symbol diffs a reviewer opens (its first `--opens`
    next calls that diff a symbol), on both faces a client may show the model (`content[0].text`
    and JSON of `structuredContent`), against `git diff A...B` (the same range, two-dot when
    the range is two-dot);
(c) three-dot: no symbol changed only on the left side after the fork is named;
(d) time: the first page's wall time through MCP, the first call (nothing of the range
    compared yet) and the best of `--runs` (a review asked again, or paged: the versions'
    comparisons are kept), against `git diff --stat` of the range in the same run.
"""

import argparse
import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters, stdio_client

KINDS = {"function", "method", "constructor", "property", "class"}


def tokens(counter: str, text: str) -> int:
    return int(subprocess.run([counter], input=text.encode(), capture_output=True, check=True).stdout)


def faces(result) -> tuple[str, str]:
    text = result.content[0].text if result.content else ""
    structured = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return text, structured


def named_pairs(files: list) -> set:
    """The (path, name) pairs a review page names, renames and moves as their two halves."""
    pairs = set()
    for entry in files:
        path = entry["path"]
        if not path.endswith(".py"):
            continue
        for symbol in entry.get("symbols", []):
            if symbol["kind"] not in KINDS:
                continue
            change = symbol["change"]
            if change in ("renamed", "moved"):
                pairs.add((path, symbol["name"]))
                old_path = symbol.get("from_file") or entry.get("old_path") or path
                pairs.add((old_path, symbol["from"]))
            else:
                # A removed symbol of a renamed file was in its old path.
                where = entry.get("old_path") or path if change == "removed" else path
                pairs.add((where, symbol["name"]))
    return pairs


async def review(session, arguments: dict):
    started = time.perf_counter()
    result = await session.call_tool("read", arguments)
    return result, time.perf_counter() - started


async def main(args) -> dict:
    params = StdioServerParameters(command=args.loupe, args=["serve", "--root", args.repo])
    report = {"range": args.range}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            # The first call waits for the first index build: a warm-up outside the timing.
            await session.call_tool("manage", {"command": "status"})
            base = {"mode": "diff_preview", "target": ".", "against": args.range}
            # (d) time: best of runs, the index built.
            times = []
            first = None
            for _ in range(args.runs):
                first, seconds = await review(session, base)
                times.append(seconds)
            text, structured = faces(first)
            if first.is_error:
                raise SystemExit(f"the review failed: {text}")
            # (b) the first page plus the symbol diffs a reviewer opens.
            opened = [call for call in (first.structured_content or {}).get("next_calls", [])
                      if call["arguments"].get("path") and call["tool"] == "read"][: args.opens]
            text_tokens, json_tokens = tokens(args.counter, text), tokens(args.counter, structured)
            pages = [{"call": "review, first page", "text": text_tokens, "json": json_tokens}]
            for call in opened:
                result = await session.call_tool(call["tool"], call["arguments"])
                t, j = faces(result)
                pages.append({"call": f"diff {call['arguments']['target']}", "text": tokens(args.counter, t),
                              "json": tokens(args.counter, j), "ok": not result.is_error})
            report["first_page_text"] = text
            report["calls"] = pages
            report["loupe_text"] = sum(page["text"] for page in pages)
            report["loupe_json"] = sum(page["json"] for page in pages)
            # (a) every page, at `full`, for the names.
            named = set()
            arguments = dict(base, metadata="full")
            page_count = 0
            while True:
                result = await session.call_tool("read", arguments)
                meta = (result.structured_content or {}).get("meta", {})
                named |= named_pairs(meta.get("files", []))
                page_count += 1
                cursor = (result.structured_content or {}).get("next_cursor")
                if not cursor or page_count > 200:
                    break
                arguments = dict(base, metadata="full", cursor=cursor)
            report["pages"] = page_count
            report["review_cold_ms"] = round(times[0] * 1000, 1)
            report["review_ms"] = round(min(times) * 1000, 1)
    git_range = args.range
    diff = subprocess.run(["git", "-C", args.repo, "diff", git_range], capture_output=True, text=True, check=True).stdout
    report["git_diff_tokens"] = tokens(args.counter, diff)
    stat_times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        subprocess.run(["git", "-C", args.repo, "diff", "--stat", git_range], capture_output=True, check=True)
        stat_times.append(time.perf_counter() - started)
    report["git_stat_ms"] = round(min(stat_times) * 1000, 1)
    report["files_changed"] = len(subprocess.run(["git", "-C", args.repo, "diff", "--name-only", git_range],
                                                 capture_output=True, text=True, check=True).stdout.split())
    oracle = json.load(open(args.oracle))
    expected = {(entry["path"], entry["name"]) for entry in oracle["changed"]
                if entry.get("kind", "function") in KINDS or entry.get("kind") in ("function", "method", "class")}
    report["oracle"] = len(expected)
    report["named"] = len(named)
    report["missed"] = sorted(f"{path}:{name}" for path, name in expected - named)
    report["extra"] = sorted(f"{path}:{name}" for path, name in named - expected)
    hit = len(expected & named)
    report["recall"] = round(hit / len(expected), 4) if expected else 1.0
    report["precision"] = round(hit / len(named), 4) if named else 1.0
    if args.three_dot:
        forbidden = json.load(open(args.three_dot)).get("symbols", [])
        report["three_dot_forbidden"] = len(forbidden)
        # A forbidden symbol is named when the review names it under any of its paths (`paths`:
        # where main's diff keys it, and its merge-base path when main renamed the file).
        report["three_dot_named"] = sorted({f"{path}:{entry['name']}" for entry in forbidden
                                            for path in entry.get("paths", [entry["path"]])
                                            if (path, entry["name"]) in named})
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--loupe", required=True)
    parser.add_argument("--counter", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--range", required=True)
    parser.add_argument("--oracle", required=True)
    parser.add_argument("--three-dot")
    parser.add_argument("--opens", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args()
    result = asyncio.run(main(arguments))
    with open(arguments.out, "w") as out:
        json.dump(result, out, indent=1)
    summary = {key: result[key] for key in ("range", "files_changed", "oracle", "named", "recall", "precision",
                                            "loupe_text", "loupe_json", "git_diff_tokens", "review_cold_ms", "review_ms", "git_stat_ms")}
    print(json.dumps(summary), file=sys.stderr)
