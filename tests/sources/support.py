"""Helpers for source tests: git repos, tarballs and a GitHub API stub on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Shard Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Shard Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


# --- git repositories ---------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def write_shard(root: Path, version: str, extra: dict[str, str] | None = None) -> None:
    (root / ".shardmind").mkdir(parents=True, exist_ok=True)
    (root / ".shardmind" / "shard.yaml").write_text(
        f"apiVersion: v1\nnamespace: acme\nname: demo\nversion: {version}\n"
    )
    (root / "Home.md").write_text(f"# Home {version}\n")
    for rel, text in (extra or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@dataclass
class ShardRepo:
    path: Path
    commits: dict[str, str] = field(default_factory=dict)  # label -> sha

    @property
    def url(self) -> str:
        return self.path.as_uri()


def build_shard_repo(path: Path) -> ShardRepo:
    """History: v0.9.0 (annotated) -> v1.0.0 (+ release-5) -> v1.1.0-rc.1 -> main tip;
    branch feature/x off v1.0.0."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "--template=", "-b", "main")
    repo = ShardRepo(path)

    def commit(label: str, version: str, extra: dict[str, str] | None = None) -> str:
        write_shard(path, version, extra)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", label)
        repo.commits[label] = git(path, "rev-parse", "HEAD")
        return repo.commits[label]

    commit("v0.9.0", "0.9.0")
    git(path, "tag", "-a", "v0.9.0", "-m", "release 0.9.0")
    commit("v1.0.0", "1.0.0")
    git(path, "tag", "v1.0.0")
    git(path, "tag", "release-5")
    git(path, "checkout", "-q", "-b", "feature/x")
    commit("feature", "1.0.0", {"feature.md": "feature branch\n"})
    git(path, "checkout", "-q", "main")
    commit("v1.1.0-rc.1", "1.1.0-rc.1")
    git(path, "tag", "v1.1.0-rc.1")
    commit("tip", "1.1.0-rc.1", {"tip.md": "untagged tip\n"})
    return repo


# --- tarballs -------------------------------------------------------------------


def tar_bytes(entries: list[tuple[tarfile.TarInfo, bytes | None]], *, gzip: bool = True) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gzip else "w") as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def file_entry(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    return info, data


def dir_entry(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


def shard_tar_entries(
    prefix: str = "pkg/", version: str = "2.0.0"
) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    manifest = f"apiVersion: v1\nnamespace: acme\nname: demo\nversion: {version}\n".encode()
    return [
        dir_entry(prefix.rstrip("/")) if prefix else dir_entry("."),
        file_entry(f"{prefix}.shardmind/shard.yaml", manifest),
        file_entry(f"{prefix}Home.md", b"# Home\n"),
        file_entry(f"{prefix}brain/note.md", b"note\n"),
    ]


def git_archive(repo: ShardRepo, sha: str, prefix: str) -> bytes:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", "archive", "--format=tar.gz", f"--prefix={prefix}/", sha],
        cwd=repo.path,
        env=env,
        capture_output=True,
        check=True,
    ).stdout


# --- GitHub API stub -------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class StubRepo:
    git: ShardRepo
    releases: list[dict[str, Any]]
    tags: dict[str, str]
    branches: dict[str, str]


class StubGitHub:
    """A minimal GitHub REST API backed by a real git repository.

    Serves /repos/<o>/<r>[/releases|/tags|/commits/<ref>|/tarball/<ref>]
    (tarball answers 302 to /codeload/..., like the real API), a registry
    index at /registry/index.json and static files under /files/ with ETags.
    """

    def __init__(self) -> None:
        self.repos: dict[str, StubRepo] = {}
        self.requests: list[Request] = []
        self.rate_limited = False  # answer /repos/... with 403 and x-ratelimit-remaining = remaining
        self.remaining = "0"
        self.page_size = 100
        self.delay = 0.0  # seconds each answer waits (a slow network)
        self.registry: dict[str, Any] = {"shards": {}}
        self.files: dict[str, bytes] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> StubGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_repo(
        self, name: str, repo: ShardRepo, *, prerelease_flags: dict[str, bool] | None = None
    ) -> None:
        tags: dict[str, str] = {}
        for line in git(repo.path, "show-ref", "--tags", "-d").splitlines():
            sha, ref = line.split(" ", 1)
            tag = ref.removeprefix("refs/tags/")
            if tag.endswith("^{}"):
                tags[tag[:-3]] = sha
            else:
                tags.setdefault(tag, sha)
        branches = {
            ref.removeprefix("refs/heads/"): sha
            for sha, ref in (
                line.split(" ", 1) for line in git(repo.path, "show-ref", "--heads").splitlines()
            )
        }
        flags = prerelease_flags or {}
        releases = [
            {"tag_name": tag, "draft": False, "prerelease": flags.get(tag, "-" in tag)}
            for tag in sorted(tags)
            if tag.startswith("v")
        ]
        self.repos[name] = StubRepo(repo, releases, tags, branches)

    def count(self, fragment: str) -> int:
        return sum(1 for r in self.requests if fragment in r.path)

    def _resolve(self, repo: StubRepo, ref: str) -> str | None:
        if ref in repo.tags:
            return repo.tags[ref]
        if ref in repo.branches:
            return repo.branches[ref]
        matches = {
            sha for sha in [*repo.git.commits.values()] if len(ref) >= 7 and sha.startswith(ref.lower())
        }
        return matches.pop() if len(matches) == 1 else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                self._send(
                    status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})}
                )

            def do_HEAD(self) -> None:
                self.do_GET()  # the same answer without its body (ShardMind HEAD-checks tarballs)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                stub.requests.append(
                    Request(self.command, parts.path, {k.lower(): v for k, v in self.headers.items()})
                )
                if stub.delay:
                    time.sleep(stub.delay)
                if stub.rate_limited and parts.path.startswith("/repos/"):
                    reset = str(int(time.time()) + 3600)
                    self._json(
                        403,
                        {"message": "API rate limit exceeded"},
                        {"x-ratelimit-remaining": stub.remaining, "x-ratelimit-reset": reset},
                    )
                    return
                segments = [s for s in parts.path.split("/") if s]
                if parts.path == "/registry/index.json":
                    self._json(200, stub.registry)
                    return
                if segments[:1] == ["files"] and len(segments) == 2 and segments[1] in stub.files:
                    body = stub.files[segments[1]]
                    etag = f'"{len(body)}-{hash(body) & 0xFFFF:x}"'
                    if self.headers.get("If-None-Match") == etag:
                        self._send(304, b"", {"ETag": etag})
                    else:
                        self._send(200, body, {"ETag": etag, "Content-Type": "application/gzip"})
                    return
                if segments[:1] == ["codeload"] and len(segments) >= 5:
                    name = f"{segments[1]}/{segments[2]}"
                    repo = stub.repos.get(name)
                    sha = segments[4]
                    if repo is None:
                        self._json(404, {"message": "Not Found"})
                        return
                    prefix = f"{segments[1]}-{segments[2]}-{sha[:7]}"
                    self._send(
                        200, git_archive(repo.git, sha, prefix), {"Content-Type": "application/x-gzip"}
                    )
                    return
                if segments[:1] != ["repos"] or len(segments) < 3:
                    self._json(404, {"message": "Not Found"})
                    return
                name = f"{segments[1]}/{segments[2]}"
                repo = stub.repos.get(name)
                rest = segments[3:]
                if repo is None:
                    self._json(404, {"message": "Not Found"})
                    return
                if not rest:
                    self._json(200, {"full_name": name})
                elif rest == ["releases"]:
                    self._paged(parts.path, parse_qs(parts.query), repo.releases)
                elif rest == ["tags"]:
                    items = [{"name": t, "commit": {"sha": s}} for t, s in sorted(repo.tags.items())]
                    self._paged(parts.path, parse_qs(parts.query), items)
                elif rest[0] == "commits" and len(rest) >= 2:
                    sha = stub._resolve(repo, "/".join(rest[1:]))
                    if sha is None:
                        self._json(422, {"message": "No commit found for SHA"})
                    else:
                        self._json(200, {"sha": sha})
                elif rest[0] == "tarball" and len(rest) >= 2:
                    sha = stub._resolve(repo, "/".join(rest[1:]))
                    if sha is None:
                        self._json(404, {"message": "Not Found"})
                    else:
                        self._send(302, b"", {"Location": f"{stub.base}/codeload/{name}/legacy.tar.gz/{sha}"})
                else:
                    self._json(404, {"message": "Not Found"})

            def _paged(self, path: str, query: dict[str, list[str]], items: list[Any]) -> None:
                page = int(query.get("page", ["1"])[0])
                size = min(stub.page_size, int(query.get("per_page", ["30"])[0]))
                chunk = items[(page - 1) * size : page * size]
                headers = {}
                if page * size < len(items):
                    headers["Link"] = f'<{stub.base}{path}?per_page={size}&page={page + 1}>; rel="next"'
                self._json(200, chunk, headers)

        return Handler
