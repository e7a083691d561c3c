"""fsutil.sha256_bytes: the one content hash, the same digest on either of its paths.

Short inputs go through CPython's own SHA-256 (a one-shot search hashes only the vault's path and
need not load OpenSSL's module, issue 29); longer ones through hashlib. Index files, records and
archives are named by these digests, so the two paths must never disagree.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy import fsutil


@given(st.binary(max_size=10_000))
def test_the_digest_is_hashlibs_on_both_sides_of_the_threshold(data: bytes) -> None:
    assert fsutil.sha256_bytes(data) == hashlib.sha256(data).hexdigest()
    assert fsutil.sha1_hex(data) == hashlib.sha1(data).hexdigest()  # git's object ids (sync)


def test_the_threshold_itself_and_one_past_it() -> None:
    for size in (0, fsutil._SMALL_DIGEST, fsutil._SMALL_DIGEST + 1):
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        assert fsutil.sha256_bytes(data) == hashlib.sha256(data).hexdigest()
        assert fsutil.sha1_hex(data) == hashlib.sha1(data).hexdigest()


def test_without_the_builtin_module_hashlib_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsutil, "_builtin_digest", lambda name: None)
    assert fsutil.sha256_bytes(b"vault") == hashlib.sha256(b"vault").hexdigest()
    assert fsutil.sha1_hex(b"vault") == hashlib.sha1(b"vault").hexdigest()
