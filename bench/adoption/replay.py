"""The hook adoption replay: built-in tool calls an agent makes on Flask 3.0.3 (calls.jsonl), each
run three ways.

1. The built-in tool, as Claude Code shows its output to the model: Grep through ripgrep with
   Claude Code's arguments and output formats, Read as `cat -n`-style numbered lines (at most
   2,000 lines), Glob as the file list, Bash as the command's output. Its tokens are counted.
2. The hook: `loupe hook claude-code --mode redirect` with the PreToolUse event on stdin, timed
   from spawn to exit. Its answer says whether the call is routed and to which loupe call.
3. For a routed call, that loupe call through `loupe serve` over stdio with the official MCP
   Python SDK (a new server, so a new session, per call; the index is built once beforehand).
   A `search` of `type: file` given for a whole-file read is followed by the read its answer
   offers first (`next_calls[0]`, the file's outline), and both are counted.

Every call carries the question it answers and a machine-checkable answer. The check runs on the
built-in output (a check that fails there is a broken label: exit status 1) and on both faces of
the loupe answer: `content[0].text` and `JSON.stringify(structuredContent)`. Tokens are o200k_base
counts (the COUNTER binary reads text on stdin and prints its count).

A routed call is *wrong* when the loupe answer fails the check on either face, when it costs
more tokens than the built-in output on either face, or when the call is not a code lookup.

Usage (run.sh sets it up; see bench/adoption/README.md):
    python replay.py --loupe BIN --counter BIN --corpus DIR --calls calls.jsonl [--md OUT.md]
                     [--only ID ...] [--show] [--hook-runs N] [--notes NOTES.md] [--meta k=v ...]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import glob as globlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from mcp import ClientSession, stdio_client

# The token suite's counter, JSON face and server command: one definition for both benches.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tokens"))
from suite import Counter, compact, defined_names, json_view, server  # noqa: E402

# The goals (issue 31, "Deliver" item 3).
GOAL_SHARE_ROUTED = 0.80
GOAL_MEDIAN_SAVING = 0.70
GOAL_HOOK_P99_MS = 20.0

# Claude Code's limits on what its tools show.
READ_MAX_LINES = 2000  # Read's default limit
READ_MAX_LINE_CHARS = 2000  # longer lines are cut
GREP_DEFAULT_HEAD_LIMIT = 250  # Grep's cap on lines/entries when head_limit is not given
GLOB_MAX_FILES = 100

# The event fields Claude Code sends beside the call (values are placeholders).
EVENT_BASE = {"session_id": "adoption-bench", "transcript_path": "/tmp/adoption-bench.jsonl", "permission_mode": "default"}


# ---------------------------------------------------------------------------------------------
# The built-in tools, as Claude Code runs and renders them


class BuiltinError(Exception):
    pass


def _rel(path: str, cwd: str) -> str:
    """A path as Claude Code shows it: relative to the working directory unless outside it."""
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def builtin_grep(inp: dict, cwd: str) -> str:
    """Claude Code's Grep: ripgrep with the tool's arguments (hidden files searched, VCS
    directories excluded, lines over 500 columns elided), paths relative to the working
    directory; files sorted newest first; at most `head_limit` (default 250) lines or entries.
    `--sort=path` keeps runs reproducible (ripgrep's parallel order otherwise varies)."""
    mode = inp.get("output_mode", "files_with_matches")
    args = ["rg", "--hidden", "--max-columns", "500", "--sort=path"]
    for vcs in (".git", ".svn", ".hg", ".bzr"):
        args += ["--glob", f"!{vcs}"]
    if inp.get("multiline"):
        args += ["-U", "--multiline-dotall"]
    if inp.get("-i"):
        args.append("-i")
    if mode == "files_with_matches":
        args.append("-l")
    elif mode == "count":
        args.append("-c")
    if mode == "content":
        if inp.get("-n", True):
            args.append("-n")
        if inp.get("-C") is not None:
            args += ["-C", str(inp["-C"])]
        else:
            if inp.get("-B") is not None:
                args += ["-B", str(inp["-B"])]
            if inp.get("-A") is not None:
                args += ["-A", str(inp["-A"])]
    pattern = inp["pattern"]
    args += ["-e", pattern] if pattern.startswith("-") else [pattern]
    if inp.get("type"):
        args += ["--type", inp["type"]]
    if inp.get("glob"):
        for part in inp["glob"].split():
            args += [x for g in ([part] if "{" in part and "}" in part else part.split(",")) if g for x in ("--glob", g)]
    if inp.get("path"):
        target = inp["path"] if os.path.isabs(inp["path"]) else os.path.join(cwd, inp["path"])
        args.append(_rel(target, cwd))
    proc = subprocess.run(args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise BuiltinError(f"rg exited {proc.returncode}: {proc.stderr.strip()}")
    lines = [line for line in proc.stdout.split("\n") if line]
    limit = inp.get("head_limit")
    limit = GREP_DEFAULT_HEAD_LIMIT if limit is None else (None if limit == 0 else limit)
    offset = inp.get("offset", 0)
    cut = limit is not None and len(lines) - offset > limit
    shown = lines[offset : offset + limit] if limit is not None else lines[offset:]
    pagination = f"limit: {limit}, offset: {offset}" if cut else ""
    if mode == "content":
        if not shown:
            return "No matches found"
        return "\n".join(shown) + (f"\n\n[Showing results with pagination = {pagination}]" if pagination else "")
    if mode == "count":
        total = files = 0
        for line in shown:
            n = line.rsplit(":", 1)[-1]
            if n.isdigit():
                total += int(n)
                files += 1
        if not shown:
            return "No matches found"
        occ = "occurrence" if total == 1 else "occurrences"
        return "\n".join(shown) + f"\n\nFound {total} total {occ} across {files} {'file' if files == 1 else 'files'}." + (
            f" with pagination = {pagination}" if pagination else "")
    # files_with_matches: newest first, then by name
    if not lines:
        return "No files found"
    ordered = sorted(lines, key=lambda p: (-os.stat(os.path.join(cwd, p)).st_mtime, p))
    shown = ordered[offset : offset + limit] if limit is not None else ordered[offset:]
    head = f"Found {len(shown)} {'file' if len(shown) == 1 else 'files'}" + (f" {pagination}" if pagination else "")
    return head + "\n" + "\n".join(shown)


def _braces(pattern: str) -> list[str]:
    """Brace expansion (`**/*.{py,pyi}`), which Claude Code's Glob supports."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for alt in m.group(1).split(",") for x in _braces(pattern[: m.start()] + alt + pattern[m.end() :])]


def builtin_glob(inp: dict, cwd: str) -> str:
    """Claude Code's Glob: the matching files under `path` (default the working directory),
    relative to the working directory, oldest first, at most 100."""
    base = inp.get("path") or cwd
    base = base if os.path.isabs(base) else os.path.join(cwd, base)
    found: set[str] = set()
    for pattern in _braces(inp["pattern"]):
        for hit in globlib.glob(pattern, root_dir=base, recursive=True, include_hidden=True):
            full = os.path.join(base, hit)
            if os.path.isfile(full) and ".git" not in hit.split(os.sep):
                found.add(full)
    if not found:
        return "No files found"
    ordered = sorted(found, key=lambda p: (os.stat(p).st_mtime, p))
    out = [_rel(p, cwd) for p in ordered[:GLOB_MAX_FILES]]
    if len(ordered) > GLOB_MAX_FILES:
        out.append("(Results are truncated. Consider using a more specific path or pattern.)")
    return "\n".join(out)


def builtin_read(inp: dict, cwd: str) -> str:
    """Claude Code's Read of a text file: `cat -n` style (the line number right-aligned in six
    columns, a tab, the line), from `offset` (1-based), at most `limit` lines (default 2,000),
    each line cut at 2,000 characters."""
    path = inp["file_path"]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = max(int(inp.get("offset") or 1), 1)
    limit = int(inp.get("limit") or READ_MAX_LINES)
    out = []
    for i, line in enumerate(lines[start - 1 : start - 1 + limit], start):
        if len(line) > READ_MAX_LINE_CHARS:
            line = line[:READ_MAX_LINE_CHARS]
        out.append(f"{i:6d}\t{line}")
    return "\n".join(out) + ("\n" if out else "")


def builtin_bash(inp: dict, cwd: str, rg_config: str) -> str:
    """Claude Code's Bash: the command's output (stdout, then stderr), trailing space trimmed.
    ripgrep gets `--sort=path` through its config file so runs are reproducible."""
    env = dict(os.environ, RIPGREP_CONFIG_PATH=rg_config, LC_ALL="C.UTF-8", GIT_PAGER="cat", PAGER="cat")
    proc = subprocess.run(["bash", "-c", inp["command"]], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    out = proc.stdout.rstrip()
    if proc.stderr.strip():
        out = (out + "\n" if out else "") + proc.stderr.rstrip()
    return out


# ---------------------------------------------------------------------------------------------
# Answer checks. A face is checked on what the model reads in it; a JSON face on its string
# values (with their newlines) plus the JSON itself, and `results` rows ([path, line, id]).


def result_rows(faces: list[str]) -> set[tuple[str, int]]:
    """(path, line) of every `results` row in the JSON faces."""
    rows = set()
    for face in faces:
        try:
            value = json.loads(face)
        except ValueError:
            continue
        for row in (value.get("results") or []) if isinstance(value, dict) else []:
            if isinstance(row, list) and len(row) >= 2 and isinstance(row[0], str) and isinstance(row[1], int):
                rows.add((row[0], row[1]))
            elif isinstance(row, dict) and isinstance(row.get("line"), int):
                rows.add((str(row.get("path")), row["line"]))
    return rows


class Checker:
    """Checks a call's labelled answer against an output."""

    def __init__(self, root: str):
        self.root = root
        self.file_cache: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self.file_cache:
            with open(os.path.join(self.root, path), encoding="utf-8") as f:
                self.file_cache[path] = f.read().splitlines()
        return self.file_cache[path]

    def defined_names(self, path: str) -> list[str]:
        """Top-level functions and classes of a Python file, and their methods (as `def m`),
        each once."""
        return list(dict.fromkeys(defined_names(self.root, path)))

    @staticmethod
    def forms(path: str, cwd_rel: str) -> list[str]:
        """The names a path may be shown by: from the root, and from the working directory."""
        out = [path]
        if cwd_rel:
            rel = os.path.relpath(path, cwd_rel)
            if not rel.startswith(".."):
                out.append(rel)
        return out

    @staticmethod
    def path_pattern(path: str) -> re.Pattern:
        """The path as a whole name (`./path` as find and grep print it counts)."""
        return re.compile(rf"(?:(?<=\./)|(?<![\w./-])){re.escape(path)}(?![\w/-])")

    @classmethod
    def has_path(cls, text: str, path: str) -> bool:
        return cls.path_pattern(path).search(text) is not None

    @staticmethod
    def numbers(lines: str) -> re.Pattern:
        """`176`, or `135-136` (any of them: a decorated definition starts at its decorator)."""
        first, _, last = lines.partition("-")
        alternatives = "|".join(str(n) for n in range(int(first), int(last or first) + 1))
        return re.compile(rf"(?<![\d.])(?:{alternatives})(?!\d)")

    @classmethod
    def shown_at(cls, text: str, path: str, lines: str) -> bool:
        """A line of the output names the path and, after it, the line number."""
        number = cls.numbers(lines)
        pat = cls.path_pattern(path)
        for row in text.splitlines():
            m = pat.search(row)
            if m and number.search(row, m.end()):
                return True
        return False

    def check(self, spec: dict, text: str, cwd_rel: str, rows: set[tuple[str, int]] | None = None) -> str | None:
        """None when the answer is there, else what is missing."""
        missing: list[str] = []
        for site in spec.get("at", []):
            path, lines = site.rsplit(":", 1)
            first, _, last = lines.partition("-")
            in_rows = any((path, n) in (rows or set()) for n in range(int(first), int(last or first) + 1))
            if not in_rows and not any(self.shown_at(text, p, lines) for p in self.forms(path, cwd_rel)):
                missing.append(site)
        for path in spec.get("files", []):
            if not any(self.has_path(text, p) for p in self.forms(path, cwd_rel)):
                missing.append(path)
        for needle in spec.get("text", []):
            if needle not in text:
                missing.append(repr(needle))
        for needle, first, line in spec.get("def_at", []):
            number = self.numbers(f"{first}-{line}")
            if not any(needle in row and number.search(row) for row in text.splitlines()):
                missing.append(f"{needle!r} at {first}-{line}")
        if "lines" in spec:
            path, first, last = spec["lines"]
            wanted = [w.strip() for w in self.lines(path)[first - 1 : last] if w.strip()]
            gone = [w for w in wanted if w not in text]
            if gone:
                missing.append(f"{len(gone)} of {len(wanted)} lines of {path}:{first}-{last}, first {gone[0]!r}")
        if "defines" in spec:
            wanted = self.defined_names(spec["defines"])
            gone = [n for n in wanted if not re.search(rf"\b{re.escape(n)}\b", text)]
            if gone:
                missing.append(f"{len(gone)} of {len(wanted)} definitions of {spec['defines']}, e.g. {gone[:3]}")
        return f"missing {', '.join(missing[:6])}{' …' if len(missing) > 6 else ''}" if missing else None


# ---------------------------------------------------------------------------------------------
# The hook


@dataclasses.dataclass
class HookRun:
    output: str  # stdout of the first run
    times_ms: list[float]
    exit_codes: set[int]
    stable: bool  # every run answered the same
    route: tuple[str, dict] | None = None  # (tool, arguments) when routed
    reason: str = ""


def run_hook(loupe: str, event: dict, runs: int) -> HookRun:
    data = json.dumps(event).encode()
    outs, times, codes = [], [], set()
    for _ in range(runs):
        started = time.perf_counter_ns()
        proc = subprocess.run([loupe, "hook", "claude-code", "--mode", "redirect"], input=data, capture_output=True)
        times.append((time.perf_counter_ns() - started) / 1e6)
        outs.append(proc.stdout.decode())
        codes.add(proc.returncode)
    run = HookRun(outs[0], times, codes, len(set(outs)) == 1)
    if outs[0].strip():
        answer = json.loads(outs[0])
        out = answer["hookSpecificOutput"]
        if out.get("permissionDecision") == "deny":
            run.reason = out["permissionDecisionReason"]
            at = run.reason.index("mcp__loupe__") + len("mcp__loupe__")
            tool = run.reason[at:].split(" ", 1)[0]
            args, _ = json.JSONDecoder().raw_decode(run.reason[at + len(tool) + 1 :])
            run.route = (tool, args)
    return run


# ---------------------------------------------------------------------------------------------
# loupe, through the official MCP Python SDK


@dataclasses.dataclass
class LoupeCall:
    tool: str
    args: dict
    text: str
    json: str
    is_error: bool
    text_tokens: int = 0
    json_tokens: int = 0
    args_tokens: int = 0


async def _call(session: ClientSession, tool: str, args: dict, count: Counter) -> LoupeCall:
    async def progress(done, total, message):
        pass

    result = await session.call_tool(tool, args, progress_callback=progress)
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    face = text if result.structured_content is None else compact(result.structured_content)
    call = LoupeCall(tool, args, text, face, bool(result.is_error))
    call.text_tokens, call.json_tokens, call.args_tokens = count(text), count(face), count(compact(args))
    return call


async def warm_up(loupe: str, root: str, index_dir: str, count: Counter) -> str:
    """Builds the index once (not counted), so each call's fresh server starts from it."""
    async with stdio_client(server(loupe, root, index_dir)) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            deadline = time.monotonic() + 120
            while True:
                status = (await _call(session, "manage", {"command": "status"}, count)).text
                lowered = status.lower()
                if re.search(r"index[^\n]*\bready\b", lowered) or not re.search(r"building|indexing", lowered):
                    return status
                if time.monotonic() > deadline:
                    return status
                await asyncio.sleep(0.5)


async def run_loupe(loupe: str, root: str, index_dir: str, tool: str, args: dict, follow: bool, count: Counter) -> list[LoupeCall]:
    """The routed call in a new session; with `follow`, then the read its answer offers first."""
    async with stdio_client(server(loupe, root, index_dir)) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            calls = [await _call(session, tool, args, count)]
            if follow and not calls[0].is_error:
                structured = json.loads(calls[0].json) if calls[0].json.startswith("{") else {}
                nxt = (structured.get("next_calls") or [None])[0]
                if nxt:
                    calls.append(await _call(session, nxt["tool"], nxt["arguments"], count))
            return calls


# ---------------------------------------------------------------------------------------------
# One call, replayed


@dataclasses.dataclass
class Outcome:
    call: dict
    builtin: str
    builtin_tokens: int
    builtin_verdict: str | None
    hook: HookRun
    loupe: list[LoupeCall] = dataclasses.field(default_factory=list)
    verdict_text: str | None = None
    verdict_json: str | None = None
    wrong: list[str] = dataclasses.field(default_factory=list)
    reason_tokens: int = 0  # the deny message the model reads

    @property
    def routed(self) -> bool:
        return self.hook.route is not None

    @property
    def loupe_text(self) -> int:
        return sum(c.text_tokens for c in self.loupe)

    @property
    def loupe_json(self) -> int:
        return sum(c.json_tokens for c in self.loupe)

    @property
    def loupe_args(self) -> int:
        return sum(c.args_tokens for c in self.loupe)

    def saving(self, face: str) -> float:
        cost = self.loupe_text if face == "text" else self.loupe_json
        return 1 - cost / self.builtin_tokens if self.builtin_tokens else 0.0


def substitute(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("$ROOT", root)
    if isinstance(value, list):
        return [substitute(v, root) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, root) for k, v in value.items()}
    return value


def is_whole_read(call: dict) -> bool:
    """A whole-file read: Read without offset/limit, or a shell `cat FILE`."""
    if call["tool_name"] == "Read":
        return "offset" not in call["tool_input"] and "limit" not in call["tool_input"]
    if call["tool_name"] == "Bash":
        return call["tool_input"]["command"].split()[0] in ("cat", "bat", "less")
    return False


def builtin(call: dict, cwd: str, rg_config: str) -> str:
    tool, inp = call["tool_name"], call["tool_input"]
    if tool == "Grep":
        return builtin_grep(inp, cwd)
    if tool == "Glob":
        return builtin_glob(inp, cwd)
    if tool == "Read":
        return builtin_read(inp, cwd)
    if tool == "Bash":
        return builtin_bash(inp, cwd, rg_config)
    raise BuiltinError(f"unknown tool {tool}")


# ---------------------------------------------------------------------------------------------
# Reporting


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), -(-len(ordered) * q // 100)))
    return ordered[int(rank) - 1]


def _cell(s: str, limit: int = 100) -> str:
    s = s.replace("\n", "⏎")
    s = s if len(s) <= limit else s[: limit - 1] + "…"
    return s.replace("|", "\\|").replace("`", "'")


def describe(call: dict) -> str:
    inp = dict(call["tool_input"])
    if "file_path" in inp:
        inp["file_path"] = inp["file_path"].replace(call["_root"] + "/", "")
    if "path" in inp and isinstance(inp["path"], str):
        inp["path"] = inp["path"].replace(call["_root"] + "/", "").replace(call["_root"], ".")
    return f"{call['tool_name']} {compact(inp)}"


def report(outcomes: list[Outcome], meta: dict, hook_runs: int, reference_ms: list[float]) -> tuple[str, dict]:
    routed = [o for o in outcomes if o.routed]
    alone = [o for o in outcomes if not o.routed]
    wrong = [o for o in routed if o.wrong]
    lookups = [o for o in outcomes if o.call["code_lookup"]]
    lookups_routed = [o for o in lookups if o.routed]
    unrouted = [o for o in lookups if not o.routed]
    share = len(lookups_routed) / len(lookups) if lookups else 0.0
    med_text = statistics.median([o.saving("text") for o in routed]) if routed else 0.0
    med_json = statistics.median([o.saving("json") for o in routed]) if routed else 0.0
    # With what redirect mode adds: the deny message the model reads and the loupe call it writes.
    def with_overhead(o: Outcome, face: str) -> float:
        cost = (o.loupe_text if face == "text" else o.loupe_json) + o.reason_tokens + o.loupe_args
        return 1 - cost / o.builtin_tokens if o.builtin_tokens else 0.0

    med_text_all = statistics.median([with_overhead(o, "text") for o in routed]) if routed else 0.0
    med_json_all = statistics.median([with_overhead(o, "json") for o in routed]) if routed else 0.0
    times = [t for o in outcomes for t in o.hook.times_ms]
    p50, p99, worst = percentile(times, 50), percentile(times, 99), max(times)
    ref50, ref99 = percentile(reference_ms, 50), percentile(reference_ms, 99)
    sum_builtin = sum(o.builtin_tokens for o in routed)
    sum_text = sum(o.loupe_text for o in routed)
    sum_json = sum(o.loupe_json for o in routed)
    figures = dict(calls=len(outcomes), routed=len(routed), alone=len(alone), wrong=len(wrong), lookups=len(lookups),
                   lookups_routed=len(lookups_routed), share=share, med_text=med_text, med_json=med_json, p50=p50, p99=p99)

    md = ["# Hook adoption: `loupe hook claude-code` replayed on built-in tool calls", ""]
    md += [f"- {k}: {v}" for k, v in meta.items()]
    md += [f"- calls: {len(outcomes)} built-in tool calls on Flask 3.0.3 (`bench/adoption/calls.jsonl`), "
           f"{len(lookups)} of them labelled code lookups (calls the hook should route)",
           "- built-in output: Grep via ripgrep in Claude Code's formats (default `head_limit` 250), Read as `cat -n` "
           "(at most 2,000 lines), Glob as the file list (at most 100), Bash as the command's output",
           "- loupe answer: the call the hook names, through `loupe serve` (official MCP Python SDK, a new session per call); "
           "for a whole-file read, the search and then the outline read its answer offers (`next_calls[0]`), both counted",
           "- tokens: o200k_base. *text* = `content[0].text`, *JSON* = `JSON.stringify(structuredContent)`. "
           "Saving = 1 − loupe ÷ built-in, per call, answers only (the arguments the model writes are not counted; "
           "see *with redirect overhead* for the deny message and the loupe call's arguments added)",
           "- wrong = routed, and the loupe answer fails the check on either face, or costs more tokens than the built-in "
           "output on either face, or the call is not a code lookup", ""]
    goal = lambda ok: "yes" if ok else "**no**"
    md += ["## Result", "", "| measure | value | goal | met |", "|---|--:|--:|---|",
           f"| calls | {len(outcomes)} | ≥ 200 | {goal(len(outcomes) >= 200)} |",
           f"| routed | {len(routed)} | | |",
           f"| left alone | {len(alone)} | | |",
           f"| wrongly routed | {len(wrong)} | 0 | {goal(not wrong)} |",
           f"| code lookups routed | {len(lookups_routed)} of {len(lookups)} ({pct(share)}) | ≥ {GOAL_SHARE_ROUTED:.0%} | {goal(share >= GOAL_SHARE_ROUTED)} |",
           f"| median saving on routed calls, text face | {pct(med_text)} | ≥ {GOAL_MEDIAN_SAVING:.0%} | {goal(bool(routed) and med_text >= GOAL_MEDIAN_SAVING)} |",
           f"| median saving on routed calls, JSON face | {pct(med_json)} | ≥ {GOAL_MEDIAN_SAVING:.0%} | {goal(bool(routed) and med_json >= GOAL_MEDIAN_SAVING)} |",
           f"| … with redirect overhead, text / JSON | {pct(med_text_all)} / {pct(med_json_all)} | | |",
           f"| tokens over routed calls: built-in → loupe text / JSON | {sum_builtin:,} → {sum_text:,} / {sum_json:,} | | |",
           f"| hook latency p50 / p99 / max (spawn to exit, {len(times)} runs) | {p50:.1f} / {p99:.1f} / {worst:.1f} ms | p99 ≤ {GOAL_HOOK_P99_MS:.0f} ms | {goal(p99 <= GOAL_HOOK_P99_MS)} |",
           f"| reference: `/bin/true` spawned the same way, p50 / p99 | {ref50:.1f} / {ref99:.1f} ms | | |", ""]
    md += [f"Each call's hook ran {hook_runs} times (every run's answer identical: "
           f"{'yes' if all(o.hook.stable for o in outcomes) else '**no**'}; exit codes seen: "
           f"{sorted(set().union(*(o.hook.exit_codes for o in outcomes)))})."
           " Routed calls whose loupe answer holds on both faces: "
           f"{sum(1 for o in routed if o.verdict_text is None and o.verdict_json is None)} of {len(routed)}.", ""]

    kinds: dict[str, list[Outcome]] = {}
    for o in outcomes:
        kinds.setdefault(o.call["kind"], []).append(o)
    md += ["## By kind", "",
           "| kind | calls | code lookups | routed | wrong | code lookups left alone | built-in tokens (routed) | loupe text / JSON (routed) | median saving text / JSON |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for kind, group in kinds.items():
        r = [o for o in group if o.routed]
        ms = (f"{pct(statistics.median([o.saving('text') for o in r]))} / {pct(statistics.median([o.saving('json') for o in r]))}" if r else "–")
        md.append(f"| {kind} | {len(group)} | {sum(o.call['code_lookup'] for o in group)} | {len(r)} | {sum(1 for o in r if o.wrong)} "
                  f"| {sum(1 for o in group if o.call['code_lookup'] and not o.routed)} | {sum(o.builtin_tokens for o in r):,} "
                  f"| {sum(o.loupe_text for o in r):,} / {sum(o.loupe_json for o in r):,} | {ms} |")
    md.append("")

    md += ["## Wrongly routed", ""]
    if wrong:
        md += ["| id | call | routed to | built-in | loupe text / JSON | why |", "|---|---|---|--:|--:|---|"]
        for o in wrong:
            md.append(f"| {o.call['id']} | `{_cell(describe(o.call), 80)}` | `{_cell(o.hook.route[0] + ' ' + compact(o.hook.route[1]), 70)}` "
                      f"| {o.builtin_tokens:,} | {o.loupe_text:,} / {o.loupe_json:,} | {_cell('; '.join(o.wrong), 160)} |")
    else:
        md.append("None.")
    md += ["", "## Code lookups left alone", ""]
    if unrouted:
        md += ["| id | question | call | built-in tokens |", "|---|---|---|--:|"]
        for o in unrouted:
            md.append(f"| {o.call['id']} | {_cell(o.call['question'], 70)} | `{_cell(describe(o.call), 90)}` | {o.builtin_tokens:,} |")
    else:
        md.append("None.")
    md += ["", "## Every call", "",
           "| id | kind | lookup | call | routed to | built-in | loupe text | loupe JSON | saving text / JSON | verdict |",
           "|---|---|---|---|---|--:|--:|--:|--:|---|"]
    for o in outcomes:
        route = f"`{_cell(o.hook.route[0] + ' ' + compact(o.hook.route[1]), 60)}`" + (" + read" if len(o.loupe) > 1 else "") if o.routed else "–"
        verdict = ("**wrong**: " + _cell("; ".join(o.wrong), 120)) if o.wrong else ("ok" if o.routed else ("left alone" if not o.call["code_lookup"] else "**missed**"))
        md.append(f"| {o.call['id']} | {o.call['kind']} | {'yes' if o.call['code_lookup'] else 'no'} | `{_cell(describe(o.call), 70)}` | {route} "
                  f"| {o.builtin_tokens:,} | {o.loupe_text if o.routed else ''} | {o.loupe_json if o.routed else ''} "
                  f"| {pct(o.saving('text')) + ' / ' + pct(o.saving('json')) if o.routed else ''} | {verdict} |")
    md.append("")
    return "\n".join(md), figures


# ---------------------------------------------------------------------------------------------


def load_calls(path: str) -> list[dict]:
    calls = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            call = json.loads(line)
            for key in ("id", "kind", "question", "code_lookup", "tool_name", "tool_input", "answer"):
                if key not in call:
                    raise SystemExit(f"{path}:{n}: no {key!r}")
            calls.append(call)
    ids = [c["id"] for c in calls]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise SystemExit(f"{path}: duplicate ids {sorted(dupes)}")
    return calls


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", required=True)
    ap.add_argument("--counter", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--calls", required=True)
    ap.add_argument("--md")
    ap.add_argument("--only", nargs="*", help="call ids to run (default: all); bench/results is left alone")
    ap.add_argument("--show", action="store_true", help="print every call's outputs")
    ap.add_argument("--hook-runs", type=int, default=5, help="times each call's hook runs (latency samples)")
    ap.add_argument("--meta", nargs="*", default=[], help="key=value lines for the report's header")
    ap.add_argument("--notes", help="a markdown file of findings to put in the report after the result (written by a person)")
    a = ap.parse_args()
    root = os.path.realpath(a.corpus)
    count = Counter(a.counter)
    checker = Checker(root)
    meta = dict(m.split("=", 1) for m in a.meta)
    calls = [substitute(c, root) for c in load_calls(a.calls)]
    if a.only:
        unknown = set(a.only) - {c["id"] for c in calls}
        if unknown:
            raise SystemExit(f"unknown ids: {sorted(unknown)}")
        calls = [c for c in calls if c["id"] in a.only]

    rg_config = tempfile.NamedTemporaryFile("w", prefix="adoption-rg-", suffix=".conf", delete=False)
    rg_config.write("--sort=path\n")
    rg_config.close()
    index_dir = tempfile.mkdtemp(prefix="loupe-adoption-index-")
    outcomes: list[Outcome] = []
    broken: list[str] = []
    try:
        # 1. Built-in outputs and the hook, for every call.
        for call in calls:
            call["_root"] = root
            cwd = call.get("cwd") or root
            cwd_rel = os.path.relpath(cwd, root) if cwd != root else ""
            try:
                out = builtin(call, cwd, rg_config.name)
            except (BuiltinError, OSError, subprocess.SubprocessError) as e:
                out, verdict = "", f"built-in failed: {e}"
            else:
                verdict = checker.check(call["answer"], out, cwd_rel)
            if verdict:
                broken.append(f"{call['id']}: the built-in output fails its own label: {verdict}")
            event = dict(EVENT_BASE, cwd=cwd, hook_event_name="PreToolUse", tool_name=call["tool_name"], tool_input=call["tool_input"])
            hook = run_hook(a.loupe, event, a.hook_runs)
            outcomes.append(Outcome(call, out, count(out), verdict, hook))

        reference = []
        for _ in range(max(len(calls), 50)):
            started = time.perf_counter_ns()
            subprocess.run(["/bin/true"], input=b"{}", capture_output=True)
            reference.append((time.perf_counter_ns() - started) / 1e6)

        # 2. The routed calls through loupe.
        routed = [o for o in outcomes if o.routed]
        if routed:
            started = time.monotonic()
            status = await warm_up(a.loupe, root, index_dir, count)
            line = status.splitlines()[1] if len(status.splitlines()) > 1 else status
            print(f"index built in {time.monotonic() - started:.1f}s: {line}", file=sys.stderr)
        for o in routed:
            tool, args = o.hook.route
            cwd_rel = os.path.relpath(o.call.get("cwd") or root, root) if o.call.get("cwd") not in (None, root) else ""
            o.reason_tokens = count(o.hook.reason)
            follow = tool == "search" and args.get("type") == "file" and is_whole_read(o.call)
            try:
                o.loupe = await run_loupe(a.loupe, root, index_dir, tool, args, follow, count)
            except Exception as e:  # a transport failure: the call gets no answer
                o.loupe = [LoupeCall(tool, args, f"(call failed: {type(e).__name__}: {e})", "", True)]
            text = "\n".join(c.text for c in o.loupe)
            faces = [c.json for c in o.loupe]
            o.verdict_text = checker.check(o.call["answer"], text, cwd_rel)
            o.verdict_json = checker.check(o.call["answer"], "\n".join(json_view(f) for f in faces), cwd_rel, result_rows(faces))
            if any(c.is_error for c in o.loupe):
                o.wrong.append("the loupe call failed: " + next(c.text for c in o.loupe if c.is_error).strip().splitlines()[0][:120])
            if o.verdict_text:
                o.wrong.append(f"text face {o.verdict_text}")
            if o.verdict_json:
                o.wrong.append(f"JSON face {o.verdict_json}")
            if o.loupe_text > o.builtin_tokens or o.loupe_json > o.builtin_tokens:
                o.wrong.append(f"costs more: built-in {o.builtin_tokens}, loupe text {o.loupe_text}, JSON {o.loupe_json}")
            if not o.call["code_lookup"]:
                o.wrong.append("not a code lookup")
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
        os.unlink(rg_config.name)

    if a.show:
        for o in outcomes:
            print(f"\n=== {o.call['id']} ({o.call['kind']}, lookup={o.call['code_lookup']}): {describe(o.call)}")
            print(f"--- built-in: {o.builtin_tokens} tokens{'' if o.builtin_verdict is None else ' — LABEL FAILS: ' + o.builtin_verdict}")
            print(o.builtin[:3000] + ("\n…" if len(o.builtin) > 3000 else ""))
            print(f"--- hook ({statistics.median(o.hook.times_ms):.1f} ms): {o.hook.output.strip() or '(nothing: left alone)'}")
            for c in o.loupe:
                print(f"--- loupe {c.tool} {compact(c.args)}: text {c.text_tokens}, JSON {c.json_tokens}{' (error)' if c.is_error else ''}")
                print(c.text)
                print("--- JSON face:")
                print(c.json)
            if o.wrong:
                print("--- WRONG: " + "; ".join(o.wrong))

    md, fig = report(outcomes, meta, a.hook_runs, reference)
    if a.notes and os.path.exists(a.notes):
        with open(a.notes, encoding="utf-8") as f:
            notes = f.read().strip()
        head, sep, rest = md.partition("\n## By kind")
        md = f"{head}\n{notes}\n{sep}{rest}"
    if broken:
        md += "\n## Broken labels\n\n" + "\n".join(f"- {b}" for b in broken) + "\n"
    if a.only:
        print("--only: bench/results not written", file=sys.stderr)
        a.md = None
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(md)
    print(md.split("\n## Every call")[0])
    if broken:
        print(f"FAILED: {len(broken)} label(s) do not hold on the built-in output:\n" + "\n".join(broken), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
