"""Three machines, random rounds of edits, ``shardpy sync`` until quiet: one vault everywhere.

Issue 30, "Must show": a bare hub and three clones; each round every machine
makes a few random edits (new notes, scalar keys — the same key on several
machines included —, tags, body lines, renames, soft deletes), then each
machine syncs in turn until a whole pass changes nothing (Obsidian's settings
and plugin list, JSON merged value by value or kept whole, change too). Then the three
trees are byte-identical, every note ever created is still there (found by
its id line, wherever renames took it), no note's frontmatter is left
unparseable, and no scalar key is left as a conflict: the revision stamps
settled every one the same way on every machine.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.merge.frontmatter import split_frontmatter
from shardpy.yamlsafe import load
from tests.gitsync.kit import git_env
from tests.shardkit import Cli
from tests.sync.kit import MACHINES, Fleet

KEYS = ("status", "priority", "owner", "disabled")
SETTINGS = ("vimMode", "showLineNumber", "fontSize")
APP, PLUGINS = ".obsidian/app.json", ".obsidian/community-plugins.json"
VALUES = ("draft", "done", "blocked", 1, 2, True)

edit = st.one_of(
    st.tuples(st.just("new")),
    st.tuples(st.just("key"), st.integers(0, 50), st.sampled_from(KEYS), st.sampled_from(VALUES)),
    st.tuples(st.just("tag"), st.integers(0, 50), st.sampled_from(("x", "y", "z"))),
    st.tuples(st.just("line"), st.integers(0, 50), st.integers(0, 4)),
    st.tuples(st.just("rename"), st.integers(0, 50)),
    st.tuples(st.just("setting"), st.sampled_from(SETTINGS), st.sampled_from((True, False, 14))),
    st.tuples(st.just("plugin"), st.sampled_from(("calendar", "dataview", "tasks"))),
)
rounds = st.lists(
    st.fixed_dictionaries({m: st.lists(edit, max_size=3) for m in MACHINES}), min_size=1, max_size=2
)


def note(uid: str) -> str:
    body = "".join(f"line {k} of {uid}\n" for k in range(5))
    return f"---\ntitle: {uid}\nstatus: draft\ntags: [t]\n---\nid: {uid}\n\n{body}"


class World:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.created: list[str] = ["seed0", "seed1"]
        self.counter = 0

    def apply(self, machine: str, op: tuple[object, ...]) -> None:
        if op[0] in ("setting", "plugin"):
            self._obsidian(machine, op)
            return
        notes = self.fleet.notes(machine)
        if op[0] == "new" or not notes:
            self.counter += 1
            uid = f"{machine}{self.counter}"
            self.created.append(uid)
            self.fleet.write(machine, f"notes/{uid}.md", note(uid))
            return
        rel = notes[int(str(op[1])) % len(notes)]
        path = self.fleet.machines[machine] / rel
        text = path.read_text(encoding="utf-8")
        if op[0] == "rename":
            self.counter += 1
            path.rename(path.with_name(f"{path.stem}-r{machine}{self.counter}.md"))
            return
        fm, body = split_frontmatter(text)
        assert fm is not None
        data = load(fm.inner) or {}
        if op[0] == "key":
            data[str(op[2])] = op[3]
        elif op[0] == "tag":
            tags = list(data.get("tags") or [])
            data["tags"] = [t for t in tags if t != op[2]] if op[2] in tags else [*tags, op[2]]
        else:
            lines = body.splitlines(keepends=True)
            k = 2 + int(str(op[2]))
            if k < len(lines):
                lines[k] = f"edited on {machine} #{self.counter}\n"
                self.counter += 1
            body = "".join(lines)
        path.write_text(_render(data) + body, encoding="utf-8")

    def _obsidian(self, machine: str, op: tuple[object, ...]) -> None:
        """A setting changed, or a plugin turned on or off, as Obsidian writes them."""
        if op[0] == "setting":
            app = json.loads(self.fleet.read(machine, APP))
            app[str(op[1])] = op[2]
            self.fleet.write(machine, APP, json.dumps(app, indent=2))
            return
        plugins = json.loads(self.fleet.read(machine, PLUGINS))
        plugins = [p for p in plugins if p != op[1]] if op[1] in plugins else [*plugins, op[1]]
        self.fleet.write(machine, PLUGINS, json.dumps(plugins, indent=2))


def _render(data: dict[str, object]) -> str:
    # Key lines as a person (or a tool) writes them; _rev kept where it was.
    lines = []
    for key, value in data.items():
        if isinstance(value, list):
            lines.append(f"{key}: [{', '.join(str(v) for v in value)}]")
        elif isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {json.dumps(value) if ' ' in str(value) and key != '_rev' else value}")
    return "---\n" + "\n".join(lines) + "\n---\n"


def _check(fleet: Fleet, world: World) -> None:
    trees = [fleet.tree(m) for m in MACHINES]
    assert trees[0] == trees[1] == trees[2]
    assert all(fleet.clean(m) for m in MACHINES)
    found: set[str] = set()
    for rel, data in trees[0].items():
        if rel.endswith(".json"):
            json.loads(data)  # merged by value or kept whole: never markers
        if not rel.endswith(".md"):
            continue
        text = data.decode("utf-8")
        fm, _ = split_frontmatter(text)
        assert fm is not None, rel
        assert isinstance(load(fm.inner), dict), rel
        assert ">>>>>>> theirs frontmatter" not in text, f"a scalar key left as a conflict in {rel}"
        found.update(line[4:] for line in text.splitlines() if line.startswith("id: "))
    assert set(world.created) <= found


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=rounds)
# Always tried: the same scalar key on all three, the same body line on two, a rename on one
# while another edits the note, and a soft delete against an edit.
@example(
    plan=[
        {
            "a": [("key", 0, "status", "done"), ("line", 1, 0), ("rename", 1)],
            "b": [("key", 0, "status", "blocked"), ("line", 1, 0), ("key", 1, "owner", 2)],
            "c": [("key", 0, "status", 1), ("key", 0, "disabled", True), ("tag", 1, "x")],
        },
        {"a": [("key", 0, "disabled", True)], "b": [("key", 0, "priority", 2)], "c": [("new",)]},
        # The same setting on two machines (kept whole), another on the third, a plugin on each.
        {
            "a": [("setting", "vimMode", True), ("plugin", "dataview")],
            "b": [("setting", "vimMode", 14), ("plugin", "tasks")],
            "c": [("setting", "fontSize", 14), ("plugin", "calendar")],
        },
    ]
)
def test_three_machines_converge(
    plan: list[dict[str, list[tuple[object, ...]]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(tempfile.mkdtemp(prefix="sync-mesh-"))
    try:
        with monkeypatch.context() as mp:
            git_env(mp, root / "home")
            fleet = Fleet(root, Cli(mp))
            seeds = {f"notes/seed{i}.md": note(f"seed{i}") for i in range(2)}
            seeds[APP] = json.dumps({"vimMode": False}, indent=2)
            seeds[PLUGINS] = json.dumps(["calendar"], indent=2)
            fleet.start(seeds)
            world = World(fleet)
            for edits in plan:
                for machine, ops in edits.items():
                    for op in ops:
                        world.apply(machine, op)
                fleet.settle()
            _check(fleet, world)
    finally:
        shutil.rmtree(root, ignore_errors=True)
