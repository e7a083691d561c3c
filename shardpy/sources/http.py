"""HTTP plumbing for sources: one httpx client shape, typed errors, streamed downloads.

httpx is imported inside the functions so that importing shardpy.sources
stays cheap for commands that never touch the network.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shardpy import __version__
from shardpy.errors import ShardpyError
from shardpy.sources.archive import max_archive_bytes
from shardpy.sources.model import ProgressFn

if TYPE_CHECKING:
    import ssl

    import httpx

USER_AGENT = f"shardpy/{__version__}"


def _load_httpx() -> None:
    """Import httpx without its command-line client: ``httpx/__init__``
    imports ``httpx._main`` (click, rich, pygments: more than half of
    httpx's import time) only for the ``httpx`` console script, and carries
    on without it when that import fails. The block is lifted at once, so a
    later ``import httpx._main`` works as usual."""
    if "httpx" in sys.modules:
        return
    blocked = "httpx._main" not in sys.modules
    if blocked:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]  # None: "import fails"
    try:
        import httpx  # noqa: F401
    finally:
        if blocked and "httpx._main" in sys.modules and sys.modules["httpx._main"] is None:
            del sys.modules["httpx._main"]


CHUNK = 64 * 1024


@contextlib.contextmanager
def http_client(headers: dict[str, str] | None = None) -> Iterator[httpx.Client]:
    _load_httpx()
    import httpx

    timeout = httpx.Timeout(30.0, connect=10.0)
    with httpx.Client(
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        timeout=timeout,
        follow_redirects=True,
        verify=_ssl_context(),
    ) as client:
        yield client


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx's default verification (certifi, or SSL_CERT_FILE / SSL_CERT_DIR),
    built once per process: loading the CA bundle is ~60 ms, and a command
    opens a client to resolve and another to download."""
    _load_httpx()
    import httpx

    return httpx.create_ssl_context()


def _host(url: str) -> str:
    parts = urlsplit(url)
    return parts.netloc or url


def unreachable(url: str, exc: BaseException) -> ShardpyError:
    _load_httpx()
    import httpx

    why = "timed out" if isinstance(exc, httpx.TimeoutException) else (str(exc) or type(exc).__name__)
    return ShardpyError(
        "SOURCE_UNREACHABLE",
        f"Cannot reach {_host(url)}: {why}",
        "Check the network connection (and any proxy settings), then try again.",
        details={"url": url},
    )


def rate_limited(response: httpx.Response, *, github: bool = True) -> ShardpyError | None:
    """A SOURCE_RATE_LIMITED error when ``response`` says "slow down" (GitHub: 403/429, remaining 0)."""
    remaining = response.headers.get("x-ratelimit-remaining")
    retry_after = response.headers.get("retry-after")
    limited = response.status_code == 429 or (
        response.status_code == 403 and (remaining == "0" or retry_after is not None)
    )
    if not limited:
        return None
    when = ""
    reset = response.headers.get("x-ratelimit-reset")
    if reset and reset.strip().isdigit():
        when = datetime.fromtimestamp(int(reset), tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    elif retry_after and retry_after.strip().isdigit():
        when = f"in {int(retry_after)} s"
    if not github:
        return ShardpyError(
            "SOURCE_RATE_LIMITED",
            f"{_host(str(response.request.url))} is rate limiting requests",
            "Wait" + (f" until {when}" if when else " a while") + " and try again.",
            details={"reset": when or None, "status": response.status_code},
        )
    token_hint = (
        "GITHUB_TOKEN is set but its quota is used up"
        if os.environ.get("GITHUB_TOKEN")
        else "Set GITHUB_TOKEN to a GitHub token for a much higher limit"
    )
    return ShardpyError(
        "SOURCE_RATE_LIMITED",
        "GitHub's API rate limit is exhausted" + (f"; it resets at {when}" if when else ""),
        f"{token_hint}; or wait" + (f" until {when}" if when else "") + " and try again.",
        details={"reset": when or None, "status": response.status_code},
    )


def http_error(response: httpx.Response, what: str) -> ShardpyError:
    hint = "Try again later; if it persists, check the source address."
    if response.status_code == 401:
        hint = "The server refused the credentials: check GITHUB_TOKEN (or unset it for public repositories)."
    elif response.status_code == 403:
        hint = "Access denied: a private repository needs GITHUB_TOKEN with read access."
    return ShardpyError(
        "SOURCE_HTTP_ERROR",
        f"{what} failed: HTTP {response.status_code} {response.reason_phrase}".rstrip(),
        hint,
        details={"url": str(response.request.url), "status": response.status_code},
    )


@dataclass(frozen=True)
class Download:
    path: Path | None  # None when the server answered 304 Not Modified
    sha256: str | None
    size: int
    etag: str | None
    last_modified: str | None


def download(
    client: httpx.Client,
    url: str,
    dest: Path,
    *,
    label: str,
    progress: ProgressFn | None,
    headers: dict[str, str] | None = None,
    not_found: ShardpyError | None = None,
    github: bool = False,
) -> Download:
    """Stream ``url`` into ``dest`` (created/overwritten), hashing as it goes.

    Caps the body at SHARDPY_MAX_ARCHIVE_BYTES. ``dest`` is removed on any error.
    """
    _load_httpx()
    import httpx

    limit = max_archive_bytes()
    try:
        with client.stream("GET", url, headers=headers or {}) as response:
            if response.status_code == 304:
                return Download(None, None, 0, None, None)
            if response.status_code >= 400:
                response.read()
                limited = rate_limited(response, github=github)
                if limited is not None:
                    raise limited
                if response.status_code == 404 and not_found is not None:
                    raise not_found
                raise http_error(response, f"Downloading {label}")
            total_header = response.headers.get("content-length")
            total = int(total_header) if total_header and total_header.isdigit() else None
            if total is not None and total > limit:
                raise _download_too_large(label, limit)
            digest = hashlib.sha256()
            done = 0
            if progress:
                progress(label, 0, total)
            with open(dest, "wb") as fh:
                for chunk in response.iter_bytes(CHUNK):
                    done += len(chunk)
                    if done > limit:
                        raise _download_too_large(label, limit)
                    digest.update(chunk)
                    fh.write(chunk)
                    if progress:
                        progress(label, done, total)
            return Download(
                dest,
                digest.hexdigest(),
                done,
                response.headers.get("etag"),
                response.headers.get("last-modified"),
            )
    except httpx.TransportError as exc:
        _discard(dest)
        raise unreachable(url, exc) from exc
    except BaseException:
        _discard(dest)
        raise


def get_json(client: httpx.Client, url: str, *, params: dict[str, str] | None = None) -> httpx.Response:
    """GET with transport errors mapped to SOURCE_UNREACHABLE and rate limits to SOURCE_RATE_LIMITED.

    Other statuses are returned for the caller to interpret (404 means
    different things for different endpoints).
    """
    _load_httpx()
    import httpx

    try:
        response = client.get(url, params=params)
    except httpx.TransportError as exc:
        raise unreachable(url, exc) from exc
    limited = rate_limited(response)
    if limited is not None:
        raise limited
    return response


def _download_too_large(label: str, limit: int) -> ShardpyError:
    return ShardpyError(
        "SOURCE_ARCHIVE_TOO_LARGE",
        f"Refusing to download {label}: larger than {limit} bytes",
        "Raise SHARDPY_MAX_ARCHIVE_BYTES if this shard really is that large.",
        details={"limit": limit, "setting": "SHARDPY_MAX_ARCHIVE_BYTES"},
    )


def _discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
