"""One file of a git merge, merged by what it is (pure: bytes in, bytes out).

git hands the driver three versions of a path — the common ancestor ``%O``,
ours ``%A`` and theirs ``%B`` — and the path ``%P``. The path says which rule
applies:

* a note (any other path) without frontmatter on any side: the line merge of
  :func:`shardpy.merge.merge3` on the bytes as they are — ``git merge-file``'s
  result wherever git merges cleanly, plus "both added here" kept;
* a note with frontmatter: :func:`shardpy.merge.merge_document` — the body
  by lines, frontmatter key by key, tag and alias lists
  as three-way sets, "both added here" kept; a key changed differently on
  both sides keeps our value in the YAML and shows both values in a conflict
  block at the top of the body, so the YAML always parses;
* ``shard-values.yaml``: key by key like frontmatter; a key changed
  differently keeps our value (no markers in YAML) and is a conflict;
* ``.shardmind/state.json``: entry by entry (:mod:`shardpy.gitsync.state`);
* ``.shardmind/imports/ledger.sqlite3``: record by record (see
  :mod:`shardpy.gitsync.ledger`, which works on files, not bytes);
* anything else under ``.shardmind/`` (cached manifest, schema, template
  sources, pinned bases): copies of a shard release, never blended — one
  side's copy, or a conflict keeping ours;
* a JSON or YAML file (``.json``, ``.canvas``, ``.base``, ``.yml``,
  ``.yaml``: Obsidian's settings, a plugin's ``data.json``, a canvas, a
  base): by lines where that gives a file that parses; else, for JSON, value
  by value (:mod:`shardpy.gitsync.jsonmerge`); else ours kept whole, a
  conflict — never markers, which no reader takes (a plugin reset its
  settings, a canvas or base would not open).

Clean results do not depend on which side is "ours": the two sides are put
in a canonical order (by their bytes) before merging, so merging A into B and
B into A give the same bytes. A conflicted result is merged again with ours
first, so the markers read ``<<<<<<< ours`` … ``>>>>>>> theirs`` as git's do.
"""

from __future__ import annotations

from shardpy.gitsync.result import FileKind, FileMerge
from shardpy.vault import layout

__all__ = ["kind_of", "merge_bytes"]

OURS = "ours"
THEIRS = "theirs"


def kind_of(path: str) -> FileKind:
    """The rule for ``path`` (relative to the repository top; the vault may be a subfolder)."""
    # PurePosixPath(...).parts without building a path object per file (sync merges hundreds).
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if layout.SIDECAR in parts:
        rest = "/".join(parts[parts.index(layout.SIDECAR) :])
        if rest == layout.STATE:
            return FileKind.STATE
        if rest == "/".join((layout.SIDECAR, "imports", "ledger.sqlite3")):
            return FileKind.LEDGER
        return FileKind.RECORD
    if parts and parts[-1] == layout.VALUES_FILE:
        return FileKind.VALUES
    if parts and parts[-1].lower().endswith(_DATA_SUFFIXES):
        return FileKind.DATA
    return FileKind.NOTE


_JSON_SUFFIXES = (".json", ".canvas")
_DATA_SUFFIXES = (*_JSON_SUFFIXES, ".base", ".yml", ".yaml")  # and YAML: Obsidian's bases


def trivial(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The result when at most one side changed (git's own shortcut), else None."""
    if ours == theirs or base == theirs:
        return ours
    if base == ours:
        return theirs
    return None


def merge_bytes(base: bytes, ours: bytes, theirs: bytes, path: str) -> FileMerge:
    """Merge one file (any kind but the ledger, which needs files on disk)."""
    kind = kind_of(path)
    same = trivial(base, ours, theirs)
    if same is not None:
        return FileMerge(kind, same, True)
    if kind is FileKind.STATE:
        from shardpy.gitsync.state import merge_state

        return merge_state(base, ours, theirs)
    if kind is FileKind.VALUES:
        return merge_values(base, ours, theirs)
    if kind is FileKind.NOTE:
        return merge_note(base, ours, theirs)
    if kind is FileKind.DATA:
        return merge_data(base, ours, theirs, path)
    return FileMerge(
        kind,
        ours,
        False,
        ["both machines changed this copy of a shard release differently; kept ours"],
    )


def merge_data(base: bytes, ours: bytes, theirs: bytes, path: str) -> FileMerge:
    """A JSON or YAML file: the line merge when it is clean and parses; else ours whole, a conflict.
    Ours is kept as written (even if it does not parse: it is what this machine had), theirs
    stays in the merge commit's second parent (tests/sync/test_sync.py, a plugin's data.json)."""
    json = path.lower().endswith(_JSON_SUFFIXES)
    lines = merge_note(base, ours, theirs)
    if lines.clean and _parses(lines.data, json=json):
        return FileMerge(FileKind.DATA, lines.data, True)
    if json:
        from shardpy.gitsync.jsonmerge import merge_json

        # Touching lines (neighbouring settings, a plugin enabled on each machine): value by value.
        by_value = merge_json(base, ours, theirs)
        if by_value is not None:
            return FileMerge(FileKind.DATA, by_value, True)
    return FileMerge(
        FileKind.DATA,
        ours,
        False,
        [
            "both machines changed this file where no line merge parses: kept this machine's; "
            "the other's is in the merge commit's second parent"
        ],
    )


def _parses(data: bytes, *, json: bool) -> bool:
    """``data`` reads as JSON (``json``) or YAML: no markers, no line merge that broke it."""
    try:
        text = data.decode("utf-8")
        if json:
            import json as json_module

            # A key twice is not a merge that parses: the reader keeps one and drops the other
            # side's value without a word (a key each machine added; helper-found).
            json_module.loads(text, object_pairs_hook=_no_twice)
            return True
        from ruamel.yaml.error import YAMLError

        from shardpy.yamlsafe import load

        try:
            load(text)
        except YAMLError:
            return False
    except (ValueError, RecursionError):  # JSON's, and yamlsafe's too large or too deep
        return False
    return True


def _no_twice(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key twice")
    return dict(pairs)


def merge_note(base: bytes, ours: bytes, theirs: bytes) -> FileMerge:
    """A note: git's line merge exactly when no side has frontmatter, else merge_document."""
    try:
        texts = [x.decode("utf-8") for x in (base, ours, theirs)]
    except UnicodeDecodeError:
        texts = []
    if not texts or any("\0" in t for t in texts):
        # merge_document's notion of binary: never merged by lines.
        return FileMerge(FileKind.NOTE, ours, False, ["binary file changed on both sides: kept ours"])
    blocks = _blocks(texts)
    if not any(b is not None for b in blocks):
        return _lines(*texts)
    try:
        sides = _settled(texts, ours, theirs)
        if sides == (ours, theirs) and _same_plain_block(texts, blocks):
            return _lines(*texts)
        return _document(base, *sides)
    except RecursionError:
        # yamlsafe bounds YAML nesting first; should anything still recurse too deep, the
        # note is merged as plain text, never a traceback (tests/security/test_driver_shapes.py).
        return _lines(*texts)


def _settled(texts: list[str], ours: bytes, theirs: bytes) -> tuple[bytes, bytes]:
    """Both sides with the scalar keys their revision stamps settle (docs/GIT.md, "Revision stamps")."""
    from shardpy.merge.revisions import resolve_sides

    settled = resolve_sides(*texts)
    if settled is None:
        return ours, theirs
    return settled[0].encode("utf-8"), settled[1].encode("utf-8")


def _same_plain_block(texts: list[str], blocks: list[str | None]) -> bool:
    """The same frontmatter block on all three sides, LF line ends, no BOM.

    merge_document merges such a note by lines as a whole ("neither side changed the YAML
    block") and writes the result back unchanged, so the note is merged by :func:`_lines`
    without decoding, splitting and re-encoding each side again: the same bytes, a third of
    the cost of a sync merging hundreds of notes (issue 30, the driver's cost;
    tests/gitsync/test_driver_properties.py compares the two). ``blocks``: each text's
    :func:`_blocks` (without a CR or a BOM, the block of the text as it is).
    """
    if any("\r" in t or t.startswith("\ufeff") for t in texts):
        return False
    return blocks[0] is not None and blocks[1] == blocks[0] and blocks[2] == blocks[0]


def _blocks(texts: list[str]) -> list[str | None]:
    """Each note's frontmatter block (fences included) read with LF line ends after any BOM,
    None without one: read once per side (issue 30, the driver's cost)."""
    from shardpy.notes.frontmatter import fence_end  # once for the three sides

    out: list[str | None] = []
    for text in texts:
        # Cheap test first (most notes start otherwise), the real grammar only when it may apply.
        text = text.removeprefix("\ufeff")
        if not text.startswith("---"):
            out.append(None)
            continue
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        end = fence_end(text)
        out.append(None if end is None else text[:end])
    return out


def _lines(base: str, ours: str, theirs: str) -> FileMerge:
    # Bytes as they are (CRLF, BOM): where git merges cleanly, this is git's result.
    from shardpy.merge.text import merge3

    first, second = sorted((ours, theirs))
    r = merge3(base, first, second, user_label=OURS, shard_label=THEIRS)
    if not r.clean:
        r = merge3(base, ours, theirs, user_label=OURS, shard_label=THEIRS)
    messages = [] if r.clean else [f"{len(r.conflicts)} conflicting region(s) in the text"]
    return FileMerge(FileKind.NOTE, r.text.encode("utf-8"), r.clean, messages)


_BOM = "\ufeff".encode()


def _endings(data: bytes) -> bytes | None:
    """The file's one line ending (CRLF or LF), None when mixed or without a line break."""
    if b"\r" not in data:  # memchr: counting "\r\n" costs several times more, and most files have no CR
        return b"\n" if b"\n" in data else None
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    if bool(crlf) == bool(lf):
        return None
    return b"\r\n" if crlf else b"\n"


def _as_sides_wrote(base: bytes, ours: bytes, theirs: bytes, data: bytes) -> bytes:
    """``data`` with the BOM and line-ending style a side changed (merge_document follows its first side).

    Each is merged three ways as a whole-file property: the side that changed it from the
    base wins (both changed it alike, or neither: unchanged). Before, a BOM ours added was
    dropped when theirs sorted first (issue 24 item 11; tests/security/test_driver_shapes.py).
    """
    boms = [x.startswith(_BOM) for x in (base, ours, theirs)]
    bom = boms[1] if boms[1] != boms[0] else boms[2]
    data = (_BOM if bom else b"") + data.removeprefix(_BOM)
    ends = [_endings(x) for x in (base, ours, theirs)]
    end = ends[1] if ends[1] != ends[0] else ends[2]
    if end is not None and _endings(data) != end:
        data = data.replace(b"\r\n", b"\n")
        data = data.replace(b"\n", b"\r\n") if end == b"\r\n" else data
    return data


def _document(base: bytes, ours: bytes, theirs: bytes) -> FileMerge:
    from shardpy.merge.document import merge_document

    first, second = sorted((ours, theirs))
    r = merge_document(base, first, second, user_label=OURS, shard_label=THEIRS, key_conflicts="markers")
    if r.kind == "clean":
        return FileMerge(FileKind.NOTE, _as_sides_wrote(base, ours, theirs, r.data), True)
    if first is not ours:
        r = merge_document(base, ours, theirs, user_label=OURS, shard_label=THEIRS, key_conflicts="markers")
    messages = [f"frontmatter key '{c.key}' changed on both sides" for c in r.frontmatter_conflicts]
    if r.frontmatter_fallback:
        messages.append(f"frontmatter not merged key by key ({r.frontmatter_fallback})")
    body = len(r.conflicts) - (1 if r.frontmatter_conflicts or r.frontmatter_fallback else 0)
    if body > 0:
        messages.append(f"{body} conflicting region(s) in the text")
    return FileMerge(FileKind.NOTE, _as_sides_wrote(base, ours, theirs, r.data), False, messages)


def merge_values(base: bytes, ours: bytes, theirs: bytes) -> FileMerge:
    """shard-values.yaml, key by key; a key both changed differently keeps ours (a conflict)."""
    from shardpy.merge.frontmatter import merge_frontmatter

    try:
        texts = [b.decode("utf-8") for b in (base, ours, theirs)]
    except UnicodeDecodeError:
        return FileMerge(FileKind.VALUES, ours, False, ["not UTF-8 text: kept ours"])
    first, second = sorted((texts[1], texts[2]))
    fm = merge_frontmatter(texts[0], first, second)
    if fm.inner is not None and not fm.conflicts:
        clean = _values_kept(texts[0], first, second, fm.inner)
        if clean is None:
            return FileMerge(FileKind.VALUES, ours, False, [f"not merged: {_COMMENT_LOST}; kept ours"])
        return FileMerge(FileKind.VALUES, clean.encode("utf-8"), True)
    if fm.inner is None:
        return FileMerge(FileKind.VALUES, ours, False, [f"not merged: {fm.fallback_reason}; kept ours"])
    if first is not texts[1]:
        fm = merge_frontmatter(texts[0], texts[1], texts[2])
    assert fm.inner is not None
    messages = [
        f"'{c.key}' changed on both sides: ours {d['user']}, theirs {d['shard']} (kept ours)"
        for c in fm.conflicts
        for d in [c.to_dict()]
    ]
    return FileMerge(FileKind.VALUES, fm.inner.encode("utf-8"), False, messages)


_COMMENT_LOST = "a key-level merge would drop a comment one side added or removed"


def _values_kept(base: str, first: str, second: str, merged: str) -> str | None:
    """A clean values merge that keeps what both sides wrote, else None (a conflict).

    As for a note's frontmatter (shardpy.merge.document._nothing_lost): git's line merge
    when clean and holding the same data, else the key-level merge from either side's
    document that loses no comment (tests/security/test_driver_shapes.py).
    """
    from shardpy.merge.frontmatter import comments_kept, merge_frontmatter, same_data
    from shardpy.merge.text import merge3

    lines = merge3(base, first, second, user_label=OURS, shard_label=THEIRS)
    if lines.clean and same_data(lines.text, merged):
        return lines.text
    if comments_kept(base, first, second, merged):
        return merged
    other = merge_frontmatter(base, second, first)
    if other.inner is not None and not other.conflicts and comments_kept(base, first, second, other.inner):
        return other.inner
    return None
