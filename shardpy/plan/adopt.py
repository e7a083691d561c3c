"""Adopt planning (CONTRACT §11): which files of an existing clone become
managed, modified or replaced — pure, like the update planner it builds on.

With a detected base version the adopt *is* an update from that version:
each produced file gets a synthetic record carrying the base's hash, and
:func:`shardpy.plan.update.plan_update` decides (unchanged since the clone →
take the shard's; edited → three-way merge; deleted → left deleted). Without
a base, every differing file is decided by the mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from shardpy.fsutil import sha256_bytes
from shardpy.plan.actions import ActionKind
from shardpy.plan.records import record_for
from shardpy.plan.update import (
    DiskView,
    FileAction,
    OnConflict,
    Outcome,
    UpdateInputs,
    plan_update,
)
from shardpy.shard.produce import Output
from shardpy.vault.manifest import ContentRules
from shardpy.vault.state import FileRecord

Mode = Literal["keep-mine", "use-shard", "merge", "ask"]


@dataclass(frozen=True)
class Fingerprint:
    exists: tuple[str, ...]
    missing: tuple[str, ...]


def fingerprint_matches(fp: Fingerprint, present: Mapping[str, bool]) -> bool:
    return all(present.get(p, False) for p in fp.exists) and not any(
        present.get(p, False) for p in fp.missing
    )


def version_key_matches(key: str, version: str) -> bool:
    """`v3.1` names 3.1.x, `v6` names 6.x.y, `1.0.0` names exactly that."""
    wanted = key.strip().lstrip("vV").split(".")
    have = version.split("-")[0].split(".")
    return have[: len(wanted)] == wanted


def score(outputs: Mapping[str, bytes], disk: DiskView) -> int:
    """How many of a version's produced paths hold exactly its bytes on disk."""
    return sum(1 for path, data in outputs.items() if disk.hash(path) == sha256_bytes(data))


def best_match(scores: Mapping[str, int], order: list[str]) -> str | None:
    """The version with the most matching paths; ties go to the older (``order`` lists versions
    oldest first). From the older base a later release's change arrives as the shard's, merged
    with the user's edits; from the newer one it read as the user's revert and never arrived (a
    helper's probe, tests/adopt/test_detect_tie.py). A vault that was at the newer release loses
    nothing either way: both sides then made the same change."""
    best: str | None = None
    for version in order:
        if version in scores and (best is None or scores[version] > scores[best]):
            best = version
    return best if best is not None and scores[best] > 0 else None


def tied(scores: Mapping[str, int], best: str) -> list[str]:
    """The other versions that match as many paths as ``best``."""
    return [v for v, s in scores.items() if v != best and s == scores[best]]


def _without_base(
    path: str, out: Output, disk_hash: str | None, content: ContentRules, mode: Mode
) -> FileAction:
    managed = record_for(out, content)
    cls = content.classify(path)

    def act(
        action: ActionKind, reason: str, outcomes: dict[str, Outcome], choice: str = "apply"
    ) -> FileAction:
        question = f"{path} differs from the shard's version." if len(outcomes) > 1 else None
        return FileAction(path, action, reason, cls, out.module, outcomes, choice, question=question)

    if disk_hash is None:
        return act(
            "add",
            "not in your vault: installed",
            {"apply": Outcome("install", write=out.data, record=managed)},
        )
    if disk_hash == out.sha256:
        return act("unchanged", "identical to the shard's", {"apply": Outcome("track", record=managed)})
    if out.volatile:
        return act(
            "volatile",
            "volatile: your bytes recorded as they are",
            {"apply": Outcome("keep", record=managed)},
        )
    keep = Outcome("keep mine", record=replace(managed, ownership="modified"))
    if cls == "user_content":
        return act("keep", "user content that differs: never replaced", {"apply": keep})
    theirs = Outcome("use the shard's", write=out.data, record=managed)
    return act(
        "differs",
        "differs from the shard's",
        {"keep": keep, "theirs": theirs},
        "theirs" if mode == "use-shard" else "keep",
    )


def plan_without_base(
    outputs: Mapping[str, Output], disk: DiskView, content: ContentRules, mode: Mode
) -> list[FileAction]:
    """keep-mine / use-shard (and merge or ask with no base): decide by mode."""
    return [_without_base(p, out, disk.hash(p), content, mode) for p, out in sorted(outputs.items())]


def plan_with_base(
    outputs: Mapping[str, Output],
    base: Mapping[str, bytes],
    disk: DiskView,
    content: ContentRules,
    *,
    shard_label: str,
    renames: Mapping[str, str],
    on_conflict: OnConflict,
) -> list[FileAction]:
    """merge (and ask): an update from the detected base version."""
    targets = set(outputs)
    wanted = {p for p in base if p in targets or renames.get(p) in targets}
    old = {
        p: FileRecord(template=p, rendered_hash=sha256_bytes(base[p]), content_class=content.classify(p))
        for p in sorted(wanted)
    }
    inputs = UpdateInputs(
        old=old,
        outputs=outputs,
        disk=disk,
        base=lambda p: base.get(p),
        content=content,
        shard_label=shard_label,
        renames={a: b for a, b in renames.items() if a in old},
        on_conflict=on_conflict,
    )
    return plan_update(inputs)
