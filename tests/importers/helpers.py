from __future__ import annotations

from pathlib import Path
from typing import Any

from shardpy.flows.importflow import Outcome, merge_function, run_import
from shardpy.importers.models import Adapter
from shardpy.importers.planner import build_plan
from shardpy.plan.importplan import NoteRow, Plan, PlanOptions, StepWrite
from shardpy.vault.ledger import Ledger


def do_import(fmt: str, source: Path, vault: Path, *, apply: bool = False, **kw: Any) -> Outcome:
    kw.setdefault("into", None)
    kw.setdefault("keep_resolved_links", True)
    return run_import(fmt=fmt, source=source, vault=vault, apply=apply, **kw)


def rows(plan: Plan) -> dict[str, NoteRow]:
    return {r.source_path: r for r in plan.notes}


def read(vault: Path, rel: str) -> str:
    return (vault / rel).read_bytes().decode("utf-8")


def planned(
    adapter: Adapter, vault: Path, opts: PlanOptions, *, apply: bool
) -> tuple[dict[str, Any], list[StepWrite]]:
    """The plan (as ``--json`` prints it) and, for a plan made for ``--apply``, its steps with their
    bytes as the apply stage makes them (``Plan.writes``) before it journals them."""
    ledger = Ledger.open_readonly(vault)
    try:
        plan = build_plan(
            adapter, vault=vault, ledger=ledger, opts=opts, merge=merge_function(), for_apply=apply
        )
        steps = [] if plan.writes is None else list(plan.writes(None))
    finally:
        ledger.close()
    return plan.to_dict(), steps
