"""Typed records for the modules a one-shot command imports: dataclasses' rules, without its cost.

A ``shardpy search`` is a whole process, measured against ``grep -ril`` (issue 29). On its path,
``dataclasses`` cost ~18 ms of ~68 ms of CPU: importing it imports ``inspect`` (with ``ast``,
``dis`` and ``tokenize``), and each of the 12 classes it made compiled and ran new source for its
methods (a frozen, slotted one twice). A :class:`Record` reads its fields from its annotations once,
when the class is made, and shares one ``__init__``, ``__eq__`` and ``__repr__`` among all records:
making one costs microseconds, and nothing is imported.

The rules are dataclasses' (``tests/hardening/test_record.py`` checks them beside it): fields in
annotation order, base classes' first; a default, or ``field(default_factory=...)``; ``frozen``
(assigning raises :class:`FrozenError`, an ``AttributeError`` like dataclasses'; equal records hash
alike) and ``kw_only`` as class keywords, inherited; ``__post_init__`` when defined. Type checkers
learn the ``__init__`` from :func:`typing.dataclass_transform` (PEP 681), imported only for them:
``typing`` itself costs a search 2.7 ms. Modules off the start-up path keep ``dataclasses``.
"""

from __future__ import annotations

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


def _field_names(cls: type) -> list[str]:
    """The names ``cls`` itself annotates as fields (not ClassVar)."""
    notes = cls.__dict__.get("__annotations__", {})  # noqa: RUF063  # inspect's costs what this module saves
    return [name for name, note in notes.items() if not str(note).startswith(("ClassVar", "typing.ClassVar"))]


@dataclass_transform(field_specifiers=(field,))
class Record:
    """The base of a record: ``class Hit(Record, frozen=True): path: str; score: float = 0.0``."""

    __fields__: ClassVar[dict[str, Field]] = {}
    __frozen__: ClassVar[bool] = False
    __kw_only__: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool | None = None, kw_only: bool | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        inherited = cls.__frozen__
        if frozen is not None and frozen != inherited and cls.__fields__:
            raise TypeError("a frozen record cannot inherit from a mutable one, or the reverse")
        cls.__frozen__ = inherited if frozen is None else frozen
        cls.__kw_only__ = cls.__kw_only__ if kw_only is None else kw_only
        found = dict(cls.__fields__)
        for name in _field_names(cls):
            given = cls.__dict__.get(name, MISSING)
            one = given if isinstance(given, Field) else Field(given)
            one.name = name
            found[name] = one
            if isinstance(given, Field):  # the class keeps a plain default, as dataclasses leaves it
                if one.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, one.default)
        cls.__fields__ = found
        required_after_default = False
        for one in found.values():
            has_default = one.default is not MISSING or one.factory is not None
            if not has_default and required_after_default and not cls.__kw_only__:
                raise TypeError(f"non-default field {one.name!r} follows a default one in {cls.__name__}")
            required_after_default = required_after_default or has_default
        if cls.__frozen__:  # only frozen records pay for a Python-level __setattr__
            cls.__hash__ = Record._hash  # type: ignore[method-assign,assignment]
            cls.__setattr__ = _frozen_setattr  # type: ignore[method-assign,assignment]
            cls.__delattr__ = _frozen_delattr  # type: ignore[method-assign,assignment]
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable
        if "__init__" not in cls.__dict__:
            cls.__init__ = _lazy_init(cls)  # type: ignore[method-assign]

    def __init__(self, *args: Any, **kw: Any) -> None:
        """The generic maker, for a record class with an ``__init__`` of its own that calls this."""
        cls = type(self)
        fields = cls.__fields__
        if args:
            if cls.__kw_only__ or len(args) > len(fields):
                raise TypeError(
                    f"{cls.__name__}() takes {0 if cls.__kw_only__ else len(fields)} positional arguments"
                )
            for name, value in zip(fields, args, strict=False):
                if name in kw:
                    raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
                kw[name] = value
        own = self.__dict__
        for name, one in fields.items():
            if name in kw:
                own[name] = kw.pop(name)
            elif one.factory is not None:
                own[name] = one.factory()
            elif one.default is not MISSING:
                own[name] = one.default
            else:
                raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
        if kw:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {next(iter(kw))!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__fields__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def _hash(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__fields__)
        return f"{type(self).__qualname__}({shown})"


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
    scope: dict[str, Any] = {"_record_missing_": MISSING}
    params, body = [], ["    _record_dict_ = _record_self_.__dict__"]
    for name, one in cls.__fields__.items():
        if one.factory is not None:
            scope[f"_record_factory_{name}"] = one.factory
            params.append(f"{name}=_record_missing_")
            value = f"_record_factory_{name}() if {name} is _record_missing_ else {name}"
            body.append(f"    _record_dict_[{name!r}] = {value}")
            continue
        if one.default is MISSING:
            params.append(name)
        else:
            scope[f"_record_default_{name}"] = one.default
            params.append(f"{name}=_record_default_{name}")
        body.append(f"    _record_dict_[{name!r}] = {name}")
    if hasattr(cls, "__post_init__"):
        body.append("    _record_self_.__post_init__()")
    star = ["*"] if cls.__kw_only__ and params else []
    source = f"def __init__(_record_self_, {', '.join([*star, *params])}):\n" + "\n".join(body) + "\n"
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
