"""PreCompact (Claude Code) / PreCompress (Gemini CLI) hook: copy the session
transcript into thinking/session-logs/ before the agent compacts it, so a
long conversation stays recoverable. Codex has no compaction event.

The copy is named <date>-<time>-<session>-<trigger><ext>, never overwrites
an existing log, and is written through a temporary file so a crash leaves
no half-copied log. thinking/session-logs/ is git-ignored: transcripts can
hold secrets pasted into a session.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import datetime as _dt  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from vaultlib.hookio import emit, emit_nothing, read_payload, text_field, warn  # noqa: E402
from vaultlib.qmd import refresh as qmd_refresh  # noqa: E402
from vaultlib.vault import load_manifest, vault_root  # noqa: E402

LOG_DIR = "thinking/session-logs"
MAX_BYTES = 256 * 1024 * 1024


def _safe(text: str, default: str, keep: int) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9]+", "", text)[:keep]
    return cleaned or default


def log_dir(root: Path) -> Path | None:
    """thinking/session-logs/, created if needed; None when a link or a file
    is in the way (never write through a link out of the vault)."""
    current = root
    for part in LOG_DIR.split("/"):
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            warn(f"{current} is a link or a file; transcript not copied")
            return None
        if not current.exists():
            current.mkdir()
    return current


def backup(root: Path, payload: dict[str, Any], now: _dt.datetime | None = None) -> Path | None:
    transcript = text_field(payload, "transcript_path")
    if not transcript:
        warn("no transcript_path in the hook input; nothing to back up")
        return None
    src = Path(os.path.expanduser(transcript))
    if not src.is_file():
        warn(f"transcript {src} not found; nothing to back up")
        return None
    if src.stat().st_size > MAX_BYTES:
        warn(f"transcript {src} is over 256 MiB; not copied")
        return None
    dest_dir = log_dir(root)
    if dest_dir is None:
        return None
    stamp = (now or _dt.datetime.now()).strftime("%Y-%m-%d-%H%M%S")
    session = _safe(text_field(payload, "session_id"), "session", 8)
    trigger = _safe(text_field(payload, "trigger"), "compact", 12)
    suffix = src.suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,8}", src.suffix) else ".jsonl"
    dest = dest_dir / f"{stamp}-{session}-{trigger}{suffix}"
    n = 1
    while dest.exists():
        n += 1
        dest = dest_dir / f"{stamp}-{session}-{trigger}-{n}{suffix}"
    tmp = dest.with_name(dest.name + ".partial")
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return dest


def main() -> int:
    payload = read_payload()
    root = vault_root()
    dest = backup(root, payload)
    try:
        qmd_refresh(root, load_manifest(root))
    except Exception as exc:
        warn(f"qmd refresh not started: {exc}")
    if dest is None:
        emit_nothing()
    else:
        emit({"systemMessage": f"Transcript backed up to {dest.relative_to(root).as_posix()}"})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:
        warn(f"transcript backup failed: {exc.__class__.__name__}: {exc}")
        emit({})
        sys.exit(0)
