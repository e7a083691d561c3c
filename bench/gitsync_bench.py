"""Time `git pull` with shardpy's merge driver against git's built-in text merge.

Run: python bench/gitsync_bench.py [--notes 500] [--runs 3] [--cases builtin,shardpy,sync]
        [--corpus generated|imported|handwritten] [--compare DIR]

Builds a repository of N notes (frontmatter + body), then two diverging
commits that both touch every note in different places (one edits the first
body lines, the other the last ones; a third of the notes also get a
frontmatter change on one side), so the merge needs a three-way file merge
for every note. The same `git pull` (a real merge, from a bare repository)
is timed in two clones of the same history:

* ``builtin``: no attributes, git's own text merge (the reference);
* ``shardpy``: after ``shardpy git setup``: git runs the driver once per note;
* ``sync``: the same vault set up the same way, pulled with
  ``shardpy sync --no-push`` (fetch, then git's merge with every note merged
  by the driver's rules inside the sync process, then the commit);
* ``watch``: the same round as ``shardpy sync --watch`` runs each one, in a
  process that is already up (here the bench's own: shardpy imported, one
  round run before the timed ones), CPU of the process and its git commands.

``--cases`` picks which (``builtin,sync`` skips the slow per-file driver).

The folders go where ``tempfile`` puts them: ``TMPDIR=/dev/shm`` (tmpfs) gives the strictest
ratio, git's own pull at its cheapest and steadiest; on a disk that has seen a day of benches,
ext4's file creation slows and git's pull with it (docs/GIT.md, "Limitations").
``--compare DIR`` adds ``sync-compare``: the same ``shardpy sync`` run with the shardpy of
another checkout (the code before a change: ``git archive REV | tar -x -C DIR``), in a third
clone set up the same way, timed in the same runs.

``--corpus`` picks the notes (the edits stay the same in kind):

* ``generated`` (the default): N uniform notes, a short frontmatter and 30 like lines;
* ``imported``: the notes ``shardpy import --from basic-memory --apply`` writes from a generated
  basic-memory project (tests/importers/fixtures.py, as bench/import_bench.py), imported into a
  scratch vault, then copied with their folders and names into the repository (frontmatter with
  a tags list and the import's provenance keys, observations, relations, a code fence);
* ``handwritten``: Obsidian-style notes written by a deterministic generator here (daily notes,
  meetings, projects, people, clippings: dates, tags as a block or a flow list, aliases,
  wikilinks with headings and aliases, embeds, callouts, tasks, code fences, tables, footnotes;
  15 to 190 lines; a tenth without frontmatter, one in 17 with CRLF line ends).

For these two, side A rewrites the first prose line of the body (for a third of the notes also
the ``status`` or ``type`` scalar of the frontmatter), side B the last one.

shardpy runs as ``sys.executable``: run the bench with the interpreter shardpy is installed
for (``.venv/bin/python bench/gitsync_bench.py``, a virtualenv as the README's install makes).
Its start-up shows in ``python -c pass`` below (this machine's pyenv Python imports certifi
from a site hook: 0.05-0.18 s of CPU, 0.01-0.02 s in a virtualenv), and in every ``shardpy``
process timed (a sync's start and imports: 0.23-0.29 s against 0.10-0.17 s; docs/GIT.md).

Both merges must be clean and give the same notes where git's merge is
clean (checked). Besides the medians, each case's CPU beside the reference's run
by run and the median of those per-run ratios (the figure a loaded machine moves
least: the reference alone varies by half between runs). Also printed: one
``shardpy merge-file`` call against one ``git merge-file`` call and an empty
``python -c pass`` (the start-up floor the driver pays per file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.childenv import checkout_env, child_env

PY = sys.executable


def git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def note(i: int) -> list[str]:
    head = ["---\n", f"title: Note {i}\n", "status: draft\n", f"tags: [t{i % 7}, bench]\n", "---\n"]
    body = [f"# Note {i}\n", "\n"] + [f"Line {k} of note {i}: some words about things.\n" for k in range(30)]
    return head + body


def edit(lines: list[str], i: int, side: str) -> list[str]:
    out = list(lines)
    if side == "a":
        out[7] = f"Line 0 of note {i}: edited on machine A.\n"
        if i % 3 == 0:
            out[2] = "status: done\n"
    else:
        out[-2] = f"Line 28 of note {i}: edited on machine B.\n"
    return out


# A corpus: (path under the repository, the base note's lines, the edit rule) per note.
Corpus = list[tuple[str, list[str], Callable[[list[str], int, str], list[str]]]]


def generated_corpus(n: int, tmp: Path, env: dict[str, str]) -> Corpus:
    """The bench's own uniform notes (the default)."""
    return [(f"notes/n{i:04}.md", note(i), edit) for i in range(n)]


def _body_lines(lines: list[str]) -> tuple[int, list[int]]:
    """(end of the frontmatter, indexes of the body's prose lines: not blank, not a heading, not
    a fence nor inside one, not a table row)."""
    start = 0
    if lines and lines[0].rstrip("\r\n") == "---":
        start = next(k for k in range(1, len(lines)) if lines[k].rstrip("\r\n") == "---") + 1
    prose, fenced = [], False
    for k in range(start, len(lines)):
        text = lines[k].strip()
        if text.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not text or text.startswith(("#", "|", "[^")) or text == "---":
            continue
        prose.append(k)
    return start, prose


def user_edit(lines: list[str], i: int, side: str) -> list[str]:
    """The same edits on a note of any shape: side A rewrites the first prose line of the body and,
    for a third of the notes, a frontmatter scalar (``status`` or ``type``); side B rewrites the
    last prose line. The two are kept apart by at least one unchanged line (so git's merge is clean)."""
    out = list(lines)
    fm_end, prose = _body_lines(lines)
    first, last = prose[0], prose[-1]
    assert last - first >= 2, (i, first, last)
    eol = "\r\n" if lines[0].endswith("\r\n") else "\n"
    k = first if side == "a" else last
    out[k] = out[k].rstrip("\r\n") + f" (edited on machine {side.upper()}){eol}"
    if side == "a" and i % 3 == 0:
        for j in range(1, max(fm_end - 1, 1)):
            key = out[j].split(":", 1)[0]
            if key in ("status", "type") and not out[j].startswith(" "):
                out[j] = f"{key}: {'done' if key == 'status' else 'decision'}{eol}"
                break
    return out


def imported_corpus(n: int, tmp: Path, env: dict[str, str]) -> Corpus:
    """The notes `shardpy import --from basic-memory` writes from a generated basic-memory project
    (tests/importers/fixtures.py, the project bench/import_bench.py imports), imported into a scratch
    vault, then copied under notes/ keeping their folders and names."""
    from tests.importers.fixtures import generated_project

    src, scratch = tmp / "bm-project", tmp / "scratch-vault"
    generated_project(src, n)
    scratch.mkdir()
    cmd = [PY, "-m", "shardpy", "import", "--from", "basic-memory", str(src), str(scratch), "--apply"]
    done = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"shardpy import failed: {done.stdout}{done.stderr}")
    root = scratch / "memories" / "basic-memory"
    paths = sorted(root.rglob("*.md"))
    if len(paths) != n:
        raise SystemExit(f"shardpy import wrote {len(paths)} notes, not {n}")
    return [
        (
            "notes/" + p.relative_to(root).as_posix(),
            p.read_text(encoding="utf-8").splitlines(keepends=True),
            user_edit,
        )
        for p in paths
    ]


_WORDS = (
    "deploy",
    "rollback",
    "latency",
    "budget",
    "vendor",
    "review",
    "retro",
    "incident",
    "schema",
    "migration",
    "cache",
    "queue",
    "backlog",
    "roadmap",
    "hiring",
    "onboarding",
    "postgres",
    "kafka",
    "terraform",
    "grafana",
    "alert",
    "pager",
    "runbook",
    "customer",
    "churn",
    "pricing",
    "launch",
    "draft",
    "spec",
    "owner",
    "deadline",
    "risk",
    "tradeoff",
    "benchmark",
)
_PEOPLE = ("Ana Souza", "Bob Smith", "Chen Wei", "Dana Ivanova", "Emeka Obi", "Fatima Zahra")
_PROJECTS = ("Alpha", "Billing Revamp", "Search v2", "Onboarding", "Data Platform")
_KINDS = ("daily", "meeting", "project", "person", "clipping")


class _Writer:
    """Deterministic words and sentences of one hand-written-style note."""

    def __init__(self, i: int) -> None:
        import random

        self.i, self.rng = i, random.Random(i)

    def words(self, k: int) -> str:
        return " ".join(self.rng.choice(_WORDS) for _ in range(k))

    def sentence(self) -> str:
        rng = self.rng
        s = self.words(rng.randint(6, 18)).capitalize()
        if rng.random() < 0.4:
            s += f" with [[{rng.choice(_PEOPLE)}]]"
        if rng.random() < 0.3:
            s += f", see [[{rng.choice(_PROJECTS)}#{self.words(1).title()}|{self.words(1)}]]"
        if rng.random() < 0.2:
            s += f" #{rng.choice(_WORDS)}"
        return s + "."

    def section(self) -> list[str]:
        """A heading, prose with links, and now and then tasks, a code fence, a table, an embed."""
        rng, i = self.rng, self.i
        out = [f"## {self.words(2).title()}", ""]
        for _ in range(rng.randint(1, 4)):
            out.append(" ".join(self.sentence() for _ in range(rng.randint(1, 3))))
        out.append("")
        if rng.random() < 0.5:
            out += [f"- [{rng.choice(' x')}] {self.sentence()}" for _ in range(rng.randint(2, 5))] + [""]
        if rng.random() < 0.25:
            lang = rng.choice(("bash", "python", "sql", ""))
            out += [f"```{lang}", f"# {self.words(3)}", f"{self.words(1)} --{self.words(1)} {i}", "```", ""]
        if rng.random() < 0.15:
            out += [f"| {self.words(1)} | {self.words(1)} |", "|---|---|", f"| {i} | {self.words(2)} |", ""]
        if rng.random() < 0.1:
            out += [f"![[{self.words(1)}-{i}.png]]", ""]
        return out


def _place(w: _Writer, kind: str, day: str, project: str) -> tuple[str, str]:
    """(path, title) of a note of this kind: folders and file names with spaces, as people name them."""
    i = w.i
    if kind == "daily":
        return f"Daily/{day} ({i}).md", day
    if kind == "meeting":
        return f"Meetings/{day} {project} sync {i}.md", f"{project} sync {i}"
    if kind == "project":
        name = f"{w.words(2).title()} {i}"
        return f"Projects/{project}/{name}.md", name
    if kind == "person":
        name = f"{_PEOPLE[i % len(_PEOPLE)]} {i}"
        return f"People/{name}.md", name
    name = w.words(3).title()
    return f"Clippings/{name} {i}.md", name


def _frontmatter(w: _Writer, kind: str, day: str, project: str, title: str) -> list[str]:
    """Dates, tags as a block or a flow list, aliases for a quarter, a status; a tenth have none."""
    i = w.i
    if i % 10 == 9:
        return []
    fm = ["---", f"created: {day}", f"updated: {day}T{i % 24:02d}:{i % 60:02d}"]
    tags = sorted({kind, w.rng.choice(_WORDS), f"project/{project.lower().replace(' ', '-')}"})
    fm += ["tags:", *(f"  - {t}" for t in tags)] if i % 2 else [f"tags: [{', '.join(tags)}]"]
    if i % 4 == 1:
        fm += ["aliases:", f'  - "{title.lower()}"', f"  - {kind} {i}"]
    fm.append(f"status: {w.rng.choice(('draft', 'active', 'waiting'))}")
    if kind == "clipping":
        fm.append(f'source: "https://example.invalid/{i}?ref=clip"')
    return [*fm, "---"]


def handwritten_note(i: int) -> tuple[str, str]:
    """(path, text) of the i-th hand-written-style Obsidian note (deterministic per i): daily notes,
    meetings, project pages, people and clippings; frontmatter with dates, a tags list in either
    style, aliases, a status; wikilinks with aliases and headings, embeds, callouts, tasks, code
    fences, tables, footnotes; lengths from a dozen lines to over a hundred; a tenth with no
    frontmatter, one in 17 with CRLF line ends."""
    w = _Writer(i)
    kind, day, project = (
        _KINDS[i % 5],
        f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
        _PROJECTS[i % len(_PROJECTS)],
    )
    path, title = _place(w, kind, day, project)
    fm = _frontmatter(w, kind, day, project, title)
    body = [f"# {title}", ""]
    if i % 3 != 2:
        callout = w.rng.choice(("info", "note", "warning", "tip"))
        body += [f"> [!{callout}] {w.words(2).title()}", f"> {w.sentence()}", f"> {w.sentence()}", ""]
    body += [w.sentence(), ""]
    for _ in range(1 + w.rng.randint(0, 3 + (i % 7 == 0) * 12)):  # now and then a long note
        body += w.section()
    if i % 6 == 0:
        body += [f"Something to check later.[^{i}]", "", f"[^{i}]: {w.sentence()}", ""]
    body += ["## Related", ""]
    body += [f"- [[{w.rng.choice(_PEOPLE + _PROJECTS)}]]" for _ in range(w.rng.randint(1, 3))]
    eol = "\r\n" if i % 17 == 5 else "\n"  # a few notes saved on Windows
    return path, eol.join(fm + body) + eol


def handwritten_corpus(n: int, tmp: Path, env: dict[str, str]) -> Corpus:
    out = []
    for i in range(n):
        path, text = handwritten_note(i)
        out.append(("notes/" + path, text.splitlines(keepends=True), user_edit))
    return out


CORPORA = {"generated": generated_corpus, "imported": imported_corpus, "handwritten": handwritten_corpus}


def write(root: Path, corpus: Corpus, side: str | None) -> None:
    for i, (rel, lines, rule) in enumerate(corpus):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes("".join(lines if side is None else rule(lines, i, side)).encode("utf-8"))


STATE = (
    '{"files": {}, "install_date": "2026-01-01T00:00:00Z", "modules": {}, '
    '"shard": "bench", "source": "local", "version": "1.0.0"}\n'
)


def vault_files(seed: Path) -> None:
    """What makes the repository a set-up vault (unchanged by both sides: never merged)."""
    from shardpy.gitsync.setup import ATTRIBUTES, IGNORES, with_block

    (seed / ".shardmind").mkdir()
    (seed / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    (seed / ".gitattributes").write_text(with_block(None, ATTRIBUTES), encoding="utf-8")
    (seed / ".gitignore").write_text(with_block(None, IGNORES), encoding="utf-8")


def build(tmp: Path, corpus: Corpus, env: dict[str, str]) -> tuple[Path, str, str]:
    """(bare repository, commit of A, commit of B): A pushed to main, B a commit on top of the base."""
    bare = tmp / "hub.git"
    git(tmp, "init", "--quiet", "--bare", str(bare), env=env)
    seed = tmp / "seed"
    (seed / "notes").mkdir(parents=True)
    git(seed, "init", "--quiet", env=env)
    vault_files(seed)
    write(seed, corpus, None)
    git(seed, "add", "-A", env=env)
    git(seed, "commit", "--quiet", "-m", "base", env=env)
    base = git(seed, "rev-parse", "HEAD", env=env).strip()
    write(seed, corpus, "a")
    git(seed, "commit", "--quiet", "-am", "A", env=env)
    a = git(seed, "rev-parse", "HEAD", env=env).strip()
    git(seed, "push", "--quiet", str(bare), "HEAD:refs/heads/main", env=env)
    git(seed, "checkout", "--quiet", base, env=env)
    write(seed, corpus, "b")
    git(seed, "commit", "--quiet", "-am", "B", env=env)
    b = git(seed, "rev-parse", "HEAD", env=env).strip()
    git(seed, "push", "--quiet", str(bare), f"{b}:refs/heads/b", env=env)
    return bare, a, b


def clone(tmp: Path, bare: Path, name: str, env: dict[str, str], *, driver: bool) -> Path:
    dest = tmp / name
    git(tmp, "clone", "--quiet", str(bare), str(dest), env=env)
    git(dest, "fetch", "--quiet", "origin", "b", env=env)
    if driver:
        # What `shardpy git setup` registers in git's config (the attributes are committed).
        from shardpy.gitsync.setup import DRIVER_TITLE, driver_command

        git(dest, "config", "merge.shardpy.name", DRIVER_TITLE, env=env)
        git(dest, "config", "merge.shardpy.driver", driver_command(PY), env=env)
    return dest


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_pull(repo: Path, b: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of git and every driver it ran): CPU is the figure a busy machine keeps."""
    git(repo, "checkout", "--quiet", "-B", "work", b, env=env)
    c0, t0 = _cpu(), time.perf_counter()
    git(repo, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main", env=env)
    return time.perf_counter() - t0, _cpu() - c0


def _cpu_all() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + _cpu()


def timed_watch(repo: Path, b: str, env: dict[str, str]) -> tuple[float, float]:
    """One round as ``sync --watch`` runs it (``cli/sync_cmd._watch``: ``run_round`` of a new
    plan, in the daemon's process): no Python start, no imports."""
    from shardpy.sync.plan import plan_sync
    from shardpy.sync.round import run_round

    git(repo, "checkout", "--quiet", "-B", "main", b, env=env)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        c0, t0 = _cpu_all(), time.perf_counter()
        report = run_round(plan_sync(repo, push=False))
        wall, cpu = time.perf_counter() - t0, _cpu_all() - c0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    remote = report.remotes[0] if report.remotes else None
    if remote is None or not remote.merged or remote.conflicts:
        raise SystemExit(f"the watch round did not merge cleanly: {report.to_json()}")
    return wall, cpu


def timed_sync(repo: Path, b: str, env: dict[str, str]) -> tuple[float, float]:
    """``shardpy sync --no-push`` on main reset to B (what `git pull` does, as sync does it)."""
    git(repo, "checkout", "--quiet", "-B", "main", b, env=env)
    c0, t0 = _cpu(), time.perf_counter()
    done = subprocess.run(
        [PY, "-m", "shardpy", "sync", "--no-push", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    report = json.loads(done.stdout)
    if done.returncode != 0 or not report["remotes"][0]["merged"] or report["remotes"][0]["conflicts"]:
        raise SystemExit(f"shardpy sync did not merge cleanly: {done.stdout}{done.stderr}")
    return wall, cpu


def tree(repo: Path) -> dict[str, bytes]:
    notes = repo / "notes"
    return {p.relative_to(notes).as_posix(): p.read_bytes() for p in sorted(notes.rglob("*")) if p.is_file()}


def startup(tmp: Path, env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    (tmp / "o").write_text("---\ntitle: x\n---\na\nb\nc\n")
    (tmp / "b").write_text("---\ntitle: x\n---\nA\nb\nc\n")
    (tmp / "t").write_text("---\ntitle: x\n---\na\nb\nC\n")
    commands = {
        "python -c pass": [PY, "-c", "pass"],
        "git merge-file -p": ["git", "merge-file", "-p", "b", "o", "t"],
        "shardpy merge-file": [PY, "-m", "shardpy", "merge-file", "o", "b", "t", "n.md"],
    }
    out = {}
    for label, argv in commands.items():
        walls, cpus = [], []
        for _ in range(runs):
            c0, t0 = _cpu(), time.perf_counter()
            subprocess.run(argv, cwd=tmp, env=env, capture_output=True, check=False)
            walls.append(time.perf_counter() - t0)
            cpus.append(_cpu() - c0)
        out[label] = (statistics.median(walls), statistics.median(cpus))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--cases", default="builtin,shardpy,sync", help="comma-separated: builtin,shardpy,sync,watch"
    )
    ap.add_argument(
        "--corpus",
        default="generated",
        choices=sorted(CORPORA),
        help="the notes: the bench's own (generated), shardpy import's from basic-memory (imported), "
        "Obsidian-style (handwritten)",
    )
    ap.add_argument("--compare", type=Path, help="another checkout, its sync timed in the same runs")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitsync-bench-"))
    home = tmp / "home"
    home.mkdir()
    cfg = home / "gitconfig"
    cfg.write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = child_env(HOME=str(home), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH")) if p
    )
    try:
        corpus = CORPORA[args.corpus](args.notes, tmp, env)
        bare, _a, b = build(tmp, corpus, env)
        # git's own merge first: every other case is reported against it.
        cases = ["builtin", *(c for c in args.cases.split(",") if c != "builtin")]
        envs = dict.fromkeys(cases, env)
        if args.compare is not None:
            cases.append("sync-compare")
            envs["sync-compare"] = checkout_env(env, args.compare)  # the other checkout's shardpy
        clones = {case: clone(tmp, bare, case, env, driver=case != "builtin") for case in cases}
        if "watch" in cases:
            timed_watch(clones["watch"], b, env)  # the daemon's first round: imports, warm caches
        timers = {
            "builtin": timed_pull,
            "shardpy": timed_pull,
            "sync": timed_sync,
            "sync-compare": timed_sync,
            "watch": timed_watch,
        }
        labels = {
            "builtin": "git pull, git's built-in text merge",
            "shardpy": "git pull, shardpy driver per file",
            "sync": "shardpy sync --no-push (in-process merge)",
            "sync-compare": f"the same, {args.compare}",
            "watch": "a round of sync --watch (process up)",
        }
        times: dict[str, list[tuple[float, float]]] = {c: [] for c in cases}
        for run in range(args.runs):
            # Each run starts with another case: the case timed right after another pays for
            # the page cache and reclaim the one before left (seen as a 15% swing between two
            # copies of the same code), so no case always comes first.
            shift = run % len(cases)
            for case in cases[shift:] + cases[:shift]:
                times[case].append(timers[case](clones[case], b, envs[case]))
        size = sum(len("".join(lines).encode()) for _, lines, _ in corpus) / len(corpus)
        print(
            f"merging {args.notes} {args.corpus} notes ({size:.0f} bytes on average) changed on both sides"
            f" (median of {args.runs}):"
        )
        ref = {k: statistics.median(t[k] for t in times["builtin"]) for k in (0, 1)}
        for case in cases:
            for what, k in (("wall", 0), ("CPU", 1)):
                d = statistics.median(t[k] for t in times[case])
                print(f"  {labels[case]:<44} {what:>4} {d:8.3f} s = {d / ref[k]:6.1f}x", end="")
                print(f" ({d / args.notes * 1000:.1f} ms/note)")
        for case in cases[1:]:
            # The ratio within a run is what a loaded machine changes least (the reference
            # alone varies by half between runs).
            pairs = list(zip(times[case], times["builtin"], strict=True))
            paired = statistics.median(t[1] / r[1] for t, r in pairs)
            runs = ", ".join(f"{t[1]:.3f}/{r[1]:.3f}" for t, r in pairs)
            print(f"  {case} / builtin CPU, run by run: {runs}; median of the runs' ratios {paired:.2f}x")
        for case in cases[1:]:
            same = tree(clones[case]) == tree(clones["builtin"])
            print(f"  identical merged notes ({case} vs builtin): {same}")
        for case in cases:
            merged = tree(clones[case]).values()
            both = sum(b"edited on machine A" in d and b"edited on machine B" in d for d in merged)
            print(f"  notes carrying both sides' edits ({case}): {both}/{len(corpus)}")
        for label, (wall, cpu) in startup(tmp, env, max(args.runs, 5)).items():
            print(f"  one {label:<20}: {wall * 1000:8.1f} ms wall, {cpu * 1000:6.1f} ms CPU")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
