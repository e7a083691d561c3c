"""From source files + values to the exact bytes a shard installs.

This is the one place that turns a walked source into outputs; install,
update (for both the merge base and the new render) and adopt all call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes
from shardpy.shard.render import RenderContext, render_template
from shardpy.shard.walk import SourceFile


@dataclass(frozen=True)
class Output:
    path: str  # vault-relative output path
    source: str  # shard-root-relative source path (the templates-cache key)
    data: bytes
    module: str | None
    template: bool
    volatile: bool = False
    iterator_key: str | None = None
    mode: int | None = None  # file mode to create it with (a copier template's executables)
    link: bool = False  # a symbolic link whose link text is ``data`` (a copier template's, docs/COPIER.md)

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)


@dataclass
class Production:
    outputs: dict[str, Output]
    skipped: list[SourceFile]  # files of excluded modules

    def by_module(self) -> dict[str | None, list[Output]]:
        out: dict[str | None, list[Output]] = {}
        for o in self.outputs.values():
            out.setdefault(o.module, []).append(o)
        return out


ReadSource = Callable[[str], bytes]


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ShardpyError(
            "RENDER_NOT_TEXT",
            f"Template {name} is not UTF-8 text",
            "Only text files can be templates; drop the .njk suffix from binary files.",
            path=name,
        ) from None


def render_source(file: SourceFile, data: bytes, ctx: RenderContext) -> list[Output]:
    """The outputs of one source file (static: its bytes as they are)."""
    if not file.template:
        return [Output(file.output, file.path, data, file.module, template=False)]
    rendered = render_template(
        _decode(data, file.path), file.output, ctx, name=file.path, iterator=file.iterator
    )
    return [
        Output(r.output, file.path, r.text.encode("utf-8"), file.module, True, r.volatile, r.iterator_key)
        for r in rendered
    ]


def produce(
    files: Iterable[SourceFile], read: ReadSource, ctx: RenderContext, included: Iterable[str]
) -> Production:
    """Render/copy every file whose module is included (or that no module claims)."""
    chosen = set(included)
    outputs: dict[str, Output] = {}
    skipped: list[SourceFile] = []
    for file in files:
        if file.module is not None and file.module not in chosen:
            skipped.append(file)
            continue
        for out in render_source(file, read(file.path), ctx):
            clash = outputs.get(out.path)
            if clash is not None:
                raise ShardpyError(
                    "SHARD_OUTPUT_CLASH",
                    f"{clash.source} and {out.source} both produce {out.path}",
                    "A shard may produce each path once: remove one of the two sources.",
                    path=out.path,
                )
            outputs[out.path] = out
    return Production(outputs=outputs, skipped=skipped)
