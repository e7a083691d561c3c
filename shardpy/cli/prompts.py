"""The interactive terminal UI: questionary prompts, rich progress.

Imported only when a command actually needs to ask something.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shardpy.cli.output import console, err_console
from shardpy.errors import Cancelled, ShardpyError
from shardpy.shard.schema import Schema, ValueDef
from shardpy.shard.values import check_value
from shardpy.ui import DefaultFor, ModuleChoice

INTERRUPTED = "Interrupted at a prompt; nothing was written."


def _answer(question: Any) -> Any:
    """The answer to a questionary question. Ctrl-C (or Ctrl-D) is an
    interrupt, exit 130, so `shardpy install && next` stops there."""
    try:
        result = question.unsafe_ask()
    except (KeyboardInterrupt, EOFError):
        raise KeyboardInterrupt(INTERRUPTED) from None
    if result is None:
        raise Cancelled("Cancelled at a prompt; nothing was changed.")
    return result


def _yes_no(default: bool, hint: str | None) -> str | None:
    """questionary's own "(Y/n)" (None), or it beside the shard's hint, which would replace it."""
    if not hint:
        return None
    return f"{'(Y/n)' if default else '(y/N)'} ({hint})"


def _placeholder(text: str) -> Any:
    """Grey example text shown only while the answer is being typed: an empty
    answer must not leave it on screen as if it had been given."""
    from prompt_toolkit.application.current import get_app
    from prompt_toolkit.formatted_text import FormattedText

    shown = FormattedText([("class:placeholder fg:#888888", text)])
    return lambda: FormattedText([]) if get_app().is_done else shown


def _parse_typed(vdef: ValueDef, text: str) -> Any:
    if vdef.type == "number":
        number = float(text)
        return int(number) if number.is_integer() and "." not in text else number
    if vdef.type == "list":
        stripped = text.strip()
        if stripped.startswith("["):
            return json.loads(stripped)
        return [part.strip() for part in stripped.split(",") if part.strip()]
    return text


@dataclass
class TerminalUI:
    """Prompts on the terminal. ``prompt_kwargs`` lets tests drive it with a
    prompt_toolkit pipe input."""

    interactive: bool = True
    prompt_kwargs: dict[str, Any] = field(default_factory=dict)

    def confirm(self, question: str, *, default: bool) -> bool:
        import questionary

        return bool(_answer(questionary.confirm(question, default=default, **self.prompt_kwargs)))

    def choose(self, question: str, choices: list[tuple[str, str]], *, default: str) -> str:
        import questionary

        options = [questionary.Choice(title=label, value=value) for value, label in choices]
        return str(
            _answer(questionary.select(question, choices=options, default=default, **self.prompt_kwargs))
        )

    def _ask_one(self, key: str, vdef: ValueDef, default: Any) -> Any:
        import questionary

        message = vdef.message or key
        instruction = f"({vdef.hint})" if vdef.hint else None
        if vdef.type == "boolean":
            return _answer(
                questionary.confirm(
                    message,
                    default=bool(default),
                    instruction=_yes_no(bool(default), vdef.hint),
                    **self.prompt_kwargs,
                )
            )
        if vdef.type == "select":
            choices = [
                questionary.Choice(title=o.display, value=o.value, description=o.description)
                for o in vdef.options or []
            ]
            return _answer(
                questionary.select(
                    message, choices=choices, default=default, instruction=instruction, **self.prompt_kwargs
                )
            )
        if vdef.type == "multiselect":
            chosen = set(default or [])
            choices = [
                questionary.Choice(title=o.display, value=o.value, checked=o.value in chosen)
                for o in vdef.options or []
            ]
            return _answer(
                questionary.checkbox(
                    message,
                    choices=choices,
                    instruction=instruction,
                    validate=lambda picked: self._valid(key, vdef, picked),
                    **self.prompt_kwargs,
                )
            )
        shown = (
            ", ".join(map(str, default))
            if vdef.type == "list" and isinstance(default, list)
            else str(default)
        )

        def validate(text: str) -> bool | str:
            if vdef.required and vdef.type == "string" and not text.strip():
                return "An answer is required."
            try:
                return self._valid(key, vdef, _parse_typed(vdef, text))
            except (ValueError, json.JSONDecodeError):
                return f"Expected a {vdef.type}."

        extra: dict[str, Any] = {}
        if vdef.placeholder:
            extra["placeholder"] = _placeholder(vdef.placeholder)
        text = _answer(
            questionary.text(
                message,
                default=shown,
                instruction=instruction,
                validate=validate,
                **extra,
                **self.prompt_kwargs,
            )
        )
        return _parse_typed(vdef, text)

    @staticmethod
    def _valid(key: str, vdef: ValueDef, value: Any) -> bool | str:
        try:
            check_value(key, vdef, value)
        except ShardpyError as exc:
            return exc.message
        return True

    def ask_values(
        self, schema: Schema, keys: list[str], known: Mapping[str, Any], default_for: DefaultFor
    ) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        current_group: str | None = None
        groups = {g.id: g for g in schema.groups}
        for key in keys:
            vdef = schema.values[key]
            if vdef.group != current_group and vdef.group in groups:
                group = groups[vdef.group]
                err_console().print(
                    f"\n[bold]{group.label}[/]" + (f" — {group.description}" if group.description else "")
                )
                current_group = vdef.group
            answers[key] = self._ask_one(key, vdef, default_for(key, answers))
        return answers

    def review_modules(self, choices: list[ModuleChoice], selected: set[str]) -> set[str]:
        import questionary

        options = [
            questionary.Choice(
                title=f"{c.label} ({c.files} file{'s' if c.files != 1 else ''})"
                + (" [new]" if c.new else ""),
                value=c.id,
                checked=c.id in selected,
            )
            for c in choices
        ]
        title = (
            "Modules to keep in this vault (this release adds the ones marked [new])"
            if any(c.new for c in choices)
            else "Modules to install"
        )
        picked = _answer(questionary.checkbox(title, choices=options, **self.prompt_kwargs))
        return set(picked)

    def show_conflict(self, path: str, excerpts: list[str]) -> None:
        con = err_console()
        con.print(f"\n[bold yellow]Conflict in {path}[/]")
        for excerpt in excerpts:
            con.print(excerpt, markup=False, highlight=False)

    def edit_file(self, path: str, text: str) -> str | None:
        """The file as the user left it in $EDITOR; None (the question is asked again) when the
        editor failed or the conflict markers are still there. Read back as written: read as
        text, a CRLF file came back LF in every line (a helper's probe; tests/update/test_interactive.py)."""
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        suffix = os.path.splitext(path)[1] or ".txt"
        # newline="": CRLF stays CRLF, written and read back
        with tempfile.NamedTemporaryFile(
            "w", suffix=suffix, delete=False, encoding="utf-8", newline=""
        ) as fh:
            fh.write(text)
            name = fh.name
        try:
            done = subprocess.run([*shlex.split(editor), name], check=False)
            with open(name, encoding="utf-8", newline="") as fh:
                edited = fh.read()
        except OSError:
            return None
        finally:
            os.unlink(name)
        return self._taken(done.returncode, edited)

    def _taken(self, code: int, edited: str) -> str | None:
        from shardpy.merge.text import has_conflict_markers

        if code != 0:
            err_console().print(f"The editor exited with status {code}: nothing taken from it.")
            return None
        if has_conflict_markers(edited.encode("utf-8")):
            err_console().print("Conflict markers are still in it: choose again (or keep the markers).")
            return None
        return edited

    def progress(self, label: str, total: int) -> Callable[[int, int], None] | None:
        return make_progress(label, total)


def make_progress(label: str, total: int) -> Callable[[int, int], None] | None:
    """A rich progress bar on a terminal for long operations; None otherwise."""
    con = console()
    if not con.is_terminal or total < 200:
        return None
    from rich.progress import Progress

    bar = Progress(console=err_console(), transient=True)
    task = bar.add_task(label, total=total)
    bar.start()

    def advance(done: int, of: int) -> None:
        bar.update(task, completed=done, total=of)
        if done >= of:
            bar.stop()

    return advance
