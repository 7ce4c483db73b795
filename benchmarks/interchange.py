"""Benchmark: goldloop's export + re-import of a gold in each interchange format vs the format's
own library writing and reading the same documents (the ``bioc`` package; spaCy for DocBin).

    .venv/bin/python benchmarks/interchange.py                # 2,000 documents
    .venv/bin/python benchmarks/interchange.py --docs 10000   # the issue's size

Synthetic ~1,200-character abstracts with ``--hits`` hits each, carrying every gold field
(direction, label, source, verdict, sampling fields), with astral characters and CRLF in some.
goldloop's side is ``export_gold`` + ``import_corpus`` (validated and folded through the bundled
KB, as ``goldloop import`` does; for DocBin, which goldloop does not import, spaCy reads it
back). The baseline builds the library's own objects from the same documents, with the same
fields where its format has a place for them (BioC infons as ``str(value)``, a BRAT note per
hit, spaCy ``user_data``; PubTator has none: offsets, surface, type and id only), writes them to
the same kind of file and reads them back with the same library. Both in
one process, alternating, best of ``--repeat``; the target is goldloop ≤ 2× the baseline.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import bioc
import spacy
from bioc import biocjson, biocxml
from bioc import brat as bioc_brat
from bioc import pubtator as bioc_pubtator
from spacy.tokens import DocBin

from goldloop.formats.gold import Document, Hit
from goldloop.interchange import EXPORT_FORMATS, export_gold, import_corpus
from goldloop.kb import KB, load_kb

WORDS = (
    "the", "cytokine", "activates", "STAT3", "in", "hepatocytes", "and", "is", "regulated", "by",
    "NF-κB", "TNF-α", "induces", "apoptosis", "😀", "𝔸", "ﬁnds", "e\u0301x", "cells", "binds",
)  # fmt: skip


def make_documents(n: int, hits: int, kb: KB, seed: int = 7) -> list[Document]:
    rng = random.Random(seed)
    ids = [r.entity_id for r in kb if r.is_canonical and not r.is_symmetric][:50]
    documents = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(170)]
        text = " ".join(words) + "."
        if i % 4 == 0:
            text = text.replace(" and ", " and\r\n", 2)
        starts, position = [], 0
        for word in words:
            starts.append((position, word))
            position += len(word) + 1
        chosen = sorted(rng.sample(range(len(words)), hits))
        ground_truth = []
        for k in chosen:
            a, word = starts[k]
            a = text.index(word, a)
            ground_truth.append(
                Hit(
                    a=a,
                    b=a + len(word),
                    surface=word,
                    entity_id=rng.choice(ids),
                    label="x",
                    direction=rng.choice(("forward", "inverse", "na")),
                    source="llm",
                    verdict="accept",
                    surface_anchored=True,
                    decided="single",
                )
            )
        documents.append(
            Document(
                doc_id=f"pmid:{i}",
                text=text,
                ids={"pmid": str(i)},
                role="primary",
                batch=0,
                p_incl=0.01,
                stratum="y0-low-common",
                ground_truth=ground_truth,
            )
        )
    return documents


def goldloop_side(fmt: str, documents: list[Document], kb: KB, folder: Path) -> None:
    out = folder / f"goldloop.{fmt}"
    export_gold(fmt, documents, out)
    if fmt == "spacy":
        list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    else:
        import_corpus(fmt, out, kb)


def bioc_collection(documents: list[Document]) -> bioc.BioCCollection:
    collection = bioc.BioCCollection()
    for document in documents:
        doc = bioc.BioCDocument()
        doc.id = document.doc_id
        doc.infons = {k: str(v) for k, v in document.fields_json().items() if k != "text"}
        passage = bioc.BioCPassage()
        passage.offset = 0
        passage.text = document.text
        for k, hit in enumerate(document.ground_truth):
            annotation = bioc.BioCAnnotation()
            annotation.id = str(k)
            annotation.infons = {k: str(v) for k, v in hit.to_json().items()}
            annotation.text = hit.surface
            annotation.add_location(bioc.BioCLocation(hit.a, hit.b - hit.a))
            passage.add_annotation(annotation)
        doc.add_passage(passage)
        collection.add_document(doc)
    return collection


def baseline(fmt: str, documents: list[Document], folder: Path) -> None:
    out = folder / f"baseline.{fmt}"
    if fmt == "bioc-xml":
        out.write_text(biocxml.dumps(bioc_collection(documents)), encoding="utf-8")
        with out.open("rb") as handle:
            biocxml.load(handle)
    elif fmt == "bioc-json":
        out.write_text(biocjson.dumps(bioc_collection(documents)), encoding="utf-8")
        with out.open(encoding="utf-8") as handle:
            biocjson.load(handle)
    elif fmt == "pubtator":
        docs = []
        for document in documents:
            doc = bioc_pubtator.PubTator(document.doc_id, "", document.text.replace("\r\n", "  "))
            for hit in document.ground_truth:
                doc.add_annotation(
                    bioc_pubtator.PubTatorAnn(
                        document.doc_id,
                        hit.a + 1,
                        hit.b + 1,
                        hit.surface,
                        "Predicate",
                        hit.entity_id,
                    )
                )
            docs.append(doc)
        out.write_text(bioc_pubtator.dumps(docs), encoding="utf-8")
        bioc_pubtator.loads(out.read_text(encoding="utf-8"))
    elif fmt == "brat":
        out.mkdir(exist_ok=True)
        for document in documents:
            doc = bioc_brat.BratDocument()
            for k, hit in enumerate(document.ground_truth):
                entity = bioc_brat.BratEntity()
                entity.id, entity.type, entity.text = f"T{k + 1}", "Predicate", hit.surface
                entity.add_span(hit.a, hit.b)
                doc.add_annotation(entity)
                note = bioc_brat.BratNote()
                note.id, note.type, note.refid = f"#{k + 1}", "AnnotatorNotes", entity.id
                note.text = json.dumps(hit.to_json(), ensure_ascii=False)
                doc.add_annotation(note)
            name = document.doc_id.replace(":", "_")
            (out / f"{name}.txt").write_bytes(document.text.encode("utf-8"))
            (out / f"{name}.ann").write_text(bioc_brat.encoder.dumps_ann(doc), encoding="utf-8")
        for document in documents:
            name = document.doc_id.replace(":", "_")
            with (
                (out / f"{name}.txt").open(encoding="utf-8", newline="") as text,
                (out / f"{name}.ann").open(encoding="utf-8") as ann,
            ):
                bioc_brat.decoder.load(text, ann, name)
    else:
        nlp = spacy.blank("en")
        doc_bin = DocBin(store_user_data=True)
        for document in documents:
            doc = nlp.make_doc(document.text)
            spans = [
                doc.char_span(h.a, h.b, label=h.entity_id, alignment_mode="expand")
                for h in document.ground_truth
            ]
            doc.spans["mentions"] = [span for span in spans if span is not None]
            doc.user_data["goldloop"] = {
                **document.fields_json(),
                "hits": [h.to_json() for h in document.ground_truth],
            }
            doc_bin.add(doc)
        doc_bin.to_disk(out)
        list(DocBin().from_disk(out).get_docs(nlp.vocab))


def best(run: Callable[[], None], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--hits", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    kb = load_kb()
    documents = make_documents(args.docs, args.hits, kb)
    print(f"{args.docs} documents, {args.docs * args.hits} hits, best of {args.repeat}")
    print(f"{'format':<10} {'goldloop s':>11} {'baseline s':>11} {'ratio':>7}  target ≤ 2×")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for fmt in EXPORT_FORMATS:
            ours = theirs = float("inf")
            for _ in range(args.repeat):  # alternate, so load swings hit both sides
                theirs = min(theirs, best(partial(baseline, fmt, documents, folder), 1))
                ours = min(ours, best(partial(goldloop_side, fmt, documents, kb, folder), 1))
            ratio = ours / theirs
            worst = max(worst, ratio)
            print(f"{fmt:<10} {ours:>11.2f} {theirs:>11.2f} {ratio:>6.2f}×")
    print(f"worst ratio {worst:.2f}× ({'met' if worst <= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
