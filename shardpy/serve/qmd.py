"""The vault's QMD server as a second search backend: an MCP client of the vault's own launcher.

Seed 000 ("Reaching the Vault From Another Repo") sets the rules this follows:

- The launcher is *located*, not hard-coded: the vault's own ``.mcp.json``
  entry ``mcpServers.qmd`` (the flagship's ``.claude/scripts/qmd_mcp.py``,
  which pins the index name and works around npm's ``.cmd`` shim). A vault
  without that entry has no QMD here, and says so.
- But that file is synced content (a pull or a shard writes it), so what it
  names runs only with this machine's consent (issue 24, item C): either the
  command line names the launcher (``shardpy serve --qmd COMMAND``), or
  ``shardpy serve VAULT --trust-qmd`` recorded the vault's entry in the user's
  config folder, keyed by the vault's realpath and fingerprinted over the
  exact command, arguments, environment and the bytes of every vault file
  they name. A pulled change to any of those revokes the consent: nothing
  runs, and ``health`` says why (tests/security/test_serve_writes.py).
- Filter the result, never the query: QMD searches the whole vault; every hit
  goes through the caller's exposure predicate afterwards (in ``tools``), and a
  reply without ``structuredContent`` is refused rather than parsed out of the
  human-readable summary (which carries paths nothing has checked).
- Over-fetch, then trim: QMD is asked for ``max(limit * 4, 20)``.
- HyDE only for question-shaped queries of four words or more; ``lex`` and
  ``vec`` always go out together.
- Degradation is explicit: a failed call fails that one search, with the reason,
  never an empty-looking vault; liveness is tracked, a dead child is replaced
  only after a cooldown, so a broken qmd cannot fork a process per call.

The MCP client session lives on its own event loop in a background thread
(anyio's blocking portal), because the server's tool handlers are synchronous;
a call blocks its handler for at most ``timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

COOLDOWN = float(os.environ.get("SHARDPY_SERVE_QMD_COOLDOWN", "5"))  # before a dead child is replaced
TIMEOUT = float(os.environ.get("SHARDPY_SERVE_QMD_TIMEOUT", "20"))  # a call (the first loads QMD's models)
START_TIMEOUT = float(os.environ.get("SHARDPY_SERVE_QMD_START_TIMEOUT", "60"))  # spawn + handshake
QUESTION = re.compile(
    r"^(who|what|when|where|why|how|which|does|do|did|is|are|can|should|could|would)\b", re.I
)
NOT_REGISTERED = "the vault's .mcp.json registers no qmd server"
NOT_APPROVED = (
    "the vault's .mcp.json names a qmd launcher this machine has not approved, so it was not started "
    "(it is synced content); review it, then run: shardpy serve VAULT --trust-qmd"
)
CONSENT_FILE = "qmd-consent.json"

Status = Literal["off", "ok", "failed"]


@dataclass(frozen=True)
class Launcher:
    """How the vault starts its QMD server (``.mcp.json`` → ``mcpServers.qmd``)."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def parse(command_line: str) -> Launcher:
        """The launcher named on this machine's command line (``--qmd "qmd mcp"``), split like a shell
        would split it, run without one."""
        from shardpy.errors import UsageError

        try:
            words = shlex.split(command_line)
        except ValueError as exc:
            raise UsageError(f"--qmd: {exc}", "Quote the command as a shell would.") from None
        if not words:
            raise UsageError("--qmd needs a command", 'e.g. --qmd "qmd mcp"')
        return Launcher(words[0], tuple(words[1:]))

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "args": list(self.args), "env": dict(sorted(self.env.items()))}

    def fingerprint(self, vault: Path) -> str:
        """What a consent covers: the exact entry, and the bytes of each vault file it names (the
        flagship's launcher is a script inside the vault, which a pull can change as easily)."""
        from shardpy.fsutil import sha256_bytes, sha256_file

        files: dict[str, str] = {}
        real_vault = os.path.realpath(vault)
        for word in (self.command, *self.args):
            full = os.path.realpath(os.path.join(real_vault, word))  # relative words: from cwd = vault
            if full.startswith(real_vault + os.sep) and os.path.isfile(full):
                files[word] = sha256_file(Path(full)) or ""
        blob = json.dumps({"entry": self.to_json(), "files": files}, sort_keys=True)
        return sha256_bytes(blob.encode("utf-8"))

    @staticmethod
    def registered(vault: Path) -> Launcher | None:
        """The vault's own ``.mcp.json`` entry: synced, so untrusted until consented (:func:`consented`)."""
        from shardpy.vault.manifest import read_bounded

        data = read_bounded(vault / ".mcp.json", 1024 * 1024)
        try:
            raw = json.loads(data.decode("utf-8")) if data is not None else None
        except ValueError:  # UnicodeDecodeError is one
            return None
        servers = raw.get("mcpServers") if isinstance(raw, dict) else None
        entry = servers.get("qmd") if isinstance(servers, dict) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            return None
        args = entry.get("args", [])
        env = entry.get("env", {})
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return None
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            env = {}
        return Launcher(entry["command"], tuple(args), {str(k): v for k, v in env.items()})


@dataclass(frozen=True)
class QmdHit:
    path: str  # vault-relative, as far as it could be mapped; checked by the caller's exposure after
    title: str
    score: float
    snippet: str


@dataclass(frozen=True)
class QmdAnswer:
    status: Status
    hits: tuple[QmdHit, ...] = ()
    reason: str = ""

    def to_json(self, served: int, withheld: int) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "served": served, "withheld": withheld}
        if self.reason:
            out["reason"] = self.reason
        return out


def searches(query: str) -> list[dict[str, str]]:
    """QMD's typed sub-queries: lex + vec always; hyde when the query is a question of 4+ words."""
    out = [{"type": "lex", "query": query}, {"type": "vec", "query": query}]
    words = query.split()
    if len(words) >= 4 and (query.rstrip().endswith("?") or QUESTION.match(query.strip())):
        out.append({"type": "hyde", "query": query})
    return out


def vault_path(vault: Path, file: str) -> str:
    """A QMD result's ``file`` as a vault-relative path.

    QMD reports paths relative to their collection, sometimes as a
    ``qmd://collection/path`` URI or prefixed with the collection name; the
    flagship's collection is rooted at the vault. The first spelling that names
    an existing vault file wins; otherwise the plain path is returned (and the
    exposure predicate then refuses it)."""
    text = file.strip()
    if text.startswith("qmd://"):
        text = text[len("qmd://") :]
    text = text.lstrip("/")
    candidates = [text]
    if "/" in text:
        candidates.append(text.split("/", 1)[1])
    for candidate in candidates:
        if candidate and (vault / candidate).is_file():
            return candidate
    return text


def config_dir() -> Path:
    """This machine's shardpy config folder (``SHARDPY_CONFIG_DIR``, else the platform's): never synced."""
    override = os.environ.get("SHARDPY_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("shardpy"))


def _consents() -> dict[str, Any]:
    try:
        raw = json.loads((config_dir() / CONSENT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    vaults = raw.get("vaults") if isinstance(raw, dict) else None
    return vaults if isinstance(vaults, dict) else {}


def consented(vault: Path) -> tuple[Launcher | None, str]:
    """The vault's registered launcher when this machine approved exactly it; else (None, why not)."""
    launcher = Launcher.registered(vault)
    if launcher is None:
        return None, ""
    record = _consents().get(os.path.realpath(vault))
    if isinstance(record, dict) and record.get("fingerprint") == launcher.fingerprint(vault):
        return launcher, ""
    return None, NOT_APPROVED


def trust(vault: Path) -> Launcher:
    """Record this machine's consent to the vault's current ``.mcp.json`` qmd entry (``--trust-qmd``)."""
    from shardpy.errors import ShardpyError
    from shardpy.fsutil import atomic_write

    launcher = Launcher.registered(vault)
    if launcher is None:
        raise ShardpyError(
            "SERVE_QMD_NOT_REGISTERED",
            f"{NOT_REGISTERED} (mcpServers.qmd with a command)",
            'Register it there, or name the launcher yourself: shardpy serve VAULT --qmd "qmd mcp".',
        )
    vaults = _consents()
    vaults[os.path.realpath(vault)] = {**launcher.to_json(), "fingerprint": launcher.fingerprint(vault)}
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"version": 1, "vaults": vaults}, indent=1, sort_keys=True) + "\n"
    atomic_write(folder, CONSENT_FILE, data.encode("utf-8"), mode=0o600)
    return launcher


class _CoolingDown(RuntimeError):
    """A call refused because the child died less than a cooldown ago (no new child is started)."""


class Qmd:
    """One lazily started QMD client per served vault."""

    def __init__(
        self,
        vault: Path,
        launcher: Launcher | None = None,
        *,
        timeout: float = TIMEOUT,
        cooldown: float = COOLDOWN,
    ) -> None:
        self.vault = vault
        # The command line's launcher, else the vault's own only with this machine's consent.
        self.launcher, self.note = (launcher, "") if launcher is not None else consented(vault)
        self.timeout = timeout
        self.cooldown = cooldown
        self.last_error = ""
        self.calls = 0
        self.failures = 0
        self._lock = threading.Lock()
        self._stack: contextlib.ExitStack | None = None
        self._portal: Any = None
        self._session: Any = None
        self._dead_since: float | None = None

    @property
    def configured(self) -> bool:
        return self.launcher is not None

    def query(self, text: str, limit: int) -> QmdAnswer:
        """Up to ``max(limit * 4, 20)`` QMD hits for ``text``, unfiltered (the caller filters)."""
        if self.launcher is None:
            return QmdAnswer("off", reason=NOT_REGISTERED)
        with self._lock:
            self.calls += 1
            try:
                raw = self._call("query", {"searches": searches(text), "limit": max(limit * 4, 20)})
                return QmdAnswer("ok", tuple(self._hits(raw)))
            except Exception as exc:  # any failure of an optional backend degrades this one call
                return self._failed(exc)

    def status(self) -> dict[str, Any]:
        """Liveness for ``health``: asks QMD's ``status`` tool when it is configured."""
        if self.launcher is None:
            return {"configured": False, "live": False, "note": NOT_REGISTERED}
        with self._lock:
            try:
                raw = self._call("status", {})
                live: dict[str, Any] = {"configured": True, "live": True}
                if isinstance(raw.get("totalDocuments"), int):
                    live["documents"] = raw["totalDocuments"]
                return live
            except Exception as exc:
                return {"configured": True, "live": False, "error": self._failed(exc).reason}

    def close(self) -> None:
        with self._lock:
            self._reset()

    # -- the session ------------------------------------------------------------------

    def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        session = self._connect()
        result = self._portal.call(self._bounded, session, tool, args)
        if getattr(result, "is_error", False):
            raise RuntimeError(f"qmd {tool} failed: {_text(result)[:200]}")
        structured = getattr(result, "structured_content", None)
        if not isinstance(structured, dict):
            raise RuntimeError(f"qmd {tool} returned no structured content (its text is not trusted)")
        self._dead_since = None
        return structured

    async def _bounded(self, session: Any, tool: str, args: dict[str, Any]) -> Any:
        import anyio

        with anyio.fail_after(self.timeout):
            return await session.call_tool(tool, args)

    def _connect(self) -> Any:
        if self._session is not None:
            return self._session
        if self._dead_since is not None and time.monotonic() - self._dead_since < self.cooldown:
            raise _CoolingDown(
                f"qmd died recently ({self.last_error}); retrying after a {self.cooldown:g} s cooldown"
            )
        assert self.launcher is not None
        from anyio.from_thread import start_blocking_portal

        stack = contextlib.ExitStack()
        try:
            self._portal = stack.enter_context(start_blocking_portal())
            self._session = stack.enter_context(self._portal.wrap_async_context_manager(self._open()))
        except BaseException:
            self._portal = self._session = None
            with contextlib.suppress(Exception):
                stack.close()
            raise
        self._stack = stack
        return self._session

    @contextlib.asynccontextmanager
    async def _open(self) -> Any:
        import anyio
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        assert self.launcher is not None
        params = StdioServerParameters(
            command=self.launcher.command,
            args=list(self.launcher.args),
            cwd=str(self.vault),
            env={**os.environ, **self.launcher.env},
        )
        with open(os.devnull, "w") as quiet:  # qmd's own logging must not reach our stdio
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                with anyio.fail_after(START_TIMEOUT):
                    await session.initialize()
                yield session

    def _failed(self, exc: BaseException) -> QmdAnswer:
        """This call's failure. ``last_error`` keeps the death's own reason: a call refused during the
        cooldown names it once and never becomes it, so a reason never nests ("qmd died recently
        (qmd died recently (…", issue 26 item 12, tests/hardening/test_serve_qmd_absent.py)."""
        self.failures += 1
        reason = _reason(exc)
        if not isinstance(exc, _CoolingDown):
            self.last_error = reason
            self._reset()
            self._dead_since = time.monotonic()
        return QmdAnswer("failed", reason=reason)

    def _reset(self) -> None:
        stack, self._stack, self._session, self._portal = self._stack, None, None, None
        if stack is not None:
            with contextlib.suppress(BaseException):
                stack.close()

    def _hits(self, raw: dict[str, Any]) -> list[QmdHit]:
        results = raw.get("results")
        if not isinstance(results, list):
            raise RuntimeError("qmd query returned structured content without a results list")
        out: list[QmdHit] = []
        for item in results:
            if not isinstance(item, dict) or not isinstance(item.get("file"), str):
                continue
            score = item.get("score")
            out.append(
                QmdHit(
                    path=vault_path(self.vault, item["file"]),
                    title=str(item.get("title") or ""),
                    score=float(score) if isinstance(score, int | float) else 0.0,
                    snippet=str(item.get("snippet") or "")[:2000],
                )
            )
        return out


def _text(result: Any) -> str:
    parts = getattr(result, "content", None) or []
    return " ".join(str(getattr(p, "text", "")) for p in parts)


def _reason(exc: BaseException) -> str:
    """Why a call failed, for the caller: never an absolute path (the launcher's, the vault's)."""
    from shardpy.serve.redact import unplaced

    if isinstance(exc, TimeoutError) or type(exc).__name__ in {"TimeoutError", "TooSlowError"}:
        return "qmd did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"qmd's launcher could not be started: {exc.strerror or 'not found'}"
    message = str(exc) or type(exc).__name__
    if isinstance(exc, BaseExceptionGroup):
        message = "; ".join(_reason(e) for e in exc.exceptions)
    return unplaced(message)[:300]


Hit = dict[str, Any]


def fuse(index_hits: list[Hit], qmd_hits: list[Hit], limit: int) -> list[Hit]:
    """Reciprocal-rank fusion (k = 60) of the index's section hits and QMD's note hits.

    A QMD note that the index also found lends its rank to the index's best
    section of that note (the hit keeps the section's heading and snippet); a
    note only QMD found stands on its own. Each hit says where it came from."""
    k = 60.0
    fused: dict[int, float] = {}
    best_section: dict[str, int] = {}
    rows = [dict(hit, source="index") for hit in index_hits]
    for rank, hit in enumerate(rows):
        fused[rank] = 1.0 / (k + rank + 1)
        best_section.setdefault(hit["path"], rank)
    for rank, hit in enumerate(qmd_hits):
        at = best_section.get(hit["path"])
        if at is None:
            at = len(rows)
            rows.append(dict(hit, source="qmd"))
            best_section[hit["path"]] = at
            fused[at] = 0.0
        else:
            rows[at]["source"] = "both"
        fused[at] += 1.0 / (k + rank + 1)
    order = sorted(range(len(rows)), key=lambda i: (-fused[i], i))
    return [rows[i] for i in order[:limit]]
