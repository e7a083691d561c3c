"""A clone of a shard holds its templates, not their rendered files.

Adopting a clone, ``.mcp.json.njk`` in the vault is the clone's form of the
shard's ``.mcp.json``: the planners see it as what it renders to with the
adopting user's answers, the rendered file is written, and the raw template
(shard content, not a user note) is removed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.flows.source import Prepared
from shardpy.plan.update import FileAction
from shardpy.shard.produce import Production


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _reader(data: bytes) -> Callable[[str], bytes]:
    return lambda _path: data


def clone_templates(
    prep: Prepared,
    vault: Path,
    production: Production,
    answers: tuple[dict[str, Any], dict[str, str], str],
) -> tuple[dict[str, bytes], dict[str, str]]:
    """(output path → what the clone's template renders to, output path → that template's path)
    for outputs the vault holds only as their raw template. ``answers``: values, modules and
    the install date the production was rendered with."""
    overlay: dict[str, bytes] = {}
    sources: dict[str, str] = {}
    by_source = {f.path: f for f in prep.shard.files if f.template and f.iterator is None}
    for path, out in production.outputs.items():
        src = by_source.get(out.source)
        if src is None or src.output != path or os.path.lexists(vault / path):
            continue
        if not _regular_file(vault / src.path):
            continue
        raw = (vault / src.path).read_bytes()
        try:
            rendered = prep.render(*answers, files=[src], read=_reader(raw))
        except ShardpyError:
            continue  # the clone's template no longer renders: it stays a user file
        if path in rendered.outputs:
            overlay[path] = rendered.outputs[path].data
            sources[path] = src.path
    return overlay, sources


def template_ops(actions: list[FileAction], overlay: dict[str, bytes], sources: dict[str, str]) -> list[Op]:
    """Write the rendered file where the plan keeps "the clone's version", and remove the raw template."""
    ops: list[Op] = []
    for action in actions:
        if action.path not in sources:
            continue
        if action.outcome.write is None and not action.outcome.delete:
            ops.append(Op.write(action.path, overlay[action.path]))
        ops.append(Op.delete(sources[action.path]))
    return ops
