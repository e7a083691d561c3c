"""After planning: wikilinks to notes a migration renamed are rewritten, in
the files the plan writes or keeps and in every other note of the vault.
Pure: the vault is seen through the planner's
:class:`~shardpy.plan.update.DiskView`; the result is a new list."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from shardpy.plan.update import DiskView, FileAction, Outcome
from shardpy.vault.links import LinkRenames


def rewrite_links(
    disk: DiskView, actions: list[FileAction], renames: dict[str, str], tracked: Collection[str]
) -> list[FileAction]:
    """``actions`` with links to renamed notes rewritten, plus a ``links``
    action for each untracked note that links to one."""
    links = LinkRenames.from_moves(renames)
    if not links:
        return actions
    out = [_rewritten(disk, links, action) for action in actions]
    moving = {a.from_path for a in actions if a.from_path}
    for path in sorted(disk.notes()):
        if path in tracked or path in moving:
            continue
        data = disk.stored(path)
        if data is None:
            continue  # gone since the vault was listed
        text, count = _rewrite_bytes(links, data)
        if count:
            fa = FileAction(
                path,
                "links",
                "links to renamed notes rewritten",
                "user_content",
                None,
                {"apply": Outcome("rewrite links", write=text)},
                "apply",
            )
            fa.links_rewritten = count
            out.append(fa)
    return out


def _rewritten(disk: DiskView, links: LinkRenames, action: FileAction) -> FileAction:
    """One planned action with the links in the bytes it leaves at its path rewritten."""
    outcome = action.outcome
    if not action.path.endswith(".md") or outcome.delete:
        return action
    data = outcome.write
    if data is None and outcome.record is not None:
        data = disk.stored(action.path)  # kept as it is on disk
    if data is None:
        return action
    text, count = _rewrite_bytes(links, data)
    if not count:
        return action
    outcomes = {**action.outcomes, action.choice: replace(outcome, write=text)}
    return replace(action, outcomes=outcomes, links_rewritten=count)


def _rewrite_bytes(links: LinkRenames, data: bytes) -> tuple[bytes, int]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, 0
    new, count = links.rewrite(text)
    return new.encode("utf-8"), count
