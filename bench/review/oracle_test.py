"""Checks of the oracle's rules on a small repository it builds in a temporary directory.

    python3 bench/review/oracle_test.py
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

BASE = {
    "pkg/a.py": '''import typing


@typing.overload
def f(x: int) -> int: ...
@typing.overload
def f(x: str) -> str: ...
def f(x):
    return x


def g(a, b=1):
    def inner():
        return 1
    return inner()


class C(Base):
    """Doc."""
    attr = 1

    @property
    def p(self):
        return self._p

    @p.setter
    def p(self, value):
        self._p = value

    class Inner:
        def m(self):
            return 1

    if TYPE_CHECKING:
        def typed(self) -> int: ...


async def h():
    pass


def blank():
    x = 1
    return x
''',
    "pkg/moved.py": '''def kept():
    return 1


def edited():
    return 1
''',
    "pkg/broken.py": "def ok():\n    return 1\n",
    "pkg/crlf.py": "def a():\r\n    return 1\r\n\x0c\r\ndef b():\r\n    return 2\r\n",
    "pkg/gone.py": "class Gone:\n    def m(self):\n        pass\n",
    "pkg/stay.py": "def s():\n    return 1\n",
}

FEATURE = {
    "pkg/a.py": '''import typing


@typing.overload
def f(x: int) -> int: ...
@typing.overload
def f(x: bytes) -> bytes: ...
def f(x):
    return x


def g(a, b=1):
    def inner():
        return 2
    return inner()


class C(Base):
    """Doc."""
    attr = 1
    # a comment of the class's own

    @property
    def p(self):
        return self._p

    @p.setter
    def p(self, value):
        self._p = value + 0

    class Inner:
        def m(self):
            return 1

        def n(self):
            return 2

    if TYPE_CHECKING:
        def typed(self) -> str: ...


def h():
    pass


def blank():
    x = 1

    return x
''',
    "pkg/renamed.py": '''def kept():
    return 1


def edited():
    return 2


def fresh():
    pass
''',
    "pkg/broken.py": "def ok(:\n",
    "pkg/crlf.py": "def a():\r\n    return 1\r\n\x0c\r\ndef b():\r\n    return 3\r\n",
    "pkg/new.py": "class New(Base, metaclass=M):\n    pass\n",
    "pkg/stay.py": "def s():\n    return 1\n",
}

EXPECTED = {
    ("pkg/a.py", "f", "signature"),  # the second overload: its parameter's type
    ("pkg/a.py", "g", "body"),  # a nested function's change is its enclosing function's
    ("pkg/a.py", "C", "body"),  # a comment among its own lines
    ("pkg/a.py", "C.p", "body"),  # the setter, paired second
    ("pkg/a.py", "C.Inner.n", "added"),
    ("pkg/a.py", "C.typed", "signature"),  # a method under `if`
    ("pkg/a.py", "h", "signature"),  # no longer async
    ("pkg/a.py", "blank", "body"),  # a blank line inside a function is part of its text
    ("pkg/renamed.py", "edited", "body"),
    ("pkg/renamed.py", "fresh", "added"),
    ("pkg/crlf.py", "b", "body"),  # CRLF and a form feed: lines as `ast` numbers them
    ("pkg/gone.py", "Gone", "removed"),
    ("pkg/gone.py", "Gone.m", "removed"),
    ("pkg/new.py", "New", "added"),
}


def run(cwd: str, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t.invalid", GIT_AUTHOR_DATE="2024-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2024-01-01T00:00:00Z")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def write(root: str, files: dict) -> None:
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w", newline="") as out:
            out.write(text)


def main() -> int:
    passed = failed = 0

    def check(what: str, ok: bool, detail: str = "") -> None:
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}: {detail}")

    with tempfile.TemporaryDirectory() as root:
        run(root, "init", "-q", "-b", "main")
        write(root, BASE)
        run(root, "add", "-A")
        run(root, "commit", "-q", "-m", "base")
        run(root, "checkout", "-q", "-b", "feature")
        for path in list(BASE):
            os.remove(os.path.join(root, path))
        write(root, FEATURE)
        run(root, "add", "-A")
        run(root, "commit", "-q", "-m", "feature")
        run(root, "checkout", "-q", "main")
        write(root, {"pkg/gone.py": "class Gone:\n    def m(self):\n        return 1\n"})
        write(root, {"pkg/stay.py": "def s():\n    return 2\n", "pkg/main_only.py": "def m():\n    pass\n"})
        run(root, "add", "-A")
        run(root, "commit", "-q", "-m", "main moves on")

        for cache in (False, True, True):
            old, new = oracle.sides(root, "main...feature")
            result = oracle.changed_symbols(root, old, new, cache=cache)
            got = {(item["path"], item["name"], item["change"]) for item in result["changed"]}
            check(f"main...feature symbols (cache {cache})", got == EXPECTED,
                  f"missing {sorted(EXPECTED - got)}, extra {sorted(got - EXPECTED)}")
        check("the merge base is the old side", old == run(root, "rev-parse", "main~1").strip())
        check("unparsed", [(u["path"], u["side"]) for u in result["unparsed"]] == [("pkg/broken.py", "new")],
              str(result["unparsed"]))
        check("renamed file paired", any(item.get("old_path") == "pkg/moved.py" for item in result["changed"]))
        check("files", sorted(result["files"]) == sorted(
            ["pkg/a.py", "pkg/renamed.py", "pkg/broken.py", "pkg/crlf.py", "pkg/gone.py", "pkg/new.py"]),
            str(result["files"]))
        old, new = oracle.sides(root, "main..feature")
        two_dot = {(i["path"], i["name"], i["change"]) for i in oracle.changed_symbols(root, old, new)["changed"]}
        check("two dots see main's change", ("pkg/stay.py", "s", "body") in two_dot
              and old == run(root, "rev-parse", "main").strip())
        old, new = oracle.sides(root, "main...main")
        check("an empty range", oracle.changed_symbols(root, old, new)["changed"] == [])
        here = os.path.dirname(os.path.abspath(__file__))
        three = subprocess.run([sys.executable, os.path.join(here, "three_dot.py"), "--repo", root,
                                "--range", "main...feature"], capture_output=True, text=True, check=True).stdout
        import json
        forbidden = json.loads(three)["symbols"]
        # Gone.m changed on both sides (feature removed it): not forbidden; main_only.m is main's
        # addition, stay.s main's edit of a function feature left alone.
        check("three_dot: only main's changes", [(s["path"], s["name"], s["change"]) for s in forbidden]
              == [("pkg/main_only.py", "m", "added"), ("pkg/stay.py", "s", "body")], three)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
