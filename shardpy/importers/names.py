"""Vault file names for imported notes.

A title becomes the file name when it is safe everywhere the vault may be
opened (Linux, macOS, Windows, Obsidian's own link syntax); otherwise a
sanitised name is used and the caller keeps the title in ``aliases``.
"""

from __future__ import annotations

import re

from shardpy import controls

# Characters that break a path on some OS or a wikilink in Obsidian (`#`, `^`,
# `[`, `]`, `|` have meaning inside `[[...]]`).
# C1 controls too (U+0080-U+009F: U+009B starts an escape sequence on some terminals; helper-found).
_UNSAFE = re.compile(r'[/\\<>:"|?*#^\[\]' + controls.CLASS + "]")
_DASHES = re.compile(r"-{2,}")
_SPACES = re.compile(r"\s+")
_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(1, 10)] + [f"LPT{i}" for i in range(1, 10)]
)
# ext4 allows 255 bytes per name; keep room for ".md" and atomic_write's
# temporary prefix (".shardpy-tmp-xxxxxxxx-").
MAX_STEM_BYTES = 200


def is_safe_stem(stem: str) -> bool:
    """True when ``stem`` can be used unchanged as a note's file name."""
    if not stem or stem != stem.strip() or _UNSAFE.search(stem):
        return False
    if stem[0] in ".-" or stem[-1] == ".":
        return False
    if stem.split(".")[0].upper() in _WINDOWS_RESERVED:
        return False
    return len(stem.encode("utf-8")) <= MAX_STEM_BYTES


def _truncate_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore").rstrip(" .-")


def sanitize_stem(title: str) -> str:
    """A safe file name for ``title`` (basic-memory's rule, plus Obsidian's link characters).

    Unsafe characters become ``-``, runs of ``-`` and of whitespace collapse,
    leading/trailing ``.``, ``-`` and spaces go; an empty result is ``untitled``.
    """
    stem = _UNSAFE.sub("-", title)
    stem = _SPACES.sub(" ", stem)
    stem = _DASHES.sub("-", stem).strip(" .-")
    stem = _truncate_utf8(stem, MAX_STEM_BYTES)
    if not stem:
        return "untitled"
    if stem.split(".")[0].upper() in _WINDOWS_RESERVED:
        stem = f"{stem}_"
    return stem


def stem_for(title: str) -> tuple[str, bool]:
    """(file stem, whether it differs from the title)."""
    if is_safe_stem(title):
        return title, False
    return sanitize_stem(title), True


def sanitize_path_part(part: str) -> str:
    """A safe name for a folder or attachment file, keeping its extension.

    A leading ``-`` is fine here (Claude Code's encoded project folders start with one).
    """
    if is_safe_stem(part) or (part.startswith("-") and is_safe_stem("x" + part)):
        return part
    stem, dot, ext = part.rpartition(".")
    if dot and stem and re.fullmatch(r"[A-Za-z0-9]{1,10}", ext):
        return f"{sanitize_stem(stem)}.{ext}"
    return sanitize_stem(part)
