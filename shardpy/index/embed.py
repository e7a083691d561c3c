"""Sentence embeddings for search by meaning: one small interface, offline always.

The default model is WordLlama's 256-dimension static embedding (token vectors
averaged), whose weights and tokenizer ship inside the ``wordllama`` wheel:
nothing is ever fetched. It is loaded by explicit path (the package's own
loader looks for ``tokenizer/`` while the wheel ships ``tokenizers/``, and
falls back to a download), with hub access switched off for the whole process
before ``tokenizers`` is imported.

``SHARDPY_EMBED_MODEL`` chooses another local model:

- ``off`` (or ``none``): no search by meaning;
- ``wordllama`` (the default);
- a folder on disk: a sentence-transformers BERT model (``config.json``,
  ``model.safetensors``, ``tokenizer.json``: all-MiniLM-L6-v2 and its kind, run
  here with numpy) or a static model (``model.safetensors`` holding one 2-D
  table, ``tokenizer.json``: model2vec's layout).

numpy and tokenizers are imported only when a model is loaded (a plain
``shardpy status`` never loads them). The choice is documented in
docs/SEARCH.md (tests/index/test_semantic.py).
"""

from __future__ import annotations

import collections
import importlib.util
import json
import math
import os
import struct
import threading
from collections.abc import Sequence
from pathlib import Path

from shardpy.index.arrays import normalised, tensors
from shardpy.record import Record

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any, Protocol

    import numpy as np
    from numpy.typing import NDArray

    class Embedder(Protocol):
        name: str  # identifies the model and its settings: stored vectors of another name are re-embedded
        dim: int

        def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
            """One L2-normalised float32 row per text."""
            ...

    class QueryModel(Protocol):
        name: str
        dim: int

        def vector(self, text: str) -> list[float]:
            """The text's L2-normalised vector (the same as ``encode([text])[0]`` of the model)."""
            ...


ENV = "SHARDPY_EMBED_MODEL"
DEFAULT = "wordllama"
OFF = frozenset({"off", "none", "0", "false"})
MAX_TOKENS = 256  # a section's first 256 tokens stand for it (averaging more only blurs it)
STATIC_BATCH = 64  # texts tokenized per call (the Rust tokenizer encodes a batch at once)
# From this many texts a static model converts its whole table and builds the merges' dict first
# (~40 ms); below, the write hook's one-note refresh pays neither (0.3 s of CPU a process).
MANY_TEXTS = 32
WORDLLAMA_NAME = f"wordllama-l2_supercat_256/{MAX_TOKENS}"
_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


class Unavailable(Exception):
    """The configured model cannot be loaded (the reason is the message)."""


def offline() -> None:
    """No hub access from anything this process loads (set before tokenizers is imported)."""
    for key, value in _OFFLINE.items():
        os.environ[key] = value
    # One BLAS thread is asked for by shardpy/index/__init__.py, which runs before this module.


def _tokenizer(path: Path, *, specials: bool) -> Any:
    offline()
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=MAX_TOKENS)
    if specials:
        tok.enable_padding()  # a transformer takes a rectangle; a static model sums each text's ids
    else:
        tok.no_padding()
    tok.shardpy_specials = specials  # type: ignore[attr-defined]
    return tok


class StaticEmbedder(Record):
    """Token vectors averaged over the text (WordLlama, model2vec)."""

    name: str
    dim: int
    table: NDArray[Any]  # as the weights file stores it (the bundled model's: float16, mapped)
    tok: Any

    buf: Any = None  # one text's rows, the buffer reused: first-touching fresh pages cost 6 s per 134 MB here
    whole: Any = None  # the table as float32, made for a batch of MANY_TEXTS or more (for_many)

    @property
    def forkable(self) -> bool:
        """Safe to use in forked workers: numpy and the plain-Python tokenizer (the Rust one keeps
        a thread pool a fork would break)."""
        from shardpy.index.bpe import Bpe

        return isinstance(self.tok, Bpe)

    def for_many(self) -> None:
        """Ready for many texts (a cold index): the whole table as float32 (27 ms, 33 MB for the
        bundled model) and the tokenizer's merges in a dict. Called before workers fork, so they
        share it; a few texts (the write hook's one note) do without either."""
        import numpy as np

        from shardpy.index.bpe import Bpe

        if self.whole is None:
            self.whole = np.ascontiguousarray(self.table, dtype=np.float32)
        if isinstance(self.tok, Bpe):
            self.tok.for_many()

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        if len(texts) >= MANY_TEXTS:
            self.for_many()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for lo in range(0, len(texts), STATIC_BATCH):
            for k, row in enumerate(_static_ids(self.tok, texts[lo : lo + STATIC_BATCH])):
                if row:
                    out[lo + k] = self._rows(row).sum(axis=0) / len(row)
        return normalised(out)

    def _rows(self, row: list[int]) -> NDArray[np.float32]:
        """The text's token rows as float32. Each text's rows are gathered and summed alone, while
        they are in the CPU's cache: a gather of the whole batch first, then a slice sum per text,
        took twice as long for the same sums (bench/search_bench.py). "clip": an id past the table
        is its last row. Without :meth:`for_many`, only these rows are converted: float16 to
        float32 is exact, so the sums are the same bytes (tests/index/test_parallel_embed.py)."""
        import numpy as np

        if self.whole is None:
            got: NDArray[np.float32] = np.take(self.table, row, axis=0, mode="clip").astype(np.float32)
            return got
        if self.buf is None or len(row) > len(self.buf):
            self.buf = np.empty((max(len(row), MAX_TOKENS), self.dim), dtype=np.float32)
        rows: NDArray[np.float32] = np.take(self.whole, row, axis=0, mode="clip", out=self.buf[: len(row)])
        return rows


def _static_ids(tok: Any, texts: Sequence[str]) -> list[list[int]]:
    """Each text's first MAX_TOKENS ids, without special tokens."""
    from shardpy.index.bpe import Bpe

    if isinstance(tok, Bpe):
        return [tok.encode(t, limit=MAX_TOKENS) for t in texts]
    return [e.ids for e in tok.encode_batch(list(texts), add_special_tokens=False)]


def _static(name: str, weights: Path, tokenizer: Path) -> StaticEmbedder:
    import numpy as np

    tables = [t for t in tensors(weights).values() if t.ndim == 2]
    if len(tables) != 1:
        raise Unavailable(f"{weights} does not hold exactly one embedding table")
    table = tables[0]
    if table.dtype not in (np.float16, np.float32):
        table = np.ascontiguousarray(table, dtype=np.float32)
    return StaticEmbedder(name, int(table.shape[1]), table, _static_tokenizer(tokenizer))


def _static_tokenizer(path: Path) -> Any:
    """shardpy/index/bpe.py when it reproduces the tokenizer (the bundled model's: a third of the
    Rust tokenizer's time on sections, which it BPE-merged whole, and identical ids), else ``tokenizers``."""
    from shardpy.index import bpe

    try:
        return bpe.Bpe(bpe.load_tables(path))  # the merges become a dict for many texts (for_many)
    except (bpe.Unsupported, OSError, KeyError, TypeError, AttributeError):
        return _tokenizer(path, specials=False)


def _digest(path: Path) -> str:
    st = path.stat()
    from shardpy.fsutil import sha256_bytes

    return sha256_bytes(f"{path.resolve()}:{st.st_size}".encode())[:12]


WORDLLAMA_WEIGHTS = "weights/l2_supercat_256.safetensors"
WORDLLAMA_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


def _wordllama_root() -> Path:
    spec = importlib.util.find_spec("wordllama")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable("the wordllama package is not installed (pip install wordllama)")
    root = Path(next(iter(spec.submodule_search_locations)))
    for needed in (root / WORDLLAMA_WEIGHTS, root / WORDLLAMA_TOKENIZER):
        if not needed.is_file():
            raise Unavailable(f"the wordllama package lacks {needed.name} (reinstall it)")
    return root


def _wordllama() -> StaticEmbedder:
    root = _wordllama_root()
    return _static(WORDLLAMA_NAME, root / WORDLLAMA_WEIGHTS, root / WORDLLAMA_TOKENIZER)


def _folder_name(root: Path) -> str:
    weights = root / "model.safetensors"
    kind = "bert" if (root / "config.json").is_file() else "static"
    return f"{kind}:{root.name}:{_digest(weights)}/{MAX_TOKENS}"


def _folder(root: Path) -> Embedder:
    weights, tokenizer = root / "model.safetensors", root / "tokenizer.json"
    for needed in (weights, tokenizer):
        if not needed.is_file():
            raise Unavailable(f"{root} has no {needed.name}")
    if (root / "config.json").is_file():
        from shardpy.index.embed_bert import bert

        return bert(root, _folder_name(root), _tokenizer(tokenizer, specials=True))
    return _static(_folder_name(root), weights, tokenizer)


def expected_name() -> str | None:
    """The name :func:`load` would give the configured model, without loading it (None: off, or
    a folder that is not there); a refresh that changed nothing compares it with the stored one."""
    spec = configured()
    if spec.lower() in OFF:
        return None
    if spec == DEFAULT:
        return WORDLLAMA_NAME
    try:
        return _folder_name(Path(spec).expanduser())
    except OSError:
        return None


def configured() -> str:
    """What ``SHARDPY_EMBED_MODEL`` asks for (the default when unset)."""
    return os.environ.get(ENV, "").strip() or DEFAULT


def enabled() -> bool:
    return configured().lower() not in OFF


_LOCK = threading.Lock()
_LOADED: dict[str, Embedder | Unavailable] = {}


def load() -> Embedder:
    """The configured model, loaded once per process; :class:`Unavailable` says why not."""
    spec = configured()
    with _LOCK:
        got = _LOADED.get(spec)
        if got is None:
            try:
                got = _load(spec)
            except Unavailable as exc:
                got = exc
            except (OSError, ValueError, KeyError, ImportError, MemoryError) as exc:
                got = Unavailable(f"{spec}: {exc}")
            _LOADED[spec] = got
    if isinstance(got, Unavailable):
        raise got
    return got


def _load(spec: str) -> Embedder:
    if spec.lower() in OFF:
        raise Unavailable(f"{ENV}={spec}")
    offline()
    if spec == DEFAULT:
        return _wordllama()
    root = Path(spec).expanduser()
    if not root.is_dir():
        raise Unavailable(f"{ENV}={spec} is neither 'wordllama' nor a folder holding a model")
    return _folder(root)


class _Loaded(Record):
    """A query vector from the fully loaded model (a folder model)."""

    name: str
    dim: int
    model: Embedder

    def vector(self, text: str) -> list[float]:
        return [float(x) for x in self.model.encode([text])[0]]


class _LightStatic(Record):
    """The bundled static model for one short text without numpy or ``tokenizers``: the ids from
    shardpy/index/bpe.py, the rows read from the weights file where they lie (a one-shot search
    loaded 1.1 s of tokenizer and 0.4 s of weights to embed a dozen words; issue 29)."""

    name: str
    dim: int
    weights: Path
    offset: int  # of the table's first row in the file
    rows: int
    tok: Any  # bpe.Bpe

    def vector(self, text: str) -> list[float]:
        ids = self.tok.encode(text, limit=MAX_TOKENS)
        total = [0.0] * self.dim
        row = struct.Struct(f"<{self.dim}e")
        with open(self.weights, "rb") as fh:
            for tid, count in collections.Counter(min(max(t, 0), self.rows - 1) for t in ids).items():
                fh.seek(self.offset + tid * row.size)
                for k, x in enumerate(row.unpack(fh.read(row.size))):
                    total[k] += x * count
        norm = math.sqrt(sum(x * x for x in total)) or 1.0
        return [x / norm for x in total]  # the mean's direction: dividing by len(ids) changes nothing


def _light_wordllama() -> QueryModel:
    from shardpy.index import bpe

    root = _wordllama_root()
    weights, tokenizer = root / WORDLLAMA_WEIGHTS, root / WORDLLAMA_TOKENIZER
    with open(weights, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    header.pop("__metadata__", None)
    tables = [t for t in header.values() if len(t["shape"]) == 2]
    if len(tables) != 1 or tables[0]["dtype"] != "F16":
        raise bpe.Unsupported("the weights are not one float16 table")
    rows, dim = tables[0]["shape"]
    start = 8 + size + int(tables[0]["data_offsets"][0])
    return _LightStatic(
        WORDLLAMA_NAME, int(dim), weights, start, int(rows), bpe.Bpe(bpe.load_tables(tokenizer))
    )


_QUERY: dict[str, QueryModel | Unavailable | None] = {}  # None: the light path does not apply


def query_model() -> QueryModel:
    """What embeds a query: the bundled model without loading it whole (numpy, ``tokenizers``,
    the weights), a folder model loaded; :class:`Unavailable` says why there is none."""
    spec = configured()
    if spec == DEFAULT:
        with _LOCK:
            if spec not in _QUERY:
                _QUERY[spec] = _light_or_none()
            got = _QUERY[spec]
        if isinstance(got, Unavailable):
            raise got
        if got is not None:
            return got
    model = load()
    return _Loaded(model.name, model.dim, model)


def _light_or_none() -> QueryModel | Unavailable | None:
    try:
        return _light_wordllama()
    except Unavailable as exc:
        return exc
    except (OSError, ValueError, KeyError, TypeError, ImportError):  # and bpe.Unsupported
        return None  # the full model decides (and says what is wrong with it)


def section_text(title: str, heading: str, body: str) -> str:
    """What stands for a section when it is embedded: the note's title, the heading path, the text."""
    # Tokenizing costs by the character; only the first MAX_TOKENS tokens (~4 characters each) count.
    return "\n".join(part for part in (title, heading, body[: MAX_TOKENS * 6]) if part)
