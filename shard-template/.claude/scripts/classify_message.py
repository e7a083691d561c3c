"""UserPromptSubmit (Claude Code, Codex) / BeforeAgent (Gemini) hook: tag the
prompt with routing signals.

The hook classifies; it does not route. It names the signals a prompt
matches and where the vault's manual files that kind of knowledge, and the
agent decides whether anything is worth filing. Signals that belong to a
removable module (WIN → perf, INCIDENT → incidents, PERSON_CONTEXT → org,
ONE_ON_ONE → one_on_ones) are active only when that module is installed
according to .shardmind/state.json; a vault without that file (a plain
clone) has every module.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import json  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from vaultlib.hookio import emit_context, emit_nothing, event_name, read_payload, text_field, warn  # noqa: E402
from vaultlib.vault import installed_modules, module_active, vault_root  # noqa: E402

SIGNALS_FILE = Path(__file__).resolve().parent / "vaultlib" / "signals.json"
MAX_PROMPT_CHARS = 20_000


def load_signals(path: Path = SIGNALS_FILE) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warn(f"signals unavailable: {exc}")
        return []
    out: list[dict[str, Any]] = []
    for sig in data.get("signals", []) if isinstance(data, dict) else []:
        if not isinstance(sig, dict) or not isinstance(sig.get("id"), str):
            continue
        compiled = []
        for pattern in sig.get("patterns", []):
            try:
                compiled.append(re.compile(pattern, re.IGNORECASE))
            except (re.error, TypeError):
                warn(f"signal {sig['id']}: bad pattern {pattern!r} skipped")
        out.append({**sig, "compiled": compiled})
    return out


def active_signals(signals: list[dict[str, Any]], modules: dict[str, bool] | None) -> list[dict[str, Any]]:
    return [s for s in signals if module_active(modules, s.get("module") if not s.get("core") else None)]


def classify(prompt: str, signals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = prompt[:MAX_PROMPT_CHARS]
    return [s for s in signals if any(p.search(text) for p in s["compiled"])]


def hint(matched: list[dict[str, Any]]) -> str:
    lines = ["Vault signals in this prompt (hints only; file something only if it is worth keeping):"]
    for sig in matched:
        lines.append(f"- {sig['id']}: {sig.get('description', '')} → {sig.get('routes_to', '')}")
    return "\n".join(lines)


def main() -> int:
    payload = read_payload()
    prompt = text_field(payload, "prompt", "user_prompt", "message")
    event = event_name(payload, "UserPromptSubmit")
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        # Empty, or a slash command: the command file carries its own routing.
        emit_nothing()
        return 0
    signals = active_signals(load_signals(), installed_modules(vault_root()))
    matched = classify(prompt, signals)
    if not matched:
        emit_nothing()
        return 0
    emit_context(event, hint(matched))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # a classifier failure must never block a prompt
        warn(f"classify failed: {exc.__class__.__name__}: {exc}")
        emit_nothing()
        sys.exit(0)
