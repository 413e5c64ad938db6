#!/usr/bin/env python3
"""Both faces of a legacy `read_code` answer, in tokens (hardening H7b).

Runs `loupe serve` over stdio (raw JSON-RPC, as a client would), calls `read_code` on the read
corpus (`corpora/read/big.c`, `bash bench/fetch-corpus.sh`) as a whole file and as a skeleton, and
counts `content[0].text` and `JSON.stringify(structuredContent)` with the project's tokenizer
(`cargo build --release -p loupe-core --example count_tokens`). Before the fix the structured face
carried the payload twice (the old `content` field and `text`).

Usage: python3 bench/hardening/legacy_faces.py --loupe old=/path/a --loupe new=/path/b
       [--count target/release/examples/count_tokens]
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpora" / "read" / "big.c"


def tokens(counter, text):
    return int(subprocess.run([counter], input=text, capture_output=True, text=True, check=True).stdout.split()[0])


def call(loupe, root, cache, arguments):
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), LOUPE_ANALYTICS="false")
    server = subprocess.Popen([loupe, "serve", "--root", str(root), "--gate-mode", "off"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_code", "arguments": arguments}},
    ]
    for message in messages:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
    while True:
        reply = json.loads(server.stdout.readline())
        if reply.get("id") == 2:
            break
    server.kill()
    return reply["result"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loupe", action="append", required=True)
    parser.add_argument("--count", default="target/release/examples/count_tokens")
    options = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp())
    root = work / "repo"
    root.mkdir()
    shutil.copy(CORPUS, root / "big.c")
    print("| build | call | text face (tokens) | structured face (tokens) | ratio |")
    print("|---|---|---|---|---|")
    for given in options.loupe:
        label, _, path = given.rpartition("=")
        for arguments in [{"filePath": "big.c"}, {"filePath": "big.c", "view": "skeleton"}]:
            result = call(path, root, work / f"cache-{label}", arguments)
            text = tokens(options.count, result["content"][0]["text"])
            structured = tokens(options.count, json.dumps(result["structuredContent"], separators=(",", ":"),
                                                          ensure_ascii=False))
            print(f"| {label or path} | read_code {json.dumps(arguments)} | {text:,} | {structured:,} | "
                  f"{structured / text:.2f}× |")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
