"""adopt --mode ask through the UI interface (a scripted UI stands in for the
terminal): a file that differs from the shard is shown as a diff against the
bytes on disk and decided by the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shardpy.flows.adopt import AdoptOptions, adopt
from tests.update.kit import Scenario
from tests.update.test_interactive import ScriptedUI
from tests.update.test_table import NOTE_V1, base_files


def test_ask_shows_the_file_on_disk_against_the_shard_and_takes_the_answer(tmp_path: Path) -> None:
    sc = Scenario(tmp_path, cli=None)  # type: ignore[arg-type]  # only the shard builder is used
    sc.shard("1.0.0", base_files())
    sc.vault.mkdir()
    (sc.vault / "brain").mkdir()
    (sc.vault / "brain/Note.md").write_text(NOTE_V1.replace("beta", "beta (mine)"))
    (sc.vault / "brain/Other.md").write_text("mine too\n")
    ui = ScriptedUI(["theirs", "keep"])
    opts: dict[str, Any] = {"source": str(sc.src), "mode": "ask", "defaults": True, "no_hooks": True}
    adopt(AdoptOptions(cwd=sc.vault, **opts), ui)
    assert len(ui.asked) == 2
    assert any("-beta (mine)" in e and "+beta" in e for e in ui.shown)
    assert any("-mine too" in e for e in ui.shown)
    assert (sc.vault / "brain/Note.md").read_text() == NOTE_V1
    assert (sc.vault / "brain/Other.md").read_text() == "mine too\n"
