"""The bundled model's tokenizer in plain Python, for a query: the same ids as ``tokenizers``.

A one-shot ``shardpy search`` spent more on loading the Rust tokenizer (its 1.8 MB JSON: 1.1 s on a
loaded machine) than on searching, to tokenize a dozen words. WordLlama's tokenizer is Llama 2's:
a Prepend("▁") + Replace(" ", "▁") normalizer, no pre-tokenizer, a BPE model with byte fallback, and
three special tokens matched in the raw text. No vocabulary entry holds a "▁" after another
character, so no merge crosses the start of a "▁" run: each run of "▁" with the word after it is
merged alone (and remembered), which gives the whole string's ids. The vocabulary and the merges are
read from the JSON once per machine and kept in the user cache folder as a marshal file, the merges
as two sorted arrays: a query looks its few pairs up by bisection, an index builds a dict.

Only a tokenizer of exactly that shape is accepted (:class:`Unsupported` otherwise: the caller uses
``tokenizers``). tests/index/test_query_path.py compares the ids with ``tokenizers`` on varied text
(emoji, mixed scripts, special tokens, runs of spaces, 1,000 characters).
"""

from __future__ import annotations

import heapq
import itertools
import json
import marshal
import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path

from shardpy.cachedir import cache_dir
from shardpy.fsutil import atomic_write, sha256_bytes

META = "\u2581"  # "▁": a space, for SentencePiece-style vocabularies
FORMAT = 3  # of the cached tables


class Unsupported(ValueError):
    """The tokenizer is not of the shape this module reproduces."""


class SortedPairs:
    """The merges as two sorted int64 arrays, looked up by bisection. Loading them is a copy (~1 ms)
    where building the dict cost a one-shot search 17 ms of its ~120 (issue 29); a lookup costs a
    microsecond more, which a query's dozen words do not feel and an index's millions would."""

    __slots__ = ("keys", "values")

    def __init__(self, keys: array[int], values: array[int]) -> None:
        self.keys, self.values = keys, values

    def get(self, key: int) -> int | None:
        i = bisect_left(self.keys, key)
        return self.values[i] if i < len(self.keys) and self.keys[i] == key else None


# (the id of each one-character token, merges: (left << 16 | right) -> (rank << 16 | merged id), the
# special tokens, the 256 byte tokens). Only what encoding reads, in ints: loading it stays cheap.
Pairs = dict[int, int] | SortedPairs
Tables = tuple[dict[str, int], Pairs, dict[str, int], list[int]]


def _check_shape(data: dict[str, object]) -> None:
    model = data.get("model")
    norm = data.get("normalizer")
    expected_norm = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": META},
            {"type": "Replace", "pattern": {"String": " "}, "content": META},
        ],
    }
    if not isinstance(model, dict) or data.get("pre_tokenizer") is not None or norm != expected_norm:
        raise Unsupported("not a Llama-style tokenizer")
    plain = {"dropout": None, "continuing_subword_prefix": None, "end_of_word_suffix": None}
    if model.get("type") != "BPE" or not model.get("byte_fallback") or model.get("ignore_merges"):
        raise Unsupported("not a byte-fallback BPE")
    if any(model.get(k) != v for k, v in plain.items()):
        raise Unsupported("BPE options this module does not reproduce")


def _tables(data: dict[str, object]) -> Tables:
    _check_shape(data)
    model = data["model"]
    assert isinstance(model, dict)
    vocab: dict[str, int] = {str(k): int(v) for k, v in model["vocab"].items()}
    if any(META in tok[1:] and set(tok) != {META} for tok in vocab):
        raise Unsupported("a token holds a space after a character: merges may cross words")
    if len(vocab) >= 1 << 16:
        raise Unsupported("a vocabulary of more than 65,536 tokens")
    merges: dict[int, int] = {}
    for rank, entry in enumerate(model["merges"]):
        a, b = entry.split(" ", 1) if isinstance(entry, str) else entry
        if a in vocab and b in vocab and a + b in vocab:
            merges.setdefault(vocab[a] << 16 | vocab[b], rank << 16 | vocab[a + b])
    added = data.get("added_tokens") or []
    assert isinstance(added, list)
    if any(t.get("normalized") or t.get("single_word") or t.get("lstrip") or t.get("rstrip") for t in added):
        raise Unsupported("added tokens with options")
    specials = {str(t["content"]): int(t["id"]) for t in added}
    chars = {tok: i for tok, i in vocab.items() if len(tok) == 1}
    return chars, merges, specials, [vocab[f"<0x{b:02X}>"] for b in range(256)]


def _cache_file(path: Path) -> Path:
    st = path.stat()
    key = sha256_bytes(f"{FORMAT}:{path.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode())[:16]
    return cache_dir() / "models" / f"{path.stem}-{key}.bpe"


def load_tables(path: Path) -> Tables:
    """The tables of ``path`` (a tokenizer.json), from the machine's cache when it has them; the
    merges as :class:`SortedPairs` (:meth:`Bpe.for_many` makes them a dict)."""
    cached = _cache_file(path)
    try:
        with open(cached, "rb") as fh:
            got = _unpacked(marshal.loads(fh.read()))  # marshal.load(fh) reads in small pieces: 5x slower
    except (OSError, EOFError, ValueError, TypeError):
        tables = _tables(json.loads(path.read_text(encoding="utf-8")))
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(cached.parent, cached.name, marshal.dumps(_packed(tables)), durable=False)
        except OSError:
            pass  # an unwritable cache costs the next query the JSON again, nothing else
        got = _unpacked(_packed(tables))
    return got


def _packed(tables: Tables) -> tuple[int, dict[str, int], bytes, bytes, dict[str, int], list[int]]:
    chars, merges, specials, byte_ids = tables
    assert isinstance(merges, dict)
    keys = sorted(merges)
    return (
        FORMAT,
        chars,
        array("q", keys).tobytes(),
        array("q", map(merges.__getitem__, keys)).tobytes(),
        specials,
        byte_ids,
    )


def _unpacked(got: object) -> Tables:
    """The cached tuple, checked: a file of another format or a damaged one raises ValueError."""
    if not (isinstance(got, tuple) and len(got) == 6 and got[0] == FORMAT):
        raise ValueError("not this format's tables")
    _fmt, chars, keys, values, specials, byte_ids = got
    if not (isinstance(chars, dict) and isinstance(specials, dict) and isinstance(byte_ids, list)):
        raise ValueError("damaged tables")
    pairs = SortedPairs(array("q", keys), array("q", values))
    if len(pairs.keys) != len(pairs.values) or len(byte_ids) != 256:
        raise ValueError("damaged tables")
    return chars, pairs, specials, byte_ids


class _Memo(dict[str, list[int]]):
    """A word's ids, merged on first sight: keyed by the piece without its first "▁", so a text's
    words (split on "▁" in C) are looked up by ``map`` without a Python frame per hit."""

    def __init__(self, bpe: Bpe) -> None:
        super().__init__()
        self.bpe = bpe

    def __missing__(self, word: str) -> list[int]:
        bpe = self.bpe
        got = bpe._merge(bpe._symbols(META + word))
        if len(self) < MEMO_WORDS:
            self[word] = got
        return got


# Words remembered (~200 bytes each). A vault's distinct words are fewer (284,159 in the generated
# 20,000-note bench vault, glued pairs across line ends included); past the cap a word is merged
# each time it is met (the cold index at 200,000 spent a third of its tokenizing on that).
MEMO_WORDS = 500_000


class Bpe:
    """``encode(text)``: the ids ``tokenizers`` gives with ``add_special_tokens=False``."""

    def __init__(self, tables: Tables) -> None:
        self.chars, self.merges, self.specials, self._bytes = tables
        self._memo = _Memo(self)
        names = sorted(self.specials, key=len, reverse=True)
        self._names = names
        self._split = re.compile("(" + "|".join(re.escape(n) for n in names) + ")") if names else None

    def for_many(self) -> None:
        """Merges looked up in a dict from now on (an index's many texts; the ids are the same): 12-17
        ms to build, then a lookup a microsecond cheaper than bisection."""
        if isinstance(self.merges, SortedPairs):
            self.merges = dict(zip(self.merges.keys, self.merges.values, strict=True))

    def encode(self, text: str, limit: int | None = None) -> list[int]:
        """The ids of ``text``; with ``limit``, its first ``limit`` ids (the rest is not merged)."""
        if not any(name in text for name in self._names):
            ids = self._part(text) if text else iter(())
            return list(itertools.islice(ids, limit))
        out: list[int] = []
        assert self._split is not None
        for k, part in enumerate(self._split.split(text)):
            if k % 2:
                out.append(self.specials[part])
            elif part:
                out.extend(itertools.islice(self._part(part), None if limit is None else limit - len(out)))
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def _part(self, part: str) -> Iterator[int]:
        """The ids of a text without special tokens, lazily (a caller's limit stops the merging)."""
        # The normalizer prepends "▁" and turns spaces into "▁"; a piece is a run of "▁" and the
        # word after it. Split on "▁", a word after one "▁" is its own key; an empty string marks a
        # further "▁" of a run, which joins the next word (_runs). A third of a regex findall's time.
        words = part.replace(" ", META).split(META)
        if "" in words:
            words = _runs(words)
        return itertools.chain.from_iterable(map(self._memo.__getitem__, words))

    def _symbols(self, piece: str) -> list[int]:
        ids: list[int] = []
        for ch in piece:
            known = self.chars.get(ch)
            if known is None:
                ids += [self._bytes[b] for b in ch.encode("utf-8", "surrogatepass")]
            else:
                ids.append(known)
        return ids

    def _merge(self, ids: list[int]) -> list[int]:
        """The lowest-ranked merge first, the leftmost among equals (as ``tokenizers`` does)."""
        merges = self.merges
        if len(ids) > LONG_WORD:
            return _merge_heap(ids, merges)
        while len(ids) > 1:
            best: tuple[int, int] | None = None
            for i in range(len(ids) - 1):
                found = merges.get(ids[i] << 16 | ids[i + 1])
                if found is not None and (best is None or found < best[0]):
                    best = (found, i)
            if best is None:
                break
            found, i = best
            ids[i : i + 2] = [found & 0xFFFF]
        return ids


# Symbols from which a word is merged through a heap. The scan above is quadratic in the word's
# length: a note (untrusted: it may come with a pull) of 1,500-character words or space runs cost
# 0.18 s a word; a heap pays that per merge only where a word is long (tests/index/test_query_path.py
# compares the two orders).
LONG_WORD = 48


def _merge_heap(ids: list[int], merges: Pairs) -> list[int]:
    """``Bpe._merge``'s merges in its order (the lowest rank, then the leftmost), in O(n log n):
    the symbols as a linked list, the candidate pairs in a heap by (rank, left symbol's place),
    an entry dropped when it is popped if its pair is no longer there."""
    n = len(ids)
    sym = list(ids)
    nxt = list(range(1, n + 1))  # n: the end
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap: list[tuple[int, int, int, int]] = []
    for i in range(n - 1):
        found = merges.get(sym[i] << 16 | sym[i + 1])
        if found is not None:
            heap.append((found, i, sym[i], sym[i + 1]))
    heapq.heapify(heap)
    while heap:
        found, i, left, right = heapq.heappop(heap)
        j = nxt[i]
        if not alive[i] or j >= n or sym[i] != left or sym[j] != right:
            continue  # merged away since it was pushed
        sym[i] = found & 0xFFFF
        alive[j] = False
        k = nxt[i] = nxt[j]
        if k < n:
            prv[k] = i
            pair = merges.get(sym[i] << 16 | sym[k])
            if pair is not None:
                heapq.heappush(heap, (pair, i, sym[i], sym[k]))
        p = prv[i]
        if p >= 0:
            pair = merges.get(sym[p] << 16 | sym[i])
            if pair is not None:
                heapq.heappush(heap, (pair, p, sym[p], sym[i]))
    return [sym[i] for i in range(n) if alive[i]]


def _runs(words: list[str]) -> list[str]:
    """``words`` (a text split on "▁", after the prepended one) as memo keys: the empty strings of a
    run (its further "▁") join the next word; a run at the end is a piece of "▁" alone."""
    keys: list[str] = []
    run = 0
    for word in words:
        if word:
            keys.append(META * run + word)
            run = 0
        else:
            run += 1
    if run:
        keys.append(META * (run - 1))
    return keys
