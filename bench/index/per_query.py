#!/usr/bin/env python3
"""Per-query search latency through `loupe serve` (raw MCP lines over stdio), for finding the
slow tail that a pooled p95 hides.

    python3 bench/index/per_query.py target/release/loupe ROOT INDEX_DIR 'query one|query two|re:regex'

Waits for the index to be ready (building it if INDEX_DIR is empty), then SETTLE seconds (default
2), then searches each query RUNS+2 times (default RUNS=8; the first two untimed) and prints the
p50 and max in ms with the answer's head line, then p50 and p95 over all timed calls. A query
starting `re:` is searched as a regex. Stdlib only.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def main() -> None:
    binary, root, index_dir, query_list = sys.argv[1:5]
    queries = query_list.split("|")
    runs = int(os.environ.get("RUNS", "8"))
    server = subprocess.Popen(
        [binary, "--root", root, "--index-dir", index_dir, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    counter = 0

    def call(method: str, params: dict) -> dict:
        nonlocal counter
        counter += 1
        line = json.dumps({"jsonrpc": "2.0", "id": counter, "method": method, "params": params})
        server.stdin.write((line + "\n").encode())
        server.stdin.flush()
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == counter:
                return message

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "per_query", "version": "1"}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    server.stdin.flush()
    for _ in range(1200):
        status = call("tools/call", {"name": "manage", "arguments": {"command": "status"}})
        if "ready" in json.dumps(status):
            break
        time.sleep(0.5)
    time.sleep(float(os.environ.get("SETTLE", "2")))
    timed = []
    for query in queries:
        kind, text = ("regex", query[3:]) if query.startswith("re:") else ("text", query)
        samples = []
        for run in range(runs + 2):
            started = time.perf_counter()
            answer = call("tools/call", {"name": "search", "arguments": {"query": text, "type": kind}})
            if run >= 2:
                samples.append((time.perf_counter() - started) * 1000)
        head = answer["result"]["content"][0]["text"].split("\n")[0][:70]
        timed += samples
        print(f"{statistics.median(samples):8.2f} {max(samples):8.2f}  {query!r:40} {head}")
    timed.sort()
    print(f"all: p50 {statistics.median(timed):.2f} ms, p95 {timed[int(len(timed) * 0.95)]:.2f} ms")
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
