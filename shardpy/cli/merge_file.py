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
HELP = f"""{USAGE}

Three-way merge of one note or file, as the git merge driver that
`shardpy git setup` registers (git runs it; you rarely call it by hand).

arguments:
  BASE      the common ancestor's version
  OURS      your version (with --driver, replaced by the result)
  THEIRS    the other side's version
  PATH      the file's path in the vault, for messages and the merge rules

options:
  --driver  write the result over OURS, as git expects of %A; without it the
            result goes to standard output
  -h, --help  show this message

Frontmatter is merged key by key, the body line by line; what cannot be merged
gets git-style conflict markers in the text (never inside YAML or JSON).
Exit 0 clean, 1 conflicts left, 2 bad usage. See docs/GIT.md.
"""


def _parse(argv: list[str]) -> tuple[bool, list[str]] | None:
    driver = "--driver" in argv
    rest = [a for a in argv if a != "--driver"]
    if len(rest) not in (3, 4) or any(a.startswith("-") and a != "-" for a in rest):
        return None
    return driver, rest


def main(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        print(HELP, end="")
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
