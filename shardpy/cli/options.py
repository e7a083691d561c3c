"""Each command's options, declared once (issue 27: each was declared up to four times).

A command's ``*Args`` record (:class:`shardpy.record.Record`) is its option table: a field is one positional
argument or option, its type the value's (a ``Literal`` is a choice), its
metadata (:class:`Opt`) the spellings, the help and the flow option it fills.
Derived from that one table, and checked the same way:

- the Typer command (:func:`typer_command`: a signature built from the fields,
  so help and shell completion list the choices);
- the plain parser (:func:`parse_plain`) that runs a command without importing
  Typer, which costs ~130 ms before a command runs (its import, then a pydantic
  adapter per parameter). Anything it is not sure of (help, ``--opt=value``, a
  repeated option, an unknown word, a value starting with "-", a bad choice, a
  usage error) is left to Typer, which reports it;
- the flow's ``*Options`` (:func:`flow_options`: one mapping, field by field).

A check across fields (``import --resume`` with ``--abandon``) is the Args
class's :meth:`Args.checked`, run by both paths. This module never imports
Typer at its top: the plain path imports it. Nor ``typing`` or ``dataclasses``: a one-shot
``shardpy search`` parses its table here (shardpy/record.py says what they cost); the choices
(``Literal``) live in shardpy/cli/choices.py, imported by the tables that have them.
"""

# a table's cells are calls by design: each helper returns a shardpy.record.field()

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

from shardpy.record import MISSING, Record, field, fields

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    from shardpy.record import Field

    A = TypeVar("A", bound="Args")
    T = TypeVar("T")
else:

    def dataclass_transform(**_kw):
        return lambda cls: cls


_KEY = "shardpy.cli.option"


class Opt:
    """One argument or option: its spellings (none: a positional argument), its help,
    and the flow option it fills ("": the same name; None: the CLI's own, as --json);
    a number's least value and a positional's shown name, when it has them.
    A plain class, not a record: it has no fields to compare."""

    __slots__ = ("flags", "flow", "help", "metavar", "minimum")

    def __init__(
        self,
        flags: tuple[str, ...],
        help: str,
        flow: str | None = "",
        *,
        minimum: float | None = None,
        metavar: str | None = None,
    ) -> None:
        self.flags, self.help, self.flow = flags, help, flow
        self.minimum, self.metavar = minimum, metavar


class BadUsage(Exception):
    """A usage error found across fields: Typer reports it as its own (exit 2)."""

    def __init__(self, message: str, param: str) -> None:
        super().__init__(message)
        self.message, self.param = message, param


# Each table is frozen and keyword-only, as this base: said once, to type checkers too.
@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Args(Record, frozen=True, kw_only=True):
    """The base of every command's option table (a frozen, keyword-only record: so is each table)."""

    def checked(self: A) -> A:
        """The arguments, checked across fields (BadUsage) and normalised; both paths call it."""
        return self


def flag(*flags: str, help: str, flow: str | None = "") -> Any:
    """An option without a value (False unless given)."""
    return field(default=False, metadata={_KEY: Opt(flags, help, flow)})


def off_flag(*flags: str, help: str, flow: str | None = "") -> Any:
    """An option without a value that turns off what is on (True unless given): ``sync
    --no-push`` fills ``push``, the flow's own name for it, so no second field inverts it."""
    return field(default=True, metadata={_KEY: Opt(flags, help, flow)})


def value(
    *flags: str, help: str, default: Any = None, flow: str | None = "", minimum: float | None = None
) -> Any:
    """An option taking one value (a number at least ``minimum``, when given: ``sync --interval``)."""
    return field(default=default, metadata={_KEY: Opt(flags, help, flow, minimum=minimum)})


def many(*flags: str, help: str, flow: str | None = "") -> Any:
    """A repeatable option: every value, in order."""
    return field(default_factory=list, metadata={_KEY: Opt(flags, help, flow)})


def argument(help: str, *, required: bool = False, flow: str | None = None) -> Any:
    """A positional argument (None unless given, or required)."""
    meta = {_KEY: Opt((), help, flow)}
    return field(metadata=meta) if required else field(default=None, metadata=meta)


def arguments(help: str, *, metavar: str, flow: str | None = None) -> Any:
    """The last positional argument, repeatable: every remaining word, in order (``sync``'s
    ``[VAULT | ACTION ARGS...]``, its shown name)."""
    return field(default_factory=list, metadata={_KEY: Opt((), help, flow, metavar=metavar)})


# Options several commands share: one spelling and one help.
def dry_run() -> Any:
    return flag("--dry-run", help="Show the plan; write nothing.")


def as_json(help: str = "Machine-readable output.") -> Any:
    return flag("--json", help=help, flow=None)


def no_hooks() -> Any:
    return flag("--no-hooks", help="Run no lifecycle hooks.")


def trust() -> Any:
    return flag("--trust", help="Run a remote shard's hooks without asking; allow copier tasks.")


def defaults() -> Any:
    return flag("--defaults", help="Every default value and module; no prompts.")


def values_file() -> Any:
    return value("--values", help="YAML file pre-filling values.", flow="values_file")


def data(help: str = "An answer as KEY=VALUE (repeatable; wins over --values).") -> Any:
    return many("--data", "-d", help=help)


def include_prerelease() -> Any:
    return flag("--include-prerelease", help="Consider prerelease versions.")


def verbose(help: str) -> Any:
    return flag("--verbose", "-v", help=help, flow=None)


def yes(help: str) -> Any:
    return flag("--yes", "-y", help=help)


def on_conflict(
    help: str = "Resolve every conflict: keep (yours), theirs, markers.", default: str | None = None
) -> Any:
    return value("--on-conflict", help=help, default=default)


def option_of(item: Field) -> Opt:
    """The table entry of a table's field."""
    opt = item.metadata[_KEY]
    assert isinstance(opt, Opt)
    return opt


_HINTS: dict[type[Args], dict[str, Any]] = {}


def _hints(cls: type[Args]) -> dict[str, Any]:
    """Each field's type, as ``typing.get_type_hints`` finds it: the annotation (a string, each
    module has ``from __future__ import annotations``) evaluated in its class's module. Our own
    source, not input; without importing typing, which a table without a choice does not need."""
    if cls not in _HINTS:
        found: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            scope = vars(sys.modules[klass.__module__])
            for name, note in klass.__dict__.get("__annotations__", {}).items():  # noqa: RUF063  # no inspect
                if name in cls.__fields__:
                    found[name] = eval(note, scope) if isinstance(note, str) else note
        _HINTS[cls] = found
    return _HINTS[cls]


def _origin(hint: Any) -> Any:
    """``typing.get_origin``: ``list`` for ``list[str]``, ``typing.Union`` for ``Literal[...] |
    None``, ``typing.Literal`` for a choice; ``types.UnionType`` for ``str | None``."""
    return types.UnionType if isinstance(hint, types.UnionType) else getattr(hint, "__origin__", None)


def _is_union(hint: Any) -> bool:
    typing = sys.modules.get("typing")  # a typing.Union exists only once typing is imported
    return _origin(hint) is types.UnionType or (typing is not None and _origin(hint) is typing.Union)


def _single(hint: Any) -> Any:
    """``X | None`` is X; anything else is itself."""
    members = [a for a in getattr(hint, "__args__", ()) if a is not type(None)]
    return members[0] if _is_union(hint) and len(members) == 1 else hint


def choices(cls: type[Args], name: str) -> tuple[str, ...]:
    """A choice's values (its ``Literal``), else ()."""
    single = _single(_hints(cls)[name])
    typing = sys.modules.get("typing")  # a Literal exists only once typing is imported
    if typing is None or _origin(single) is not typing.Literal:
        return ()
    values: tuple[str, ...] = single.__args__
    return values


def spellings(cls: type[Args]) -> dict[str, str]:
    """Every option spelling and the field it sets."""
    return {flag_: f.name for f in fields(cls) for flag_ in option_of(f).flags}


def _kind(cls: type[Args], name: str) -> str:
    hint = _single(_hints(cls)[name])
    if hint is bool:
        return "flag"
    return "many" if _origin(hint) is list else "value"


def _off(cls: type[Args], name: str) -> bool:
    """An off_flag: a flag on unless given (click's flag_value for a True default varies by
    version: with click 8.5, `--no-push` alone declared with default True gave True)."""
    return _kind(cls, name) == "flag" and cls.__fields__[name].default is True


def _convert(cls: type[Args], name: str, given: Any) -> Any:
    """A plain word as the field's type; ValueError for a word it cannot be."""
    if isinstance(given, list):
        return [_convert(cls, name, one) for one in given]
    hint = _single(_hints(cls)[name])
    if _origin(hint) is list:
        hint = hint.__args__[0]
    allowed = choices(cls, name)
    if allowed and given not in allowed:
        raise ValueError(given)
    if hint in (Path, int, float):
        number = hint(given)
        least = option_of(cls.__fields__[name]).minimum
        # Below it, or no number at all (nan, inf: `nan < least` is False): Typer's usage error.
        if least is not None and not (least <= number < math.inf):
            raise ValueError(given)
        return number
    return given


def _take(cls: type[Args], name: str, words: Iterator[str], seen: dict[str, Any]) -> bool:
    """Record one option's value (False: not plain: a repeat, a missing or dash value)."""
    kind = _kind(cls, name)
    if kind == "flag":
        if name in seen:
            return False
        seen[name] = not _off(cls, name)
        return True
    word = next(words, "")
    if not word or word.startswith("-") or (kind == "value" and name in seen):
        return False
    if kind == "many":
        seen.setdefault(name, []).append(word)
    else:
        seen[name] = word
    return True


def parse_plain(cls: type[A], argv: list[str]) -> A | None:
    """The arguments when ``argv`` is plain (see the module's docstring), else None: Typer's."""
    by_flag = spellings(cls)
    positionals = [f.name for f in fields(cls) if not option_of(f).flags]
    seen: dict[str, Any] = {}
    words: list[str] = []
    stream = iter(argv)
    for word in stream:
        if word in by_flag:
            if not _take(cls, by_flag[word], stream, seen):
                return None
        elif not word or word.startswith("-"):
            return None
        else:
            words.append(word)
    if positionals and _kind(cls, positionals[-1]) == "many":  # the last takes every word left
        *single, rest = positionals
        if words[len(single) :]:
            seen[rest] = words[len(single) :]
        positionals, words = single, words[: len(single)]
    if len(words) > len(positionals):
        return None
    seen.update(zip(positionals, words, strict=False))
    try:
        return cls(**{name: _convert(cls, name, given) for name, given in seen.items()}).checked()
    except (TypeError, ValueError, BadUsage):  # a required argument missing, a bad choice, a usage error
        return None


def flow_options(args: Args, target: Callable[..., T], **given: Any) -> T:
    """The flow's options from the arguments: each field fills its flow option (a copy of a
    list); ``given`` adds or overrides what the CLI decides itself (install's SOURCE/DEST split)."""
    chosen: dict[str, Any] = {}
    for item in fields(args):
        opt = option_of(item)
        if opt.flow is not None:
            found = getattr(args, item.name)
            chosen[opt.flow or item.name] = list(found) if isinstance(found, list) else found
    return target(**{**chosen, **given})


def flow_names(cls: type[Args]) -> dict[str, str]:
    """Each field that fills a flow option, and that option's name (tests pin them to the flows)."""
    return {f.name: option_of(f).flow or f.name for f in fields(cls) if option_of(f).flow is not None}


def typer_command(cls: type[A], body: Callable[[A], object], *, name: str) -> Callable[..., None]:
    """A function Typer declares as the command ``name``: a parameter per field of ``cls``
    (its spellings, help and type), which runs ``body`` with the checked arguments."""
    import inspect

    import typer

    params = [_typer_param(cls, item) for item in fields(cls)]

    def command(**given: Any) -> None:
        kinds = {p.name: _kind(cls, p.name) for p in params}
        values = {k: list(v or []) if kinds[k] == "many" else v for k, v in given.items()}
        values.update({k: not v for k, v in given.items() if _off(cls, k)})
        try:
            args = cls(**values).checked()
        except BadUsage as exc:
            raise typer.BadParameter(exc.message, param_hint=exc.param) from None
        body(args)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = cls.__doc__
    command.__name__ = command.__qualname__ = name.replace("-", "_")
    return command


def _typer_param(cls: type[Args], item: Field) -> Any:
    import inspect
    from typing import Annotated

    import typer

    opt = option_of(item)
    hint = _hints(cls)[item.name]
    info = (
        typer.Option(*opt.flags, help=opt.help, min=opt.minimum)
        if opt.flags
        else typer.Argument(help=opt.help, metavar=opt.metavar, show_default=opt.metavar is None)
    )
    default: Any
    if _kind(cls, item.name) == "many":
        hint, default = hint | None, None
    elif _off(cls, item.name):  # Typer sees "given" (False unless given); command() turns it off
        default = False
    else:
        default = inspect.Parameter.empty if item.default is MISSING else item.default
    return inspect.Parameter(
        item.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[hint, info], default=default
    )
