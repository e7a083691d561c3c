"""Progress bars that appear only when something takes a while (a fetch, reading many notes)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

SHOW_AFTER_SECONDS = 0.5


def download_progress() -> Callable[[str, int, int | None], None] | None:
    from shardpy.cli.output import console, err_console

    if not console().is_terminal:
        return None
    started = time.monotonic()
    state: dict[str, Any] = {}

    def update(label: str, done: int, total: int | None) -> None:
        if "bar" not in state:
            if time.monotonic() - started < SHOW_AFTER_SECONDS:
                return
            from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

            bar = Progress(
                *Progress.get_default_columns(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=err_console(),
                transient=True,
            )
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
            bar.start()
        bar = state["bar"]
        bar.update(state["task"], completed=done, total=total, description=label)
        if total is not None and done >= total:
            bar.stop()

    return update


def delayed_progress(label: str) -> Callable[[int, int], None] | None:
    """``(done, total)`` progress on stderr, drawn once the work has taken
    SHOW_AFTER_SECONDS (a quick run prints nothing); None off a terminal."""
    import sys

    if not sys.stderr.isatty():
        return None
    started = time.monotonic()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if time.monotonic() - started < SHOW_AFTER_SECONDS or done >= total:
                return
            from rich.progress import Progress

            from shardpy.cli.output import err_console

            bar = Progress(console=err_console(), transient=True)
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
            bar.start()
        state["bar"].update(state["task"], completed=done, total=total)
        if done >= total:
            state["bar"].stop()

    return update
