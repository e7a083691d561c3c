"""The update planner, pure: in-memory records, outputs and disk."""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.fsutil import sha256_bytes
from shardpy.plan.update import UpdateInputs, plan_update
from shardpy.shard.produce import Output
from shardpy.vault.manifest import ContentRules, parse_content_rules
from shardpy.vault.state import FileRecord


@dataclass
class MemoryDisk:
    files: dict[str, bytes] = field(default_factory=dict)

    def hash(self, path: str) -> str | None:
        data = self.files.get(path)
        return None if data is None else sha256_bytes(data)

    def read(self, path: str) -> bytes:
        return self.files[path]


def out(path: str, data: bytes, module: str | None = None, volatile: bool = False) -> Output:
    return Output(path, path, data, module, False, volatile)


def rec(data: bytes, **kw: object) -> FileRecord:
    return FileRecord(template=str(kw.pop("template", "x")), rendered_hash=sha256_bytes(data), **kw)  # type: ignore[arg-type]


def plan(
    old: dict[str, bytes],
    new: dict[str, bytes],
    disk: dict[str, bytes],
    *,
    content: ContentRules | None = None,
    deselected: frozenset[str] = frozenset(),
    modules: dict[str, str] | None = None,
    on_conflict: str = "keep",
) -> dict[str, object]:
    mods = modules or {}
    inputs = UpdateInputs(
        old={p: rec(d, template=p, module=mods.get(p)) for p, d in old.items()},
        outputs={p: out(p, d, mods.get(p)) for p, d in new.items()},
        disk=MemoryDisk(dict(disk)),
        base=lambda p: old.get(p),
        content=content or ContentRules(),
        shard_label="shard 2.0.0",
        deselected=deselected,
        on_conflict=on_conflict,  # type: ignore[arg-type]
    )
    return {a.path: a for a in plan_update(inputs)}


def test_each_row_in_memory() -> None:
    base = b"a\nb\nc\nd\ne\n"
    actions = plan(
        old={
            "same": base,
            "upd": base,
            "keep": base,
            "merge": base,
            "conf": base,
            "gone": base,
            "gone-edited": base,
            "deleted": base,
        },
        new={
            "same": base,
            "upd": b"a\nB\nc\nd\ne\n",
            "keep": base,
            "merge": b"A\nb\nc\nd\ne\n",
            "conf": b"a\nb\nC1\nd\ne\n",
            "new": b"new\n",
            "deleted": b"changed\n",
        },
        disk={
            "same": base,
            "upd": base,
            "keep": b"a\nb\nc\nd\nE\n",
            "merge": b"a\nb\nc\nd\nE\n",
            "conf": b"a\nb\nC2\nd\ne\n",
            "gone": base,
            "gone-edited": b"mine\n",
        },
    )
    kinds = {p: a.action for p, a in actions.items()}  # type: ignore[attr-defined]
    assert kinds == {
        "same": "unchanged",
        "upd": "update",
        "keep": "keep",
        "merge": "merge",
        "conf": "conflict",
        "new": "add",
        "gone": "delete",
        "gone-edited": "orphan",
        "deleted": "missing",
    }
    assert actions["merge"].outcome.write == b"A\nb\nc\nd\nE\n"  # type: ignore[attr-defined]
    assert actions["conf"].outcome.write is None  # type: ignore[attr-defined]
    assert actions["gone-edited"].outcome.delete is False  # type: ignore[attr-defined]
    assert actions["deleted"].outcome.write is None  # type: ignore[attr-defined]


def test_deselected_module_asks_once_per_module() -> None:
    actions = plan(
        old={"m/a": b"a\n", "m/b": b"b\n"},
        new={},
        disk={"m/a": b"a\n", "m/b": b"b edited\n"},
        deselected=frozenset({"m"}),
        modules={"m/a": "m", "m/b": "m"},
    )
    a, b = actions["m/a"], actions["m/b"]
    assert a.group == "module:m" and a.choice == "delete"  # type: ignore[attr-defined]
    assert b.action == "orphan" and b.choice == "keep"  # type: ignore[attr-defined]


def test_user_content_never_written_when_changed() -> None:
    rules = parse_content_rules(b'{"user_content_roots": ["notes/"]}')
    actions = plan(
        old={"notes/a.md": b"a\n", "notes/b.md": b"b\n"},
        new={"notes/a.md": b"a2\n"},
        disk={"notes/a.md": b"mine\n", "notes/b.md": b"b\n"},
        content=rules,
        on_conflict="theirs",
    )
    assert actions["notes/a.md"].outcome.write is None  # type: ignore[attr-defined]
    assert actions["notes/b.md"].outcome.delete is False  # type: ignore[attr-defined]


LINES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=8)


def text(lines: list[str]) -> bytes:
    return "".join(f"{x}\n" for x in lines).encode()


@settings(max_examples=300, deadline=None)
@given(
    base=LINES,
    user=st.one_of(st.none(), LINES),
    shard=st.one_of(st.none(), LINES),
    choice=st.sampled_from(["keep", "theirs", "markers"]),
)
def test_planner_properties(
    base: list[str], user: list[str] | None, shard: list[str] | None, choice: str
) -> None:
    b = text(base)
    old = {"f.md": b}
    new = {} if shard is None else {"f.md": text(shard)}
    disk = {} if user is None else {"f.md": text(user)}
    action = plan(old, new, disk, on_conflict=choice)["f.md"]
    outcome = action.outcome  # type: ignore[attr-defined]
    if user is None:
        assert outcome.write is None  # a deleted file is never brought back unasked
        return
    u = text(user)
    if shard is None:
        assert outcome.delete == (u == b)  # only an untouched file is deleted
        return
    s = text(shard)
    if u == b:
        assert outcome.write in (None, s) and (outcome.write == s or s == u)
    if outcome.record is not None:
        assert outcome.record.rendered_hash == sha256_bytes(s)  # the base advances to the new render
    if outcome.write is not None and b"<<<<<<<" in outcome.write:
        assert action.choice == "markers"  # type: ignore[attr-defined]
    if s == b:
        assert outcome.write is None  # shard unchanged: the user's bytes stay
