#!/usr/bin/env python3
"""Renames one corpus's sampled symbols with loupe and with a language server; records both.

For each symbol (symbols.py picks them): loupe's `edit` rename_symbol as a dry run through one
`loupe serve` process (MCP over stdio; all sites, with the real rename and `git diff` when the
200-site list is short of the count the reply gives), and the server's textDocument/rename at
the definition's name (prepareRename first). Sites are (path, 1-based line, 1-based byte column
of the name). Writes one JSON file; report.py turns the JSON files into the markdown report.

    compare.py --corpus flask --language python --root DIR --index-dir DIR --loupe BIN \
        --node-modules DIR --n 60 --seed 32 --out FILE
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp import LspClient, LspError, LspTimeout, byte_col_to_utf16, path_to_uri, uri_to_path, utf16_to_byte_col  # noqa: E402
import symbols  # noqa: E402


# --- loupe over MCP ----------------------------------------------------------------------

class Loupe:
    def __init__(self, binary: str, root: Path, index_dir: Path, stderr_path: Path):
        self._stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "--root", str(root), "--index-dir", str(index_dir), "--no-analytics", "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._q: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "loupe-bench-refactor", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self._q.put(json.loads(line))
            except ValueError:
                pass
        self._q.put(None)

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def rpc(self, method: str, params: Any, timeout: float = 300) -> dict[str, Any]:
        self._id += 1
        rid = self._id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            msg = self._q.get(timeout=max(0.1, deadline - time.monotonic()))
            if msg is None:
                raise RuntimeError("loupe serve exited")
            if msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"loupe {method}: {msg['error']}")
                return msg["result"]

    def edit(self, args: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """The edit tool's structured face, and the seconds the call took (INDEX_NOT_READY retried)."""
        for _ in range(600):
            t = time.perf_counter()
            result = self.rpc("tools/call", {"name": "edit", "arguments": args})
            dt = time.perf_counter() - t
            sc = result.get("structuredContent") or {}
            if (sc.get("error") or {}).get("code") == "INDEX_NOT_READY":
                time.sleep(0.5)
                continue
            return sc, dt
        raise RuntimeError("loupe index never became ready")

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


# --- the language servers ----------------------------------------------------------------

def start_server(language: str, root: Path, node_modules: Path, stderr_path: Path,
                 rust_analyzer: str) -> tuple[LspClient, str, float]:
    """The server, initialized and ready; its version line; seconds to ready."""
    t0 = time.perf_counter()
    if language == "python":
        client = LspClient([str(node_modules / ".bin/pyright-langserver"), "--stdio"], root,
                           settings={"python": {"analysis": {"diagnosticMode": "openFilesOnly",
                                                             "autoSearchPaths": True}}},
                           stderr_path=stderr_path)
        client.initialize()
        found = client.wait_for(lambda m: m.get("method") == "window/logMessage" and re.search(
            r"Found \d+ source file|No source files", m["params"]["message"]), 600)
        if not found:
            raise RuntimeError("pyright never said how many source files it found")
        started = client.wait_for(lambda m: m.get("method") == "window/logMessage" and
                                  "language server" in m["params"]["message"], 1)
        version = started["params"]["message"] if started else "pyright"
        version = re.sub(r"\s*starting$", "", version) + f"; {found['params']['message']}"
    elif language == "typescript":
        client = LspClient([str(node_modules / ".bin/typescript-language-server"), "--stdio"], root,
                           stderr_path=stderr_path)
        client.initialize({
            "tsserver": {"path": str(node_modules / "typescript/lib")},
            # Rename every use, as loupe does: no `new as old` aliases at imports, exports and
            # shorthand properties (VS Code's typescript.preferences.useAliasesForRenames off).
            "preferences": {"providePrefixAndSuffixTextForRename": False},
        })
        seen = client.wait_for(lambda m: m.get("method") == "$/typescriptVersion", 60)
        ts = seen["params"]["version"] if seen else "?"
        tls = json.loads((node_modules / "typescript-language-server/package.json").read_text())["version"]
        version = f"typescript-language-server {tls}, TypeScript {ts}"
    elif language == "rust":
        client = LspClient([rust_analyzer], root, stderr_path=stderr_path)
        info = client.initialize(
            {"checkOnSave": False, "cargo": {"buildScripts": {"enable": False}},
             "procMacro": {"enable": False}, "cachePriming": {"enable": True, "numThreads": 2}},
            extra_caps={"experimental": {"serverStatusNotification": True}})
        if not client.wait_for(lambda m: m.get("method") == "experimental/serverStatus"
                               and m["params"].get("quiescent"), 600):
            raise RuntimeError("rust-analyzer never became quiescent")
        sv = (info.get("serverInfo") or {})
        version = f"{sv.get('name', 'rust-analyzer')} {sv.get('version', '')}"
    else:
        raise ValueError(language)
    return client, version, time.perf_counter() - t0


class FileCache:
    def __init__(self, root: Path):
        self.root = root
        self._lines: dict[str, list[str]] = {}

    def lines(self, rel: str) -> list[str]:
        if rel not in self._lines:
            path = self.root / rel
            text = path.read_bytes().decode("utf-8", errors="surrogateescape") if path.is_file() else ""
            self._lines[rel] = text.split("\n")
        return self._lines[rel]

    def line(self, rel: str, line: int) -> str:
        lines = self.lines(rel)
        return lines[line - 1] if 0 < line <= len(lines) else ""


def server_rename(client: LspClient, language: str, root: Path, files: FileCache,
                  d: dict[str, Any], new_name: str) -> dict[str, Any]:
    path = root / d["path"]
    uri = path_to_uri(path)
    pos = {"line": d["line"] - 1,
           "character": byte_col_to_utf16(files.line(d["path"], d["line"]), d["col"] - 1)}
    doc = {"textDocument": {"uri": uri}, "position": pos}
    if language == "typescript":
        client.did_open(path, "typescript")
    out: dict[str, Any] = {"status": "ok", "sites": [], "outside": [], "seconds": None}
    try:
        for attempt in range(5):
            try:
                prep = client.request("textDocument/prepareRename", doc, timeout=600)
                if prep is None:
                    return {**out, "status": "refused", "reason": "prepareRename: null (not renameable here)"}
                if isinstance(prep, dict) and prep.get("defaultBehavior") is False:
                    return {**out, "status": "refused", "reason": "prepareRename: defaultBehavior false"}
                t = time.perf_counter()
                edit = client.request("textDocument/rename", {**doc, "newName": new_name}, timeout=900)
                out["seconds"] = time.perf_counter() - t
                break
            except LspError as e:
                if e.code == -32801 and attempt < 4:  # ContentModified: still loading
                    time.sleep(2)
                    continue
                return {**out, "status": "refused", "reason": f"{e.method}: {e.message}"[:300]}
            except LspTimeout as e:
                return {**out, "status": "error", "reason": str(e)}
        if edit is None:
            return {**out, "status": "refused", "reason": "rename: null"}
        edits: list[tuple[str, dict[str, Any]]] = []
        for uri_, list_ in (edit.get("changes") or {}).items():
            edits.extend((uri_, e) for e in list_)
        for change in edit.get("documentChanges") or []:
            if "textDocument" in change:
                edits.extend((change["textDocument"]["uri"], e) for e in change["edits"])
            else:
                out.setdefault("file_ops", []).append(change)
        root_resolved = root.resolve()
        for uri_, e in edits:
            p = uri_to_path(uri_).resolve()
            try:
                rel = p.relative_to(root_resolved).as_posix()
            except ValueError:
                out["outside"].append(str(p))
                continue
            start = e["range"]["start"]
            text = files.line(rel, start["line"] + 1)
            col = utf16_to_byte_col(text, start["character"]) + 1
            end = e["range"]["end"]
            old = text[start["character"]:end["character"]] if start["line"] == end["line"] else "…"
            out["sites"].append({"path": rel, "line": start["line"] + 1, "column": col,
                                 "old": old, "new": e.get("newText", "")})
        if out["outside"]:
            # A rename that edits library code (a std trait's method, ...): not one a workspace
            # rename can make, so counted with the refusals.
            first = out["outside"][0]
            out["status"] = "refused"
            out["reason"] = (f"rename edits {len(out['outside'])} sites outside the root "
                             f"(library code, e.g. {'/'.join(first.split('/')[-3:])})")
        return out
    finally:
        if language == "typescript":
            client.did_close(path)


def server_definition(client: LspClient, language: str, root: Path, files: FileCache,
                      site: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
    """Where the server says the name at a site loupe changes (and the server's rename does
    not) is defined: `this` (the renamed definition: the server's rename missed it), `other`
    (another definition: loupe changed a different symbol), `none` (the server cannot tell:
    an untyped receiver, a macro body, ...)."""
    path = root / site["path"]
    pos = {"line": site["line"] - 1,
           "character": byte_col_to_utf16(files.line(site["path"], site["line"]), site["column"] - 1)}
    if language == "typescript":
        client.did_open(path, "typescript")
    try:
        got = client.request("textDocument/definition",
                             {"textDocument": {"uri": path_to_uri(path)}, "position": pos}, timeout=300)
    except (LspError, LspTimeout) as e:
        return {"verdict": "none", "target": f"error: {e}"[:120]}
    finally:
        if language == "typescript":
            client.did_close(path)
    if isinstance(got, dict):
        got = [got]
    targets = []
    for loc in got or []:
        uri = loc.get("targetUri") or loc.get("uri")
        rng = loc.get("targetSelectionRange") or loc.get("range")
        if not uri or not rng:
            continue
        p = uri_to_path(uri).resolve()
        line = rng["start"]["line"] + 1
        try:
            rel = p.relative_to(root.resolve()).as_posix()
            col = utf16_to_byte_col(files.line(rel, line), rng["start"]["character"]) + 1
        except ValueError:
            rel, col = "(outside the root) " + "/".join(p.parts[-2:]), 0
        targets.append((rel, line, col))
    if not targets:
        return {"verdict": "none", "target": ""}
    if any(t == (d["path"], d["line"], d["col"]) for t in targets):
        return {"verdict": "this", "target": f"{d['path']}:{d['line']}:{d['col']}"}
    return {"verdict": "other", "target": ", ".join(f"{p}:{ln}:{c}" for p, ln, c in targets[:3])}


# --- loupe's rename ----------------------------------------------------------------------

COUNT_RE = re.compile(r"\bat (\d+) (?:[a-z_]+ )?sites?\b")


def git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True).stdout


def sites_from_diff(diff: bytes, old: str, new: str) -> list[dict[str, Any]]:
    """Every renamed site in a `git diff -U0` of a rename to a unique name."""
    out = []
    old_b, new_b = old.encode(), new.encode()
    path = None
    minus: list[tuple[int, bytes]] = []
    plus: list[bytes] = []
    line_no = 0

    def flush() -> None:
        for (ln, _), new_line in zip(minus, plus):
            k = 0
            for m in re.finditer(re.escape(new_b), new_line):
                col = m.start() - k * (len(new_b) - len(old_b))
                out.append({"path": path, "line": ln, "column": col + 1})
                k += 1
        minus.clear()
        plus.clear()

    for raw in diff.split(b"\n"):
        if raw.startswith(b"+++ "):
            flush()
            path = raw[6:].decode() if raw.startswith(b"+++ b/") else None
        elif raw.startswith(b"--- "):
            flush()
        elif raw.startswith(b"@@"):
            flush()
            m = re.match(rb"@@ -(\d+)(?:,\d+)? ", raw)
            line_no = int(m.group(1)) if m else 0
        elif raw.startswith(b"-"):
            minus.append((line_no, raw[1:]))
            line_no += 1
        elif raw.startswith(b"+"):
            plus.append(raw[1:])
    flush()
    return out


def _retry_call(err: dict[str, Any], d: dict[str, Any]) -> dict[str, Any] | None:
    """AMBIGUOUS_SYMBOL names one ready `edit` call per candidate: the one of this definition
    (same file, the candidate's line within 3 of the name's), if it differs from the call sent."""
    cands = err.get("candidates") or []
    calls = [c for c in (err.get("next_calls") or []) if c.get("tool") == "edit"]
    if len(cands) != len(calls):
        return None
    best = None
    for cand, call in zip(cands, calls):
        if cand.get("path") != d["path"] or not isinstance(cand.get("line"), int):
            continue
        gap = abs(cand["line"] - d["line"])
        if gap <= 3 and (best is None or gap < best[0]):
            best = (gap, call)
    if best is None:
        return None
    edits = best[1]["arguments"].get("edits") or []
    if len(edits) != 1 or (edits[0].get("symbol"), edits[0].get("path")) == (d["spec"], d["path"]):
        return None
    return edits[0]


def loupe_rename(lp: Loupe, root: Path, d: dict[str, Any], new_name: str) -> dict[str, Any]:
    edit = {"operation": "rename_symbol", "symbol": d["spec"], "path": d["path"], "new_name": new_name}
    sc, dt = lp.edit({"edits": [edit], "dry_run": True, "metadata": "full"})
    out: dict[str, Any] = {"seconds": dt}
    err = sc.get("error") or {}
    if (sc.get("ok") is False or "error" in sc) and err.get("code") == "AMBIGUOUS_SYMBOL":
        # What an agent does next: the candidate's own call, once.
        retry = _retry_call(err, d)
        if retry is not None:
            out["first_refusal"] = {"code": "AMBIGUOUS_SYMBOL", "reason": str(err.get("message", ""))[:300]}
            edit = {**retry, "new_name": new_name}
            out["resolved_spec"] = edit["symbol"]
            sc, dt2 = lp.edit({"edits": [edit], "dry_run": True, "metadata": "full"})
            out["seconds"] = dt + dt2
            err = sc.get("error") or {}
    if sc.get("ok") is False or "error" in sc:
        out.update(status="refused", code=err.get("code", "?"), reason=str(err.get("message", ""))[:300],
                   candidates=[f"{c.get('path')}:{c.get('line')} {c.get('container') or ''} {c.get('kind') or ''}".strip()
                               for c in err.get("candidates") or []])
        return out
    meta = sc.get("meta") or {}
    sites = meta.get("sites") or []
    out["status"] = "ok"
    out["sites"] = [{"path": s["path"], "line": s["line"], "column": s["column"],
                     "confidence": s["confidence"], "changed": bool(s["changed"])} for s in sites]
    m = COUNT_RE.search(sc.get("text") or "")
    reported = int(m.group(1)) if m else None
    listed = sum(1 for s in sites if s["changed"])
    out["reported_changed"] = reported
    if reported is not None and reported > listed:
        # More than the 200 sites the reply lists: rename for real, read the diff, put it back.
        lp.edit({"edits": [edit], "dry_run": False, "metadata": "minimal"})
        diff = git(root, "diff", "-U0", "--no-color", "--no-ext-diff")
        git(root, "checkout", "--", ".")
        git(root, "clean", "-fdq")
        known = {(s["path"], s["line"], s["column"]): s for s in out["sites"]}
        full = []
        for s in sites_from_diff(diff, d["name"], new_name):
            key = (s["path"], s["line"], s["column"])
            full.append(known.get(key) or {**s, "confidence": "unknown", "changed": True})
        full.extend(s for s in out["sites"] if not s["changed"])
        out["sites"] = full
        out["applied_for_all_sites"] = True
    return out


# --- the run -----------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--language", required=True, choices=["python", "typescript", "rust"])
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--index-dir", required=True, type=Path)
    ap.add_argument("--loupe", required=True)
    ap.add_argument("--node-modules", required=True, type=Path)
    ap.add_argument("--rust-analyzer", default="rust-analyzer")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--logs", type=Path, default=None)
    args = ap.parse_args()
    root = args.root.resolve()
    logs = args.logs or args.out.parent
    logs.mkdir(parents=True, exist_ok=True)
    if git(root, "status", "--porcelain").strip():
        print(f"{args.corpus}: {root} has uncommitted changes; resetting", file=sys.stderr)
        git(root, "checkout", "--", ".")
        git(root, "clean", "-fdq")

    t = time.perf_counter()
    subprocess.run([args.loupe, "--root", str(root), "--index-dir", str(args.index_dir), "--no-analytics", "index"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    loupe_index_s = time.perf_counter() - t
    client, server_version, server_ready_s = start_server(
        args.language, root, args.node_modules, logs / f"{args.corpus}.server.log", args.rust_analyzer)
    print(f"{args.corpus}: {server_version}; ready in {server_ready_s:.1f}s; loupe index {loupe_index_s:.1f}s",
          file=sys.stderr)

    t = time.perf_counter()
    if args.language == "python":
        defs, freq = symbols.python_definitions(root)
    else:
        defs, freq = symbols.lsp_definitions(client, root, args.language)
    sample = symbols.select(defs, freq, args.n, args.seed)
    enumerate_s = time.perf_counter() - t
    print(f"{args.corpus}: {len(defs)} definitions, {len(sample)} sampled ({enumerate_s:.1f}s)", file=sys.stderr)

    lp = Loupe(args.loupe, root, args.index_dir, logs / f"{args.corpus}.loupe.log")
    files = FileCache(root)
    # One untimed warm-up on each side (the first symbol): page cache, lazy loads.
    warm = sample[0]
    loupe_rename(lp, root, warm, "zz_warmup")
    t = time.perf_counter()
    server_rename(client, args.language, root, files, warm, "zz_warmup")
    server_warmup_s = time.perf_counter() - t

    results = []
    t_run = time.perf_counter()
    for i, d in enumerate(sample, 1):
        new_name = f"zz_renamed_{i}"
        lo = loupe_rename(lp, root, d, new_name)
        sv = server_rename(client, args.language, root, files, d, new_name)
        for side in (lo, sv):
            for s in side.get("sites", []):
                s["text"] = files.line(s["path"], s["line"])
        if lo["status"] == "ok" and sv["status"] == "ok":
            # Ask the server about each site loupe changes that its rename leaves alone.
            server_keys = {(s["path"], s["line"], s["column"]) for s in sv["sites"]}
            extra = [s for s in lo["sites"] if s["changed"]
                     and (s["path"], s["line"], s["column"]) not in server_keys]
            for s in extra[:400]:
                s["server_definition"] = server_definition(client, args.language, root, files, s, d)
        results.append({"symbol": d, "new_name": new_name, "loupe": lo, "server": sv})
        n_lo = sum(1 for s in lo.get("sites", []) if s.get("changed"))
        print(f"  [{i}/{len(sample)}] {d['spec']} ({d['path']}:{d['line']}) loupe {lo['status']}"
              f"{'/' + lo.get('code', '') if lo['status'] != 'ok' else ''} {n_lo} sites {lo['seconds']:.2f}s; "
              f"server {sv['status']} {len(sv['sites'])} sites "
              f"{(sv['seconds'] or 0):.2f}s", file=sys.stderr)
    run_s = time.perf_counter() - t_run
    lp.close()
    client.shutdown()
    if git(root, "status", "--porcelain").strip():
        raise SystemExit(f"{args.corpus}: the corpus changed during the run")

    kinds: dict[str, int] = {}
    for d in defs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "corpus": args.corpus, "language": args.language, "root": str(root),
        "server_version": server_version, "server_ready_s": server_ready_s,
        "server_warmup_s": server_warmup_s, "loupe_index_s": loupe_index_s,
        "enumerate_s": enumerate_s, "run_s": run_s, "seed": args.seed, "n": args.n,
        "definitions": len(defs), "definition_kinds": kinds,
        "files": len(symbols.git_files(root, {"python": (".py",), "typescript": (".ts", ".tsx"), "rust": (".rs",)}[args.language])),
        "results": results,
    }, indent=1))
    lo_t = [r["loupe"]["seconds"] for r in results]
    sv_t = [r["server"]["seconds"] for r in results if r["server"]["seconds"] is not None]
    print(f"{args.corpus}: done in {run_s:.0f}s; loupe median {statistics.median(lo_t)*1000:.0f} ms, "
          f"server median {statistics.median(sv_t)*1000 if sv_t else 0:.0f} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
