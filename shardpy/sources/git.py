"""Git sources through the ``git`` command.

Refs are listed with ``git ls-remote`` (no clone needed to resolve a tag
or branch). Fetching makes a fresh repository in a temp dir, fetches only
the wanted commit (shallow where the server allows), checks it out with
hooks disabled and removes ``.git``, so the source root is a plain tree.
No prompt can block: git runs through shardpy.gitrun (``GIT_TERMINAL_PROMPT=0``),
with ssh in batch mode.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from shardpy import gitrun
from shardpy.errors import ShardpyError
from shardpy.sources.model import ProgressFn, Release, Resolved, remove_tree
from shardpy.sources.releases import (
    find_pinned,
    make_release,
    no_releases,
    pick_latest,
    release_version,
    sort_releases,
    version_not_found,
)
from shardpy.sources.spec import SourceSpec, file_url_path

GIT_TIMEOUT_S = 600
_HEX_RE = re.compile(r"^[0-9a-fA-F]{7,40}$")
_UNREACHABLE_MARKERS = (
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "failed to connect",
    "could not read from remote repository",
    "unable to access",
)
_NOT_A_REPO_MARKERS = ("does not appear to be a git repository", "repository not found", "' not found")


def _env(location: str) -> dict[str, str]:
    extra = {"GIT_ALLOW_PROTOCOL": os.environ.get("GIT_ALLOW_PROTOCOL", "file:git:http:https:ssh")}
    # ssh never prompts (BatchMode) unless the user names their own ssh command: the variable
    # would override `core.sshCommand` (a key of their own for a private shard repository), and
    # their command is theirs to run as it is (tests/sources/test_gitrun.py). Their config is
    # asked only for a location git reaches by ssh: an install from a file or https source ran
    # one `git config` beside each of its git commands.
    if "GIT_SSH_COMMAND" in os.environ or "GIT_SSH" in os.environ:
        return gitrun.environment(extra)
    if not (_uses_ssh(location) and _configured_ssh()):
        extra["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return gitrun.environment(extra)


def _uses_ssh(location: str) -> bool:
    """git reaches ``location`` by ssh: an ``ssh://`` URL (``git+ssh://`` too), or git's scp-like
    ``[user@]host:path`` (a colon before any slash, and no ``://``)."""
    scheme, sep, _ = location.partition("://")
    if sep:
        return "ssh" in scheme.split("+")
    return ":" in location.split("/", 1)[0]


def _configured_ssh() -> bool:
    """The user's git configuration names an ssh command (``core.sshCommand``)."""
    unknown = gitrun.Failures(
        missing=lambda: ShardpyError("SOURCE_GIT_NOT_INSTALLED", "git is not installed", ""),
        timed_out=lambda seconds: ShardpyError("SOURCE_UNREACHABLE", "git config did not finish", ""),
    )
    try:
        args = ["config", "--get", "core.sshCommand"]
        done = gitrun.run(args, None, timeout=GIT_TIMEOUT_S, failures=unknown)
    except ShardpyError:
        return False  # the command itself then says what is wrong with git
    return done.returncode == 0 and bool(done.stdout.strip())


def _summary(stderr: str) -> str:
    """git's own diagnosis: its fatal/error lines, else its last words."""
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and not line.lstrip().lower().startswith(("hint:", "warning: redirecting"))
    ]
    errors = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    chosen = errors[:2] if errors else lines[-3:]
    return " / ".join(chosen) if chosen else "no details"


def run_git(args: list[str], *, what: str, location: str, cwd: Path | None = None) -> str:
    """Run git quietly; map failures to typed errors naming ``location``."""
    done = _spawn_git(args, what=what, location=location, cwd=cwd)
    if done.returncode != 0:
        raise git_error(done.stderr, what=what, location=location)
    return done.stdout


def _spawn_git(
    args: list[str], *, what: str, location: str, cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    """git with hooks off and no prompts; a missing git or a timeout is a typed error, an exit code is not."""
    failures = gitrun.Failures(
        missing=lambda: ShardpyError(
            "SOURCE_GIT_NOT_INSTALLED",
            "The git command is not installed (needed for git sources)",
            "Install git, or use a github:owner/repo or .tar.gz source.",
        ),
        timed_out=lambda seconds: ShardpyError(
            "SOURCE_UNREACHABLE",
            f"{what} {location}: git did not finish within {seconds:g} s",
            "Check the network connection and the repository address.",
            details={"location": location},
        ),
    )
    options = ["-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false"]
    return gitrun.run([*options, *args], cwd, timeout=GIT_TIMEOUT_S, failures=failures, env=_env(location))


def git_error(stderr: str, *, what: str, location: str) -> ShardpyError:
    summary = _summary(stderr)
    lowered = stderr.lower()
    if any(marker in lowered for marker in _NOT_A_REPO_MARKERS):
        return ShardpyError(
            "SOURCE_NOT_FOUND",
            f"{what} {location}: no git repository there ({summary})",
            "Check the address; private repositories need credentials git can use.",
            details={"location": location, "git": summary},
        )
    if any(marker in lowered for marker in _UNREACHABLE_MARKERS):
        return ShardpyError(
            "SOURCE_UNREACHABLE",
            f"{what} {location}: cannot reach the repository ({summary})",
            "Check the address and the network; private repositories need credentials git can use.",
            details={"location": location, "git": summary},
        )
    return ShardpyError(
        "SOURCE_GIT_FAILED",
        f"{what} {location} failed: {summary}",
        "Check that the address is a git repository you can read.",
        details={"location": location, "git": summary},
    )


@dataclass
class RemoteRefs:
    heads: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)  # peeled to the commit
    head: str | None = None


def ls_remote(location: str) -> RemoteRefs:
    # Patterns keep GitHub's thousands of refs/pull/* out of the answer.
    out = run_git(
        ["ls-remote", location, "HEAD", "refs/heads/*", "refs/tags/*"],
        what="Listing refs of",
        location=location,
    )
    refs = RemoteRefs()
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name == "HEAD":
            refs.head = sha
        elif name.startswith("refs/heads/"):
            refs.heads[name.removeprefix("refs/heads/")] = sha
        elif name.startswith("refs/tags/"):
            tag = name.removeprefix("refs/tags/")
            if tag.endswith("^{}"):
                refs.tags[tag[:-3]] = sha  # the peeled commit of an annotated tag wins
            else:
                refs.tags.setdefault(tag, sha)
    return refs


def checkout_spec(path: str, subdir: str | None, raw: str) -> SourceSpec:
    """A git checkout named without ``@version`` / ``#ref`` is a git source
    at what it has checked out: the release tagged at its HEAD, else its
    branch, else (detached) its commit. So the vault records the commit, and
    update and adopt see the tags."""
    try:
        refs = ls_remote(path)
    except ShardpyError:
        # Not a repository git can read (a stray `.git` folder, no git installed):
        # the folder is installed as it is, as any folder.
        return SourceSpec("local", path, None, None, subdir, raw)
    if refs.head is None:  # no commit yet: resolving reports the empty history
        return SourceSpec("git", path, None, None, subdir, raw)
    tagged = [r for r in _releases(refs) if r.commit == refs.head and r.version is not None]
    stable = [r for r in tagged if not r.prerelease] or tagged
    if stable:
        return SourceSpec("git", path, stable[0].tag, None, subdir, raw)
    done = _spawn_git(
        ["symbolic-ref", "--quiet", "--short", "HEAD"],
        what="Reading the branch of",
        location=path,
        cwd=Path(path),
    )
    branch = done.stdout.strip() if done.returncode == 0 else ""
    return SourceSpec("git", path, None, branch if branch in refs.heads else refs.head, subdir, raw)


def list_releases(location: str) -> list[Release]:
    return _releases(ls_remote(location))


def _releases(refs: RemoteRefs) -> list[Release]:
    return sort_releases(make_release(tag, commit=sha) for tag, sha in refs.tags.items())


def local_repo_path(location: str) -> Path | None:
    """The directory of a repository on this machine (a path or file:// URL), else None."""
    if location.startswith("file://"):
        return Path(file_url_path(location))
    if "://" in location or not os.path.isabs(location):
        return None
    return Path(location)


def _rev_parse(repo: Path, ref: str, location: str) -> str | None:
    done = _spawn_git(
        ["rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}"],
        what="Resolving",
        location=location,
        cwd=repo,
    )
    if done.returncode == 0:
        return done.stdout.strip()
    if "ambiguous" in done.stderr.lower():
        raise ShardpyError(
            "SOURCE_REF_NOT_FOUND",
            f"{location}: commit prefix {ref!r} is ambiguous",
            "Give more hex digits of the commit.",
            details={"ref": ref},
        )
    return None


def _resolve_commit_prefix(location: str, ref: str) -> str | None:
    local = local_repo_path(location)
    if local is not None:
        return _rev_parse(local, ref, location)
    # A remote commit prefix can only be resolved with the history at hand:
    # a blobless bare clone brings commits and trees, not file contents.
    scratch = Path(tempfile.mkdtemp(prefix="shardpy-git-"))
    try:
        repo = scratch / "repo.git"
        try:
            run_git(
                ["clone", "--quiet", "--bare", "--filter=blob:none", "--", location, str(repo)],
                what="Cloning",
                location=location,
            )
        except ShardpyError as exc:
            if exc.code != "SOURCE_GIT_FAILED":
                raise
            remove_tree(repo)
            run_git(
                ["clone", "--quiet", "--bare", "--", location, str(repo)], what="Cloning", location=location
            )
        return _rev_parse(repo, ref, location)
    finally:
        remove_tree(scratch)


def resolve(spec: SourceSpec, *, include_prerelease: bool) -> Resolved:
    location = spec.location
    refs = ls_remote(location)
    if spec.ref is not None:
        return _resolve_ref(spec, refs)
    releases = _releases(refs)
    if spec.version is not None:
        release = find_pinned(releases, spec.version)
        if release is None:
            raise version_not_found(location, spec.version, releases)
    else:
        release = pick_latest(releases, include_prerelease=include_prerelease)
        if release is None:
            raise no_releases(location, releases)
    return Resolved(
        spec,
        release_version(release),
        release.tag,
        None,
        release.commit,
        remote_ref=f"refs/tags/{release.tag}",
    )


def _resolve_ref(spec: SourceSpec, refs: RemoteRefs) -> Resolved:
    ref = spec.ref or ""
    # Like git itself, a name that is both a tag and a branch means the tag.
    if not ref.startswith("refs/heads/"):
        tag = ref.removeprefix("refs/tags/")
        if tag in refs.tags:
            return Resolved(spec, None, tag, ref, refs.tags[tag], remote_ref=f"refs/tags/{tag}")
    if not ref.startswith("refs/tags/"):
        branch = ref.removeprefix("refs/heads/")
        if branch in refs.heads:
            return Resolved(spec, None, None, ref, refs.heads[branch], remote_ref=f"refs/heads/{branch}")
    if ref == "HEAD" and refs.head:
        return Resolved(spec, None, None, ref, refs.head, remote_ref="HEAD")
    if _HEX_RE.match(ref):
        sha = ref.lower()
        # A full sha on a remote is checked when it is fetched; anything
        # shorter, or any sha in a repository on this machine, is checked now.
        if local_repo_path(spec.location) is not None or len(sha) < 40:
            found = _resolve_commit_prefix(spec.location, sha)
            if found is None:
                raise _ref_not_found(spec, refs)
            sha = found
        return Resolved(spec, None, None, ref, sha)
    raise _ref_not_found(spec, refs)


def _ref_not_found(spec: SourceSpec, refs: RemoteRefs) -> ShardpyError:
    branches = sorted(refs.heads)[:10]
    return ShardpyError(
        "SOURCE_REF_NOT_FOUND",
        f"{spec.location} has no branch, tag or commit {spec.ref!r}",
        ("Branches: " + ", ".join(branches) + ". " if branches else "")
        + "A commit needs at least 7 hex digits.",
        details={"ref": spec.ref, "branches": branches},
    )


def fetch_tree(
    location: str, commit: str, remote_ref: str | None, dest: Path, *, progress: ProgressFn | None
) -> None:
    """Check out ``commit`` of ``location`` into the new directory ``dest`` without ``.git``."""
    label = f"git {location}"
    if progress:
        progress(label, 0, None)
    run_git(["init", "--quiet", "--template=", str(dest)], what="Preparing a checkout for", location=location)
    fetched = False
    if remote_ref is not None:
        run_git(
            ["fetch", "--quiet", "--depth", "1", "--no-tags", "--", location, remote_ref],
            what="Fetching",
            location=location,
            cwd=dest,
        )
        head = run_git(
            ["rev-parse", "--verify", "FETCH_HEAD^{commit}"], what="Reading", location=location, cwd=dest
        )
        fetched = head.strip() == commit
    if not fetched:
        try:
            run_git(
                ["fetch", "--quiet", "--depth", "1", "--no-tags", "--", location, commit],
                what="Fetching",
                location=location,
                cwd=dest,
            )
        except ShardpyError as exc:
            if exc.code != "SOURCE_GIT_FAILED":
                raise
            # Servers that refuse a bare sha "want": fetch everything, then pick the commit.
            run_git(
                ["fetch", "--quiet", "--tags", "--", location, "+refs/heads/*:refs/remotes/source/*"],
                what="Fetching",
                location=location,
                cwd=dest,
            )
    try:
        run_git(
            ["-c", "core.autocrlf=false", "checkout", "--quiet", "--detach", commit],
            what="Checking out",
            location=location,
            cwd=dest,
        )
    except ShardpyError as exc:
        raise ShardpyError(
            "SOURCE_REF_NOT_FOUND",
            f"{location} has no commit {commit}",
            "Check the commit; it may have been removed from the repository.",
            details={"commit": commit, "git": exc.details.get("git")},
        ) from exc
    remove_tree(dest / ".git")
    if progress:
        progress(label, 1, 1)
