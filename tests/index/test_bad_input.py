"""Bad input: a typed error or a reported skip, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shardpy import index
from shardpy.errors import ShardpyError
from tests.index.conftest import write
from tests.shardkit import Cli


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "ok.md", "# Ok\n\nfine words\n")
    return root


@pytest.mark.parametrize(
    ("query", "code"),
    [("", "SEARCH_EMPTY_QUERY"), ("   \n ", "SEARCH_EMPTY_QUERY"), ("word " * 2000, "SEARCH_QUERY_TOO_LONG")],
)
def test_bad_queries_are_typed_errors(vault: Path, query: str, code: str, cli: Cli) -> None:
    with pytest.raises(ShardpyError) as err:
        index.search(vault, query)
    assert err.value.code == code
    res = cli.run("search", query, "--vault", vault, "--json")
    assert res.exit_code == 1 and res.error_code() == code


def test_query_of_only_punctuation_finds_nothing(vault: Path) -> None:
    result = index.search(vault, "?? !! --")
    assert result.hits == [] and result.notices


def test_missing_vault(tmp_path: Path, cli: Cli) -> None:
    for call in (lambda: index.refresh(tmp_path / "nope"), lambda: index.search(tmp_path / "nope", "x")):
        with pytest.raises(ShardpyError) as err:
            call()
        assert err.value.code == "INDEX_NO_VAULT"
    res = cli.run("index", tmp_path / "nope")
    assert res.exit_code == 1 and res.error_code() == "INDEX_NO_VAULT"
    assert "Traceback" not in res.output


def test_bad_top(vault: Path, cli: Cli) -> None:
    res = cli.run("search", "fine", "--vault", vault, "--top", "0", "--json")
    assert res.error_code() == "SEARCH_BAD_LIMIT"


def test_unreadable_note_is_reported_and_the_rest_indexed(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(vault, "locked.md", "# Locked\n\nsecret words\n")
    real_open = os.open

    def deny(path: object, *args: object, **kw: object) -> int:
        if str(path).endswith("locked.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    report = index.refresh(vault)
    assert report.indexed == 1
    assert report.skipped == [("locked.md", "not readable: Permission denied")]


def test_invalid_utf8_and_binary_and_bad_frontmatter(vault: Path) -> None:
    (vault / "latin1.md").write_bytes("# Caf\xe9\n\nna\xefve words\n".encode("latin-1"))
    (vault / "binary.md").write_bytes(b"\x00\x01\x02 words")
    (vault / "bom.md").write_bytes(b"\xef\xbb\xbf---\ntitle: With BOM\n---\nbom words\n")
    write(vault, "badfm.md", "---\ntitle: [unclosed\n---\n# Bad\n\nbroken words\n")
    report = index.refresh(vault)
    assert report.skipped == [("binary.md", "binary file (NUL bytes)")]
    degraded = dict(report.degraded)
    assert degraded["latin1.md"].startswith("invalid UTF-8 at byte 5")
    assert degraded["badfm.md"].startswith("frontmatter not read")
    titles = {h.path: h.title for h in index.search(vault, "words", max_age=float("inf")).hits}
    assert titles["bom.md"] == "With BOM"
    assert titles["badfm.md"] == "Bad"
    assert "latin1.md" in titles and "binary.md" not in titles


def test_too_large_note_is_skipped(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shardpy.index import build

    monkeypatch.setattr(build, "MAX_NOTE_BYTES", 10)
    report = index.refresh(vault)
    assert report.indexed == 0 and report.skipped[0][1].startswith("too large")


def test_unwritable_cache(vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(blocker))
    with pytest.raises(ShardpyError) as err:
        index.refresh(vault)
    assert err.value.code == "INDEX_UNWRITABLE"
