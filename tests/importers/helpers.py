from __future__ import annotations

from pathlib import Path
from typing import Any

from shardpy.flows.importflow import Outcome, run_import
from shardpy.importers.models import NoteRow, Plan


def do_import(fmt: str, source: Path, vault: Path, *, apply: bool = False, **kw: Any) -> Outcome:
    kw.setdefault("into", None)
    kw.setdefault("keep_resolved_links", True)
    return run_import(fmt=fmt, source=source, vault=vault, apply=apply, **kw)


def rows(plan: Plan) -> dict[str, NoteRow]:
    return {r.source_path: r for r in plan.notes}


def read(vault: Path, rel: str) -> str:
    return (vault / rel).read_bytes().decode("utf-8")
