#!/usr/bin/env python3
"""The scale spike: loupe next to a remote code-search engine and rg, in one run.

For each corpus NAME=DIR it
  1. installs the engine (cargo builds bench/scale/server, fetching tantivy from crates.io),
  2. indexes DIR with the engine and with `loupe index` (time, size on disk),
  3. serves both (the engine over HTTP on loopback, `loupe serve` over stdio, raw JSON-RPC),
  4. runs the corpus's literal and regex queries from bench/src/bin/index_bench/queries.rs
     against the engine, loupe and `rg` in turns (p50/p95, match counts next to rg's),
and then, on the first corpus, merges one query's local and remote hits the way docs/scale.md
says (local cone wins, remote hits re-scored with loupe's text-hit score, one ranked page, a
cursor that names both positions and the remote index generation), and shows the two failure
answers (remote over its time budget, remote down). Writes a markdown report (--out).

Standard library only. Usage (from the repository root):
  python3 bench/scale/spike.py --loupe target/release/loupe --data /work/scale-data \\
      django=bench/corpora/index/django linux=bench/corpora/index/linux
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
QUERIES_RS = os.path.join(REPO, "bench/src/bin/index_bench/queries.rs")
RG_BASE = ["rg", "--hidden", "--no-ignore-parent", "--max-filesize", "1M", "--no-messages"]


def log(message):
    print(f"[scale {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The queries: read from index_bench's table, so the spike asks exactly what the index bench asks.

def load_queries(corpus):
    source = open(QUERIES_RS, encoding="utf-8").read()
    const = {"linux": "LINUX", "django": "DJANGO", "rust-src": "RUST_SRC", "zod": "ZOD", "rxjs": "RXJS"}.get(corpus, "GENERIC")
    block = re.search(rf"const {const}: QuerySet = QuerySet \{{\s*queries: &\[(.*?)\],\s*symbols", source, re.S).group(1)
    queries = []
    for cls, raw, text in re.findall(r'(rare|medium|common|phrase|regex)\((r?)"((?:[^"\\]|\\.)*)"\)', block):
        if not raw:
            text = text.encode().decode("unicode_escape")
        queries.append({"class": cls, "regex": cls == "regex", "text": text})
    return queries


# ---------------------------------------------------------------------------------------------
# The three sides.

class Engine:
    """The remote engine's HTTP instance, one kept-alive connection."""

    def __init__(self, binary, index_dir, port):
        self.port = port
        self.process = subprocess.Popen([binary, "serve", "--index", index_dir, "--addr", f"127.0.0.1:{port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while True:
            try:
                self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                self.get("/healthz")
                break
            except OSError:
                if time.time() > deadline or self.process.poll() is not None:
                    raise RuntimeError("the engine did not start")
                time.sleep(0.1)

    def get(self, path, params=None, timeout=None):
        url = path + ("?" + urllib.parse.urlencode(params) if params else "")
        if timeout is not None:
            self.connection.timeout = timeout
            if self.connection.sock is not None:
                self.connection.sock.settimeout(timeout)
        self.connection.request("GET", url)
        response = self.connection.getresponse()
        return json.loads(response.read())

    def search(self, query, regex, **extra):
        params = {"q": query, "kind": "regex" if regex else "literal", "limit": 20}
        params.update(extra)
        return self.get("/search", params)

    def rss_kb(self):
        return proc_kb(self.process.pid, "VmRSS:")

    def stop(self):
        self.connection.close()
        self.process.terminate()
        self.process.wait(timeout=10)


class Loupe:
    """`loupe serve` as a child, spoken to in raw newline-delimited JSON-RPC."""

    def __init__(self, binary, root, index_dir):
        env = {key: value for key, value in os.environ.items() if not key.startswith("LOUPE_")}
        self.process = subprocess.Popen([binary, "serve", "--root", root, "--index-dir", index_dir],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=env, bufsize=0)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "scale-spike", "version": "0"}})
        self.notify("notifications/initialized")

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def notify(self, method):
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("loupe serve closed its stdout")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "result" not in message:
                    raise RuntimeError(f"loupe: {message}")
                return message["result"]

    def search(self, arguments):
        return self.request("tools/call", {"name": "search", "arguments": arguments})

    def wait_ready(self, limit_s=120):
        """Until `manage status` says the index is ready and the watcher on, and the server's
        CPU time then stays still for a second (the start-up reconcile is done): the queries
        measure a settled server, as a user's long-running one is."""
        deadline = time.time() + limit_s
        while time.time() < deadline:
            status = self.request("tools/call", {"name": "manage", "arguments": {"command": "status"}})
            text = status["content"][0]["text"]
            if "index ready" in text and "watcher on" in text:
                break
            time.sleep(0.5)
        before = cpu_seconds(self.process.pid)
        while time.time() < deadline:
            time.sleep(1)
            now = cpu_seconds(self.process.pid)
            if now - before < 0.05:
                return
            before = now

    def rss_kb(self):
        return proc_kb(self.process.pid, "VmRSS:")

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


def rg_count(root, query, regex):
    command = RG_BASE + ["-c", "--smart-case"] + ([] if regex else ["-F"]) + ["-e", query, "."]
    output = subprocess.run(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    return sum(int(line.rsplit(":", 1)[1]) for line in output.splitlines() if ":" in line)


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_kb(pid, field):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def du_bytes(path):
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                pass
    return total


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(samples, fraction):
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def loupe_total(result):
    """The total a loupe search answer states, and whether it is a lower bound."""
    structured = result.get("structuredContent") or {}
    meta = structured.get("meta") or {}
    if "total" in meta:
        return meta["total"], bool(meta.get("total_is_lower_bound"))
    text = result["content"][0]["text"]
    found = re.search(r"hits \S+ of ([\d,]+)(\+?)", text) or re.match(r"([\d,]+)() hits?\b", text)
    if found:
        return int(found.group(1).replace(",", "")), bool(found.group(2))
    return 0, False


# ---------------------------------------------------------------------------------------------
# One corpus.

def install_engine():
    log("installing the engine: cargo build --release --manifest-path bench/scale/server/Cargo.toml")
    started = time.time()
    subprocess.run(["cargo", "build", "--release", "--manifest-path", os.path.join(HERE, "server/Cargo.toml")],
                   check=True)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "server/target")
    return os.path.join(target, "release/scale-spike"), time.time() - started


def run_corpus(options, engine_binary, name, root):
    root = os.path.abspath(root)
    queries = load_queries(name)
    report = {"name": name, "root": root, "queries": []}
    engine_index = os.path.join(options.data, f"engine-idx-{name}")
    loupe_index = os.path.join(options.data, f"loupe-idx-{name}")
    for directory in (engine_index, loupe_index):
        shutil.rmtree(directory, ignore_errors=True)

    log(f"{name}: rg --files (and a warm page cache)")
    files = subprocess.run(RG_BASE + ["--files", "."], cwd=root, stdout=subprocess.PIPE).stdout.count(b"\n")
    rg_count(root, "zqx_no_such_token_qxz", False)
    report["rg_files"] = files

    log(f"{name}: engine index")
    started = time.time()
    output = subprocess.run([engine_binary, "index", "--root", root, "--index", engine_index, "--repo", name,
                             "--version", options.versions.get(name, "?")], check=True, stdout=subprocess.PIPE)
    report["engine_index_s"] = time.time() - started
    report["engine_index_facts"] = json.loads(output.stdout)
    report["engine_index_bytes"] = du_bytes(engine_index)

    log(f"{name}: loupe index")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LOUPE_")}
    started = time.time()
    subprocess.run([options.loupe, "index", "--root", root, "--index-dir", loupe_index], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report["loupe_index_s"] = time.time() - started
    report["loupe_index_bytes"] = du_bytes(loupe_index)

    engine = Engine(engine_binary, engine_index, free_port())
    loupe = Loupe(options.loupe, root, loupe_index)
    try:
        loupe.wait_ready()
        for query in queries:
            log(f"{name}: {'regex' if query['regex'] else 'literal'} {query['text']!r}")
            row = dict(query, engine_ms=[], loupe_ms=[], rg_ms=[])
            kind = "regex" if query["regex"] else "text"
            # Untimed first: counts (loupe's full envelope carries the total), and warm-up.
            answer = engine.search(query["text"], query["regex"])
            row["engine_total"], row["engine_lower_bound"] = answer["total_lines"], answer["lower_bound"]
            row["engine_candidates"] = answer["candidates"]
            capped = engine.search(query["text"], query["regex"], max_matches=options.engine_max_matches)
            row["engine_capped"] = capped["lower_bound"]
            full = loupe.search({"query": query["text"], "type": kind, "metadata": "full"})
            row["loupe_total"], row["loupe_lower_bound"] = loupe_total(full)
            row["rg_total"] = rg_count(root, query["text"], query["regex"])
            sides = [
                ("engine_ms", lambda: engine.search(query["text"], query["regex"], max_matches=options.engine_max_matches)),
                ("loupe_ms", lambda: loupe.search({"query": query["text"], "type": kind})),
                ("rg_ms", lambda: rg_count(root, query["text"], query["regex"])),
            ]
            for run in range(options.runs):
                # Take turns, in an order that rotates from run to run.
                for key, call in sides[run % 3:] + sides[:run % 3]:
                    if key == "rg_ms" and run >= options.rg_runs:
                        continue
                    started = time.perf_counter()
                    call()
                    row[key].append((time.perf_counter() - started) * 1000)
            report["queries"].append(row)
        report["engine_rss_kb"] = engine.rss_kb()
        report["loupe_rss_kb"] = loupe.rss_kb()
        if options.merge_demo and name == options.merge_demo:
            report["merge"] = merge_demo(options, engine, name, root)
    finally:
        loupe.stop()
        engine.stop()
    return report


# ---------------------------------------------------------------------------------------------
# The merge, as docs/scale.md describes it.

LANG_EXTENSIONS = {"rs", "py", "pyi", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "go", "java", "c", "h",
                   "cc", "cpp", "cxx", "hh", "hpp", "hxx"}


def is_word_boundary(line, start, end):
    word = lambda char: char.isalnum() or char == "_"
    return (start == 0 or not word(line[start - 1])) and (end >= len(line) or not word(line[end]))


def text_hit_score(query, path, line, insensitive):
    """loupe's score for a text hit (crates/loupe-engine/src/search/hits.rs, `Verifier::file`),
    computed from what a remote hit carries: its path and line. A remote engine with symbol data
    (Zoekt's ctags) would add the definition bonus (+0.25); this spike's engine has none."""
    score = 0.5
    if query.lower() in path.lower():
        score += 0.1
    if path.rsplit(".", 1)[-1] in LANG_EXTENSIONS:
        score += 0.04
    at = line.lower().find(query.lower()) if insensitive else line.find(query)
    if at >= 0:
        if is_word_boundary(line, at, at + len(query)):
            score += 0.15
        if line[at:at + len(query)] == query:
            score += 0.05
    # At the precision loupe publishes (`search/render.rs` rounds to 0.001): a tie is a tie.
    return round(min(score, 1.0), 3)


def merge_page(local, remote, cone, query, insensitive, cursor, page):
    """One page of the merged answer. `local` and `remote` are each in their own source's
    order; remote hits inside the local cone are dropped (the working tree wins), the rest are
    re-scored with loupe's own score so both sources rank on one scale. The cursor is
    `f<local taken>.<remote taken>.<remote generation>`: both lists are sorted by one key, so
    the next page is a merge from those two positions, and a changed remote generation is seen."""
    local_taken, remote_taken, generation = 0, 0, remote["generation"]
    if cursor:
        local_taken, remote_taken, seen = (int(part) for part in cursor[1:].split("."))
        if seen != generation:
            return {"error": "REMOTE_INDEX_CHANGED", "restart": True}
    dropped = [hit for hit in remote["hits"] if any(hit["path"].startswith(prefix) for prefix in cone)]
    kept = [hit for hit in remote["hits"] if hit not in dropped]
    key = lambda item: (-item["score"], item["source"], item["path"], item["line"])
    local_rows = sorted(({"source": 0, **hit} for hit in local), key=key)
    remote_rows = sorted(({"source": 1, "score": text_hit_score(query, hit["path"], hit["text"], insensitive),
                           "path": hit["path"], "line": hit["line"], "text": hit["text"]} for hit in kept), key=key)
    rows, at_local, at_remote = [], local_taken, remote_taken
    while len(rows) < page and (at_local < len(local_rows) or at_remote < len(remote_rows)):
        take_local = at_remote >= len(remote_rows) or (
            at_local < len(local_rows) and key(local_rows[at_local]) <= key(remote_rows[at_remote]))
        if take_local:
            rows.append(local_rows[at_local])
            at_local += 1
        else:
            rows.append(remote_rows[at_remote])
            at_remote += 1
    more = at_local < len(local_rows) or at_remote < len(remote_rows)
    return {"rows": rows, "dropped_in_cone": len(dropped), "next_cursor": f"f{at_local}.{at_remote}.{generation}" if more else None}


def render_merged(query, merged, local_total, remote, repo, version, reasons=()):
    if remote is None:
        lines = [f"search {query!r} · local {local_total} · remote: not searched"]
    else:
        bound = "+" if remote.get("lower_bound") else ""
        lines = [f"search {query!r} · local {local_total} + remote {remote['total_lines']}{bound} "
                 f"({repo}@{version}, index generation {remote['generation']})"]
    for row in merged.get("rows", []):
        where = row["path"] if row["source"] == 0 else f"remote://{repo}/{row['path']}"
        lines.append(f"  {where}:{row['line']}  {row['text'].strip()[:90]}  [{row['score']:.2f}]")
    if merged.get("dropped_in_cone"):
        lines.append(f"── {merged['dropped_in_cone']} remote hits under the local checkout left out: the working tree answers for them")
    for reason in reasons:
        lines.append(reason if reason.startswith("→") else f"── {reason}")
    if merged.get("next_cursor"):
        lines.append(f"→ next: search {{\"query\": {json.dumps(query)}, \"scope\": \"all\", \"cursor\": \"{merged['next_cursor']}\"}}")
    return "\n".join(lines)


def local_hits(loupe, query, prefix, max_results=100):
    """loupe's ranked text hits (path, line, score, preview) from the full envelope, their paths
    made relative to the repository (loupe's are relative to its root, the checked-out cone)."""
    result = loupe.search({"query": query, "type": "text", "metadata": "full", "max_results": max_results})
    structured = result.get("structuredContent") or {}
    meta = structured.get("meta") or {}
    hits = []
    for hit in meta.get("results") or structured.get("results") or []:
        if isinstance(hit, dict):
            hits.append({"path": prefix + hit["path"], "line": hit.get("line") or 0, "score": hit.get("score", 0.0),
                         "text": hit.get("preview", "")})
    total, lower_bound = loupe_total(result)
    return hits, f"{total}{'+' if lower_bound else ''}"


def merge_demo(options, engine, name, root):
    """The local checkout is one directory of the corpus (the cone), loupe serves it; the engine
    holds the whole tree, as an organisation's index holds the repository at its indexed commit."""
    cone_dir = options.merge_cone
    query = options.merge_query
    local_index = os.path.join(options.data, f"loupe-idx-{name}-cone")
    shutil.rmtree(local_index, ignore_errors=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("LOUPE_")}
    subprocess.run([options.loupe, "index", "--root", os.path.join(root, cone_dir), "--index-dir", local_index],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    loupe = Loupe(options.loupe, os.path.join(root, cone_dir), local_index)
    out = {"query": query, "cone": cone_dir + "/"}
    try:
        insensitive = query == query.lower()
        local_hits(loupe, query, cone_dir + "/")  # untimed: the first call of a fresh server
        started = time.perf_counter()
        local, local_total = local_hits(loupe, query, cone_dir + "/")
        local_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        remote = engine.search(query, False, limit=200, max_wall_ms=options.remote_timeout_ms)
        remote_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        page1 = merge_page(local, remote, [cone_dir + "/"], query, insensitive, None, 10)
        page2 = merge_page(local, remote, [cone_dir + "/"], query, insensitive, page1["next_cursor"], 10)
        merge_ms = (time.perf_counter() - started) * 1000
        version = options.versions.get(name, "?")
        out["timings"] = {"local_ms": local_ms, "remote_ms": remote_ms, "merge_ms": merge_ms}
        out["counts"] = {"local": local_total, "remote": remote["total_lines"], "remote_in_cone": page1["dropped_in_cone"]}
        out["page1"] = render_merged(query, page1, local_total, remote, name, version)
        out["page2"] = render_merged(query, page2, local_total, remote, name, version)
        # A remote read of the first remote hit on page 1, as `read {"candidate_id"}` would do it.
        first_remote = next((row for row in page1["rows"] if row["source"] == 1), None)
        if first_remote:
            window = engine.get("/file", {"path": first_remote["path"], "start": max(1, first_remote["line"] - 2),
                                          "end": first_remote["line"] + 2})
            out["remote_read"] = "\n".join(
                [f"remote://{name}/{window['path']} · lines {window['lines'][0][0]}–{window['lines'][-1][0]} of "
                 f"{window['total_lines']} · {name}@{version} (remote, read-only)"]
                + [f"{number:>5}│{text}" for number, text in window["lines"]])
        # Failure 1: the remote runs past its budget: a partial remote part, said so.
        slow = engine.search("self", False, limit=200, max_wall_ms=1)
        self_hits, self_total = local_hits(loupe, "self", cone_dir + "/")
        partial = merge_page(self_hits, slow, [cone_dir + "/"], "self", True, None, 5)
        out["partial"] = render_merged("self", partial, self_total, slow, name, version, reasons=[
            f"remote partial [REMOTE_PARTIAL]: {name}@{version} stopped after {slow['verified']} of "
            f"{slow['candidates']} candidate files (time budget {1} ms); its count {slow['total_lines']} is a lower bound",
            "→ next: search {\"query\": \"self\", \"scope\": \"remote\", \"remote_timeout_ms\": 5000}"])
        # Failure 2: the remote is down: the local answer, and the reason, never a silent empty.
        dead_port = free_port()
        started = time.perf_counter()
        try:
            http.client.HTTPConnection("127.0.0.1", dead_port, timeout=options.remote_timeout_ms / 1000).request("GET", "/search")
            reason = "unexpected answer"
        except OSError as error:
            reason = type(error).__name__
        down_ms = (time.perf_counter() - started) * 1000
        down = merge_page(local[:5], {"hits": [], "generation": 0}, [], query, insensitive, None, 5)
        out["down"] = render_merged(query, down, local_total, None, name, version, reasons=[
            f"remote not searched [REMOTE_UNAVAILABLE]: {reason} after {down_ms:.0f} ms; these are local hits only",
            f"→ next: search {{\"query\": {json.dumps(query)}, \"scope\": \"remote\"}}"])
    finally:
        loupe.stop()
    return out


# ---------------------------------------------------------------------------------------------
# The report.

def ms(value):
    return "–" if value != value else (f"{value:.1f}" if value < 100 else f"{value:.0f}")


def size(count):
    return f"{count / 1e6:.0f} MB" if count >= 1e6 else f"{count / 1e3:.0f} kB"


def count_cell(total, lower_bound, rg):
    mark = "≥ " if lower_bound else ""
    agree = "" if total == rg else (" (lower bound)" if lower_bound and total <= rg else " ✗")
    return f"{mark}{total:,}{agree}"


def write_report(options, engine_build_s, reports):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rg_version = subprocess.run(["rg", "--version"], stdout=subprocess.PIPE).stdout.decode().splitlines()[0]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, stdout=subprocess.PIPE).stdout.decode().strip()
    load = open("/proc/loadavg").read().split()[0]
    out = [
        "# Scale spike: loupe, a remote code-search engine and rg",
        "",
        f"Run of {now} on {platform.node() or 'this machine'} ({os.cpu_count()} cores, load {load} at the end), "
        f"loupe at `{commit}` (release), {rg_version}, the engine: tantivy 0.27 with a trigram tokenizer "
        f"behind `bench/scale/server` ("
        + (f"built from crates.io in {engine_build_s:.0f} s" if engine_build_s > 5 else "already built from crates.io") + "). Command:",
        "",
        f"    {options.command}",
        "",
        "Zoekt, the engine docs/scale.md chooses, could not be installed here (no Go module proxy, no "
        "GitHub, Debian's Go is 1.19; see `bench/scale/README.md`), so the remote side is tantivy. "
        "Every query ran "
        f"{options.runs} times per side in rotating turns after one untimed call (rg {options.rg_runs} times); "
        "times are wall clock at the client: HTTP on loopback for the engine, one JSON-RPC line over "
        "stdio for loupe (`loupe serve`, default answer), a process for rg (`rg -c --smart-case [-F]`). "
        f"The timed engine calls stop verifying after {options.engine_max_matches:,} matching lines, as loupe does "
        "(and as Zoekt's `TotalMaxMatchCount` would): the engine's counts come from one more call without that cap. "
        "loupe is timed once its index is ready, its watcher on and its start-up reconcile done. "
        "Counts are matching lines; `≥` marks a total the tool states as a lower bound (loupe stops "
        "verifying at 2,000 matching lines), ✗ a count that differs from rg's.",
        "",
        "| corpus | side | index time | index size | literal p50 / p95 | regex p50 / p95 | counts equal to rg | serving RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for report in reports:
        literal = [row for row in report["queries"] if not row["regex"]]
        regex = [row for row in report["queries"] if row["regex"]]
        def cell(rows, key):
            samples = [sample for row in rows for sample in row[key]]
            return f"{ms(percentile(samples, 0.5))} / {ms(percentile(samples, 0.95))} ms"
        def agree(key_total, key_bound):
            rows = report["queries"]
            exact = sum(1 for row in rows if row[key_total] == row["rg_total"])
            bounded = sum(1 for row in rows if row[key_total] != row["rg_total"] and row[key_bound] and row[key_total] <= row["rg_total"])
            return f"{exact} of {len(rows)}" + (f" (+{bounded} lower bounds)" if bounded else "")
        facts = report["engine_index_facts"]
        label = f"{report['name']} ({report['rg_files']:,} files)"
        out.append(f"| {label} | engine (tantivy, HTTP) | {report['engine_index_s']:.1f} s | {size(report['engine_index_bytes'])} | "
                   f"{cell(literal, 'engine_ms')} | {cell(regex, 'engine_ms')} | {agree('engine_total', 'engine_lower_bound')} | "
                   f"{report['engine_rss_kb'] / 1024:.0f} MB |")
        out.append(f"| | loupe (MCP stdio) | {report['loupe_index_s']:.1f} s | {size(report['loupe_index_bytes'])} | "
                   f"{cell(literal, 'loupe_ms')} | {cell(regex, 'loupe_ms')} | {agree('loupe_total', 'loupe_lower_bound')} | "
                   f"{report['loupe_rss_kb'] / 1024:.0f} MB |")
        out.append(f"| | rg | – | – | {cell(literal, 'rg_ms')} | {cell(regex, 'rg_ms')} | – | – |")
    for report in reports:
        facts = report["engine_index_facts"]
        out += ["", f"## {report['name']}: each query", "",
                f"The engine indexed {facts['files']:,} files ({facts['bytes'] / 1e6:.1f} MB; {facts['skipped_binary']} "
                "binary files left out, as rg and loupe leave them out of text search). Candidates: the files the "
                "trigram query returned before verification.", "",
                "| query | kind | rg lines | engine lines | loupe lines | engine candidates | rg p50 | engine p50 / p95 | loupe p50 / p95 |",
                "|---|---|---|---|---|---|---|---|---|"]
        for row in report["queries"]:
            text = row["text"].replace("|", "\\|")
            out.append(f"| `{text}` | {'regex' if row['regex'] else row['class']} | {row['rg_total']:,} | "
                       f"{count_cell(row['engine_total'], row['engine_lower_bound'], row['rg_total'])} | "
                       f"{count_cell(row['loupe_total'], row['loupe_lower_bound'], row['rg_total'])} | "
                       f"{row['engine_candidates']:,} | {ms(percentile(row['rg_ms'], 0.5))} | "
                       f"{ms(percentile(row['engine_ms'], 0.5))} / {ms(percentile(row['engine_ms'], 0.95))} | "
                       f"{ms(percentile(row['loupe_ms'], 0.5))} / {ms(percentile(row['loupe_ms'], 0.95))} |")
        merge = report.get("merge")
        if merge:
            timings = merge["timings"]
            out += ["", f"## {report['name']}: one merged answer", "",
                    f"The local checkout is `{merge['cone']}` of the corpus, served by loupe from its own index; the "
                    f"engine holds the whole tree. Query `{merge['query']}`: {merge['counts']['local']} local lines "
                    f"(loupe, {timings['local_ms']:.1f} ms for its first 100 ranked hits, full envelope), "
                    f"{merge['counts']['remote']:,} remote lines ({timings['remote_ms']:.1f} ms for the first 200, over HTTP), of "
                    f"which {merge['counts']['remote_in_cone']} lie under the local checkout and are left out; "
                    f"the two pages merged in {timings['merge_ms']:.2f} ms. Local scores are loupe's; remote hits are "
                    "scored by the same function from their path and line (no definition bonus: this engine has no "
                    "symbols).", "", "Page 1:", "", "```text", merge["page1"], "```", "", "Page 2 (from the cursor):", "",
                    "```text", merge["page2"], "```"]
            if merge.get("remote_read"):
                out += ["", "Reading the first remote hit (the engine's stored copy, at its indexed version):", "",
                        "```text", merge["remote_read"], "```"]
            out += ["", "The remote over its time budget (1 ms here, to force it), and the remote down:", "",
                    "```text", merge["partial"], "```", "", "```text", merge["down"], "```"]
    out.append("")
    with open(options.out, "w", encoding="utf-8") as file:
        file.write("\n".join(out))
    log(f"wrote {options.out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", help="NAME=DIR")
    parser.add_argument("--loupe", default=os.path.join(REPO, "target/release/loupe"))
    parser.add_argument("--data", default="/tmp/loupe-scale", help="where both indexes go")
    parser.add_argument("--out", default=os.path.join(REPO, "bench/results/scale.md"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rg-runs", type=int, default=5)
    parser.add_argument("--merge-demo", default="django", help="the corpus to show one merged answer on")
    parser.add_argument("--merge-cone", default="django", help="the corpus directory that is 'checked out'")
    parser.add_argument("--merge-query", default="get_object_or_404")
    parser.add_argument("--remote-timeout-ms", type=int, default=2000)
    parser.add_argument("--engine-max-matches", type=int, default=2000,
                        help="the timed engine calls stop verifying after this many lines, as loupe does")
    parser.add_argument("--version", dest="version_pairs", action="append", default=[],
                        help="NAME=VERSION, the version the engine states for a corpus")
    options = parser.parse_args()
    options.command = "python3 bench/scale/spike.py " + " ".join(sys.argv[1:])
    options.versions = dict(pair.split("=", 1) for pair in options.version_pairs)
    os.makedirs(options.data, exist_ok=True)
    engine_binary, build_s = install_engine()
    reports = []
    for pair in options.corpora:
        name, root = pair.split("=", 1)
        reports.append(run_corpus(options, engine_binary, name, root))
        write_report(options, build_s, reports)


if __name__ == "__main__":
    main()
