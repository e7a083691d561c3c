"""Who is calling: derived from the client's roots or the launch context, never declared by a tool argument.

A caller is the repository a session works in. Its project name comes from a
``.shardmind-project`` marker at the repository's root (first line: the
name; an optional ``platforms: ios, web`` line), else the folder name,
lowercased. A caller inside the vault is the vault itself (it may read, not
write memories). A caller that yields no valid name is anonymous and sees
``general`` memories only.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from shardpy.fsutil import open_regular

MARKER = ".shardmind-project"
NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
Source = Literal["roots", "marker", "folder", "flag", "vault", "none", "timeout"]


@dataclass(frozen=True, slots=True)
class Caller:
    project: str | None
    platforms: tuple[str, ...] = ()
    source: Source = "none"  # how the name was found: health reports it so a collision is discoverable
    root: str | None = None  # the folder the identity was read from
    via: Literal["roots", "launch", "none"] = "none"
    is_vault: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "platforms": list(self.platforms),
            "source": self.source,
            "via": self.via,
            "root": self.root,
            "is_vault": self.is_vault,
        }

    def answer_json(self) -> dict[str, Any]:
        """What an answer tells the caller about itself: ``root`` as the folder's name only (an answer
        never carries an absolute path; the audit line keeps the whole of :meth:`to_json`)."""
        out = self.to_json()
        if self.root is not None:
            out["root"] = os.path.basename(self.root.rstrip("/")) or None
        return out


ANONYMOUS = Caller(None)


def valid_name(text: str) -> str | None:
    name = text.strip().lower()
    return name if NAME.fullmatch(name) else None


def root_to_path(uri: str) -> Path | None:
    """A ``file://`` root URI as a local path (None for any other scheme)."""
    parsed = urllib.parse.urlsplit(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = urllib.parse.unquote(parsed.path)
    return Path(path) if path.startswith("/") else None


def _read_marker(folder: Path) -> tuple[str | None, tuple[str, ...]] | None:
    try:  # never through a link: its first line would be shown back as the caller's name
        fd = open_regular(folder / MARKER)
        with os.fdopen(fd, "rb") as fh:
            text = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    platforms: tuple[str, ...] = ()
    for line in lines[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == "platforms":
            platforms = tuple(p for p in (valid_name(v) for v in value.split(",")) if p)
    return valid_name(lines[0]), platforms


def project_of_folder(folder: Path) -> str | None:
    """A repository folder's project name: its marker's, else its folder name (None when neither is valid)."""
    marker = _read_marker(folder)
    if marker is not None and marker[0] is not None:
        return marker[0]
    return valid_name(folder.name)


def caller_from_folder(folder: Path, vault: Path, via: Literal["roots", "launch"]) -> Caller:
    real = Path(os.path.realpath(folder))
    vault_real = os.path.realpath(vault)
    if str(real) == vault_real or str(real).startswith(vault_real.rstrip("/") + "/"):
        return Caller(None, (), "vault", str(real), via, is_vault=True)
    marker = _read_marker(real)
    if marker is not None and marker[0] is not None:
        return Caller(marker[0], marker[1], "marker" if via == "launch" else "roots", str(real), via)
    name = valid_name(real.name)
    if name is None:
        return Caller(None, (), "none", str(real), via)
    return Caller(name, marker[1] if marker else (), "folder" if via == "launch" else "roots", str(real), via)


def caller_from_roots(uris: list[str], vault: Path) -> Caller:
    """The first ``file://`` root names the caller (the seed's rule: one repository, one identity)."""
    for uri in uris:
        path = root_to_path(uri)
        if path is not None:
            return caller_from_folder(path, vault, "roots")
    return Caller(None, (), "none", None, "roots")


def launch_caller(vault: Path, cwd: Path, project: str | None) -> Caller:
    """The launch context: ``--project NAME`` when the consumer's config wrote it, else the working folder."""
    if project is not None:
        name = valid_name(project)
        return Caller(name, (), "flag" if name else "none", str(cwd), "launch")
    return caller_from_folder(cwd, vault, "launch")
