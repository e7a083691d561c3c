"""The ``git setup`` plan: what makes a vault's repository merge with shardpy (issue 27).

Pure over a :class:`SetupView` (``gitsync/setup.py`` builds one over the repository): the git
config keys the driver needs, shardpy's block in ``.gitattributes`` and ``.gitignore``, and the
machine-local records git still tracks. Planning reads only through the view and writes
nothing; ``gitsync/setup.py`` applies the plan in the write session (config, then the files'
transaction, undoing the config when it fails; then the index).
"""

from __future__ import annotations

import shlex
from enum import Enum

from shardpy.gitsync.repo import DRIVER_KEY, DRIVER_NAME, NAME_KEY
from shardpy.record import Record, field
from shardpy.vault import layout

BEGIN = "# shardpy:begin (written by `shardpy git setup`; lines inside are replaced when it runs)"
END = "# shardpy:end"
DRIVER_TITLE = "shardpy: notes by frontmatter key, vault records by entry"

ATTRIBUTES = [
    f"*.md merge={DRIVER_NAME}",
    f"/{layout.VALUES_FILE} merge={DRIVER_NAME}",
    f"/{layout.SIDECAR}/** merge={DRIVER_NAME}",
    f"/{layout.SIDECAR}/imports/ledger.sqlite3 merge={DRIVER_NAME} -text -diff",
]
# Machine-local: never shared, so never a conflict.
LOCAL = [
    layout.UPDATE_CHECK,
    layout.LOCAL,
    layout.JOURNAL,
    layout.VAULT_ID,  # names this copy: journals bind to it (issue 30; tests/sync/test_sync.py)
    layout.BACKUPS + "/",
    f"{layout.SIDECAR}/imports/*/",
    f"{layout.SIDECAR}/imports/*.sqlite3-journal",
]
IGNORES = [f"/{p}" for p in LOCAL] + [".shardpy-tmp-*", ".shardpy-ledger-*"]

# A setup file's word in the one vocabulary (plan/actions.py): made, or its block replaced.
TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any, Literal, Protocol

    SetupFileAction = Literal["create", "update"]

    class SetupView(Protocol):
        """Every fact about the repository that planning may use."""

        def config(self, key: str) -> str | None:
            """The key's one local value (None: unset, or several)."""
            ...

        def text(self, path: str) -> str | None:
            """The vault file at ``path`` as text (None: no file)."""
            ...

        def tracked_local(self) -> list[str]:
            """Machine-local records (:data:`LOCAL`) git tracks in the vault."""
            ...


class ChangeKind(Enum):
    CONFIG = "config"
    FILE = "file"
    UNTRACK = "untrack"


class Change(Record, frozen=True):
    """One change `git setup` makes, as shown."""

    kind: ChangeKind
    target: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind.value, "target": self.target, "detail": self.detail}


class ConfigChange(Record, frozen=True):
    """One key `git setup` sets in the repository's config."""

    key: str
    value: str
    old: str | None  # what the key held when planned: put back when the files' transaction fails


class SetupFile(Record, frozen=True):
    """One file setup writes: a planned action (``plan.actions.PlannedAction``)."""

    path: str
    action: SetupFileAction
    data: bytes

    @property
    def target(self) -> str:
        return self.path


class SetupPlan(Record):
    """What `git setup` would change (pure: nothing written)."""

    vault: str
    repository: str  # the work tree's top folder
    config: list[ConfigChange] = field(default_factory=list)
    files: list[SetupFile] = field(default_factory=list)
    untrack: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "vault": self.vault,
            "repository": self.repository,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "changes": [c.to_json() for c in self.changes],
        }


def with_block(text: str | None, lines: list[str]) -> str:
    """``text`` with shardpy's block set to ``lines`` (replaced in place, else appended), in the
    file's own line ends: a CRLF .gitignore was rewritten LF in every line, the user's lines
    included (tests/gitsync/test_setup.py)."""
    from shardpy.notes.written import Written

    read = Written.read(text) if text else None
    if read is not None:
        return read[1].write(_with_block(read[0], lines))
    return _with_block(text, lines)  # none yet, or mixed line ends: LF for the block's own lines


def _with_block(text: str | None, lines: list[str]) -> str:
    block = "\n".join([BEGIN, *lines, END]) + "\n"
    if not text:
        return block
    rows = text.splitlines(keepends=True)
    starts = [i for i, r in enumerate(rows) if r.rstrip("\r\n") == BEGIN]
    ends = [i for i, r in enumerate(rows) if r.rstrip("\r\n") == END]
    if starts and ends and ends[-1] > starts[0]:
        return "".join(rows[: starts[0]]) + block + "".join(rows[ends[-1] + 1 :])
    sep = "" if text.endswith("\n") else "\n"
    return text + sep + "\n" + block


def _plan_file(plan: SetupPlan, view: SetupView, name: str, lines: list[str]) -> None:
    current = view.text(name)
    wanted = with_block(current, lines)
    if wanted != current:
        data = wanted.encode("utf-8", "surrogateescape")  # bytes that are not UTF-8 kept as they are
        plan.files.append(SetupFile(name, "create" if current is None else "update", data))
        verb = "created" if current is None else "updated shardpy's block in"
        plan.changes.append(Change(ChangeKind.FILE, name, f"{verb} {name}"))


def plan_setup(
    view: SetupView, *, vault: str, repository: str, driver: str, dry_run: bool = False
) -> SetupPlan:
    """What ``git setup`` changes, ``driver`` being the command to register (the caller chose
    it: choosing may run the interpreter once, ``gitsync.setup.wanted_driver``)."""
    plan = SetupPlan(vault=vault, repository=repository, dry_run=dry_run)
    for key, value in ((NAME_KEY, DRIVER_TITLE), (DRIVER_KEY, driver)):
        current = view.config(key)
        if current != value:
            plan.config.append(ConfigChange(key, value, current))
            plan.changes.append(Change(ChangeKind.CONFIG, key, f"git config {key} {shlex.quote(value)}"))
    _plan_file(plan, view, ".gitattributes", ATTRIBUTES)
    _plan_file(plan, view, ".gitignore", IGNORES)
    plan.untrack = view.tracked_local()
    for path in plan.untrack:
        plan.changes.append(
            Change(ChangeKind.UNTRACK, path, f"stopped tracking {path} (machine-local; kept on disk)")
        )
    return plan
