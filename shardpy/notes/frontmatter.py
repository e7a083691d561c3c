"""The one frontmatter grammar: split a note, read its mapping, add keys without reformatting.

The splitter's contract (:func:`fences`; tests/notes/test_frontmatter.py
round-trips every note through it byte for byte, and
tests/notes/test_disagreements.py pins each case the old copies disagreed on):

* an optional byte-order mark (U+FEFF) may come first; it is kept apart
  (:attr:`Fences.prefix`), never part of the YAML;
* the *opener* is the first line: ``---`` followed only by blanks (spaces,
  tabs), ended by ``\n`` or ``\r\n``; a note whose first line is anything else
  has no frontmatter;
* the *closer* is the next line that is ``---`` followed only by blanks, ended
  by ``\n``, ``\r\n`` or the end of the text (``---\na: 1\n---`` has
  frontmatter and an empty body);
* between them is the YAML text, possibly empty: ``---\n---\n`` is an empty
  block (a present, empty mapping), not a horizontal rule;
* ``...`` does not close: Obsidian and basic-memory (python-frontmatter) read
  only ``---`` as the closer, so a ``...`` line is YAML text (and makes the
  block malformed YAML if nothing closes it later, the note then has none);
* an opener never closed means no frontmatter; a lone CR is not a line end.

Reading follows basic-memory's rules: a note *has* frontmatter when it is
fenced as above and the text between is a YAML mapping (or empty). A closed
block that is not a mapping, or not valid YAML, is *malformed* and the whole
text is body. :func:`split_frontmatter` reads with ruamel's safe loader (the
C one when ruamel.yaml.clib is present); :func:`read_yaml` is the fast
*reading* loader for paths that never write the text back (status): PyYAML's
libyaml loader when installed, read with YAML 1.2's booleans. Both are
bounded by :mod:`shardpy.yamlsafe`.

Writing (:func:`render_block`, the one writer) keeps the source block byte
for byte and appends new keys as lines; only when an existing key must
change is the block re-serialised (with ruamel's round-trip mode, which keeps
comments and order).
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib
import json
import re
from collections.abc import Container

from shardpy.record import Record, field

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any, Literal

    State = Literal["present", "absent", "malformed"]

_OPEN = re.compile(r"---[ \t]*(\r?\n)")
_BOM = "\ufeff"


class Fences(Record, frozen=True):
    """A fenced note: ``prefix + opener + yaml + closer + body == text``."""

    prefix: str  # "" or the byte-order mark
    opener: str  # the ``---`` line with its blanks and line end
    yaml: str  # the text between the fence lines (may be "")
    closer: str  # the closing ``---`` line with its blanks and line end ("" at the end of the text)
    body: str  # everything after the closer
    newline: str  # the opener's line end

    @property
    def block(self) -> str:
        """The whole frontmatter block, fences included (without the prefix)."""
        return self.opener + self.yaml + self.closer


def fences(text: str) -> Fences | None:
    """The note's frontmatter fences as the module's contract reads them; None when unfenced."""
    span = _span(text)
    if span is None:
        return None
    start, yaml_start, begin, end = span
    newline = "\r\n" if text[yaml_start - 2] == "\r" else "\n"
    opener, yaml = text[start:yaml_start], text[yaml_start:begin]
    return Fences(text[:start], opener, yaml, text[begin:end], text[end:], newline)


def _span(text: str) -> tuple[int, int, int, int] | None:
    """(opener start, YAML start, closer start, closer end), or None: :func:`fences` without
    building its parts (status asks this of every note)."""
    start = 1 if text.startswith(_BOM) else 0
    if not text.startswith("---", start):
        return None
    m = _OPEN.match(text, start)
    if m is None:
        return None
    close = _closer(text, m.end() - 1)
    return None if close is None else (start, m.end(), close[0], close[1])


def _closer(text: str, newline: int) -> tuple[int, int] | None:
    """(start, end) of the first closing fence line after the line end at ``newline``.

    What ``^---[ \\t]*(?:\\r?\\n|\\Z)`` (multi-line) finds, by ``str.find``: the
    regex tries every position of the block, twice the cost of the whole key
    check status --verbose does per note (bench/status_verbose_bench.py)."""
    size = len(text)
    idx = text.find("\n---", newline)
    while idx != -1:
        after = idx + 4
        while after < size and text[after] in " \t":
            after += 1
        if after == size:
            return idx + 1, size
        if text[after] == "\n":
            return idx + 1, after + 1
        if text.startswith("\r\n", after):
            return idx + 1, after + 2
        idx = text.find("\n---", idx + 1)
    return None


class Split(Record):
    """A note split at its frontmatter: the YAML, its data and the body."""

    state: State
    fm_text: str  # YAML text between the fences ("" when absent)
    data: dict[str, Any] = field(default_factory=dict)
    body: str = ""  # everything after the closing fence line (whole text unless present)
    newline: str = "\n"
    error: str = ""


def detect_newline(text: str) -> str:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def load_yaml(text: str) -> Any:
    """Parse YAML with ruamel's safe loader, bounded (an alias bomb raises
    :class:`shardpy.yamlsafe.YamlTooLarge`: an imported note is untrusted)."""
    from shardpy.yamlsafe import load

    return load(text)


_fast: Any = None


def _fast_loader() -> Any:
    """PyYAML's libyaml safe loader with YAML 1.2's booleans (``yes``, ``on`` stay
    strings, as ruamel reads them), or None when PyYAML/libyaml is not installed."""
    global _fast
    if _fast is None:
        try:
            yaml = importlib.import_module("yaml")  # PyYAML: optional, and without type stubs here
        except ImportError:
            _fast = False
            return None
        base = getattr(yaml, "CSafeLoader", None)
        if base is None:
            _fast = False
            return None
        bool_tag = "tag:yaml.org,2002:bool"
        resolvers = {
            ch: [(tag, rx) for tag, rx in found if tag != bool_tag]
            for ch, found in base.yaml_implicit_resolvers.items()
        }
        loader: Any = type("ReadingLoader", (base,), {"yaml_implicit_resolvers": resolvers})
        loader.add_implicit_resolver(
            bool_tag, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
        )
        _fast = loader
    return _fast or None


def read_yaml(text: str) -> Any:
    """The fast, bounded *reading* loader: for text that is only read, never written back.

    libyaml through PyYAML when installed (four to ten times ruamel's safe
    loader on a basic-memory block), else :func:`load_yaml`. Bounded as every
    YAML input is (:mod:`shardpy.yamlsafe`: length, nesting, alias expansion).
    It reads YAML 1.2's booleans; 1.1's octal ``010`` and sexagesimal ``1:20``
    still read as numbers here, which no reader of keys sees.
    """
    from shardpy.yamlsafe import MAX_TEXT, YamlTooLarge, check_expansion, check_nesting

    loader = _fast_loader()
    if loader is None:
        return load_yaml(text)
    if len(text) > MAX_TEXT:
        raise YamlTooLarge(f"the YAML is {len(text):,} characters, over the {MAX_TEXT:,} read at most", 1)
    check_nesting(text)
    # A subclass of the safe loader: it builds no arbitrary objects.
    data = importlib.import_module("yaml").load(text, Loader=loader)
    if "*" in text:
        check_expansion(data, text)
    return data


def split_frontmatter(text: str) -> Split:
    """Split ``text`` into frontmatter and body (see the module's contract)."""
    newline = detect_newline(text)
    found = fences(text)
    if found is None:
        return Split("absent", "", body=text, newline=newline)
    fm_text, body = found.yaml, found.body
    if not fm_text.strip():
        return Split("present", fm_text, {}, body, newline)
    simple = simple_mapping(fm_text)
    if simple is not None:
        return Split("present", fm_text, simple, body, newline)
    try:
        data = load_yaml(fm_text)
    except Exception as exc:  # ruamel raises many unrelated types for bad YAML
        first = str(exc).strip().splitlines()
        return Split(
            "malformed", fm_text, body=text, newline=newline, error=first[0] if first else "bad YAML"
        )
    if data is None:
        return Split("present", fm_text, {}, body, newline)
    if not isinstance(data, dict):
        kind = type(data).__name__
        return Split(
            "malformed", fm_text, body=text, newline=newline, error=f"frontmatter is a {kind}, not a mapping"
        )
    return Split("present", fm_text, {str(k): v for k, v in data.items()}, body, newline)


_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_ITEM_LINE = re.compile(r"( *)-(?: +(.*))?")
_SINGLE_QUOTED = re.compile(r"'((?:[^']|'')*)' *")
# Plain scalars YAML (1.1 or 1.2) may read as something other than a string.
_PLAIN_WORDS = frozenset(["true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"])
_NO = object()


def read_keys(text: str, keys: Container[str]) -> tuple[Split, bool]:
    """``text`` split for a reader of ``keys`` only, and whether ``data`` is the whole mapping.

    When :func:`simple_keys` vouches for the block's shape (one ``key:`` line per key, its list
    items under it), ``keys``' values are read by :func:`simple_mapping` from their own lines, so
    a value elsewhere in the block that the simple reader does not take (an importer's
    ``imported_at`` timestamp) costs no YAML loader; ``data`` then holds only ``keys`` (False).
    Anything else is :func:`split_frontmatter`'s whole answer (True). The graph's entity notes
    read this way (tests/graph/test_note.py: both reads give the same entity and render)."""
    found = fences(text)
    if found is None or not found.yaml.strip() or simple_keys(found.yaml) is None:
        return split_frontmatter(text), True
    lines = _key_lines(found.yaml, keys)
    data = simple_mapping(lines) if lines.strip() else {}
    if data is None:
        return split_frontmatter(text), True
    return Split("present", found.yaml, data, found.body, found.newline), False


def _key_lines(fm_text: str, keys: Container[str]) -> str:
    """The lines of ``keys`` in a simple block: each key line with the item lines under it."""
    out: list[str] = []
    keep = False
    for line in fm_text.split("\n"):
        if line[:1] not in (" ", "-", ""):
            keep = line.partition(":")[0] in keys
        if keep:
            out.append(line)
    return "\n".join(out)


def _simple_scalar(text: str) -> Any:
    """The string (or None) YAML reads from a one-line scalar, or ``_NO`` when not sure."""
    text = text.rstrip(" ")
    if not text:
        return None
    c = text[0]
    if c == "'":
        m = _SINGLE_QUOTED.fullmatch(text)
        return _NO if m is None else m.group(1).replace("''", "'")
    if c == '"':
        if len(text) < 2 or text[-1] != '"' or "\\" in text or '"' in text[1:-1]:
            return _NO
        return text[1:-1]
    # A plain scalar that starts with a letter is a string unless it is a YAML
    # word (true, null, yes...); ": ", " #" and a final ":" would change its meaning.
    if not c.isalpha() or text.lower() in _PLAIN_WORDS:
        return _NO
    if ": " in text or " #" in text or text[-1] == ":":
        return _NO
    return text


_FLOW_UNSAFE = frozenset("[]{},:#&*!|>'\"%@`?")


def _simple_flow(text: str) -> Any:
    """The list YAML reads from a one-line flow sequence of plain words (``[a, b c]``), else ``_NO``."""
    text = text.rstrip(" ")
    if not text.endswith("]"):
        return _NO
    inner = text[1:-1]
    if not inner.strip(" "):
        return []
    out = []
    for item in inner.split(","):
        item = item.strip(" ")
        # A plain flow scalar: no indicator characters at all, so no YAML rule can change it.
        if not item or _FLOW_UNSAFE & set(item) or _simple_scalar(item) is _NO:
            return _NO
        out.append(item)
    return out


def simple_mapping(fm_text: str) -> dict[str, Any] | None:
    """The mapping YAML reads from a *simple* frontmatter block, without a YAML parser; else None.

    Simple: ``key: value`` lines at column 0 whose values are one-line quoted
    scalars or plain scalars that are plainly strings, and empty keys followed
    by ``- item`` lines of such scalars (a list), and one-line flow lists of
    plain words (``tags: [a, b]``). Anything else (comments,
    nested mappings, numbers, dates, flow collections, escapes, tabs,
    duplicate keys, multi-line scalars) returns None and the caller asks the
    YAML loader. Where this answers, the loader gives the same mapping
    (property-tested in tests/importers/test_fastpaths.py); four times faster
    than even ruamel's C loader for the usual basic-memory block.
    """
    lines = _content_lines(fm_text)
    if lines is None:
        return None
    data: dict[str, Any] = {}
    items: list[Any] | None = None  # the list being filled (after an empty key)
    item_indent = -1
    key = ""
    for line in lines:
        if line[0] == " " or line[0] == "-":
            item = _list_item(line, item_indent)
            if item is None or items is None:
                return None
            raw, item_indent = item
            value = None if raw is None else _simple_scalar(raw)
            if value is _NO:
                return None
            items.append(value)
            continue
        if items is not None:
            data[key] = items or None
            items = None
        entry = _key_line(line, data)
        if entry is None:
            return None
        key, raw = entry
        if raw is None:  # an empty value: a list of items may follow
            data[key] = None
            items, item_indent = [], -1
            continue
        value = _simple_flow(raw) if raw.startswith("[") else _simple_scalar(raw)
        if value is _NO:
            return None
        data[key] = value
    if items is not None:
        data[key] = items or None
    return data or None  # a blank block is YAML's None, decided by the caller


def _content_lines(fm_text: str) -> list[str] | None:
    """The block's non-blank lines without their CR; None when one holds a tab, CR,
    control or format character or an unusual space (YAML decides those)."""
    lines: list[str] = []
    for line in fm_text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip(" "):
            continue
        if not line.isprintable():
            return None
        lines.append(line)
    return lines


def _list_item(line: str, indent: int) -> tuple[str | None, int] | None:
    """(the value text or None, the indent) of a ``- item`` line at the list's
    ``indent`` (-1: the first item sets it); None when it is not one."""
    m = _ITEM_LINE.fullmatch(line)
    if m is None:
        return None
    found = len(m.group(1))
    if indent != -1 and found != indent:
        return None
    return m.group(2), found


def _key_line(line: str, seen: Container[str]) -> tuple[str, str | None] | None:
    """(key, value text; None when empty) of a ``key: value`` line at column 0 with a
    new, plain key; None otherwise."""
    m = _KEY_LINE.fullmatch(line)
    if m is None:
        return None
    key = m.group(1)
    if key in seen or key.lower() in _PLAIN_WORDS:
        return None
    raw = m.group(2)
    return key, None if raw is None or not raw.strip(" ") else raw


_INT = re.compile(r"[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# An ISO timestamp as importers write it (``imported_at: 2026-12-03T18:56:21.641Z``).
_STAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)
# Digits, letters and dashes with a letter in them, none of "." ":" "_" "+": a string in YAML 1.1
# and 1.2 unless it is a hex, octal or binary number or a 1.2 float such as 1e5 or 1E-5.
_DIGIT_WORD = re.compile(r"[0-9][0-9-]*[A-Za-z][0-9A-Za-z-]*")
_NUMBER_LIKE = re.compile(r"0[xXoObB].*|[0-9]+[eE]-?[0-9]+")
_FLOW_WORDS = re.compile(r"\[ *(?:[A-Za-z][A-Za-z0-9_/.-]*(?: *, *[A-Za-z][A-Za-z0-9_/.-]*)*)? *\] *")


def _loadable_scalar(text: str) -> bool:
    """True when YAML surely loads this one-line value (whatever its type):
    what :func:`_simple_scalar` reads as a string, a plain text that starts with
    a non-ASCII character (``🚀 Launch``, an imported title), a whole number, a
    valid ``YYYY-MM-DD`` date or a flow list of plain words. Else False: the caller asks YAML."""
    if _simple_scalar(text) is not _NO:
        return True
    text = text.rstrip(" ")
    if text and text[0] > "\x7f" and text[0] != _BOM:
        # No indicator is non-ASCII, and the line is printable (_content_lines): a plain scalar
        # unless ": " or " #" in it, or a final ":", would change its meaning.
        return ": " not in text and " #" not in text and text[-1] != ":"
    if _INT.fullmatch(text):
        return True
    if _DATE.fullmatch(text):
        try:
            _dt.date.fromisoformat(text)
        except ValueError:
            return False  # YAML would fail on it too: let it decide
        return True
    if _STAMP.fullmatch(text):
        return _valid_stamp(text)
    if _DIGIT_WORD.fullmatch(text):  # an id such as 885ee114-3071-4b9e (originSessionId)
        return _NUMBER_LIKE.fullmatch(text) is None
    return _FLOW_WORDS.fullmatch(text) is not None


def _valid_stamp(text: str) -> bool:
    """True when the timestamp names a real moment (YAML would fail on 25:00 or 02-30 too: let it decide)."""
    try:
        _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


# The commonest blocks, checked in one regex pass (C speed) before the line-by-line
# reader below: ASCII only, no blank lines, every value one of the kinds
# _loadable_scalar accepts, written so that each is a subset of it (plain words
# that are no YAML word, whole numbers, dates that exist, word flow lists, quoted
# text without escapes, "- item" lists at one indent). A block it does not match
# goes to the line reader, which decides as before.
_WORDS = "true|false|yes|no|on|off|null|y|n"
_PLAIN = rf"(?!(?i:{_WORDS}) *$)[A-Za-z][A-Za-z0-9 _./,()+-]*"
_DAY = (
    r"(?!0000)[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
# An ISO timestamp on a day _DAY accepts (the importers' ``imported_at``): a subset of _STAMP
# that fromisoformat accepts, so _loadable_scalar would say yes to it too.
_TIME = (
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?"
)
_WORD_LIST = r"\[ *(?:[A-Za-z][A-Za-z0-9_/.-]*(?: *, *[A-Za-z][A-Za-z0-9_/.-]*)*)? *\]"
_QUOTED = r"'[ -&(-~]*'|\"[ !#-\[\]-~]*\""
_VALUE = rf"(?:{_PLAIN}|[0-9]+|{_DAY}(?:{_TIME})?|{_WORD_LIST}|{_QUOTED}) *"
_ITEMS = rf"(?:\n(?P<ind> *)-(?: +{_VALUE})?(?:\n(?P=ind)-(?: +{_VALUE})?)*)?"
_PLAIN_BLOCK = rf"(?:[A-Za-z_][A-Za-z0-9_-]*:(?: +{_VALUE}| *{_ITEMS})(?:\n|\Z))+"
_BLOCK_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):", re.MULTILINE)


@functools.cache
def _plain_block() -> re.Pattern[str]:
    # Compiled when first used, not at import: 4 ms, paid by every command that imports the notes
    # package (a sync that merges no frontmatter, issue 30) while only key readers need it.
    return re.compile(_PLAIN_BLOCK, re.MULTILINE)


def _plain_block_keys(fm_text: str) -> list[str] | None:
    """The keys of a block :data:`_PLAIN_BLOCK` matches whole (new, non-YAML-word keys), else None."""
    if _plain_block().fullmatch(fm_text) is None:
        return None
    keys = _BLOCK_KEY.findall(fm_text)
    if len(set(keys)) != len(keys) or not _PLAIN_WORDS.isdisjoint(map(str.lower, keys)):
        return None
    return keys


def simple_keys(fm_text: str) -> list[str] | None:
    """The top-level keys YAML reads from a simple frontmatter block, in order,
    without a YAML parser (for checks that need only which keys a note has);
    else None and the caller asks the YAML loader.

    The shape :func:`simple_mapping` accepts, with more value kinds (see
    :func:`_loadable_scalar`): the dates and numbers of ordinary notes. Where
    this answers, YAML loads a mapping with these keys (property-tested in
    tests/install/test_status_fast.py).
    """
    fast = _plain_block_keys(fm_text)
    return fast if fast is not None else _line_keys(fm_text)


def _line_keys(fm_text: str) -> list[str] | None:
    """:func:`simple_keys` read line by line: every shape it accepts, and under an
    empty key either ``- item`` lines or one level of ``  key: value`` lines (the
    ``metadata:`` mapping a Claude Code memory keeps; issue 25)."""
    lines = _content_lines(fm_text)
    if lines is None:
        return None
    keys: list[str] = []
    seen: set[str] = set()
    under: _Under | None = None  # what the last empty key holds so far
    for line in lines:
        if line[0] == " " or line[0] == "-":
            if under is None or not under.take(line):
                return None
            continue
        under = None
        entry = _key_line(line, seen)
        if entry is None:
            return None
        key, raw = entry
        seen.add(key)
        keys.append(key)
        if raw is None:
            under = _Under()
        elif not _loadable_scalar(raw):
            return None
    return keys or None  # a blank block is YAML's None, decided by the caller


class _Under:
    """The lines under an empty top-level key: one list of ``- item`` lines at one indent,
    or one mapping of ``key: value`` lines at one indent (new plain keys, loadable values)."""

    __slots__ = ("indent", "nested", "seen")

    def __init__(self) -> None:
        self.indent = -1
        self.nested: bool | None = None  # None until the first line says which
        self.seen: set[str] = set()

    def take(self, line: str) -> bool:
        """Whether ``line`` continues what is under the key as YAML surely reads it."""
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        nested = not body.startswith("-")
        if self.nested is not None and (nested != self.nested or indent != self.indent):
            return False
        if nested:
            entry = _key_line(body, self.seen) if indent > 0 else None
            if entry is None or entry[1] is None:  # a deeper level: YAML decides
                return False
            self.seen.add(entry[0])
            raw: str | None = entry[1]
        else:
            item = _list_item(line, self.indent)
            if item is None:
                return False
            raw = item[0]
        self.nested, self.indent = nested, indent
        return raw is None or _loadable_scalar(raw)


def fence_end(text: str) -> int | None:
    """Where the note's closing fence line ends (its frontmatter block is ``text[:end]``); None
    when unfenced. What :func:`split_frontmatter` cuts, without its records (the sync driver asks
    it of three texts per note; issue 30)."""
    span = _span(text)
    return None if span is None else span[3]


def fenced_block(text: str) -> str | None:
    """The YAML text between a note's fences (see the module's contract); None when unfenced."""
    span = _span(text)
    return None if span is None else text[span[1] : span[2]]


def parse_frontmatter(text: str) -> dict[str, Any] | None:
    """The note's YAML frontmatter mapping; None when it has none or it is broken.

    Only read (status), so the fast reading loader (:func:`read_yaml`): ruamel's pure-Python
    round-trip loader made status --verbose 250 times plain status on an
    imported vault (issue 25; bench/status_verbose_bench.py)."""
    block = fenced_block(text)
    if block is None:
        return None
    try:
        data = read_yaml(block)
    except Exception:  # PyYAML and ruamel raise many unrelated types for bad YAML
        return None
    return data if isinstance(data, dict) else None


def frontmatter_keys(text: str) -> list[Any]:
    """The keys of the note's frontmatter mapping ([] when it has none or it is
    broken): read without YAML when the block is simple, as most notes' are."""
    block = fenced_block(text)
    if block is None:
        return []
    keys = simple_keys(block)
    if keys is not None:
        return keys
    return list(parse_frontmatter(text) or {})


def split_fences(text: str) -> tuple[str, str, str] | None:
    """(YAML text, body, newline) when ``text`` opens and closes a fence; YAML is not parsed."""
    found = fences(text)
    return None if found is None else (found.yaml, found.body, found.newline)


def as_text(value: Any) -> str | None:
    """basic-memory's normalisation of a scalar key (title, type): lists join with ", "."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, _dt.datetime):
        return _iso_datetime(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(s for s in (as_text(v) for v in value) if s is not None)
    return str(value)


def _iso_datetime(value: _dt.datetime) -> str:
    """ISO-8601 as people write it: UTC as ``Z``, milliseconds when that is all there is."""
    text = value.isoformat()
    if value.microsecond % 1000 == 0 and value.microsecond:
        text = text.replace(f".{value.microsecond:06d}", f".{value.microsecond // 1000:03d}")
    if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
        text = text.removesuffix("+00:00") + "Z"
    return text


def as_list(value: Any) -> list[str]:
    """A key that may hold one string or a list (aliases, tags)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [s for s in (as_text(v) for v in value) if s]
    text = as_text(value)
    return [text] if text else []


# A plain scalar is used only when YAML 1.1 and 1.2 both read it back as the
# same string; anything else is written as a JSON string, which is a valid
# YAML double-quoted scalar.
# Compiled on first use (re's cache), not at import: its Unicode ranges cost ~20 ms, paid by
# every start that reads a note - the merge driver's, once per file (issue 30, the driver's cost).
_PLAIN_OK = r"[A-Za-z_\u00a0-\U0010ffff][\w .,/@()+\u00a0-\U0010ffff-]*"
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")


def yaml_scalar(value: str) -> str:
    if _TIMESTAMP.fullmatch(value):
        return value
    if (
        re.fullmatch(_PLAIN_OK, value)
        and value == value.strip()
        and value.isprintable()
        and value.lower() not in _PLAIN_WORDS
        and " #" not in value
    ):
        return value
    quoted = json.dumps(value, ensure_ascii=False)
    if quoted.isprintable():
        return quoted
    # YAML refuses raw control characters (DEL, NEL, C1...) that JSON leaves alone.
    return "".join(c if c.isprintable() else _escape(c) for c in quoted)


def _escape(c: str) -> str:
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def yaml_item(key: str, value: str | list[str], newline: str) -> str:
    if isinstance(value, list):
        lines = [f"{key}:"] + [f"- {yaml_scalar(v)}" for v in value]
        return newline.join(lines) + newline
    return f"{key}: {yaml_scalar(value)}{newline}"


def render_block(
    fm_text: str,
    data: dict[str, Any],
    updates: list[tuple[str, str | list[str]]],
    newline: str,
) -> str:
    """The frontmatter block (with fences) for ``fm_text`` plus ``updates``.

    Keys absent from ``data`` are appended as lines; keys already present with
    the same value are left alone; if any present key must change the block is
    re-serialised in round-trip mode.
    """
    to_append: list[tuple[str, str | list[str]]] = []
    to_replace: list[tuple[str, str | list[str]]] = []
    for key, value in updates:
        if key not in data:
            to_append.append((key, value))
        elif _same(data[key], value):
            continue
        else:
            to_replace.append((key, value))
    text = fm_text
    if to_replace:
        text = _replace_keys(fm_text, to_replace, newline)
    if text and not text.endswith("\n"):
        text += newline
    text += "".join(yaml_item(k, v, newline) for k, v in to_append)
    return f"---{newline}{text}---{newline}"


def _same(current: Any, value: str | list[str]) -> bool:
    if isinstance(value, list):
        return isinstance(current, list) and as_list(current) == value
    return isinstance(current, str) and current == value


def _replace_keys(fm_text: str, updates: list[tuple[str, str | list[str]]], newline: str) -> str:
    """``fm_text`` with each key's lines replaced (notes/keylines.py: every other byte as written);
    a block whose keys cannot be placed line by line goes through the YAML round trip, on its LF
    text (a comment's CR was doubled in a CRLF note: tests/serve/test_supersede_bytes.py)."""
    from shardpy.notes.keylines import with_lines

    lf = fm_text.replace("\r\n", "\n")
    text: str | None = lf
    for key, value in updates:
        text = None if text is None else with_lines(text, key, yaml_item(key, value, "\n").splitlines(True))
    if text is None:
        text = _roundtrip_replace(lf, updates)
    return text.replace("\n", newline) if newline != "\n" else text


def _roundtrip_replace(fm_text: str, updates: list[tuple[str, str | list[str]]]) -> str:
    """The block re-serialised with ``updates``; a block ruamel's round trip cannot read (PyYAML
    read it) is NOTE_NOT_EDITABLE, never a traceback."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from shardpy.errors import ShardpyError
    from shardpy.yamlsafe import load

    rt = YAML()
    rt.width = 4096
    rt.preserve_quotes = True
    try:
        doc = load(fm_text, rt)
    except YAMLError as exc:
        raise ShardpyError(
            "NOTE_NOT_EDITABLE",
            f"The note's frontmatter cannot be rewritten key by key ({type(exc).__name__})",
            "Set the keys by hand, or make the frontmatter plain `key: value` lines.",
        ) from exc
    for key, value in updates:
        doc[key] = value
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue()
