"""Bounded YAML reading: the one guard every YAML input passes through.

A shard, a values file or an imported note is untrusted text. YAML aliases
let a few hundred bytes name a billion nodes (``b: &b [*a,*a,…]`` nested nine
deep): ruamel builds such a document cheaply, with the repeats shared, but
every walk over it afterwards (copying to plain data, validating, dumping)
visits each repeat. :func:`load` parses, then counts the document's expanded
size with one pass over its distinct nodes and refuses it when aliases add
more than :data:`ALIAS_BUDGET` nodes, or make it contain itself. Documents
without a ``*`` cannot hold an alias and skip the count.

Nesting is bounded too (:data:`MAX_DEPTH`): ``tags: [[[…400 deep…]]]`` in an
800-byte note made every recursive walk over the data (a frontmatter value's
text, a copy, a JSON dump) raise ``RecursionError``, and ~100,000 levels crash
the C loader itself (its composer recurses on the C stack: a segmentation
fault, not an exception). So the depth is settled *before* the loader runs:
:func:`depth_bound` is a cheap upper bound read off the text; only when it
exceeds the limit does :func:`check_depth` walk the parser's events (the
parser keeps its own stack, it never recurses) and stop at the first node
past the limit. Aliases can nest without the text nesting: the expansion count
measures the expanded depth as well. Both raise :class:`YamlTooDeep`, a
:class:`YamlTooLarge` (tests/security/test_search_inputs.py).

This module sits below every package (no shardpy imports) so that
``shardpy/notes/frontmatter.py``, ``shardpy/merge/`` and ``shardpy/shard/`` share it.
"""

from __future__ import annotations

import re
from typing import Any

# Nodes aliases may add beyond the ones written out; a real document that uses
# anchors to avoid repetition stays far below.
ALIAS_BUDGET = 100_000
# Bytes of YAML text read at all: manifests, values and frontmatter are small.
MAX_TEXT = 8 * 1024 * 1024
# A scalar of this many characters weighs one more node (a repeated long string
# costs what its copies would).
_CHARS_PER_NODE = 64
# Collections inside collections: real manifests, values and frontmatter nest a
# handful deep; every recursive walk in Python stays far below its stack limit.
MAX_DEPTH = 64
# The indentation of a line and the indicators that may open a block collection
# before its first entry on that line (``- - - a``, ``? - a``, ``: - a``).
_BLOCK_PREFIX = re.compile(r"^[ \t\-?:]*", re.MULTILINE)
_FLOW_OPEN = re.compile(r"[\[{]")


class YamlTooLarge(ValueError):
    """The document would expand past the budget (or is too long, or contains itself)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class YamlTooDeep(YamlTooLarge):
    """Collections nested more than :data:`MAX_DEPTH` deep (written out, or through aliases)."""


def _too_deep(line: int | None) -> YamlTooDeep:
    return YamlTooDeep(f"it nests collections more than {MAX_DEPTH} deep", line)


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
    check_nesting(text)
    data = (yaml or safe_yaml()).load(text)
    if "*" in text:
        check_expansion(data, text)
    return data


def check_nesting(text: str) -> None:
    """Raise :class:`YamlTooDeep` when ``text`` nests collections past :data:`MAX_DEPTH` (before any
    loader sees it: for YAML another library reads, like copier's copier.yml, too)."""
    if depth_bound(text) > MAX_DEPTH:
        check_depth(text)


def depth_bound(text: str) -> int:
    """An upper bound of the document's nesting, from the text alone (no parse).

    Block collections nested in each other indent further every second level
    (a sequence may sit at its mapping key's indentation, never two in a row),
    and each level's first entry starts after only indentation and the
    indicators ``-``, ``?``, ``:``: block depth <= 2 * (longest such prefix + 1).
    Flow collections sit inside block ones, each opened by its own ``[`` or ``{``
    (counted everywhere, in quotes and comments too: an over-estimate only
    costs the exact check)."""
    prefix = max((m.end() - m.start() for m in _BLOCK_PREFIX.finditer(text)), default=0)
    return 2 * (prefix + 1) + len(_FLOW_OPEN.findall(text))


def check_depth(text: str) -> None:
    """Refuse ``text`` when the parser opens more than :data:`MAX_DEPTH` nested collections.

    The events stop being read at the first collection past the limit (the
    parser's cost grows with the depth). A syntax error is left to the loader to
    report."""
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent

    depth = 0
    try:
        for event in safe_yaml().parse(text):
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(int(event.start_mark.line) + 1)
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except YamlTooDeep:
        raise
    except Exception:  # ruamel raises many unrelated types for bad YAML; the loader names it
        return


def check_expansion(data: Any, text: str) -> None:
    """Refuse ``data`` (parsed from ``text``) when its aliases expand past the budget."""
    distinct, expanded, depth = _sizes(data, text)
    if depth > MAX_DEPTH:
        raise _too_deep(first_alias_line(text))
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


def _sizes(root: Any, text: str) -> tuple[int, int, int]:
    """(distinct nodes, nodes once every alias is expanded, collections nested in the expansion),
    one pass, no recursion."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    distinct = 0
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            kids = _children(node)
            size[key] = _weight(node) + sum(size[id(c)] for c in kids)
            height[key] = 1 + max((height.get(id(c), 0) for c in kids), default=0)
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
    return distinct, size[id(root)], height.get(id(root), 0)


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
