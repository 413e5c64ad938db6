"""Writes bench/results/review.md from measure.py's results (see bench/review/README.md)."""

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--md", required=True)
    parser.add_argument("--meta", nargs="*", default=[])
    parser.add_argument("--results", nargs="+", required=True)
    args = parser.parse_args()
    meta = dict(item.split("=", 1) for item in args.meta)
    rows = []
    for item in args.results:
        corpus, path = item.split(":", 1)
        rows.append((corpus, json.load(open(path))))
    out = ["# Review: changed symbols of real release history", ""]
    out.append(f"{meta.get('date', '')} · `{meta.get('command', '')}` · {meta.get('machine', '')}")
    out.append("")
    out.append("Repositories built from PyPI sdists (`bench/review/setup.sh`): flask main = 2.3.3 (the fork) "
               "then 3.1.0, feature = 3.0.0, 3.0.3; django main = 5.1.4 then 5.1.8, 5.1.15, feature = 5.2. "
               "The oracle is Python's own `ast` (`oracle.py`); loupe is driven through the official MCP "
               "Python SDK (`measure.py`).")
    out.append("")
    out.append("## (a) changed symbols named, against the oracle (functions, methods, classes)")
    out.append("")
    out.append("| corpus | range | files changed | oracle | loupe named | recall | precision |")
    out.append("|---|---|--:|--:|--:|--:|--:|")
    for corpus, r in rows:
        out.append(f"| {corpus} | `{r['range']}` | {r['files_changed']} | {r['oracle']} | {r['named']} | "
                   f"{r['recall']:.4f} | {r['precision']:.4f} |")
    out.append("")
    for corpus, r in rows:
        if r["missed"] or r["extra"]:
            out.append(f"- {corpus} `{r['range']}`: missed {r['missed'][:6]}, extra {r['extra'][:6]}")
    out.append("")
    out.append("## (b) tokens: the first page plus the symbol diffs a reviewer opens, against `git diff`")
    out.append("")
    out.append("Goal: at most 25% of `git diff` of the same range, on both faces.")
    out.append("")
    out.append("| corpus | range | loupe text | loupe JSON | `git diff` | text | JSON | met |")
    out.append("|---|---|--:|--:|--:|--:|--:|---|")
    for corpus, r in rows:
        text, js, base = r["loupe_text"], r["loupe_json"], r["git_diff_tokens"]
        met = "yes" if max(text, js) <= base * 0.25 else "no"
        out.append(f"| {corpus} | `{r['range']}` | {text:,} | {js:,} | {base:,} | {text / base:.1%} | {js / base:.1%} | {met} |")
    out.append("")
    for corpus, r in rows:
        calls = ", ".join(f"{c['call']} {c['text']}/{c['json']}" for c in r["calls"])
        out.append(f"- {corpus} `{r['range']}` (text/JSON): {calls}")
    out.append("")
    out.append("## (c) three dots: nothing changed only on the left after the fork is named")
    out.append("")
    out.append("| corpus | range | symbols changed only on the left | named by the review |")
    out.append("|---|---|--:|--:|")
    for corpus, r in rows:
        if "three_dot_forbidden" in r:
            out.append(f"| {corpus} | `{r['range']}` | {r['three_dot_forbidden']} | {len(r['three_dot_named'])} |")
    out.append("")
    out.append("## (d) time of the review's first page through MCP, against `git diff --stat`")
    out.append("")
    out.append("Goal: at most 1 s for a range of 100+ changed files. The index built; first: the first call of "
               "the range (nothing compared yet); again: best of 3 (a review asked again or paged keeps the "
               "comparisons of the versions it parsed).")
    out.append("")
    out.append("| corpus | range | files changed | review, first | review, again | `git diff --stat` | first ÷ stat |")
    out.append("|---|---|--:|--:|--:|--:|--:|")
    for corpus, r in rows:
        out.append(f"| {corpus} | `{r['range']}` | {r['files_changed']} | {r['review_cold_ms']:.0f} ms | "
                   f"{r['review_ms']:.0f} ms | {r['git_stat_ms']:.0f} ms | {r['review_cold_ms'] / r['git_stat_ms']:.1f}× |")
    out.append("")
    with open(args.md, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
