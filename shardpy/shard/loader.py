"""A shard on disk: manifest, schema, the walked files and content rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy.errors import ShardpyError
from shardpy.shard.manifest import Manifest, load_manifest
from shardpy.shard.schema import Schema, load_schema
from shardpy.shard.walk import SourceFile, walk_shard
from shardpy.sources.layout import ignore_chain, migrations_dir
from shardpy.vault.manifest import VAULT_MANIFEST, ContentRules, parse_content_rules

if TYPE_CHECKING:
    from shardpy.shard.produce import Production

MANIFEST_PATH = ".shardmind/shard.yaml"
SCHEMA_PATH = ".shardmind/shard-schema.yaml"


@dataclass
class Shard:
    source_root: Path
    root: Path
    manifest: Manifest
    schema: Schema
    files: list[SourceFile]
    content: ContentRules
    migrations_dir: Path | None

    def content_hash(self) -> str:
        """One hash of everything that decides this shard's output: manifest,
        schema, every installable file, the ignore files on the way down and
        the file migrations (a local source's "commit")."""
        import hashlib

        digest = hashlib.sha256()
        parts = [MANIFEST_PATH, SCHEMA_PATH, *(f.path for f in self.files)]
        for rel in parts:
            path = self.root / rel
            if path.is_file():
                digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
        extra = [d / ".shardmindignore" for d in ignore_chain(self.source_root, self.root)[:-1]]
        if self.migrations_dir is not None:
            extra.extend(sorted(self.migrations_dir.glob("*.y*ml")))
        for path in extra:
            if path.is_file():
                digest.update(path.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()

    def read(self, source_path: str) -> bytes:
        return (self.root / source_path).read_bytes()

    def produce(
        self,
        values: Mapping[str, Any],
        included: list[str],
        install_date: str,
        *,
        files: list[SourceFile] | None = None,
        read: Callable[[str], bytes] | None = None,
    ) -> Production:
        """Every output of this shard for these answers and modules (the one render path);
        ``files`` / ``read``: some of its sources, read from elsewhere (a clone's copy)."""
        from shardpy.shard.produce import produce
        from shardpy.shard.render import RenderContext

        ctx = RenderContext.of(self.manifest, values, included, install_date)
        return produce(self.files if files is None else files, read or self.read, ctx, included)

    def hook_script(self, script: str) -> Path:
        return self.root / script


def load_shard(source_root: Path, shard_root: Path) -> Shard:
    """Parse and validate a shard whose root is ``shard_root``."""
    if not (shard_root / MANIFEST_PATH).is_file():
        raise ShardpyError(
            "SHARD_MANIFEST_MISSING",
            f"No .shardmind/shard.yaml in {shard_root}",
            "A shard root holds .shardmind/shard.yaml; name a sub-folder with SOURCE//subdir.",
            path=MANIFEST_PATH,
        )
    manifest = load_manifest(shard_root / MANIFEST_PATH, display=MANIFEST_PATH)
    # A shard with no values and no modules may leave the schema out.
    schema_file = shard_root / SCHEMA_PATH
    schema = load_schema(schema_file, display=SCHEMA_PATH) if schema_file.exists() else Schema()
    files = walk_shard(source_root, shard_root, schema)
    vault_manifest = next((f for f in files if f.output == VAULT_MANIFEST and not f.template), None)
    content = parse_content_rules((shard_root / vault_manifest.path).read_bytes() if vault_manifest else None)
    return Shard(
        source_root=source_root,
        root=shard_root,
        manifest=manifest,
        schema=schema,
        files=files,
        content=content,
        migrations_dir=migrations_dir(source_root, shard_root),
    )


def included_modules(schema: Schema, excluded: set[str]) -> list[str]:
    return [m for m in schema.modules if m not in excluded]
