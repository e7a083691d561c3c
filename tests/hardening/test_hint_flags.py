"""Item 12: hints name only flags the command has. Every ``--flag`` written
in an error's message or hint (or a warning) is parsed out of the source and
checked against the options of each command whose code raises it; a
``shardpy CMD … --flag`` anywhere is checked against CMD."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

from tests.shardkit import REPO_ROOT, Cli, make_shard

PACKAGE = REPO_ROOT / "shardpy"
WRITERS = ("install", "update", "adopt")
# Whose code a module is: its hints may only name those commands' flags.
OWNERS: list[tuple[str, tuple[str, ...]]] = [
    ("flows/install.py", ("install",)),
    ("flows/update.py", ("update",)),
    ("plan/update.py", ("update",)),
    ("flows/adopt.py", ("adopt",)),
    ("flows/discover.py", ("adopt",)),
    ("plan/adopt.py", ("adopt",)),
    ("importers/", ("import",)),
    ("cli/import_", ("import",)),
    ("flows/choices.py", WRITERS),
    ("flows/hookflow.py", WRITERS),
    ("flows/source.py", WRITERS),
    ("shard/", WRITERS),
    ("sources/", WRITERS),
]
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")
CALLS = {"ShardpyError", "UsageError", "Skipped", "warnings.append"}
HINT_NAMES = {"hint", "message", "why"}  # variables that become an error's text
NAMED = re.compile(r"\b(install|update|adopt|import|status)\b[^.;`]*$")


def options() -> dict[str, set[str]]:
    import typer.main

    from shardpy.cli.commands import app

    group = typer.main.get_command(app)
    out: dict[str, set[str]] = {}
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        out[name] = {"--help", *(opt for p in command.params for opt in (*p.opts, *p.secondary_opts))}
    return out


def _texts(node: ast.AST) -> list[str]:
    """The literal text of a string or f-string argument."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [
            "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        ]
    if isinstance(node, ast.BinOp):
        return _texts(node.left) + _texts(node.right)
    if isinstance(node, ast.IfExp):
        return _texts(node.body) + _texts(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [t for v in node.values for t in _texts(v)]
    return []


def hint_texts(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in HINT_NAMES for t in node.targets
        ):
            out.extend((node.lineno, t) for t in _texts(node.value))
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if name in CALLS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    out.extend((node.lineno, t) for t in _texts(arg))
    return out


def owners(rel: str) -> tuple[str, ...]:
    return next((cmds for prefix, cmds in OWNERS if rel.startswith(prefix)), ())


def flag_problems(rel: str, line: int, text: str, opts: dict[str, set[str]]) -> list[str]:
    """A flag after a command's name ("`shardpy update --yes`", "`install --defaults`")
    belongs to that command; any other belongs to the module's owners."""
    found = []
    for match in FLAG.finditer(text):
        flag = match.group(1)
        named = NAMED.search(text[: match.start()])
        for cmd in (named.group(1),) if named else owners(rel):
            if flag not in opts[cmd]:
                found.append(f"{rel}:{line}: {flag} is not an option of {cmd}: {text!r}")
        if not any(flag in o for o in opts.values()):
            found.append(f"{rel}:{line}: no command has {flag}")
    return found


def problems() -> list[str]:
    opts = options()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, text in hint_texts(path):
            # pip's and git's own flags (`pip install --force-reinstall`, `git merge --abort`)
            if "pip " not in text and "`git " not in text:
                found += flag_problems(rel, line, text, opts)
    return found


def test_the_parser_sees_hints() -> None:
    texts = [t for _, t in hint_texts(PACKAGE / "flows/choices.py")]
    assert any("--defaults" in t or "no terminal" in t for t in texts)


def test_every_hint_names_only_flags_its_command_has() -> None:
    found = problems()
    assert not found, "\n".join(found)


def test_update_asks_for_a_new_value_with_its_own_flags(tmp_path: Path, cli: Cli) -> None:
    src = make_shard(tmp_path / "src", files={"a.md": "a\n"})
    cli.install_json(src, tmp_path / "vault", "--defaults")
    shutil.rmtree(src)
    schema = {"values": {"name": {"type": "string", "default": "x", "message": "Name"}}}
    make_shard(src, files={"a.md": "a\n"}, manifest={"version": "1.1.0"}, schema=schema)
    res = cli.run("update", "--json", cwd=tmp_path / "vault")
    err = res.json()["error"]
    assert err["code"] == "VALUES_MISSING"
    assert "--yes" in err["hint"] and "--defaults" not in err["hint"] and "--values" not in err["hint"]
