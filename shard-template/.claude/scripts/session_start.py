"""SessionStart hook: a briefing for the new session, held under a byte budget.

Sections, most valuable first: identity (who, which vault, which modules),
the North Star excerpt, open tasks, recent git activity, a listing of notes.
The whole briefing is held under `eager_layer_budget_bytes` from
vault-manifest.json. Over budget, sections degrade one step at a time,
cheapest first — the listing (one Glob rebuilds it) to per-folder counts,
then to top-level counts, then to a pointer; then git; then tasks. Identity
and the North Star never drop. The last line is a meter naming what dropped,
so a vault that outgrows its budget shows it every session.

Claude Code, Codex and Gemini all accept the answer as
hookSpecificOutput.additionalContext. `--text` prints the briefing as plain
text (for a human, or for piping).
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # never leave __pycache__ in the vault

import datetime as _dt  # noqa: E402
import subprocess  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from vaultlib import SCRIPTS_VERSION  # noqa: E402
from vaultlib.hookio import emit_context, event_name, read_payload, text_field, warn  # noqa: E402
from vaultlib.notes import open_tasks, parse_frontmatter  # noqa: E402
from vaultlib.qmd import refresh as qmd_refresh  # noqa: E402
from vaultlib.search import search_hint  # noqa: E402
from vaultlib.vault import (  # noqa: E402
    DEFAULT_BUDGET,
    DEFAULT_COLLAPSE,
    MIN_BUDGET,
    installed_modules,
    iter_notes,
    load_manifest,
    manifest_int,
    read_text,
    read_values,
    vault_root,
)

NORTH_STAR = "brain/North Star.md"
NORTH_STAR_MAX_BYTES = 4_000
NORTH_STAR_MAX_LINES = 60
MAX_TASKS = 40
TASK_FILE_LIMIT = 262_144
GIT_TIMEOUT = 5.0
RE_ENTRY = frozenset({"resume", "compact"})


@dataclass
class Section:
    """One part of the briefing; `levels[i]` renders it at degrade step i."""

    name: str
    levels: list[Callable[[], str]]
    labels: list[str] = field(default_factory=list)  # what each step > 0 is called in the meter
    level: int = 0
    note: str = ""  # why it started degraded (e.g. re-entry)
    _cache: dict[int, str] = field(default_factory=dict)

    def text(self) -> str:
        if self.level not in self._cache:
            try:
                self._cache[self.level] = self.levels[self.level]()
            except Exception as exc:  # a broken section must not take the briefing down
                warn(f"{self.name} section failed: {exc.__class__.__name__}: {exc}")
                self._cache[self.level] = ""
        return self._cache[self.level]

    def can_degrade(self) -> bool:
        return self.level + 1 < len(self.levels)


# --- identity -----------------------------------------------------------------


def identity(root: Path, manifest: dict[str, Any], source: str) -> str:
    values = read_values(root)
    modules = installed_modules(root)
    today = _dt.date.today().isoformat()
    template = manifest.get("template", "agent-vault")
    version = manifest.get("version", SCRIPTS_VERSION)
    lines = [
        f"# Session briefing — {root.name}",
        f"{template} {version} · {today} · session: {source or 'startup'}",
    ]
    who = [
        f"{label}: {values[key]}"
        for key, label in (("user_name", "Owner"), ("org_name", "Organisation"), ("vault_purpose", "Purpose"))
        if values.get(key)
    ]
    if who:
        lines.append(" · ".join(who))
    if modules is None:
        lines.append("Modules: all (no .shardmind/state.json — a plain clone)")
    else:
        off = sorted(k for k, v in modules.items() if not v)
        lines.append("Modules: all installed" if not off else f"Modules not installed: {', '.join(off)}")
    lines.append(
        "Rules: CLAUDE.md / AGENTS.md / GEMINI.md. Search before reading whole files; "
        "durable knowledge goes to brain/, never to an agent's private memory."
    )
    hint = search_hint(root, manifest)
    if hint:
        lines.append(hint)
    return "\n".join(lines)


def north_star(root: Path) -> str:
    text = read_text(root / NORTH_STAR, limit=262_144)
    if text is None:
        return (
            f"## North Star\n{NORTH_STAR} is missing — recreate it from templates/Brain Note.md "
            "and ask the user for their goals."
        )
    _, body = parse_frontmatter(text)
    lines = [ln for ln in body.splitlines()]
    while lines and (not lines[0].strip() or lines[0].startswith("# ")):
        lines.pop(0)
    # The note's own headings sit one level below the briefing's sections.
    lines = ["#" + ln if ln.startswith("#") else ln for ln in lines]
    kept: list[str] = []
    size = 0
    truncated = False
    for line in lines:
        if len(kept) >= NORTH_STAR_MAX_LINES or size + len(line.encode()) + 1 > NORTH_STAR_MAX_BYTES:
            truncated = True
            break
        kept.append(line)
        size += len(line.encode()) + 1
    while kept and not kept[-1].strip():
        kept.pop()
    out = [f"## North Star ({NORTH_STAR})", *kept]
    if truncated:
        out.append(f"… excerpt ends here; read {NORTH_STAR} for the rest.")
    if not kept:
        out.append("(empty — ask the user what they are working towards and write it there)")
    return "\n".join(out)


# --- tasks --------------------------------------------------------------------


def collect_tasks(root: Path, notes: list[str]) -> list[tuple[str, str]]:
    sources = [n for n in notes if n.endswith(".md") and (n.startswith("work/active/") or "/" not in n)]
    tasks: list[tuple[str, str]] = []
    for rel in sources:
        text = read_text(root / rel, limit=TASK_FILE_LIMIT)
        if text is None:
            continue
        _, body = parse_frontmatter(text)
        for task in open_tasks(body):
            tasks.append((task, rel))
    return tasks


def render_tasks(tasks: list[tuple[str, str]], limit: int) -> str:
    if not tasks:
        return "## Open tasks\nNone in work/active/ or the vault root."
    lines = [f"## Open tasks ({len(tasks)})"]
    for task, rel in tasks[:limit]:
        name = rel.rsplit("/", 1)[-1][:-3]
        lines.append(f"- [ ] {task[:200]} — [[{name}]]")
    if len(tasks) > limit:
        lines.append(f"… {len(tasks) - limit} more: grep for '- [ ]' in work/active/.")
    return "\n".join(lines)


def tasks_pointer(tasks: list[tuple[str, str]]) -> str:
    files = len({rel for _, rel in tasks})
    return (
        f"## Open tasks\n{len(tasks)} open tasks in {files} notes (work/active/ and the root); "
        "grep for '- [ ]' to see them."
    )


# --- git ----------------------------------------------------------------------


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass
class GitFacts:
    repo: bool
    log: list[str]
    changed: dict[str, int]


def git_facts(root: Path) -> GitFacts:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return GitFacts(False, [], {})
    log = _git(root, "log", "-n", "12", "--no-color", "--date=short", "--pretty=format:%ad %h %s") or ""
    status = _git(root, "status", "--porcelain", "--untracked-files=normal") or ""
    changed: dict[str, int] = defaultdict(int)
    for line in status.splitlines():
        code = line[:2]
        kind = (
            "untracked"
            if code == "??"
            else "deleted"
            if "D" in code
            else "added"
            if "A" in code
            else "modified"
        )
        changed[kind] += 1
    return GitFacts(True, [ln for ln in log.splitlines() if ln.strip()], dict(changed))


def render_git(facts: GitFacts, limit: int) -> str:
    if not facts.repo:
        return "## Git\nNot a git repository — history is not being kept. Suggest `git init` to the user."
    lines = ["## Recent git activity"]
    lines.extend(f"- {entry[:160]}" for entry in facts.log[:limit])
    if not facts.log:
        lines.append("- no commits yet")
    if facts.changed:
        lines.append("Uncommitted: " + ", ".join(f"{n} {k}" for k, n in sorted(facts.changed.items())))
    return "\n".join(lines)


def git_pointer(facts: GitFacts) -> str:
    if not facts.repo:
        return "## Git\nNot a git repository."
    pending = sum(facts.changed.values())
    return (
        f"## Git\n{len(facts.log)}+ recent commits, {pending} uncommitted changes; "
        "run `git log --oneline -n 10`."
    )


# --- listing ------------------------------------------------------------------


def group_by_folder(notes: list[str]) -> dict[str, list[str]]:
    folders: dict[str, list[str]] = defaultdict(list)
    for rel in notes:
        folder, _, name = rel.rpartition("/")
        folders[folder].append(name[:-3] if name.endswith(".md") else name)
    return dict(sorted(folders.items()))


def render_listing(folders: dict[str, list[str]], threshold: int) -> str:
    total = sum(len(v) for v in folders.values())
    lines = [f"## Notes ({total}; folders over {threshold} notes shown as counts)"]
    for folder, names in folders.items():
        label = folder + "/" if folder else "(root)"
        if len(names) > threshold:
            lines.append(f"{label} — {len(names)} notes")
        else:
            lines.append(f"{label} {' · '.join(names)}")
    return "\n".join(lines)


def render_counts(folders: dict[str, list[str]]) -> str:
    total = sum(len(v) for v in folders.values())
    lines = [f"## Notes ({total}, per-folder counts)"]
    lines.extend(f"{(f + '/') if f else '(root)'} {len(n)}" for f, n in folders.items())
    return "\n".join(lines)


def render_top_counts(folders: dict[str, list[str]]) -> str:
    top: dict[str, int] = defaultdict(int)
    for folder, names in folders.items():
        top[folder.split("/", 1)[0] if folder else "(root)"] += len(names)
    total = sum(top.values())
    parts = [f"{k}{'' if k == '(root)' else '/'} {v}" for k, v in sorted(top.items())]
    return f"## Notes ({total}, top-level folders)\n" + " · ".join(parts)


def listing_pointer(folders: dict[str, list[str]]) -> str:
    total = sum(len(v) for v in folders.values())
    return f"## Notes\n{total} notes in {len(folders)} folders; list them with Glob or `ls` when needed."


# --- assembly -----------------------------------------------------------------


def meter(used: int, budget: int, dropped: list[str]) -> str:
    what = "; dropped: " + ", ".join(dropped) if dropped else "; nothing dropped"
    return f"[eager layer: {used:,} of {budget:,} bytes{what}]"


def build_briefing(root: Path, payload: dict[str, Any]) -> str:
    manifest = load_manifest(root)
    budget = manifest_int(manifest, "eager_layer_budget_bytes", DEFAULT_BUDGET, MIN_BUDGET)
    threshold = manifest_int(manifest, "listing_collapse_threshold", DEFAULT_COLLAPSE, 1)
    source = text_field(payload, "source", "trigger")

    notes = iter_notes(root)
    folders = group_by_folder(notes)
    tasks = collect_tasks(root, notes)
    facts = git_facts(root)

    head = Section("identity", [lambda: identity(root, manifest, source)])
    star = Section("north star", [lambda: north_star(root)])
    task_sec = Section(
        "tasks",
        [
            lambda: render_tasks(tasks, MAX_TASKS),
            lambda: render_tasks(tasks, 10),
            lambda: tasks_pointer(tasks),
        ],
        ["", "tasks (first 10)", "tasks (pointer)"],
    )
    git_sec = Section(
        "git",
        [lambda: render_git(facts, 12), lambda: render_git(facts, 3), lambda: git_pointer(facts)],
        ["", "git (last 3 commits)", "git (pointer)"],
    )
    listing = Section(
        "listing",
        [
            lambda: render_listing(folders, threshold),
            lambda: render_counts(folders),
            lambda: render_top_counts(folders),
            lambda: listing_pointer(folders),
        ],
        ["", "listing (per-folder counts)", "listing (top-level counts)", "listing (pointer)"],
    )
    if source in RE_ENTRY:
        # Resumed or compacted: the listing is already in the conversation.
        listing.level = len(listing.levels) - 1
        listing.note = f"listing (re-entry: {source})"

    order = [head, star, task_sec, git_sec, listing]  # the order the agent reads
    ladder = [listing, git_sec, task_sec]  # cheapest to lose first

    def assemble() -> tuple[str, int]:
        body = "\n\n".join(t for t in (s.text() for s in order) if t)
        return body, len(body.encode("utf-8"))

    body, size = assemble()
    reserve = len(meter(budget, budget, [s.labels[-1] for s in ladder if s.labels]).encode("utf-8")) + 2
    while size + reserve > budget:
        victim = next((s for s in ladder if s.can_degrade()), None)
        if victim is None:
            break  # only identity and the North Star are left: they never drop
        victim.level += 1
        body, size = assemble()

    dropped = [s.note or s.labels[s.level] for s in ladder if s.level > 0]
    # The meter counts itself: iterate until its own digits stop changing.
    total = size
    for _ in range(4):
        line = meter(total, budget, dropped)
        new_total = size + 2 + len(line.encode("utf-8"))
        if new_total == total:
            break
        total = new_total
    if total > budget:
        line = (
            line[:-1]
            + " — over budget: identity and North Star alone exceed it; raise eager_layer_budget_bytes]"
        )
    return body + "\n\n" + line


def main() -> int:
    payload = read_payload()
    root = vault_root()
    text = build_briefing(root, payload)
    if "--text" in sys.argv[1:]:
        sys.stdout.write(text + "\n")
    else:
        emit_context(event_name(payload, "SessionStart"), text)
    try:
        qmd_refresh(root, load_manifest(root), debounce=0)
    except Exception as exc:  # the briefing is already out; a refresh failure is a footnote
        warn(f"qmd refresh not started: {exc}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # never fail an agent's session start
        warn(f"session briefing failed: {exc.__class__.__name__}: {exc}")
        emit_context(
            "SessionStart", "Vault briefing unavailable (see the hook's stderr). Read brain/North Star.md."
        )
        sys.exit(0)
