"""`shardpy status`: a read-only health report of a vault (CONTRACT §7).

It never touches the network; an unfinished transaction left by a killed
process is recovered first (the one write status may do), and a corrupt
state is reported, not raised.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.apply.session import recover_first
from shardpy.apply.transaction import RecoveryReport
from shardpy.errors import ShardpyError
from shardpy.flows.statuschecks import Checks, manifest_warnings
from shardpy.flows.statuschecks import checks as shard_checks
from shardpy.fsutil import read_regular
from shardpy.gitsync.report import GitReport, git_report
from shardpy.vault import layout
from shardpy.vault.files import user_files
from shardpy.vault.ownership import scan
from shardpy.vault.state import State, load_state, local_updated_at

StatusProgress = Callable[[int, int], None]
"""``(notes checked, notes in all)`` while verbose status reads every note."""
PROGRESS_EVERY = 500


@dataclass
class StatusReport:
    vault: Path | None
    state: State | None = None
    error: ShardpyError | None = None
    counts: dict[str, int] = field(default_factory=dict)
    by_class: dict[str, dict[str, int]] = field(default_factory=dict)
    modified: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    value_problems: list[str] = field(default_factory=list)
    update: dict[str, Any] | None = None
    recovery: RecoveryReport | None = None
    verbose: bool = False
    user_files: int | None = None
    frontmatter: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    updated_at: str | None = None  # this machine's last update (local.json), else the state's
    git: GitReport | None = None
    copier: dict[str, Any] | None = None  # a copier template's source, commit and answers
    conflicts: list[str] = field(default_factory=list)  # modified files still holding conflict markers
    interrupted_imports: list[str] = field(default_factory=list)  # run ids

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"vault": str(self.vault)}
            if self.vault is not None
            else {"vault": None, "message": "not inside a shardpy vault"}
        )
        if self.recovery is not None:  # also when it undid a first install: no vault is left
            out["recovered"] = self.recovery.__dict__
        if self.vault is None:
            return out
        if self.error is not None:
            out["error"] = self.error.to_dict()
            return out
        st = self.state
        assert st is not None
        out.update(
            shard=st.shard,
            version=st.version,
            source=st.source,
            source_kind=st.source_kind,
            ref=st.ref,
            resolved_commit=st.resolved_commit,
            installed_at=st.installed_at,
            updated_at=self.updated_at or st.updated_at,
            counts=self.counts,
            by_class=self.by_class,
            missing=self.missing,
            modified=self.modified,
            values_valid=not self.value_problems,
            value_problems=self.value_problems,
            modules=st.modules,
            update_available=self.update,
            warnings=self.warnings,
            unresolved_conflicts=self.conflicts,
            interrupted_imports=self.interrupted_imports,
        )
        if self.git is not None:
            out["git"] = self.git.to_json()
        if self.copier is not None:
            out["copier"] = self.copier
        if self.verbose:
            out.update(
                user_files=self.user_files,
                frontmatter_violations=self.frontmatter,
                environment=self.environment,
            )
        return out


def _count(report: StatusReport, vault: Path, state: State) -> None:
    drift = scan(vault, state.files)
    counts = {"managed": 0, "modified": 0, "volatile": 0, "missing": 0}
    by_class: dict[str, dict[str, int]] = {}
    for path, d in sorted(drift.items()):
        counts[d.live] += 1
        cls = state.files[path].content_class
        by_class.setdefault(cls, {"managed": 0, "modified": 0, "volatile": 0, "missing": 0})[d.live] += 1
        if d.unreadable:
            report.warnings.append(f"{path} cannot be read (check its permissions)")
            report.modified.append({"path": path, "class": cls, "unreadable": True})
        elif d.live == "modified":
            report.modified.append({"path": path, "class": cls})
        elif d.live == "missing":
            _missing(report, vault, path)
    report.counts = counts
    report.by_class = by_class


def _missing(report: StatusReport, vault: Path, path: str) -> None:
    report.missing.append(path)
    if (vault / path).is_dir() and not (vault / path).is_symlink():
        # Not gone: a folder took the managed file's place (tests/hardening/test_status_speaks.py).
        report.warnings.append(f"{path} is a folder now, where the shard has a file; update leaves it")


def _conflicts(report: StatusReport, vault: Path) -> None:
    """Modified files that still hold an update's (or an import's) conflict markers."""
    if not report.modified:
        return
    from shardpy.merge.text import has_conflict_markers

    for item in report.modified:
        try:
            data = read_regular(vault / item["path"])  # a FIFO there hung status
        except OSError:
            continue
        if has_conflict_markers(data):
            item["conflict"] = True
            report.conflicts.append(item["path"])


def _interrupted_imports(report: StatusReport, vault: Path) -> None:
    """Import runs that started and neither finished nor were abandoned."""
    runs = vault / layout.SIDECAR / "imports"
    try:
        if not any(entry.is_dir() for entry in os.scandir(runs)):
            return
    except OSError:
        return
    from shardpy.apply.batch import incomplete_runs

    report.interrupted_imports = [run for run, _state in incomplete_runs(vault)]


def _unchanged_values(vault: Path, state: State) -> bool:
    """True when shard-values.yaml holds exactly the values the engine
    validated when it last wrote them (their hash is in state), so plain
    status can say "valid" without loading the schema machinery (~100 ms)."""
    from shardpy.shard.yamlio import load_yaml_file, to_plain
    from shardpy.vault.state import values_hash

    if not state.values_hash or not (vault / layout.CACHED_SCHEMA).is_file():
        return False
    try:
        raw = load_yaml_file(
            vault / layout.VALUES_FILE,
            display=layout.VALUES_FILE,
            code="VALUES_FILE_INVALID",
            missing_code="VALUES_FILE_MISSING",
        )
    except ShardpyError:
        return False
    values = to_plain(raw) if raw is not None else {}
    return isinstance(values, dict) and values_hash(values) == state.values_hash


def _copier(vault: Path, state: State, warnings: list[str]) -> dict[str, Any]:
    """A copier project's template facts, from state (copier is not imported:
    status stays fast); its answers are the answers file's at the last render."""
    info = dict(state.copier or {})
    answers_file = str(info.get("answers_file") or ".copier-answers.yml")
    if not (vault / answers_file).is_file():
        warnings.append(f"{answers_file} is missing: `copier update` and `shardpy update` need it")
    return {**info, "answers_file": answers_file, "answers": state.values}


def _update_check(vault: Path) -> dict[str, Any] | None:
    from shardpy.flows.updatecheck import last_check

    return last_check(vault)


def _modified_line_stats(report: StatusReport, vault: Path, state: State) -> None:
    if not report.modified:
        return  # the renderer loads the shard's models (pydantic): only for a modified file
    from shardpy.flows.base import BaseRenderer

    renderer = BaseRenderer.from_vault(vault, state)
    for item in report.modified:
        path = item["path"]
        base = None if item.get("unreadable") else renderer.render(path)
        if base is None:
            continue
        try:
            now = read_regular(vault / path)
        except OSError:
            continue
        added, removed = _line_diff(base, now)
        item.update(added=added, removed=removed)


def _line_diff(old: bytes, new: bytes) -> tuple[int, int]:
    from shardpy.merge.document import diff_stats

    return diff_stats(old, new)


def _frontmatter(
    report: StatusReport, vault: Path, rules: Checks, notes: list[str], progress: StatusProgress | None
) -> None:
    """Notes missing the frontmatter keys the schema requires, in path order.

    Tens of thousands of notes are read here, so this stays lean: plain string
    paths, and each note's keys read without YAML when its block is simple.
    """
    from shardpy.notes.keycache import KeyCache
    from shardpy.shard.rules import KeyRules

    if rules.rules is None:
        return
    missing_from = KeyRules.of(rules.rules).missing_from
    cache = KeyCache(vault)  # issue 25: unchanged notes are not read again
    for i, (rel, keys) in enumerate(cache.keys(notes), 1):
        if progress is not None and i % PROGRESS_EVERY == 0:
            progress(i, len(notes))
        if keys is None:
            continue
        kind, missing = missing_from(rel, keys)
        if missing:
            report.frontmatter.setdefault(kind or "global", []).append({"path": rel, "missing": missing})
    cache.save()
    if progress is not None:
        progress(len(notes), len(notes))


def _start_tool(argv: list[str]) -> subprocess.Popen[str] | str:
    """``argv`` (a tool's ``--version``) started, or what to report when it cannot be."""
    if shutil.which(argv[0]) is None:
        return "not found"
    try:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _tool_version(started: subprocess.Popen[str] | str) -> str:
    """The first line(s) a tool started by :func:`_start_tool` printed (5 s at most)."""
    if isinstance(started, str):
        return started
    try:
        out, _ = started.communicate(timeout=5)
    except subprocess.SubprocessError:
        started.kill()
        started.communicate()
        return "unknown"
    return out.strip() or "unknown"


@contextmanager
def _tool_versions(argvs: dict[str, list[str]]) -> Iterator[Callable[[], dict[str, str]]]:
    """Start each tool's ``--version`` at once, to run beside the notes' check (node alone
    takes ~40 ms to start); the function given reads their answers."""
    started = {name: _start_tool(argv) for name, argv in argvs.items()}
    try:
        yield lambda: {name: _tool_version(proc) for name, proc in started.items()}
    finally:
        for proc in started.values():
            if not isinstance(proc, str) and proc.poll() is None:
                proc.kill()
                proc.communicate()


def status(start: Path, *, verbose: bool = False, progress: StatusProgress | None = None) -> StatusReport:
    vault = layout.find_vault_root(start)
    report = StatusReport(vault=vault, verbose=verbose)
    if vault is None:
        return report
    try:
        # Interrupted import runs are listed below, never refused on: status only reports.
        report.recovery = recover_first(vault, "status", imports="report")
    except ShardpyError as exc:
        report.error = exc
        return report
    if not layout.is_vault_root(vault):
        # The recovery undid a first write (an install or adopt killed before its state.json):
        # the folder is no vault again (tests/test_spine_session.py).
        report.vault = None
        return report
    try:
        state = load_state(vault)
    except ShardpyError as exc:
        report.error = exc
        return report
    report.state = state
    report.updated_at = local_updated_at(vault, state)
    report.git = git_report(vault)
    _count(report, vault, state)
    _conflicts(report, vault)
    _interrupted_imports(report, vault)
    if state.copier is not None:
        found = Checks(warnings=manifest_warnings(vault) if verbose else [])
        report.copier = _copier(vault, state, report.warnings)
    elif not verbose and _unchanged_values(vault, state):
        found = Checks()
    else:
        # issue 25: kept between runs (the schema's models cost more than a plain status)
        found = shard_checks(vault)
        report.value_problems.extend(found.problems)
    report.update = _update_check(vault)
    if verbose:
        with _tool_versions({"git": ["git", "--version"], "node": ["node", "--version"]}) as tools:
            _verbose(report, vault, state, found, progress)
            report.environment = {"python": platform.python_version(), **tools()}
    return report


def _verbose(
    report: StatusReport, vault: Path, state: State, found: Checks, progress: StatusProgress | None
) -> None:
    report.warnings.extend(found.warnings)
    _modified_line_stats(report, vault, state)
    produced = set(state.files)
    mine = list(user_files(vault, produced))
    report.user_files = len(mine)
    _frontmatter(report, vault, found, _user_notes(state, mine), progress)


def _user_notes(state: State, mine: list[str]) -> list[str]:
    """The notes required frontmatter applies to: the user's own and the shard's user
    content, never its infrastructure (agent manuals, commands, templates) nor a tool's
    dot-folder (tests/hardening/test_status_user_notes.py)."""
    shard_notes = {p for p, rec in state.files.items() if rec.content_class == "user_content"}
    # A segment starts with a dot when the path does or holds "/." (no split per note: 20,000 of them).
    return sorted(p for p in {*mine, *shard_notes} if p.endswith(".md") and p[0] != "." and "/." not in p)
