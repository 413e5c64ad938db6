"""Which symbols the refactor bench renames: every definition of a corpus, then a seeded sample.

A definition is a dict: name, kind (function, class, method, field, attribute, variable, ...),
bucket (function | type | method | field), path (relative to the root), line (1-based),
col (1-based byte column of the name), spec (the `symbol` loupe's rename_symbol takes: `name`,
`Type.member`, `Type::member`), container, and `foreign` (a Rust method of a trait impl whose
trait is not defined in the crate: a rename the server is expected to refuse).

Python definitions come from the standard library's `ast` (its columns are UTF-8 byte offsets,
loupe's unit); TypeScript and Rust ones from the language server's textDocument/documentSymbol
(selectionRange: the name), converted from UTF-16 to bytes.
"""

from __future__ import annotations

import ast
import random
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from lsp import LspClient, path_to_uri, utf16_to_byte_col

IDENT = re.compile(rb"[A-Za-z_#][A-Za-z0-9_]*")


def git_files(root: Path, exts: tuple[str, ...]) -> list[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode("utf-8").split("\0")
    return sorted(p for p in out if p.endswith(exts))


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


# --- Python ------------------------------------------------------------------------------

_DEF_HEAD = re.compile(rb"(?:async\s+)?(?:def|class)\s+")


def _def_name_col(lines: list[bytes], node: ast.AST) -> tuple[int, int] | None:
    line = lines[node.lineno - 1]
    m = _DEF_HEAD.match(line, node.col_offset)
    if not m:
        return None
    return node.lineno, m.end() + 1


def _assign_names(node: ast.AST) -> list[ast.Name]:
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    out: list[ast.Name] = []
    for t in targets:
        if isinstance(t, ast.Name):
            out.append(t)
        elif isinstance(t, (ast.Tuple, ast.List)):
            out.extend(e for e in t.elts if isinstance(e, ast.Name))
    return out


def _self_attr_targets(node: ast.AST) -> list[ast.Attribute]:
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    out = []
    for t in targets:
        elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
        for e in elts:
            if (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)
                    and e.value.id == "self"):
                out.append(e)
    return out


def python_definitions(root: Path) -> tuple[list[dict[str, Any]], Counter]:
    defs: list[dict[str, Any]] = []
    freq: Counter = Counter()
    for rel in git_files(root, (".py",)):
        src = (root / rel).read_bytes()
        freq.update(m.group().decode() for m in IDENT.finditer(src))
        try:
            tree = ast.parse(src, filename=rel)
        except (SyntaxError, ValueError):
            continue
        lines = src.split(b"\n")

        def add(name: str, kind: str, line: int, col: int, spec: str, container: str = "") -> None:
            defs.append({"name": name, "kind": kind, "path": rel, "line": line, "col": col,
                         "spec": spec, "container": container, "foreign": False})

        seen_module: set[str] = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                pos = _def_name_col(lines, node)
                if pos:
                    add(node.name, "function", *pos, node.name)
            elif isinstance(node, ast.ClassDef):
                pos = _def_name_col(lines, node)
                if not pos:
                    continue
                cls = node.name
                add(cls, "class", *pos, cls)
                members: set[str] = set()
                for child in node.body:
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        pos = _def_name_col(lines, child)
                        if pos:
                            add(child.name, "method", *pos, f"{cls}.{child.name}", cls)
                        members.add(child.name)
                    for target in _assign_names(child):
                        if target.id not in members:
                            add(target.id, "field", target.lineno, target.col_offset + 1,
                                f"{cls}.{target.id}", cls)
                            members.add(target.id)
                # Instance attributes: the first `self.X = ...` (in __init__ first, then in
                # source order) of a name the class body does not define.
                methods = [c for c in node.body if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef))]
                methods.sort(key=lambda m: (m.name != "__init__", m.lineno))
                for method in methods:
                    for sub in ast.walk(method):
                        for attr in _self_attr_targets(sub):
                            if attr.attr in members:
                                continue
                            members.add(attr.attr)
                            col = attr.end_col_offset - len(attr.attr.encode())
                            add(attr.attr, "attribute", attr.end_lineno, col + 1,
                                f"{cls}.{attr.attr}", cls)
            else:
                for target in _assign_names(node):
                    if target.id in seen_module or target.id == "__all__":
                        continue
                    seen_module.add(target.id)
                    add(target.id, "variable", target.lineno, target.col_offset + 1, target.id)
    for d in defs:
        d["bucket"] = {"function": "function", "class": "type", "method": "method"}.get(d["kind"], "field")
    return defs, freq


# --- TypeScript and Rust, through documentSymbol ----------------------------------------

# LSP SymbolKind numbers.
K_MODULE, K_CLASS, K_METHOD, K_PROPERTY, K_FIELD, K_CONSTRUCTOR = 2, 5, 6, 7, 8, 9
K_ENUM, K_INTERFACE, K_FUNCTION, K_VARIABLE, K_CONSTANT = 10, 11, 12, 13, 14
K_OBJECT, K_ENUM_MEMBER, K_STRUCT, K_TYPE_PARAMETER = 19, 22, 23, 26

_RUST_IMPL = re.compile(r"^impl(?:<.*?>)?\s+(?:(?P<trait>[^ ]+?)\s+for\s+)?(?P<ty>.+)$")


def _rust_impl_parts(name: str) -> tuple[str | None, str | None]:
    """'impl<T: Buf> Buf for Take<T>' -> ('Buf', 'Take'); 'impl Bytes' -> (None, 'Bytes')."""
    m = _RUST_IMPL.match(name)
    if not m:
        return None, None
    ty = m.group("ty").strip()
    ty = re.sub(r"<.*$", "", ty).split("::")[-1]
    trait = m.group("trait")
    if trait:
        trait = re.sub(r"<.*$", "", trait).split("::")[-1]
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ty or ""):
        return trait, None
    return trait, ty


def lsp_definitions(client: LspClient, root: Path, language: str) -> tuple[list[dict[str, Any]], Counter]:
    exts = (".ts", ".tsx") if language == "typescript" else (".rs",)
    files = [f for f in git_files(root, exts) if not f.endswith(".d.ts")]
    defs: list[dict[str, Any]] = []
    freq: Counter = Counter()
    raw: list[tuple[str, list[str], dict[str, Any], list[str]]] = []
    for rel in files:
        path = root / rel
        src = path.read_bytes()
        freq.update(m.group().decode() for m in IDENT.finditer(src))
        if language == "typescript":
            client.did_open(path, "typescript")
        symbols = client.request("textDocument/documentSymbol",
                                 {"textDocument": {"uri": path_to_uri(path)}}, timeout=120) or []
        if language == "typescript":
            client.did_close(path)
        text_lines = src.decode("utf-8", errors="surrogateescape").split("\n")
        for sym in symbols:
            raw.append((rel, [], sym, text_lines))

    local_types: set[str] = set()
    local_traits: set[str] = set()
    if language == "rust":
        def collect(sym: dict[str, Any]) -> None:
            if sym["kind"] in (K_STRUCT, K_ENUM, K_TYPE_PARAMETER):
                local_types.add(sym["name"])
            if sym["kind"] == K_INTERFACE:
                local_traits.add(sym["name"])
                local_types.add(sym["name"])
            if sym["kind"] == K_MODULE:
                for child in sym.get("children", []):
                    collect(child)
        for _, _, sym, _ in raw:
            collect(sym)

    def add(rel: str, sym: dict[str, Any], lines: list[str], kind: str, spec: str,
            container: str = "", foreign: bool = False) -> None:
        start = sym["selectionRange"]["start"]
        line = lines[start["line"]] if start["line"] < len(lines) else ""
        col = utf16_to_byte_col(line, start["character"])
        name = sym["name"]
        if not line.encode("utf-8", errors="surrogateescape")[col:].startswith(name.encode()):
            return  # a symbol whose name is not written at its position (macro output, ...)
        defs.append({"name": name, "kind": kind, "path": rel, "line": start["line"] + 1,
                     "col": col + 1, "spec": spec, "container": container, "foreign": foreign})

    def ts_walk(rel: str, sym: dict[str, Any], lines: list[str]) -> None:
        k, name = sym["kind"], sym["name"]
        if not re.fullmatch(r"#?[A-Za-z_$][A-Za-z0-9_$]*", name):
            return
        start = sym["selectionRange"]["start"]
        before = lines[start["line"]][:start["character"]] if start["line"] < len(lines) else ""
        if k in (K_CLASS, K_INTERFACE, K_ENUM):
            add(rel, sym, lines, {K_CLASS: "class", K_INTERFACE: "interface", K_ENUM: "enum"}[k], name)
            for child in sym.get("children", []):
                ck, cname = child["kind"], child["name"]
                if not re.fullmatch(r"#?[A-Za-z_$][A-Za-z0-9_$]*", cname) or ck == K_CONSTRUCTOR:
                    continue
                ckind = {K_METHOD: "method", K_PROPERTY: "property", K_FIELD: "field",
                         K_ENUM_MEMBER: "enum_member"}.get(ck)
                if ckind:
                    add(rel, child, lines, ckind, f"{name}.{cname}", name)
        elif k == K_FUNCTION:
            add(rel, sym, lines, "function", name)
        elif k in (K_VARIABLE, K_CONSTANT):
            kind = "type_alias" if re.search(r"\btype\s+$", before) else "variable"
            add(rel, sym, lines, kind, name)

    def rs_walk(rel: str, sym: dict[str, Any], lines: list[str]) -> None:
        k, name = sym["kind"], sym["name"]
        if k == K_MODULE:
            if name in ("tests", "test"):
                return
            for child in sym.get("children", []):
                rs_walk(rel, child, lines)
            return
        if k == K_FUNCTION:
            if sym.get("detail"):  # macro_rules! definitions come as functions without one
                add(rel, sym, lines, "function", name)
            return
        if k in (K_STRUCT, K_ENUM, K_INTERFACE, K_TYPE_PARAMETER):
            kind = {K_STRUCT: "struct", K_ENUM: "enum", K_INTERFACE: "trait", K_TYPE_PARAMETER: "type_alias"}[k]
            add(rel, sym, lines, kind, name)
            for child in sym.get("children", []):
                ck, cname = child["kind"], child["name"]
                if ck == K_FIELD and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", cname):
                    add(rel, child, lines, "field", f"{name}::{cname}", name)
                elif ck == K_ENUM_MEMBER:
                    add(rel, child, lines, "variant", f"{name}::{cname}", name)
                elif ck in (K_METHOD, K_FUNCTION) and k == K_INTERFACE:
                    add(rel, child, lines, "method", f"{name}::{cname}", name)
            return
        if k in (K_CONSTANT, K_VARIABLE):
            add(rel, sym, lines, "constant" if k == K_CONSTANT else "static", name)
            return
        if k == K_OBJECT:
            trait, ty = _rust_impl_parts(name)
            if ty is None or ty not in local_types:
                return
            foreign = trait is not None and trait not in local_traits
            for child in sym.get("children", []):
                if child["kind"] in (K_METHOD, K_FUNCTION):
                    add(rel, child, lines, "method", f"{ty}::{child['name']}", ty, foreign)
                elif child["kind"] == K_CONSTANT and trait is None:
                    add(rel, child, lines, "assoc_const", f"{ty}::{child['name']}", ty)

    for rel, _, sym, lines in raw:
        (ts_walk if language == "typescript" else rs_walk)(rel, sym, lines)
    buckets = {"function": "function", "method": "method", "class": "type", "interface": "type",
               "enum": "type", "type_alias": "type", "struct": "type", "trait": "type"}
    for d in defs:
        d["bucket"] = buckets.get(d["kind"], "field")
    # documentSymbol can list one definition twice (a const and a type of one name): keep one
    # per position.
    uniq: dict[tuple[str, int, int], dict[str, Any]] = {}
    for d in defs:
        uniq.setdefault((d["path"], d["line"], d["col"]), d)
    return list(uniq.values()), freq


# --- the sample --------------------------------------------------------------------------

COMMON_AT = 20  # whole-word occurrences in the corpus from which a name counts as common


def eligible(d: dict[str, Any]) -> bool:
    name = d["name"].lstrip("#")
    if len(name) < 2 or is_dunder(name):
        return False
    if d["bucket"] in ("function", "method") and name.lower().startswith("test"):
        return False  # test functions: nothing calls them
    return True


def select(defs: list[dict[str, Any]], freq: Counter, n: int, seed: int,
           max_foreign: int = 3) -> list[dict[str, Any]]:
    """n definitions: round robin over (bucket, tier) cells, each shuffled with the seed.

    Tiers: `duplicate` (the name has two or more definitions in the corpus), `common` (one
    definition, at least COMMON_AT whole-word occurrences), `rare` (one definition, fewer).
    Methods of foreign-trait impls are held to `max_foreign`.
    """
    per_name = Counter(d["name"] for d in defs)
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for d in defs:
        if not eligible(d):
            continue
        d["definitions_of_name"] = per_name[d["name"]]
        d["occurrences"] = freq[d["name"]]
        if per_name[d["name"]] >= 2:
            d["tier"] = "duplicate"
        elif freq[d["name"]] >= COMMON_AT:
            d["tier"] = "common"
        else:
            d["tier"] = "rare"
        cells[(d["bucket"], d["tier"])].append(d)
    order = sorted(cells)
    rng = random.Random(seed)
    for key in order:
        cells[key].sort(key=lambda d: (d["path"], d["line"], d["col"]))
        rng.shuffle(cells[key])
    chosen: list[dict[str, Any]] = []
    foreign = 0
    names_taken: Counter = Counter()
    while len(chosen) < n and any(cells[k] for k in order):
        for key in order:
            if len(chosen) >= n:
                break
            while cells[key]:
                d = cells[key].pop()
                if d["foreign"] and foreign >= max_foreign:
                    continue
                if names_taken[d["name"]] >= 2:
                    continue  # at most two definitions of one name, for variety
                foreign += d["foreign"]
                names_taken[d["name"]] += 1
                chosen.append(d)
                break
    return chosen
