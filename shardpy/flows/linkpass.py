"""After planning: rewrite wikilinks to notes a migration renamed, in the
files the plan writes or keeps and in every other note of the vault."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from shardpy.plan.update import FileAction, Outcome
from shardpy.vault.files import vault_files
from shardpy.vault.links import LinkRenames


def rewrite_links(vault: Path, actions: list[FileAction], renames: dict[str, str], tracked: set[str]) -> None:
    links = LinkRenames.from_moves(renames)
    if not links:
        return
    for action in actions:
        if not action.path.endswith(".md") or action.outcome.delete:
            continue
        outcome = action.outcome
        if outcome.write is not None:
            data = outcome.write
        elif (vault / action.path).is_file() and outcome.record is not None:
            data = (vault / action.path).read_bytes()
        else:
            continue
        text, count = _rewrite_bytes(links, data)
        if count:
            action.outcomes[action.choice] = replace(outcome, write=text)
            action.links_rewritten = count
    moving = {a.from_path for a in actions if a.from_path}
    for path in sorted(vault_files(vault, suffix=".md")):
        if path in tracked or path in moving:
            continue
        data = (vault / path).read_bytes()
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
            actions.append(fa)


def _rewrite_bytes(links: LinkRenames, data: bytes) -> tuple[bytes, int]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data, 0
    new, count = links.rewrite(text)
    return new.encode("utf-8"), count
