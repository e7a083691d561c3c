"""Parse what the user typed as SOURCE into a :class:`SourceSpec`.

Grammar: ``LOCATION[@VERSION|#REF][//SUBDIR]`` (the ``@``/``#`` part may
also follow the subdir). ``//`` is looked for after any URL scheme's own
``//``; ``#`` starts a ref wherever it appears in the path part (refs may
contain ``/``); ``@`` starts a version only inside the last path segment,
so ``git@host:`` and ``https://user@host/`` are never mistaken for one.

Parsing looks at the file system (does the path exist, is it a git
repository) but never runs a command or touches the network.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import unquote, urlsplit

from shardpy.errors import ShardpyError

SourceKind = Literal["local", "git", "tarball", "github", "registry", "bundled"]

REGISTRY_NAME_RE = re.compile(r"^[a-z0-9-]+/[a-z0-9-]+$")
GITHUB_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+$")
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
# ``user@host:path`` (scp-like git address); the user part must not start
# with "-" so a location can never be read by git as an option.
_SCP_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*@[A-Za-z0-9][A-Za-z0-9.-]*:(?!//)")
GIT_SCHEMES = frozenset({"https", "http", "ssh", "git", "file"})
TARBALL_SUFFIXES = (".tar.gz", ".tgz", ".tar")
BUNDLED_DISPLAY = "bundled"


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source reference. ``location`` never holds ``@``/``#``/``//`` parts.

    Local paths (directories, tarballs, git repositories) are stored
    absolute, so the spec means the same thing from any working directory.
    """

    kind: SourceKind
    location: str
    version: str | None = None
    ref: str | None = None
    subdir: str | None = None
    raw: str = ""
    # A git checkout named without @version / #ref: what it has checked out, which only git can
    # read. The parser stays pure (no git run here, no import of sources/git.py: tests/test_no_cycles.py);
    # ``shardpy.sources.parse_source`` asks git.checkout_spec to settle it.
    at_checkout: bool = field(default=False, compare=False, repr=False)

    def display(self) -> str:
        """Canonical text recorded in state: parses back to the same kind,
        location and subdir (no version or ref)."""
        return self._base() + (f"//{self.subdir}" if self.subdir else "")

    def text(self) -> str:
        """Canonical text including the version or ref (``LOC@v//sub``)."""
        suffix = f"@{self.version}" if self.version else f"#{self.ref}" if self.ref else ""
        return self._base() + suffix + (f"//{self.subdir}" if self.subdir else "")

    def __str__(self) -> str:
        return self.text()

    def with_version(self, version: str | None, ref: str | None = None) -> SourceSpec:
        if version and ref:
            raise ValueError("a source takes either a version or a ref, not both")
        return replace(self, version=version, ref=ref)

    @property
    def is_remote(self) -> bool:
        """Fetched over the network (its hooks then need the user's consent)."""
        if self.kind in ("github", "registry"):
            return True
        if self.kind == "git":
            return _is_network_git(self.location)
        if self.kind == "tarball":
            return _SCHEME_RE.match(self.location) is not None
        return False

    def _base(self) -> str:
        if self.kind == "github":
            return f"github:{self.location}"
        if self.kind == "bundled":
            return BUNDLED_DISPLAY
        if self.kind == "git" and not _reads_as_git(self.location):
            return f"git+{self.location}"
        return self.location


def bundled_source(path: Path, *, subdir: str | None = None) -> SourceSpec:
    """The shard shipped inside the package; fetched like a local directory."""
    return SourceSpec(
        kind="bundled", location=str(path), subdir=_check_subdir(subdir, BUNDLED_DISPLAY), raw=""
    )


def parse_text(text: str, *, cwd: Path) -> SourceSpec:
    """What the user typed, parsed without running anything (a checkout is marked ``at_checkout``)."""
    raw = text
    text = text.strip()
    if not text:
        raise _invalid(raw, "the source is empty")

    prefix: Literal["github", "git"] | None = None
    body = text
    if text.startswith(("github:", "gh:")):  # gh: is copier's alias (tests/hardening/test_copier_aliases.py)
        prefix, body = "github", text.split(":", 1)[1]
    elif text.startswith("gl:"):
        return _gitlab_source(text[len("gl:") :], raw)
    elif text.startswith("git+"):
        prefix, body = "git", text[len("git+") :]
    else:
        whole = _local_path(text, cwd)
        # A path that exists as typed wins over reading "@"/"#" in it; "//"
        # always names a subdir (a path never needs it: "a//b" is "a/b").
        if "//" not in text and _SCP_RE.match(text) is None and os.path.lexists(whole):
            return _classify_path(whole, None, None, None, raw)

    parts = _split(body, raw)
    head = parts[0]
    if not head:
        raise _invalid(raw, "no location before the version, ref or subdir")
    if prefix == "github":
        repo = head.removesuffix(".git")
        if not GITHUB_REPO_RE.match(repo):
            raise _invalid(raw, f"{head!r} is not owner/repo")
        return SourceSpec("github", repo, parts[1], parts[2], parts[3], raw)
    scheme_match = _SCHEME_RE.match(head)
    if scheme_match:
        return _url_source(scheme_match.group(1).lower(), parts, prefix, raw)
    if _SCP_RE.match(head):
        return SourceSpec("git", head, parts[1], parts[2], parts[3], raw)
    return _path_source(parts, prefix, raw, cwd)


_Parts = tuple[str, str | None, str | None, str | None]  # location, version, ref, subdir
_GITLAB_PATH_RE = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$")


def _gitlab_source(body: str, raw: str) -> SourceSpec:
    """copier's ``gl:group[/subgroup]/repo``: the git source at https://gitlab.com/…"""
    head, version, ref, subdir = _split(body, raw)
    repo = head.removesuffix(".git")
    if not _GITLAB_PATH_RE.match(repo) or ".." in repo.split("/"):
        raise _invalid(raw, f"{head!r} is not group/repo")
    return SourceSpec("git", f"https://gitlab.com/{repo}.git", version, ref, subdir, raw)


def _url_source(scheme: str, parts: _Parts, prefix: str | None, raw: str) -> SourceSpec:
    """A location with a URL scheme: a git remote, or an archive to download."""
    head, version, ref, subdir = parts
    if scheme not in GIT_SCHEMES:
        raise _invalid(raw, f"unsupported URL scheme {scheme!r}")
    if prefix is None and _has_tarball_suffix(urlsplit(head).path):
        if version or ref:
            raise _invalid(raw, "an archive has no versions or refs")
        if scheme == "file":
            return _classify_path(_file_url_path(head), None, None, subdir, raw)
        if scheme not in ("http", "https"):
            raise _invalid(raw, f"archives are downloaded over http(s), not {scheme}")
        return SourceSpec("tarball", head, None, None, subdir, raw)
    if scheme == "file" and not Path(_file_url_path(head)).exists():
        raise _not_found(raw, _file_url_path(head))
    return SourceSpec("git", head, version, ref, subdir, raw)


def _path_source(parts: _Parts, prefix: str | None, raw: str, cwd: Path) -> SourceSpec:
    """A location without a scheme: a local folder, archive or repository, or a registry name."""
    head, version, ref, subdir = parts
    path = _local_path(head, cwd)
    if prefix == "git":
        if not os.path.isdir(path):
            raise _not_found(raw, path)
        return SourceSpec("git", path, version, ref, subdir, raw)
    if os.path.lexists(path):
        return _classify_path(path, version, ref, subdir, raw)
    if REGISTRY_NAME_RE.match(head) and not head.endswith((".git", *TARBALL_SUFFIXES)):
        return SourceSpec("registry", head, version, ref, subdir, raw)
    raise _not_found(raw, path)


# --- helpers --------------------------------------------------------------


def _split(body: str, raw: str) -> tuple[str, str | None, str | None, str | None]:
    """Split ``LOC[@v|#ref][//sub][@v|#ref]`` into its parts."""
    scheme = _SCHEME_RE.match(body)
    search_from = scheme.end() if scheme else 0
    cut = body.find("//", search_from)
    head, tail = (body, None) if cut < 0 else (body[:cut], body[cut + 2 :])

    head, version, ref = _split_suffix(head, _path_start(head), raw)
    subdir: str | None = None
    if tail is not None:
        tail, tail_version, tail_ref = _split_suffix(tail, 0, raw)
        if (tail_version or tail_ref) and (version or ref):
            raise _invalid(raw, "give the version or ref once")
        version, ref = version or tail_version, ref or tail_ref
        subdir = _check_subdir(tail, raw)
    if version and ref:
        raise _invalid(raw, "give either @version or #ref, not both")
    return head, version, ref, subdir


def _path_start(head: str) -> int:
    """Index where the path part of a location begins (after scheme://host or user@host:)."""
    scheme = _SCHEME_RE.match(head)
    if scheme:
        slash = head.find("/", scheme.end())
        if head[: scheme.end()].lower() == "file://":
            return scheme.end()
        return len(head) if slash < 0 else slash
    scp = _SCP_RE.match(head)
    return scp.end() if scp else 0


def _split_suffix(part: str, start: int, raw: str) -> tuple[str, str | None, str | None]:
    ref: str | None = None
    hash_at = part.find("#", start)
    if hash_at >= 0:
        part, ref = part[:hash_at], part[hash_at + 1 :]
        if not ref:
            raise _invalid(raw, "'#' must be followed by a branch, tag or commit")
    version: str | None = None
    segment_start = max(start, part.rfind("/", start) + 1)
    at = part.rfind("@", segment_start)
    if at >= 0:
        part, version = part[:at], part[at + 1 :]
        if not version:
            raise _invalid(raw, "'@' must be followed by a version")
    if ref is not None and any(c in ref for c in " \t\n~^:?*[\\"):
        raise _invalid(raw, f"{ref!r} is not a valid git ref")
    return part, version, ref


def _check_subdir(subdir: str | None, raw: str) -> str | None:
    if subdir is None:
        return None
    cleaned = subdir.strip("/")
    if not cleaned:
        raise _invalid(raw, "'//' must be followed by a subdirectory")
    parts = PurePosixPath(cleaned).parts
    if "\\" in cleaned or any(p in ("..", ".") for p in parts):
        raise ShardpyError(
            "SOURCE_SUBDIR_INVALID",
            f"Refusing subdirectory {subdir!r} in {raw!r}",
            "The //subdir must be a relative path inside the source, without '..'.",
            details={"subdir": subdir},
        )
    return "/".join(parts)


def _classify_path(
    path: str, version: str | None, ref: str | None, subdir: str | None, raw: str
) -> SourceSpec:
    if os.path.isdir(path):
        if is_git_repository(Path(path)):
            if version or ref:
                return SourceSpec("git", path, version, ref, subdir, raw)
            return SourceSpec("git", path, None, None, subdir, raw, at_checkout=True)
        if version or ref:
            raise _invalid(
                raw,
                f"{path} is not a git repository, so @version / #ref cannot apply",
                "Drop the @version / #ref to install the directory as it is.",
            )
        return SourceSpec("local", path, None, None, subdir, raw)
    if os.path.isfile(path) and _has_tarball_suffix(path):
        if version or ref:
            raise _invalid(raw, "an archive has no versions or refs")
        return SourceSpec("tarball", path, None, None, subdir, raw)
    if not os.path.exists(path):
        raise _not_found(raw, path)
    raise _invalid(
        raw,
        f"{path} is neither a directory nor a .tar.gz archive",
        "Point at a shard directory, a git repository or a .tar.gz archive.",
    )


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def is_git_repository(path: Path) -> bool:
    """A git work tree root (``.git`` dir or gitfile) or a bare repository.

    A ``.git`` that is not a repository (a shard shipping a stray ``.git/HEAD``,
    a gitfile whose target is gone) leaves the folder a plain folder."""
    dot = path / ".git"
    if dot.is_dir():
        return _is_git_dir(dot)
    if dot.is_file():
        try:
            line = dot.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return False
        target = line.removeprefix("gitdir:").strip()
        return line.startswith("gitdir:") and bool(target) and (path / target).is_dir()
    return _is_git_dir(path)


def _reads_as_git(location: str) -> bool:
    """Whether ``location`` alone parses as a git source (else display adds ``git+``)."""
    if _has_tarball_suffix(urlsplit(location).path if "://" in location else location):
        return False
    if _SCP_RE.match(location):
        return True
    scheme = _SCHEME_RE.match(location)
    if scheme:
        return scheme.group(1).lower() in GIT_SCHEMES
    return location.endswith(".git")


def _is_network_git(location: str) -> bool:
    scheme = _SCHEME_RE.match(location)
    if scheme:
        return scheme.group(1).lower() != "file"
    return _SCP_RE.match(location) is not None


def _has_tarball_suffix(path: str) -> bool:
    return path.lower().endswith(TARBALL_SUFFIXES)


def _local_path(text: str, cwd: Path) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(text)))


def _file_url_path(url: str) -> str:
    return os.path.normpath(unquote(urlsplit(url).path))


def file_url_path(url: str) -> str:
    """The local path a ``file://`` URL names."""
    return _file_url_path(url)


def _invalid(raw: str, why: str, hint: str = "") -> ShardpyError:
    return ShardpyError(
        "SOURCE_INVALID",
        f"Cannot read source {raw.strip()!r}: {why}",
        hint
        or "Use a directory, a .tar.gz, a git URL (with @version or #ref), "
        "github:owner/repo[@version|#ref] (or gh:/gl: as copier writes them), or namespace/name[@version].",
        details={"source": raw},
    )


def _not_found(raw: str, path: str) -> ShardpyError:
    return ShardpyError(
        "SOURCE_NOT_FOUND",
        f"Source {raw.strip()!r} not found: {path} does not exist and it is not a registry name",
        "Check the path, or use github:owner/repo, a git URL, or namespace/name from the registry.",
        path=path,
        details={"source": raw},
    )
