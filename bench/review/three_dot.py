"""The symbols a correct three-dot review of `A...B` must never name: those changed on A after
the fork (merge base..A, by the oracle's rules) that are the same at B as at the merge base (the
oracle names no change of them in merge base..B).

    python3 bench/review/three_dot.py --repo DIR --range A...B             # JSON on stdout
    python3 bench/review/three_dot.py --repo DIR --range A...B --json OUT  # JSON in OUT, summary on stderr

Output: {"range", "merge_base", "left", "right", "symbols": [{"path", "name", "kind", "change",
"paths"}]}: `path` is where the oracle keys the change in merge base..A, `paths` every path a
review could wrongly name it under (that one and its path at the merge base, when A renamed the
file). Both sides are compared in merge-base paths, so a file renamed on either side still pairs.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import changed_symbols, git  # noqa: E402


def base_path(entry: dict) -> str:
    """The path of a changed symbol's file at the merge base (its own path if the file is new)."""
    return entry.get("old_path") or entry["path"]


def only_left(repo: str, spec: str) -> dict:
    if "..." not in spec:
        raise SystemExit(f"three_dot: {spec!r} is not a three-dot range (A...B)")
    left, right = (side or "HEAD" for side in spec.split("...", 1))
    base = git(repo, "merge-base", left, right).strip()
    left_id = git(repo, "rev-parse", f"{left}^{{commit}}").strip()
    right_id = git(repo, "rev-parse", f"{right}^{{commit}}").strip()
    touched_right = {(base_path(entry), entry["name"]) for entry in changed_symbols(repo, base, right_id)["changed"]}
    symbols, seen = [], set()
    for entry in changed_symbols(repo, base, left_id)["changed"]:
        key = (base_path(entry), entry["name"])
        if key in touched_right or key in seen:
            continue
        seen.add(key)
        symbols.append({"path": entry["path"], "name": entry["name"], "kind": entry["kind"],
                        "change": entry["change"], "paths": sorted({entry["path"], base_path(entry)})})
    symbols.sort(key=lambda item: (item["path"], item["name"]))
    return {"range": spec, "merge_base": base, "left": left_id, "right": right_id, "symbols": symbols}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--range", required=True, help="A...B")
    parser.add_argument("--json", metavar="OUT", help="write the JSON to OUT (default: stdout)")
    args = parser.parse_args()
    result = only_left(args.repo, args.range)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)
        by_change = {}
        for item in result["symbols"]:
            by_change[item["change"]] = by_change.get(item["change"], 0) + 1
        left = args.range.split("...", 1)[0] or "HEAD"
        print(f"{args.range}: {len(result['symbols'])} symbols changed only on {left} after the fork "
              f"{json.dumps(dict(sorted(by_change.items())))}", file=sys.stderr)
    else:
        json.dump(result, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
