"""The merge base: what the shard last rendered for a file, reproduced from
the cached templates with the recorded values and install date."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes
from shardpy.shard.produce import render_source
from shardpy.shard.render import RenderContext
from shardpy.shard.walk import SourceFile, iterator_of, strip_template_suffix
from shardpy.vault import layout
from shardpy.vault.state import State


@dataclass
class BaseRenderer:
    vault: Path
    state: State
    # Engine folders are read only when they are real folders, never through a link.
    templates_ok: bool = True
    bases_ok: bool = True

    @classmethod
    def from_vault(cls, vault: Path, state: State) -> BaseRenderer:
        from shardpy.apply.journalcheck import real_folder

        templates, bases = (real_folder(vault, d) for d in (layout.TEMPLATES, layout.PINNED_BASES))
        return cls(vault, state, templates, bases)

    def context(self) -> RenderContext:
        st = self.state
        return RenderContext.of(st, st.values, st.included_modules(), st.install_date)

    def template_bytes(self, path: str) -> bytes | None:
        """The cached source that last rendered ``path`` (None when absent or
        not readable as a real file)."""
        rec = self.state.files.get(path)
        if rec is None or not self.templates_ok:
            return None
        cached = self.vault / layout.template_cache_path(rec.template)
        try:
            return None if cached.is_symlink() else cached.read_bytes()
        except OSError:
            return None

    def render(self, path: str) -> bytes | None:
        """The base bytes for ``path``: a pinned base when one was kept (a
        conflict skipped, an adopted old version), else the cached template
        rendered again; None when neither reproduces the recorded hash."""
        rec = self.state.files.get(path)
        if rec is None:
            return None
        pinned = self.vault / layout.pinned_base_path(path)
        if self.bases_ok and pinned.is_file() and not pinned.is_symlink():
            data = pinned.read_bytes()
            if sha256_bytes(data) == rec.rendered_hash:
                return data
        cached = self.vault / layout.template_cache_path(rec.template)
        if not self.templates_ok:
            return None
        try:
            data = cached.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None
        template = rec.template.endswith(".njk")
        source = SourceFile(
            path=rec.template,
            output=strip_template_suffix(rec.template),
            module=rec.module,
            template=template,
            iterator=iterator_of(rec.template) if template else None,
        )
        try:
            outputs = render_source(source, data, self.context())
        except ShardpyError:
            return None
        for out in outputs:
            if out.path == path and sha256_bytes(out.data) == rec.rendered_hash:
                return out.data
        return None
