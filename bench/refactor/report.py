#!/usr/bin/env python3
"""The refactor bench's report: compare.py's JSON files -> bench/results/refactor.md and the
list of every disagreement (bench/results/refactor-disagreements.md).

    report.py --md OUT.md --disagreements OUT2.md --meta KEY=VALUE ... --results RESULT.json ...

Counted per symbol that both sides renamed from the same definition:
  S  the server's sites (edit range starts), L the sites loupe changes (exact + scoped),
  N  the name_only sites loupe lists but does not change.
precision = |L ∩ S| / |L|, recall = |L ∩ S| / |S| (summed over symbols, i.e. micro-averaged);
per confidence class the same with L restricted to that class; "recall with name_only" uses
L ∪ N. A refusal by either side (or both renaming different definitions) is counted, not scored.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

GOAL_P, GOAL_R = 0.99, 0.95
LANG_TITLE = {"python": "Python", "typescript": "TypeScript", "rust": "Rust"}


def key(s: dict[str, Any]) -> tuple[str, int, int]:
    return (s["path"], s["line"], s["column"])


def pct(a: int, b: int) -> str:
    return "—" if b == 0 else f"{a / b:.3f}"


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return math.nan
    i = max(0, math.ceil(q * len(xs)) - 1)
    return xs[i]


def ms(x: float) -> str:
    return "—" if x != x else (f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s")


def context(text: str, col: int, name: str, language: str) -> str:
    """A rough label of where a site sits in its line, for reading the disagreements."""
    b = text.encode("utf-8", errors="surrogateescape")
    before = b[:col - 1].decode("utf-8", errors="replace")
    after = b[col - 1 + len(name.encode()):].decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if language == "python":
        if re.search(r"#", before) and before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return "comment"
        if (before.count('"') - before.count('\\"')) % 2 == 1 or (before.count("'") - before.count("\\'")) % 2 == 1:
            return "string"
        if stripped.startswith(("from ", "import ")):
            return "import"
        if re.search(r"\b(def|class)\s+$", before):
            return "definition"
        if re.search(r"\bself\.$", before):
            return "self.attr"
        if re.search(r"\bcls\.$", before):
            return "cls.attr"
        if re.search(r"\bsuper\(\)\.$", before):
            return "super().attr"
        if before.endswith("."):
            return "attribute (other receiver)"
        if re.match(r"\s*=[^=]", after) and re.search(r"[(,]\s*$", before):
            return "keyword argument"
        if re.match(r"\s*=[^=]", after) or re.match(r"\s*:", after):
            return "assignment / annotation"
        return "bare name"
    if language == "typescript":
        if "//" in before or stripped.startswith("*"):
            return "comment"
        if stripped.startswith(("import ", "export {", "export type {", "} from")):
            return "import / export"
        if before.endswith("..."):
            return "spread"
        if re.search(r"\bthis\.#?$", before):
            return "this.member"
        if before.endswith("."):
            return "property access (other receiver)"
        if re.match(r"\s*\??:", after):
            return "property / key / annotation"
        if re.search(r"[{,]\s*$", before):
            return "object literal / destructuring"
        return "bare name"
    if language == "rust":
        if "//" in before:
            return "comment"
        if stripped.startswith(("use ", "pub use ")):
            return "use"
        if re.search(r"\bfn\s+$", before):
            return "definition (fn)"
        if re.search(r"\bself\.$", before):
            return "self.member"
        if before.endswith("."):
            return "method / field (other receiver)"
        if before.endswith("::"):
            return "path (A::name)"
        if re.match(r"\s*:", after):
            return "field / struct literal / pattern"
        return "bare name"
    return "?"


def refusal_kind(reason: str) -> str:
    if "outside the root" in reason:
        return "would edit library code"
    if "No references found" in reason:
        return "no references at the position"
    if reason.startswith("prepareRename: null") or reason == "rename: null":
        return "not renameable (null)"
    return reason.split(":")[0][:60]


def score(results: list[dict[str, Any]]) -> dict[str, Any]:
    agg: dict[str, Any] = defaultdict(int)
    agg["loupe_refusals"] = Counter()
    agg["server_refusals"] = Counter()
    agg["loupe_t"] = []
    agg["server_t"] = []
    agg["kinds"] = Counter()
    agg["sym_p"] = []
    agg["sym_r"] = []
    agg["tiers"] = Counter()
    agg["per_kind"] = defaultdict(lambda: defaultdict(int))
    agg["ctx_server_only"] = Counter()
    agg["ctx_loupe_only"] = Counter()
    for r in results:
        d, lo, sv = r["symbol"], r["loupe"], r["server"]
        agg["symbols"] += 1
        agg["kinds"][d["kind"]] += 1
        agg["tiers"][d["tier"]] += 1
        agg["loupe_t"].append(lo["seconds"])
        if sv.get("seconds") is not None:
            agg["server_t"].append(sv["seconds"])
        r["verdict"] = "scored"
        if lo["status"] != "ok":
            agg["loupe_refusals"][lo.get("code", "?")] += 1
        elif lo.get("first_refusal"):
            agg["resolved_ambiguous"] += 1
        if sv["status"] != "ok":
            agg["server_refusals"][refusal_kind(sv.get("reason", "?"))] += 1
        if lo["status"] != "ok" or sv["status"] != "ok":
            r["verdict"] = ("both refused" if lo["status"] != "ok" and sv["status"] != "ok"
                            else "loupe refused" if lo["status"] != "ok" else "server refused")
            agg[r["verdict"]] += 1
            continue
        S = {key(s) for s in sv["sites"]}
        L = {key(s): s for s in lo["sites"] if s["changed"]}
        N = {key(s) for s in lo["sites"] if not s["changed"]}
        defsite = (d["path"], d["line"], d["col"])
        if defsite not in S or defsite not in L:
            r["verdict"] = "different definitions"
            agg["different definitions"] += 1
            continue
        agg["scored"] += 1
        agg["S"] += len(S)
        agg["L"] += len(L)
        agg["TP"] += len(S & set(L))
        agg["N"] += len(N)
        agg["N_TP"] += len(N & S)
        agg["LN_TP"] += len((set(L) | N) & S)
        for conf in ("exact", "scoped", "unknown"):
            Lc = {k for k, s in L.items() if s["confidence"] == conf}
            agg[f"L_{conf}"] += len(Lc)
            agg[f"TP_{conf}"] += len(Lc & S)
        pk = agg["per_kind"][d["bucket"]]
        pk["symbols"] += 1
        pk["S"] += len(S)
        pk["L"] += len(L)
        pk["TP"] += len(S & set(L))
        if S == set(L):
            agg["perfect"] += 1
        agg["sym_p"].append(len(S & set(L)) / len(L))
        agg["sym_r"].append(len(S & set(L)) / len(S))
        for s in sv["sites"]:
            ctx = context(s["text"], s["column"], d["name"], r.get("language", ""))
            if ctx in ("comment", "string"):
                agg["S_text"] += 1
                agg["TP_text"] += key(s) in L
            if key(s) not in L:
                agg["ctx_server_only"][ctx] += 1
        for k_, s in L.items():
            if k_ not in S:
                agg["ctx_loupe_only"][context(s["text"], s["column"], d["name"], r.get("language", ""))] += 1
                verdict = (s.get("server_definition") or {}).get("verdict", "not asked")
                agg[f"lo_{verdict}"] += 1
    return agg


def timing_row(name: str, agg: dict[str, Any]) -> str:
    lt, st = agg["loupe_t"], agg["server_t"]
    return (f"| {name} | {ms(statistics.median(lt)) if lt else '—'} | {ms(quantile(lt, 0.95))} | "
            f"{ms(statistics.median(st)) if st else '—'} | {ms(quantile(st, 0.95))} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--md", required=True, type=Path)
    ap.add_argument("--disagreements", required=True, type=Path)
    ap.add_argument("--meta", nargs="*", default=[])
    ap.add_argument("--results", nargs="+", type=Path, required=True)
    args = ap.parse_args()
    runs = [json.loads(p.read_text()) for p in args.results]
    for run in runs:
        for r in run["results"]:
            r["language"] = run["language"]

    out: list[str] = []
    w = out.append
    w("# Rename: loupe's `rename_symbol` against language servers' `textDocument/rename`")
    w("")
    w("Issue 32, item 3. For each corpus a script (bench/refactor/symbols.py, fixed seed) picks")
    w("definitions of every kind (functions, types, methods, fields) whose names are duplicated,")
    w("common or rare in the corpus; loupe renames each as a dry run and the language server renames")
    w("the same definition (its name's position). Sites are compared as (path, line, column of the")
    w("name). How it is measured: bench/refactor/README.md.")
    w("")
    for m in args.meta:
        k, _, v = m.partition("=")
        w(f"- {k}: {v}")
    for run in runs:
        w(f"- {run['corpus']}: {run['server_version']}; {run['files']} source files, {run['definitions']} "
          f"definitions, {len(run['results'])} sampled (seed {run['seed']}); server ready in "
          f"{run['server_ready_s']:.1f} s, first (warm-up) rename {run['server_warmup_s']:.1f} s; "
          f"loupe index {run['loupe_index_s']:.1f} s; the comparison {run['run_s']:.0f} s")
    w("")

    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        by_lang[run["language"]].extend(run["results"])
    lang_aggs = {lang: score(rs) for lang, rs in by_lang.items()}
    corpus_aggs = {run["corpus"]: score(run["results"]) for run in runs}

    w("## Headline: exact + scoped (the sites loupe changes)")
    w("")
    w("Precision and recall over all sites of the scored symbols (micro); the mean over symbols")
    w("(macro) weighs a symbol with 1,900 sites like one with 2.")
    w("")
    w("| language | corpora | symbols | scored | server sites | loupe changed | agreed | precision | recall | per-symbol mean P / R | goal (P ≥ 0.99, R ≥ 0.95) |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for lang, agg in lang_aggs.items():
        corpora = ", ".join(run["corpus"] for run in runs if run["language"] == lang)
        p = agg["TP"] / agg["L"] if agg["L"] else 0
        r_ = agg["TP"] / agg["S"] if agg["S"] else 0
        met = "met" if p >= GOAL_P and r_ >= GOAL_R else (
            "not met: " + " and ".join(x for x, ok in (("precision", p >= GOAL_P), ("recall", r_ >= GOAL_R)) if not ok))
        w(f"| {LANG_TITLE[lang]} | {corpora} | {agg['symbols']} | {agg['scored']} | {agg['S']} | {agg['L']} | "
          f"{agg['TP']} | {pct(agg['TP'], agg['L'])} | {pct(agg['TP'], agg['S'])} | "
          f"{statistics.mean(agg['sym_p']):.3f} / {statistics.mean(agg['sym_r']):.3f} | {met} |")
    w("")

    w("## Per corpus")
    w("")
    w("Scored symbols only. Per class: the sites of that confidence and how many the server also")
    w("renames (precision of the class; its share of the server's sites is its recall contribution).")
    w("`name_only`: listed by loupe, not changed; \"recall with name_only\" counts them as changed.")
    w("")
    w("| corpus | scored | server sites | loupe changed | precision | recall | exact: sites / precision | scoped: sites / precision | name_only: listed / also server | recall with name_only | symbols in full agreement |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |")
    for run in runs:
        a = corpus_aggs[run["corpus"]]
        extra = f"; unknown (past 200): {a['L_unknown']}" if a["L_unknown"] else ""
        w(f"| {run['corpus']} | {a['scored']} | {a['S']} | {a['L']} | {pct(a['TP'], a['L'])} | {pct(a['TP'], a['S'])} | "
          f"{a['L_exact']} / {pct(a['TP_exact'], a['L_exact'])} | {a['L_scoped']} / {pct(a['TP_scoped'], a['L_scoped'])}{extra} | "
          f"{a['N']} / {a['N_TP']} | {pct(a['LN_TP'], a['S'])} | {a['perfect']} of {a['scored']} |")
    w("")
    w("Sites loupe changes that the server's rename leaves alone, by what the server's own")
    w("`textDocument/definition` says at that site: `other` (another definition: loupe renamed a")
    w("different symbol), `none` (the server cannot resolve it: an untyped receiver, a macro body,")
    w("inactive code), `this` (the renamed definition: the server's rename missed its own")
    w("reference). Two figures leave out what the servers and loupe do by design rather than by")
    w("resolution: precision without the `none` sites, and recall without the server's sites in")
    w("strings and comments (`__all__` entries, JSDoc `{@link}`; loupe changes those only with")
    w("`in_comments: true`).")
    w("")
    w("| corpus | loupe only | other | none | this | precision without `none` | server sites in strings / comments | recall without them |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        a = corpus_aggs[run["corpus"]]
        lo_only = a["L"] - a["TP"]
        w(f"| {run['corpus']} | {lo_only} | {a['lo_other']} | {a['lo_none']} | {a['lo_this']} | "
          f"{pct(a['TP'] + a['lo_this'], a['L'] - a['lo_none'])} | {a['S_text']} | "
          f"{pct(a['TP'] - a['TP_text'], a['S'] - a['S_text'])} |")
    w("")
    w("By kind of definition (exact + scoped):")
    w("")
    w("| corpus | kind | scored | server sites | loupe changed | precision | recall |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        a = corpus_aggs[run["corpus"]]
        for bucket in ("function", "type", "method", "field"):
            pk = a["per_kind"].get(bucket)
            if pk:
                w(f"| {run['corpus']} | {bucket} | {pk['symbols']} | {pk['S']} | {pk['L']} | {pct(pk['TP'], pk['L'])} | {pct(pk['TP'], pk['S'])} |")
    w("")

    w("## Refusals and unscored symbols")
    w("")
    w("A refusal is an answer, not an error: counted here, left out of precision and recall. An")
    w("AMBIGUOUS_SYMBOL answer lists one ready call per candidate; the bench sends the one of the")
    w("same definition once (as an agent would), and counts the symbol as refused only if that")
    w("fails too (\"ambiguous, then resolved\": renamed on the second call, scored, its time the sum).")
    w("")
    w("| corpus | symbols | scored | loupe refused | loupe's reasons | ambiguous, then resolved | server refused | server's reasons | both refused | different definitions |")
    w("| --- | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |")
    for run in runs:
        a = corpus_aggs[run["corpus"]]
        lr = ", ".join(f"{k} {v}" for k, v in a["loupe_refusals"].most_common()) or "—"
        sr = ", ".join(f"{k} {v}" for k, v in a["server_refusals"].most_common()) or "—"
        w(f"| {run['corpus']} | {a['symbols']} | {a['scored']} | {sum(a['loupe_refusals'].values())} | {lr} | "
          f"{a['resolved_ambiguous']} | {sum(a['server_refusals'].values())} | {sr} | {a['both refused']} | {a['different definitions']} |")
    w("")
    w("Each refused symbol:")
    w("")
    w("| corpus | symbol | kind | definition | loupe | server |")
    w("| --- | --- | --- | --- | --- | --- |")
    for run in runs:
        for r in run["results"]:
            if r["verdict"] in ("scored",):
                continue
            d, lo, sv = r["symbol"], r["loupe"], r["server"]
            lo_s = "ok" if lo["status"] == "ok" else f"{lo.get('code')}: {lo.get('reason', '').splitlines()[0][:90]}"
            sv_s = "ok" if sv["status"] == "ok" else sv.get("reason", "")[:90]
            if r["verdict"] == "different definitions":
                lo_s += " (not the same definition)"
            w(f"| {run['corpus']} | `{d['spec']}` | {d['kind']} | {d['path']}:{d['line']} | {lo_s.replace('|', '/')} | {sv_s.replace('|', '/')} |")
    w("")

    w("## Time per rename")
    w("")
    w("loupe: one `edit` call (rename_symbol, dry run, metadata full) to a running `loupe serve`,")
    w("over MCP stdio, request to answer. Server: `textDocument/rename` to the running server,")
    w("request to answer (prepareRename, sent first, not counted). Each side had one untimed")
    w("warm-up rename first; the server's is in the header.")
    w("")
    w("| corpus | loupe median | loupe p95 | server median | server p95 |")
    w("| --- | ---: | ---: | ---: | ---: |")
    for run in runs:
        w(timing_row(run["corpus"], corpus_aggs[run["corpus"]]))
    w("")

    w("## Where the disagreements are")
    w("")
    w("A rough label of each disagreeing site's place in its line (report.py `context`); every")
    w("site is listed in bench/results/refactor-disagreements.md.")
    w("")
    w("| corpus | server renames, loupe does not change | loupe changes, server does not rename |")
    w("| --- | --- | --- |")
    for run in runs:
        a = corpus_aggs[run["corpus"]]
        so = ", ".join(f"{k} {v}" for k, v in a["ctx_server_only"].most_common()) or "—"
        lo = ", ".join(f"{k} {v}" for k, v in a["ctx_loupe_only"].most_common()) or "—"
        w(f"| {run['corpus']} | {so} | {lo} |")
    w("")

    w("## Every symbol")
    w("")
    w("| corpus | symbol | kind | tier | definition | verdict | server | loupe exact / scoped / name_only | agreed | server only | loupe only |")
    w("| --- | --- | --- | --- | --- | --- | ---: | --- | ---: | ---: | ---: |")
    for run in runs:
        for r in run["results"]:
            d, lo, sv = r["symbol"], r["loupe"], r["server"]
            S = {key(s) for s in sv.get("sites", [])}
            L = {key(s) for s in lo.get("sites", []) if s["changed"]}
            cnt = Counter(s["confidence"] if s["changed"] else "name_only" for s in lo.get("sites", []))
            lo_s = f"{cnt['exact']} / {cnt['scoped']} / {cnt['name_only']}" + (f" (+{cnt['unknown']} past 200)" if cnt["unknown"] else "")
            if lo["status"] != "ok":
                lo_s = lo.get("code", "refused")
            elif lo.get("resolved_spec"):
                lo_s += f" (after AMBIGUOUS_SYMBOL, as `{lo['resolved_spec']}`)"
            sv_n = str(len(S)) if sv["status"] == "ok" else "refused"
            scored = r["verdict"] == "scored"
            w(f"| {run['corpus']} | `{d['spec']}` | {d['kind']} | {d['tier']} ({d['definitions_of_name']} def, {d['occurrences']} occ) | "
              f"{d['path']}:{d['line']} | {r['verdict']} | {sv_n} | {lo_s} | {len(S & L) if scored else '—'} | "
              f"{len(S - L) if scored else '—'} | {len(L - S) if scored else '—'} |")
    w("")
    args.md.write_text("\n".join(out) + "\n")

    # Every disagreement.
    o: list[str] = []
    o.append("# Rename disagreements: loupe against the language servers")
    o.append("")
    o.append("Every site where loupe's changed sites (exact + scoped) and the server's rename differ, for")
    o.append("each scored symbol (bench/results/refactor.md has the counts). `server only`: the server")
    o.append("renames it, loupe does not change it (`listed name_only` when loupe lists it unchanged);")
    o.append("`loupe only (exact|scoped)`: loupe changes it, the server does not. Columns are 1-based")
    o.append("bytes. Symbols that were not scored (a refusal, different definitions) are listed after.")
    o.append("")
    for run in runs:
        o.append(f"## {run['corpus']} ({LANG_TITLE[run['language']]})")
        o.append("")
        any_ = False
        for r in run["results"]:
            if r["verdict"] != "scored":
                continue
            d, lo, sv = r["symbol"], r["loupe"], r["server"]
            S = {key(s): s for s in sv["sites"]}
            L = {key(s): s for s in lo["sites"] if s["changed"]}
            N = {key(s) for s in lo["sites"] if not s["changed"]}
            rows = []
            for k_ in sorted(set(S) - set(L)):
                side = "server only" + (" (listed name_only)" if k_ in N else "")
                rows.append((k_, side, S[k_]["text"]))
            for k_ in sorted(set(L) - set(S)):
                sd = L[k_].get("server_definition") or {}
                note = {"other": f"; server: defined at {sd.get('target')}", "none": "; server: unresolved",
                        "this": "; server: resolves here, rename missed it"}.get(sd.get("verdict"), "")
                rows.append((k_, f"loupe only ({L[k_]['confidence']}){note}", L[k_]["text"]))
            if not rows:
                continue
            any_ = True
            o.append(f"### `{d['spec']}` ({d['kind']}, {d['path']}:{d['line']}:{d['col']}) — server {len(S)}, loupe {len(L)}, agreed {len(set(S) & set(L))}")
            o.append("")
            o.append("| site | side | context | line |")
            o.append("| --- | --- | --- | --- |")
            for (p, ln, col), side, text in sorted(rows):
                t = text.strip()
                if len(t) > 160:
                    t = t[:157] + "…"
                t = t.replace("|", "\\|").replace("`", "ˋ")
                o.append(f"| {p}:{ln}:{col} | {side} | {context(text, col, d['name'], run['language'])} | `{t}` |")
            o.append("")
        if not any_:
            o.append("No disagreement on a scored symbol.")
            o.append("")
        unscored = [r for r in run["results"] if r["verdict"] != "scored"]
        if unscored:
            o.append(f"Not scored in {run['corpus']}:")
            o.append("")
            for r in unscored:
                d, lo, sv = r["symbol"], r["loupe"], r["server"]
                lo_n = sum(1 for s in lo.get("sites", []) if s["changed"])
                detail = []
                if lo["status"] != "ok":
                    cands = ("; candidates: " + ", ".join(lo.get("candidates", []))) if lo.get("candidates") else ""
                    detail.append(f"loupe {lo.get('code')}{cands}")
                else:
                    detail.append(f"loupe {lo_n} sites")
                detail.append(f"server {len(sv.get('sites', []))} sites" if sv["status"] == "ok" else f"server refused ({sv.get('reason', '')[:120]})")
                o.append(f"- `{d['spec']}` ({d['kind']}, {d['path']}:{d['line']}:{d['col']}): {r['verdict']}; " + "; ".join(detail))
            o.append("")
    args.disagreements.write_text("\n".join(o) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
