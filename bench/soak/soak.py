"""The soak: N concurrent MCP clients (the official Python SDK, 2.x), each with its
own `loupe serve` over stdio on the SAME root and index directory (so the servers share the
root's lock, the edit journal and the index), run a mixed agent-like loop for a set time while a
mutator changes files under the root behind loupe's back. Every call is checked; the run counts
calls per kind, failed calls, lost edits, expected refusals (by code and cause), latency per
tool, and samples each server's RSS every 10 s from /proc.

    python bench/soak/soak.py --loupe target/release/loupe \
        --corpus bench/corpora/soak/django-5.2.8 --clients 4 --minutes 30 \
        --out bench/results/soak.md

`bash bench/soak/run.sh` fetches the corpus, builds the release binary, installs the SDK in a
virtualenv and runs this (see bench/README.md, "Soak").

A client is this script run with `--client N` by the orchestrator; it writes its tallies as
JSON for the orchestrator to merge.

What a client does, as an agent honouring the session gate would:
- search (symbol, text, regex, file, auto), then read what it returned: a copied `next_calls`
  entry, or `candidate_id` with mode file / outline / symbol, sometimes following the cursor
  of a cut read;
- snippet reads (windows of up to 200 lines: no ref needed);
- analyze calls / references / dependencies / impact / types on django's own symbols and files;
- diff_preview of its scratch directory, a scratch file, the whole tree, and of proposed text;
- edit cycles on its own scratch files: read (file_hash), edit guarded by that hash, check the
  bytes on disk against the bytes it computed itself, `manage undo` by transaction id, check
  the original bytes are back; sometimes a dry run (nothing may change), a redo and a second
  undo, a create or delete, a two-file edit, or a deliberately stale hash (CONFLICT expected);
- manage status / history / metrics;
- watcher probes: a text search for the token the mutator wrote most recently into a new file.

Classification: a failed call is a JSON-RPC error, a transport error (a crashed server), a
call over the timeout, or a tool error that the situation did not make expected. Expected
refusals are counted apart, by code and cause: BUDGET_EXCEEDED (the session's read budget; the
client then follows the refusal's `next_calls`), CONFLICT / FILE_NOT_FOUND on a file the
mutator changed or removed, CONFLICT for the deliberately stale hash. A lost edit is an edit
acknowledged (ok, with a transaction id) whose bytes are not on disk, an undo or redo
acknowledged whose bytes are not on disk, or a dry run or refused edit that changed the disk.
"""

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

CALL_TIMEOUT = 120.0
RSS_INTERVAL = 10.0
SCRATCH_FILES = 4

# What the clients ask about: django's own names and files.
SYMBOLS = [
    "reverse", "slugify", "get_object_or_404", "QuerySet", "HttpResponse", "Paginator",
    "cached_property", "ModelAdmin", "render_to_string", "urlencode", "escape", "Signal",
    "Field", "Form", "Template", "lazy", "import_string", "override_settings", "Q", "F",
]
TEXTS = [
    "def get_queryset", "raise ImproperlyConfigured", "class Meta:", "from django.conf import settings",
    "return HttpResponseRedirect", "@cached_property", "self.assertEqual(", "NotImplementedError",
]
REGEXES = [r"def \w+_view\(", r"class \w+Form\(", r"raise \w+Error\(", r"import (os|sys)$"]
FILES = ["paginator.py", "text.py", "base.py", "urls", "*.html", "signals.py"]
AUTO = ["reverse", "how are urls resolved", "QuerySet.filter", "django/utils/", "csrf token check"]
ANALYZE = [
    {"mode": "calls", "target": "reverse", "path": "django/urls/base.py", "max_nodes": 30},
    {"mode": "calls", "target": "slugify", "path": "django/utils/text.py", "direction": "upstream", "max_nodes": 20},
    {"mode": "calls", "target": "get_object_or_404", "path": "django/shortcuts.py", "max_nodes": 20},
    {"mode": "references", "target": "slugify", "path": "django/utils/text.py", "max_nodes": 30},
    {"mode": "references", "target": "Paginator", "path": "django/core/paginator.py", "max_nodes": 30},
    {"mode": "dependencies", "target": "django/utils/text.py"},
    {"mode": "dependencies", "target": "django/shortcuts.py", "direction": "downstream"},
    {"mode": "impact", "target": "django/utils/functional.py", "max_nodes": 50},
    {"mode": "types", "target": "QuerySet", "path": "django/db/models/query.py"},
    {"mode": "types", "target": "ModelAdmin", "path": "django/contrib/admin/options.py"},
]
# Corpus files the mutator appends a line to and takes it off again (clients read them too).
MUTATED_CORPUS = [
    "django/utils/text.py", "django/core/paginator.py", "django/shortcuts.py",
    "django/utils/html.py", "django/urls/base.py", "django/utils/functional.py",
]


def scratch_text(client: int, k: int) -> str:
    lines = [f'"""Scratch module {k} of soak client {client}: edited and undone all the time."""', "", "import os", ""]
    for f in range(10):
        lines += [f"def client{client}_func_{k}_{f}(value):", f"    # step {f} of module {k}",
                  f"    total = value + {f}", "    return total", ""]
    return "\n".join(lines) + "\n"


def server_environment(pairs):
    """The SDK's default environment for a server, plus `KEY=VALUE` pairs (`--server-env`);
    None (the SDK's default) when there are none."""
    if not pairs:
        return None
    from mcp.client.stdio import get_default_environment

    env = get_default_environment()
    for pair in pairs:
        key, _, value = pair.partition("=")
        env[key] = value
    return env


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


# ----------------------------------------------------------------------------------------------
# The client.

class Abort(Exception):
    """The connection is gone (the server crashed or hung): the client stops."""


class Client:
    def __init__(self, spec):
        self.spec = spec
        self.id = spec["client"]
        self.root = Path(spec["root"])
        self.random = random.Random(spec["seed"] * 7919 + self.id)
        self.deadline = spec["deadline"]
        self.calls = Counter()
        self.latency = defaultdict(list)
        self.failures = []
        self.failure_count = 0
        self.failure_kinds = Counter()
        self.expected = Counter()
        self.samples = defaultdict(list)
        self.lost = []
        self.edits = Counter()
        self.watcher = Counter()
        self.watcher_misses = []
        # (unix time, sessions KiB, analyze facts KiB) from each `manage metrics`: the bounded
        # caches, told apart from growth in the memory report.
        self.caches = []
        # (time, bytes the program holds, bytes the allocator keeps resident), from the same call.
        self.heap = []
        self.hits = []
        self.session = None
        self.scratch_dir = f"soak/client-{self.id}"
        # An agent works in tasks; each task is a session (`session_id`) with its own read budget.
        self.task = 0
        self.reads_in_task = 0
        self.tasks_by_budget = 0
        self.new_files = 0
        self.corpus_files = []

    # -- calls

    def session_id(self):
        return f"soak-c{self.id}-t{self.task}"

    def new_task(self):
        self.task += 1
        self.reads_in_task = 0

    async def call(self, label, tool, arguments, expect=None):
        """One tool call, timed and classified. `expect(code, result)` names the cause of an
        expected refusal, or returns None (a failure). Reads and searches carry the task's
        session id."""
        if tool in ("read", "search"):
            arguments = dict(arguments, session_id=self.session_id())
        self.calls[label] += 1
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout=CALL_TIMEOUT)
        except asyncio.TimeoutError:
            self.fail(label, tool, arguments, "TIMEOUT", f"no answer in {CALL_TIMEOUT:.0f} s")
            raise Abort("timeout")
        except Exception as error:  # noqa: BLE001 (a JSON-RPC error or a dead transport)
            kind = type(error).__name__
            self.fail(label, tool, arguments, f"EXCEPTION {kind}", str(error)[:500])
            if kind in ("McpError",):
                return None
            raise Abort(kind)
        self.latency[tool].append(time.perf_counter() - started)
        self.latency[label].append(time.perf_counter() - started)
        if result.is_error:
            structured = result.structured_content or {}
            error = structured.get("error") or {}
            code = error.get("code") or "NO_CODE"
            # The compact face carries the refusal's next calls at the top level.
            next_calls = error.get("next_calls") or structured.get("next_calls") or []
            cause = expect(code, result) if expect else None
            if cause is None and code == "BUDGET_EXCEEDED":
                cause = "session read budget"
            if cause is None:
                text = result.content[0].text if result.content else ""
                self.fail(label, tool, arguments, code, text[:800])
                # An agent then tries what the refusal proposes (once): does that work?
                reads = [entry for entry in next_calls if entry.get("tool") == "read"]
                if reads and not label.startswith("read (refusal's next_calls)"):
                    target = (reads[0].get("arguments") or {}).get("target")
                    await self.call("read (refusal's next_calls)", "read", reads[0].get("arguments") or {},
                                    self.mutator_caused(target))
            else:
                key = f"{code} ({cause})"
                self.expected[key] += 1
                if len(self.samples[key]) < 2:
                    text = result.content[0].text if result.content else ""
                    self.samples[key].append(f"{label} {json.dumps(arguments)[:200]} → {text[:600]}")
                if code == "BUDGET_EXCEEDED":
                    # As the refusal says: search, and a new task (session) starts a fresh budget.
                    await self.follow(next_calls)
                    self.tasks_by_budget += 1
                    self.new_task()
        elif tool == "read" and arguments.get("mode") != "diff_preview":
            self.reads_in_task += 1
            if self.reads_in_task >= self.spec["reads_per_task"]:
                self.new_task()
        return result

    def fail(self, label, tool, arguments, code, message):
        self.failure_count += 1
        self.failure_kinds[f"{label} → {code}"] += 1
        if len(self.failures) < 60:
            shown = json.dumps(arguments)[:400]
            self.failures.append({"label": label, "tool": tool, "arguments": shown, "code": code,
                                  "message": message, "at": round(time.time() - self.spec["start"], 1)})

    async def follow(self, next_calls):
        """What an agent does with a refusal's next calls: run the first search among them."""
        for entry in next_calls:
            if entry.get("tool") == "search":
                await self.call("search (after budget refusal)", "search", entry.get("arguments") or {})
                return

    @staticmethod
    def meta(result):
        structured = (result.structured_content or {}) if result is not None else {}
        return structured.get("meta") or structured

    def hits_of(self, result):
        """A search's hits as dicts: the compact face may give them positionally,
        `[path, line, candidate_id]`, or as objects."""
        hits = []
        for hit in self.meta(result).get("results") or []:
            if isinstance(hit, list) and len(hit) >= 3:
                hit = {"path": hit[0], "line": hit[1], "candidate_id": hit[2]}
            if isinstance(hit, dict) and hit.get("path"):
                hits.append(hit)
        return hits

    def mutated(self, path):
        """Whether the mutator changed or removed `path` (so a CONFLICT or a missing file there
        is its doing)."""
        return path.startswith("soak/mutator/") or path in MUTATED_CORPUS

    def mutator_caused(self, path):
        def expect(code, _result):
            # The mutator rewrites a file in place (truncate, then write), so a read can meet it
            # empty or half-written: an edit's guard sees a conflict, a definition is not there.
            if code in ("CONFLICT", "FILE_NOT_FOUND", "SYMBOL_NOT_FOUND") and self.mutated(path or ""):
                return "file changed by the mutator"
            return None
        return expect

    # -- the loop

    async def run(self):
        from mcp import ClientSession, StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self.spec["loupe"],
            args=["serve", "--root", str(self.root), "--index-dir", self.spec["index"], *self.spec.get("server_args", [])],
            env=server_environment(self.spec.get("server_env", [])),
        )
        errlog = open(self.spec["server_log"], "w")
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    self.session = session
                    await session.initialize()
                    await session.list_tools()
                    self.corpus_files = self.spec["corpus_files"]
                    actions = [
                        (26, self.search_and_read), (14, self.snippet), (12, self.analyze), (8, self.diff_preview),
                        (28, self.edit_cycle), (5, self.manage), (7, self.watcher_probe),
                    ]
                    if self.spec.get("only"):
                        actions = [(weight, action) for weight, action in actions if action.__name__ in self.spec["only"]]
                    weights = [weight for weight, _ in actions]
                    while time.time() < self.deadline:
                        action = self.random.choices(actions, weights)[0][1]
                        await action()
        except Abort as error:
            self.failures.append({"label": "client stopped", "code": str(error), "at": round(time.time() - self.spec["start"], 1)})
        except BaseException as error:  # noqa: BLE001
            self.failure_count += 1
            self.failures.append({"label": "client crashed", "code": type(error).__name__, "message": repr(error)[:800],
                                  "at": round(time.time() - self.spec["start"], 1)})
        finally:
            errlog.close()

    # -- actions

    async def search_and_read(self):
        kind = self.random.choice(["symbol", "symbol", "text", "text", "regex", "file", "auto"])
        query = {"symbol": SYMBOLS, "text": TEXTS, "regex": REGEXES, "file": FILES, "auto": AUTO}[kind]
        arguments = {"query": self.random.choice(query), "type": kind}
        if kind == "auto":
            del arguments["type"]
        result = await self.call(f"search {kind}", "search", arguments)
        meta = self.meta(result)
        hits = self.hits_of(result)
        if not hits:
            return
        paths = {hit["candidate_id"]: hit["path"] for hit in hits}
        self.hits = hits
        hit = self.random.choice(hits[:10])
        path = hit.get("path")
        if self.random.random() < 0.4:
            reads = [entry for entry in meta.get("next_calls") or [] if entry.get("tool") == "read"]
            if reads:
                entry = self.random.choice(reads)
                call = entry.get("arguments") or {}
                target = call.get("target") or paths.get(call.get("candidate_id"))
                await self.call("read (copied next_calls)", "read", entry["arguments"], self.mutator_caused(target))
                return
        # What an agent would ask of a hit: a directory's outline; a source file's outline or
        # text; any other file's text. (Symbol reads come from the search's own next calls.)
        name = path.rsplit("/", 1)[-1]
        if (self.root / path).is_dir():
            mode = "outline"
        elif name.endswith((".py", ".js", ".ts", ".c", ".h", ".rs", ".go", ".java")):
            mode = self.random.choice(["file", "outline"])
        else:
            mode = "file"
        arguments = {"mode": mode, "target": path, "candidate_id": hit["candidate_id"]}
        result = await self.call(f"read {mode} (candidate_id)", "read", arguments, self.mutator_caused(path))
        if result is None or result.is_error:
            return
        cursor = self.meta(result).get("next_cursor")
        if cursor and self.random.random() < 0.4:
            await self.call("read (cursor)", "read", {"mode": mode, "target": arguments["target"], "cursor": cursor},
                            self.mutator_caused(path))

    async def snippet(self):
        path, lines = self.random.choice(self.corpus_files)
        start = self.random.randint(1, max(1, lines))
        end = min(lines, start + self.random.randint(0, 199))
        await self.call("read snippet", "read", {"mode": "snippet", "target": path, "start_line": start, "end_line": max(start, end)},
                        self.mutator_caused(path))

    async def analyze(self):
        arguments = dict(self.random.choice(ANALYZE))
        path = arguments.get("path") or arguments["target"]
        await self.call(f"analyze {arguments['mode']}", "analyze", arguments, self.mutator_caused(path))

    async def diff_preview(self):
        choice = self.random.random()
        k = self.random.randrange(SCRATCH_FILES)
        scratch = f"{self.scratch_dir}/scratch_{k}.py"
        if choice < 0.35:
            arguments = {"mode": "diff_preview", "target": self.scratch_dir}
        elif choice < 0.6:
            arguments = {"mode": "diff_preview", "target": scratch}
        elif choice < 0.8:
            arguments = {"mode": "diff_preview", "target": "."}
        else:
            text = scratch_text(self.id, k).replace("+ 3\n", "+ 33\n")
            arguments = {"mode": "diff_preview", "target": scratch, "content": text, "against": "WORKTREE"}
        await self.call(f"read diff_preview", "read", arguments)

    async def manage(self):
        command = self.random.choice(["status", "history", "metrics"])
        arguments = {"command": command}
        if command == "metrics":
            # The full envelope carries the allocator's own counts (`metrics.heap`).
            arguments["metadata"] = "full"
        if command == "history":
            arguments["limit"] = 5
        result = await self.call(f"manage {command}", "manage", arguments)
        if command == "metrics" and result is not None and result.content:
            found = re.search(r"caches: sessions (\d+) KiB · analyze facts (\d+) KiB", result.content[0].text)
            if found:
                self.caches.append((time.time(), int(found.group(1)), int(found.group(2))))
            heap = ((result.structured_content or {}).get("meta") or {}).get("metrics", {}).get("heap")
            if heap:
                self.heap.append((time.time(), heap["allocated_bytes"], heap["resident_bytes"]))

    async def watcher_probe(self):
        try:
            state = json.loads(Path(self.spec["mutator_state"]).read_text())
        except (OSError, ValueError):
            return
        def holds(entry):
            try:
                return entry["token"] in (self.root / entry["path"]).read_text(errors="replace")
            except OSError:
                return False

        # The newest token written at least 2 s ago that is still on disk.
        now = time.time()
        ready = [entry for entry in state.get("history", []) if now - entry["time"] >= 2.0 and holds(entry)]
        if not ready:
            return
        entry = ready[-1]
        age = now - entry["time"]
        result = await self.call("search text (watcher probe)", "search", {"query": entry["token"], "type": "text"})
        meta = self.meta(result)
        hits = self.hits_of(result)
        if any(hit.get("path") == entry["path"] for hit in hits):
            self.watcher["found"] += 1
        elif not holds(entry):
            self.watcher["changed again during the probe"] += 1
        else:
            self.watcher["missed"] += 1
            if len(self.watcher_misses) < 20:
                self.watcher_misses.append({"label": "watcher miss", "code": "STALE_INDEX",
                                      "message": f"{entry['path']} written {age:.1f} s before the search, not found "
                                                 f"(index_state {meta.get('index_state')})",
                                      "at": round(time.time() - self.spec["start"], 1)})

    # -- edits

    def disk(self, path):
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None

    def check(self, what, path, want):
        got = self.disk(path)
        if got != want:
            self.lost.append({"what": what, "path": path, "at": round(time.time() - self.spec["start"], 1),
                              "want": None if want is None else len(want), "got": None if got is None else len(got)})
            return False
        return True

    async def file_hash(self, path, lines):
        result = await self.call("read snippet (before edit)", "read",
                                 {"mode": "snippet", "target": path, "start_line": 1, "end_line": min(lines, 200)})
        if result is None or result.is_error:
            return None
        meta = self.meta(result)
        return meta.get("file_hash") or (result.structured_content or {}).get("file_hash")

    def plan(self, path, text):
        """One edit of `path` (current `text`) and the bytes it must leave."""
        lines = text.splitlines(keepends=True)
        n = self.new_files
        op = self.random.choice(["replace", "replace", "insert", "replace_lines", "delete"])
        if op == "replace":
            f = self.random.randrange(10)
            old = f"    total = value + {f}\n"
            new = f"    total = value + {f} * {n + 2}  # edited by client {self.id}\n"
            return {"path": path, "operation": "replace", "old_string": old, "new_string": new}, text.replace(old, new, 1)
        if op == "insert":
            line = self.random.randint(0, len(lines))
            new = f"# inserted by client {self.id} ({n})\n"
            return {"path": path, "operation": "insert", "line": line, "new_string": new}, "".join(lines[:line] + [new] + lines[line:])
        if op == "replace_lines":
            start = self.random.randint(1, len(lines))
            end = min(len(lines), start + self.random.randint(0, 3))
            new = f"    pass  # lines {start}-{end} replaced by client {self.id}\n"
            return ({"path": path, "operation": "replace_lines", "start_line": start, "end_line": end, "new_string": new},
                    "".join(lines[:start - 1] + [new] + lines[end:]))
        return {"path": path, "operation": "delete"}, None

    async def edit_cycle(self):
        k = self.random.randrange(SCRATCH_FILES)
        path = f"{self.scratch_dir}/scratch_{k}.py"
        original = self.disk(path)
        if original is None:
            self.lost.append({"what": "scratch file missing before an edit", "path": path})
            return
        text = original.decode()
        digest = await self.file_hash(path, text.count("\n"))
        if not digest:
            return
        self.new_files += 1
        roll = self.random.random()
        edits, want = [], {}
        if roll < 0.12:
            created = f"{self.scratch_dir}/new_{self.new_files}.py"
            content = f"def created_by_client_{self.id}_{self.new_files}():\n    return {self.new_files}\n"
            edits.append({"path": created, "operation": "create", "content": content})
            want[created] = content.encode()
        else:
            edit, new_text = self.plan(path, text)
            edit["expected_hash"] = digest
            edits.append(edit)
            want[path] = None if new_text is None else new_text.encode()
            if roll > 0.88:
                other = f"{self.scratch_dir}/scratch_{(k + 1) % SCRATCH_FILES}.py"
                other_bytes = self.disk(other)
                old = "    # step 0 of module"
                if other_bytes is not None and old.encode() in other_bytes:
                    new = f"    # step zero (two-file edit by client {self.id})"
                    edits.append({"path": other, "operation": "replace", "old_string": old, "new_string": new})
                    want[other] = other_bytes.replace(old.encode(), new.encode(), 1)
        before = {p: self.disk(p) for p in want}

        if self.random.random() < 0.1:
            # A deliberately stale precondition: refused, nothing written.
            stale = dict(edits[0], expected_hash="0000000000000000")
            if stale["operation"] != "create":
                self.edits["stale probes"] += 1
                await self.call("edit (stale hash)", "edit", {"edits": [stale]},
                                lambda code, _r: "deliberately stale hash" if code == "CONFLICT" else None)
                for p, b in before.items():
                    self.check("a refused edit changed the file", p, b)

        dry_run = self.random.random() < 0.15
        result = await self.call("edit (dry run)" if dry_run else "edit", "edit", {"edits": edits, "dry_run": dry_run})
        if result is None or result.is_error:
            for p, b in before.items():
                self.check("a refused edit changed the file", p, b)
            return
        transaction = self.meta(result).get("transaction_id") or (result.structured_content or {}).get("transaction_id")
        if dry_run:
            self.edits["dry runs"] += 1
            for p, b in before.items():
                self.check("a dry run changed the file", p, b)
            if transaction:
                self.lost.append({"what": "a dry run returned a transaction id", "path": path})
            return
        if not transaction:
            self.lost.append({"what": "an applied edit returned no transaction id", "path": path})
            return
        self.edits["applied"] += 1
        ok = all(self.check("edit acknowledged but not on disk", p, w) for p, w in want.items())
        self.edits["verified on disk"] += ok
        if self.random.random() < 0.15:
            result = await self.call("manage redo (nothing undone)", "manage", {"command": "redo", "transaction_id": transaction},
                                     lambda code, _r: "redo of a transaction not undone" if code == "INVALID_ARGS" else None)
        result = await self.call("manage undo", "manage", {"command": "undo", "transaction_id": transaction})
        if result is None or result.is_error:
            self.lost.append({"what": "undo refused: the edit stays applied", "path": path})
            return
        self.edits["undone"] += 1
        ok = all(self.check("undo acknowledged but not restored", p, b) for p, b in before.items())
        self.edits["undo verified on disk"] += ok
        if self.random.random() < 0.2:
            result = await self.call("manage redo", "manage", {"command": "redo", "transaction_id": transaction},
                                     lambda code, _r: "another client's edit ended the redo chain" if code == "INVALID_ARGS" else None)
            if result is None or result.is_error:
                return
            self.edits["redone"] += 1
            ok = all(self.check("redo acknowledged but not on disk", p, w) for p, w in want.items())
            self.edits["redo verified on disk"] += ok
            result = await self.call("manage undo", "manage", {"command": "undo", "transaction_id": transaction})
            if result is None or result.is_error:
                self.lost.append({"what": "second undo refused: the edit stays applied", "path": path})
                return
            self.edits["undone"] += 1
            ok = all(self.check("undo acknowledged but not restored", p, b) for p, b in before.items())
            self.edits["undo verified on disk"] += ok

    def tallies(self):
        return {
            "client": self.id, "calls": dict(self.calls), "failure_count": self.failure_count, "failures": self.failures,
            "failure_kinds": dict(self.failure_kinds),
            "expected": dict(self.expected), "samples": dict(self.samples), "tasks": self.task + 1,
            "tasks_by_budget": self.tasks_by_budget, "lost": self.lost, "edits": dict(self.edits), "watcher": dict(self.watcher),
            "watcher_misses": self.watcher_misses, "caches": self.caches, "heap": self.heap,
            "latency": {label: values for label, values in self.latency.items()},
        }


def run_client(spec_path):
    spec = json.loads(Path(spec_path).read_text())
    client = Client(spec)
    asyncio.run(client.run())
    Path(spec["out"]).write_text(json.dumps(client.tallies()))


# ----------------------------------------------------------------------------------------------
# The orchestrator: the root, the mutator, the RSS sampler, the report.

def git(root, *args):
    subprocess.run(["git", "-c", "user.name=soak", "-c", "user.email=soak@example.invalid", "-c", "init.defaultBranch=main",
                    "-c", "core.autocrlf=false", *args], cwd=root, check=True, stdout=subprocess.DEVNULL)


def prepare(corpus, work, clients):
    if work.exists():
        shutil.rmtree(work)
    root = work / "root"
    shutil.copytree(corpus, root, symlinks=True)
    for client in range(clients):
        scratch = root / "soak" / f"client-{client}"
        scratch.mkdir(parents=True)
        for k in range(SCRATCH_FILES):
            (scratch / f"scratch_{k}.py").write_text(scratch_text(client, k))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "soak corpus")
    (work / "index").mkdir()
    return root


def corpus_files(root):
    files = []
    for directory, _, names in os.walk(root / "django"):
        for name in names:
            if name.endswith(".py"):
                path = Path(directory) / name
                lines = path.read_bytes().count(b"\n")
                if lines >= 5:
                    files.append((str(path.relative_to(root)), lines))
    files.sort()
    return files


# The most files the mutator keeps in soak/mutator/ at once.
MUTATOR_LIVE_FILES = 40


class Mutator(threading.Thread):
    """Changes files under the root behind loupe's back: creates, rewrites and deletes files in
    soak/mutator/ (each holding a fresh token, the latest published for the watcher probes),
    and appends a line to a few corpus files and takes it off again."""

    def __init__(self, root, state_path, deadline, seed):
        super().__init__(daemon=True)
        self.root, self.state_path, self.deadline = root, state_path, deadline
        self.random = random.Random(seed)
        self.counts = Counter()
        self.live = []
        self.touched = {}
        self.history = []

    def publish(self, latest):
        self.history = (self.history + [latest])[-30:]
        temporary = self.state_path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"history": self.history}))
        os.replace(temporary, self.state_path)

    def run(self):
        directory = self.root / "soak" / "mutator"
        directory.mkdir(parents=True, exist_ok=True)
        n = 0
        while time.time() < self.deadline:
            time.sleep(self.random.uniform(0.2, 0.8))
            n += 1
            roll = self.random.random()
            token = f"soaktoken_{n}_{self.random.getrandbits(32):08x}"
            body = f'"""Written by the soak mutator."""\n\n\ndef {token}():\n    return {n}\n'
            if roll < 0.45 or not self.live:
                # The tree stays the same size: at the cap, a new file replaces the oldest (a
                # growing tree grows the index, which a test of memory growth must not measure).
                if len(self.live) >= MUTATOR_LIVE_FILES:
                    self.live.pop(0).unlink()
                    self.counts["deleted"] += 1
                path = directory / f"m_{n}.py"
                path.write_text(body)
                self.live.append(path)
                self.counts["created"] += 1
                self.publish({"token": token, "path": str(path.relative_to(self.root)), "time": time.time()})
            elif roll < 0.7:
                path = self.random.choice(self.live)
                path.write_text(body)
                self.counts["rewritten"] += 1
                self.publish({"token": token, "path": str(path.relative_to(self.root)), "time": time.time()})
            elif roll < 0.85:
                path = self.live.pop(0)
                path.unlink()
                self.counts["deleted"] += 1
            else:
                relative = self.random.choice(MUTATED_CORPUS)
                path = self.root / relative
                if relative in self.touched:
                    path.write_bytes(self.touched.pop(relative))
                    self.counts["corpus file restored"] += 1
                else:
                    original = path.read_bytes()
                    self.touched[relative] = original
                    path.write_bytes(original + f"# soak mutator was here ({token})\n".encode())
                    self.counts["corpus file appended to"] += 1
        for relative, original in self.touched.items():
            (self.root / relative).write_bytes(original)


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def status_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Sampler(threading.Thread):
    """Every 10 s: VmRSS (and threads, open descriptors) of each client's `loupe serve`."""

    def __init__(self, clients, loupe, start):
        super().__init__(daemon=True)
        self.clients, self.loupe, self.start_time = clients, os.path.realpath(loupe), start
        self.samples = defaultdict(list)
        self.hwm = {}
        self.stop = threading.Event()

    def server_of(self, process):
        for pid in children(process.pid):
            try:
                if os.path.realpath(f"/proc/{pid}/exe") == self.loupe:
                    return pid
            except OSError:
                continue
        return None

    def run(self):
        while not self.stop.wait(RSS_INTERVAL):
            at = time.time() - self.start_time
            for client, process in self.clients.items():
                pid = self.server_of(process)
                if pid is None:
                    continue
                rss = status_kb(pid, "VmRSS")
                hwm = status_kb(pid, "VmHWM")
                try:
                    fds = len(os.listdir(f"/proc/{pid}/fd"))
                    threads = len(os.listdir(f"/proc/{pid}/task"))
                except OSError:
                    fds = threads = None
                if rss is not None:
                    self.samples[client].append((at, rss, fds, threads))
                    self.hwm[client] = hwm


def orchestrate(args):
    here = Path(__file__).resolve()
    work = Path(args.work).resolve()
    corpus = Path(args.corpus).resolve()
    loupe = str(Path(args.loupe).resolve())
    state = source_state()
    print(f"preparing {work} from {corpus} ...", file=sys.stderr)
    root = prepare(corpus, work, args.clients)
    files = corpus_files(root)
    start = time.time()
    deadline = start + args.minutes * 60
    state_path = work / "mutator.json"
    processes = {}
    for client in range(args.clients):
        spec = {
            "client": client, "loupe": loupe, "root": str(root), "index": str(work / "index"), "seed": args.seed,
            "start": start, "deadline": deadline, "mutator_state": str(state_path), "corpus_files": files,
            "out": str(work / f"client-{client}.json"), "server_log": str(work / f"server-{client}.log"),
            "reads_per_task": args.reads_per_task, "server_args": args.server_arg,
            "server_env": args.server_env,
            "only": args.only.split(",") if args.only else None,
        }
        spec_path = work / f"client-{client}.spec.json"
        spec_path.write_text(json.dumps(spec))
        log = open(work / f"client-{client}.log", "w")
        processes[client] = subprocess.Popen([sys.executable, str(here), "--client-spec", str(spec_path)],
                                             stdout=log, stderr=subprocess.STDOUT)
    mutator = Mutator(root, state_path, deadline if args.mutator else start, args.seed)
    mutator.start()
    sampler = Sampler(processes, loupe, start)
    sampler.start()
    load_start = os.getloadavg()
    print(f"{args.clients} clients for {args.minutes} min (until {time.strftime('%H:%M:%S', time.localtime(deadline))}) ...",
          file=sys.stderr)
    exit_codes = {}
    for client, process in processes.items():
        remaining = deadline + CALL_TIMEOUT + 60 - time.time()
        try:
            exit_codes[client] = process.wait(timeout=max(1, remaining))
        except subprocess.TimeoutExpired:
            process.kill()
            exit_codes[client] = "killed (did not stop)"
    sampler.stop.set()
    mutator.join()
    load_end = os.getloadavg()
    elapsed = time.time() - start
    tallies = []
    for client in processes:
        path = work / f"client-{client}.json"
        if path.exists():
            tallies.append(json.loads(path.read_text()))
        else:
            tallies.append({"client": client, "calls": {}, "failure_count": 1, "failures": [{"label": "no tallies", "code": str(exit_codes[client])}],
                            "expected": {}, "lost": [], "edits": {}, "watcher": {}, "latency": {}})
    report = render(args, tallies, sampler, mutator, exit_codes, elapsed, load_start, load_end, files, root, state)
    Path(args.out).write_text(report)
    print(report)
    failed = sum(t["failure_count"] for t in tallies) + sum(len(t["lost"]) for t in tallies)
    return 1 if failed else 0


def fmt_ms(seconds):
    return "—" if seconds is None else f"{seconds * 1000:.1f}"


def net_growth(tallies, sampler, elapsed, window):
    """Per server: the change of (RSS − the bounded caches' estimate) from the first window to the
    last, with the caches and net medians in MB. A cache filling to its budget is not growth."""
    start = time.time() - elapsed
    out = []
    for tally in sorted(tallies, key=lambda t: t["client"]):
        client = tally["client"]
        caches = [(at - start, (sessions + facts) / 1024) for at, sessions, facts in tally.get("caches", [])]
        samples = sampler.samples.get(client, [])
        def medians(lo, hi):
            cache = [mb for at, mb in caches if lo <= at < hi]
            rss, _ = window_stats(samples, lo, hi)
            if not cache or rss is None:
                return None
            cache = statistics.median(cache)
            return cache, rss / 1024 - cache
        first, last = medians(0, window), medians(elapsed - window, elapsed + 1)
        if first and last:
            out.append((client, (last[1] / first[1] - 1) * 100, (first[0], last[0], first[1], last[1])))
    return out


def heap_windows(tallies, elapsed, window):
    """Per server: the medians per window of the heap the program holds and of what the
    allocator keeps resident (MB), as `manage metrics` reported them."""
    start = time.time() - elapsed
    out = {}
    for tally in tallies:
        points = [(at - start, allocated / 2**20, resident / 2**20) for at, allocated, resident in tally.get("heap", [])]
        cells, lo = [], 0.0
        while lo < elapsed - 1:
            inside = [(allocated, resident) for at, allocated, resident in points if lo <= at < lo + window]
            if inside:
                cells.append((lo, statistics.median(a for a, _ in inside), statistics.median(r for _, r in inside)))
            lo += window
        if cells:
            out[tally["client"]] = cells
    return out


def window_stats(samples, lo, hi):
    values = [rss for at, rss, _, _ in samples if lo <= at < hi]
    if not values:
        return None, None
    return statistics.median(values), max(values)


def source_state():
    here = Path(__file__).parent
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                           capture_output=True, text=True).stdout.strip()
    return commit, bool(dirty)


def render(args, tallies, sampler, mutator, exit_codes, elapsed, load_start, load_end, files, root, state):
    commit, dirty = state
    version = subprocess.run([args.loupe, "--version"], capture_output=True, text=True).stdout.strip()
    calls = Counter()
    latency = defaultdict(list)
    expected = Counter()
    edits = Counter()
    watcher = Counter()
    failures, lost = [], []
    refusal_samples = {}
    tasks = sum(t.get("tasks", 1) for t in tallies)
    tasks_by_budget = sum(t.get("tasks_by_budget", 0) for t in tallies)
    for tally in tallies:
        for key, values in tally.get("samples", {}).items():
            refusal_samples.setdefault(key, values[:1])
        calls.update(tally["calls"])
        expected.update(tally["expected"])
        edits.update(tally["edits"])
        watcher.update(tally["watcher"])
        failures += [dict(f, client=tally["client"]) for f in tally["failures"]]
        lost += [dict(l, client=tally["client"]) for l in tally["lost"]]
        for label, values in tally["latency"].items():
            latency[label] += values
    failure_count = sum(t["failure_count"] for t in tallies)
    total_calls = sum(calls.values())
    out = []
    out.append(f"# Soak: {args.clients} clients × {args.minutes:g} min (concurrent clients, edits and index churn)\n")
    out.append(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(time.time() - elapsed))}, {elapsed / 60:.1f} min wall")
    out.append(f"- machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, load average {load_start[0]:.2f} at start, "
               f"{load_end[0]:.2f} at the end (other builds shared the machine)")
    out.append(f"- binary: `{args.loupe}` ({version}), release profile; the work tree at the start: commit {commit}"
               f"{' with uncommitted changes' if dirty else ''} (the binary is what `run.sh` built from it)")
    out.append(f"- corpus: `{args.corpus}` (Django 5.2.8 sdist from PyPI, {len(files)} Python files under django/), copied to "
               f"`{root}`, `git init` + one commit, plus {args.clients} × {SCRATCH_FILES} scratch files")
    out.append(f"- command: `python bench/soak/soak.py --loupe {args.loupe} --corpus {args.corpus} --clients {args.clients} "
               f"--minutes {args.minutes:g} --seed {args.seed} --reads-per-task {args.reads_per_task}"
               + "".join(f" --server-arg={arg}" for arg in args.server_arg)
               + "".join(f" --server-env={pair}" for pair in args.server_env)
               + (f" --only {args.only}" if args.only else "") + ("" if args.mutator else " --no-mutator")
               + f" --out {args.out}`")
    out.append(f"- clients: the official MCP Python SDK ({sdk_version()}), one process each, each spawning its own "
               "`loupe serve --root ROOT --index-dir INDEX` over stdio: one root, one index directory, one journal")
    out.append("")
    out.append("## Verdict\n")
    out.append("| | result | target |")
    out.append("|---|---:|---|")
    out.append(f"| calls | {total_calls:,} | |")
    out.append(f"| failed calls | {failure_count} | 0 |")
    out.append(f"| lost edits | {len(lost)} | 0 |")
    growth = []
    window = min(300.0, elapsed / 4)
    for client, samples in sorted(sampler.samples.items()):
        first = window_stats(samples, 0, window)
        last = window_stats(samples, elapsed - window, elapsed + 1)
        if first[0] and last[0]:
            growth.append((client, first, last))
    if growth:
        worst = max((last[0] / first[0] - 1) * 100 for _, first, last in growth)
        out.append(f"| RSS, last vs first {window / 60:.0f} min (median, worst server) | {worst:+.1f} % | does not grow |")
    net = net_growth(tallies, sampler, elapsed, window)
    if net:
        worst = max(change for _, change, _ in net)
        out.append(f"| RSS less the bounded caches, last vs first {window / 60:.0f} min (median, worst server) | {worst:+.1f} % | does not grow |")
    heap = heap_windows(tallies, elapsed, window)
    if heap:
        worst = max((cells[-1][1] / cells[0][1] - 1) * 100 for cells in heap.values())
        out.append(f"| heap the program holds (jemalloc), last vs first {window / 60:.0f} min (median, worst server) | {worst:+.1f} % | does not grow |")
    # The first window is the warm-up: the index loads and the bounded caches fill to their
    # budgets. From the second window on, a server that does not leak stays level.
    warm = []
    for client, samples in sorted(sampler.samples.items()):
        second = window_stats(samples, window, 2 * window)
        last = window_stats(samples, elapsed - window, elapsed + 1)
        if second[0] and last[0] and elapsed >= 3 * window:
            warm.append((last[0] / second[0] - 1) * 100)
    if warm:
        out.append(f"| RSS after the warm-up, last vs second {window / 60:.0f} min (median, worst server) | {max(warm):+.1f} % | does not grow |")
    warm_heap = [(cells[-1][1] / cells[1][1] - 1) * 100 for cells in heap.values() if len(cells) >= 3]
    if warm_heap:
        out.append(f"| heap the program holds after the warm-up, last vs second {window / 60:.0f} min (median, worst server) | {max(warm_heap):+.1f} % | does not grow |")
    out.append(f"| expected refusals | {sum(expected.values()):,} | counted apart |")
    out.append(f"| client exit codes | {', '.join(str(exit_codes[c]) for c in sorted(exit_codes))} | 0 |")
    out.append("")
    out.append("## Calls\n")
    out.append("| kind | calls | p50 ms | p95 ms |")
    out.append("|---|---:|---:|---:|")
    for label in sorted(calls):
        values = latency.get(label, [])
        out.append(f"| {label} | {calls[label]:,} | {fmt_ms(percentile(values, 50))} | {fmt_ms(percentile(values, 95))} |")
    out.append("")
    out.append("Latency per tool (every call of the tool, as the client measured it: the SDK, two pipe hops, the server):\n")
    out.append("| tool | calls | p50 ms | p95 ms | max ms |")
    out.append("|---|---:|---:|---:|---:|")
    for tool in ["read", "search", "analyze", "edit", "manage"]:
        values = latency.get(tool, [])
        if values:
            out.append(f"| {tool} | {len(values):,} | {fmt_ms(percentile(values, 50))} | {fmt_ms(percentile(values, 95))} | {fmt_ms(max(values))} |")
    out.append("")
    out.append("## Edits\n")
    out.append("| | count |")
    out.append("|---|---:|")
    for key in ["applied", "verified on disk", "undone", "undo verified on disk", "redone", "redo verified on disk", "dry runs", "stale probes"]:
        out.append(f"| {key} | {edits.get(key, 0):,} |")
    out.append("")
    out.append("## Expected refusals\n")
    out.append(f"Each client works in tasks of {args.reads_per_task} reads, each task a session (`session_id`) with its own "
               f"read budget: {tasks:,} tasks, {tasks_by_budget:,} of them started early after a `BUDGET_EXCEEDED`.\n")
    if expected:
        out.append("| code (cause) | count |")
        out.append("|---|---:|")
        for key, value in expected.most_common():
            out.append(f"| {key} | {value:,} |")
        out.append("")
        out.append("One of each, as the client saw it:\n")
        for key, values in sorted(refusal_samples.items()):
            for value in values:
                out.append(f"- {key}: `{value[:400]}`".replace("\n", " ⏎ "))
    else:
        out.append("none")
    out.append("")
    out.append("## Files changing under the watcher\n")
    out.append("Mutator (outside loupe): " + ", ".join(f"{key} {value:,}" for key, value in sorted(mutator.counts.items())) + ".")
    out.append("Watcher probes (a text search for the token the mutator wrote last, at least 2 s after it was written): "
               + (", ".join(f"{key} {value:,}" for key, value in sorted(watcher.items())) or "none") + ".")
    out.append("")
    out.append("## Memory (each server's VmRSS, sampled every 10 s)\n")
    out.append(f"| server | samples | first {window / 60:.0f} min median / max MB | next {window / 60:.0f} min median MB | last {window / 60:.0f} min median / max MB | change of the median, last vs first (vs next) | VmHWM MB | fds first → last | threads first → last |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for client, samples in sorted(sampler.samples.items()):
        first = window_stats(samples, 0, window)
        last = window_stats(samples, elapsed - window, elapsed + 1)
        if not samples or first[0] is None or last[0] is None:
            continue
        change = (last[0] / first[0] - 1) * 100
        second = window_stats(samples, window, 2 * window)
        settled = f" ({(last[0] / second[0] - 1) * 100:+.1f} %)" if second[0] else ""
        hwm = sampler.hwm.get(client)
        out.append(f"| {client} | {len(samples)} | {first[0] / 1024:.0f} / {first[1] / 1024:.0f} | {(second[0] or 0) / 1024:.0f} | "
                   f"{last[0] / 1024:.0f} / {last[1] / 1024:.0f} | {change:+.1f} %{settled} | {hwm / 1024 if hwm else 0:.0f} | "
                   f"{samples[0][2]} → {samples[-1][2]} | {samples[0][3]} → {samples[-1][3]} |")
    out.append("")
    series = []
    for client, samples in sorted(sampler.samples.items()):
        step = max(1, len(samples) // 12)
        series.append(f"- server {client}: " + ", ".join(f"{at / 60:.0f}′ {rss / 1024:.0f}" for at, rss, _, _ in samples[::step]))
    out.append("RSS over time (MB, every ~1/12 of the run):\n")
    out += series
    out.append("")
    if net:
        out.append("The bounded caches (`manage metrics`: the session store, budget 16 MiB, and the analyze facts "
                   "cache, budget 128 MiB, as their budgets estimate them), and RSS less them (medians per window, MB):\n")
        out.append(f"| server | caches, first {window / 60:.0f} min | caches, last {window / 60:.0f} min | RSS less caches, first | RSS less caches, last | change |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for client, change, (cache_first, cache_last, net_first, net_last) in net:
            out.append(f"| {client} | {cache_first:.0f} | {cache_last:.0f} | {net_first:.0f} | {net_last:.0f} | {change:+.1f} % |")
        out.append("")
    # The shape, not only the two ends: a bounded cache filling up rises and then stays flat,
    # a leak keeps rising window after window.
    out.append(f"Median RSS per {window / 60:.0f}-minute window (MB):\n")
    for client, samples in sorted(sampler.samples.items()):
        cells, lo = [], 0.0
        while lo < elapsed - 1:
            median, _ = window_stats(samples, lo, lo + window)
            if median is not None:
                cells.append(f"{lo / 60:.0f}–{(lo + window) / 60:.0f}′ {median / 1024:.0f}")
            lo += window
        out.append(f"- server {client}: " + ", ".join(cells))
    out.append("")
    if heap:
        out.append(f"The heap as the allocator counts it (`manage metrics`, `metrics.heap`): what the program holds / what "
                   f"jemalloc keeps resident, median per {window / 60:.0f}-minute window (MB). RSS above the second adds "
                   "the binary, stacks and the tokenizer's tables:\n")
        for client, cells in sorted(heap.items()):
            out.append(f"- server {client}: " + ", ".join(
                f"{lo / 60:.0f}–{(lo + window) / 60:.0f}′ {allocated:.0f} / {resident:.0f}" for lo, allocated, resident in cells))
        out.append("")
    kinds = Counter()
    for tally in tallies:
        kinds.update(tally.get("failure_kinds", {}))
    out.append("## Failures and lost edits\n")
    if kinds:
        out.append("| failed call → code | count |")
        out.append("|---|---:|")
        for key, value in kinds.most_common():
            out.append(f"| {key} | {value:,} |")
        out.append("")
        out.append("The first failures of each client, as it saw them:\n")
    if not failures and not lost:
        out.append("none")
    for failure in failures[:40]:
        out.append(f"- client {failure['client']} at {failure.get('at', '?')} s: {failure.get('label')} → {failure.get('code')}: "
                   f"{failure.get('message', '')[:300]!s} {failure.get('arguments', '')}".replace("\n", " ⏎ "))
    for item in lost[:40]:
        out.append(f"- lost: client {item['client']}: {json.dumps(item)}")
    misses = [dict(m, client=t["client"]) for t in tallies for m in t.get("watcher_misses", [])]
    if misses:
        out.append("")
        out.append("Watcher misses (not failed calls; the first few):\n")
        for miss in misses[:20]:
            out.append(f"- client {miss['client']} at {miss.get('at')} s: {miss.get('message')}")
    out.append("")
    return "\n".join(out) + "\n"


def sdk_version():
    try:
        from importlib.metadata import version
        return f"mcp {version('mcp')}"
    except Exception:  # noqa: BLE001
        return "mcp"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loupe", default="target/release/loupe")
    parser.add_argument("--corpus", default="bench/corpora/soak/django-5.2.8")
    parser.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "loupe-soak"))
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--reads-per-task", type=int, default=20,
                        help="reads per task (session_id) before a client starts a new one (the server's budget is 25)")
    parser.add_argument("--out", default="bench/results/soak.md")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an extra argument for `loupe serve` (repeat it), for experiments")
    parser.add_argument("--server-env", action="append", default=[],
                        help="KEY=VALUE in each server's environment (e.g. MALLOC_ARENA_MAX=2), for experiments")
    parser.add_argument("--only", help="run only these actions (comma-separated method names), for experiments")
    parser.add_argument("--no-mutator", dest="mutator", action="store_false", help="no file changes behind loupe's back")
    parser.add_argument("--client-spec", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client_spec:
        run_client(args.client_spec)
        return 0
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
