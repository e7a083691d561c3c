"""parse_source: every kind, the suffix grammar, and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy.errors import ShardpyError
from shardpy.sources import SourceSpec, bundled_source, parse_source
from tests.sources.support import ShardRepo


def parse(text: str, cwd: Path) -> SourceSpec:
    return parse_source(text, cwd=cwd)


def test_github_forms(tmp_path: Path) -> None:
    spec = parse("github:acme/shard", tmp_path)
    assert (spec.kind, spec.location, spec.version, spec.ref, spec.subdir) == (
        "github",
        "acme/shard",
        None,
        None,
        None,
    )
    assert spec.display() == "github:acme/shard"
    assert parse("github:acme/shard@1.2.0", tmp_path).version == "1.2.0"
    assert parse("github:acme/shard@v1.2.0", tmp_path).version == "v1.2.0"
    pinned = parse("github:acme/shard#feature/x//vault", tmp_path)
    assert (pinned.ref, pinned.subdir) == ("feature/x", "vault")
    assert pinned.display() == "github:acme/shard//vault"
    assert pinned.text() == "github:acme/shard#feature/x//vault"
    assert parse("github:acme/shard//vault@2.0.0", tmp_path).version == "2.0.0"
    assert parse("github:acme/shard.git", tmp_path).location == "acme/shard"


@pytest.mark.parametrize(
    ("text", "location", "version", "ref", "subdir"),
    [
        (
            "https://git.example.com/acme/shard.git",
            "https://git.example.com/acme/shard.git",
            None,
            None,
            None,
        ),
        (
            "https://git.example.com/acme/shard@1.0.0",
            "https://git.example.com/acme/shard",
            "1.0.0",
            None,
            None,
        ),
        (
            "https://user@git.example.com/acme/shard",
            "https://user@git.example.com/acme/shard",
            None,
            None,
            None,
        ),
        (
            "https://git.example.com/a/s.git#main//sub/dir",
            "https://git.example.com/a/s.git",
            None,
            "main",
            "sub/dir",
        ),
        ("ssh://git@host:22/acme/shard.git@v2.0.0", "ssh://git@host:22/acme/shard.git", "v2.0.0", None, None),
        ("git@github.com:acme/shard.git", "git@github.com:acme/shard.git", None, None, None),
        (
            "git@github.com:acme/shard.git@1.0.0//vault",
            "git@github.com:acme/shard.git",
            "1.0.0",
            None,
            "vault",
        ),
        ("git@host:shard#abc1234", "git@host:shard", None, "abc1234", None),
        ("git+https://example.com/archive.tar.gz", "https://example.com/archive.tar.gz", None, None, None),
    ],
)
def test_git_urls(
    tmp_path: Path, text: str, location: str, version: str | None, ref: str | None, subdir: str | None
) -> None:
    spec = parse(text, tmp_path)
    assert (spec.kind, spec.location, spec.version, spec.ref, spec.subdir) == (
        "git",
        location,
        version,
        ref,
        subdir,
    )
    assert spec.is_remote
    assert spec.raw == text


def test_tarball_urls_and_paths(tmp_path: Path) -> None:
    spec = parse("https://example.com/dl/shard-1.0.tar.gz//inner", tmp_path)
    assert (spec.kind, spec.location, spec.subdir) == (
        "tarball",
        "https://example.com/dl/shard-1.0.tar.gz",
        "inner",
    )
    assert spec.is_remote
    assert parse("http://127.0.0.1:9/x.tgz", tmp_path).kind == "tarball"
    archive = tmp_path / "shard.tar.gz"
    archive.write_bytes(b"")
    local = parse("shard.tar.gz", tmp_path)
    assert (local.kind, local.location, local.is_remote) == ("tarball", str(archive), False)
    assert parse(archive.as_uri(), tmp_path).location == str(archive)
    with pytest.raises(ShardpyError) as err:
        parse("missing.tgz", tmp_path)
    assert err.value.code == "SOURCE_NOT_FOUND"
    with pytest.raises(ShardpyError) as err:
        parse("https://example.com/x.tar.gz@1.0.0", tmp_path)
    assert err.value.code == "SOURCE_INVALID"


def test_local_directory_and_git_work_tree(tmp_path: Path, shard_repo: ShardRepo) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    spec = parse("plain//vault", tmp_path)
    assert (spec.kind, spec.location, spec.subdir) == ("local", str(plain), "vault")
    assert not spec.is_remote
    # a git work tree is a git source: without @/# at what it has checked out
    # (issue 12 item 8 reversed the earlier "just a directory" reading)
    checkout = parse(str(shard_repo.path), tmp_path)
    assert (checkout.kind, checkout.ref) == ("git", "main")
    versioned = parse(f"{shard_repo.path}@1.0.0", tmp_path)
    assert (versioned.kind, versioned.location, versioned.version) == ("git", str(shard_repo.path), "1.0.0")
    assert versioned.display() == f"git+{shard_repo.path}"
    assert parse(versioned.display(), tmp_path).kind == "git"
    assert parse(f"{shard_repo.path}#feature/x", tmp_path).ref == "feature/x"
    with pytest.raises(ShardpyError) as err:
        parse("plain@1.0.0", tmp_path)
    assert err.value.code == "SOURCE_INVALID"


def test_existing_path_wins_over_suffix_syntax(tmp_path: Path) -> None:
    odd = tmp_path / "name@1.0#x"
    odd.mkdir()
    spec = parse("name@1.0#x", tmp_path)
    assert (spec.kind, spec.location, spec.version, spec.ref) == ("local", str(odd), None, None)


def test_registry_names(tmp_path: Path) -> None:
    spec = parse("acme/demo@1.2.0", tmp_path)
    assert (spec.kind, spec.location, spec.version) == ("registry", "acme/demo", "1.2.0")
    assert spec.display() == "acme/demo" and spec.is_remote
    # an existing directory of that name is a local source
    (tmp_path / "acme" / "demo").mkdir(parents=True)
    assert parse("acme/demo", tmp_path).kind == "local"
    with pytest.raises(ShardpyError) as err:
        parse("Acme/Demo", tmp_path)
    assert err.value.code == "SOURCE_NOT_FOUND"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "SOURCE_INVALID"),
        ("   ", "SOURCE_INVALID"),
        ("github:acme", "SOURCE_INVALID"),
        ("github:acme/shard@1.0#main", "SOURCE_INVALID"),
        ("github:acme/shard@", "SOURCE_INVALID"),
        ("github:acme/shard#", "SOURCE_INVALID"),
        ("github:acme/shard//", "SOURCE_INVALID"),
        ("github:acme/shard//../up", "SOURCE_SUBDIR_INVALID"),
        ("github:acme/shard#bad~ref", "SOURCE_INVALID"),
        ("ftp://example.com/shard.git", "SOURCE_INVALID"),
        ("no-such-dir", "SOURCE_NOT_FOUND"),
        ("./no/such/thing", "SOURCE_NOT_FOUND"),
        ("git+./nothing-here", "SOURCE_NOT_FOUND"),
        ("git+ext::sh -c touch% /tmp/pwned", "SOURCE_NOT_FOUND"),
        ("file:///definitely/not/here.git", "SOURCE_NOT_FOUND"),
    ],
)
def test_errors(tmp_path: Path, text: str, code: str) -> None:
    with pytest.raises(ShardpyError) as err:
        parse(text, tmp_path)
    assert err.value.code == code
    assert err.value.hint


def test_a_plain_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ShardpyError) as err:
        parse("notes.txt", tmp_path)
    assert err.value.code == "SOURCE_INVALID"


def test_bundled_and_with_version(tmp_path: Path) -> None:
    spec = bundled_source(tmp_path)
    assert (spec.kind, spec.location, spec.display(), spec.is_remote) == (
        "bundled",
        str(tmp_path),
        "bundled",
        False,
    )
    base = parse("github:acme/shard@1.0.0", tmp_path)
    assert base.with_version(None, "main").ref == "main"
    assert base.with_version("2.0.0").version == "2.0.0"
    with pytest.raises(ValueError):
        base.with_version("1.0.0", "main")


_seg = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
_version = st.from_regex(r"v?[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(-rc\.[0-9])?", fullmatch=True)
_ref = st.from_regex(r"[a-z][a-z0-9-]{0,6}(/[a-z0-9-]{1,6})?", fullmatch=True)


@given(
    owner=_seg,
    repo=_seg,
    version=st.none() | _version,
    ref=st.none() | _ref,
    subdir=st.none() | st.lists(_seg, min_size=1, max_size=3).map("/".join),
    scheme=st.sampled_from(
        ["github:{o}/{r}", "https://host.example/{o}/{r}.git", "git@host.example:{o}/{r}.git"]
    ),
)
def test_text_round_trips(
    owner: str, repo: str, version: str | None, ref: str | None, subdir: str | None, scheme: str
) -> None:
    """parse(spec.text()) == spec for every remote form (version xor ref)."""
    if version and ref:
        ref = None
    location = scheme.format(o=owner, r=repo)
    spec = SourceSpec("github" if location.startswith("github:") else "git", "", version, ref, subdir)
    text = (
        location
        + (f"@{version}" if version else f"#{ref}" if ref else "")
        + (f"//{subdir}" if subdir else "")
    )
    parsed = parse_source(text, cwd=Path("/nonexistent-cwd"))
    assert (parsed.kind, parsed.version, parsed.ref, parsed.subdir) == (spec.kind, version, ref, subdir)
    assert parse_source(parsed.text(), cwd=Path("/nonexistent-cwd")) == parsed.__class__(
        parsed.kind, parsed.location, parsed.version, parsed.ref, parsed.subdir, parsed.text()
    )
    assert parse_source(parsed.display(), cwd=Path("/nonexistent-cwd")).location == parsed.location
