"""Commands never import each other (docs/ARCHITECTURE.md): what two sub-commands share lives in
`commands/_args.py` (their flags) or in the module that owns it (console.py, probeset_io.py,
github/), so a command can change without another one changing under it.

Checked statically on the source, lazy imports inside functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.paths import REPO

COMMANDS = REPO / "src" / "evalgate" / "commands"
SHARED = "_args"  # the one module of commands/ the others may import
MODULES = sorted(p for p in COMMANDS.glob("*.py") if p.name != "__init__.py")


def command_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a module of evalgate.commands other than `_args`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: `from . import run`, `from .run import x`
                base = "evalgate.commands" + (f".{node.module}" if node.module else "")
            else:
                base = node.module or ""
            if base == "evalgate":  # `from evalgate import commands`
                names = [f"evalgate.{alias.name}" for alias in node.names]
            elif base == "evalgate.commands":
                names = [f"evalgate.commands.{alias.name}" for alias in node.names]
            else:
                names = [base]
        else:
            continue
        for name in names:
            if name == "evalgate.commands" or (
                name.startswith("evalgate.commands.") and name.split(".")[2] != SHARED
            ):
                found.append((node.lineno, name))
    return found


def test_there_are_commands_to_check():
    assert len(MODULES) >= 10 and (COMMANDS / f"{SHARED}.py") in MODULES


def test_a_command_imports_no_other_command():
    offences = [
        f"commands/{path.name} imports {', '.join(f'{m} (line {n})' for n, m in bad)}"
        for path in MODULES
        if (bad := command_imports(path))
    ]
    assert not offences, (
        "\n".join(offences) + f"\nmove what they share to commands/{SHARED}.py (flags) or to the "
        "module that owns it"
    )


def test_the_check_catches_every_spelling(tmp_path: Path):
    source = tmp_path / "x.py"
    source.write_text(
        "import evalgate.commands.run\n"
        "from evalgate.commands import validate\n"
        "from evalgate.commands.probes_import import read_set\n"
        "from . import compare\n"
        "from .merge import x\n"
        "from evalgate import commands\n"
        "from evalgate.commands._args import cli_path\n"
        "from evalgate.commands import _args\n"
        "def f():\n"
        "    from evalgate.commands.comment import post_report\n",
        encoding="utf-8",
    )
    assert [n for n, _ in command_imports(source)] == [1, 2, 3, 4, 5, 6, 10]


def test_every_command_takes_the_console():
    """cli.main chooses the console once and calls `main(args, console)` of every command."""
    offences = []
    for path in (p for p in MODULES if p.name != f"{SHARED}.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
        if not mains:
            offences.append(f"commands/{path.name} has no main()")
        elif [a.arg for a in mains[0].args.args] != ["args", "console"]:
            offences.append(f"commands/{path.name}: main({', '.join(a.arg for a in mains[0].args.args)})")
    assert not offences, "\n".join(offences)
