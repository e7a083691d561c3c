"""Rendering `.njk` templates (CONTRACT §4) in a Jinja2 sandbox.

Static files never pass through here: the caller copies their bytes. A
template's output is decided only by its source, the values and the fixed
render context, so re-rendering the cached templates reproduces the merge
base exactly.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import signal
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from io import StringIO
from typing import Any, Protocol

from shardpy.errors import ShardpyError
from shardpy.notes.frontmatter import fences

VOLATILE_MARKER = "{# shardmind: volatile #}"
_TEMPLATE_MARK_RE = re.compile(r"\{\{|\{%")
# A tag that opens a value, a list item or a line: YAML parses it as a flow
# mapping, never as part of a scalar, so the block cannot be rendered scalar
# by scalar. Checked first because parsing YAML is the slow part of rendering.
_TAG_OUTSIDE_SCALAR_RE = re.compile(r"(?m)(?:^[ \t]*|:[ \t]+|^[ \t]*-[ \t]+)\{[{%]")
_SAFE_SLUG_RE = re.compile(r"^[^/\\\x00]+$")


# Adopt's version detection renders candidate releases for a clone whose install
# date nobody recorded; any fixed instant works because the rendered bytes are
# compared with the clone's own, and a template that prints the date simply never
# matches (it is then merged as a modified file, as it would be for a user edit).
UNKNOWN_INSTALL_DATE = "2000-01-01T00:00:00Z"


class ShardIdentity(Protocol):
    """A shard's manifest, or a vault's state recording it."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def version(self) -> str: ...


@dataclass(frozen=True)
class RenderContext:
    values: Mapping[str, Any]
    included_modules: list[str]
    shard_name: str
    shard_namespace: str
    shard_version: str
    install_date: str  # ISO-8601 UTC, fixed at first install

    @classmethod
    def of(
        cls, manifest: ShardIdentity, values: Mapping[str, Any], included: list[str], install_date: str
    ) -> RenderContext:
        """The one way to build a context: a shard's identity, the answers, the
        included modules and the vault's install date."""
        return cls(values, included, manifest.name, manifest.namespace, manifest.version, install_date)

    def as_dict(self) -> dict[str, Any]:
        ctx: dict[str, Any] = dict(self.values)
        ctx.update(
            values=dict(self.values),
            included_modules=list(self.included_modules),
            shard={"name": self.shard_name, "namespace": self.shard_namespace, "version": self.shard_version},
            install_date=self.install_date,
            # Derived from install_date so a re-render years later matches
            # what was installed (the merge base must be reproducible).
            year=int(self.install_date[:4]),
        )
        return ctx


@dataclass(frozen=True)
class Rendered:
    output: str
    text: str
    volatile: bool
    iterator_key: str | None = None
    warnings: list[str] = field(default_factory=list)


# Values printed inside a frontmatter block that is not YAML before rendering
# (it holds `{% %}` tags) are first printed as opaque tokens; the block is
# parsed with the tokens in place, so its structure comes from the template
# alone, and each token is then swapped for its value inside the scalar that
# holds it. A value can therefore never add a key or break the YAML.
_PRINTED: ContextVar[tuple[str, list[Any]] | None] = ContextVar("shardpy_printed", default=None)


def _token_finalize(value: Any) -> Any:
    if isinstance(value, _printing_fails()):
        str(value)  # fails here, inside the render, with the template's name and line
    active = _PRINTED.get()
    if active is None:
        return _plain_finalize(value)
    nonce, printed = active
    printed.append(value)
    return f"shardpyv{nonce}n{len(printed) - 1}z"


def _as_text(value: Any) -> str:
    return str(_plain_finalize(value))


def _as_yaml_value(value: Any) -> Any:
    """A value that is a whole unquoted scalar keeps its type (numbers,
    booleans, lists stay what they are)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple | dict):
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))
    return _as_text(value)


def map_scalars(node: Any, fn: Callable[[str], Any]) -> Any:
    """Apply ``fn`` to every string key and scalar of a round-trip YAML tree,
    in place, keeping key order (the structure never changes)."""
    if isinstance(node, dict):
        for k, v in list(node.items()):
            new_key = fn(k) if isinstance(k, str) else k
            new_key = new_key if isinstance(new_key, str) else _as_text(new_key)
            new_val = map_scalars(v, fn)
            if new_key != k:
                position = list(node.keys()).index(k)
                del node[k]
                node.insert(position, new_key, new_val)  # type: ignore[attr-defined]
            else:
                node[k] = new_val
        return node
    if isinstance(node, list):
        for i, v in enumerate(node):
            node[i] = map_scalars(v, fn)
        return node
    return fn(node) if isinstance(node, str) else node


def _fill_tokens(node: Any, pattern: re.Pattern[str], printed: list[Any]) -> Any:
    """Swap printed-value tokens for their values, scalar by scalar."""

    def fill(text: str) -> Any:
        if not pattern.search(text):
            return text
        whole = pattern.fullmatch(text)
        if whole is not None and type(text) is str:  # a plain (unquoted) scalar
            return _as_yaml_value(printed[int(whole.group(1))])
        filled = pattern.sub(lambda m: _as_text(printed[int(m.group(1))]), str(text))
        return filled if type(text) is str else type(text)(filled)  # keep the author's quoting style

    return map_scalars(node, fill)


def _plain_finalize(value: Any) -> Any:
    return "" if value is None else value


def _expr_finalize(value: Any) -> Any:
    """Computed defaults: booleans print as true/false, lists as JSON arrays."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value


_FINALIZERS: dict[str, Callable[[Any], Any]] = {
    "plain": _plain_finalize,
    "token": _token_finalize,
    "expr": _expr_finalize,
}


_ENVS: dict[str, Any] = {}

# A template is code from the shard author: bound what one render may cost. Far above any
# real vault file, far below what hangs an install or fills the memory.
RENDER_SECONDS = 10.0
MAX_OUTPUT = 8 * 1024 * 1024  # characters of one rendered template
MAX_EXPONENT = 4096


class _Limit(Exception):
    """A render went over RENDER_SECONDS or MAX_OUTPUT (raised inside Jinja's code)."""


def _bounded_env_class() -> type:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BoundedEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, plus: `*` never builds a value over MAX_OUTPUT, `**` never a huge number."""

        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "*":
                for seq, count in ((left, right), (right, left)):
                    sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
                    if sized and len(seq) * count > MAX_OUTPUT:
                        raise _Limit(f"a value over {MAX_OUTPUT:,} characters")
            elif isinstance(right, int) and isinstance(left, int) and abs(right) > MAX_EXPONENT:
                raise _Limit(f"an exponent over {MAX_EXPONENT}")
            return super().call_binop(context, operator, left, right)

    return BoundedEnvironment


@lru_cache(maxsize=1)
def _printing_fails() -> type:
    from jinja2 import Undefined

    class PrintingFails(Undefined):
        """Falsy and empty when tested or looped over; an error when printed."""

        __slots__ = ()

        def __str__(self) -> str:
            self._fail_with_undefined_error()
            return ""  # not reached: the call above raises UndefinedError

    return PrintingFails


def make_env(kind: str = "plain") -> Any:
    """A sandboxed environment; ``kind`` picks how printed values are finalised
    ('token' prints frontmatter values as placeholders, see _PRINTED).

    Printing an undefined name fails the render: a misspelt value would
    otherwise install as an empty string without a word. Testing one stays
    allowed (``{% if item.name %}``, ``| default(...)``), as in Jinja.
    """
    env = _ENVS.get(kind)
    if env is None:
        env = _bounded_env_class()(
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            finalize=_FINALIZERS[kind],
            undefined=_printing_fails(),
        )
        _ENVS[kind] = env
    return env


def _error_line(exc: BaseException, name: str) -> int | None:
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == name:
            line = frame.lineno
    return line


@lru_cache(maxsize=1024)
def _compiled(kind: str, source: str, name: str) -> Any:
    """Compiling is most of a render's cost; an update renders each template
    twice (base and new), an `_each` template once per item."""
    env = make_env(kind)
    code = env.compile(source, name=name, filename=name)
    return env.template_class.from_code(env, code, env.make_globals(None))


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise _Limit in the render once ``seconds`` have passed (SIGALRM; main thread only,
    where every command renders; elsewhere only the output bound applies)."""
    if threading.current_thread() is not threading.main_thread() or _IN_DEADLINE.get():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise _Limit(f"more than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    token = _IN_DEADLINE.set(True)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _IN_DEADLINE.reset(token)


_IN_DEADLINE: ContextVar[bool] = ContextVar("shardpy_render_deadline", default=False)


def _render_bounded(template: Any, ctx: Mapping[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    with _deadline(RENDER_SECONDS):
        for chunk in template.generate(**ctx):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise _Limit(f"output over {MAX_OUTPUT:,} characters")
            parts.append(chunk)
    return "".join(parts)


def render_string(
    source: str, ctx: Mapping[str, Any], *, name: str, line_offset: int = 0, kind: str = "plain"
) -> str:
    """Render one template string; failures name the file and line."""
    from jinja2 import TemplateError

    try:
        return _render_bounded(_compiled(kind, source, name), ctx)
    except _Limit as exc:
        raise ShardpyError(
            "RENDER_LIMIT",
            f"Template {name} went over a rendering limit: {exc}",
            "A template may not take more than "
            f"{RENDER_SECONDS:g} s or produce more than {MAX_OUTPUT:,} characters; "
            "report this to the shard's author.",
            path=name,
        ) from None
    except (TemplateError, TypeError, ValueError, ArithmeticError, AttributeError, LookupError) as exc:
        line = _error_line(exc, name)
        raise ShardpyError(
            "RENDER_TEMPLATE_ERROR",
            f"Template {name} failed to render: {getattr(exc, 'message', None) or exc}",
            "Fix the template at the line shown (Jinja2 syntax, sandboxed).",
            path=name,
            line=None if line is None else line + line_offset,
        ) from None


def split_volatile(source: str) -> tuple[str, bool]:
    stripped = source.lstrip()
    if stripped.startswith(VOLATILE_MARKER):
        rest = stripped[len(VOLATILE_MARKER) :]
        return re.sub(r"^\r?\n", "", rest, count=1), True
    return source, False


def _yaml_rt() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 1_000_000
    yaml.preserve_quotes = True
    return yaml


# Characters ruamel.yaml writes raw inside single-quoted or plain scalars,
# which a reader then folds into a space: such strings are written double-quoted
# (escaped) so every value reads back exactly.
_FOLDED_BREAKS = ("\x85", "\u2028", "\u2029")


def _escape_breaks(node: Any) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    def escape(text: str) -> str:
        return DoubleQuotedScalarString(text) if any(ch in text for ch in _FOLDED_BREAKS) else text

    return map_scalars(node, escape)  # a key stays as it is: an equal string is not re-inserted


def _dump(data: Any) -> str:
    stream = StringIO()
    _yaml_rt().dump(_escape_breaks(data), stream)
    return stream.getvalue()


def _scalars(node: Any) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_scalars(k))
            out.extend(_scalars(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_scalars(v))
    elif isinstance(node, str):
        out.append(node)
    return out


def _render_tree(node: Any, render: Callable[[str], str]) -> Any:
    """Render template strings in keys and scalars in place (round-trip nodes)."""
    return map_scalars(node, lambda text: render(text) if _TEMPLATE_MARK_RE.search(text) else text)


def _structured_frontmatter(block: str) -> Any | None:
    """The parsed block when its template syntax sits only inside scalars."""
    from ruamel.yaml.error import YAMLError

    if _TAG_OUTSIDE_SCALAR_RE.search(block):
        return None  # YAML would read that `{` as a flow collection: not inside a scalar
    try:
        from shardpy.yamlsafe import load

        data = load(block, _yaml_rt())
    except (YAMLError, ValueError, TypeError):
        return None
    if not isinstance(data, dict):
        return None
    inside = sum(len(_TEMPLATE_MARK_RE.findall(s)) for s in _scalars(data))
    return data if inside == len(_TEMPLATE_MARK_RE.findall(block)) else None


def _render_frontmatter(block: str, ctx: Mapping[str, Any], name: str) -> str:
    data = _structured_frontmatter(block)
    if data is not None:
        try:
            _render_tree(data, lambda s: render_string(s, ctx, name=name, line_offset=1))
        except ShardpyError:
            # A scalar rendered on its own cannot know its line in the file;
            # the whole block, rendered once more, fails at the right one.
            _render_tokens(block, ctx, name)
            raise
        return _dump(data)
    return _render_tokens(block, ctx, name)


def _render_tokens(block: str, ctx: Mapping[str, Any], name: str) -> str:
    from ruamel.yaml.error import YAMLError

    nonce = secrets.token_hex(6)
    printed: list[Any] = []
    active = _PRINTED.set((nonce, printed))
    try:
        text = render_string(block, ctx, name=name, line_offset=1, kind="token")
    finally:
        _PRINTED.reset(active)
    from shardpy.yamlsafe import load

    try:
        parsed = load(text, _yaml_rt())
    except (YAMLError, ValueError) as exc:
        raise ShardpyError(
            "RENDER_FRONTMATTER_INVALID",
            f"Template {name}: the frontmatter is not valid YAML after rendering ({exc.__class__.__name__})",
            "Check the frontmatter block's YAML syntax around the template tags.",
            path=name,
        ) from None
    if parsed is None:
        return ""
    if not isinstance(parsed, dict):
        raise ShardpyError(
            "RENDER_FRONTMATTER_INVALID",
            f"Template {name}: the frontmatter does not render to a YAML mapping",
            "A frontmatter block must be a mapping of keys to values.",
            path=name,
        )
    pattern = re.compile(rf"shardpyv{nonce}n(\d+)z")
    out = _dump(_fill_tokens(parsed, pattern, printed))
    # A token left outside any scalar sat in a YAML comment: print it on one line.
    return pattern.sub(lambda m: " ".join(_as_text(printed[int(m.group(1))]).split()), out)


def render_text(source: str, ctx: Mapping[str, Any], *, name: str) -> str:
    """Frontmatter-aware rendering of a template's text (marker already removed)."""
    found = fences(source)  # the one splitter (issue 25: an empty block, blanks, a closer at the end)
    if found is None:
        return render_string(source, ctx, name=name)
    block = found.yaml.removesuffix("\n").removesuffix("\r")
    body_offset = found.yaml.count("\n") + 2  # the block's lines and both `---` lines
    fm = _render_frontmatter(block, ctx, name) if block.strip() else ""
    body = render_string(found.body, ctx, name=name, line_offset=body_offset)
    return f"{found.prefix}---\n{fm}---\n{body}"


def _slug(item: Any, *, name: str, key: str) -> str:
    raw = item.get("slug", item.get("name")) if isinstance(item, Mapping) else item
    slug = "" if raw is None else str(raw)
    if not slug or slug in (".", "..") or not _SAFE_SLUG_RE.match(slug):
        raise ShardpyError(
            "RENDER_ITERATOR_INVALID",
            f"Template {name}: an item of '{key}' has no usable slug/name ({slug!r})",
            "Give every item a `slug` (or `name`) that is a plain file name.",
            path=name,
        )
    return slug


def render_template(
    source: str, output: str, ctx: RenderContext, *, name: str, iterator: str | None = None
) -> list[Rendered]:
    """Render one `.njk` source to one output (or one per `_each` item)."""
    text, volatile = split_volatile(source)
    base = ctx.as_dict()
    if iterator is None:
        return [Rendered(output=output, text=render_text(text, base, name=name), volatile=volatile)]
    items = ctx.values.get(iterator)
    if not isinstance(items, list):
        raise ShardpyError(
            "RENDER_ITERATOR_INVALID",
            f"Template {name} iterates over '{iterator}', which is not a list value",
            f"Declare '{iterator}' as a list value in the schema and give it a list in shard-values.yaml.",
            path=name,
        )
    out: list[Rendered] = []
    seen: set[str] = set()
    for item in items:
        slug = _slug(item, name=name, key=iterator)
        if slug in seen:
            raise ShardpyError(
                "RENDER_ITERATOR_INVALID",
                f"Template {name}: two items of '{iterator}' share the slug {slug!r}",
                "Give each item a distinct slug.",
                path=name,
            )
        seen.add(slug)
        item_ctx = dict(base, item=item)
        head, _, tail = output.rpartition("/")
        target = (head + "/" if head else "") + tail.replace("_each", slug, 1)
        out.append(
            Rendered(
                output=target,
                text=render_text(text, item_ctx, name=name),
                volatile=volatile,
                iterator_key=slug,
            )
        )
    return out


def render_expression(expression: str, answers: Mapping[str, Any], *, name: str) -> str:
    """Computed defaults: render ``{{ … }}`` against the other answers, and ``command_found``."""
    ctx = dict(answers)
    ctx["values"] = dict(answers)
    ctx.setdefault("command_found", command_found)  # a value of that name keeps its own meaning
    return render_string(expression, ctx, name=name, kind="expr")


_COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}")


def command_found(name: object) -> bool:
    """Whether a command ``name`` is on this machine's PATH, for a computed default: the flagship
    registers QMD's MCP server only where ``qmd`` is installed (issue 29, docs/SHARDS.md). A bare
    command name only: a path would let a shard probe this machine's files."""
    import shutil

    return isinstance(name, str) and _COMMAND_NAME.fullmatch(name) is not None and bool(shutil.which(name))
