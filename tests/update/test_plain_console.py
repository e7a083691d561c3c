"""Off a terminal the CLI prints without rich: the same text rich prints."""

from __future__ import annotations

import io

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.errors import MarkupError

from shardpy.cli.output import plain_markup

PIECES = ["a", " ", "path/x.md", "[", "]", "[bold]", "[/]", "[/bold]", "[dim]", "[red]", "[bold red]", "\\"]
PIECES += ["\\[", "[x]", "[[link]]", "[/x]", ":", ":smile:", ":+1:", ":45:", "12:30:00", "[@click]", "é", "→"]
PIECES += ["\t", "\r", "[link=https://x.invalid]", "[#ff0000]", "[a=b]", "[ ]", "[1]"]


def rich_prints(text: str) -> str | None:
    out = io.StringIO()
    con = Console(file=out, no_color=True, highlight=False, soft_wrap=True, width=80)
    try:
        con.print(text)
    except MarkupError:
        return None
    return out.getvalue()


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
@example("[yellow]missing[/] notes/[draft].md (restore)")
@example("installed 2026-12-01T21:45:06Z :smile: \\[not a tag]")
@example("[/]")
def test_plain_markup_is_what_rich_prints(text: str) -> None:
    plain = plain_markup(text)
    if plain is None:
        return  # rich prints it (or raises) itself
    assert plain + "\n" == rich_prints(text)


def test_usual_lines_need_no_rich() -> None:
    assert plain_markup("[bold]acme/demo[/] 1.0.0  [dim]/v[/]") == "acme/demo 1.0.0  /v"
    assert (
        plain_markup("  hook [bold]post[/] (x.py): [green]ok[/] [dim]3 ms[/]")
        == "  hook post (x.py): ok 3 ms"
    )
