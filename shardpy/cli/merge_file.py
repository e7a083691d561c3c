"""``shardpy merge-file [--driver] BASE OURS THEIRS [PATH]``: the git merge driver's command.

git calls it once per file both sides changed, so it runs without Typer
(see :mod:`shardpy.cli.app`): the arguments are few and fixed.

* ``--driver`` (the form ``shardpy git setup`` registers): the result
  replaces OURS, as git expects of ``%A``;
* without it (by hand): the result goes to standard output.

Exit 0 when clean, 1 when conflicts remain (the result then holds
git-style markers in the text, never inside YAML or JSON), 2 for bad usage.
What needs attention is written to standard error.
"""

from __future__ import annotations

import sys
from pathlib import Path

USAGE = "usage: shardpy merge-file [--driver] BASE OURS THEIRS [PATH]"


def _parse(argv: list[str]) -> tuple[bool, list[str]] | None:
    driver = "--driver" in argv
    rest = [a for a in argv if a != "--driver"]
    if len(rest) not in (3, 4) or any(a.startswith("-") and a != "-" for a in rest):
        return None
    return driver, rest


def main(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        print(__doc__.split("\n\n", 1)[0] + "\n\n" + USAGE)
        return 0
    parsed = _parse(argv)
    if parsed is None:
        print(USAGE, file=sys.stderr)
        return 2
    driver, (base, ours, theirs, *path) = parsed
    from shardpy.cli.output import exit_code_of

    outcome: list[int] = [0]

    def run() -> None:
        from shardpy.gitsync.driver import merge_files

        result = merge_files(Path(base), Path(ours), Path(theirs), path[0] if path else None)
        shown = path[0] if path else ours
        for message in result.merge.messages:
            print(f"shardpy merge-file: {shown}: {message}", file=sys.stderr)
        if driver:
            result.install(Path(ours))
        else:
            sys.stdout.buffer.write(result.read())
            sys.stdout.flush()
            result.discard()
        outcome[0] = 0 if result.merge.clean else 1

    code = exit_code_of(run)
    return code or outcome[0]
