"""Writes calls.jsonl: the built-in tool calls the adoption replay runs, each with the question it
answers, a machine-checkable answer and whether it is a code lookup.

The calls are written out below by hand, as an agent makes them on Flask 3.0.3; only the answers'
line numbers and file sets are computed from the corpus (a definition's line from Python's `ast`,
the Python files that use a name from a whole-word scan), so the labels do not drift from the
tree and never come from the tools being measured. replay.py checks every label against the
built-in output too: a label the built-in output does not satisfy stops the run.

    python make_calls.py CORPUS > calls.jsonl

A *code lookup* is a call that looks code up by name, the kind the hook exists to route: a
definition, the uses of an identifier in code, a source file by its name, or a source file of
8 KiB or more read whole to see what it defines. Not code lookups: free regexes, searches of
prose and configuration, broad listings, ranged reads, whole reads of small files, greps inside
one file, and shell commands that do more than one lookup.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys

ROOT = "$ROOT"
SMALL_SOURCE = 8 * 1024  # whole reads of smaller source files are not code lookups


class Corpus:
    def __init__(self, root: str):
        self.root = root
        self.files = []
        for base, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for name in sorted(names):
                self.files.append(os.path.relpath(os.path.join(base, name), root))
        self.text: dict[str, str] = {}

    def read(self, path: str) -> str:
        if path not in self.text:
            with open(os.path.join(self.root, path), encoding="utf-8") as f:
                self.text[path] = f.read()
        return self.text[path]

    def lines(self, path: str) -> list[str]:
        return self.read(path).splitlines()

    def size(self, path: str) -> int:
        return os.path.getsize(os.path.join(self.root, path))

    def py(self, under: str = "") -> list[str]:
        return [f for f in self.files if f.endswith(".py") and (not under or f == under or f.startswith(under.rstrip("/") + "/"))]

    def definitions(self, name: str, under: str = "", kind: str = "") -> list[str]:
        """`path:line` of every `def name` / `class name` in the Python files (methods included)."""
        out = []
        for path in self.py(under):
            for node in ast.walk(ast.parse(self.read(path))):
                ok = isinstance(node, ast.ClassDef) if kind == "class" else isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) if kind == "def" else isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                if ok and node.name == name:
                    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                    out.append(f"{path}:{first}-{node.lineno}" if first < node.lineno else f"{path}:{node.lineno}")
        if not out:
            raise SystemExit(f"no definition of {name} under {under or '.'}")
        return sorted(out)

    def users(self, name: str, under: str = "") -> list[str]:
        """The Python files under `under` that name `name` as a whole word."""
        pat = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
        out = [p for p in self.py(under) if pat.search(self.read(p))]
        if not out:
            raise SystemExit(f"nobody uses {name} under {under or '.'}")
        return out

    def span(self, path: str, name: str) -> tuple[int, int]:
        for node in ast.walk(ast.parse(self.read(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                return node.lineno, node.end_lineno
        raise SystemExit(f"no {name} in {path}")

    def def_at(self, path: str, name: str) -> list:
        """`["def name", first, line]`: where the definition is, from its first decorator to its
        `def` line (an outline or a symbol hit may start a decorated function at the decorator)."""
        for node in ast.walk(ast.parse(self.read(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                return [f"def {name}", first, node.lineno]
        raise SystemExit(f"no def {name} in {path}")

    def matching(self, pattern: str, under: str = "", suffixes: tuple[str, ...] = ()) -> list[str]:
        rx = re.compile(pattern)
        out = []
        for f in self.files:
            if under and not (f == under or f.startswith(under.rstrip("/") + "/")):
                continue
            if suffixes and not f.endswith(suffixes):
                continue
            try:
                if rx.search(self.read(f)):
                    out.append(f)
            except UnicodeDecodeError:
                continue
        if not out:
            raise SystemExit(f"nothing matches {pattern!r} under {under or '.'}")
        return out


def main() -> None:
    c = Corpus(os.path.realpath(sys.argv[1]))
    calls: list[dict] = []

    def add(id_: str, kind: str, question: str, lookup: bool, tool: str, inp: dict, answer: dict, cwd: str | None = None):
        call = {"id": id_, "kind": kind, "question": question, "code_lookup": lookup, "tool_name": tool, "tool_input": inp, "answer": answer}
        if cwd:
            call["cwd"] = cwd
        calls.append(call)

    def at(name: str, under: str = "", kind: str = "") -> dict:
        return {"at": c.definitions(name, under, kind)}

    def files_of(sites: list[str]) -> list[str]:
        return sorted({s.rsplit(":", 1)[0] for s in sites})

    # -----------------------------------------------------------------------------------------
    # Grep for a definition: `def x`, `class X`, in Claude Code's default mode (the files) and in
    # content mode (the lines).
    content_defs = [
        ("url_for", "def url_for", "def"), ("get_debug_flag", "def get_debug_flag", "def"),
        ("stream_with_context", "^def stream_with_context", "def"), ("make_response", "def make_response", "def"),
        ("Flask", "class Flask\\b", "class"), ("Blueprint", "class Blueprint\\b", "class"), ("Config", "class Config\\b", "class"),
        ("jsonify", "def jsonify", "def"), ("render_template", "def render_template\\(", "def"),
        ("RequestContext", "class\\s+RequestContext", "class"), ("session_transaction", "def session_transaction", "def"),
        ("add_url_rule", "def add_url_rule", "def"), ("EnvironBuilder", "class EnvironBuilder", "class"),
        ("send_file", "def send_file\\(", "def"), ("View", "class View\\b", "class"), ("register_blueprint", "def register_blueprint", "def"),
        ("find_best_app", "def find_best_app", "def"), ("ensure_sync", "def ensure_sync", "def"),
    ]
    for name, pattern, kind in content_defs:
        add(f"grep-def-{name}", "grep-definition", f"Where is {name} defined?", True, "Grep",
            {"pattern": pattern, "output_mode": "content", "-n": True}, at(name, kind=kind))
    files_defs = [
        ("get_load_dotenv", "def get_load_dotenv", "def"), ("locate_app", "def locate_app", "def"),
        ("FlaskClient", "class FlaskClient", "class"), ("ScriptInfo", "class ScriptInfo", "class"),
        ("create_logger", "def create_logger", "def"), ("SessionInterface", "class SessionInterface", "class"),
        ("SecureCookieSessionInterface", "class SecureCookieSessionInterface", "class"), ("setupmethod", "def setupmethod", "def"),
        ("TaggedJSONSerializer", "class TaggedJSONSerializer", "class"), ("DefaultJSONProvider", "class DefaultJSONProvider", "class"),
        ("MethodView", "class MethodView", "class"), ("has_request_context", "def has_request_context", "def"),
        ("find_package", "def find_package", "def"), ("AppContext", "class AppContext", "class"),
        ("NoAppException", "class NoAppException", "class"), ("load_dotenv", "def load_dotenv", "def"),
        ("Scaffold", "class Scaffold", "class"),
    ]
    for name, pattern, kind in files_defs:
        add(f"grep-def-files-{name}", "grep-definition", f"Which file defines {name}?", True, "Grep",
            {"pattern": pattern}, {"files": files_of(c.definitions(name, kind=kind))})
    # A definition grep with context lines: the agent wants the body, not the place.
    for name, path, flag, n in [("full_dispatch_request", "src/flask/app.py", "-A", 20), ("wsgi_app", "src/flask/app.py", "-A", 40),
                                ("get_debug_flag", "src/flask/helpers.py", "-A", 6), ("find_package", "src/flask/sansio/scaffold.py", "-C", 15)]:
        first, last = c.span(path, name)
        lines = (first, min(last, first + n)) if flag == "-A" else (first, min(last, first + n))
        add(f"grep-def-body-{name}", "grep-definition-body", f"What does {name} do (its first lines)?", True, "Grep",
            {"pattern": f"def {name}", "output_mode": "content", "-n": True, flag: n}, {"lines": [path, *lines]})

    # -----------------------------------------------------------------------------------------
    # Grep for the uses of an identifier. The question: which Python files use it.
    usage_content = ["get_debug_flag", "get_load_dotenv", "session_transaction", "find_best_app", "has_level_handler",
                     "with_appcontext", "get_root_path", "prepare_import", "full_dispatch_request",
                     "make_default_options_response", "ensure_sync", "async_to_sync", "do_teardown_request", "get_cookie_domain",
                     "from_pyfile", "render_template_string", "copy_current_request_context", "url_for", "redirect",
                     "current_app", "jsonify", "DeprecationWarning"]
    for name in usage_content:
        add(f"grep-use-{name}", "grep-usage", f"Which Python files use {name}?", True, "Grep",
            {"pattern": name, "output_mode": "content", "-n": True}, {"files": c.users(name)})
    for name in ["url_for", "render_template", "test_client", "register_blueprint", "app_context", "stream_with_context",
                 "send_from_directory", "SECRET_KEY", "request_ctx", "_get_current_object", "teardown_appcontext"]:
        add(f"grep-use-files-{name}", "grep-usage", f"Which Python files use {name}?", True, "Grep",
            {"pattern": name}, {"files": c.users(name)})
    for name in ["abort", "flash", "setupmethod"]:
        add(f"grep-use-count-{name}", "grep-usage", f"Which Python files use {name}, and how often?", True, "Grep",
            {"pattern": f"\\b{name}\\b", "output_mode": "count"}, {"files": c.users(name)})

    # -----------------------------------------------------------------------------------------
    # Greps narrowed by path, glob or type.
    add("grep-scoped-def-url_for", "grep-scoped", "Where is url_for defined in src?", True, "Grep",
        {"pattern": "def url_for", "path": f"{ROOT}/src", "type": "py", "output_mode": "content", "-n": True}, at("url_for"))
    add("grep-scoped-url_for-src", "grep-scoped", "Which modules of the package use url_for?", True, "Grep",
        {"pattern": "url_for", "path": f"{ROOT}/src/flask", "output_mode": "content", "-n": True}, {"files": c.users("url_for", "src/flask")})
    add("grep-scoped-get_debug_flag-glob", "grep-scoped", "Which Python files use get_debug_flag?", True, "Grep",
        {"pattern": "get_debug_flag", "glob": "*.py", "output_mode": "content", "-n": True}, {"files": c.users("get_debug_flag")})
    add("grep-scoped-session_transaction-tests", "grep-scoped", "Which tests use session_transaction?", True, "Grep",
        {"pattern": "session_transaction", "path": f"{ROOT}/tests", "output_mode": "content", "-n": True},
        {"files": c.users("session_transaction", "tests")})
    add("grep-scoped-Blueprint-sansio", "grep-scoped", "Which sansio modules use Blueprint?", True, "Grep",
        {"pattern": "Blueprint", "path": f"{ROOT}/src/flask/sansio"}, {"files": c.users("Blueprint", "src/flask/sansio")})
    add("grep-scoped-render_template-glob", "grep-scoped", "Which Python files use render_template?", True, "Grep",
        {"pattern": "render_template", "glob": "**/*.py"}, {"files": c.users("render_template")})
    add("grep-scoped-jsonify-type", "grep-scoped", "Which Python files use jsonify?", True, "Grep",
        {"pattern": "jsonify", "type": "py", "output_mode": "content", "-n": True}, {"files": c.users("jsonify")})
    add("grep-scoped-app_context-src", "grep-scoped", "Which package modules use app_context?", True, "Grep",
        {"pattern": "app_context", "path": "src", "glob": "*.py", "output_mode": "content", "-n": True},
        {"files": c.users("app_context", "src")})
    add("grep-scoped-before_request-tests", "grep-scoped", "Which tests use before_request, how often?", True, "Grep",
        {"pattern": "before_request", "path": f"{ROOT}/tests", "type": "py", "output_mode": "count"},
        {"files": c.users("before_request", "tests")})
    add("grep-scoped-FlaskGroup-src", "grep-scoped", "Where is FlaskGroup defined?", True, "Grep",
        {"pattern": "class FlaskGroup", "path": f"{ROOT}/src/flask", "output_mode": "content", "-n": True}, at("FlaskGroup"))
    add("grep-scoped-load_dotenv-examples", "grep-scoped", "Which package modules use load_dotenv?", True, "Grep",
        {"pattern": "load_dotenv", "path": f"{ROOT}/src"}, {"files": c.users("load_dotenv", "src")})
    add("grep-scoped-setupmethod-count", "grep-scoped", "How often is setupmethod used per sansio module?", True, "Grep",
        {"pattern": "setupmethod", "path": f"{ROOT}/src/flask/sansio", "glob": "*.py", "output_mode": "count"},
        {"files": c.users("setupmethod", "src/flask/sansio")})
    add("grep-scoped-def-in-subdir", "grep-scoped", "Where is get_namespace defined (from src/flask)?", True, "Grep",
        {"pattern": "def get_namespace", "output_mode": "content", "-n": True}, at("get_namespace"), cwd=f"{ROOT}/src/flask")
    add("grep-scoped-use-in-subdir", "grep-scoped", "Which tests use app_ctx (from tests/)?", True, "Grep",
        {"pattern": "app_ctx"}, {"files": c.users("app_ctx", "tests")}, cwd=f"{ROOT}/tests")
    # Inside one file: already as narrow as a lookup gets.
    add("grep-onefile-get_namespace", "grep-one-file", "Where in config.py is get_namespace?", False, "Grep",
        {"pattern": "def get_namespace", "path": f"{ROOT}/src/flask/config.py", "output_mode": "content", "-n": True},
        {"def_at": [c.def_at("src/flask/config.py", "get_namespace")]})
    add("grep-onefile-url_for", "grep-one-file", "Where does helpers.py mention url_for?", False, "Grep",
        {"pattern": "url_for", "path": f"{ROOT}/src/flask/helpers.py", "output_mode": "content", "-n": True},
        {"def_at": [c.def_at("src/flask/helpers.py", "url_for")]})
    add("grep-onefile-count-self", "grep-one-file", "How many `self.` references in ctx.py?", False, "Grep",
        {"pattern": "self\\.", "path": f"{ROOT}/src/flask/ctx.py", "output_mode": "count"}, {"text": ["Found"]})

    # -----------------------------------------------------------------------------------------
    # Regular expressions and searches for things that are not names in code.
    regexes = [
        ("route-decorators", "Where are routes declared in the examples?", {"pattern": "@app\\.route\\(", "path": f"{ROOT}/examples"},
         {"files": c.matching(r"@app\.route\(", "examples", (".py",))}),
        ("session-tests", "Which tests are about sessions?", {"pattern": "def test_\\w*session", "path": f"{ROOT}/tests", "output_mode": "content", "-n": True},
         {"files": c.matching(r"def test_\w*session", "tests")}),
        ("raises", "Which errors does the package raise?", {"pattern": "raise \\w+Error", "path": f"{ROOT}/src", "output_mode": "content", "-n": True},
         {"text": ["raise RuntimeError", "raise TypeError"]}),
        ("todo", "Are there TODO/FIXME notes?", {"pattern": "TODO|FIXME|XXX", "output_mode": "content", "-n": True},
         {"files": c.matching(r"TODO|FIXME|XXX", "", (".py",))}),
        ("config-keys", "Which config keys does the package read?", {"pattern": "config\\[\"[A-Z_]+\"\\]", "path": f"{ROOT}/src/flask", "output_mode": "content", "-n": True},
         {"text": ["SESSION_COOKIE_NAME", "MAX_CONTENT_LENGTH"]}),
        ("decorated-setupmethod", "How many setup methods per module?", {"pattern": "@setupmethod", "path": f"{ROOT}/src", "output_mode": "count"},
         {"files": c.matching(r"@setupmethod", "src")}),
        ("handlers", "Which functions are handlers?", {"pattern": "def \\w+_handler", "output_mode": "content", "-n": True},
         {"text": ["def register_error_handler"]}),
        ("exception-classes", "Which exception classes are there?", {"pattern": "class \\w+\\((\\w+\\.)?\\w*(Exception|Error)\\)", "output_mode": "content", "-n": True},
         {"text": ["class NoAppException"]}),
        ("async-defs", "What is async?", {"pattern": "async def", "type": "py", "output_mode": "content", "-n": True}, {"files": c.matching(r"async def", "", (".py",))}),
        ("overloads", "Which functions are overloaded?", {"pattern": "@t\\.overload", "path": f"{ROOT}/src", "output_mode": "content", "-n": True, "-A": 1},
         {"text": ["def locate_app"]}),
        ("relative-imports", "Which modules import from siblings?", {"pattern": "^from \\.\\w+ import", "path": f"{ROOT}/src/flask"},
         {"files": c.matching(r"(?m)^from \.\w+ import", "src/flask")}),
        ("external-url_for", "Where is url_for called with _external?", {"pattern": "url_for\\(.*_external", "output_mode": "content", "-n": True},
         {"files": c.matching(r"url_for\(.*_external", "", (".py",))}),
        ("type-checking", "Which modules import only for type checking?", {"pattern": "if t\\.TYPE_CHECKING", "path": f"{ROOT}/src"},
         {"files": c.matching(r"if t\.TYPE_CHECKING", "src")}),
        ("warnings", "Where are warnings issued?", {"pattern": "warnings\\.warn\\(", "path": f"{ROOT}/src", "output_mode": "content", "-n": True, "-A": 2},
         {"files": c.matching(r"warnings\.warn\(", "src")}),
        ("case-insensitive-secret", "Where is the secret key mentioned, any case?", {"pattern": "secret.?key", "-i": True, "type": "py"},
         {"files": c.matching(r"(?i)secret.?key", "", (".py",))}),
        ("multiline-class", "Which classes span a docstring right after the class line?", {"pattern": "class Config\\(dict\\):[^\\n]*\\n\\s+\"\"\"", "multiline": True, "output_mode": "content", "-n": True},
         {"text": ["class Config(dict):"]}),
    ]
    for key, question, inp, answer in regexes:
        add(f"grep-regex-{key}", "grep-regex", question, False, "Grep", inp, answer)
    # Words that look like names but ask about comments, not code.
    add("grep-word-TODO", "grep-regex", "Are there TODO notes?", False, "Grep", {"pattern": "TODO", "output_mode": "content", "-n": True},
        {"files": c.matching(r"TODO", "", (".py",))})
    add("grep-word-noqa", "grep-regex", "Where are lint warnings silenced?", False, "Grep", {"pattern": "noqa", "output_mode": "content", "-n": True},
        {"files": c.matching(r"noqa", "", (".py",))})
    add("grep-word-pragma", "grep-regex", "Where is coverage turned off?", False, "Grep", {"pattern": "pragma: no cover", "output_mode": "content", "-n": True},
        {"files": c.matching(r"pragma: no cover", "", (".py",))})

    # -----------------------------------------------------------------------------------------
    # Searches of prose and configuration.
    noncode = [
        ("secret-rst", "What do the docs say about SECRET_KEY?", {"pattern": "SECRET_KEY", "glob": "*.rst", "output_mode": "content", "-n": True},
         {"files": c.matching(r"SECRET_KEY", "", (".rst",))}),
        ("url_for-docs", "Which docs pages mention url_for?", {"pattern": "url_for", "path": f"{ROOT}/docs"}, {"files": c.matching(r"url_for", "docs")}),
        ("blueprint-docs-count", "How often do docs pages mention blueprints?", {"pattern": "blueprint", "-i": True, "path": f"{ROOT}/docs", "output_mode": "count"},
         {"files": ["docs/blueprints.rst"]}),
        ("pytest-pyproject", "How is pytest configured?", {"pattern": "pytest", "path": f"{ROOT}/pyproject.toml", "output_mode": "content", "-n": True},
         {"text": ["[tool.pytest.ini_options]"]}),
        ("version-toml", "Which version does the project declare?", {"pattern": "version", "glob": "*.toml", "output_mode": "content", "-n": True}, {"text": ["3.0.3"]}),
        ("pytest-requirements", "Which requirement files pin pytest?", {"pattern": "pytest", "path": f"{ROOT}/requirements"},
         {"files": c.matching(r"pytest", "requirements")}),
        ("changes-deprecated", "What was deprecated recently?", {"pattern": "deprecated", "-i": True, "path": f"{ROOT}/CHANGES.rst", "output_mode": "content", "-n": True, "head_limit": 40},
         {"text": ["deprecated"]}),
        ("quickstart-type-rst", "Which docs mention the quickstart?", {"pattern": "quickstart", "type": "rst"}, {"files": c.matching(r"quickstart", "docs", (".rst",))[:3]}),
        ("readme-md", "What does the README say about installing?", {"pattern": "install", "-i": True, "type": "md", "output_mode": "content", "-n": True},
         {"text": ["pip install"]}),
        ("templates-extends", "Which templates extend a base?", {"pattern": "extends", "glob": "**/*.html", "output_mode": "content", "-n": True},
         {"files": c.matching(r"extends", "", (".html",))}),
        ("requires-python", "Which Python does it require?", {"pattern": "requires-python", "path": f"{ROOT}/pyproject.toml", "output_mode": "content", "-n": True},
         {"text": [">=3.8"]}),
        ("tox-envlist", "Which tox environments exist?", {"pattern": "envlist", "path": f"{ROOT}/tox.ini", "output_mode": "content", "-n": True, "-A": 6},
         {"text": ["envlist"]}),
        ("jinja-templating-doc", "What does templating.rst say about Jinja?", {"pattern": "jinja", "-i": True, "path": f"{ROOT}/docs/templating.rst", "output_mode": "content", "-n": True},
         {"text": ["Jinja"]}),
        ("config-docs", "Which docs pages show app.config?", {"pattern": "app\\.config", "glob": "docs/**/*.rst", "output_mode": "content", "-n": True},
         {"files": ["docs/config.rst"]}),
        ("sphinx-requirements", "Which requirement files mention sphinx?", {"pattern": "sphinx", "glob": "requirements/*.txt"},
         {"files": c.matching(r"sphinx", "requirements", (".txt",))}),
        ("testing-docs-dir", "Which docs talk about the test client?", {"pattern": "test_client", "path": f"{ROOT}/docs", "output_mode": "content", "-n": True},
         {"files": c.matching(r"test_client", "docs")}),
        ("session-quickstart", "What does the quickstart say about sessions?", {"pattern": "session", "path": f"{ROOT}/docs/quickstart.rst", "output_mode": "content", "-n": True},
         {"text": ["flask.session"]}),
    ]
    for key, question, inp, answer in noncode:
        add(f"grep-noncode-{key}", "grep-non-code", question, False, "Grep", inp, answer)

    # -----------------------------------------------------------------------------------------
    # Glob for one file by name, and broad globs.
    for pattern, lookup in [("**/testing.py", True), ("**/views.py", True), ("src/**/app.py", True), ("**/conftest.py", True),
                            ("**/config.py", True), ("**/cli.py", True), ("**/tag.py", True), ("**/scaffold.py", True),
                            ("examples/**/auth.py", True), ("**/flaskr/db.py", True), ("**/sessions.py", True), ("**/globals.py", True),
                            ("**/test_config.py", True), ("**/conf.py", True), ("**/__init__.py", True),
                            ("**/pyproject.toml", False), ("**/README.md", False), ("**/quickstart.rst", False)]:
        name = pattern.rsplit("/", 1)[-1]
        prefix = pattern.split("**")[0].rstrip("/")
        hits = [f for f in c.files if os.path.basename(f) == name and f.startswith(prefix) and (pattern != "**/flaskr/db.py" or "/flaskr/" in f)]
        add(f"glob-one-{pattern.replace('/', '_').replace('*', '')}", "glob-one-file" if lookup else "glob-one-non-code",
            f"Where is {name}?", lookup, "Glob", {"pattern": pattern}, {"files": hits})
    add("glob-one-with-path", "glob-one-file", "Where is app.py under src?", True, "Glob", {"pattern": "**/app.py", "path": f"{ROOT}/src"},
        {"files": ["src/flask/app.py", "src/flask/sansio/app.py"]})
    broad = [("**/*.py", {"files": ["src/flask/app.py"]}), ("src/**/*.py", {"files": c.py("src")}), ("tests/**/*.py", {"files": ["tests/conftest.py"]}),
             ("docs/**/*.rst", {"files": ["docs/index.rst"]}), ("**/*.html", {"files": ["examples/tutorial/flaskr/templates/base.html"]}),
             ("*.toml", {"files": ["pyproject.toml"]}), ("**/*.{py,pyi}", {"files": ["src/flask/app.py"]}), ("**/test_*.py", {"files": ["tests/test_basic.py"]}),
             ("examples/**/*", {"files": ["examples/tutorial/flaskr/db.py"]}), ("src/flask/json/*", {"files": c.py("src/flask/json")}),
             ("requirements/*.txt", {"files": ["requirements/dev.txt"]})]
    for pattern, answer in broad:
        add(f"glob-broad-{pattern.replace('/', '_').replace('*', 'x')}", "glob-broad", f"Which files match {pattern}?", False, "Glob",
            {"pattern": pattern}, answer)

    # -----------------------------------------------------------------------------------------
    # Whole-file reads of source files, to see what a module defines (or where a method is).
    large = ["src/flask/app.py", "src/flask/cli.py", "src/flask/helpers.py", "src/flask/sansio/app.py", "src/flask/sansio/blueprints.py",
             "src/flask/sansio/scaffold.py", "tests/test_basic.py", "tests/test_blueprints.py", "tests/test_cli.py",
             "src/flask/config.py", "src/flask/ctx.py", "src/flask/sessions.py", "src/flask/testing.py", "src/flask/json/tag.py",
             "tests/test_templating.py", "tests/test_testing.py", "tests/test_helpers.py", "tests/test_json.py"]
    for path in large:
        assert c.size(path) >= SMALL_SOURCE, path
        add(f"read-whole-{path.replace('/', '_')}", "read-whole-source", f"What does {path} define?", True, "Read",
            {"file_path": f"{ROOT}/{path}"}, {"defines": path})
    for path, name in [("src/flask/app.py", "wsgi_app"), ("src/flask/cli.py", "run_command"), ("src/flask/sansio/scaffold.py", "add_url_rule"),
                       ("src/flask/helpers.py", "send_file"), ("src/flask/ctx.py", "push")]:
        add(f"read-whole-find-{name}", "read-whole-source", f"Where in {path} is {name}, what is its signature?", True, "Read",
            {"file_path": f"{ROOT}/{path}"}, {"def_at": [c.def_at(path, name)]})
    small = ["src/flask/views.py", "src/flask/wrappers.py", "src/flask/json/__init__.py", "src/flask/json/provider.py", "src/flask/logging.py",
             "src/flask/globals.py", "src/flask/signals.py", "src/flask/typing.py", "src/flask/blueprints.py", "src/flask/templating.py",
             "src/flask/debughelpers.py", "src/flask/__init__.py", "tests/conftest.py", "examples/tutorial/flaskr/__init__.py",
             "examples/tutorial/flaskr/db.py", "examples/tutorial/flaskr/auth.py", "tests/test_config.py"]
    for path in small:
        assert c.size(path) < SMALL_SOURCE, path
        n = len(c.lines(path))
        add(f"read-small-{path.replace('/', '_')}", "read-whole-small", f"What is in {path}?", False, "Read",
            {"file_path": f"{ROOT}/{path}"}, {"lines": [path, 1, n]})

    # Ranged reads: already precise.
    ranged = [("src/flask/app.py", "wsgi_app", 1, 0), ("src/flask/helpers.py", "url_for", 1, 0), ("src/flask/cli.py", "locate_app", 0, 0),
              ("src/flask/sansio/app.py", "register_blueprint", 1, 0), ("src/flask/config.py", "from_pyfile", 1, 0), ("src/flask/ctx.py", "RequestContext", 1, 0),
              ("src/flask/sessions.py", "SecureCookieSessionInterface", 1, 0), ("src/flask/testing.py", "session_transaction", 1, 0),
              ("tests/test_basic.py", "test_session_using_session_settings", 1, 0), ("src/flask/sansio/scaffold.py", "route", 1, 0)]
    for path, name, _, _ in ranged:
        first, last = c.span(path, name)
        add(f"read-range-{name}", "read-ranged", f"The body of {name}", False, "Read",
            {"file_path": f"{ROOT}/{path}", "offset": first, "limit": last - first + 1}, {"lines": [path, first, last]})
    add("read-range-head", "read-ranged", "The imports of app.py", False, "Read", {"file_path": f"{ROOT}/src/flask/app.py", "limit": 80},
        {"lines": ["src/flask/app.py", 1, 60]})
    add("read-range-tail", "read-ranged", "The end of app.py", False, "Read", {"file_path": f"{ROOT}/src/flask/app.py", "offset": 1400},
        {"lines": ["src/flask/app.py", 1441, 1498]})
    add("read-range-window", "read-ranged", "Around app.py:1473 (a traceback)", False, "Read", {"file_path": f"{ROOT}/src/flask/app.py", "offset": 1463, "limit": 21},
        {"lines": ["src/flask/app.py", 1463, 1483]})
    add("read-range-cli-head", "read-ranged", "The first 120 lines of cli.py", False, "Read", {"file_path": f"{ROOT}/src/flask/cli.py", "offset": 1, "limit": 120},
        {"lines": ["src/flask/cli.py", 1, 120]})
    add("read-range-tests-window", "read-ranged", "test_basic.py around line 640", False, "Read", {"file_path": f"{ROOT}/tests/test_basic.py", "offset": 600, "limit": 80},
        {"lines": ["tests/test_basic.py", 600, 679]})
    add("read-range-changes", "read-ranged", "The latest changes", False, "Read", {"file_path": f"{ROOT}/CHANGES.rst", "limit": 60},
        {"lines": ["CHANGES.rst", 1, 60]})

    # Reads of prose and configuration.
    for path, needle in [("README.md", "pip install"), ("CHANGES.rst", "Version 3.0.3"), ("pyproject.toml", "[project]"),
                         ("docs/quickstart.rst", "A Minimal Application"), ("docs/config.rst", "SECRET_KEY"), ("tox.ini", "envlist"),
                         ("requirements/dev.txt", "pre-commit"), ("LICENSE.txt", "Redistribution"), ("CONTRIBUTING.rst", "pre-commit"),
                         ("examples/tutorial/flaskr/templates/base.html", "<!doctype html>"), ("docs/index.rst", "toctree"),
                         ("docs/api.rst", "autoclass"), ("docs/tutorial/tests.rst", "pytest")]:
        add(f"read-noncode-{path.replace('/', '_')}", "read-non-code", f"What does {path} say?", False, "Read",
            {"file_path": f"{ROOT}/{path}"}, {"text": [needle]})

    # -----------------------------------------------------------------------------------------
    # Bash: shell lookups, and commands that do more than one thing.
    bash = [
        ("rg-def-url_for", "bash-grep", "Where is url_for defined?", True, "rg -n 'def url_for'", at("url_for")),
        ("rg-use-url_for", "bash-grep", "Which Python files use url_for?", True, "rg url_for", {"files": c.users("url_for")}),
        ("rg-use-get_debug_flag-src", "bash-grep", "Which package modules use get_debug_flag?", True, "rg -n get_debug_flag src/",
         {"files": c.users("get_debug_flag", "src")}),
        ("grep-def-Config", "bash-grep", "Where is Config defined?", True, "grep -rn \"class Config\" src/", at("Config", "src", "class")),
        ("grep-use-SECRET_KEY", "bash-grep", "Which Python files use SECRET_KEY?", True, "grep -rn SECRET_KEY --include=*.py .",
         {"files": c.users("SECRET_KEY")}),
        ("gitgrep-use-session_transaction", "bash-grep", "Which Python files use session_transaction?", True, "git grep -n session_transaction",
         {"files": c.users("session_transaction")}),
        ("rg-files-Blueprint", "bash-grep", "Which Python files use Blueprint?", True, "rg -l Blueprint", {"files": c.users("Blueprint")}),
        ("rg-type-render_template", "bash-grep", "Which Python files use render_template?", True, "rg -t py render_template",
         {"files": c.users("render_template")}),
        ("rg-word-app_context", "bash-grep", "Which package modules use app_context?", True, "rg -w app_context src",
         {"files": c.users("app_context", "src")}),
        ("grep-def-find_best_app", "bash-grep", "Where is find_best_app defined?", True, "grep -rn \"def find_best_app\" src/flask",
         at("find_best_app")),
        ("rg-def-FlaskClient", "bash-grep", "Which file defines FlaskClient?", True, "rg \"class FlaskClient\"",
         {"files": files_of(c.definitions("FlaskClient", kind="class"))}),
        ("gitgrep-def-test_client", "bash-grep", "Where is test_client defined?", True, "git grep -n \"def test_client\"", at("test_client", "src")),
        ("grep-use-with_appcontext", "bash-grep", "Which Python files use with_appcontext?", True, "grep -rn with_appcontext .",
         {"files": c.users("with_appcontext")}),
        ("rg-head-url_for", "bash-grep", "Where is url_for (first hits)?", True, "rg -n 'def url_for' | head -5", at("url_for")),
        ("rg-type-ensure_sync", "bash-grep", "Which Python files use ensure_sync?", True, "rg --type py -n ensure_sync", {"files": c.users("ensure_sync")}),
        ("grep-word-has_level_handler", "bash-grep", "Which package modules use has_level_handler?", True, "grep -rnw has_level_handler src",
         {"files": c.users("has_level_handler", "src")}),
        ("rg-ignorecase-jsonify", "bash-grep", "Which Python files use jsonify?", True, "rg -i -l jsonify", {"files": c.users("jsonify")}),
        ("grep-include-def-make_response", "bash-grep", "Where is make_response defined?", True,
         "grep -rn 'def make_response' src --include=*.py", at("make_response")),
        ("rg-onefile-get_namespace", "bash-grep-other", "Where in config.py is get_namespace?", False, "rg -n 'def get_namespace' src/flask/config.py",
         {"def_at": [c.def_at("src/flask/config.py", "get_namespace")]}),
        ("rg-regex-errors", "bash-grep-other", "Which error classes exist?", False, "rg -n 'class \\w+Error'", {"text": ["class"]}),
        ("rg-todo", "bash-grep-other", "Are there TODO notes?", False, "rg -n TODO", {"files": c.matching(r"TODO", "", (".py",))}),
        ("grep-docs-url_for", "bash-grep-other", "Which docs mention url_for?", False, "grep -rln url_for docs/", {"files": c.matching(r"url_for", "docs")}),
        ("rg-count-sort", "bash-grep-other", "Which modules define the most functions?", False, "rg -c 'def ' src | sort -t: -k2 -nr",
         {"files": ["src/flask/app.py"]}),
        ("rg-wc", "bash-grep-other", "How many lines mention url_for?", False, "rg url_for | wc -l", {"text": ["186"]}),
        ("grep-pyproject", "bash-grep-other", "What does pyproject say about flask?", False, "grep -n flask pyproject.toml", {"text": ["flask"]}),
        ("rg-toml-glob", "bash-grep-other", "Which toml files mention pytest?", False, "rg -l pytest --glob '*.toml'", {"files": ["pyproject.toml"]}),
        ("rg-files", "bash-other", "List the package's files", False, "rg --files src | head -20", {"text": ["src/flask/"]}),
        ("cd-and-rg", "bash-grep", "Which package modules use url_for (from src)?", True, "cd src && rg -n url_for",
         {"files": ["flask/helpers.py"]}),
        ("cat-app", "bash-cat", "What does app.py define?", True, "cat src/flask/app.py", {"defines": "src/flask/app.py"}),
        ("cat-helpers", "bash-cat", "What does helpers.py define?", True, "cat src/flask/helpers.py", {"defines": "src/flask/helpers.py"}),
        ("cat-scaffold", "bash-cat", "What does scaffold.py define?", True, "cat src/flask/sansio/scaffold.py", {"defines": "src/flask/sansio/scaffold.py"}),
        ("cat-config", "bash-cat", "What does config.py define?", True, "cat src/flask/config.py", {"defines": "src/flask/config.py"}),
        ("cat-n-cli", "bash-cat", "What does cli.py define?", True, "cat -n src/flask/cli.py", {"defines": "src/flask/cli.py"}),
        ("cat-views", "bash-cat-other", "What is in views.py?", False, "cat src/flask/views.py", {"lines": ["src/flask/views.py", 1, len(c.lines("src/flask/views.py"))]}),
        ("cat-pyproject", "bash-cat-other", "What is in pyproject.toml?", False, "cat pyproject.toml", {"text": ["[project]"]}),
        ("cat-readme", "bash-cat-other", "What does the README say?", False, "cat README.md", {"text": ["Flask"]}),
        ("find-testing", "bash-find", "Where is testing.py?", True, "find . -name testing.py", {"files": ["src/flask/testing.py"]}),
        ("find-app-src", "bash-find", "Where is app.py under src?", True, "find src -name \"app.py\"", {"files": ["src/flask/app.py", "src/flask/sansio/app.py"]}),
        ("find-conftest", "bash-find", "Where is conftest.py?", True, "find . -type f -name conftest.py",
         {"files": [f for f in c.files if f.endswith("conftest.py")]}),
        ("find-count-py", "bash-find-other", "How many Python files?", False, "find . -name \"*.py\" | wc -l", {"text": [str(len(c.py()))]}),
        ("find-rst", "bash-find-other", "Which docs files are there?", False, "find docs -name \"*.rst\"", {"files": ["docs/index.rst"]}),
        ("find-pyproject", "bash-find-other", "Where is pyproject.toml?", False, "find . -iname pyproject.toml", {"files": ["pyproject.toml"]}),
        ("ls-package", "bash-other", "What is in the package?", False, "ls src/flask", {"text": ["app.py"]}),
        ("ls-la", "bash-other", "What is at the top level?", False, "ls -la", {"text": ["pyproject.toml"]}),
        ("git-log", "bash-other", "What are the latest commits?", False, "git log --oneline | head -5", {"text": ["flask 3.0.3 sdist"]}),
        ("wc-package", "bash-other", "How long are the modules?", False, "wc -l src/flask/*.py", {"text": ["src/flask/app.py"]}),
        ("head-app", "bash-other", "The top of app.py", False, "head -50 src/flask/app.py", {"lines": ["src/flask/app.py", 1, 50]}),
        ("sed-app", "bash-other", "app.py lines 100-150", False, "sed -n 100,150p src/flask/app.py", {"lines": ["src/flask/app.py", 100, 150]}),
        ("git-status", "bash-other", "Is the tree clean?", False, "git status --short && echo clean", {"text": ["clean"]}),
        ("git-show-stat", "bash-other", "What did the last commit touch?", False, "git show --stat HEAD | tail -3", {"text": ["changed"]}),
    ]
    for key, kind, question, lookup, command, answer in bash:
        add(f"bash-{key}", kind, question, lookup, "Bash", {"command": command, "description": question}, answer)

    for call in calls:
        print(json.dumps(call, ensure_ascii=False))
    print(f"{len(calls)} calls, {sum(c['code_lookup'] for c in calls)} code lookups", file=sys.stderr)


if __name__ == "__main__":
    main()
