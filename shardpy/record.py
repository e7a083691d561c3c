"""Typed records for the modules a one-shot command imports: dataclasses' rules, without its cost.

A ``shardpy search`` is a whole process, measured against ``grep -ril`` (issue 29). On its path,
``dataclasses`` cost ~18 ms of ~68 ms of CPU: importing it imports ``inspect`` (with ``ast``,
``dis`` and ``tokenize``), and each of the 12 classes it made compiled and ran new source for its
methods (a frozen, slotted one twice). A :class:`Record` reads its fields from its annotations once,
when the class is made, and shares one ``__eq__``, ``__hash__`` and ``__repr__`` among all records;
a class's ``__init__`` is written on its first record (a class a process never makes costs no
code): making a class costs microseconds, and nothing is imported.

The rules are dataclasses' (``tests/hardening/test_record.py`` checks them beside it): fields in
annotation order, base classes' first; a default, or ``field(default_factory=...)``; ``frozen``
(assigning raises :class:`FrozenError`, an ``AttributeError`` like dataclasses'; equal records hash
alike) and ``kw_only`` as class keywords, inherited; ``__post_init__`` when defined; a mutable
default refused. One difference: ``inspect.signature`` of a class before its first record shows
the generic ``(*args, **kw)``; nothing in shardpy asks it (the option tables list their fields).
Type checkers learn the ``__init__`` from :func:`typing.dataclass_transform` (PEP 681), imported
only for them: ``typing`` itself costs a search 2.7 ms. The records of a one-shot search and of a
sync round (issue 30: 29 more) are these; modules off both paths keep ``dataclasses``.
"""

from __future__ import annotations

import reprlib  # already loaded: collections imports it
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    R = TypeVar("R", bound="Record")
else:

    def dataclass_transform(**_kw):
        return lambda cls: cls


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # no default: the field is required


class FrozenError(AttributeError):
    """An assignment to a field of a frozen record."""


class Field:
    """One field: its name, its default or the factory making one, and its metadata."""

    __slots__ = ("default", "factory", "metadata", "name")

    def __init__(
        self, default: Any = MISSING, factory: Callable[[], Any] | None = None, metadata: Any = None
    ) -> None:
        self.name = ""
        self.default, self.factory = default, factory
        self.metadata: dict[str, Any] = dict(metadata or {})


def field(
    *, default: Any = MISSING, default_factory: Callable[[], Any] | None = None, metadata: Any = None
) -> Any:
    """A field with a factory for its default (a list, a dict) or with metadata."""
    if default is not MISSING and default_factory is not None:
        raise ValueError("a field cannot have both a default and a default_factory")
    return Field(default, default_factory, metadata)


def _is_classvar(note: Any, module: str) -> bool:
    """An annotation that declares a class variable, not a field: ``ClassVar[...]`` however it is
    spelt (``typing.ClassVar``, ``t.ClassVar`` after ``import typing as t``, an alias of it),
    resolved in the class's module as dataclasses does."""
    typing = sys.modules.get("typing")
    if not isinstance(note, str):
        return typing is not None and (
            note is typing.ClassVar or getattr(note, "__origin__", None) is typing.ClassVar
        )
    head = note.split("[", 1)[0].strip()
    if head in ("ClassVar", "typing.ClassVar"):
        return True
    if typing is None:  # no alias of ClassVar can exist before typing is imported
        return False
    first, *rest = head.split(".")
    found = vars(sys.modules[module]).get(first) if module in sys.modules else None
    for part in rest:
        found = getattr(found, part, None)
    return found is typing.ClassVar


def _field_names(cls: type) -> list[str]:
    """The names ``cls`` itself annotates as fields (not class variables)."""
    notes = cls.__dict__.get("__annotations__", {})  # noqa: RUF063  # inspect's costs what this module saves
    names = [name for name, note in notes.items() if not _is_classvar(note, cls.__module__)]
    for name in names:
        if name.startswith("__record_"):
            raise TypeError(f"{cls.__name__}: the field name {name!r} is the made __init__'s own")
    return names


def _own_field(cls: type, name: str) -> Field:
    """The field ``name`` as ``cls`` declares it: its ``field(...)``, else the default the class
    (or a base, as dataclasses reads it) gives the name, else none. A mutable default (a list, a
    dict: any unhashable value) is refused as dataclasses refuses it: every record would share it."""
    given = getattr(cls, name, MISSING)
    if isinstance(given, Field):
        one = given
        if one.default is MISSING:  # the class keeps a plain default, as dataclasses leaves it
            delattr(cls, name)
        else:
            setattr(cls, name, one.default)
    else:
        if given is not MISSING and type(given).__hash__ is None:
            raise ValueError(
                f"mutable default {type(given)} for field {name} is not allowed: use default_factory"
            )
        one = Field(given)
    one.name = name
    return one


def _settle(cls: type[Record], bases: list[type[Record]], frozen: bool | None, kw_only: bool | None) -> None:
    """``frozen`` and ``kw_only`` as given, else as the bases have them; frozen and mutable bases
    do not mix, and a record does not thaw a frozen base or freeze a mutable one with fields."""
    kinds = {b.__frozen__ for b in bases}
    fielded = {b.__frozen__ for b in bases if b.__fields__}
    if len(kinds) > 1 or (frozen is not None and fielded and frozen not in fielded):
        raise TypeError("a frozen record cannot inherit from a mutable one, or the reverse")
    cls.__frozen__ = frozen if frozen is not None else (kinds.pop() if kinds else False)
    cls.__kw_only__ = cls.__kw_only__ if kw_only is None else kw_only


def _check_order(cls: type[Record]) -> None:
    required_after_default = False
    for one in cls.__fields__.values():
        has_default = one.default is not MISSING or one.factory is not None
        if not has_default and required_after_default and not cls.__kw_only__:
            raise TypeError(f"non-default field {one.name!r} follows a default one in {cls.__name__}")
        required_after_default = required_after_default or has_default


@dataclass_transform(field_specifiers=(field,))
class Record:
    """The base of a record: ``class Hit(Record, frozen=True): path: str; score: float = 0.0``."""

    __fields__: ClassVar[dict[str, Field]] = {}
    __frozen__: ClassVar[bool] = False
    __kw_only__: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool | None = None, kw_only: bool | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        # Every record base, farthest first (dataclasses' order: a field keeps its first place).
        bases = [b for b in reversed(cls.__mro__[1:]) if issubclass(b, Record) and b is not Record]
        _settle(cls, bases, frozen, kw_only)
        found: dict[str, Field] = {}
        for base in bases:
            found.update(base.__dict__.get("__fields__", {}))
        for name in _field_names(cls):
            found[name] = _own_field(cls, name)
        cls.__fields__ = found
        _check_order(cls)
        if cls.__frozen__:  # only frozen records pay for a Python-level __setattr__
            if "__hash__" not in cls.__dict__:  # a class's own __hash__ is kept, as dataclasses keeps it
                cls.__hash__ = _hash  # type: ignore[method-assign,assignment]
            cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign,assignment]
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable
        if "__init__" not in cls.__dict__:
            cls.__init__ = _lazy_init(cls)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kw: Any) -> None:
        """For a record class with an ``__init__`` of its own that calls this (none in shardpy):
        the ``__init__`` written for its fields, as its records would get (one rule, not two)."""
        _made_init(type(self))(self, *args, **kw)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return _values(self) == _values(other)

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__fields__)
        return f"{type(self).__qualname__}({shown})"


def _values(record: Record) -> tuple[Any, ...]:
    """The record's field values, in order (a function, not a method: a field may be named so)."""
    return tuple(getattr(record, name) for name in record.__fields__)


def _hash(record: Record) -> int:
    return hash(_values(record))


def _lazy_init(cls: type[Record]) -> Callable[..., None]:
    """An ``__init__`` that makes the class's own on the first record made, and is replaced by it:
    a class whose records a process never makes costs no code (a search makes few of its kinds;
    a sync merging 500 notes thousands of some: the made one is 0.3 us a record, the generic 1.3)."""

    def __init__(self: Record, *args: Any, **kw: Any) -> None:
        made = _made_init(cls)
        cls.__init__ = made  # type: ignore[method-assign]
        made(self, *args, **kw)

    return __init__


def _made_init(cls: type[Record]) -> Callable[..., None]:
    """The class's ``__init__``, as dataclasses writes it: its fields as parameters (keyword-only
    when the class is), each stored straight into the record's ``__dict__`` (past a frozen
    record's ``__setattr__``), a factory called when its field is not given."""
    scope: dict[str, Any] = {"__record_missing__": MISSING}
    params, body = [], ["    __record_dict__ = __record_self__.__dict__"]
    for name, one in cls.__fields__.items():
        if one.factory is not None:
            scope[f"__record_factory_{name}__"] = one.factory
            params.append(f"{name}=__record_missing__")
            value = f"__record_factory_{name}__() if {name} is __record_missing__ else {name}"
            body.append(f"    __record_dict__[{name!r}] = {value}")
            continue
        if one.default is MISSING:
            params.append(name)
        else:
            scope[f"__record_default_{name}__"] = one.default
            params.append(f"{name}=__record_default_{name}__")
        body.append(f"    __record_dict__[{name!r}] = {name}")
    if hasattr(cls, "__post_init__"):
        body.append("    __record_self__.__post_init__()")
    star = ["*"] if cls.__kw_only__ and params else []
    source = f"def __init__(__record_self__, {', '.join([*star, *params])}):\n" + "\n".join(body) + "\n"
    exec(source, scope)  # our own field names (identifiers), as dataclasses does
    made: Callable[..., None] = scope["__init__"]
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    return made


def _frozen_setattr(self: Record, name: str, value: Any) -> None:
    if name in self.__fields__:
        raise FrozenError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Record, name: str) -> None:
    if name in self.__fields__:
        raise FrozenError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def fields(record: Record | type[Record]) -> tuple[Field, ...]:
    """The fields of a record or record class, in order."""
    return tuple(record.__fields__.values())


def replace(record: R, **changes: Any) -> R:
    """A copy of ``record`` with ``changes`` (made through ``__init__``, as dataclasses.replace)."""
    given = {name: getattr(record, name) for name in record.__fields__}
    return type(record)(**{**given, **changes})


def asdict(record: Record) -> dict[str, Any]:
    """The fields and their values (not recursive: records here hold plain values)."""
    return {name: getattr(record, name) for name in record.__fields__}
