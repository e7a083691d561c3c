"""`shardpy adopt SOURCE` of a project made by `copier copy`.

The answers file says where the project came from (``_src_path``) and at
which commit (``_commit``): that commit rendered with those answers *is*
the merge base. Adopt only records it (state and cached base in
``.shardmind/``; no project file is written), so the next `shardpy update`
merges the template's newer version into the user's edits from there.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING

from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.flows.adoptapply import apply_adopt
from shardpy.flows.vaultdisk import VaultDisk
from shardpy.flows.vaultfiles import cache_ops, new_state, now_iso, state_op
from shardpy.plan.adopt import plan_with_base
from shardpy.sources import ProgressFn, SourceSpec
from shardpy.sources.copier import read_answers_file, user_answers
from shardpy.sources.spec import is_git_repository
from shardpy.ui import UI
from shardpy.vault.files import user_files
from shardpy.versions import is_version

if TYPE_CHECKING:
    from shardpy.flows.adopt import AdoptOptions, AdoptResult
    from shardpy.flows.copierprep import CopierPrepared
    from shardpy.flows.source import Prepare

_PINNED = re.compile(r"[@#][^/@#]+$")
_DESCRIBED = re.compile(r"^.+-\d+-g([0-9a-f]{4,40})$")


def adopt_copier(
    latest: CopierPrepared,
    opts: AdoptOptions,
    ui: UI,
    vault: Path,
    result: AdoptResult,
    *,
    progress: ProgressFn | None,
    prepare: Prepare,
) -> AdoptResult:
    """``prepare``: the resolver (``flows/resolve.prepared``), handed in so this flow never
    imports it (no import cycle through the copier adapter; tests/test_no_cycles.py)."""
    latest.setup(vault, "adopt", trust=opts.trust)
    relpath = latest.template.answers_relpath({}, vault.name)
    raw = read_answers_file(vault, relpath)
    if raw is None:
        raise ShardpyError(
            "COPIER_ADOPT_NO_ANSWERS",
            f"{relpath} is missing or unreadable: this does not look like a project made by copier",
            "Adopt a project made by `copier copy` (it has the answers file), or `shardpy install` afresh.",
            path=relpath,
        )
    commit = raw.get("_commit")
    spec = _at_commit(latest.spec, str(commit) if commit is not None else None)
    if spec is latest.spec:
        return _record(latest, raw, opts, ui, vault, result)
    with prepare(spec, progress=progress) as base:
        if not isinstance(base, type(latest)):
            raise ShardpyError(
                "COPIER_ADOPT_NO_TEMPLATE",
                f"{latest.spec.display()} at {commit} is not a copier template",
                "Check _src_path and _commit in the answers file.",
            )
        base.setup(vault, "adopt", trust=opts.trust)
        return _record(base, raw, opts, ui, vault, result)


def _typed_version(spec: SourceSpec) -> bool:
    """The user named a version or ref (``SRC@v2``, ``SRC#main``); a checkout
    named bare gets its HEAD's version from the source layer, which must not
    outrank the answers file's ``_commit``."""
    return bool(_PINNED.search(spec.raw))


def _at_commit(spec: SourceSpec, commit: str | None) -> SourceSpec:
    """The source at the recorded commit (a tag, or `git describe` output).
    A local git checkout counts as git here: copier rendered one of its commits."""
    if commit is not None and spec.kind == "local" and is_git_repository(Path(spec.location)):
        spec = dataclasses.replace(spec, kind="git")
    if commit is None or spec.kind not in ("git", "github") or _typed_version(spec):
        return spec
    described = _DESCRIBED.match(commit)
    if described:
        return spec.with_version(None, described.group(1))
    if is_version(commit.lstrip("vV")):
        return spec.with_version(commit, None)
    return spec.with_version(None, commit)


def _record(
    prep: CopierPrepared,
    raw: dict[str, object],
    opts: AdoptOptions,
    ui: UI,
    vault: Path,
    result: AdoptResult,
) -> AdoptResult:
    """Render the base, compare it with the project, and record it."""
    values = prep.collect(
        values_file=opts.values_file, data=opts.data, last=user_answers(raw), use_defaults=True, ui=ui
    )
    install_date = now_iso()
    production = prep.render(values, {}, install_date)
    base = {p: o.data for p, o in production.outputs.items()}
    disk = VaultDisk(vault, set(base))
    actions = plan_with_base(
        production.outputs,
        base,
        disk,
        prep.shard.content,
        shard_label=f"template {prep.version}",
        renames={},
        on_conflict="keep",
    )
    result.version = prep.version
    result.detected = prep.template.commit
    result.mode = "copier"
    result.actions = actions
    result.left_alone = sum(1 for _ in user_files(vault, {a.path for a in actions}))
    if opts.dry_run:
        return result
    files = {a.path: a.outcome.record for a in actions if a.outcome.record is not None}
    state = new_state(prep, prep.values_to_record(values), {}, install_date, files)
    state.ref = None  # the next update goes to the newest release, not back to this commit
    ops: list[Op] = [*cache_ops(prep.shard, set(files)), state_op(state)]
    apply_adopt(vault, ops, ui)
    return result
