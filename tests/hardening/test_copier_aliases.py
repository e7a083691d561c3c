"""Issue 26, item 3: copier's `gh:` and `gl:` source forms, as README and
docs/COPIER.md show them (the install through `gh:` is
tests/copier/test_install.py::test_github_source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import parse_source


@pytest.mark.parametrize(
    ("text", "kind", "location", "version", "ref", "subdir"),
    [
        ("gh:acme/python-template@v2.1.0", "github", "acme/python-template", "v2.1.0", None, None),
        ("gh:acme/tpl.git#main", "github", "acme/tpl", None, "main", None),
        ("gl:group/sub/repo@1.0.0", "git", "https://gitlab.com/group/sub/repo.git", "1.0.0", None, None),
        ("gl:group/repo//shard", "git", "https://gitlab.com/group/repo.git", None, None, "shard"),
    ],
)
def test_copier_aliases_parse(
    tmp_path: Path,
    text: str,
    kind: str,
    location: str,
    version: str | None,
    ref: str | None,
    subdir: str | None,
) -> None:
    spec = parse_source(text, cwd=tmp_path)  # a folder without a "gh:acme" in it: never a local path
    got = (spec.kind, spec.location, spec.version, spec.ref, spec.subdir)
    assert got == (kind, location, version, ref, subdir)


@pytest.mark.parametrize("text", ["gh:nope", "gl:single", "gl:a/../b", "gh:", "gl:"])
def test_bad_aliases_are_typed(tmp_path: Path, text: str) -> None:
    with pytest.raises(ShardpyError) as info:
        parse_source(text, cwd=tmp_path)
    assert info.value.code == "SOURCE_INVALID"
