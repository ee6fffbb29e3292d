"""The pure packages import no torch, no network, no files, no environment (docs/ARCHITECTURE.md).

Checked statically on the source, every module of every subfolder, so a lazy import inside a
function is caught too, and a new subfolder cannot slip past the check. Imports under
`if TYPE_CHECKING:` never run and are left out.

The rule is built to be sound rather than to list every I/O function:

- the modules that reach files, processes, the environment or the interpreter's own streams are
  not imported at all (`os`, `sys`, `io`, `builtins`, `importlib`, `pathlib`, ...), whatever the
  spelling (`import os`, `from os import environ`, `from evalgate import edges`, `from .. import
  edges`); of `pathlib` only the pure path classes, of `io` only the in-memory buffers;
- the builtins that do I/O or import by name (`open`, `print`, `input`, `__import__`, `exec`,
  `eval`, `breakpoint`) are not called, nor even named;
- the method names of file I/O (`Path.read_text`, `.unlink`, `np.load`, `pd.read_csv`, ...) are not
  called on anything, nor fetched with `getattr`; `replace` is left out, since `str.replace` and
  `dataclasses.replace` are everywhere, and `Path.replace` cannot be reached without a `Path`.

What a pure module legitimately needs beyond that is listed in `ALLOWED`, by file, with its reason;
an entry no longer needed fails, so the list cannot grow stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from helpers.paths import REPO

SRC = REPO / "src" / "evalgate"
PURE_PACKAGES = ("schemas", "probeset", "scoring", "gate", "report", "synth")
PURE_MODULES = [
    *sorted(p for pkg in PURE_PACKAGES for p in (SRC / pkg).rglob("*.py")),
    SRC / "types.py",
    SRC / "errors.py",
    SRC / "release.py",
]

FORBIDDEN_MODULES = {
    # the model and the network
    "torch",
    "transformers",
    "safetensors",
    "tokenizers",
    "huggingface_hub",
    "urllib",
    "urllib3",
    "http",
    "httpx",
    "requests",
    "socket",
    "ssl",
    "asyncio",
    "select",
    "selectors",
    "webbrowser",
    # files, processes, the environment, the interpreter
    "os",
    "sys",
    "io",
    "builtins",
    "importlib",
    "pathlib",
    "glob",
    "fileinput",
    "shutil",
    "tempfile",
    "subprocess",
    "multiprocessing",
    "signal",
    "ctypes",
    "mmap",
    "pickle",
    "shelve",
    "dbm",
    "sqlite3",
    "zipfile",
    "tarfile",
    "logging",
    "matplotlib",
    # the edges of evalgate itself
    "evalgate.edges",
    "evalgate.scorers",
    "evalgate.github",
    "evalgate.console",
    "evalgate.progress",
    "evalgate.probeset_io",
    "evalgate.pipeline",
    "evalgate.commands",
    "evalgate.cli",
}
# The parts of a forbidden module that do no I/O: the pure path classes and the in-memory buffers.
HARMLESS = {
    "pathlib.PurePath",
    "pathlib.PurePosixPath",
    "pathlib.PureWindowsPath",
    "io.StringIO",
    "io.BytesIO",
}
FORBIDDEN_NAMES = {"open", "print", "input", "__import__", "exec", "eval", "breakpoint"}
FORBIDDEN_METHODS = {
    # pathlib.Path, os.DirEntry, importlib.resources.Traversable
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "unlink",
    "mkdir",
    "rmdir",
    "rename",
    "touch",
    "iterdir",
    "glob",
    "rglob",
    "walk",
    "exists",
    "is_file",
    "is_dir",
    "is_symlink",
    "stat",
    "lstat",
    "chmod",
    "lchmod",
    "readlink",
    "symlink_to",
    "hardlink_to",
    "samefile",
    "resolve",
    "expanduser",
    "absolute",
    "cwd",
    "home",
    "owner",
    "group_name",
    # numpy and pandas, which the gate and the reports use for arithmetic and tables only
    "load",
    "loadtxt",
    "genfromtxt",
    "fromfile",
    "tofile",
    "save",
    "savez",
    "savetxt",
    "memmap",
    "read_csv",
    "read_json",
    "read_table",
    "read_parquet",
    "read_pickle",
    "read_excel",
    "to_pickle",
    "to_parquet",
    "to_excel",
}
# `DataFrame.to_csv()` returns the text; given a path or a buffer (`to_csv(p)`, `path_or_buf=`), it writes.
WRITES_WITH_A_TARGET = {"to_csv", "to_json", "to_markdown", "to_html", "to_string"}

# file (relative to src/evalgate) -> {name: why this pure module may use it}
ALLOWED: dict[str, dict[str, str]] = {
    "schemas/__init__.py": {
        "importlib.resources": "reads the JSON Schemas shipped as package data, not a user's file",
        "read_text": "the package-data file of a schema, through importlib.resources",
    },
}


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`), which never run."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _forbidden(name: str, allowed: dict[str, str]) -> bool:
    if name in HARMLESS or name in allowed:
        return False
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN_MODULES)


def violations(source: str, package: str, allowed: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """(line, what) for every use of I/O in `source`, a module of the dotted `package`."""
    allowed = allowed or {}
    tree = ast.parse(source)
    skipped = _type_checking_nodes(tree)
    nodes = [n for n in ast.walk(tree) if id(n) not in skipped]
    found: list[tuple[int, str]] = []
    bound: dict[str, str] = {}  # local name -> module, for `import io`, `import pathlib as p`
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                bound[alias.asname or top] = alias.name if alias.asname else top
                # `import io` may be fine if only io.StringIO is used: judged at each use below
                if alias.name not in {h.split(".")[0] for h in HARMLESS} and _forbidden(alias.name, allowed):
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                name = f"{base}.{alias.name}" if base else alias.name
                if _forbidden(name, allowed):
                    found.append((node.lineno, f"from {base} import {alias.name}"))
    attribute_values = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            name = f"{bound[node.value.id]}.{node.attr}"
            if _forbidden(name, allowed):
                found.append((node.lineno, name))
        elif isinstance(node, ast.Name):
            if node.id in FORBIDDEN_NAMES and node.id not in allowed:
                found.append((node.lineno, node.id))
            elif id(node) not in attribute_values and _forbidden(bound.get(node.id, ""), allowed):
                found.append((node.lineno, f"{bound[node.id]} (the module itself)"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            if method in FORBIDDEN_METHODS and method not in allowed:
                found.append((node.lineno, f".{method}()"))
            elif method in WRITES_WITH_A_TARGET and (
                node.args or any(k.arg in ("path_or_buf", "buf") for k in node.keywords)
            ):
                found.append((node.lineno, f".{method}(<target>)"))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in FORBIDDEN_METHODS | FORBIDDEN_NAMES
            and node.args[1].value not in allowed
        ):
            found.append((node.lineno, f"getattr(..., {node.args[1].value!r})"))
    return sorted(set(found))


def _package(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts if path.name == "__init__.py" else parts[:-1]).removesuffix(".__init__")


def test_every_pure_package_is_checked():
    # A package listed but missing (renamed, moved) would make the parametrised test vacuous.
    for pkg in PURE_PACKAGES:
        assert list((SRC / pkg).rglob("*.py")), f"{pkg}/ holds no module: rename PURE_PACKAGES too"


def io_offences() -> list[str]:
    """One line per pure module that does I/O, naming every use and its line."""
    out = []
    for path in PURE_MODULES:
        rel = path.relative_to(SRC).as_posix()
        bad = violations(path.read_text(encoding="utf-8"), _package(path), ALLOWED.get(rel))
        if bad:
            out.append(f"{rel} uses {', '.join(f'{what} (line {n})' for n, what in bad)}")
    return out


def test_pure_modules_do_no_io():
    offences = io_offences()
    assert not offences, "I/O belongs in edges/, github/ or scorers/ (docs/ARCHITECTURE.md):\n" + "\n".join(
        offences
    )


def stale_allowances() -> list[str]:
    out = []
    for rel in sorted(ALLOWED):
        path = SRC / rel
        if path not in PURE_MODULES:
            out.append(f"{rel} is no pure module: drop it from ALLOWED")
            continue
        for name in ALLOWED[rel]:
            rest = {k: v for k, v in ALLOWED[rel].items() if k != name}
            if not violations(path.read_text(encoding="utf-8"), _package(path), rest):
                out.append(f"{rel} no longer uses {name}: drop it from ALLOWED")
    return out


def test_every_allowance_is_still_needed():
    stale = stale_allowances()
    assert not stale, "\n".join(stale)


SPELLINGS = {
    "Path(p).read_text()": "from pathlib import Path\ndef f(p):\n    return Path(p).read_text()\n",
    ".write_text()": "def f(p):\n    p.write_text('x')\n",
    ".read_bytes()": "def f(p):\n    return p.read_bytes()\n",
    ".unlink()": "def f(p):\n    p.unlink()\n",
    ".exists()": "def f(p):\n    return p.exists()\n",
    ".open()": "def f(p):\n    return p.open()\n",
    "pathlib.Path(p).unlink": "import pathlib\npathlib.Path('x').unlink()\n",
    "pathlib.Path": "import pathlib as pl\nP = pl.Path\n",
    "io.open": "import io\nio.open('x')\n",
    "io passed around": "import io\nm = io\n",
    "from io import open": "from io import open as o\n",
    "builtins.open": "import builtins\nbuiltins.open('x')\n",
    "from builtins import open": "from builtins import open as o\n",
    "open()": "open('x')\n",
    "print()": "print('x')\n",
    "os.remove": "import os\nos.remove('x')\n",
    "from os import environ": "from os import environ\n",
    "from os import getenv": "from os import getenv\n",
    "from os import path": "from os import path\n",
    "os.environ lazily": "def f():\n    import os\n    return os.environ['HOME']\n",
    "sys.stdout": "import sys\nsys.stdout.write('x')\n",
    "from sys import argv": "from sys import argv\n",
    "importlib.import_module": "import importlib\nimportlib.import_module('torch')\n",
    "from importlib import import_module": "from importlib import import_module\n",
    "__import__": "__import__('socket')\n",
    "__import__ fetched": "f = __import__\n",
    "eval": "eval('1')\n",
    "exec": "exec('1')\n",
    "getattr read_text": "def f(p):\n    return getattr(p, 'read_text')()\n",
    "import torch lazily": "def f():\n    import torch\n",
    "from torch import nn": "from torch import nn\n",
    "import urllib.request": "import urllib.request\n",
    "from evalgate import edges": "from evalgate import edges\n",
    "from evalgate.edges.files import x": "from evalgate.edges.files import write_atomic\n",
    "relative edges": "from .. import edges\n",
    "relative github": "from ..github import rest\n",
    "np.load": "import numpy as np\nnp.load('x.npy')\n",
    "pd.read_csv": "import pandas as pd\npd.read_csv('x.csv')\n",
    "to_csv(path)": "def f(df):\n    df.to_csv('x.csv')\n",
    "to_csv(path_or_buf=)": "def f(df):\n    df.to_csv(path_or_buf='x.csv')\n",
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_check_catches_every_spelling(spelling: str):
    # The check itself must be able to fail: each of these is I/O written another way.
    assert violations(SPELLINGS[spelling], "evalgate.gate"), f"{spelling} slipped past the check"


def test_the_check_passes_what_is_pure():
    source = (
        "from __future__ import annotations\n"
        "import dataclasses, io, re\n"
        "from pathlib import PurePosixPath\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pathlib import Path\n"
        "    from evalgate.config import GateRules\n"
        "from . import stats\n"
        "from evalgate.types import Finding\n"
        "def f(s: str, d, df, m):\n"
        "    buf = io.StringIO(s.replace('a', 'b'))\n"
        "    d = dataclasses.replace(d, x=1)\n"
        "    name = PurePosixPath(s).name\n"
        "    text = df.to_csv(index=False)\n"
        "    return m.group(1), buf.getvalue(), name, text, getattr(d, 'kind', None)\n"
    )
    assert violations(source, "evalgate.gate") == []
