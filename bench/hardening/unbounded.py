#!/usr/bin/env python3
"""Work a repository can make unbounded, measured on the release binary (hardening H5b, H5c).

Each case runs `loupe` as a user would (the CLI, which runs the same engine as the server) under
`/usr/bin/time`, with a wall-clock cap, and reports the time to answer, the peak RSS and the
answer's first line. The cases reproduce those findings (docs/findings.md):

- regex `(?s).*=` and `(?s).*.*.*=` over the read corpus (`corpora/read/big.c`: the first 10,000
  lines of SQLite's amalgamation, 486 KB, from crates.io; `bash bench/fetch-corpus.sh`) and a
  120 KB prefix of it: the line scan ran to the file's last `=` from every line start;
- a 1.5 GB blob in HEAD (zeros: 1.5 MB as a git object), deleted in the worktree, and the same
  blob beside a small change: `read --mode diff_preview .` loaded it whole.

Usage: python3 bench/hardening/unbounded.py --loupe target/release/loupe [--work /tmp/w/hardening]
       [--blob-mb 1536] [--cap 400] [--out bench/results/hardening.md]
Give `--loupe` twice (`--loupe old --loupe new`) to put two builds side by side; `label=path`
names a build in the table (`--loupe d42fa24=/tmp/loupe-old`).
"""

import argparse
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpora" / "read" / "big.c"


def run(loupe, root, args, cap):
    """(seconds, peak RSS in MB, first line of stdout, exit status); seconds is None past the cap."""
    command = ["/usr/bin/time", "-f", "%M", loupe, *args, "--root", str(root)]
    env = dict(os.environ, XDG_CACHE_HOME=str(root.parent / "cache"), LOUPE_ANALYTICS="false")
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=cap, env=env)
    except subprocess.TimeoutExpired:
        return None, None, f"no answer in {cap} s", None
    seconds = time.monotonic() - start
    rss_kb = int(done.stderr.strip().splitlines()[-1]) if done.stderr.strip() else 0
    first = (done.stdout.splitlines() or [""])[0][:90]
    return seconds, rss_kb / 1024, first, done.returncode


def git(root, *args):
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
                   cwd=root, check=True, capture_output=True)


def regex_tree(work, name, size):
    root = work / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    data = CORPUS.read_bytes()
    cut = data[:size]
    cut = cut[: cut.rfind(b"\n") + 1]
    (root / "big.c").write_bytes(cut)
    return root, len(cut)


def blob_tree(work, name, megabytes, change_small):
    root = work / name
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    git(root, "init", "-q")
    with open(root / "data.bin", "wb") as out:
        chunk = bytes(1 << 20)
        for _ in range(megabytes):
            out.write(chunk)
    (root / "notes.txt").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "dataset")
    os.remove(root / "data.bin")
    if change_small:
        (root / "notes.txt").write_text("two\n")
    return root


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--loupe", action="append", required=True)
    parser.add_argument("--work", default="/tmp/w/hardening")
    parser.add_argument("--blob-mb", type=int, default=1536)
    parser.add_argument("--cap", type=int, default=400)
    parser.add_argument("--out", default=None)
    options = parser.parse_args()
    if not CORPUS.exists():
        sys.exit(f"{CORPUS} is missing: run `bash bench/fetch-corpus.sh` first")
    work = pathlib.Path(options.work)
    work.mkdir(parents=True, exist_ok=True)

    cases = []
    for label, size in [("120 KB", 120_000), ("486 KB", 10**9)]:
        root, length = regex_tree(work, f"regex-{label.split()[0]}", size)
        for pattern in ["(?s).*=", "(?s).*.*.*="]:
            cases.append((f"regex `{pattern}`, one {length / 1000:.0f} KB file", root,
                          ["search", pattern, "--type", "regex"]))
    deleted = blob_tree(work, "blob-deleted", options.blob_mb, change_small=False)
    cases.append((f"`diff_preview .`, a {options.blob_mb} MB blob deleted", deleted,
                  ["read", "--mode", "diff_preview", "."]))
    cases.append((f"`diff_preview data.bin`, the same blob", deleted,
                  ["read", "--mode", "diff_preview", "data.bin"]))

    rows = []
    builds = [tuple(entry.split("=", 1)) if "=" in entry else (entry, entry) for entry in options.loupe]
    for title, root, args in cases:
        cells = []
        for _, loupe in builds:
            seconds, rss, first, status = run(loupe, root, args, options.cap)
            shown = "no answer" if seconds is None else f"{seconds:.2f} s"
            memory = "—" if rss is None else f"{rss:.0f} MB"
            cells.append(f"{shown}, {memory} · `{first.replace('|', '/')}`")
            print(f"{title} [{loupe}]: {shown}, {memory}, exit {status}: {first}", file=sys.stderr)
        rows.append(f"| {title} | " + " | ".join(cells) + " |")

    header = "| case | " + " | ".join(f"`{label}`" for label, _ in builds) + " |"
    table = "\n".join([header, "|---|" + "---|" * len(options.loupe), *rows])
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"# Unbounded work (hardening H5b, H5c)\n\n{stamp}; `python3 bench/hardening/unbounded.py "
            f"{' '.join('--loupe ' + l for l in options.loupe)} --blob-mb {options.blob_mb} --cap {options.cap}`. "
            f"Each cell: time to answer, peak RSS, the answer's first line.\n\n{table}\n")
    print(text)
    if options.out:
        pathlib.Path(options.out).write_text(text)


if __name__ == "__main__":
    main()
