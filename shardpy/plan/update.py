"""Update planning (CONTRACT §9): for every path the old or the new shard
produces, decide what happens, from three versions of the file —

* base: what the shard rendered last time (cached templates + recorded values),
* shard: what the new shard renders with the current values,
* user: the bytes on disk.

Pure: disk facts come in through :class:`DiskView`, so the planner can be
tested with in-memory inputs. Where the user may choose (a conflict, a
modified file the shard removed, a deselected module's files) the action
carries every outcome, already computed, and the default choice; the flow
asks, or takes the default under ``--yes``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from shardpy.fsutil import sha256_bytes
from shardpy.merge.document import DocumentMerge, merge_document
from shardpy.plan.actions import ActionKind
from shardpy.plan.records import record_for
from shardpy.shard.produce import Output
from shardpy.vault.manifest import ContentRules
from shardpy.vault.state import FileRecord

OnConflict = Literal["keep", "theirs", "markers"]
ConflictStyle = Literal["merge", "diff3"]


def _as_written(disk_hash: str, data: bytes, known: tuple[str | None, ...]) -> tuple[str, bool]:
    """(the hash to decide by, CRLF): the hash of the bytes shardpy wrote when ``data`` is those
    bytes with CRLF line ends (git's ``core.autocrlf``, an editor's setting: notes/written.lf_form).
    Such a file is unedited, so it takes the shard's new version as an unedited file does, in its
    own line ends (tests/hardening/test_autocrlf.py, test_repersonalise.py)."""
    if not data or disk_hash in known:
        return disk_hash, False
    from shardpy.notes.written import lf_form

    lf = lf_form(data)
    as_written = sha256_bytes(lf) if lf is not None else None
    if as_written is None or as_written not in known:
        return disk_hash, False
    return as_written, True


def _crlf(data: bytes) -> bytes:
    """LF ``data`` written with CRLF line ends (a file that has a CR already is left as it is)."""
    return data if b"\r" in data else data.replace(b"\n", b"\r\n")


class DiskView(Protocol):
    """Every fact about the vault's files that planning may use. The flow builds
    one (``flows.vaultdisk.VaultDisk``) while resolving; planning reads nothing else."""

    def hash(self, path: str) -> str | None: ...

    def read(self, path: str) -> bytes: ...

    def stored(self, path: str) -> bytes | None:
        """The bytes the vault holds at ``path`` (a file, or a link to one), never an
        overlay's stand-in; None when there is no such file."""
        ...

    def exists(self, path: str) -> bool:
        """Something is at ``path`` (following links)."""
        ...

    def files_under(self, folder: str) -> list[str]:
        """Regular files (links never followed) below a real folder, vault-relative;
        empty when ``folder`` is not a folder or is a link."""
        ...

    def notes(self) -> list[str]:
        """The vault's Markdown files (``vault.files.vault_files``, suffix ``.md``)."""
        ...


@dataclass(frozen=True)
class Outcome:
    label: str
    write: bytes | None = None  # bytes to write at the action's path
    delete: bool = False  # remove the file at the action's path
    record: FileRecord | None = None  # tracked afterwards (None: not tracked / a user file)
    pin_base: bytes | None = None  # keep this as the file's merge base (conflict skipped)


@dataclass
class FileAction:
    path: str
    action: ActionKind
    reason: str
    content_class: str
    module: str | None
    outcomes: dict[str, Outcome]
    choice: str
    from_path: str | None = None  # moved here from this path by a file migration
    merge: DocumentMerge | None = None
    question: str | None = None
    group: str | None = None  # actions answered together (a deselected module)
    links_rewritten: int = 0

    @property
    def outcome(self) -> Outcome:
        return self.outcomes[self.choice]

    @property
    def conflict_left(self) -> bool:
        """A conflict this run did not resolve with the shard's side or an edit (kept
        yours, markers written, skipped): update and adopt both exit 3 for it."""
        return self.action == "conflict" and self.choice not in ("theirs", "edit")

    @property
    def target(self) -> str:
        """The path, under the name every plan's entry has (``plan.actions.PlannedAction``)."""
        return self.path

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "action": self.action,
            "outcome": self.outcome.label,
            "choice": self.choice,
            "reason": self.reason,
            "class": self.content_class,
            "module": self.module,
        }
        if self.from_path:
            out["from"] = self.from_path
        stats = self.stats()
        if stats is not None:
            out["merge"] = stats
        if self.merge is not None and self.merge.frontmatter_conflicts:
            out["frontmatter_conflicts"] = [c.key for c in self.merge.frontmatter_conflicts]
        if self.links_rewritten:
            out["links_rewritten"] = self.links_rewritten
        return out

    def stats(self) -> dict[str, int] | None:
        if self.merge is None or self.merge.is_binary:
            return None
        s = self.merge.stats
        return {
            "unchanged": s.unchanged,
            "auto_merged": s.auto_merged,
            "conflicted": s.conflicted,
            "both_added": s.both_added,
        }


@dataclass(frozen=True)
class UpdateInputs:
    old: Mapping[str, FileRecord]
    outputs: Mapping[str, Output]
    disk: DiskView
    base: Callable[[str], bytes | None]  # base bytes of an old path
    content: ContentRules
    shard_label: str
    renames: Mapping[str, str] = field(default_factory=dict)  # old path → new path
    deselected: frozenset[str] = frozenset()
    on_conflict: OnConflict = "keep"
    style: ConflictStyle = "merge"
    restore_missing: bool = False
    # True when the shard's template for an old path is byte-identical to the
    # one that rendered it last time: a changed render then comes from the
    # user's own values alone (tests/hardening/test_repersonalise.py).
    same_template: Callable[[str, Output], bool] = lambda old_path, out: False


class _Planner:
    def __init__(self, inp: UpdateInputs) -> None:
        self.inp = inp
        self.actions: list[FileAction] = []

    # -- helpers ---------------------------------------------------------------

    def act(
        self,
        path: str,
        action: ActionKind,
        reason: str,
        out: Output | None,
        rec: FileRecord | None,
        outcomes: dict[str, Outcome],
        choice: str = "apply",
        *,
        from_path: str | None = None,
        merge: DocumentMerge | None = None,
        question: str | None = None,
        group: str | None = None,
    ) -> FileAction:
        module = out.module if out is not None else rec.module if rec is not None else None
        cls = (
            self.inp.content.classify(path)
            if out is not None
            else (rec.content_class if rec else "infrastructure")
        )
        fa = FileAction(
            path, action, reason, cls, module, outcomes, choice, from_path, merge, question, group
        )
        self.actions.append(fa)
        return fa

    # -- cases -----------------------------------------------------------------

    def added(self, path: str, out: Output) -> None:
        disk = self.inp.disk.hash(path)
        rec = record_for(out, self.inp.content)
        if disk is None:
            self.act(
                path,
                "add",
                "new in the shard",
                out,
                None,
                {"apply": Outcome("add", write=out.data, record=rec)},
            )
        elif disk == out.sha256:
            self.act(
                path,
                "unchanged",
                "already present with the shard's bytes",
                out,
                None,
                {"apply": Outcome("track", record=rec)},
            )
        else:
            mine = replace(rec, ownership="modified")
            self.act(
                path,
                "keep",
                "new in the shard, but a file of yours is already here: kept yours (tracked as modified)",
                out,
                None,
                {"apply": Outcome("keep yours", record=mine)},
            )

    def removed(self, path: str, rec: FileRecord) -> None:
        disk = self.inp.disk.hash(path)
        gone = rec.module is not None and rec.module in self.inp.deselected
        why = f"module {rec.module} deselected" if gone else "removed from the shard"
        if disk is None:
            self.act(path, "gone", f"{why}; already absent", None, rec, {"apply": Outcome("forget")})
            return
        if rec.volatile:
            self.act(
                path,
                "orphan",
                f"{why}; volatile, kept as your file",
                None,
                rec,
                {"apply": Outcome("keep as your file")},
            )
            return
        managed = rec.holds(disk)
        if "user_content" in (rec.content_class, self.inp.content.classify(path)):
            self.act(
                path,
                "orphan",
                f"{why}; under a user-content root, kept as your file",
                None,
                rec,
                {"apply": Outcome("keep as your file")},
            )
            return
        delete = Outcome("delete", delete=True)
        keep = Outcome("keep as your file")
        if managed and gone:
            self.act(
                path,
                "delete",
                f"{why}; unmodified",
                None,
                rec,
                {"delete": delete, "keep": keep},
                choice="delete",
                question=f"Module '{rec.module}' was deselected: delete its unmodified files, "
                "or keep them as your files?",
                group=f"module:{rec.module}",
            )
        elif managed:
            self.act(path, "delete", f"{why}; unmodified", None, rec, {"apply": delete})
        else:
            self.act(
                path,
                "orphan",
                f"{why}; you changed it: kept as your file",
                None,
                rec,
                {"keep": keep, "delete": delete},
                choice="keep",
                question=f"{path}: gone from the shard, but you changed it. "
                "Keep it as your file, or delete it?",
            )

    def both(self, path: str, rec: FileRecord, out: Output, old_path: str) -> None:
        inp = self.inp
        moved = old_path != path
        disk_hash = inp.disk.hash(old_path)
        moved_from = old_path if moved else None
        managed = record_for(out, inp.content)
        if disk_hash is None:
            if inp.restore_missing:
                self.act(
                    path,
                    "restore",
                    "you deleted it; restored (--restore-missing)",
                    out,
                    rec,
                    {"apply": Outcome("restore", write=out.data, record=managed)},
                    from_path=moved_from,
                )
            else:
                self.act(
                    path,
                    "missing",
                    "you deleted it; left deleted (use --restore-missing)",
                    out,
                    rec,
                    {"apply": Outcome("stay deleted", record=managed)},
                    from_path=moved_from,
                )
            return
        user = inp.disk.read(old_path) if moved or disk_hash != out.sha256 else b""
        carry = user if moved else None  # a moved file is rewritten at its new path
        disk_hash, crlf = _as_written(disk_hash, user, (out.sha256, rec.rendered_hash, rec.installed_hash))
        if rec.volatile or out.volatile:
            rec_v = replace(managed, ownership="volatile", volatile=True)
            self.act(
                path,
                "volatile",
                "volatile: never rewritten",
                out,
                rec,
                {"apply": Outcome("keep", write=carry, record=rec_v)},
                from_path=moved_from,
            )
            return
        if disk_hash == out.sha256:
            self.act(
                path,
                "unchanged",
                "up to date" if not moved else "moved",
                out,
                rec,
                {"apply": Outcome("keep", write=carry if moved else None, record=managed)},
                from_path=moved_from,
            )
            return
        upstream_changed = out.sha256 != rec.rendered_hash
        by_hook = rec.installed_hash is not None and disk_hash == rec.installed_hash
        if disk_hash == rec.rendered_hash:
            taken = _crlf(out.data) if crlf else out.data
            self.act(
                path,
                "update",
                "shard changed it; you did not",
                out,
                rec,
                {"apply": Outcome("take the shard's", write=taken, record=managed)},
                from_path=moved_from,
            )
            return
        mine = replace(
            managed,
            ownership="managed" if by_hook else "modified",
            installed_hash=disk_hash if by_hook else None,
        )
        if not upstream_changed:
            why = (
                "personalised by a hook; the shard did not change it"
                if by_hook
                else "you changed it; the shard did not"
            )
            self.act(
                path,
                "keep",
                why,
                out,
                rec,
                {"apply": Outcome("keep yours", write=carry, record=mine)},
                from_path=moved_from,
            )
            return
        if inp.content.classify(path) == "user_content" and inp.same_template(old_path, out):
            self.merge_values(path, rec, out, old_path, user, mine)
            return
        if inp.content.classify(path) == "user_content":
            self.act(
                path,
                "keep",
                "user content you changed: never overwritten (the shard's new version was not applied)",
                out,
                rec,
                {"apply": Outcome("keep yours", write=carry, record=mine)},
                from_path=moved_from,
            )
            return
        self.merge(path, rec, out, old_path, user, mine, managed, by_hook)

    def merge_values(
        self, path: str, rec: FileRecord, out: Output, old_path: str, user: bytes, mine: FileRecord
    ) -> None:
        """User content the user changed, whose template the shard did not
        change: only the user's values did. The new values are merged in when
        every line the user wrote survives (a clean merge); otherwise the file
        is kept as it is — never theirs, never markers (CONTRACT §5)."""
        moved_from = old_path if old_path != path else None
        carry = user if moved_from else None
        base = self.inp.base(old_path)
        label = self.inp.shard_label
        result = None if base is None else merge_document(base, user, out.data, shard_label=label)
        if result is None or result.is_binary or result.kind != "clean":
            why = "user content you changed: your edits and the new values touch the same lines; kept yours"
            self.act(path, "keep", why, out, rec, {"apply": Outcome("keep yours", write=carry, record=mine)})
            return
        hooked = mine.installed_hash is not None  # bytes a hook wrote, not the user
        record = replace(
            mine,
            ownership="managed" if result.data == out.data or hooked else "modified",
            installed_hash=sha256_bytes(result.data) if hooked else None,
        )
        write = result.data if (result.data != user or moved_from) else None
        self.act(
            path,
            "merge",
            "user content you changed: merged the new values in, your edits kept",
            out,
            rec,
            {"apply": Outcome("merge", write=write, record=record)},
            merge=result,
            from_path=moved_from,
        )

    def merge(
        self,
        path: str,
        rec: FileRecord,
        out: Output,
        old_path: str,
        user: bytes,
        mine: FileRecord,
        managed: FileRecord,
        by_hook: bool,
    ) -> None:
        inp = self.inp
        moved_from = old_path if old_path != path else None
        base = inp.base(old_path)
        keep_write = user if old_path != path else None
        keep = Outcome("keep yours", write=keep_write, record=mine)
        theirs = Outcome("take the shard's", write=out.data, record=managed)
        if out.link or rec.link:
            # A link's text is never merged line by line (tests/hardening/test_copier_links.py).
            self.act(
                path,
                "conflict",
                "symbolic link changed on both sides: never merged",
                out,
                rec,
                {"keep": keep, "theirs": theirs},
                choice="theirs" if inp.on_conflict == "theirs" else "keep",
                question=f"{path} is a symbolic link and both you and the shard changed it.",
                from_path=moved_from,
            )
            return
        skip = Outcome(
            "skip (decide next update)",
            write=keep_write,
            record=replace(mine, rendered_hash=rec.rendered_hash),
            pin_base=base,
        )
        if base is None:
            self.act(
                path,
                "conflict",
                "no merge base for this file: cannot merge; choose a side",
                out,
                rec,
                {"keep": keep, "theirs": theirs},
                choice="theirs" if inp.on_conflict == "theirs" else "keep",
                question=f"{path}: both you and the shard changed it and there is no merge base.",
                from_path=moved_from,
            )
            return
        result = merge_document(base, user, out.data, shard_label=inp.shard_label, style=inp.style)
        if result.is_binary:
            self.act(
                path,
                "conflict",
                "binary file changed on both sides: never text-merged",
                out,
                rec,
                {"keep": keep, "theirs": theirs, "skip": skip},
                choice="theirs" if inp.on_conflict == "theirs" else "keep",
                merge=result,
                question=f"{path} is binary and changed on both sides.",
                from_path=moved_from,
            )
            return
        merged_record = replace(
            mine,
            ownership="managed" if result.data == out.data or by_hook else "modified",
            installed_hash=sha256_bytes(result.data) if by_hook else None,
        )
        write = result.data if (result.data != user or old_path != path) else None
        if result.kind == "clean":
            why = "merged your edits with the shard's"
            if result.frontmatter_conflicts:
                keys = ", ".join(c.key for c in result.frontmatter_conflicts)
                why += f"; frontmatter keys changed on both sides kept your value: {keys}"
            self.act(
                path,
                "merge",
                why,
                out,
                rec,
                {"apply": Outcome("merge", write=write, record=merged_record)},
                merge=result,
                from_path=moved_from,
            )
            return
        markers = Outcome(
            "write conflict markers",
            write=result.data,
            record=replace(merged_record, ownership="modified", installed_hash=None),
        )
        self.act(
            path,
            "conflict",
            f"you and the shard changed the same lines "
            f"({result.stats.conflicted} line(s) in {len(result.conflicts)} region(s))",
            out,
            rec,
            {"keep": keep, "theirs": theirs, "markers": markers, "skip": skip},
            choice=inp.on_conflict,
            merge=result,
            question=f"{path}: you and the shard changed the same lines.",
            from_path=moved_from,
        )


def plan_update(inp: UpdateInputs) -> list[FileAction]:
    planner = _Planner(inp)
    moved_to = {new: old for old, new in inp.renames.items() if old in inp.old}
    handled_old: set[str] = set()
    for path in sorted(set(inp.outputs) | set(inp.old)):
        out = inp.outputs.get(path)
        if out is not None:
            old_path = path if path in inp.old else moved_to.get(path)
            if (
                old_path is not None
                and old_path != path
                and inp.disk.hash(path) is not None
                and path not in inp.old
            ):
                old_path = None  # the new location is taken by a file of the user's: no move
            if old_path is None:
                planner.added(path, out)
            else:
                handled_old.add(old_path)
                planner.both(path, inp.old[old_path], out, old_path)
    for path, rec in sorted(inp.old.items()):
        if path not in handled_old:
            planner.removed(path, rec)
        elif path not in inp.outputs:
            # Moved by a migration: the move empties the old location.
            present = inp.disk.hash(path) is not None
            planner.act(
                path,
                "moved",
                f"moved to {inp.renames[path]}",
                None,
                rec,
                {"apply": Outcome("move away", delete=present)},
            )
    return planner.actions
