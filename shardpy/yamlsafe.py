"""Bounded YAML reading: the one guard every YAML input passes through.

A shard, a values file or an imported note is untrusted text. YAML aliases
let a few hundred bytes name a billion nodes (``b: &b [*a,*a,…]`` nested nine
deep): ruamel builds such a document cheaply, with the repeats shared, but
every walk over it afterwards (copying to plain data, validating, dumping)
visits each repeat. :func:`load` parses, then counts the document's expanded
size with one pass over its distinct nodes and refuses it when aliases add
more than :data:`ALIAS_BUDGET` nodes, or make it contain itself. Documents
without a ``*`` cannot hold an alias and skip the count.

This module sits below every package (no shardpy imports) so that
``shardpy/frontmatter.py``, ``shardpy/merge/`` and ``shardpy/shard/`` share it.
"""

from __future__ import annotations

from typing import Any

# Nodes aliases may add beyond the ones written out; a real document that uses
# anchors to avoid repetition stays far below.
ALIAS_BUDGET = 100_000
# Bytes of YAML text read at all: manifests, values and frontmatter are small.
MAX_TEXT = 8 * 1024 * 1024
# A scalar of this many characters weighs one more node (a repeated long string
# costs what its copies would).
_CHARS_PER_NODE = 64


class YamlTooLarge(ValueError):
    """The document would expand past the budget (or is too long, or contains itself)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


_safe: Any = None


def safe_yaml() -> Any:
    """The shared safe loader (C-accelerated when ruamel.yaml.clib is present)."""
    global _safe
    if _safe is None:
        from ruamel.yaml import YAML

        _safe = YAML(typ="safe")
    return _safe


def load(text: str, yaml: Any = None) -> Any:
    """``yaml.load(text)`` (the safe loader by default), refused when too large."""
    if len(text) > MAX_TEXT:
        raise YamlTooLarge(f"the YAML is {len(text):,} characters, over the {MAX_TEXT:,} read at most", 1)
    data = (yaml or safe_yaml()).load(text)
    if "*" in text:
        check_expansion(data, text)
    return data


def check_expansion(data: Any, text: str) -> None:
    """Refuse ``data`` (parsed from ``text``) when its aliases expand past the budget."""
    distinct, expanded = _sizes(data, text)
    if expanded - distinct > ALIAS_BUDGET:
        raise YamlTooLarge(
            f"its aliases expand it to {expanded:,} nodes (more than {ALIAS_BUDGET:,} beyond the "
            f"{distinct:,} written)",
            first_alias_line(text),
        )


def _weight(node: Any) -> int:
    return 1 + len(node) // _CHARS_PER_NODE if isinstance(node, str) else 1


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, (list, tuple, set)):
        return list(node)
    return []


def _sizes(root: Any, text: str) -> tuple[int, int]:
    """(distinct nodes, nodes once every alias is expanded), one pass, no recursion."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    distinct = 0
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            size[key] = _weight(node) + sum(size[id(c)] for c in _children(node))
            continue
        kids = _children(node)
        if not kids:
            # Small scalars are shared by the loader (ints, True, None): each is a
            # written node; only a long string reached again is a repeat.
            weight = _weight(node)
            if weight == 1 or key not in size:
                distinct += weight
            size[key] = weight
            continue
        if key in size:
            continue  # a collection reached again: an alias
        if key in open_:
            raise YamlTooLarge("an alias makes it contain itself", first_alias_line(text))
        distinct += 1
        open_.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in kids)
    return distinct, size[id(root)]


def first_alias_line(text: str) -> int | None:
    """1-based line of the document's first alias (the error path only: a pure-Python parse)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import AliasEvent

    try:
        for event in YAML(typ="safe", pure=True).parse(text):
            if isinstance(event, AliasEvent):
                return int(event.start_mark.line) + 1
    except Exception:  # the text parsed once already; a second opinion is best effort
        return None
    return None
