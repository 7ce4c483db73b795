"""A local sentence encoder: an ONNX export and its tokenizer, run with ONNX Runtime.

The model directory is what the reference's ``--model-path`` names: a sentence-transformers
folder with an ONNX export (``model.onnx`` or ``onnx/model.onnx``) and ``tokenizer.json``.
Nothing is ever downloaded; a directory that lacks a part is refused, naming the part. The
pooling is the folder's (``1_Pooling/config.json``: CLS or mean over real tokens, mean when
absent), and every embedding is L2-normalised, so a dot product is the cosine.

The embeddings of the KB's ``label: description`` texts are cached per KB and encoder (both by
content digest; the encoder's covers its pooling and maximum length too) in the folder the encoder's door names (the CLI's: ``<GOLDLOOP_HOME>/encoder/``).

ONNX Runtime and tokenizers are the ``encoder`` extra: they load when an encoder is opened.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.errors import GoldloopError, SettingError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_bytes
from goldloop.kb import KB, Relation

MODEL_FILES = ("model.onnx", "onnx/model.onnx")
TOKENIZER = "tokenizer.json"
MAX_LENGTH = 256  # all-MiniLM's limit, when the folder does not say (sentence_bert_config.json)
BATCH = 32


class Encoder:
    """An opened model directory: :meth:`embed` gives unit vectors, one row per text."""

    def __init__(self, path: Path, cache_dir: Path | None = None) -> None:
        self.path = path
        # Where kb_embeddings keeps this encoder's KB embeddings (None: computed every time).
        self.cache_dir = cache_dir
        model, tokenizer = _parts(path)
        try:
            # The encoder extra loads only when an encoder is opened.
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError:
            raise GoldloopError(
                "the encoder baseline needs the encoder extra (onnxruntime, tokenizers): "
                "pip install 'goldloop[encoder]'"
            ) from None
        options = onnxruntime.SessionOptions()
        # Fatal only: warnings about unused initialisers are not the user's, and an error is
        # raised as well as logged (embed reports it in one line).
        options.log_severity_level = 4
        try:
            self._session = onnxruntime.InferenceSession(
                str(model), options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # both libraries raise their own, untyped, errors
            raise SettingError("encoder", f"{path}: cannot load the model: {exc}") from None
        max_length = _max_length(path)
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._cls = _cls_pooling(path)
        # Names the cached KB embeddings: every setting that changes a vector is in it (the
        # same model read with another pooling or cut gives other vectors).
        digest = hashlib.sha256(model.read_bytes())
        digest.update(tokenizer.read_bytes())
        pooling = "cls" if self._cls else "mean"
        digest.update(json.dumps({"pooling": pooling, "max_length": max_length}).encode())
        self.identity = digest.hexdigest()[:16]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts`` (float32, one row each)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # Batched by length: a batch is padded to its longest text, and a KB's descriptions run
        # from a few words to a paragraph (the bundled KB embeds in 2.3x the time in KB order).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        by_length = [texts[i] for i in order]
        chunks = [self._batch(by_length[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        vectors = np.empty_like(chunks[0], shape=(len(texts), chunks[0].shape[1]))
        vectors[order] = np.concatenate(chunks)
        return vectors

    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            hidden = self._session.run(None, feeds)[0]
        except Exception as exc:  # ONNX Runtime's errors are untyped: a token id past the
            # model's vocabulary (a tokenizer.json of another model) is one
            raise SettingError(
                "encoder", f"{self.path}: the model cannot run on the tokenizer's ids: {exc}"
            ) from None
        if self._cls:
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(hidden.dtype)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def _parts(path: Path) -> tuple[Path, Path]:
    """The ONNX file and the tokenizer of a model directory; what is missing, named."""
    if not path.is_dir():
        raise SettingError("encoder", f"{path}: not a model directory")
    model = next((path / name for name in MODEL_FILES if (path / name).is_file()), None)
    missing = [] if model else [f"an ONNX export ({' or '.join(MODEL_FILES)})"]
    if not (path / TOKENIZER).is_file():
        missing.append(TOKENIZER)
    if missing or model is None:
        raise SettingError(
            "encoder", f"{path}: not a model directory: it lacks {' and '.join(missing)}"
        )
    return model, path / TOKENIZER


def _json(path: Path) -> dict[str, Any]:
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _max_length(path: Path) -> int:
    value = _json(path / "sentence_bert_config.json").get("max_seq_length")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return MAX_LENGTH


def _cls_pooling(path: Path) -> bool:
    return bool(_json(path / "1_Pooling" / "config.json").get("pooling_mode_cls_token"))


def relation_text(relation: Relation) -> str:
    """What a relation is embedded as: ``label: description`` (the label alone without one)."""
    return f"{relation.label}: {relation.description}" if relation.description else relation.label


def kb_embeddings(encoder: Encoder, kb: KB) -> tuple[list[Relation], np.ndarray]:
    """The KB's canonical relations and their embeddings, from the encoder's cache folder when it
    has them; an encoder without one computes them every time and keeps them nowhere."""
    relations = kb.canonical_relations()
    folder = encoder.cache_dir
    cached = folder / f"{kb.sha256[:16]}-{encoder.identity}.npy" if folder else None
    if cached is not None and cached.is_file():
        try:
            vectors = np.load(cached, allow_pickle=False)
            if vectors.shape[0] == len(relations):
                return relations, vectors
        except (OSError, ValueError):
            pass  # a damaged cache file is computed again and replaced
    vectors = encoder.embed([relation_text(r) for r in relations])
    if cached is not None:
        buffer = io.BytesIO()
        np.save(buffer, vectors, allow_pickle=False)
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(cached, buffer.getvalue())
    return relations, vectors
