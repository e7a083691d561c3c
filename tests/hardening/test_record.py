"""shardpy.record keeps dataclasses' rules (the start-up path's records, issue 29): the same class
made both ways answers alike, and a one-shot search imports neither dataclasses nor typing."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy import index, record

NAMES = ("a", "b", "c", "d", "e")
# Each field: no default, a plain default, or a factory (a new list each time).
KINDS = st.sampled_from(["required", "default", "factory"])
VALUES = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.tuples(st.integers()))


def _both(kinds: list[str], frozen: bool, kw_only: bool) -> tuple[Any, Any]:
    """The same class as a dataclass and as a record (a field's default is its own index), each
    ("TypeError", None) when it is refused (a required field after a default one)."""
    notes = {name: "Any" for name in NAMES[: len(kinds)]}

    def cells(make_field: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"__annotations__": dict(notes)}
        for i, (name, kind) in enumerate(zip(NAMES, kinds, strict=False)):
            if kind == "default":
                out[name] = i
            elif kind == "factory":
                out[name] = make_field(default_factory=list)
        return out

    dc = _outcome(
        lambda: dataclasses.dataclass(frozen=frozen, kw_only=kw_only)(type("C", (), cells(dataclasses.field)))
    )
    rec = _outcome(lambda: type("C", (record.Record,), cells(record.field), frozen=frozen, kw_only=kw_only))
    return dc, rec


def _outcome(make: Any) -> tuple[str, Any]:
    try:
        return "ok", make()
    except TypeError:
        return "TypeError", None


@settings(max_examples=150, deadline=None)
@given(
    kinds=st.lists(KINDS, min_size=0, max_size=5),
    frozen=st.booleans(),
    kw_only=st.booleans(),
    positional=st.lists(VALUES, max_size=6),
    keywords=st.dictionaries(st.sampled_from((*NAMES, "zz")), VALUES, max_size=4),
)
def test_a_record_answers_as_the_same_dataclass(
    kinds: list[str], frozen: bool, kw_only: bool, positional: list[Any], keywords: dict[str, Any]
) -> None:
    (made_dc, dc), (made_rec, rec) = _both(kinds, frozen, kw_only)
    assert made_rec == made_dc
    if dc is None:
        return
    got_dc, a = _outcome(lambda: dc(*positional, **keywords))
    got_rec, b = _outcome(lambda: rec(*positional, **keywords))
    assert got_rec == got_dc
    if a is None:
        return
    assert dataclasses.astuple(a) == tuple(getattr(b, f.name) for f in record.fields(b))
    assert repr(b) == repr(a)
    assert b == rec(**record.asdict(b)) and b != dc  # equal by value, never to another class
    assert (type(b).__hash__ is None) == (type(a).__hash__ is None)
    if kinds:
        changed = record.replace(b, a="new")
        assert changed.a == "new" and repr(changed) == repr(dataclasses.replace(a, a="new"))
        if frozen:
            with pytest.raises(AttributeError):
                b.a = 1
        else:
            b.a = 1
            assert b.a == 1


def test_frozen_and_kw_only_are_inherited_and_post_init_runs() -> None:
    class Base(record.Record, frozen=True, kw_only=True):
        x: int = 0

    class Child(Base):
        y: list[int] = record.field(default_factory=list)

        def __post_init__(self) -> None:
            object.__setattr__(self, "seen", self.x + 1)

    one = Child(x=2)
    assert one.y == [] and one.y is not Child().y and one.seen == 3  # type: ignore[attr-defined]
    with pytest.raises(record.FrozenError):
        one.x = 1
    with pytest.raises(TypeError):
        Child(1)  # type: ignore[misc]
    assert hash(Base(x=1)) == hash(Base(x=1)) != hash(Base(x=2))
    with pytest.raises(TypeError):

        class Thawed(Base, frozen=False):
            z: int = 0


def test_a_search_process_imports_neither_dataclasses_nor_typing(tmp_path: Path) -> None:
    """Each cost a one-shot `shardpy search` its part of ~20 ms (shardpy/record.py)."""
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "Bread.md").write_text("# Bread\n\nFeed the starter with rye flour.\n")
    past = time.time() - 60  # a folder changed in the refresh's second is looked at again (racy)
    for path in (vault / "Bread.md", vault):
        os.utime(path, (past, past))
    index.refresh(vault)
    probe = (
        "import atexit, os, sys\n"
        "before = {m for m in ('typing', 'dataclasses', 'inspect') if m in sys.modules}\n"
        "def check():\n"
        "    sys.stdout.flush()\n"
        "    late = {'typing', 'dataclasses', 'inspect'} - before & set(sys.modules)\n"
        "    if late:\n"
        "        os.write(2, f'imported: {sorted(late)}'.encode())\n"
        "        os._exit(3)\n"
        "atexit.register(check)\n"
        f"sys.argv = ['shardpy', 'search', '--vault', {str(vault)!r}, 'rye flour']\n"
        "from shardpy.cli.app import main\n"
        "main()\n"
    )
    env = {**os.environ, "SHARDPY_SEARCH_REFRESH_SECONDS": "1000000"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Bread.md" in done.stdout


def test_the_review_s_cases_follow_dataclasses() -> None:
    """A helper's review of record.py: each case as dataclasses answers it."""

    class A(record.Record):
        a: int = 1

    class B(record.Record):
        b: int = 2

    class AB(A, B):  # every record base's fields, farthest first
        c: int = 3

    assert record.asdict(AB()) == {"b": 2, "a": 1, "c": 3}

    class P(record.Record):
        x: int = 5

    class C(P):
        x: int  # re-declared without a default: the base's default stands

    assert C().x == 5

    class H(record.Record, frozen=True):
        a: int = 0

        def __hash__(self) -> int:
            return 42

    assert hash(H()) == 42  # a frozen record's own __hash__ is kept

    class Loop(record.Record):
        a: object = None

    loop = Loop()
    loop.a = loop
    assert repr(loop) == "test_the_review_s_cases_follow_dataclasses.<locals>.Loop(a=...)"
    with pytest.raises(ValueError, match="mutable default"):

        class Shared(record.Record):
            xs: list[int] = []  # noqa: RUF012  # the case under test

    class Named(record.Record):
        _values: int = 1  # a field named like an internal helper
        _record_dict_: int = 2

    assert Named() == Named() and Named(_values=3)._values == 3 and Named()._record_dict_ == 2
    with pytest.raises(TypeError, match="made __init__"):

        class Clash(record.Record):
            __record_dict__: int = 0


def test_a_class_variable_is_not_a_field_however_it_is_spelt() -> None:
    import typing as t
    from typing import ClassVar as CV  # the alias under test

    namespace = {"__annotations__": {"a": "int", "k": "t.ClassVar[int]", "j": "CV[int]"}, "k": 1, "j": 2}
    namespace["__module__"] = __name__
    globals()["t"], globals()["CV"] = t, CV
    made = type("V", (record.Record,), namespace)
    assert list(made.__fields__) == ["a"]


def test_a_class_s_own_init_calling_super_gets_the_written_one() -> None:
    class Own(record.Record, frozen=True):
        a: int
        b: int = 2

        def __init__(self, a: int) -> None:
            super().__init__(a, b=a + 1)

    assert repr(Own(3)) == "test_a_class_s_own_init_calling_super_gets_the_written_one.<locals>.Own(a=3, b=4)"
    with pytest.raises(TypeError):
        record.Record.__init__(Own(1), 1, 2, 3)  # more positionals than fields, as any record
