"""YAML reading that remembers where things are.

Manifests and schemas are loaded with ruamel.yaml's round-trip loader so
that a validation error can name the file, the key path and the line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from shardpy.errors import ShardpyError

T = TypeVar("T")


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml


def parse_yaml_text(text: str, *, display: str, code: str) -> Any:
    """Parse YAML text; a syntax error becomes ``code`` naming file and line."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from shardpy.yamlsafe import YamlTooLarge, load

    try:
        return load(text, _yaml())
    except YamlTooLarge as exc:
        raise too_large(exc, display=display, code=code) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "syntax error"
        raise ShardpyError(
            code,
            f"{display} is not valid YAML: {problem}",
            "Fix the YAML syntax at the line shown.",
            path=display,
            line=line,
        ) from None
    except YAMLError as exc:
        raise ShardpyError(
            code, f"{display} is not valid YAML: {exc}", "Fix the YAML syntax.", path=display
        ) from None


def too_large(exc: Any, *, display: str, code: str) -> ShardpyError:
    """The typed error for a YAML document refused by :mod:`shardpy.yamlsafe`."""
    from shardpy.yamlsafe import YamlTooDeep

    hint = (
        "Flatten the nesting: no value needs collections inside collections that deep."
        if isinstance(exc, YamlTooDeep)
        else "Write the values out instead of nesting aliases (`*name`) that repeat them."
    )
    return ShardpyError(
        code,
        f"{display} is refused: {exc.message}",
        hint,
        path=display,
        line=exc.line,
    )


_MISSING_HINT = "A shard keeps its manifest and schema under .shardmind/."


def _read_text(
    path: Path, *, display: str, code: str, missing_code: str, missing_hint: str = _MISSING_HINT
) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ShardpyError(missing_code, f"{display} not found", missing_hint, path=display) from None
    except UnicodeDecodeError:
        raise ShardpyError(
            code, f"{display} is not UTF-8 text", "Save the file as UTF-8.", path=display
        ) from None
    return text


def load_yaml_file(
    path: Path, *, display: str, code: str, missing_code: str, missing_hint: str = _MISSING_HINT
) -> Any:
    text = _read_text(path, display=display, code=code, missing_code=missing_code, missing_hint=missing_hint)
    return parse_yaml_text(text, display=display, code=code)


def load_validated(path: Path, parse: Callable[[Any], T], *, display: str, code: str, missing_code: str) -> T:
    """Parse a YAML file into a validated model, fast when it is valid.

    The C-backed safe loader reads the file first (several times faster than
    the round-trip loader); only when validation fails is it read again with
    the round-trip loader, whose node positions let the error name the line.
    """
    from ruamel.yaml.error import YAMLError

    from shardpy.yamlsafe import YamlTooLarge, load

    text = _read_text(path, display=display, code=code, missing_code=missing_code)
    try:
        fast = load(text)
    except YamlTooLarge as exc:
        raise too_large(exc, display=display, code=code) from None
    except (YAMLError, ValueError):
        fast = _UNREADABLE
    if fast is not _UNREADABLE:
        try:
            return parse(fast)
        except ShardpyError:
            pass
    return parse(parse_yaml_text(text, display=display, code=code))


_UNREADABLE = object()


def line_of(data: Any, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` that can be located."""
    line: int | None = None
    node = data
    for key in loc:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(node, dict) and key in node:
                if lc is not None:
                    line = lc.key(key)[0] + 1
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
                if lc is not None:
                    line = lc.item(key)[0] + 1
                node = node[key]
            else:
                break
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return line


def to_plain(data: Any) -> Any:
    """Round-trip containers and scalars → plain dict / list / str / int…"""
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    if isinstance(data, bool) or data is None:
        return data
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        return float(data)
    if isinstance(data, str):
        return str(data)
    return data


def pydantic_error(exc: Any, raw: Any, *, display: str, code: str, hint: str) -> ShardpyError:
    """Turn a pydantic ValidationError into one typed error naming key and line."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = [p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    key = ".".join(str(p) for p in loc) or "(root)"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    message = str(first["msg"]).removeprefix("Value error, ")
    return ShardpyError(
        code,
        f"{display}: {key}: {message}{more}",
        hint,
        path=display,
        line=line_of(raw, loc),
        details={"key": key, "problems": [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors]},
    )
