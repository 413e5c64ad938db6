"""The symbols a correct three-dot review of `A...B` must never name: changed on A after the
fork (merge base..A) and the same at B as at the merge base.

    python3 bench/review/three_dot.py --repo DIR --range A...B --json OUT
"""

import argparse
import json
import sys

from oracle import changed_symbols, git


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--range", required=True)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    left, right = args.range.split("...", 1)
    base = git(args.repo, "merge-base", left, right or "HEAD").strip()
    left_id = git(args.repo, "rev-parse", left).strip()
    right_id = git(args.repo, "rev-parse", right or "HEAD").strip()
    on_left = {(entry["path"], entry["name"]) for entry in changed_symbols(args.repo, base, left_id)["changed"]}
    on_right = {(entry["path"], entry["name"]) for entry in changed_symbols(args.repo, base, right_id)["changed"]}
    only_left = sorted(on_left - on_right)
    with open(args.json, "w") as out:
        json.dump({"range": args.range, "symbols": [{"path": path, "name": name} for path, name in only_left]}, out, indent=1)
    print(f"{args.range}: {len(only_left)} symbols changed only on {left} after the fork", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
