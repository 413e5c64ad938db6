"""The changed Python symbols of a revision range, by Python's own `ast`: the independent
method the review bench checks loupe's review against (bench/review/README.md has the rules).

    python3 bench/review/oracle.py --repo DIR --range A...B            # a short summary
    python3 bench/review/oracle.py --repo DIR --range A...B --json     # the JSON on stdout
    python3 bench/review/oracle.py --repo DIR --range A...B --json OUT # the JSON in OUT, summary on stderr

`A..B` compares commit A with commit B; `A...B` the merge base of A and B with B (an empty side
is HEAD). Symbols: module-level functions and classes, and inside a class its methods and
nested classes (and theirs), named `Outer.Inner.method`, also when the definition stands under
an `if`, `try` or `with` of the module or the class body; a function nested in a function is
part of that function. A function or method changed when its text (first decorator line to its
last line, each line's trailing whitespace stripped) differs: `signature` when its parameters,
return annotation or async-ness differ (`ast.unparse`), else `body`. A class changed when its
*own* text differs (its lines without those of its member definitions, decorators included,
blank lines dropped, trailing whitespace stripped): `signature` when its bases or keywords
differ, else `body`. Only one side has it: `added` or `removed`. Duplicate names (overloads,
property setters, redefinitions under `if`/`else`) pair in source order. Renamed files pair as
`git diff -M` of the range pairs them: the old path's symbols against the new path's (a removed
symbol is keyed by the old path, every other change by the new one). A file that does not
parse on one side is listed under `unparsed` and contributes no symbols.
"""

import argparse
import ast
import importlib.util
import json
import hashlib
import os
import pickle
import subprocess
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

# Statements whose bodies still belong to the module or class they stand in.
BLOCKS = (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try), ast.With, ast.AsyncWith)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def sides(repo: str, spec: str) -> tuple[str, str]:
    """(old commit, new commit) of `A..B` or `A...B`."""
    if "..." in spec:
        left, right = spec.split("...", 1)
        left, right = left or "HEAD", right or "HEAD"
        return git(repo, "merge-base", left, right).strip(), git(repo, "rev-parse", f"{right}^{{commit}}").strip()
    if ".." not in spec:
        raise SystemExit(f"oracle: {spec!r} is not a range (A..B or A...B)")
    left, right = spec.split("..", 1)
    return (git(repo, "rev-parse", f"{left or 'HEAD'}^{{commit}}").strip(),
            git(repo, "rev-parse", f"{right or 'HEAD'}^{{commit}}").strip())


def read_blobs(repo: str, oids: list[str]) -> dict[str, bytes]:
    """The contents of blobs, through one `git cat-file --batch`."""
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    out = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input="\n".join(wanted).encode() + b"\n",
                         capture_output=True, check=True).stdout
    blobs, at = {}, 0
    for oid in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3:
            raise SystemExit(f"oracle: git cat-file: {out[at:end].decode(errors='replace')}")
        size = int(header[2])
        blobs[oid] = out[end + 1:end + 1 + size]
        at = end + 1 + size + 1
    return blobs


def changed_files(repo: str, old: str, new: str) -> list[dict]:
    """`git diff -M --raw` of the two commits: status, old and new path, old and new blob."""
    raw = subprocess.run(["git", "-C", repo, "diff", "-M", "--raw", "-z", "--no-abbrev", old, new],
                         capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    fields = raw.split("\0")
    entries, at = [], 0
    while at < len(fields) and fields[at]:
        meta = fields[at].lstrip(":").split()
        status = meta[4][0]
        if status in "RC":
            old_path, path, at = fields[at + 1], fields[at + 2], at + 3
        else:
            old_path = path = fields[at + 1]
            at += 2
        entries.append({"status": status, "old_path": old_path, "path": path,
                        "old_oid": None if status == "A" else meta[2],
                        "new_oid": None if status == "D" else meta[3]})
    return entries


def digest(lines) -> str:
    """The compared text, kept as its SHA-256 (equal digests, equal texts)."""
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogatepass")).hexdigest()


def symbols(data: bytes) -> list[dict]:
    """Every symbol of a module, in source order: name, kind, signature and compared text."""
    # Decoded as Python decodes a source file (PEP 263 cookie, BOM, universal newlines), so the
    # lines counted here are the lines `ast` numbers; `splitlines` would also break at a form feed.
    source = importlib.util.decode_source(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    lines = source.split("\n")
    found = []

    def first_line(node) -> int:
        return min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])

    def definitions(body: list) -> list:
        out = []
        for child in body:
            if isinstance(child, (*FUNCTIONS, ast.ClassDef)):
                out.append(child)
            elif isinstance(child, BLOCKS):
                for block in ("body", "orelse", "finalbody"):
                    out += definitions(getattr(child, block, []))
                for handler in getattr(child, "handlers", []):
                    out += definitions(handler.body)
        return out

    def visit(node, prefix: str) -> None:
        name = f"{prefix}{node.name}"
        span = range(first_line(node), node.end_lineno + 1)
        if isinstance(node, FUNCTIONS):
            text = digest(lines[number - 1].rstrip() for number in span)
            signature = ("async" if isinstance(node, ast.AsyncFunctionDef) else "def", ast.unparse(node.args),
                         ast.unparse(node.returns) if node.returns else "")
            found.append({"name": name, "kind": "method" if prefix else "function",
                          "signature": signature, "text": text})
            return
        members = definitions(node.body)
        carved = set()
        for member in members:
            carved.update(range(first_line(member), member.end_lineno + 1))
        own = digest(line for line in (lines[number - 1].rstrip() for number in span if number not in carved) if line)
        signature = (tuple(ast.unparse(base) for base in node.bases),
                     tuple(ast.unparse(keyword) for keyword in node.keywords))
        found.append({"name": name, "kind": "class", "signature": signature, "text": own})
        for member in members:
            visit(member, f"{name}.")

    for node in definitions(tree.body):
        visit(node, "")
    return found


def symbols_or_error(data: bytes) -> list[dict] | str:
    try:
        return symbols(data)
    except (SyntaxError, ValueError, UnicodeDecodeError) as error:
        return f"{type(error).__name__}: {error}"[:200]


def parse_all(blobs: dict[str, bytes]) -> dict[str, list[dict] | str]:
    """Each blob's symbols (or why it did not parse); `ast.parse` is most of the time, so a big
    range is parsed on every core."""
    oids = list(blobs)
    if not oids:
        return {}
    workers = min(os.cpu_count() or 1, 8)
    if len(oids) < 40 or workers < 2:
        return {oid: symbols_or_error(blobs[oid]) for oid in oids}
    # Biggest first, so that no worker is left with a long file at the end.
    oids.sort(key=lambda oid: -len(blobs[oid]))
    with ProcessPoolExecutor(workers) as pool:
        return dict(zip(oids, pool.map(symbols_or_error, (blobs[oid] for oid in oids), chunksize=4)))


def compare(old: list[dict], new: list[dict]) -> list[tuple[str, str, str]]:
    """(name, kind, change) of every changed symbol between two versions of a module: old order
    for removed and changed symbols, then new order for added ones."""
    waiting: dict[str, list[int]] = {}
    for at, symbol in enumerate(new):
        waiting.setdefault(symbol["name"], []).append(at)
    taken = [False] * len(new)
    changed = []
    for symbol in old:
        queue = waiting.get(symbol["name"])
        if not queue:
            changed.append((symbol["name"], symbol["kind"], "removed"))
            continue
        partner = queue.pop(0)
        taken[partner] = True
        other = new[partner]
        if symbol["signature"] != other["signature"] or symbol["kind"] != other["kind"]:
            changed.append((other["name"], other["kind"], "signature"))
        elif symbol["text"] != other["text"]:
            changed.append((other["name"], other["kind"], "body"))
    changed += [(other["name"], other["kind"], "added") for at, other in enumerate(new) if not taken[at]]
    return changed


def cached_parse(repo: str, oids: list[str], cache: bool) -> dict[str, list[dict] | str]:
    """parse_all of the blobs, through a cache in the repository's git directory keyed by blob id
    and by this file's own text (a change of the rules empties it)."""
    if not cache:
        return parse_all(read_blobs(repo, oids))
    path = os.path.join(git(repo, "rev-parse", "--absolute-git-dir").strip(), "review-oracle-cache.pickle")
    with open(__file__, "rb") as me:
        version = hashlib.sha256(me.read()).hexdigest()
    store = {}
    try:
        with open(path, "rb") as file:
            saved = pickle.load(file)
        if saved.get("version") == version:
            store = saved["blobs"]
    except (OSError, pickle.UnpicklingError, EOFError, KeyError, AttributeError):
        pass
    missing = [oid for oid in oids if oid not in store]
    if missing:
        store.update(parse_all(read_blobs(repo, missing)))
        temporary = f"{path}.{os.getpid()}"
        with open(temporary, "wb") as file:
            pickle.dump({"version": version, "blobs": store}, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    return {oid: store[oid] for oid in oids}


def changed_symbols(repo: str, old: str, new: str, cache: bool = True) -> dict:
    entries = [entry for entry in changed_files(repo, old, new)
               if entry["path"].endswith(".py") or entry["old_path"].endswith(".py")]
    wanted = sorted({oid for entry in entries for oid, where in ((entry["old_oid"], entry["old_path"]),
                                                                  (entry["new_oid"], entry["path"]))
                     if oid and where.endswith(".py")})
    parsed = cached_parse(repo, wanted, cache)
    changed, files, unparsed = [], [], []
    for entry in entries:
        path, old_path = entry["path"], entry["old_path"]
        files.append(path)
        sides_symbols = []
        for side, oid, where in (("old", entry["old_oid"], old_path), ("new", entry["new_oid"], path)):
            # A side that is not a Python file (a rename to or from another extension) has none.
            if oid is None or not where.endswith(".py"):
                sides_symbols.append([])
                continue
            found = parsed[oid]
            if isinstance(found, str):
                unparsed.append({"path": where, "side": side, "error": found})
                sides_symbols.append(None)
            else:
                sides_symbols.append(found)
        if None in sides_symbols:
            continue
        for name, kind, change in compare(*sides_symbols):
            item = {"path": old_path if change == "removed" else path, "name": name, "kind": kind, "change": change}
            if old_path != path:
                item["old_path"] = old_path
            changed.append(item)
    return {"old": old, "new": new, "changed": changed, "files": files, "unparsed": unparsed}


def counts(result: dict) -> dict:
    by_change, by_kind = {}, {}
    for entry in result["changed"]:
        by_change[entry["change"]] = by_change.get(entry["change"], 0) + 1
        by_kind[entry["kind"]] = by_kind.get(entry["kind"], 0) + 1
    return {"changed": len(result["changed"]),
            "pairs": len({(entry["path"], entry["name"]) for entry in result["changed"]}),
            "by_change": dict(sorted(by_change.items())), "by_kind": dict(sorted(by_kind.items())),
            "files": len(result["files"]), "unparsed": len(result["unparsed"])}


def summary(result: dict, seconds: float) -> str:
    c = counts(result)
    return (f"{result['range']} ({result['old'][:10]}..{result['new'][:10]}): {c['files']} Python files changed, "
            f"{c['changed']} changed symbols ({c['pairs']} distinct path+name) "
            f"by change {json.dumps(c['by_change'])} by kind {json.dumps(c['by_kind'])}, "
            f"{c['unparsed']} unparsed, {seconds:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--range", required=True, help="A..B (the two commits) or A...B (merge base of A and B, and B)")
    parser.add_argument("--json", nargs="?", const="-", metavar="OUT",
                        help="print the JSON (or write it to OUT, the summary going to stderr)")
    parser.add_argument("--no-cache", action="store_true",
                        help="parse every blob again (the cache is .git/review-oracle-cache.pickle of the repository)")
    args = parser.parse_args()
    started = time.perf_counter()
    old, new = sides(args.repo, args.range)
    result = {"range": args.range, **changed_symbols(args.repo, old, new, cache=not args.no_cache)}
    seconds = time.perf_counter() - started
    if args.json == "-":
        json.dump(result, sys.stdout, indent=1)
        print()
    elif args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)
        print(summary(result, seconds), file=sys.stderr)
    else:
        print(summary(result, seconds))
        for item in result["unparsed"]:
            print(f"  unparsed ({item['side']}): {item['path']}: {item['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
