"""A query's path by meaning without the heavy loads (issue 29): the bundled model's tokenizer in
plain Python gives the ids ``tokenizers`` gives, and the query's vector is the model's."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from shardpy import index
from shardpy.index import bpe, embed, store
from tests.index.conftest import write

TEXTS = [
    "how do we roll back a bad deploy?",
    "",
    " ",
    "  leading,  double   and trailing spaces  ",
    "tabs\tand\nnewlines\r\n",
    "🎉🎉 emoji 👩‍👩‍👧 family 🇫🇷",
    "数据库 复制 and русский Ελληνικά עברית العربية हिन्दी",
    "<s> special </s> <unk> tokens<s>glued</s>",
    "café naïve Straße ß ﬁ ligature",
    "C++ e-mail foo_bar 3.14 $100 #tag [[Link|alias]] `code`",
    "\u200b zero width \ufeff bom",
    "日本語のテキスト、句読点。ＦＵＬＬＷＩＤＴＨ",
    "\x00\x01 control \x7f",
    "\u2581 a literal meta \u2581\u2581x",
    "x",
    "the and of",
    "a" * 1000,
    "word " * 300,
]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(29)
    alphabet = "abcdeéü 数据🎉\n\t<s>/\u2581.,'-"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(n)]


def _wordllama_tokenizer() -> Path:
    return embed._wordllama_root() / embed.WORDLLAMA_TOKENIZER


@pytest.mark.parametrize("batch", ["fixed", "random"])
def test_the_plain_tokenizer_gives_the_ids_tokenizers_gives(batch: str) -> None:
    from tokenizers import Tokenizer

    path = _wordllama_tokenizer()
    reference = Tokenizer.from_file(str(path))
    reference.no_padding()
    ours = bpe.Bpe(bpe.load_tables(path))  # a query's: the merges bisected in sorted arrays
    assert isinstance(ours.merges, bpe.SortedPairs)
    many = bpe.Bpe(bpe.load_tables(path))
    many.for_many()  # an index's: the merges in a dict
    assert isinstance(many.merges, dict) and len(many.merges) == len(ours.merges.keys)
    for text in TEXTS if batch == "fixed" else _random_texts(400):
        want = reference.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == want, repr(text[:80])
        assert many.encode(text) == want, repr(text[:80])
        for limit in (1, 3, embed.MAX_TOKENS):  # a limit stops inside a word, a part, a run of spaces
            assert ours.encode(text, limit=limit) == want[:limit], (limit, repr(text[:80]))
    assert isinstance(embed.load().tok, bpe.Bpe)  # the index embeds sections with it too
    again = bpe.Bpe(bpe.load_tables(path))  # the second load reads the machine's cached tables
    assert again.encode(TEXTS[5]) == ours.encode(TEXTS[5])


@pytest.mark.parametrize("damage", [b"", b"garbage", b"\xe9\x06\x00\x00\x00"])
def test_a_damaged_or_older_tables_file_is_read_again_from_the_json(damage: bytes) -> None:
    import marshal

    path = _wordllama_tokenizer()
    want = bpe.Bpe(bpe.load_tables(path)).encode(TEXTS[5])
    cached = bpe._cache_file(path)
    for content in (damage, marshal.dumps((2, {}, {}, {}, []))):  # a file of the format before
        cached.write_bytes(content)
        assert bpe.Bpe(bpe.load_tables(path)).encode(TEXTS[5]) == want
        assert marshal.loads(cached.read_bytes())[0] == bpe.FORMAT  # written again


def test_another_tokenizer_shape_is_refused(tmp_path: Path) -> None:
    wordpiece = tmp_path / "tokenizer.json"
    wordpiece.write_text('{"normalizer": null, "pre_tokenizer": {"type": "BertPreTokenizer"}, "model": {}}')
    with pytest.raises(bpe.Unsupported):
        bpe.load_tables(wordpiece)


def test_the_query_vector_is_the_models() -> None:
    light, full = embed.query_model(), embed.load()
    assert light.name == full.name and light.dim == full.dim
    for text in TEXTS:
        want = [float(x) for x in full.encode([text.strip() or "x"])[0]]
        got = light.vector(text.strip() or "x")
        assert sum(a * b for a, b in zip(got, want, strict=True)) > 0.99999, repr(text[:80])


def test_a_search_by_meaning_loads_no_tokenizer_library(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(
        vault,
        "ops/Release reversal runbook.md",
        "# Release reversal runbook\n\nPin the previous image tag.\n",
    )
    write(vault, "Bread.md", "# Bread\n\nFeed the starter with rye flour.\n")
    index.refresh(vault)  # here: a one-shot search process finds the index built
    probe = (
        "import sys\nfrom pathlib import Path\nfrom shardpy import index\n"
        f"found = index.search(Path({str(vault)!r}), 'how do we roll back a bad deploy?', mode='auto')\n"
        "assert found.mode == 'hybrid', found\n"
        "assert found.hits[0].path == 'ops/Release reversal runbook.md', found.hits\n"
        "assert 'tokenizers' not in sys.modules, 'the query loaded tokenizers'\n"
    )
    _run_probe(probe)


def _run_probe(probe: str) -> None:
    """``probe`` in a new interpreter (a one-shot search's modules, not this process's)."""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr[-2000:]


def _search_in_a_new_process(vault: Path, query: str) -> list[str]:
    probe = (
        "import json\nfrom pathlib import Path\nfrom shardpy import index\n"
        f"found = index.search(Path({str(vault)!r}), {query!r}, mode='semantic', max_age=0)\n"
        "print(json.dumps([h.path for h in found.hits]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout))


def test_the_vector_file_beside_the_index_follows_every_change(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Bread.md", "# Bread\n\nFeed the sourdough starter with rye flour.\n")
    write(vault, "Cars.md", "# Cars\n\nChange the engine oil every ten thousand kilometres.\n")
    write(vault, "Garden.md", "# Garden\n\nWater the tomatoes in the evening.\n")
    assert _search_in_a_new_process(vault, "baking loaves at home")[0] == "Bread.md"
    side = Path(f"{index.index_path(vault)}.vectors")
    assert side.is_file()  # written by that search; the next process maps it
    write(vault, "Cars.md", "# Cars\n\nKneading dough and baking loaves of bread at home.\n")
    (vault / "Bread.md").unlink()
    assert _search_in_a_new_process(vault, "baking loaves at home") == ["Cars.md", "Garden.md"]
    index.refresh(vault, full=True)
    store.remove(index.index_path(vault))  # a rebuilt index never meets an earlier file
    assert not side.exists()
    assert _search_in_a_new_process(vault, "baking loaves at home")[0] == "Cars.md"


def test_a_long_word_is_merged_in_the_order_of_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word past bpe.LONG_WORD symbols is merged through a heap (the scan is quadratic: 0.18 s
    for one 1,500-character word of a note): the same merges in the same order, so the same ids."""
    tok = bpe.Bpe(bpe.load_tables(_wordllama_tokenizer()))
    rng = random.Random(30)
    alphabet = "aabbeeinrst\u2581\u2581éü数🎉-."
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(40, 400))) for _ in range(300)]
    words += ["a" * 1500, "\u2581" * 700 + "x", "ab" * 400, "🎉" * 60]
    by_heap = [bpe._merge_heap(tok._symbols(w), tok.merges) for w in words]
    monkeypatch.setattr(bpe, "LONG_WORD", 1 << 30)  # the scan for every length
    assert [tok._merge(tok._symbols(w)) for w in words] == by_heap


def test_a_search_of_a_fresh_index_loads_no_openssl_module(tmp_path: Path) -> None:
    """A one-shot search hashes only the vault's path (to find its index): CPython's own SHA-256,
    not hashlib's OpenSSL module, ~2 ms of the process (issue 29, fsutil.sha256_bytes)."""
    vault = tmp_path / "v"
    write(vault, "Bread.md", "# Bread\n\nFeed the starter with rye flour.\n")
    index.refresh(vault)
    probe = (
        # An interpreter whose site hooks loaded hashlib already (pyenv's: certifi) proves nothing.
        "import math, sys\nhashed = '_hashlib' in sys.modules\nfrom pathlib import Path\n"
        "from shardpy import index\n"
        f"found = index.search(Path({str(vault)!r}), 'rye flour', max_age=math.inf)\n"
        "assert found.hits[0].path == 'Bread.md', found.hits\n"
        "assert 'shardpy.index.build' not in sys.modules, 'the search refreshed the index'\n"
        "assert hashed or '_hashlib' not in sys.modules, 'the search loaded OpenSSL through hashlib'\n"
    )
    _run_probe(probe)
