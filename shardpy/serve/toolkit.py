"""What the serve tool modules share (``tools``: search, recall, remember, ...; ``graphtools``:
the memory graph): the served vault, the arguments' base model, the text check and where
memories live. Both import it; neither imports the other's module for it (issue 28: the lazy
import cycle tools <-> graphtools is gone)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from shardpy.errors import ShardpyError
from shardpy.serve.audit import AuditLog
from shardpy.serve.exposure import Exposure, Manifest
from shardpy.serve.graph import LinkCache
from shardpy.serve.memories import Store
from shardpy.serve.qmd import Launcher, Qmd


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# -- the served vault -----------------------------------------------------------


@dataclass
class Served:
    root: Path  # realpath
    exposure: Exposure
    store: Store
    links: LinkCache
    audit: AuditLog
    refreshed: list[str] = field(default_factory=list)
    qmd: Qmd | None = None  # the QMD server this machine allows for the vault (started lazily)
    qmd_note: str = ""  # why there is none (for health)

    def reload(self) -> None:
        """The manifest read again, and what is served by its rules made afresh (the exposure,
        the memories, the link cache); a manifest now refused stops every call, typed."""
        exposure = Exposure.load(self.root)
        self.exposure = exposure
        self.store = Store(exposure.vault, exposure.manifest.memory_root, exposure.rule)
        self.links = LinkCache(exposure.vault)

    @staticmethod
    def open(vault: Path, *, audit: AuditLog | None = None, qmd: Launcher | None = None) -> Served:
        """The served vault; ``qmd``: the launcher named on this machine's command line (``--qmd``),
        else the vault's own only with this machine's recorded consent (``Launcher.consented``)."""
        exposure = Exposure.load(vault)
        root = exposure.vault
        log = audit or AuditLog(root)
        served = Served(
            root, exposure, Store(root, exposure.manifest.memory_root, exposure.rule), LinkCache(root), log
        )
        client = Qmd(root, qmd)
        served.qmd = client if client.configured else None
        served.qmd_note = client.note
        return served

    @property
    def manifest(self) -> Manifest:
        return self.exposure.manifest


# -- text checks -------------------------------------------------------------------


def check_body(text: str, limit: int) -> str:
    """A note's body as a caller sent it, checked, with one line end: the notes shardpy writes are
    LF, and a body sent with CRLF gave a description ending in a carriage return and a note of
    mixed line ends (tests/serve/test_supersede_bytes.py)."""
    return check_text("body", text, limit).replace("\r\n", "\n").replace("\r", "\n").strip()


def check_text(field_name: str, text: str, limit: int) -> str:
    if "\ufffd" in text:
        raise ShardpyError(
            "SERVE_BAD_TEXT",
            f"{field_name} is not valid UTF-8 (the message carried bytes that do not decode)",
            "Send UTF-8 text.",
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ShardpyError(
            "SERVE_BAD_TEXT", f"{field_name} holds an unpaired surrogate, not text", "Send UTF-8 text."
        ) from None
    if "\x00" in text:
        raise ShardpyError("SERVE_BAD_TEXT", f"{field_name} holds a NUL character", "Remove it.")
    if len(text) > limit:
        raise ShardpyError(
            "SERVE_TOO_LONG",
            f"{field_name} is {len(text):,} characters; the limit here is {limit:,}",
            "Say it shorter: a memory is one lesson, a work note one record.",
        )
    return text


def memory_root_of(v: Served) -> str:
    """Where memories and the graph are written: the manifest's ``memory_root`` (validated where the
    manifest is read); every writing tool asks here."""
    root = v.manifest.memory_root
    if root is None:
        raise ShardpyError(
            "SERVE_NO_MEMORY_ROOT",
            "vault-manifest.json declares no memory_root",
            'Add "memory_root": "memories" to the vault manifest.',
        )
    return root
