"""The token economy suite: everyday agent tasks on Flask 3.0.3, each solved by a fixed policy on
four sides, and every answer checked:

- baseline: the way agents work without loupe at their most common (ripgrep plus whole-file reads
  in `cat -n` form, `git diff`, str_replace-style edits);
- careful: the same built-in tools used sparingly (`rg -n` first, then Read with offset/limit
  around the hit, `rg -n -C 20` for a window, a `class|def` grep as an outline);
- Serena (PyPI `serena-agent`, its own language server), over stdio through the official MCP
  Python SDK, with its own tools (find_symbol, get_symbols_overview, search_for_pattern, …);
- loupe, over stdio through the same SDK, as a client would.

The MCP sides are counted on both faces: the text (`content[0].text`) and the structured face
(`JSON.stringify(structuredContent)`, which Claude Code and Codex hand the model). Tokens are
counted with the o200k_base tokenizer loupe uses (the COUNTER binary reads text on stdin and
prints its count).

Usage (run.sh sets it up; see bench/tokens/README.md):
    python suite.py --loupe BIN --counter BIN --corpus DIR [--serena BIN --serena-home DIR]
                    --md OUT.md --svg OUT.svg [--meta k=v ...]

Without --serena the Serena side is not attempted (its columns say so). Exit status: 0 when every
answer holds and no call failed (missed token targets are reported, not asserted); 1 when an
answer check fails on any side or a call errors unexpectedly.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import dataclasses
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

from mcp import ClientSession, StdioServerParameters, stdio_client

# The targets (bench/tokens/README.md, "Targets").
SHARE_TARGET = 0.10  # loupe ≤ 10% of the baseline, both faces, summed over the suite
CALL_RATIO, CALL_SLACK = 1.3, 40  # per call: JSON ≤ 1.3 × text + 40
SUITE_RATIO = 1.15  # summed: JSON ≤ 1.15 × text
CAREFUL_TARGET = 0.7  # loupe ≤ 0.7 × the careful agent, both faces, summed over the suite
SERENA_TARGET = 0.8  # loupe ≤ 0.8 × Serena, both faces, summed over the tasks Serena attempted


# ---------------------------------------------------------------------------------------------
# Counting


class Counter:
    """o200k_base counts through the COUNTER binary, memoised (the same answer recurs)."""

    def __init__(self, binary: str):
        self.binary = binary
        self.memo: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        if text not in self.memo:
            out = subprocess.run([self.binary], input=text.encode(), capture_output=True, check=True)
            self.memo[text] = int(out.stdout.split()[0])
        return self.memo[text]


def compact(value: Any) -> str:
    """JSON.stringify: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclasses.dataclass
class Call:
    side: str  # "baseline", "careful", "serena" or "loupe"
    tool: str
    args: dict
    text: str  # built-in sides: the output; MCP sides: content[0].text
    json: str  # MCP sides: JSON.stringify(structuredContent); built-in sides: same as text
    sent: int = 0  # tokens of the arguments (what the agent writes)
    text_tokens: int = 0
    json_tokens: int = 0
    is_error: bool = False


# ---------------------------------------------------------------------------------------------
# The sides


class Failure(Exception):
    """A call errored where the policy expects an answer."""


class Baseline:
    """What an agent without loupe does: Bash (rg, git) and Read (whole file, `cat -n` form),
    Edit (str_replace). The arguments counted are those of the tool call an agent sends:
    Bash {"command"}, Read {"file_path"} and Edit {"file_path", "old_string", "new_string",
    "replace_all"}, paths relative to the repository."""

    side = "baseline"

    def __init__(self, root: str, count: Counter):
        self.root = root
        self.count = count
        self.calls: list[Call] = []

    def _record(self, tool: str, args: dict, out: str) -> str:
        call = Call(self.side, tool, args, out, out)
        call.sent = self.count(compact(args))
        call.text_tokens = call.json_tokens = self.count(out)
        self.calls.append(call)
        return out

    def bash(self, argv: list[str]) -> str:
        """Runs a command in the repository; rg gets `--sort path` so runs are reproducible
        (the same lines as an agent's `rg`, in a fixed order; not counted in the command)."""
        shown = " ".join(_shell_quote(a) for a in argv)
        run = list(argv)
        if run[0] == "rg":
            run.insert(1, "--sort=path")
        proc = subprocess.run(run, cwd=self.root, capture_output=True, text=True)
        if proc.returncode not in (0, 1) or (proc.returncode == 1 and run[0] != "rg"):
            raise Failure(f"{self.side} `{shown}` exited {proc.returncode}: {proc.stderr.strip()}")
        return self._record("Bash", {"command": shown}, proc.stdout)

    def rg(self, *args: str) -> str:
        return self.bash(["rg", *args])

    def read(self, path: str) -> str:
        """A whole-file read as Claude Code's Read tool renders it (`cat -n`: six-wide line
        number, a tab, the line)."""
        return self._record("Read", {"file_path": path}, cat_n(self.root, path))

    def read_range(self, path: str, offset: int, limit: int) -> str:
        """A ranged read as Claude Code's Read renders it with offset/limit: `limit` lines from
        line `offset` (1-based), in the same `cat -n` form, with their real line numbers."""
        out = cat_n(self.root, path, offset, limit)
        if not out:
            raise Failure(f"{self.side} read of {path}: offset {offset} is past the end")
        return self._record("Read", {"file_path": path, "offset": offset, "limit": limit}, out)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> str:
        """A str_replace edit, applied for real; the answer is Claude Code's short one."""
        full = os.path.join(self.root, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        found = text.count(old)
        if found == 0 or (found > 1 and not replace_all):
            raise Failure(f"{self.side} edit of {path}: {found} matches of {old!r}")
        with open(full, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new) if replace_all else text.replace(old, new, 1))
        args = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            args["replace_all"] = True
            out = f"The file {path} has been updated. All occurrences of '{old}' were successfully replaced with '{new}'.\n"
        else:
            out = f"The file {path} has been updated.\n"
        return self._record("Edit", args, out)


def cat_n(root: str, path: str, offset: int = 1, limit: int | None = None) -> str:
    """Lines offset.. of a file (all, or `limit` of them) as Claude Code's Read renders them:
    `cat -n`, the line number right-aligned in six columns, a tab, the line."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    chosen = lines[offset - 1 :] if limit is None else lines[offset - 1 : offset - 1 + limit]
    out = "".join(f"{i:6d}\t{line}" for i, line in enumerate(chosen, offset))
    if out and not out.endswith("\n"):
        out += "\n"
    return out


class Careful(Baseline):
    """The careful built-in agent: the baseline's tools (Bash with rg and git, Read, Edit), used
    the way a careful agent uses them. It greps first (`rg -n`) and then reads only around the
    hit, with Read's offset/limit:

    - a definition (the hit is its `def`/`class` line): from that line, in pages of PAGE lines,
      until a page shows where the definition ends (the first non-blank line after its body
      indented no deeper than the `def`, or the end of the file): what the agent sees, not the
      ast;
    - the function around a hit inside it: WINDOW lines before the hit to WINDOW after
      (offset hit − WINDOW, limit 2 × WINDOW), which shows the enclosing `def` when it is near;
    - a window around a search hit: `rg -n -C 20`;
    - a file's or a package's outline: `rg -n '^\\s*(async )?(class|def) ' PATH`.

    The arguments counted are those of the tool call: Read {"file_path", "offset", "limit"}."""

    side = "careful"
    PAGE = 60
    WINDOW = 20
    OUTLINE = r"^\s*(async )?(class|def) "

    def read_definition(self, path: str, line: int):
        lines = file_lines(self.root, path)
        ends = definition_end(lines, line)
        offset = line
        while True:
            self.read_range(path, offset, self.PAGE)
            if ends < offset + self.PAGE or offset + self.PAGE > len(lines):
                return
            offset += self.PAGE

    def read_around(self, path: str, line: int):
        offset = max(1, line - self.WINDOW)
        self.read_range(path, offset, line + self.WINDOW - offset)

    def outline(self, path: str) -> str:
        return self.rg("-n", self.OUTLINE, path)


def definition_end(lines: list[str], line: int) -> int:
    """The line that shows where the definition starting at `line` (1-based) ends, as a reader
    of the text sees it: after the header (up to the `:` that closes it, brackets balanced), the
    first non-blank line indented no deeper than the `def`; len(lines) + 1 when the file ends
    first."""
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    depth, i = 0, line - 1
    while i < len(lines):  # the header, which may span lines: `def f(\n  a,\n) -> str:`
        code = lines[i].split("#", 1)[0].rstrip()
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
        i += 1
        if depth <= 0 and code.endswith(":"):
            break
    for j in range(i, len(lines)):
        text = lines[j]
        if text.strip() and len(text) - len(text.lstrip()) <= indent:
            return j + 1
    return len(lines) + 1


class Answer:
    def __init__(self, text: str, structured: Any):
        self.text = text
        self.structured = structured or {}

    def hits(self) -> list:
        """`results[i] = [path, line, candidate_id, …]` (§3.3), a file hit its path alone; a hit given as an object is
        read by its `path`, `line` and `candidate_id`."""
        hits = self.structured.get("results") or []
        return [[h.get("path"), h.get("line"), h.get("candidate_id")] if isinstance(h, dict)
                else [h] if isinstance(h, str) else h for h in hits]

    def value(self) -> Any:
        """A Serena answer's text, which is JSON (a list of symbols, a map of paths to lines)."""
        return json.loads(self.text)


class McpSide:
    """One MCP server session (loupe's or Serena's); every call goes through the SDK's call_tool
    with a progress callback (a progress token lets loupe wait for its first index build)."""

    def __init__(self, session: ClientSession, count: Counter, side: str = "loupe"):
        self.session = session
        self.count = count
        self.side = side
        self.calls: list[Call] = []

    async def __call__(self, tool: str, args: dict, expect_error: bool = False) -> Answer:
        async def progress(done, total, message):
            pass

        result = await self.session.call_tool(tool, args, progress_callback=progress)
        text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        if result.structured_content is None:
            structured_face = text  # a client without structured content shows the text
        else:
            structured_face = compact(result.structured_content)
        # Serena reports a failed tool as an answer starting "Error" (is_error unset).
        failed = bool(result.is_error) or (self.side == "serena" and text.lstrip().startswith("Error"))
        call = Call(self.side, tool, args, text, structured_face, is_error=failed)
        call.sent = self.count(compact(args))
        call.text_tokens = self.count(text)
        call.json_tokens = self.count(structured_face)
        self.calls.append(call)
        if failed and not expect_error:
            raise Failure(f"{self.side} {tool} {compact(args)} failed: {text.strip()[:400]}")
        return Answer(text, result.structured_content)


Loupe = McpSide


def _shell_quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_./:=@+,-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


# ---------------------------------------------------------------------------------------------
# Answer checks. Each takes the face the model would read and says whether the answer is there.
# A JSON face is checked on what the model reads in it: its string values (with their newlines)
# plus the JSON itself, so an answer carried as structure (nodes, edges, results) counts too.


def json_view(face: str) -> str:
    try:
        value = json.loads(face)
    except ValueError:
        return face
    strings: list[str] = []

    def walk(v):
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(value)
    return "\n".join(strings) + "\n" + face


# Serena answers in JSON (its text face; its structured face is {"result": that text}), numbers
# lines from 0 (its tool descriptions say so) and names a file's symbols by their kind. Its answers
# are checked on what the model reads in them, in the checks' terms: serena_view decodes the JSON
# (a string that is JSON itself too), writes each numbered line under its file as `path:N:` with N
# counted from 1, each symbol as `path: kind name lines A-B` (from 1), and each name an overview
# lists under a kind as `class Name` (Class) or `def name` (Function, Method, Constructor). The
# checks themselves are the same as for every side.

LSP_KINDS = {"File", "Module", "Namespace", "Package", "Class", "Method", "Property", "Field", "Constructor", "Enum",
             "Interface", "Function", "Variable", "Constant", "String", "Number", "Boolean", "Array", "Object", "Key",
             "Null", "EnumMember", "Struct", "Event", "Operator", "TypeParameter"}
PY_KEYWORD = {"Class": "class", "Function": "def", "Method": "def", "Constructor": "def"}
SERENA_LINE = re.compile(r"\s*(?:>|\.\.\.)\s*(\d+):(.*)")


def serena_view(face: str) -> str:
    rows: list[str] = []

    def walk(v: Any, path: str | None = None, kind: str | None = None):
        if isinstance(v, str):
            if v.lstrip()[:1] in ("[", "{"):
                try:
                    return walk(json.loads(v), path, kind)
                except ValueError:
                    pass
            if kind is not None:  # a name an overview lists under its kind
                rows.append(f"{PY_KEYWORD.get(kind, kind)} {v}")
                return
            for line in v.splitlines():
                m = SERENA_LINE.match(line) if path else None
                rows.append(f"{path}:{int(m[1]) + 1}:{m[2]}" if m else line)
        elif isinstance(v, list):
            for x in v:
                walk(x, path, kind)
        elif isinstance(v, dict):
            if "name_path" in v or "body_location" in v:  # a symbol (find_symbol, find_referencing_symbols)
                path = v.get("relative_path") or path
                where = v.get("body_location") or {}
                lines = f" lines {where['start_line'] + 1}-{where['end_line'] + 1}" if "start_line" in where else ""
                rows.append(f"{path}: {PY_KEYWORD.get(v.get('kind') or kind, v.get('kind') or kind or '')} {v.get('name_path')}{lines}")
                for k, x in v.items():
                    if k == "content_around_reference":
                        walk(x, path)
                    elif k not in ("name_path", "relative_path", "body_location", "kind"):
                        walk(x)  # the body, children: their text as it is
            elif kind is not None:  # an overview's {name: {kind: [...]}}
                for name, x in v.items():
                    rows.append(f"{PY_KEYWORD.get(kind, kind)} {name}")
                    walk(x, path)
            else:
                for k, x in v.items():
                    if k in LSP_KINDS:
                        walk(x, path, k)
                    elif "/" in k or re.fullmatch(r"[\w-]+\.\w+", k):  # a file: its lines, its symbols
                        rows.append(k)
                        walk(x, k)
                    else:
                        walk(x, path)

    try:
        walk(json.loads(face))
    except ValueError:
        walk(face)
    return "\n".join(rows)


def file_lines(root: str, path: str) -> list[str]:
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read().splitlines()


def check_lines(root: str, path: str, first: int, last: int) -> Callable[[str], str | None]:
    """Lines first..last of the file (as it is before the task) appear, each line's text."""
    wanted = [line.strip() for line in file_lines(root, path)[first - 1 : last] if line.strip()]

    def check(out: str) -> str | None:
        missing = [w for w in wanted if w not in out]
        return f"{len(missing)} of {len(wanted)} lines of {path}:{first}-{last} missing, first {missing[0]!r}" if missing else None

    return check


def check_all(*needles: str) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        missing = [n for n in needles if n not in out]
        return f"missing {missing}" if missing else None

    return check


def check_both(*checks: Callable[[str], str | None]) -> Callable[[str], str | None]:
    def check(out: str) -> str | None:
        return next((failed for failed in (c(out) for c in checks) if failed), None)

    return check


def check_either(*checks: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """One of the checks holds (an edit's reply names the new text, or every file it changed)."""

    def check(out: str) -> str | None:
        failed = [c(out) for c in checks]
        return None if any(f is None for f in failed) else "; ".join(f for f in failed if f)

    return check


def check_encloses(container: str, name: str) -> Callable[[str], str | None]:
    """"In which function": the answer shows the function's definition (`def name(`) or names
    it as the hit's enclosing definition (`(in Container.name)`)."""

    def check(out: str) -> str | None:
        if f"def {name}(" in out or f"(in {container}.{name})" in out:
            return None
        return f"the enclosing function {container}.{name} is not named"

    return check


def check_sites(sites: list[tuple[str, int]]) -> Callable[[str], str | None]:
    """Each (path, line) is shown: a line of the answer names the path and, after it, the line
    number (`path:591:` as rg prints it, `path:509 … at line 591` as a call tree does); or, in
    a JSON face, an edge whose caller node names the path and whose site is the line."""

    def shown(out: str, path: str, line: int) -> bool:
        number = re.compile(rf"(?<![\d.]){line}(?!\d)")
        for row in out.splitlines():
            at = row.find(path)
            if at >= 0 and number.search(row, at + len(path)):
                return True
        return False

    def from_graph(out: str) -> set[tuple[str, int]]:
        found: set[tuple[str, int]] = set()
        try:
            value = json.loads(out.rsplit("\n", 1)[-1])
        except ValueError:
            return found
        if not isinstance(value, dict):
            return found
        nodes, edges = value.get("nodes") or [], value.get("edges") or []
        for edge in edges:
            if isinstance(edge, list) and len(edge) >= 3 and isinstance(edge[0], int) and edge[0] < len(nodes):
                node = nodes[edge[0]]
                name = node[0] if isinstance(node, list) else str(node.get("id", "")) if isinstance(node, dict) else str(node)
                for site in edge[2:]:
                    for n in site if isinstance(site, list) else [site]:
                        if isinstance(n, int):
                            found.add((name.split("#")[0], n))
        return found

    def check(out: str) -> str | None:
        graph = None
        missing = []
        for path, line in sites:
            if shown(out, path, line):
                continue
            graph = from_graph(out) if graph is None else graph
            if (path, line) not in graph:
                missing.append(f"{path}:{line}")
        return f"call sites not shown: {missing}" if missing else None

    return check


def check_usages(sites: list[tuple[str, int]]) -> Callable[[str], str | None]:
    """Each (path, line) is shown as rg -n shows it, `path:line` (`path:line:` from rg and a
    Serena view), under its file as loupe's text lists hits (`path`, then `line …`), or as a
    search result `["path",line,…]` (loupe's JSON face)."""

    def grouped(out: str) -> set[tuple[str, int]]:
        """loupe's text hits under their file: the path on a line of its own, then `N …`."""
        found, current = set(), None
        for line in out.splitlines():
            m = re.match(r"(\d+) ", line)
            if m and current:
                found.add((current, int(m[1])))
            elif line and not line[0].isspace():
                current = line.strip()
        return found

    def rows(out: str) -> set[tuple[str, int]]:
        """loupe's JSON rows of text hits: `[path, line, shown, line, shown, …]`, one per file."""
        found = set()
        for line in out.splitlines():
            try:
                value = json.loads(line) if line.startswith("{") else None
            except ValueError:
                continue
            for row in (value or {}).get("results") or []:
                if isinstance(row, list) and len(row) >= 3 and len(row) % 2 == 1 and isinstance(row[0], str):
                    found.update((row[0], n) for n in row[1::2] if isinstance(n, int))
        return found

    def check(out: str) -> str | None:
        under = grouped(out) | rows(out)
        missing = [f"{p}:{n}" for p, n in sites
                   if (p, n) not in under and not re.search(rf'(?<![\w./-]){re.escape(p)}(?::|",){n}(?!\d)', out)]
        return f"{len(missing)} of {len(sites)} usages not shown, e.g. {missing[:3]}" if missing else None

    return check


def defined_names(root: str, path: str) -> list[str]:
    """Top-level functions and classes of a Python file, and the methods of its classes."""
    tree = ast.parse("\n".join(file_lines(root, path)))
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(("class " if isinstance(node, ast.ClassDef) else "def ") + node.name)
            if isinstance(node, ast.ClassDef):
                names += ["def " + m.name for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names


def check_defines(root: str, paths: list[str]) -> Callable[[str], str | None]:
    wanted = [(p, n) for p in paths for n in defined_names(root, p)]

    def check(out: str) -> str | None:
        missing = [f"{p}: {n}" for p, n in wanted if not re.search(rf"\b{re.escape(n)}\b", out)]
        return f"{len(missing)} of {len(wanted)} definitions missing, e.g. {missing[:3]}" if missing else None

    return check


def method_span(root: str, path: str, cls: str, name: str) -> tuple[int, int]:
    tree = ast.parse("\n".join(file_lines(root, path)))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name:
                    return m.lineno, m.end_lineno
    raise SystemExit(f"corpus: no {cls}.{name} in {path}")


def function_span(root: str, path: str, name: str) -> tuple[int, int]:
    tree = ast.parse("\n".join(file_lines(root, path)))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node.lineno, node.end_lineno
    raise SystemExit(f"corpus: no function {name} in {path}")


def line_of(root: str, path: str, text: str) -> int:
    for i, line in enumerate(file_lines(root, path), 1):
        if text in line:
            return i
    raise SystemExit(f"corpus: no {text!r} in {path}")


# ---------------------------------------------------------------------------------------------
# The tasks. Each: a setup (a scripted change, not counted), the four policies, the answer check
# (applied to the baseline's and the careful agent's output, and to each face of Serena's and
# loupe's answers), and for edits a check of the files on disk after each side.


@dataclasses.dataclass
class Task:
    key: str
    title: str
    baseline: Callable  # (Baseline) -> None
    loupe: Callable  # async (McpSide) -> None
    check: Callable[[str], str | None]
    # Which calls' output the check reads: "all" or "last" (a re-read is judged on the re-read).
    judged: str = "all"
    setup: Callable[[str], None] | None = None
    disk_check: Callable[[str], str | None] | None = None
    careful: Callable | None = None  # (Careful) -> None
    serena: Callable | None = None  # async (McpSide) -> None; None: not attempted


def rg_hits(out: str) -> list[tuple[str, int, str]]:
    """The (path, line, text) of each `path:line:text` row of `rg -n`."""
    hits = []
    for row in out.splitlines():
        m = re.match(r"(.+?):(\d+):(.*)", row)
        if m:
            hits.append((m[1], int(m[2]), m[3]))
    return hits


def serena_hits(answer: Answer) -> list[tuple[str, int, str]]:
    """The (path, 0-based line, text) of each match (`  > N:` row) of Serena's search_for_pattern."""
    hits = []
    for path, entries in answer.value().items():
        for entry in entries:
            for row in entry.splitlines():
                m = re.match(r"\s*>\s*(\d+):(.*)", row)
                if m:
                    hits.append((path, int(m[1]), m[2]))
    return hits


def serena_symbol(answer: Answer, kind: str | None = None) -> dict:
    """The first symbol of a find_symbol answer (of the given kind)."""
    return next(s for s in answer.value() if kind is None or s.get("kind") == kind)


def tasks(root: str) -> list[Task]:
    out: list[Task] = []

    # 1. A function's body.
    a, b = function_span(root, "src/flask/helpers.py", "url_for")

    async def body_loupe(L):
        await L("read", {"mode": "symbol", "target": "url_for"})

    def body_base(B):
        B.rg("-n", "def url_for")
        B.read("src/flask/helpers.py")

    def body_careful(C):
        # Two hits (Flask.url_for in app.py, the function in helpers.py): the top-level one.
        path, line, _ = next(h for h in rg_hits(C.rg("-n", "def url_for")) if h[2].startswith("def "))
        C.read_definition(path, line)

    async def body_serena(S):
        # Located first (the name also matches the method Flask/url_for), then its body.
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "url_for"}), "Function")
        await S("find_symbol", {"name_path_pattern": "url_for", "relative_path": found["relative_path"], "include_body": True})

    out.append(Task("body", "find a function's body (`url_for`)", body_base, body_loupe,
                    check_lines(root, "src/flask/helpers.py", a, b), careful=body_careful, serena=body_serena))

    # 2. Its callers.
    sites = [("src/flask/app.py", line_of(root, "src/flask/app.py", "self.debug = get_debug_flag()")),
             ("src/flask/cli.py", line_of(root, "src/flask/cli.py", "app.debug = get_debug_flag()")),
             ("src/flask/cli.py", line_of(root, "src/flask/cli.py", "    debug = get_debug_flag()")),
             ("src/flask/sansio/app.py", line_of(root, "src/flask/sansio/app.py", '= get_debug_flag()')),
             ("tests/test_helpers.py", line_of(root, "tests/test_helpers.py", "assert get_debug_flag() == expect"))]

    async def callers_loupe(L):
        await L("analyze", {"mode": "calls", "target": "get_debug_flag", "direction": "upstream"})

    def callers_base(B):
        B.rg("-n", "-w", "get_debug_flag")

    async def callers_serena(S):
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "get_debug_flag"}))
        await S("find_referencing_symbols", {"name_path": "get_debug_flag", "relative_path": found["relative_path"]})

    out.append(Task("callers", "who calls a function (`get_debug_flag`)", callers_base, callers_loupe,
                    check_sites(sites), careful=callers_base, serena=callers_serena))

    # 3. What a module defines.
    async def module_loupe(L):
        await L("read", {"mode": "outline", "target": "src/flask/ctx.py"})

    def module_base(B):
        B.read("src/flask/ctx.py")

    def module_careful(C):
        C.outline("src/flask/ctx.py")

    async def module_serena(S):
        await S("get_symbols_overview", {"relative_path": "src/flask/ctx.py", "depth": 1})

    out.append(Task("module", "what a module defines (`ctx.py`)", module_base, module_loupe,
                    check_defines(root, ["src/flask/ctx.py"]), careful=module_careful, serena=module_serena))

    # 4. Where an error is raised, and in which function.
    message = "Cannot nest client invocations"
    raise_line = line_of(root, "src/flask/testing.py", message)

    async def raise_loupe(L):
        await L("search", {"query": message, "type": "text"})  # the hit names its function

    def raise_base(B):
        B.rg("-n", message)
        B.read("src/flask/testing.py")

    def raise_careful(C):
        path, line, _ = rg_hits(C.rg("-n", message))[0]
        C.read_around(path, line)

    async def raise_serena(S):
        # The same window as the careful agent's: 20 lines before the hit to 19 after.
        path, line, _ = serena_hits(await S("search_for_pattern", {"substring_pattern": message}))[0]
        await S("read_file", {"relative_path": path, "start_line": line - 20, "end_line": line + 19})

    out.append(Task("raise", "where an error is raised, in which function", raise_base, raise_loupe,
                    check_both(check_all(f'raise RuntimeError("{message}")', str(raise_line)),
                               check_encloses("FlaskClient", "__enter__")),
                    careful=raise_careful, serena=raise_serena))

    # 5. A re-read of the same function a few calls later (judged on the re-read).
    async def reread_loupe(L):
        await L("read", {"mode": "symbol", "target": "url_for"})
        await L("read", {"mode": "symbol", "target": "Config.from_file"})
        await L("read", {"mode": "symbol", "target": "url_for"})

    def reread_base(B):
        B.rg("-n", "def url_for")
        B.read("src/flask/helpers.py")
        B.rg("-n", "def from_file")
        B.read("src/flask/config.py")
        B.read("src/flask/helpers.py")

    def reread_careful(C):
        path, line, _ = next(h for h in rg_hits(C.rg("-n", "def url_for")) if h[2].startswith("def "))
        C.read_definition(path, line)
        other, other_line, _ = rg_hits(C.rg("-n", "def from_file"))[0]
        C.read_definition(other, other_line)
        C.read_definition(path, line)

    async def reread_serena(S):
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "url_for"}), "Function")
        again = {"name_path_pattern": "url_for", "relative_path": found["relative_path"], "include_body": True}
        await S("find_symbol", again)
        await S("find_symbol", {"name_path_pattern": "Config/from_file", "include_body": True})
        await S("find_symbol", again)

    body = check_lines(root, "src/flask/helpers.py", a, b)

    def reread_check(out: str) -> str | None:
        # The body again, or a reference naming its lines (the model holds them from read 1).
        if body(out) is None or re.search(rf"{a}\D{{1,3}}{b}", out):
            return None
        return f"neither the body nor a reference to lines {a}-{b}"

    out.append(Task("reread", "re-read a function three calls later", reread_base, reread_loupe,
                    reread_check, judged="last", careful=reread_careful, serena=reread_serena))

    # 6. A multi-file rename: get_load_dotenv -> should_load_dotenv everywhere.
    old, new = "get_load_dotenv", "should_load_dotenv"
    rename_files = subprocess.run(["rg", "-l", "--sort=path", old], cwd=root, capture_output=True, text=True).stdout.split()
    expected = {p: "\n".join(file_lines(root, p)).replace(old, new) for p in rename_files}

    async def rename_loupe(L):
        await L("edit", {"edits": [{"operation": "rename_symbol", "symbol": old, "new_name": new}]})

    def rename_base(B):
        files = B.rg("-l", old).split()
        for p in files:  # an agent must read a file before it may edit it
            B.read(p)
        for p in files:
            B.edit(p, old, new, replace_all=True)

    def rename_careful(C):
        # `rg -n` shows every occurrence; Claude Code's Edit wants a Read of the file first, and
        # a ranged one counts: 11 lines around the file's first hit.
        first: dict[str, int] = {}
        for path, line, _ in rg_hits(C.rg("-n", old)):
            first.setdefault(path, line)
        for path, line in first.items():
            C.read_range(path, max(1, line - 5), 11)
        for path in first:
            C.edit(path, old, new, replace_all=True)

    async def rename_serena(S):
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": old}))
        await S("rename_symbol", {"name_path": old, "relative_path": found["relative_path"], "new_name": new})

    def rename_disk(root_: str) -> str | None:
        left = subprocess.run(["rg", "-l", old], cwd=root_, capture_output=True, text=True).stdout.split()
        wrong = [p for p, text in expected.items() if "\n".join(file_lines(root_, p)) != text]
        if left or wrong:
            return f"after the rename: {old} left in {left}, files not as expected {wrong}"
        return None

    out.append(Task("rename", f"rename `{old}` in {len(rename_files)} files", rename_base, rename_loupe,
                    check_either(check_all(new), check_all(*rename_files)), judged="last", disk_check=rename_disk, careful=rename_careful, serena=rename_serena))

    # 6b. Symbol edits (issue 32): a method's body replaced, a method added after another, an
    # unused function deleted. Judged on disk; the reply only has to say it was done.
    cfg = "src/flask/config.py"
    cfg_text = "\n".join(file_lines(root, cfg)) + "\n"
    old_body = (
        "        rv = {}\n        for k, v in self.items():\n            if not k.startswith(namespace):\n"
        "                continue\n            if trim_namespace:\n                key = k[len(namespace) :]\n"
        "            else:\n                key = k\n            if lowercase:\n                key = key.lower()\n"
        "            rv[key] = v\n        return rv\n"
    )
    new_body = (
        "rv = {}\nfor k, v in self.items():\n    if k.startswith(namespace):\n"
        "        key = k[len(namespace) :] if trim_namespace else k\n"
        "        rv[key.lower() if lowercase else key] = v\nreturn rv\n"
    )
    indented_body = "".join(f"        {line}\n" if line else "\n" for line in new_body.splitlines())
    if cfg_text.count(old_body) != 1:
        raise SystemExit("corpus: Config.get_namespace's body is not where the suite expects it")
    ns_line = next(i for i, line in enumerate(file_lines(root, cfg), 1) if "def get_namespace(" in line)
    ns_head_end = cfg_text.index('        """\n', cfg_text.index("def get_namespace(")) + len('        """\n')
    ns_head = cfg_text[cfg_text.index("    def get_namespace("):ns_head_end]
    answered = lambda out: None if out.strip() else "an empty answer"  # noqa: E731

    def disk_has(path: str, *wanted: str, gone: tuple[str, ...] = ()) -> Callable[[str], str | None]:
        def check(root_: str) -> str | None:
            text = "\n".join(file_lines(root_, path)) + "\n"
            missing = [w for w in wanted if text.count(w) != 1]
            left = [g for g in gone if g in text]
            return f"{path}: missing {missing}, left {left}" if missing or left else None

        return check

    async def body_edit_loupe(L):
        await L("edit", {"edits": [{"operation": "replace_symbol", "symbol": "Config.get_namespace", "new_body": new_body}]})

    def body_edit_base(B):
        B.rg("-n", "def get_namespace")
        B.read(cfg)
        B.edit(cfg, old_body, indented_body)

    def body_edit_careful(C):
        path, line, _ = rg_hits(C.rg("-n", "def get_namespace"))[0]
        C.read_definition(path, line)
        C.edit(path, old_body, indented_body)

    async def body_edit_serena(S):
        # Serena's body is the whole definition: the signature and docstring are sent again.
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "Config/get_namespace", "include_body": True}))
        await S("replace_symbol_body", {"name_path": "Config/get_namespace", "relative_path": found["relative_path"],
                                        "body": (ns_head + indented_body).strip()})

    out.append(Task("replace_body", "replace a method's body (`Config.get_namespace`)", body_edit_base, body_edit_loupe,
                    answered, judged="last", careful=body_edit_careful, serena=body_edit_serena,
                    disk_check=disk_has(cfg, ns_head + indented_body, gone=("if not k.startswith(namespace):",))))

    added = "def has_namespace(self, namespace: str) -> bool:\n    return any(k.startswith(namespace) for k in self)\n"
    added_indented = "".join(f"    {line}\n" for line in added.splitlines())
    anchor_old = "            rv[key] = v\n        return rv\n"

    async def add_loupe(L):
        await L("edit", {"edits": [{"operation": "insert_after_symbol", "symbol": "Config.get_namespace", "new_string": added}]})

    def add_base(B):
        B.rg("-n", "def get_namespace")
        B.read(cfg)
        B.edit(cfg, anchor_old, anchor_old + "\n" + added_indented)

    def add_careful(C):
        path, line, _ = rg_hits(C.rg("-n", "def get_namespace"))[0]
        C.read_definition(path, line)
        C.edit(path, anchor_old, anchor_old + "\n" + added_indented)

    async def add_serena(S):
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "Config/get_namespace"}))
        await S("insert_after_symbol", {"name_path": "Config/get_namespace", "relative_path": found["relative_path"],
                                        "body": "\n" + added_indented})

    out.append(Task("add_method", "add a method after another (`Config.get_namespace`)", add_base, add_loupe,
                    answered, judged="last", careful=add_careful, serena=add_serena,
                    disk_check=disk_has(cfg, anchor_old + "\n" + added_indented + "\n    def __repr__")))

    cli = "src/flask/cli.py"
    cli_text = "\n".join(file_lines(root, cli)) + "\n"
    dead_start = cli_text.index("def _path_is_ancestor(")
    dead = cli_text[dead_start:cli_text.index("def load_dotenv(", dead_start)]

    async def delete_loupe(L):
        await L("edit", {"edits": [{"operation": "delete_symbol", "symbol": "_path_is_ancestor"}]})

    def delete_base(B):
        B.rg("-n", "_path_is_ancestor")
        B.read(cli)
        B.edit(cli, dead, "")

    def delete_careful(C):
        path, line, _ = rg_hits(C.rg("-n", "_path_is_ancestor"))[0]
        C.read_definition(path, line)
        C.edit(path, dead, "")

    async def delete_serena(S):
        found = serena_symbol(await S("find_symbol", {"name_path_pattern": "_path_is_ancestor"}))
        await S("safe_delete_symbol", {"name_path_pattern": "_path_is_ancestor", "relative_path": found["relative_path"]})

    out.append(Task("delete", "delete an unused function (`_path_is_ancestor`)", delete_base, delete_loupe,
                    answered, judged="last", careful=delete_careful, serena=delete_serena,
                    disk_check=disk_has(cli, "        return super().parse_args(ctx, args)\n\n\ndef load_dotenv(",
                                        gone=("_path_is_ancestor",))))

    # 7. Review a release: what flask 3.0.3 changed since 3.0.0 (the corpus's first commit, tag
    # v3.0.0), and the changes a reviewer opens: the riskiest symbols' own diffs.
    review_range = "v3.0.0..."

    async def review_loupe(L):
        review = await L("read", {"mode": "diff_preview", "target": ".", "against": review_range})
        opened = [call for call in review.structured.get("next_calls", []) if call["arguments"].get("path")]
        for call in opened[:3]:
            await L(call["tool"], call["arguments"])

    def review_base(B):
        B.bash(["git", "diff", "v3.0.0...HEAD"])

    def review_careful(C):
        # The changed files, then the source changes only (docs, tests and requirements skipped).
        C.bash(["git", "diff", "--stat", "v3.0.0...HEAD"])
        C.bash(["git", "diff", "v3.0.0...HEAD", "--", "src/"])

    async def review_serena(S):
        # Serena has no diff tool; the agent context it runs in has a shell.
        await S("execute_shell_command", {"command": "git diff v3.0.0...HEAD"})

    out.append(Task("review", "review a release: flask 3.0.0 → 3.0.3 (61 files)", review_base, review_loupe,
                    check_all("src/flask/helpers.py", "send_file", "ensure_sync", "find_best_app"),
                    careful=review_careful, serena=review_serena))

    # 8. A package's structure.
    package = "src/flask/json"
    package_files = sorted(os.path.join(package, f) for f in os.listdir(os.path.join(root, package)) if f.endswith(".py"))

    async def package_loupe(L):
        await L("read", {"mode": "outline", "target": package})

    def package_base(B):
        for p in B.rg("--files", package).split():
            if p.endswith(".py"):
                B.read(p)

    def package_careful(C):
        C.outline(package)  # one grep over the directory names each file with its definitions

    async def package_serena(S):
        listing = (await S("list_dir", {"relative_path": package, "recursive": False})).value()
        for p in sorted(listing["files"]):
            if p.endswith(".py"):
                await S("get_symbols_overview", {"relative_path": p, "depth": 1})

    out.append(Task("package", f"a package's structure (`{package}`)", package_base, package_loupe,
                    check_defines(root, package_files), careful=package_careful, serena=package_serena))

    # 9. A class's method.
    c, d = method_span(root, "src/flask/app.py", "Flask", "make_response")

    async def method_loupe(L):
        await L("read", {"mode": "symbol", "target": "Flask.make_response"})

    def method_base(B):
        B.rg("-n", "def make_response")
        B.read("src/flask/app.py")

    def method_careful(C):
        # Two hits (helpers.make_response, Flask's in app.py): Flask's.
        path, line, _ = next(h for h in rg_hits(C.rg("-n", "def make_response")) if h[0] == "src/flask/app.py")
        C.read_definition(path, line)

    async def method_serena(S):
        await S("find_symbol", {"name_path_pattern": "Flask/make_response", "include_body": True})

    out.append(Task("method", "find a class's method (`Flask.make_response`)", method_base, method_loupe,
                    check_lines(root, "src/flask/app.py", c, d), careful=method_careful, serena=method_serena))

    # 10. Where a config key is read, and the function that reads it: every side searches, then
    # opens the hit that reads the key (`config["KEY"]`), as an agent would.
    key = "SESSION_COOKIE_SAMESITE"
    key_line = line_of(root, "src/flask/sessions.py", f'app.config["{key}"]')
    reader = f'config["{key}"]'

    async def config_loupe(L):
        await L("search", {"query": key, "type": "text"})  # each hit names its function

    def config_base(B):
        found = B.rg("-n", key)
        path = next(line.split(":", 1)[0] for line in found.splitlines() if reader in line)
        B.read(path)

    def config_careful(C):
        path, line, _ = next(h for h in rg_hits(C.rg("-n", key)) if reader in h[2])
        C.read_around(path, line)

    async def config_serena(S):
        path, line, _ = next(h for h in serena_hits(await S("search_for_pattern", {"substring_pattern": key})) if reader in h[2])
        await S("read_file", {"relative_path": path, "start_line": line - 20, "end_line": line + 19})

    out.append(Task("config", f"where a config key is read, in which function (`{key}`)", config_base, config_loupe,
                    check_both(check_all(f'return app.config["{key}"]', str(key_line)),
                               check_encloses("SessionInterface", "get_cookie_samesite")),
                    careful=config_careful, serena=config_serena))

    # 11. A file by name, and what it defines.
    async def file_loupe(L):
        hits = (await L("search", {"query": "testing.py", "type": "file"})).hits()
        await L("read", {"mode": "outline", "target": hits[0][0]})

    def file_base(B):
        path = B.rg("--files", "-g", "**/testing.py").split()[0]
        B.read(path)

    def file_careful(C):
        C.outline(C.rg("--files", "-g", "**/testing.py").split()[0])

    async def file_serena(S):
        found = (await S("find_file", {"file_mask": "testing.py", "relative_path": "."})).value()
        await S("get_symbols_overview", {"relative_path": found["files"][0], "depth": 1})

    out.append(Task("file", "find a file by name, what it defines (`testing.py`)", file_base, file_loupe,
                    check_defines(root, ["src/flask/testing.py"]), careful=file_careful, serena=file_serena))

    # 12. A window around a traceback's line.
    tb_line = line_of(root, "src/flask/app.py", "response = self.full_dispatch_request()")

    async def window_loupe(L):
        await L("read", {"mode": "snippet", "target": "src/flask/app.py", "start_line": tb_line - 10, "end_line": tb_line + 10})

    def window_base(B):
        B.read("src/flask/app.py")

    def window_careful(C):
        C.read_range("src/flask/app.py", tb_line - 10, 21)

    async def window_serena(S):
        # read_file counts lines from 0.
        await S("read_file", {"relative_path": "src/flask/app.py", "start_line": tb_line - 11, "end_line": tb_line + 9})

    out.append(Task("window", f"read around a traceback's line (`app.py:{tb_line}`)", window_base, window_loupe,
                    check_lines(root, "src/flask/app.py", tb_line - 10, tb_line + 10), careful=window_careful, serena=window_serena))

    # 13. Every usage of a setting: each line that reads, sets or documents a config key, as
    # `rg -n -w` finds them (27 lines in 14 files; loupe pages at 20 hits).
    setting = "SECRET_KEY"
    usages = [(p, n) for p, n, _ in rg_hits(subprocess.run(["rg", "-n", "-w", "--sort=path", setting], cwd=root,
                                                            capture_output=True, text=True).stdout)]

    async def usages_loupe(L):
        args = {"query": setting, "whole_word": True}
        page = await L("search", args)
        while page.structured.get("next_cursor"):  # the next page, as the answer offers it
            page = await L("search", {**args, "cursor": page.structured["next_cursor"]})

    def usages_base(B):
        B.rg("-n", "-w", setting)

    async def usages_serena(S):
        await S("search_for_pattern", {"substring_pattern": rf"\b{setting}\b"})

    out.append(Task("usages", f"every usage of a setting (`{setting}`, {len(usages)} lines)", usages_base, usages_loupe,
                    check_usages(usages), careful=usages_base, serena=usages_serena))

    # 14. A 40-line window around a search hit: where a message is, and 20 lines either side.
    needle = "View function mapping is overwriting an existing"
    hit_path = "src/flask/sansio/app.py"
    hit_line = line_of(root, hit_path, needle)

    async def hitwindow_loupe(L):
        await L("search", {"query": needle, "type": "text", "context_lines": 20})

    def hitwindow_base(B):
        path = rg_hits(B.rg("-n", needle))[0][0]
        B.read(path)

    def hitwindow_careful(C):
        C.rg("-n", "-C", "20", needle)

    async def hitwindow_serena(S):
        await S("search_for_pattern", {"substring_pattern": needle, "context_lines_before": 20, "context_lines_after": 20})

    out.append(Task("hitwindow", f"20 lines either side of a search hit (`{hit_path}:{hit_line}`)", hitwindow_base,
                    hitwindow_loupe, check_lines(root, hit_path, hit_line - 20, hit_line + 20),
                    careful=hitwindow_careful, serena=hitwindow_serena))

    return out


# ---------------------------------------------------------------------------------------------
# Running


SIDES = ("baseline", "careful", "serena", "loupe")
LABEL = {"baseline": "baseline", "careful": "careful", "serena": "Serena", "loupe": "loupe"}


def git(root: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def clean(root: str):
    """Every task starts from the committed tree."""
    git(root, "reset", "--hard", "-q")
    git(root, "clean", "-fdq")


# A names outline of loupe lists a type's methods by name on the type's line
# (`29-114 class AppContext: push, pop`; a nested definition that is not a function keeps its kind,
# `class Meta`). loupe_view adds a `def name` row for each bare name there, as serena_view does
# for the names an overview lists under `Method`; the checks then read both alike.
OUTLINE_NAMES = re.compile(r"^\d+(?:-\d+)? +\S.*?: ((?:[\w$]+|\w+ [\w$]+)(?:, (?:[\w$]+|\w+ [\w$]+))*)$")


def loupe_view(face: str) -> str:
    rows = [face]
    for line in face.splitlines():
        m = OUTLINE_NAMES.match(line)
        if m:
            rows += [name if " " in name else f"def {name}" for name in m[1].split(", ")]
    return "\n".join(rows)


def judged_text(calls: list[Call], judged: str, face: str, side: str = "loupe") -> str:
    chosen = calls[-1:] if judged == "last" else calls
    if side == "serena":
        return "\n".join(serena_view(c.json if face == "json" else c.text) for c in chosen)
    if face == "json":
        return "\n".join(loupe_view(json_view(c.json)) for c in chosen)
    return "\n".join(loupe_view(c.text) for c in chosen)


@dataclasses.dataclass
class Outcome:
    task: Task
    calls: dict  # side -> its calls, or None when the side was not attempted
    verdict: dict  # "baseline", "careful", "Serena text", "Serena JSON", "loupe text", "loupe JSON" -> None (holds) or the reason


def server(loupe: str, root: str, index_dir: str) -> StdioServerParameters:
    return StdioServerParameters(command=loupe, args=["serve", "--root", root, "--index-dir", index_dir], cwd=root)


@dataclasses.dataclass
class Serena:
    binary: str  # the `serena` executable of the serena-agent venv
    home: str  # SERENA_HOME: its settings (serena_config.yml), logs, caches and per-project folder
    stderr: Any = None  # where its stderr goes (its start-up log lines): SERENA_HOME/logs/suite-stderr.log


def serena_server(serena: Serena, root: str) -> StdioServerParameters:
    """`serena start-mcp-server` on the corpus: the `agent` context (every Serena tool, its shell
    among them, with the manual given at start-up rather than through a tool), the classic tool
    interface (one MCP tool per operation; Serena 2's default is a single Python REPL tool), no web
    dashboard, no GUI log window, no usage report. Its settings live in SERENA_HOME
    (serena_config.yml, written by setup.sh: the language server's path, and the project's
    `.serena` folder kept there, outside the corpus, so `git status` stays clean)."""
    return StdioServerParameters(
        command=serena.binary,
        args=["start-mcp-server", "--project", root, "--context", "agent", "--agent-interface", "tools",
              "--transport", "stdio", "--enable-web-dashboard", "false", "--open-web-dashboard", "false",
              "--enable-gui-log-window", "false", "--log-level", "WARNING"],
        env={"SERENA_HOME": serena.home, "SERENA_USAGE_REPORTING": "false"},
        cwd=root)


async def fixed_cost(session: ClientSession, init, count: Counter) -> str:
    """What a session costs before any task, not counted in the tasks: the tool list and the
    server's instructions, in tokens."""
    tools = await session.list_tools()
    listed = compact(tools.model_dump(mode="json", by_alias=True, exclude_none=True)["tools"])
    return f"{len(tools.tools)} tools, tools/list {count(listed):,} tokens, instructions {count(init.instructions or ''):,} tokens"


async def warm_up(loupe: str, root: str, index_dir: str, count: Counter) -> tuple[str, str]:
    """Builds the index once (not counted), so each task's fresh session starts from it."""
    async with stdio_client(server(loupe, root, index_dir)) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            fixed = await fixed_cost(session, init, count)
            side = McpSide(session, count)
            deadline = time.monotonic() + 120
            while True:
                status = await side("manage", {"command": "status"})
                lowered = status.text.lower()
                if re.search(r"index[^\n]*\bready\b", lowered) or not re.search(r"building|indexing", lowered):
                    return status.text, fixed
                if time.monotonic() > deadline:
                    print("warning: the index still builds after 120 s; tasks wait through their progress token", file=sys.stderr)
                    return status.text, fixed
                await asyncio.sleep(0.5)


async def warm_up_serena(serena: Serena, root: str, count: Counter) -> tuple[str, str]:
    """Starts Serena once (not counted): its project configuration is written on first start, and
    a first symbol query has the language server analyse the corpus and fill Serena's cache.
    Returns its version and its fixed cost."""
    async with stdio_client(serena_server(serena, root), errlog=serena.stderr) as (r, w):
        async with ClientSession(r, w) as session:
            init = await session.initialize()
            fixed = await fixed_cost(session, init, count)
            await McpSide(session, count, "serena")("find_symbol", {"name_path_pattern": "url_for"})
            return init.server_info.version, fixed


async def run_mcp(params: StdioServerParameters, policy: Callable, side: str, count: Counter,
                  errlog: Any = None) -> tuple[list[Call], str | None]:
    """One policy in a fresh session: its calls, and why it failed (None when it ran through)."""
    async with stdio_client(params, errlog=errlog or sys.stderr) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            agent = McpSide(session, count, side)
            try:
                await policy(agent)
            except (Failure, IndexError, KeyError, TypeError, ValueError, StopIteration) as e:
                # A failed call, or an answer the policy cannot take its next step from.
                return agent.calls, f"policy failed: {type(e).__name__}: {e}"
    return agent.calls, None


async def run_task(task: Task, loupe: str, root: str, index_dir: str, count: Counter, serena: Serena | None) -> Outcome:
    calls: dict[str, list[Call] | None] = {}
    verdict: dict[str, str | None] = {}

    def fresh():
        clean(root)
        if task.setup:
            task.setup(root)

    # The built-in sides: one face (the text is what the model reads).
    for side, kind, policy in (("baseline", Baseline, task.baseline), ("careful", Careful, task.careful)):
        if policy is None:
            calls[side] = None
            continue
        fresh()
        agent = kind(root, count)
        try:
            policy(agent)
            verdict[side] = task.check(judged_text(agent.calls, task.judged, "text"))
        except (Failure, IndexError, KeyError, TypeError, ValueError, StopIteration) as e:
            verdict[side] = f"policy failed: {type(e).__name__}: {e}"
        if task.disk_check and verdict[side] is None:
            verdict[side] = task.disk_check(root)
        calls[side] = agent.calls

    # The MCP sides: each in a fresh session, both faces checked.
    mcp = [("serena", serena_server(serena, root) if serena and task.serena else None, task.serena),
           ("loupe", server(loupe, root, index_dir), task.loupe)]
    for side, params, policy in mcp:
        if params is None:
            calls[side] = None
            continue
        fresh()
        calls[side], failure = await run_mcp(params, policy, side, count, serena.stderr if side == "serena" else None)
        text, js = f"{LABEL[side]} text", f"{LABEL[side]} JSON"
        if failure:
            verdict[text] = verdict[js] = failure
            continue
        verdict[text] = task.check(judged_text(calls[side], task.judged, "text", side))
        verdict[js] = task.check(judged_text(calls[side], task.judged, "json", side))
        if task.disk_check:
            disk = task.disk_check(root)
            if disk:
                verdict[text] = verdict[js] = disk
    clean(root)
    return Outcome(task, calls, verdict)


# ---------------------------------------------------------------------------------------------
# Reporting


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def times(part: int, whole: int) -> str:
    return f"{part / whole:.2f}×" if whole else "–"


def sums(calls: list[Call]) -> tuple[int, int, int]:
    """(answer tokens as text, answer tokens as JSON, argument tokens)."""
    return sum(c.text_tokens for c in calls), sum(c.json_tokens for c in calls), sum(c.sent for c in calls)


@dataclasses.dataclass
class Cost:
    """A side's cost for a task (or summed): each face's answers plus the arguments."""
    text: int = 0
    json: int = 0
    args: int = 0
    answers_text: int = 0
    answers_json: int = 0
    calls: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(*(getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self)))


def cost(calls: list[Call] | None) -> Cost | None:
    if calls is None:
        return None
    t, j, a = sums(calls)
    return Cost(t + a, j + a, a, t, j, len(calls))


def report(outcomes: list[Outcome], meta: dict, notes: list[str]) -> tuple[str, list[str]]:
    """The markdown, and the list of missed targets."""
    misses: list[str] = []
    cost_rows, call_rows = [], []
    total = {s: Cost() for s in SIDES}
    attempted = {s: 0 for s in SIDES}
    loupe_on_serena = Cost()  # loupe summed over the tasks Serena attempted
    above = {"baseline": 0, "careful": 0, "serena": 0}
    dash = "–"
    for o in outcomes:
        c = {s: cost(o.calls[s]) for s in SIDES}
        for s in SIDES:
            if c[s] is not None:
                total[s] += c[s]
                attempted[s] += 1
        b, k, z, lo = c["baseline"], c["careful"], c["serena"], c["loupe"]
        if z is not None:
            loupe_on_serena += lo
        cost_rows.append(
            f"| {o.task.key} | {b.text:,} | {f'{k.text:,}' if k else dash} | {f'{z.text:,}' if z else dash} | {f'{z.json:,}' if z else dash} "
            f"| {lo.text:,} | {lo.json:,} | {pct(lo.text, b.text)} | {pct(lo.json, b.text)} "
            f"| {times(lo.text, k.text) if k else dash} | {times(lo.json, k.text) if k else dash} "
            f"| {times(lo.text, z.text) if z else dash} | {times(lo.json, z.json) if z else dash} |")
        holds = []
        for key in ("baseline", "careful", "Serena text", "Serena JSON", "loupe text", "loupe JSON"):
            holds.append(dash if key not in o.verdict else "yes" if o.verdict[key] is None else "**NO**")
        n = lambda s: dash if c[s] is None else str(c[s].calls)
        a = lambda s: dash if c[s] is None else f"{c[s].args:,}"
        call_rows.append(f"| {o.task.key} | {o.task.title} | {' / '.join(n(s) for s in SIDES)} | {' / '.join(a(s) for s in SIDES)} "
                         f"| {lo.json / lo.text:.2f} | {' / '.join(holds)} |")
        if lo.text > b.text or lo.json > b.text:
            above["baseline"] += 1
            misses.append(f"task `{o.task.key}` costs more than its baseline: baseline {b.text:,}, loupe text {lo.text:,}, JSON {lo.json:,}")
        if k and (lo.text > k.text or lo.json > k.text):
            above["careful"] += 1
            misses.append(f"task `{o.task.key}` costs more than the careful agent: careful {k.text:,}, loupe text {lo.text:,}, JSON {lo.json:,}")
        if z and (lo.text > z.text or lo.json > z.json):
            above["serena"] += 1
            misses.append(f"task `{o.task.key}` costs more than Serena: Serena text {z.text:,} / JSON {z.json:,}, loupe text {lo.text:,} / JSON {lo.json:,}")
    B, K, Z, L = (total[s] for s in SIDES)
    has_k, has_z = attempted["careful"] > 0, attempted["serena"] > 0
    cost_rows.append(
        f"| **all** | **{B.text:,}** | **{K.text:,}** | **{f'{Z.text:,}' if has_z else dash}** | **{f'{Z.json:,}' if has_z else dash}** "
        f"| **{L.text:,}** | **{L.json:,}** | **{pct(L.text, B.text)}** | **{pct(L.json, B.text)}** "
        f"| **{times(L.text, K.text)}** | **{times(L.json, K.text)}** "
        f"| **{times(loupe_on_serena.text, Z.text) if has_z else dash}** | **{times(loupe_on_serena.json, Z.json) if has_z else dash}** |")
    call_rows.append(f"| **all** | {len(outcomes)} tasks | {' / '.join(str(total[s].calls) if attempted[s] else dash for s in SIDES)} "
                     f"| {' / '.join(f'{total[s].args:,}' if attempted[s] else dash for s in SIDES)} | **{L.json / L.text:.2f}** | |")

    if L.text > SHARE_TARGET * B.text:
        misses.append(f"loupe text face is {pct(L.text, B.text)} of the baseline (target ≤ {SHARE_TARGET:.0%})")
    if L.json > SHARE_TARGET * B.text:
        misses.append(f"loupe JSON face is {pct(L.json, B.text)} of the baseline (target ≤ {SHARE_TARGET:.0%})")
    if L.answers_json > SUITE_RATIO * L.answers_text:
        misses.append(f"JSON face summed over the suite is {L.answers_json / L.answers_text:.2f}× the text face (target ≤ {SUITE_RATIO})")
    for face, mine, theirs in (("text", L.text, K.text), ("JSON", L.json, K.text)):
        if has_k and mine > CAREFUL_TARGET * theirs:
            misses.append(f"loupe {face} face is {times(mine, theirs)} the careful agent (target ≤ {CAREFUL_TARGET}×)")
    for face, mine, theirs in (("text", loupe_on_serena.text, Z.text), ("JSON", loupe_on_serena.json, Z.json)):
        if has_z and mine > SERENA_TARGET * theirs:
            misses.append(f"loupe {face} face is {times(mine, theirs)} Serena, on its tasks (target ≤ {SERENA_TARGET}×)")
    call_misses = []
    for o in outcomes:
        for i, c in enumerate(o.calls["loupe"], 1):
            bound = CALL_RATIO * c.text_tokens + CALL_SLACK
            if c.json_tokens > bound:
                call_misses.append(f"task `{o.task.key}` call {i} `{c.tool} {compact(c.args)[:120]}`: JSON {c.json_tokens} > "
                                   f"{bound:.1f} (= 1.3 × text {c.text_tokens} + 40)")
    misses += call_misses

    md = ["# Token economy: loupe against whole-file reads, a careful agent and Serena", ""]
    md += [f"- {k}: {v}" for k, v in meta.items()]
    md += ["", "Tokens are o200k_base counts. Each column is what the agent's context takes for the task: the tools' answers",
           "plus the arguments the agent writes. *baseline*: `rg` and whole-file reads in `cat -n` form (Claude Code's Read),",
           "`git diff`, str_replace edits. *careful*: the same tools used sparingly: `rg -n`, then Read with offset/limit",
           "around the hit, `rg -n -C 20` for a window, a `class|def` grep as an outline. *Serena*: its own MCP tools",
           "(`agent` context, tool interface). For the MCP sides, *text* is `content[0].text`; *JSON* is",
           "`JSON.stringify(structuredContent)`, what Claude Code and Codex hand the model. The ratios compare loupe's",
           "text and JSON faces with the baseline's and the careful agent's one face, and with Serena's face of the same",
           "kind. See `bench/tokens/README.md`.", "",
           "| task | baseline | careful | Serena text | Serena JSON | loupe text | loupe JSON | text/base | JSON/base "
           "| text/careful | JSON/careful | text/Serena | JSON/Serena |",
           "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|", *cost_rows, ""]
    if has_z and attempted["serena"] < len(outcomes):
        md += [f"Serena attempted {attempted['serena']} of {len(outcomes)} tasks; its sums and the loupe/Serena ratios are over those "
               f"tasks (loupe there: text {loupe_on_serena.text:,}, JSON {loupe_on_serena.json:,}).", ""]
    elif not has_z:
        md += ["Serena was not attempted in this run (`–`).", ""]
    md += ["*calls* and *args* (the tokens of the calls' arguments, included in the columns above): baseline / careful /",
           "Serena / loupe. *JSON/text*: loupe's JSON face over its text face. *holds*: the answer check on baseline /",
           "careful / Serena text / Serena JSON / loupe text / loupe JSON (`–`: not attempted).", "",
           "| task | what | calls | args | JSON/text | holds |", "|---|---|--:|--:|--:|---|", *call_rows, ""]
    if notes:
        md += ["Not counted above, once per session: " + "; ".join(notes) + ".", ""]
    md += ["## Targets", ""]
    na = (None, "not attempted")
    checks = [
        (f"loupe ≤ {SHARE_TARGET:.0%} of the baseline, text face", L.text <= SHARE_TARGET * B.text, pct(L.text, B.text)),
        (f"loupe ≤ {SHARE_TARGET:.0%} of the baseline, JSON face", L.json <= SHARE_TARGET * B.text, pct(L.json, B.text)),
        ("no task above its baseline (either face)", not above["baseline"], f"{above['baseline']} above"),
        ("every call: JSON ≤ 1.3 × text + 40", not call_misses, f"{len(call_misses)} of {L.calls} calls over"),
        (f"suite: JSON ≤ {SUITE_RATIO} × text (answers)", L.answers_json <= SUITE_RATIO * L.answers_text,
         f"{L.answers_json / L.answers_text:.2f}×"),
        (f"loupe ≤ {CAREFUL_TARGET}× the careful agent, text face", *((L.text <= CAREFUL_TARGET * K.text, times(L.text, K.text)) if has_k else na)),
        (f"loupe ≤ {CAREFUL_TARGET}× the careful agent, JSON face", *((L.json <= CAREFUL_TARGET * K.text, times(L.json, K.text)) if has_k else na)),
        (f"loupe ≤ {SERENA_TARGET}× Serena, text face (its tasks)",
         *((loupe_on_serena.text <= SERENA_TARGET * Z.text, times(loupe_on_serena.text, Z.text)) if has_z else na)),
        (f"loupe ≤ {SERENA_TARGET}× Serena, JSON face (its tasks)",
         *((loupe_on_serena.json <= SERENA_TARGET * Z.json, times(loupe_on_serena.json, Z.json)) if has_z else na)),
        ("no task above the careful agent (either face)", *((not above["careful"], f"{above['careful']} above") if has_k else na)),
        ("no task above Serena (either face)", *((not above["serena"], f"{above['serena']} above") if has_z else na)),
        ("every answer holds (every side, every face)", all(v is None for o in outcomes for v in o.verdict.values()), ""),
    ]
    md += ["| target | met | measured |", "|---|---|---|"]
    md += [f"| {name} | {dash if ok is None else 'yes' if ok else '**no**'} | {measured} |" for name, ok, measured in checks]
    md += [""]
    if misses:
        md += ["Missed:", ""] + [f"- {m}" for m in misses] + [""]
    failed = [(o.task.key, s, v) for o in outcomes for s, v in o.verdict.items() if v is not None]
    if failed:
        md += ["Answers that do not hold:", ""] + [f"- `{k}` {s}: {v}" for k, s, v in failed] + [""]
    md += ["## Every call", "", "| task | side | call | args | answer text | answer JSON |", "|---|---|---|--:|--:|--:|"]
    for o in outcomes:
        for s in SIDES:
            for c in o.calls[s] or []:
                js = c.json_tokens if s in ("serena", "loupe") else ""
                md.append(f"| {o.task.key} | {LABEL[s]} | {c.tool} `{_cell(compact(c.args))}` | {c.sent} | {c.text_tokens} | {js} |")
    md.append("")
    return "\n".join(md), misses


def _cell(s: str, limit: int = 110) -> str:
    s = s if len(s) <= limit else s[: limit - 1] + "…"
    return s.replace("|", "\\|").replace("`", "'")


def svg(outcomes: list[Outcome]) -> str:
    """Per task a horizontal bar per side and face (baseline, careful, Serena text and JSON, loupe
    text and JSON) on a log scale; a side not attempted has no bar."""
    series = [("baseline (rg + cat -n)", "#9e9e9e"), ("careful (rg + ranged Read)", "#5d4037"),
              ("Serena, text face", "#2ca02c"), ("Serena, JSON face", "#98df8a"),
              ("loupe, text face", "#1f77b4"), ("loupe, JSON face", "#ff7f0e")]

    def bars(o: Outcome) -> tuple:
        c = {s: cost(o.calls[s]) for s in SIDES}
        return (c["baseline"].text, c["careful"] and c["careful"].text, c["serena"] and c["serena"].text,
                c["serena"] and c["serena"].json, c["loupe"].text, c["loupe"].json)

    values = [(o.task.key, o.task.title.replace("`", ""), bars(o)) for o in outcomes]
    total = tuple(None if any(v[2][i] is None for v in values) else sum(v[2][i] for v in values) for i in range(len(series)))
    values.append(("all", "all tasks, summed", total))
    n = len(series)
    # About 6.8 px per character of a 12 px sans-serif label.
    left, width, bar, gap, top = 20 + 7 * max(len(v[1]) for v in values), 560, 9, 12, 82
    lo, hi = 1, math.ceil(math.log10(max(x for v in values for x in v[2] if x) * 1.05))
    x = lambda v: left + width * (math.log10(max(v, 10 ** lo)) - lo) / (hi - lo)
    height = top + len(values) * (n * bar + gap) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">Tokens per task: loupe vs whole-file reads, a careful agent, Serena (Flask 3.0.3; log scale, lower is better)</text>']
    for i, (name, color) in enumerate(series):
        cx, cy = 10 + (i % 3) * 230, 32 + (i // 3) * 18
        out.append(f'<rect x="{cx}" y="{cy}" width="12" height="12" fill="{color}"/><text x="{cx + 17}" y="{cy + 11}">{html.escape(name)}</text>')
    for p in range(lo, hi + 1):
        out.append(f'<line x1="{x(10 ** p):.1f}" y1="{top - 6}" x2="{x(10 ** p):.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10 ** p):.1f}" y="{height - 14}" text-anchor="middle" fill="#555">{10 ** p:,}</text>')
    y = top
    for key, title, vals in values:
        weight = ' font-weight="bold"' if key == "all" else ""
        out.append(f'<text x="{left - 8}" y="{y + n * bar / 2 + 4}" text-anchor="end"{weight}>{html.escape(title)}</text>')
        for (name, color), v in zip(series, vals):
            if v is not None:
                out.append(f'<rect x="{left}" y="{y}" width="{max(x(v) - left, 1):.1f}" height="{bar - 1}" fill="{color}"/>')
                out.append(f'<text x="{x(v) + 4:.1f}" y="{y + bar - 1}" font-size="9" fill="#333">{v:,}</text>')
            y += bar
        y += gap
    out.append("</svg>")
    return "\n".join(out) + "\n"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", required=True)
    ap.add_argument("--counter", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--serena", help="the serena executable (serena-agent); without it Serena is not attempted")
    ap.add_argument("--serena-home", help="SERENA_HOME for it (settings, caches, the project's .serena folder)")
    ap.add_argument("--md")
    ap.add_argument("--svg")
    ap.add_argument("--only", nargs="*", help="task keys to run (default: all)")
    ap.add_argument("--show", action="store_true", help="print every call's faces (the baseline's outputs left out)")
    ap.add_argument("--meta", nargs="*", default=[], help="key=value lines for the report's header")
    a = ap.parse_args()
    root = os.path.abspath(a.corpus)
    count = Counter(a.counter)
    meta = dict(m.split("=", 1) for m in a.meta)
    serena = None
    if a.serena:
        home = os.path.abspath(a.serena_home)
        os.makedirs(os.path.join(home, "logs"), exist_ok=True)
        serena = Serena(os.path.abspath(a.serena), home, open(os.path.join(home, "logs", "suite-stderr.log"), "a"))

    clean(root)
    chosen = [t for t in tasks(root) if not a.only or t.key in a.only]
    index_dir = tempfile.mkdtemp(prefix="loupe-tokens-index-")
    notes = []
    try:
        started = time.monotonic()
        status, fixed = await warm_up(a.loupe, root, index_dir, count)
        notes.append(f"loupe {fixed}")
        print(f"index built in {time.monotonic() - started:.1f}s: {status.splitlines()[1] if len(status.splitlines()) > 1 else status}", file=sys.stderr)
        if serena:
            started = time.monotonic()
            try:
                version, fixed = await warm_up_serena(serena, root, count)
            except Exception as e:
                raise SystemExit(f"Serena did not start ({type(e).__name__}: {e}); its log: {serena.stderr.name}")
            notes.append(f"Serena {fixed}")
            print(f"Serena {version} warmed up in {time.monotonic() - started:.1f}s", file=sys.stderr)
        outcomes = []
        for task in chosen:
            outcome = await run_task(task, a.loupe, root, index_dir, count, serena)
            outcomes.append(outcome)
            if a.show:
                for s in ("careful", "serena", "loupe"):
                    for c in outcome.calls[s] or []:
                        print(f"\n>>> {outcome.task.key} {c.side} {c.tool} {compact(c.args)}  text {c.text_tokens}  json {c.json_tokens}  args {c.sent}")
                        print(c.text)
                        if s != "careful":
                            print("--- JSON face:")
                            print(c.json)
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
        clean(root)

    md, misses = report(outcomes, meta, notes)
    if a.only:
        # A subset is for iterating; the published results are the whole suite's.
        print("--only: bench/results not written", file=sys.stderr)
        a.md = a.svg = None
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(md)
    if a.svg:
        with open(a.svg, "w", encoding="utf-8") as f:
            f.write(svg(outcomes))
    print(md.split("\n## Every call")[0])
    failed = [o for o in outcomes if any(v is not None for v in o.verdict.values())]
    if misses:
        print(f"{len(misses)} target(s) missed (reported above; a benchmark reports, it does not assert)", file=sys.stderr)
    if failed:
        print(f"FAILED: answers do not hold in {', '.join(o.task.key for o in failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
