"""A small Language Server Protocol client over stdio (standard library only).

JSON-RPC 2.0 with Content-Length framing. A reader thread takes every message off the server's
stdout: answers go to the request that waits for them, requests from the server (configuration,
capability registration, progress tokens) are answered at once, notifications are kept for
`wait_for`. Positions stay in LSP terms here (0-based lines, UTF-16 characters);
`utf16_to_byte_col` / `byte_col_to_utf16` convert against a line's text.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable


class LspError(Exception):
    def __init__(self, method: str, error: dict[str, Any]):
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.method = method
        self.code = error.get("code")
        self.message = str(error.get("message", ""))


class LspTimeout(Exception):
    pass


def path_to_uri(path: Path) -> str:
    return "file://" + urllib.parse.quote(str(path.resolve()))


def uri_to_path(uri: str) -> Path:
    assert uri.startswith("file://"), uri
    return Path(urllib.parse.unquote(uri[len("file://"):]))


def utf16_to_byte_col(line: str, character: int) -> int:
    """0-based UTF-16 offset in `line` -> 0-based UTF-8 byte offset."""
    units = 0
    out = 0
    for ch in line:
        if units >= character:
            break
        units += 2 if ord(ch) > 0xFFFF else 1
        out += len(ch.encode("utf-8"))
    return out


def byte_col_to_utf16(line: str, byte_col: int) -> int:
    """0-based UTF-8 byte offset in `line` -> 0-based UTF-16 offset."""
    raw = line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in raw)


class LspClient:
    def __init__(self, argv: list[str], root: Path, *, settings: dict[str, Any] | None = None,
                 env: dict[str, str] | None = None, stderr_path: Path | None = None):
        self.root = root.resolve()
        self.settings = settings or {}
        self._stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            argv, cwd=str(self.root), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env={**os.environ, **(env or {})})
        self._next_id = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._answers: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # --- framing -------------------------------------------------------------------------
    def _write(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg, separators=(",", ":")).encode("utf-8")
        header = f"Content-Length: {len(body)}\r\n\r\n".encode("ascii")
        with self._lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(header + body)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        raise EOFError
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = out.read(length)
                msg = json.loads(body)
                self._dispatch(msg)
        except (EOFError, ValueError, OSError):
            pass
        finally:
            with self._cond:
                self._closed = True
                self._cond.notify_all()

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "id" in msg and "method" in msg:  # a request from the server
            self._write({"jsonrpc": "2.0", "id": msg["id"], "result": self._answer_server(msg)})
            return
        with self._cond:
            if "id" in msg:
                self._answers[msg["id"]] = msg
            else:
                self.notifications.append(msg)
            self._cond.notify_all()

    def _answer_server(self, msg: dict[str, Any]) -> Any:
        method = msg["method"]
        if method == "workspace/configuration":
            items = msg.get("params", {}).get("items", [])
            return [self._section(item.get("section")) for item in items]
        if method == "workspace/workspaceFolders":
            return [{"uri": path_to_uri(self.root), "name": self.root.name}]
        return None  # registerCapability, workDoneProgress/create, showMessageRequest, ...

    def _section(self, section: str | None) -> Any:
        if not section:
            return self.settings
        node: Any = self.settings
        for part in section.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    # --- requests ------------------------------------------------------------------------
    def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        with self._lock:
            self._next_id += 1
            rid = self._next_id
        self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._answers:
                left = deadline - time.monotonic()
                if self._closed:
                    raise LspError(method, {"code": "closed", "message": "server exited"})
                if left <= 0:
                    self._write({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})
                    raise LspTimeout(f"{method} took over {timeout:.0f}s")
                self._cond.wait(left)
            msg = self._answers.pop(rid)
        if "error" in msg:
            raise LspError(method, msg["error"])
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, pred: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any] | None:
        """The first notification (kept so far or arriving within `timeout`) that `pred` accepts."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._cond:
            while True:
                for msg in self.notifications[seen:]:
                    if pred(msg):
                        return msg
                seen = len(self.notifications)
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._cond.wait(left)

    # --- the session ---------------------------------------------------------------------
    def initialize(self, init_options: Any = None, extra_caps: dict[str, Any] | None = None) -> Any:
        caps: dict[str, Any] = {
            "workspace": {"configuration": True, "workspaceFolders": True,
                          "workspaceEdit": {"documentChanges": True}},
            "textDocument": {
                "synchronization": {"didSave": False},
                "rename": {"prepareSupport": True},
                "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                "definition": {"linkSupport": True},
            },
            "window": {"workDoneProgress": True},
        }
        if extra_caps:
            for key, value in extra_caps.items():
                caps.setdefault(key, {}).update(value)
        result = self.request("initialize", {
            "processId": os.getpid(),
            "rootUri": path_to_uri(self.root),
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": path_to_uri(self.root), "name": self.root.name}],
            "capabilities": caps,
            "initializationOptions": init_options,
        }, timeout=300)
        self.notify("initialized", {})
        if self.settings:
            self.notify("workspace/didChangeConfiguration", {"settings": self.settings})
        return result

    def did_open(self, path: Path, language_id: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path_to_uri(path), "languageId": language_id, "version": 1,
            "text": path.read_text(encoding="utf-8", errors="surrogateescape")}})

    def did_close(self, path: Path) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": path_to_uri(path)}})

    def shutdown(self) -> None:
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._stderr is not subprocess.DEVNULL:
            self._stderr.close()
