"""A sentence-transformers BERT encoder (all-MiniLM-L6-v2 and its kind) run with numpy.

For a user who points ``SHARDPY_EMBED_MODEL`` at such a model folder on disk:
no torch, no download. Mean pooling over the last layer, then L2
normalisation, as sentence-transformers does for these models.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from shardpy.index.arrays import BATCH, batch_ids, normalised, tensors

Arr = NDArray[np.float32]


def _ln(x: Arr, w: Arr, b: Arr, eps: float) -> Arr:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    # astype without a copy: numpy's stubs since 2.5 type float32 arithmetic with a Python float as
    # float64 (at run time it stays float32), and the suite's mypy runs against whichever numpy is installed.
    out: Arr = ((x - mu) / np.sqrt(var + eps) * w + b).astype(np.float32, copy=False)
    return out


def _gelu(x: Arr) -> Arr:
    out = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))
    return out.astype(np.float32, copy=False)


@dataclass
class BertEmbedder:
    name: str
    dim: int
    w: dict[str, Arr]
    heads: int
    layers: int
    eps: float
    tok: Any

    def _layer(self, x: Arr, bias: Arr, i: int) -> Arr:
        w, p = self.w, f"encoder.layer.{i}."
        n, length, d = x.shape
        hd = d // self.heads

        def proj(name: str) -> Arr:
            y: Arr = x @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            return y.reshape(n, length, self.heads, hd).transpose(0, 2, 1, 3)

        q, k, v = proj("attention.self.query"), proj("attention.self.key"), proj("attention.self.value")
        att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + bias
        att = np.exp(att - att.max(axis=-1, keepdims=True))
        att /= att.sum(axis=-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, d)
        out = ctx @ w[p + "attention.output.dense.weight"].T + w[p + "attention.output.dense.bias"]
        x = _ln(
            x + out,
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            self.eps,
        )
        h = _gelu(x @ w[p + "intermediate.dense.weight"].T + w[p + "intermediate.dense.bias"])
        out = h @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        return _ln(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)

    def _forward(self, ids: NDArray[np.int64], mask: Arr) -> Arr:
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for i in range(self.layers):
            x = self._layer(x, bias, i)
        pooled = (x * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        out: Arr = pooled.astype(np.float32, copy=False)  # _ln says why
        return out

    def encode(self, texts: Sequence[str]) -> Arr:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        step = min(BATCH, 32)
        for lo in range(0, len(texts), step):
            ids, mask = batch_ids(self.tok, [t or " " for t in texts[lo : lo + step]])
            out[lo : lo + len(ids)] = self._forward(ids, mask)
        return normalised(out)


def bert(root: Path, name: str, tok: Any) -> BertEmbedder:
    cfg = json.loads((root / "config.json").read_text(encoding="utf-8"))
    raw = tensors(root / "model.safetensors")
    weights = {
        k.removeprefix("bert."): np.array(v, dtype=np.float32) for k, v in raw.items() if v.dtype != np.int64
    }
    if "embeddings.word_embeddings.weight" not in weights:
        raise ValueError(f"{root} is not a BERT model this reader knows")
    return BertEmbedder(
        name,
        int(cfg["hidden_size"]),
        weights,
        int(cfg["num_attention_heads"]),
        int(cfg["num_hidden_layers"]),
        float(cfg.get("layer_norm_eps", 1e-12)),
        tok,
    )
