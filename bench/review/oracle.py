"""The changed Python symbols of a revision range, by Python's own `ast`: the independent
method the review bench checks loupe's review against (bench/review/README.md).

    python3 bench/review/oracle.py --repo DIR --range A...B [--json OUT]

`A..B` compares commit A with commit B; `A...B` the merge base of A and B with B. Symbols are
module-level functions and classes, and inside a class its methods and nested classes (and
theirs), named `Outer.Inner.method`, also under an `if`, `try` or `with` of the module or the
class; a function nested in a function is part of it. A
function changed when its text (first decorator to its last line, trailing whitespace
stripped) differs: `signature` when its parameters, return annotation or async-ness differ,
else `body`. A class changed when its *own* text differs (its lines without those of its
methods and nested classes, blank lines dropped): `signature` when its bases differ, else
`body`. Duplicate names (overloads, property setters) pair in source order. Renamed files pair
as `git diff -M` pairs them.
"""

import argparse
import ast
import json
import subprocess
import sys


def git(repo, *args) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def sides(repo: str, spec: str) -> tuple[str, str]:
    if "..." in spec:
        left, right = spec.split("...", 1)
        right = right or "HEAD"
        left = left or "HEAD"
        return git(repo, "merge-base", left, right).strip(), git(repo, "rev-parse", right).strip()
    left, right = spec.split("..", 1)
    return git(repo, "rev-parse", left or "HEAD").strip(), git(repo, "rev-parse", right or "HEAD").strip()


def symbols(source: str) -> list[dict]:
    """Every named symbol of a module with its signature and own text."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []

    def start(node) -> int:
        return min([node.lineno] + [decorator.lineno for decorator in getattr(node, "decorator_list", [])])

    def definitions(body: list) -> list:
        # A definition under a module's or a class's `if`, `try` or `with` is still one of its own.
        found = []
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(child)
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                for block in ("body", "orelse", "finalbody"):
                    found += definitions(getattr(child, block, []))
                for handler in getattr(child, "handlers", []):
                    found += definitions(handler.body)
        return found

    def visit(node, prefix: str):
        is_function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        name = f"{prefix}{node.name}"
        members = [] if is_function else definitions(node.body)
        carved = set()
        for member in members:
            carved.update(range(start(member), member.end_lineno + 1))
        own = [lines[number - 1].rstrip() for number in range(start(node), node.end_lineno + 1)
               if number not in carved and number - 1 < len(lines)]
        own = [line for line in own if line.strip()]
        if is_function:
            signature = (isinstance(node, ast.AsyncFunctionDef), ast.unparse(node.args),
                         ast.unparse(node.returns) if node.returns else "")
            kind = "method" if prefix else "function"
        else:
            signature = (tuple(ast.unparse(base) for base in node.bases),
                         tuple(ast.unparse(keyword) for keyword in node.keywords))
            kind = "class"
        found.append({"name": name, "kind": kind, "signature": signature, "own": own})
        for member in members:
            visit(member, f"{name}.")

    for node in definitions(tree.body):
        visit(node, "")
    return found


def compare(old: list[dict], new: list[dict]) -> list[tuple[str, str, str]]:
    """(name, kind, change) of every changed symbol between two versions of a module."""
    changed = []
    taken = [False] * len(new)
    for symbol in old:
        partner = next((at for at, other in enumerate(new) if not taken[at] and other["name"] == symbol["name"]), None)
        if partner is None:
            changed.append((symbol["name"], symbol["kind"], "removed"))
            continue
        taken[partner] = True
        other = new[partner]
        if symbol["signature"] != other["signature"]:
            changed.append((other["name"], other["kind"], "signature"))
        elif symbol["own"] != other["own"]:
            changed.append((other["name"], other["kind"], "body"))
    changed += [(other["name"], other["kind"], "added") for at, other in enumerate(new) if not taken[at]]
    return changed


def changed_symbols(repo: str, old: str, new: str) -> dict:
    statuses = git(repo, "diff", "-M", "--name-status", old, new).splitlines()
    changed, files, unparsed = [], [], []
    for line in statuses:
        parts = line.split("\t")
        status = parts[0][0]
        if status == "R":
            old_path, path = parts[1], parts[2]
        else:
            old_path = path = parts[1]
        if not (path.endswith(".py") or old_path.endswith(".py")):
            continue
        files.append(path)
        try:
            old_symbols = [] if status == "A" else symbols(git(repo, "show", f"{old}:{old_path}"))
            new_symbols = [] if status == "D" else symbols(git(repo, "show", f"{new}:{path}"))
        except (SyntaxError, ValueError, subprocess.CalledProcessError) as error:
            unparsed.append({"path": path, "error": str(error)[:200]})
            continue
        for name, kind, change in compare(old_symbols, new_symbols):
            # A removed symbol of a renamed file was in its old path.
            where = old_path if change == "removed" else path
            changed.append({"path": where, "name": name, "kind": kind, "change": change})
    return {"old": old, "new": new, "changed": changed, "files": files, "unparsed": unparsed}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--range", required=True)
    parser.add_argument("--json")
    args = parser.parse_args()
    old, new = sides(args.repo, args.range)
    result = dict(changed_symbols(args.repo, old, new), range=args.range)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)
    counts = {}
    for entry in result["changed"]:
        counts[entry["change"]] = counts.get(entry["change"], 0) + 1
    print(f"{args.range}: {len(result['files'])} Python files changed, {len(result['changed'])} symbols "
          f"{json.dumps(counts, sort_keys=True)}, {len(result['unparsed'])} unparsed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
