"""The token economy suite: everyday agent tasks on Flask 3.0.3, each solved twice by a fixed
policy, once with loupe (over stdio, through the official MCP Python SDK, as a client would) and
once the way agents work without it (ripgrep plus whole-file reads in `cat -n` form, `git diff`,
str_replace-style edits). Every answer is checked on both sides, and on both of loupe's faces:
the text (`content[0].text`) and the structured face (`JSON.stringify(structuredContent)`, which
Claude Code and Codex hand the model). Tokens are counted with the o200k_base tokenizer loupe
uses (the COUNTER binary reads text on stdin and prints its count).

Usage (run.sh sets it up; see bench/tokens/README.md):
    python suite.py --loupe BIN --counter BIN --corpus DIR --md OUT.md --svg OUT.svg [--meta k=v ...]

Exit status: 0 when every answer holds and no call failed (missed token targets are reported, not
asserted); 1 when an answer check fails on either side or a call errors unexpectedly.
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
    side: str  # "baseline" or "loupe"
    tool: str
    args: dict
    text: str  # baseline: the output; loupe: content[0].text
    json: str  # loupe: JSON.stringify(structuredContent); baseline: same as text
    sent: int = 0  # tokens of the arguments (what the agent writes)
    text_tokens: int = 0
    json_tokens: int = 0
    is_error: bool = False


# ---------------------------------------------------------------------------------------------
# The two sides


class Failure(Exception):
    """A call errored where the policy expects an answer."""


class Baseline:
    """What an agent without loupe does: Bash (rg, git) and Read (whole file, `cat -n` form),
    Edit (str_replace). The arguments counted are those of the tool call an agent sends:
    Bash {"command"}, Read {"file_path"} and Edit {"file_path", "old_string", "new_string",
    "replace_all"}, paths relative to the repository."""

    def __init__(self, root: str, count: Counter):
        self.root = root
        self.count = count
        self.calls: list[Call] = []

    def _record(self, tool: str, args: dict, out: str) -> str:
        call = Call("baseline", tool, args, out, out)
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
            raise Failure(f"baseline `{shown}` exited {proc.returncode}: {proc.stderr.strip()}")
        return self._record("Bash", {"command": shown}, proc.stdout)

    def rg(self, *args: str) -> str:
        return self.bash(["rg", *args])

    def read(self, path: str) -> str:
        """A whole-file read as Claude Code's Read tool renders it (`cat -n`: six-wide line
        number, a tab, the line)."""
        with open(os.path.join(self.root, path), encoding="utf-8") as f:
            lines = f.read().splitlines(keepends=True)
        out = "".join(f"{i:6d}\t{line}" for i, line in enumerate(lines, 1))
        if out and not out.endswith("\n"):
            out += "\n"
        return self._record("Read", {"file_path": path}, out)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> str:
        """A str_replace edit, applied for real; the answer is Claude Code's short one."""
        full = os.path.join(self.root, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        found = text.count(old)
        if found == 0 or (found > 1 and not replace_all):
            raise Failure(f"baseline edit of {path}: {found} matches of {old!r}")
        with open(full, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new) if replace_all else text.replace(old, new, 1))
        args = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            args["replace_all"] = True
            out = f"The file {path} has been updated. All occurrences of '{old}' were successfully replaced with '{new}'.\n"
        else:
            out = f"The file {path} has been updated.\n"
        return self._record("Edit", args, out)


class Answer:
    def __init__(self, text: str, structured: Any):
        self.text = text
        self.structured = structured or {}

    def hits(self) -> list:
        """`results[i] = [path, line, candidate_id, …]` (§3.3); a hit given as an object is
        read by its `path`, `line` and `candidate_id`."""
        hits = self.structured.get("results") or []
        return [[h.get("path"), h.get("line"), h.get("candidate_id")] if isinstance(h, dict) else h for h in hits]


class Loupe:
    """One `loupe serve` session; every call goes through the SDK's call_tool with a progress
    callback (a progress token lets the server wait for its first index build)."""

    def __init__(self, session: ClientSession, count: Counter):
        self.session = session
        self.count = count
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
        call = Call("loupe", tool, args, text, structured_face, is_error=bool(result.is_error))
        call.sent = self.count(compact(args))
        call.text_tokens = self.count(text)
        call.json_tokens = self.count(structured_face)
        self.calls.append(call)
        if result.is_error and not expect_error:
            raise Failure(f"loupe {tool} {compact(args)} failed: {text.strip()[:400]}")
        return Answer(text, result.structured_content)


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
# The tasks. Each: a setup (a scripted change, not counted), the two policies, the answer check
# (applied to the baseline's output, loupe's text face and loupe's JSON face), and for edits a
# check of the files on disk after each side.


@dataclasses.dataclass
class Task:
    key: str
    title: str
    baseline: Callable  # (Baseline) -> None
    loupe: Callable  # async (Loupe) -> None
    check: Callable[[str], str | None]
    # Which calls' output the check reads: "all" or "last" (a re-read is judged on the re-read).
    judged: str = "all"
    setup: Callable[[str], None] | None = None
    disk_check: Callable[[str], str | None] | None = None


def tasks(root: str) -> list[Task]:
    out: list[Task] = []

    # 1. A function's body.
    a, b = function_span(root, "src/flask/helpers.py", "url_for")

    async def body_loupe(L):
        hits = (await L("search", {"query": "url_for", "type": "symbol"})).hits()
        await L("read", {"candidate_id": hits[0][2]})

    def body_base(B):
        B.rg("-n", "def url_for")
        B.read("src/flask/helpers.py")

    out.append(Task("body", "find a function's body (`url_for`)", body_base, body_loupe,
                    check_lines(root, "src/flask/helpers.py", a, b)))

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

    out.append(Task("callers", "who calls a function (`get_debug_flag`)", callers_base, callers_loupe,
                    check_sites(sites)))

    # 3. What a module defines.
    async def module_loupe(L):
        hits = (await L("search", {"query": "src/flask/ctx.py", "type": "file"})).hits()
        await L("read", {"mode": "outline", "target": hits[0][0], "candidate_id": hits[0][2]})

    def module_base(B):
        B.read("src/flask/ctx.py")

    out.append(Task("module", "what a module defines (`ctx.py`)", module_base, module_loupe,
                    check_defines(root, ["src/flask/ctx.py"])))

    # 4. Where an error is raised, and in which function.
    message = "Cannot nest client invocations"
    raise_line = line_of(root, "src/flask/testing.py", message)

    async def raise_loupe(L):
        hits = (await L("search", {"query": message, "type": "text"})).hits()
        await L("read", {"candidate_id": hits[0][2]})

    def raise_base(B):
        B.rg("-n", message)
        B.read("src/flask/testing.py")

    out.append(Task("raise", "where an error is raised, in which function", raise_base, raise_loupe,
                    check_all(f'raise RuntimeError("{message}")', str(raise_line), "def __enter__(self) -> FlaskClient:")))

    # 5. A re-read of the same function a few calls later (judged on the re-read).
    async def reread_loupe(L):
        first = (await L("search", {"query": "url_for", "type": "symbol"})).hits()
        await L("read", {"candidate_id": first[0][2]})
        other = (await L("search", {"query": "Config.from_file", "type": "symbol"})).hits()
        await L("read", {"candidate_id": other[0][2]})
        await L("read", {"candidate_id": first[0][2]})

    def reread_base(B):
        B.rg("-n", "def url_for")
        B.read("src/flask/helpers.py")
        B.rg("-n", "def from_file")
        B.read("src/flask/config.py")
        B.read("src/flask/helpers.py")

    body = check_lines(root, "src/flask/helpers.py", a, b)

    def reread_check(out: str) -> str | None:
        # The body again, or a reference naming its lines (the model holds them from read 1).
        if body(out) is None or re.search(rf"{a}\D{{1,3}}{b}", out):
            return None
        return f"neither the body nor a reference to lines {a}-{b}"

    out.append(Task("reread", "re-read a function three calls later", reread_base, reread_loupe,
                    reread_check, judged="last"))

    # 6. A multi-file rename: get_load_dotenv -> should_load_dotenv everywhere.
    old, new = "get_load_dotenv", "should_load_dotenv"
    rename_files = subprocess.run(["rg", "-l", "--sort=path", old], cwd=root, capture_output=True, text=True).stdout.split()
    expected = {p: "\n".join(file_lines(root, p)).replace(old, new) for p in rename_files}

    async def rename_loupe(L):
        found = await L("search", {"query": old, "type": "text", "output": "files"})
        paths = list(dict.fromkeys(hit[0] for hit in found.hits()))
        edits = [{"path": p, "old_string": old, "new_string": new, "replace_all": True} for p in paths]
        await L("edit", {"edits": edits})

    def rename_base(B):
        files = B.rg("-l", old).split()
        for p in files:  # an agent must read a file before it may edit it
            B.read(p)
        for p in files:
            B.edit(p, old, new, replace_all=True)

    def rename_disk(root_: str) -> str | None:
        left = subprocess.run(["rg", "-l", old], cwd=root_, capture_output=True, text=True).stdout.split()
        wrong = [p for p, text in expected.items() if "\n".join(file_lines(root_, p)) != text]
        if left or wrong:
            return f"after the rename: {old} left in {left}, files not as expected {wrong}"
        return None

    out.append(Task("rename", f"rename `{old}` in {len(rename_files)} files", rename_base, rename_loupe,
                    check_all(new), judged="last", disk_check=rename_disk))

    # 7. Review the working tree after a scripted change to three files.
    changes = [("src/flask/app.py", '"SESSION_COOKIE_SAMESITE": None,', '"SESSION_COOKIE_SAMESITE": "Lax",'),
               ("src/flask/testing.py", '"Cannot nest client invocations"', '"Client invocations cannot be nested"'),
               ("src/flask/helpers.py", "    val = os.environ.get(\"FLASK_DEBUG\")", "    val = os.environ.get(\"FLASK_DEBUG\", \"\")")]

    def review_setup(root_: str):
        for path, before, after in changes:
            full = os.path.join(root_, path)
            with open(full, encoding="utf-8") as f:
                text = f.read()
            if text.count(before) != 1:
                raise SystemExit(f"corpus: review change {before!r} not unique in {path}")
            with open(full, "w", encoding="utf-8") as f:
                f.write(text.replace(before, after))

    async def review_loupe(L):
        await L("read", {"mode": "diff_preview", "target": "."})

    def review_base(B):
        B.bash(["git", "diff"])

    out.append(Task("review", "review the working tree (3 files changed)", review_base, review_loupe,
                    check_all(*[p for p, _, _ in changes], *[x.strip() for _, b_, a_ in changes for x in (b_, a_)]),
                    setup=review_setup))

    # 8. A package's structure.
    package = "src/flask/json"
    package_files = sorted(os.path.join(package, f) for f in os.listdir(os.path.join(root, package)) if f.endswith(".py"))

    async def package_loupe(L):
        hits = (await L("search", {"query": package + "/", "type": "directory"})).hits()
        await L("read", {"candidate_id": hits[0][2]})

    def package_base(B):
        for p in B.rg("--files", package).split():
            if p.endswith(".py"):
                B.read(p)

    out.append(Task("package", f"a package's structure (`{package}`)", package_base, package_loupe,
                    check_defines(root, package_files)))

    # 9. A class's method.
    c, d = method_span(root, "src/flask/app.py", "Flask", "make_response")

    async def method_loupe(L):
        hits = (await L("search", {"query": "Flask.make_response", "type": "symbol"})).hits()
        await L("read", {"candidate_id": hits[0][2]})

    def method_base(B):
        B.rg("-n", "def make_response")
        B.read("src/flask/app.py")

    out.append(Task("method", "find a class's method (`Flask.make_response`)", method_base, method_loupe,
                    check_lines(root, "src/flask/app.py", c, d)))

    # 10. Where a config key is read, and the function that reads it: both sides search, then
    # open the hit that reads the key (`config["KEY"]`), as an agent would.
    key = "SESSION_COOKIE_SAMESITE"
    key_line = line_of(root, "src/flask/sessions.py", f'app.config["{key}"]')
    reader = f'config["{key}"]'

    async def config_loupe(L):
        hits = (await L("search", {"query": key, "type": "text"})).hits()
        hit = next(hit for hit in hits if len(hit) > 3 and reader in (hit[3] or ""))
        await L("read", {"candidate_id": hit[2]})

    def config_base(B):
        found = B.rg("-n", key)
        path = next(line.split(":", 1)[0] for line in found.splitlines() if reader in line)
        B.read(path)

    out.append(Task("config", f"where a config key is read, in which function (`{key}`)", config_base, config_loupe,
                    check_all(f'return app.config["{key}"]', str(key_line), "def get_cookie_samesite(")))

    # 11. A file by name, and what it defines.
    async def file_loupe(L):
        hits = (await L("search", {"query": "testing.py", "type": "file"})).hits()
        await L("read", {"candidate_id": hits[0][2]})

    def file_base(B):
        path = B.rg("--files", "-g", "**/testing.py").split()[0]
        B.read(path)

    out.append(Task("file", "find a file by name, what it defines (`testing.py`)", file_base, file_loupe,
                    check_defines(root, ["src/flask/testing.py"])))

    # 12. A window around a traceback's line.
    tb_line = line_of(root, "src/flask/app.py", "response = self.full_dispatch_request()")

    async def window_loupe(L):
        await L("read", {"mode": "snippet", "target": "src/flask/app.py", "start_line": tb_line - 10, "end_line": tb_line + 10})

    def window_base(B):
        B.read("src/flask/app.py")

    out.append(Task("window", f"read around a traceback's line (`app.py:{tb_line}`)", window_base, window_loupe,
                    check_lines(root, "src/flask/app.py", tb_line - 10, tb_line + 10)))

    return out


# ---------------------------------------------------------------------------------------------
# Running


def git(root: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def clean(root: str):
    """Every task starts from the committed tree."""
    git(root, "reset", "--hard", "-q")
    git(root, "clean", "-fdq")


def judged_text(calls: list[Call], judged: str, face: str) -> str:
    chosen = calls[-1:] if judged == "last" else calls
    if face == "json":
        return "\n".join(json_view(c.json) for c in chosen)
    return "\n".join(c.text for c in chosen)


@dataclasses.dataclass
class Outcome:
    task: Task
    base_calls: list[Call]
    loupe_calls: list[Call]
    verdict: dict  # side -> None (holds) or the reason


def server(loupe: str, root: str, index_dir: str) -> StdioServerParameters:
    return StdioServerParameters(command=loupe, args=["serve", "--root", root, "--index-dir", index_dir], cwd=root)


async def warm_up(loupe: str, root: str, index_dir: str, count: Counter):
    """Builds the index once (not counted), so each task's fresh session starts from it."""
    async with stdio_client(server(loupe, root, index_dir)) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            side = Loupe(session, count)
            deadline = time.monotonic() + 120
            while True:
                status = await side("manage", {"command": "status"})
                lowered = status.text.lower()
                if re.search(r"index[^\n]*\bready\b", lowered) or not re.search(r"building|indexing", lowered):
                    return status.text
                if time.monotonic() > deadline:
                    print("warning: the index still builds after 120 s; tasks wait through their progress token", file=sys.stderr)
                    return status.text
                await asyncio.sleep(0.5)


async def run_task(task: Task, loupe: str, root: str, index_dir: str, count: Counter) -> Outcome:
    verdict: dict[str, str | None] = {}

    clean(root)
    if task.setup:
        task.setup(root)
    base = Baseline(root, count)
    try:
        task.baseline(base)
        verdict["baseline"] = task.check(judged_text(base.calls, task.judged, "text"))
    except (Failure, IndexError, KeyError, TypeError, ValueError) as e:
        verdict["baseline"] = f"policy failed: {type(e).__name__}: {e}"
    if task.disk_check and verdict["baseline"] is None:
        verdict["baseline"] = task.disk_check(root)

    clean(root)
    if task.setup:
        task.setup(root)
    async with stdio_client(server(loupe, root, index_dir)) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            side = Loupe(session, count)
            try:
                await task.loupe(side)
            except (Failure, IndexError, KeyError, TypeError, ValueError) as e:
                # A failed call, or an answer the policy cannot take its next step from.
                verdict["loupe text"] = verdict["loupe JSON"] = f"policy failed: {type(e).__name__}: {e}"
    if "loupe text" not in verdict:
        verdict["loupe text"] = task.check(judged_text(side.calls, task.judged, "text"))
        verdict["loupe JSON"] = task.check(judged_text(side.calls, task.judged, "json"))
        if task.disk_check:
            disk = task.disk_check(root)
            if disk:
                verdict["loupe text"] = verdict["loupe JSON"] = disk
    clean(root)
    return Outcome(task, base.calls, side.calls, verdict)


# ---------------------------------------------------------------------------------------------
# Reporting


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def sums(calls: list[Call]) -> tuple[int, int, int]:
    """(answer tokens as text, answer tokens as JSON, argument tokens)."""
    return sum(c.text_tokens for c in calls), sum(c.json_tokens for c in calls), sum(c.sent for c in calls)


def report(outcomes: list[Outcome], meta: dict) -> tuple[str, list[str]]:
    """The markdown, and the list of missed targets."""
    misses: list[str] = []
    rows = []
    tot = [0] * 6
    for o in outcomes:
        bt, _, bs = sums(o.base_calls)
        lt, lj, ls = sums(o.loupe_calls)
        base, text, js = bt + bs, lt + ls, lj + ls
        for i, v in enumerate((base, text, js, bs, ls, lt)):
            tot[i] += v
        holds = " / ".join("yes" if o.verdict[s] is None else "**NO**" for s in ("baseline", "loupe text", "loupe JSON"))
        rows.append(f"| {o.task.key} | {o.task.title} | {len(o.base_calls)} / {len(o.loupe_calls)} | {base:,} | {text:,} | {js:,} "
                    f"| {pct(text, base)} | {pct(js, base)} | {js / text:.2f} | {bs:,} / {ls:,} | {holds} |")
        if text > base or js > base:
            misses.append(f"task `{o.task.key}` costs more than its baseline: baseline {base:,}, loupe text {text:,}, JSON {js:,}")
    base, text, js, bs, ls, lt_out = tot
    lj_out = js - ls
    rows.append(f"| **all** | {len(outcomes)} tasks | {sum(len(o.base_calls) for o in outcomes)} / {sum(len(o.loupe_calls) for o in outcomes)} "
                f"| **{base:,}** | **{text:,}** | **{js:,}** | **{pct(text, base)}** | **{pct(js, base)}** | **{js / text:.2f}** | {bs:,} / {ls:,} | |")
    if text > SHARE_TARGET * base:
        misses.append(f"loupe text face is {pct(text, base)} of the baseline (target ≤ {SHARE_TARGET:.0%})")
    if js > SHARE_TARGET * base:
        misses.append(f"loupe JSON face is {pct(js, base)} of the baseline (target ≤ {SHARE_TARGET:.0%})")
    if lj_out > SUITE_RATIO * lt_out:
        misses.append(f"JSON face summed over the suite is {lj_out / lt_out:.2f}× the text face (target ≤ {SUITE_RATIO})")
    call_misses = []
    for o in outcomes:
        for i, c in enumerate(o.loupe_calls, 1):
            bound = CALL_RATIO * c.text_tokens + CALL_SLACK
            if c.json_tokens > bound:
                call_misses.append(f"task `{o.task.key}` call {i} `{c.tool} {compact(c.args)[:120]}`: JSON {c.json_tokens} > "
                                   f"{bound:.1f} (= 1.3 × text {c.text_tokens} + 40)")
    misses += call_misses

    md = ["# Token economy: loupe against ripgrep + whole-file reads", ""]
    md += [f"- {k}: {v}" for k, v in meta.items()]
    md += ["", "Tokens are o200k_base counts. Each column is what the agent's context takes for the task: the tools' answers",
           "plus the arguments the agent writes. *text* is loupe's `content[0].text`; *JSON* is",
           "`JSON.stringify(structuredContent)`, what Claude Code and Codex hand the model. Baseline: `rg` and whole-file",
           "reads in `cat -n` form (Claude Code's Read), `git diff`, str_replace edits. *calls*: baseline / loupe.",
           "*args*: the tokens of the calls' arguments, baseline / loupe (included in the columns before).",
           "*holds*: the answer check on baseline / loupe text / loupe JSON. See `bench/tokens/README.md`.", "",
           "| task | what | calls | baseline | loupe text | loupe JSON | text/base | JSON/base | JSON/text | args | holds |",
           "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|", *rows, ""]
    md += ["## Targets", ""]
    checks = [
        (f"loupe ≤ {SHARE_TARGET:.0%} of the baseline, text face", text <= SHARE_TARGET * base, pct(text, base)),
        (f"loupe ≤ {SHARE_TARGET:.0%} of the baseline, JSON face", js <= SHARE_TARGET * base, pct(js, base)),
        ("no task above its baseline (either face)", not any("more than its baseline" in m for m in misses),
         f"{sum('more than its baseline' in m for m in misses)} above"),
        ("every call: JSON ≤ 1.3 × text + 40", not call_misses, f"{len(call_misses)} of {sum(len(o.loupe_calls) for o in outcomes)} calls over"),
        (f"suite: JSON ≤ {SUITE_RATIO} × text (answers)", lj_out <= SUITE_RATIO * lt_out, f"{lj_out / lt_out:.2f}×"),
        ("every answer holds (baseline, text, JSON)", all(v is None for o in outcomes for v in o.verdict.values()), ""),
    ]
    md += ["| target | met | measured |", "|---|---|---|"]
    md += [f"| {name} | {'yes' if ok else '**no**'} | {measured} |" for name, ok, measured in checks]
    md += [""]
    if misses:
        md += ["Missed:", ""] + [f"- {m}" for m in misses] + [""]
    failed = [(o.task.key, s, v) for o in outcomes for s, v in o.verdict.items() if v is not None]
    if failed:
        md += ["Answers that do not hold:", ""] + [f"- `{k}` {s}: {v}" for k, s, v in failed] + [""]
    md += ["## Every call", "", "| task | side | call | args | answer text | answer JSON |", "|---|---|---|--:|--:|--:|"]
    for o in outcomes:
        for c in o.base_calls:
            md.append(f"| {o.task.key} | baseline | {c.tool} `{_cell(compact(c.args))}` | {c.sent} | {c.text_tokens} | |")
        for c in o.loupe_calls:
            md.append(f"| {o.task.key} | loupe | {c.tool} `{_cell(compact(c.args))}` | {c.sent} | {c.text_tokens} | {c.json_tokens} |")
    md.append("")
    return "\n".join(md), misses


def _cell(s: str, limit: int = 110) -> str:
    s = s if len(s) <= limit else s[: limit - 1] + "…"
    return s.replace("|", "\\|").replace("`", "'")


def svg(outcomes: list[Outcome]) -> str:
    """Per task three horizontal bars (baseline, loupe text, loupe JSON) on a log scale."""
    series = [("baseline (rg + cat -n)", "#9e9e9e"), ("loupe, text face", "#1f77b4"), ("loupe, JSON face", "#ff7f0e")]
    values = []
    for o in outcomes:
        bt, _, bs = sums(o.base_calls)
        lt, lj, ls = sums(o.loupe_calls)
        values.append((o.task.key, o.task.title.replace("`", ""), (bt + bs, lt + ls, lj + ls)))
    total = tuple(sum(v[2][i] for v in values) for i in range(3))
    values.append(("all", "all tasks, summed", total))
    # About 6.8 px per character of a 12 px sans-serif label.
    left, width, bar, gap, top = 20 + 7 * max(len(v[1]) for v in values), 560, 11, 12, 64
    lo, hi = 1, math.ceil(math.log10(max(max(v[2]) for v in values) * 1.05))
    x = lambda n: left + width * (math.log10(max(n, 10 ** lo)) - lo) / (hi - lo)
    height = top + len(values) * (3 * bar + gap) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">Tokens per task: loupe vs ripgrep + whole-file reads (Flask 3.0.3; log scale, lower is better)</text>']
    for i, (name, color) in enumerate(series):
        out.append(f'<rect x="{10 + i * 200}" y="32" width="12" height="12" fill="{color}"/><text x="{27 + i * 200}" y="43">{html.escape(name)}</text>')
    for p in range(lo, hi + 1):
        out.append(f'<line x1="{x(10 ** p):.1f}" y1="{top - 6}" x2="{x(10 ** p):.1f}" y2="{height - 30}" stroke="#ddd"/>')
        out.append(f'<text x="{x(10 ** p):.1f}" y="{height - 14}" text-anchor="middle" fill="#555">{10 ** p:,}</text>')
    y = top
    for key, title, vals in values:
        weight = ' font-weight="bold"' if key == "all" else ""
        out.append(f'<text x="{left - 8}" y="{y + 1.5 * bar + 4}" text-anchor="end"{weight}>{html.escape(title)}</text>')
        for (name, color), v in zip(series, vals):
            out.append(f'<rect x="{left}" y="{y}" width="{max(x(v) - left, 1):.1f}" height="{bar - 1}" fill="{color}"/>')
            out.append(f'<text x="{x(v) + 4:.1f}" y="{y + bar - 2}" font-size="10" fill="#333">{v:,}</text>')
            y += bar
        y += gap
    out.append("</svg>")
    return "\n".join(out) + "\n"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loupe", required=True)
    ap.add_argument("--counter", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--md")
    ap.add_argument("--svg")
    ap.add_argument("--only", nargs="*", help="task keys to run (default: all)")
    ap.add_argument("--show", action="store_true", help="print every call's faces")
    ap.add_argument("--meta", nargs="*", default=[], help="key=value lines for the report's header")
    a = ap.parse_args()
    root = os.path.abspath(a.corpus)
    count = Counter(a.counter)
    meta = dict(m.split("=", 1) for m in a.meta)

    clean(root)
    chosen = [t for t in tasks(root) if not a.only or t.key in a.only]
    index_dir = tempfile.mkdtemp(prefix="loupe-tokens-index-")
    try:
        started = time.monotonic()
        status = await warm_up(a.loupe, root, index_dir, count)
        print(f"index built in {time.monotonic() - started:.1f}s: {status.splitlines()[1] if len(status.splitlines()) > 1 else status}", file=sys.stderr)
        outcomes = []
        for task in chosen:
            outcome = await run_task(task, a.loupe, root, index_dir, count)
            outcomes.append(outcome)
            if a.show:
                for c in outcome.base_calls + outcome.loupe_calls:
                    print(f"\n>>> {c.side} {c.tool} {compact(c.args)}  text {c.text_tokens}  json {c.json_tokens}  args {c.sent}")
                    if c.side == "loupe":
                        print(c.text)
                        print("--- JSON face:")
                        print(c.json)
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
        clean(root)

    md, misses = report(outcomes, meta)
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
