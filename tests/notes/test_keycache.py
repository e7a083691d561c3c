"""The kept frontmatter keys status --verbose reads (shardpy/notes/keycache.py, issue 25)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from shardpy import fsutil
from shardpy.notes.frontmatter import frontmatter_keys
from shardpy.notes.keycache import KeyCache, cache_file

NOTES = {
    "a.md": "---\ntitle: A\ntype: note\n---\nbody\n",
    "b.md": "---\nimported_at: 2026-12-03T18:56:21.641Z\n1: one\ntags: [x]\n---\n",
    "c.md": "no frontmatter\n",
    "d.md": "---\n: bad: [\n---\n",
}
HOUR_AGO_NS = time.time_ns() - 3600 * 10**9


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    for rel, text in NOTES.items():
        (vault / rel).write_text(text)
        os.utime(vault / rel, ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    return vault


def _run(vault: Path, rels: list[str]) -> dict[str, list[str] | None]:
    cache = KeyCache(vault)
    out = dict(cache.keys(rels))
    cache.save()
    return out


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = fsutil.read_text

    def counting(name: str) -> str:
        seen.append(name.rsplit("/", 1)[-1])
        return real(name)

    monkeypatch.setattr(fsutil, "read_text", counting)
    return seen


def test_keys_are_the_one_derivations_and_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    rels = [*NOTES, "gone.md"]
    first = _run(vault, rels)
    expected = {rel: [k for k in frontmatter_keys(text) if isinstance(k, str)] for rel, text in NOTES.items()}
    assert first == {**expected, "gone.md": None}
    seen = _reads(monkeypatch)
    assert _run(vault, rels) == first
    assert seen == []  # every note's lstat matched an entry older than the caching run


def test_an_edit_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    _run(vault, list(NOTES))
    (vault / "a.md").write_text("---\ntitle: A\n---\nbody, longer now\n")
    seen = _reads(monkeypatch)
    assert _run(vault, list(NOTES))["a.md"] == ["title"]
    assert seen == ["a.md"]


def test_a_racily_clean_note_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Same size, same modification time, but written within the tick the cache was made in:
    # the entry cannot tell the two texts apart, so it is not trusted.
    vault = _vault(tmp_path)
    now = time.time_ns()
    os.utime(vault / "a.md", ns=(now, now))
    _run(vault, ["a.md"])
    before = (vault / "a.md").stat()
    (vault / "a.md").write_text("---\nwhats: A\nkind: note\n---\nbody\n")
    os.utime(vault / "a.md", ns=(now, now))
    after = (vault / "a.md").stat()
    assert (before.st_size, before.st_mtime_ns, before.st_ino) == (
        after.st_size,
        after.st_mtime_ns,
        after.st_ino,
    )
    seen = _reads(monkeypatch)
    assert _run(vault, ["a.md"])["a.md"] == ["whats", "kind"]
    assert seen == ["a.md"]


ENTRY = '{"v": 1, "started_ns": 9000000000000000000, "keys": [["x"]], "notes": {"a.md": %s}}'
JUNK = [b"", b"{", b"[]", b'{"v": 1, "started_ns": 1, "keys": [[1]], "notes": {}}']
# Entries of the right size and time but malformed: each is read again, never trusted.
JUNK += [(ENTRY % e).encode() for e in ("[%d, %d, %d, 5]", "[%d, %d, %d, true]", "[%d, %d, %d]", "7")]


@pytest.mark.parametrize("junk", JUNK)
def test_a_damaged_cache_is_ignored_and_rewritten(tmp_path: Path, junk: bytes) -> None:
    vault = _vault(tmp_path)
    path = cache_file(vault)
    path.parent.mkdir(parents=True)
    st = (vault / "a.md").stat()
    if b"%d" in junk:
        junk = junk.replace(b"%d, %d, %d", b"%d, %d, %d" % (st.st_size, st.st_mtime_ns, st.st_ino))
    path.write_bytes(junk)
    assert _run(vault, ["a.md"]) == {"a.md": ["title", "type"]}
    assert path.read_bytes() != junk


def test_a_linked_note_is_kept_by_its_target(tmp_path: Path) -> None:
    # read_text follows a link, so the entry must describe the target: an edit there is seen.
    vault = _vault(tmp_path)
    target = tmp_path / "elsewhere.md"
    target.write_text("---\ntitle: T\n---\n")
    os.utime(target, ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    (vault / "link.md").symlink_to(target)
    os.utime(vault / "link.md", ns=(HOUR_AGO_NS, HOUR_AGO_NS), follow_symlinks=False)  # not racy
    assert _run(vault, ["link.md"]) == {"link.md": ["title"]}
    target.write_text("---\ntitle: T\ntype: x\n---\n")
    assert _run(vault, ["link.md"]) == {"link.md": ["title", "type"]}
