"""How a note's text is written around its lines: a BOM, CRLF line ends.

Editors on Windows save CRLF, and git checks every note out with CRLF under
``core.autocrlf=true``; some add a BOM. shardpy edits a note's frontmatter key
by key on its LF text and gives the note back as it was written: stamping
(shardpy/merge/revisions.py) and ``rm`` / ``restore`` (shardpy/sync/deletes.py)
refused such notes, or rewrote every line of one with LF
(tests/sync/test_revisions.py, tests/sync/test_deletes.py). A note with mixed
line ends, or a lone CR, has no one way back: it is left alone.
"""

from __future__ import annotations

__all__ = ["Written", "lf_form"]


class Written:
    """A BOM or not, CRLF or LF: read off a note's text and put back on an edited one."""

    __slots__ = ("bom", "crlf")

    def __init__(self, bom: bool, crlf: bool) -> None:
        self.bom, self.crlf = bom, crlf

    @staticmethod
    def read(text: str) -> tuple[str, Written] | None:
        """(the LF text without a BOM, how it was written); None for mixed line ends or a lone CR."""
        bom = text.startswith("\ufeff")
        body = text[1:] if bom else text
        crlf = body.count("\r\n")
        if crlf:
            if crlf != body.count("\n"):
                return None
            body = body.replace("\r\n", "\n")
        if "\r" in body:
            return None
        return body, Written(bom, bool(crlf))

    def write(self, text: str) -> str:
        """LF ``text`` written this way."""
        return ("\ufeff" if self.bom else "") + (text.replace("\n", "\r\n") if self.crlf else text)


def lf_form(data: bytes) -> bytes | None:
    """``data`` with CRLF line ends read as LF, when every line ends CRLF; else None.

    What git stores of a text file it checks out with ``core.autocrlf=true`` (git's setting on
    Windows): the shard wrote LF, the checkout holds CRLF. A produced file whose LF form is
    what shardpy wrote is unedited: status counted 89 of the flagship's files "modified" in
    such a clone, and update kept them as the user's (tests/hardening/test_autocrlf.py).
    """
    crlf = data.count(b"\r\n")
    if not crlf or crlf != data.count(b"\n") or data.count(b"\r") != crlf:
        return None
    return data.replace(b"\r\n", b"\n")
