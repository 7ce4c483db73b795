"""The error promise, command by command: every class of bad input gets its exit code and one
short line naming the file or option, with no traceback, and leaves every file as it was.

Classes (issue "the error promise"): 1 an output that is an input, 3 an output that cannot be
written, 4 a CSV/TSV that is malformed, 5 a value out of its range or unchecked, 6 a server that
is not Label Studio, 7 the backend on a port in use. Class 2 (a failed LLM run replacing a good
output) is tested beside the annotate and judge runs.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from goldloop.kb import KB
from goldloop.llm.pricing import BUNDLED_PRICES
from goldloop.settings import BUNDLED_KB
from tests.conftest import Cli
from tests.llm.test_encoder import past_the_vocabulary

SAMPLE = Path(__file__).parents[1] / "data" / "sample"
TEXT = "IL-6 regulates TNF. A inhibits B."


@dataclass(frozen=True)
class Work:
    """A folder of valid inputs, plus a plain file and an empty folder to misuse as outputs."""

    root: Path
    docs: Path
    gold: Path
    other: Path
    sample: Path
    system: Path
    verdicts: Path
    labels: Path
    merged: Path
    kb: Path
    a_file: Path
    a_dir: Path
    port: int  # a loopback port with nothing listening

    def write(self, name: str, data: bytes | str) -> Path:
        path = self.root / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path


def _hit(a: int, b: int, entity_id: str) -> dict[str, object]:
    return {"a": a, "b": b, "surface": TEXT[a:b], "entity_id": entity_id, "direction": "forward"}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Work:
    root = tmp_path / "work"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("GOLDLOOP_HOME", str(root / ".goldloop"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    docs = root / "docs.jsonl"
    docs.write_text(json.dumps({"doc_id": "pmid:1", "text": TEXT}) + "\n")
    gold, other = root / "gold.json", root / "other.json"
    gold.write_text(json.dumps([{"doc_id": "pmid:1", "text": TEXT,
                                 "ground_truth": [_hit(5, 14, "RO.0002211")]}]))  # fmt: skip
    other.write_text(json.dumps([{"doc_id": "pmid:1", "text": TEXT,
                                  "ground_truth": [_hit(22, 30, "PEL.000018")]}]))  # fmt: skip
    sample = root / "sample"
    shutil.copytree(SAMPLE, sample)
    system = root / "system.jsonl"
    system.write_text(json.dumps({"doc_id": "pmid:1", "a": 5, "b": 14,
                                  "entity_id_predicted": "RO.0002211"}) + "\n")  # fmt: skip
    verdicts = root / "verdicts.jsonl"
    verdicts.write_text(json.dumps({"doc_id": "pmid:1", "a": 5, "b": 14,
                                    "entity_id": "RO.0002211", "verdict": "supported"}) + "\n")  # fmt: skip
    labels = root / "labels.jsonl"
    labels.write_text(json.dumps({"doc_id": "pmid:1", "a": 5, "b": 14, "entity_id": "RO.0002211",
                                  "label": "supported"}) + "\n")  # fmt: skip
    merged = root / "merged.csv"
    merged.write_text("entity_id,label\nX:1,regulates\nX:2,regulated by\n")
    kb = root / "kb.csv"
    shutil.copy(BUNDLED_KB, kb)
    a_file = root / "file.txt"
    a_file.write_text("not a folder\n")
    a_dir = root / "folder"
    a_dir.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return Work(root, docs, gold, other, sample, system, verdicts, labels, merged, kb, a_file,
                a_dir, port)  # fmt: skip


Args = Callable[[Work], list[object]]


@dataclass(frozen=True)
class Case:
    args: Args
    code: int
    needles: tuple[str, ...]  # in the one error line; "{name}" is filled from the workspace
    env: dict[str, str] = field(default_factory=dict)  # "{root}" is filled too


def case(args: Args, code: int, *needles: str, env: dict[str, str] | None = None) -> Case:
    return Case(args, code, needles, env or {})


# Issue 44, items 1-6: inputs never overwritten, BRAT names unique, the review sheet's added
# rows, PubTator headers, no traceback in the formats and the encoder, BRAT files kept inside
# the corpus folder.

BIOC_JSON = {
    "source": "", "date": "", "key": "", "infons": {},
    "documents": [{
        "id": "pmid:1", "infons": {}, "annotations": [], "relations": [],
        "passages": [{
            "offset": 0, "infons": {}, "text": TEXT, "sentences": [], "relations": [],
            "annotations": [{"id": "T1", "infons": {"type": "Predicate",
                                                     "identifier": "RO.0002211"},
                             "text": "regulates", "locations": [{"offset": 5, "length": 9}]}],
        }],
    }],
}  # fmt: skip
ANN = "T1\tPredicate 5 14\tregulates\nN1\tReference T1 goldloop:RO.0002211\t\n"
SHEET_HEAD = "doc_id\ta\tb\tsurface\tentity_id\tdirection\torigin\tverdict\n"
ACCEPTED = "pmid:1\t5\t14\tregulates\tRO.0002211\tforward\tgold\taccept\n"


def _brat(w: Work, side: object = None, folder: str = "corp") -> Path:
    """A BRAT corpus of one document (``x``), with ``side`` as its goldloop.json when given."""
    corpus = w.root / folder
    corpus.mkdir(exist_ok=True)
    (corpus / "x.txt").write_text(TEXT)
    (corpus / "x.ann").write_text(ANN)
    if side is not None:
        (corpus / "goldloop.json").write_text(json.dumps(side))
    return corpus


def _bioc(w: Work, where: str, value: object) -> Path:
    """BioC JSON of the one document with the value at ``where`` (a dotted path) replaced."""
    data = json.loads(json.dumps(BIOC_JSON))
    *path, last = where.split(".")
    node = data
    for key in path:
        node = node[int(key) if key.isdigit() else key]
    node[last] = value
    return w.write("c.bioc.json", json.dumps(data))


def _pubtator(w: Work, header: str) -> Path:
    return w.write("c.pub", f"#goldloop {header}\npmid:1|t|\npmid:1|a|{TEXT}\n"
                            "pmid:1\t6\t15\tregulates\tPredicate\tRO.0002211\n\n")  # fmt: skip


def _beside_kb(w: Work) -> Path:
    """``equivalences.csv`` beside ``kb.csv``: the KB reads it when --equivalences is not given."""
    return w.write("equivalences.csv", "entity_id,equivalent_to,tier\n")


def _sheet(w: Work, *rows: str) -> Path:
    return w.write("s.tsv", SHEET_HEAD + "".join(rows))


class Refusals:
    """A class of cases: ``test_refused`` runs each of its ``REFUSED``."""

    REFUSED: ClassVar[dict[str, Case]] = {}

    def test_refused(self, name: str, work: Work, cli: Cli) -> None:
        assert_refused(self.REFUSED[name], work, cli)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A case per entry of the class's ``REFUSED`` (pytest's hook, read from this module)."""
    cls = metafunc.cls
    if (
        cls is not None
        and issubclass(cls, Refusals)
        and metafunc.function.__name__ == "test_refused"
    ):
        metafunc.parametrize("name", list(cls.REFUSED))


EXPORT = ["export", "--gold", "gold.json", "--format", "pubtator"]
SHEET_IMPORT = ["sheet", "import", "--gold", "gold.json", "--verified-by", "r@x.org"]


class TestInputsAreNeverOverwritten(Refusals):
    """Item 1: every file a command reads (options, sidecars beside them, files in an input
    folder) is an input; every file it writes (those an output folder receives too) is checked
    against them before any work."""

    REFUSED: ClassVar[dict[str, Case]] = {
        "export-out-is-the-kb": case(lambda w: [*EXPORT, "--kb", w.kb, "--out", w.kb],
                                     2, "--out {kb}", "--kb {kb}", "same file"),
        "export-out-is-the-equivalences": case(
            lambda w: [*EXPORT, "--equivalences", _beside_kb(w), "--out", "equivalences.csv"],
            2, "--equivalences {root}/equivalences.csv", "same file"),
        "export-out-is-the-equivalences-beside-the-kb": case(
            lambda w: [*EXPORT, "--kb", w.kb, "--out", _beside_kb(w)],
            2, "--kb (its equivalences) {root}/equivalences.csv", "same file"),
        "export-out-is-the-golds-verification": case(
            lambda w: [*EXPORT, "--out", w.write("gold.json.verification.json", "{}")],
            2, "--gold (its verification counts)", "same file"),
        "export-brat-folder-receives-the-gold": case(
            lambda w: ["export", "--format", "brat", "--out", "corp", "--gold",
                       shutil.copy(w.gold, _brat(w) / "goldloop.json")],
            2, "--out (its goldloop.json) corp/goldloop.json", "--gold", "same file"),
        "import-out-is-a-corpus-text": case(
            lambda w: ["import", "--format", "brat", "--in", _brat(w), "--out", "corp/x.txt"],
            2, "--out corp/x.txt is a file of --in {root}/corp"),
        "import-out-is-the-kb": case(
            lambda w: ["import", "--format", "brat", "--in", _brat(w), "--kb", w.kb,
                       "--out", w.kb], 2, "--out {kb}", "--kb {kb}"),
        "sheet-export-output-is-the-kb": case(
            lambda w: ["sheet", "export", "--gold", "gold.json",
                       "--kb", shutil.copy(w.kb, w.root / "kb.tsv"), "--output", "kb.tsv"],
            2, "--output kb.tsv and --kb {root}/kb.tsv"),
        "sheet-import-output-is-the-equivalences": case(
            lambda w: [*SHEET_IMPORT, "--sheet", _sheet(w, ACCEPTED), "--kb", w.kb,
                       "--output", _beside_kb(w)], 2, "--kb (its equivalences)"),
        "agree-out-is-the-kb": case(
            lambda w: ["agree", "--gold", "gold.json", "--other", "other.json", "--kb", w.kb,
                       "--out", w.kb], 2, "--out {kb}", "--kb {kb}"),
        "agree-png-is-the-equivalences": case(
            lambda w: ["agree", "--gold", "gold.json", "--other", "other.json",
                       "--equivalences", _beside_kb(w), "--png", "equivalences.csv"],
            2, "--png equivalences.csv", "--equivalences"),
    }  # fmt: skip


class TestBratNamesAreUnique:
    """Item 2: doc ids that make one file name (``a_b``, ``a_b.2``, ``a:b``) keep a file each."""

    IDS = ("a_b", "a_b.2", "a:b", "A:B", "", "goldloop")

    def test_every_document_is_written_and_read_back(self, work: Work, cli: Cli) -> None:
        gold = work.write("many.json", json.dumps([
            {"doc_id": doc_id, "text": TEXT, "ground_truth": [_hit(5, 14, "RO.0002211")]}
            for doc_id in self.IDS]))  # fmt: skip
        result = cli("export", "--gold", gold, "--format", "brat", "--out", "corp")
        assert result.returncode == 0, result.stderr
        files = sorted(p.name for p in (work.root / "corp").iterdir())
        assert len(files) == 1 + 2 * len(self.IDS), files
        result = cli("import", "--format", "brat", "--in", "corp", "--out", "back.json")
        assert result.returncode == 0, result.stderr
        back = json.loads((work.root / "back.json").read_text())
        assert tuple(d["doc_id"] for d in back) == self.IDS
        assert all(d["ground_truth"][0]["surface"] == "regulates" for d in back)


class TestSheetImportWritesGoldThatPassesCheck(Refusals):
    """Item 3: an added row that is not a span, or that repeats a kept span, is refused."""

    REFUSED: ClassVar[dict[str, Case]] = {
        "added-row-a-equals-b": case(
            lambda w: [*SHEET_IMPORT, "--output", "v.json", "--sheet", _sheet(
                w, ACCEPTED, "pmid:1\t22\t22\t\tRO.0002211\tforward\tadded\taccept\n")],
            2, "{root}/s.tsv", "line 3", "[22, 22) is empty"),
        "added-row-repeats-an-accepted-candidate": case(
            lambda w: [*SHEET_IMPORT, "--output", "v.json", "--sheet", _sheet(
                w, ACCEPTED, ACCEPTED.replace("gold", "added"))],
            2, "line 3", "[5, 14) is kept by another row already"),
        "added-row-before-the-candidate-it-repeats": case(
            lambda w: [*SHEET_IMPORT, "--output", "v.json", "--sheet", _sheet(
                w, ACCEPTED.replace("gold", "added"), ACCEPTED)],
            2, "line 3", "[5, 14) is kept by another row already"),
    }  # fmt: skip

    def test_an_added_row_becomes_a_hit_gold_check_accepts(self, work: Work, cli: Cli) -> None:
        sheet = _sheet(
            work, ACCEPTED, "pmid:1\t22\t30\tinhibits\tPEL.000018\tforward\tadded\taccept\n"
        )
        result = cli(*SHEET_IMPORT, "--sheet", sheet, "--output", "v.json")
        assert result.returncode == 0, result.stderr
        assert cli("gold", "check", "v.json").returncode == 0
        hits = json.loads((work.root / "v.json").read_text())[0]["ground_truth"]
        assert [(h["a"], h["b"]) for h in hits] == [(5, 14), (22, 30)]


PUBTATOR = ["import", "--format", "pubtator", "--out", "g.json", "--in"]


class TestPubtatorHeader(Refusals):
    """Item 4: a malformed ``#goldloop`` header is refused; a line break it puts back is one
    character, so no offset after it moves (surfaces are checked on the final text)."""

    # A header → what the error line says of it.
    HEADERS: ClassVar[dict[str, tuple[str, str]]] = {
        "line-break-longer-than-one-character": (
            '{"line_breaks": {"YZ": [4]}}', "line_breaks key 'YZ' is not one line-break character"),
        "line-break-that-is-not-a-line-break": ('{"line_breaks": {"Y": [4]}}', "line_breaks key 'Y'"),
        "line-break-position-negative": ('{"line_breaks": {"\\n": [-29]}}', "position -29"),
        "line-break-position-a-string": (
            '{"line_breaks": {"\\n": ["4"]}}', "line_breaks '\\n' must list whole numbers"),
        "header-a-list": ("[1]", "must be a JSON object"),
        "header-hits-not-objects": ('{"hits": [1]}', "hits must be a list of objects"),
        "header-hits-a-number": ('{"hits": 5}', "hits must be a list of objects"),
        "header-doc-id-a-number": ('{"doc_id": 5}', "doc_id must be a string"),
        "header-line-breaks-a-list": ('{"line_breaks": [4]}', "line_breaks must be an object"),
    }  # fmt: skip
    REFUSED: ClassVar[dict[str, Case]] = {
        name: case(lambda w, h=header: [*PUBTATOR, _pubtator(w, h)], 2, "{root}/c.pub: line 1", needle)
        for name, (header, needle) in HEADERS.items()
    }  # fmt: skip


BIOC = ["import", "--format", "bioc-json", "--out", "g.json", "--in"]
LOCATION = "documents.0.passages.0.annotations.0.locations.0"


class TestNoTraceback(Refusals):
    """Item 5: values of the wrong type or size in BioC, a damaged BRAT side file: one line and
    exit 2, never a traceback."""

    REFUSED: ClassVar[dict[str, Case]] = {
        "bioc-offset-a-string": case(lambda w: [*BIOC, _bioc(w, f"{LOCATION}.offset", "5")],
                                     2, "{root}/c.bioc.json: document 0 (pmid:1)",
                                     "location offset must be a whole number, got '5'"),
        "bioc-length-a-float": case(lambda w: [*BIOC, _bioc(w, f"{LOCATION}.length", 9.0)],
                                    2, "location length must be a whole number, got 9.0"),
        "bioc-passage-offset-a-string": case(
            lambda w: [*BIOC, _bioc(w, "documents.0.passages.0.offset", "0")],
            2, "passage 0: passage offset must be a whole number"),
        "bioc-passage-offset-huge": case(
            lambda w: [*BIOC, _bioc(w, "documents.0.passages.0.offset", 10**12)],
            2, "passage 0: passage offset 1000000000000 leaves a gap"),
        "bioc-infon-a-number": case(
            lambda w: [*BIOC, _bioc(w, "documents.0.passages.0.annotations.0.infons",
                                    {"type": 5})],
            2, "annotation T1: infons must map strings to strings"),
        "bioc-infon-a-list": case(
            lambda w: [*BIOC, _bioc(w, "documents.0.infons", {"role": ["primary"]})],
            2, "document 0 (pmid:1): infons must map strings to strings"),
        "bioc-passage-text-a-number": case(
            lambda w: [*BIOC, _bioc(w, "documents.0.passages.0.text", 5)],
            2, "passage 0: text must be a string"),
        "bioc-xml-passage-offset-huge": case(
            lambda w: ["import", "--format", "bioc-xml", "--out", "g.json", "--in", w.write(
                "c.xml", "<collection><document><id>d</id><passage><offset>1000000000000"
                         "</offset><text>x</text></passage></document></collection>")],
            2, "{root}/c.xml: line 1", "leaves a gap"),
        "bioc-xml-infon-without-a-key": case(
            lambda w: ["import", "--format", "bioc-xml", "--out", "g.json", "--in", w.write(
                "c.xml", "<collection><document><id>d</id>\n<infon>5</infon></document>"
                         "</collection>")],
            2, "{root}/c.xml: line 2: an <infon> needs a key"),
        "brat-side-documents-a-list": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _brat(w, {"documents": ["x"]})],
            2, "{root}/corp/goldloop.json: not a goldloop BRAT side file"),
        "brat-side-fields-a-number": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _brat(w, {"documents": {"x": 5}})],
            2, "{root}/corp/goldloop.json: not a goldloop BRAT side file"),
        "brat-side-a-list": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in", _brat(w, [])],
            2, "{root}/corp/goldloop.json: not a goldloop BRAT side file"),
        "brat-side-not-json": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _brat(w, None, "corp")
                       and w.write("corp/goldloop.json", "{").parent],
            2, "{root}/corp/goldloop.json: not valid JSON"),
    }  # fmt: skip

    def test_a_tokenizer_with_ids_outside_the_models_vocabulary(
        self, work: Work, cli: Cli, encoder_dir: Path
    ) -> None:
        model = past_the_vocabulary(encoder_dir, work.root / "model")
        spec = case(lambda w: ["baselines", "--gold", "gold.json", "--report-dir", "r",
                               "--systems", "encoder", "--encoder", model],
                    2, "encoder: {root}/model: the model cannot run on the tokenizer's ids",
                    "out of data bounds")  # fmt: skip
        assert_refused(spec, work, cli)


class TestBratFilesStayInTheCorpus(Refusals):
    """Item 6: a side file naming a file outside the corpus folder, or a link out of it, is
    refused naming the file."""

    REFUSED: ClassVar[dict[str, Case]] = {
        "side-file-names-a-file-outside": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       (_brat(w, folder="outside"),
                        _brat(w, {"documents": {"../outside/x": {"doc_id": "d"}}}))[1]],
            2, "{root}/corp/../outside/x.txt: lies outside the corpus folder {root}/corp"),
        "side-file-names-an-absolute-path": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _brat(w, {"documents": {f"{_brat(w, folder='outside')}/x": {}}})],
            2, "{root}/outside/x.txt: lies outside the corpus folder {root}/corp"),
        "a-text-linked-outside": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _linked_out(w, "x.txt")],
            2, "{root}/corp/x.txt: lies outside the corpus folder {root}/corp"),
        "an-ann-linked-outside-without-a-side-file": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _linked_out(w, "x.ann")],
            2, "{root}/corp/x.ann: lies outside the corpus folder {root}/corp"),
        "the-side-file-linked-outside": case(
            lambda w: ["import", "--format", "brat", "--out", "g.json", "--in",
                       _linked_out(w, "goldloop.json")],
            2, "{root}/corp/goldloop.json: lies outside the corpus folder {root}/corp"),
    }  # fmt: skip


def _linked_out(w: Work, name: str) -> Path:
    """The one-document corpus with ``name`` a link to the same file in a folder beside it."""
    corpus, outside = _brat(w), _brat(w, {"documents": {"x": {}}}, folder="outside")
    (corpus / name).unlink(missing_ok=True)
    (corpus / name).symlink_to(outside / name)
    return corpus


def _with_batch_state(w: Work, state: str) -> Path:
    """An ``--out`` whose batch state file (``<out>.batch.json``) holds ``state``."""
    w.write("g.json.batch.json", state)
    return w.root / "g.json"


def _mirror_folder(w: Work) -> Path:
    """A pull's ``--out`` whose task mirror (``<out>.tasks.json``) is a folder."""
    (w.root / "v.json.tasks.json").mkdir()
    return w.root / "v.json"


ANNOTATE = ["annotate", "--provider", "lexical"]
JUDGE = ["precision", "judge", "--provider", "openai", "--model", "m"]
DRY = ["annotate", "--provider", "openai", "--model", "gpt-5-mini", "--documents", "docs.jsonl",
       "--dry-run"]  # fmt: skip
BATCH = ["annotate", "--provider", "openai", "--model", "m", "--documents", "docs.jsonl", "--batch"]

CASES: dict[str, Case] = {
    # --- class 1: an output that is one of the inputs (refused before any work) ---
    "1-kb-derive": case(lambda w: ["kb", "derive", "--input", w.merged, "--output", w.merged],
                        2, "--output {merged}", "--input {merged}", "same file"),
    "1-annotate-documents": case(lambda w: [*ANNOTATE, "--documents", w.docs, "--out", w.docs],
                                 2, "--out", "--documents", "same file"),
    "1-annotate-sample-texts": case(
        lambda w: [*ANNOTATE, "--sample", w.sample, "--out", w.sample / "texts.jsonl"],
        2, "--out", "--sample", "same file"),
    "1-label-config": case(lambda w: ["label-config", "--kb", w.kb, "--output", w.kb],
                           2, "--output", "--kb", "same file"),
    "1-agree": case(lambda w: ["agree", "--gold", w.gold, "--other", w.other, "-o", w.gold],
                    2, "--out", "--gold", "same file"),
    "1-pool": case(lambda w: ["pool", f"a={w.gold}", f"b={w.other}", "--documents", w.docs,
                              "-o", w.other], 2, "--out", "same file"),
    "1-precision-judge": case(lambda w: [*JUDGE, "--system", w.system, "--documents", w.docs,
                                         "-o", w.system], 2, "--out", "--system", "same file"),
    "1-precision-sample": case(lambda w: ["precision", "sample", "--verdicts", w.verdicts,
                                          "--documents", w.docs, "-o", w.verdicts],
                               2, "--out", "--verdicts", "same file"),
    "1-precision-report": case(lambda w: ["precision", "report", "--verdicts", w.verdicts,
                                          "--labels", w.labels, "-o", w.labels],
                               2, "--out", "--labels", "same file"),
    "1-effort-out-is-png": case(lambda w: ["effort", "--project", "p", "-o", w.root / "e.json",
                                           "--png", w.root / "e.json",
                                           "--url", f"http://127.0.0.1:{w.port}"],
                                2, "--out {root}/e.json and --png {root}/e.json are the same file"),
    "1-effect-json-is-kb": case(lambda w: ["effect", "--project", "p", "--json", w.kb,
                                           "--kb", w.kb, "--url", f"http://127.0.0.1:{w.port}"],
                                2, "--json", "--kb", "same file"),
    "1-webhook-gold-is-kb": case(lambda w: ["studio", "webhook", "--project", "p", "--url",
                                            "http://127.0.0.1:9090", "--gold", w.kb, "--kb", w.kb,
                                            "--studio-url", f"http://127.0.0.1:{w.port}"],
                                 2, "--gold {kb}", "--kb {kb}", "same file"),
    "1-annotate-prices": case(lambda w: [*ANNOTATE, "--documents", w.docs, "--prices",
                                         w.write("p.json", BUNDLED_PRICES.read_bytes()),
                                         "--out", w.root / "p.json"],
                              2, "--out {root}/p.json and --prices", "same file"),
    "1-annotate-prices-variable": case(
        lambda w: [*ANNOTATE, "--documents", w.docs, "--out",
                   w.write("p.json", BUNDLED_PRICES.read_bytes())],
        2, "--out {root}/p.json and GOLDLOOP_PRICES", "same file",
        env={"GOLDLOOP_PRICES": "{root}/p.json"}),
    "1-annotate-parse-cache": case(
        lambda w: [*ANNOTATE, "--documents", w.docs, "--out", w.write("pc.sqlite", b"")],
        2, "--out {root}/pc.sqlite and the parse cache", "same file",
        env={"GOLDLOOP_PARSE_CACHE": "{root}/pc.sqlite"}),
    # --- class 3: an output that cannot be written (its folder is a file, or it is a folder) ---
    "3-kb-derive-parent": case(lambda w: ["kb", "derive", "--input", w.merged,
                                          "--output", w.a_file / "pairs.csv"],
                               2, "--output", "is a file, not a folder"),
    "3-kb-derive-folder": case(lambda w: ["kb", "derive", "--input", w.merged, "--output", w.a_dir],
                               2, "--output", "is a folder, not a file"),
    "3-sample": case(lambda w: ["sample", "--corpus", w.docs, "--out", w.a_file],
                     2, "--out", "is a file, not a folder"),
    "3-audit": case(lambda w: ["audit", "--sample", w.sample, "--out", w.a_file],
                    2, "--out", "is a file, not a folder"),
    "3-stats": case(lambda w: ["stats", "--sample", w.sample, "--report-dir", w.a_file],
                    2, "--report-dir", "is a file, not a folder"),
    "3-annotate-parent": case(lambda w: [*ANNOTATE, "--documents", w.docs,
                                         "--out", w.a_file / "gold.json"],
                              2, "--out", "is a file, not a folder"),
    "3-annotate-folder": case(lambda w: [*ANNOTATE, "--documents", w.docs, "--out", w.a_dir],
                              2, "--out", "is a folder, not a file"),
    "3-score": case(lambda w: ["score", "--gold", w.gold, "--system", f"s={w.system}",
                               "--report-dir", w.a_file], 2, "--report-dir", "is a file"),
    "3-baselines": case(lambda w: ["baselines", "--gold", w.gold, "--report-dir", w.a_file],
                        2, "--report-dir", "is a file"),
    "3-pull": case(lambda w: ["pull", "--project", "p", "--out", w.a_dir,
                              "--url", f"http://127.0.0.1:{w.port}"],
                   2, "--out", "is a folder, not a file"),
    "3-label-config": case(lambda w: ["label-config", "--output", w.a_dir],
                           2, "--output", "is a folder, not a file"),
    "3-agree": case(lambda w: ["agree", "--gold", w.gold, "--other", w.other, "-o", w.a_dir],
                    2, "--out", "is a folder, not a file"),
    "3-pool": case(lambda w: ["pool", f"a={w.gold}", f"b={w.other}", "--documents", w.docs,
                              "-o", w.a_dir], 2, "--out", "is a folder, not a file"),
    "3-precision-judge": case(lambda w: [*JUDGE, "--system", w.system, "--documents", w.docs,
                                         "-o", w.a_file / "v.jsonl"], 2, "--out", "is a file"),
    "3-precision-sample": case(lambda w: ["precision", "sample", "--verdicts", w.verdicts,
                                          "--documents", w.docs, "-o", w.a_dir],
                               2, "--out", "is a folder, not a file"),
    "3-precision-report": case(lambda w: ["precision", "report", "--verdicts", w.verdicts,
                                          "--labels", w.labels, "-o", w.a_dir],
                               2, "--out", "is a folder, not a file"),
    "3-status": case(lambda w: ["status", "--project", "p", "-o", w.a_dir,
                                "--url", f"http://127.0.0.1:{w.port}"],
                     2, "--out", "is a folder, not a file"),
    "3-effort-png": case(lambda w: ["effort", "--project", "p", "--png", w.a_file / "e.png",
                                    "--url", f"http://127.0.0.1:{w.port}"],
                         2, "--png", "is a file, not a folder"),
    "3-effect-png": case(lambda w: ["effect", "--project", "p", "--png", w.a_file / "e.png",
                                    "--url", f"http://127.0.0.1:{w.port}"],
                         2, "--png", "is a file, not a folder"),
    "3-pull-task-mirror": case(lambda w: ["pull", "--project", "p", "--out", _mirror_folder(w),
                                          "--url", f"http://127.0.0.1:{w.port}"],
                               2, "--out (its task mirror)", "is a folder, not a file"),
    "3-pull-since-task-mirror": case(lambda w: ["pull", "--since", "--project", "p", "--out",
                                                _mirror_folder(w),
                                                "--url", f"http://127.0.0.1:{w.port}"],
                                     2, "--out (its task mirror)", "is a folder, not a file"),
    "3-sync-task-mirror": case(lambda w: ["sync", "--sample", w.sample, "--project", "p",
                                          "--out", _mirror_folder(w),
                                          "--url", f"http://127.0.0.1:{w.port}"],
                               2, "--out (its task mirror)", "is a folder, not a file"),
    "3-webhook-task-mirror": case(lambda w: ["studio", "webhook", "--project", "p", "--url",
                                             "http://127.0.0.1:9090", "--gold", _mirror_folder(w),
                                             "--studio-url", f"http://127.0.0.1:{w.port}"],
                                  2, "--gold (its task mirror)", "is a folder, not a file"),
    # --- class 4: CSV/TSV files that are malformed (named with their line) ---
    "4-kb-check-nul": case(lambda w: ["kb", "check", w.write("k.csv", "entity_id,label,is_canonical,"
                                      "canonical_entity_id\nX:1,re\x00g,True,X:1\n")],
                           2, "{root}/k.csv: line 2: a NUL byte"),
    "4-kb-check-quote": case(lambda w: ["kb", "check", w.write("k.csv", "entity_id,label,"
                                        "is_canonical,canonical_entity_id\nX:1,\"reg,True,X:1\n")],
                             2, "{root}/k.csv: line 2: bad quoting"),
    "4-gold-check-kb-cr-header": case(lambda w: ["gold", "check", w.gold, "--kb",
                                                 w.write("k.csv", "entity_id,la\rbel\nX:1,r\n")],
                                      2, "{root}/k.csv"),
    "4-score-kb-extra-field": case(lambda w: ["score", "--gold", w.gold, "--system",
                                              f"s={w.system}", "--report-dir", w.root / "r",
                                              "--kb", w.write("k.csv", "entity_id,label,"
                                              "is_canonical,canonical_entity_id\nX:1,r,True,X:1,x\n")],
                                   2, "{root}/k.csv: line 2: 5 fields"),
    "4-score-id-bridge-quote": case(lambda w: ["score", "--gold", w.gold, "--system",
                                               f"s={w.system}", "--report-dir", w.root / "r",
                                               "--id-bridge", w.write("b.csv", 'from,to\n"x,y\n')],
                                    2, "{root}/b.csv: line 2: bad quoting"),
    "4-kb-derive-nul": case(lambda w: ["kb", "derive", "--input",
                                       w.write("m.csv", "entity_id,label\nX:1,a\x00\n"),
                                       "--output", w.root / "pairs.csv"],
                            2, "{root}/m.csv: line 2: a NUL byte"),
    # --- class 5: values out of range or unchecked ---
    "5-gold-check-string-offset": case(lambda w: ["gold", "check", w.write("g.json", json.dumps(
        [{"doc_id": "d", "text": TEXT, "ground_truth": [{"a": "5", "b": 14, "entity_id": "RO.0002211"}]}]))],
        2, "{root}/g.json: document 0 (d): hit 0: a:"),
    "5-gold-check-bool-offset": case(lambda w: ["gold", "check", w.write("g.json", json.dumps(
        [{"doc_id": "d", "text": TEXT, "ground_truth": [{"a": 5, "b": True, "entity_id": "RO.0002211"}]}]))],
        2, "hit 0: b:"),
    "5-gold-check-no-doc-id": case(lambda w: ["gold", "check", w.write("g.json", json.dumps(
        [{"text": TEXT, "ground_truth": []}]))], 2, "{root}/g.json: document 0: 'doc_id'"),
    "5-gold-check-unknown-id": case(lambda w: ["gold", "check", w.write("g.json", json.dumps(
        [{"doc_id": "d", "text": TEXT, "ground_truth": [_hit(5, 14, "XX:404")]}]))],
        1, "{root}/g.json: document 0 (d): hit 0: 'XX:404' is not in the KB"),
    "5-sample-n-primary": case(lambda w: ["sample", "--corpus", w.docs, "--out", w.root / "s",
                                          "--n-primary", "-1"], 2, "--n-primary"),
    "5-sample-batch-size": case(lambda w: ["sample", "--corpus", w.docs, "--out", w.root / "s",
                                           "--batch-size", "0"], 2, "--batch-size"),
    "5-audit-min-mentions": case(lambda w: ["audit", "--sample", w.sample, "--min-mentions", "-1"],
                                 2, "--min-mentions"),
    "5-score-bootstrap": case(lambda w: ["score", "--gold", w.gold, "--system", f"s={w.system}",
                                         "--bootstrap", "-5"], 2, "--bootstrap"),
    "5-pool-bootstrap": case(lambda w: ["pool", f"a={w.gold}", f"b={w.other}", "--documents",
                                        w.docs, "--bootstrap", "-5"], 2, "--bootstrap"),
    "5-precision-n-zero": case(lambda w: ["precision", "sample", "--verdicts", w.verdicts,
                                          "--documents", w.docs, "-o", w.root / "s.jsonl",
                                          "--n", "0"], 2, "--n"),
    "5-precision-n-negative": case(lambda w: ["precision", "sample", "--verdicts", w.verdicts,
                                              "--documents", w.docs, "-o", w.root / "s.jsonl",
                                              "--n", "-3"], 2, "--n"),
    "5-annotate-roles": case(lambda w: [*ANNOTATE, "--sample", w.sample, "--out",
                                        w.root / "g.json", "--roles", "primary,bogus"],
                             2, "--roles", "bogus"),
    "5-annotate-empty-text": case(lambda w: [*ANNOTATE, "--documents", w.write("e.jsonl", json.dumps(
        {"doc_id": "d", "text": " "}) + "\n"), "--out", w.root / "g.json"], 2, "{root}/e.jsonl", "'d'", "empty"),
    "5-annotate-max-tokens": case(lambda w: [*ANNOTATE, "--documents", w.docs, "--out",
                                             w.root / "g.json", "--max-tokens", "0"],
                                  2, "--max-tokens"),
    "5-backend-port": case(lambda w: ["backend", "--port", "-1"], 2, "--port"),
    "5-status-cap-minutes": case(lambda w: ["status", "--project", "p", "--cap-minutes", "0"],
                                 2, "--cap-minutes"),
    "5-status-interval": case(lambda w: ["status", "--project", "p", "--watch", "--interval", "0"],
                              2, "--interval"),
    "5-studio-start-port": case(lambda w: ["studio", "start", "--port", "70000"], 2, "--port"),
    "5-push-roles": case(lambda w: ["push", "--sample", w.sample, "--project", "p",
                                    "--roles", "bogus", "--url", f"http://127.0.0.1:{w.port}"],
                         2, "--roles", "bogus"),
    "5-push-other-without-candidates": case(
        lambda w: ["push", "--sample", w.sample, "--project", "p", "--other", w.gold,
                   "--url", f"http://127.0.0.1:{w.port}"], 2, "--other needs --candidates"),
    "5-webhook-url-not-a-url": case(lambda w: ["studio", "webhook", "--project", "p", "--url",
                                               "not a url", "--gold", w.root / "v.json",
                                               "--studio-url", f"http://127.0.0.1:{w.port}"],
                                    2, "--url: 'not a url' is not an http(s) URL with a host"),
    "5-webhook-url-ftp": case(lambda w: ["studio", "webhook", "--project", "p", "--url",
                                         "ftp://h/x", "--gold", w.root / "v.json",
                                         "--studio-url", f"http://127.0.0.1:{w.port}"],
                              2, "--url: 'ftp://h/x' is not an http(s) URL"),
    **{f"5-parse-cache-mb-{size}": case(
        lambda w: [*ANNOTATE, "--documents", w.docs, "--out", w.root / "g.json"],
        2, f"GOLDLOOP_PARSE_CACHE_MB='{size}': expected a positive size in MB",
        env={"GOLDLOOP_PARSE_CACHE_MB": size}) for size in ("inf", "-5", "nan")},
    # --- class 5: numbers that are not finite, JSON nested too deeply, in any file read ---
    **{f"5-prices-{name}": case(
        lambda w, bad=bad: [*DRY, "--prices", w.write("p.json", bad)],
        2, "--prices: {root}/p.json: not a price table", reason)
       for name, bad, reason in [
           ("nan", BUNDLED_PRICES.read_text().replace('"input": 0.', '"x": NaN, "input": 0.', 1),
            "NaN is not a finite number"),
           ("1e400", BUNDLED_PRICES.read_text().replace('"input": 0.', '"input": 1e400, "y": 0.', 1),
            "1e400 is not a finite number"),
           ("deep", "[" * 100_000 + "]" * 100_000, "nested too deeply")]},
    "5-input-price-nan": case(lambda w: [*DRY, "--input-price", "nan"], 2,
                              "--input-price: nan is not a price"),
    "5-input-price-negative": case(lambda w: [*DRY, "--input-price", "-1"], 2,
                                   "--input-price: -1.0 is not a price"),
    "5-batch-state-nan": case(
        lambda w: [*BATCH, "--out", _with_batch_state(w, '{"version": 1, "jobs": [{"round": NaN}]}'),
                   "--base-url", f"http://127.0.0.1:{w.port}/v1"],
        2, "{root}/g.json.batch.json: not a batch state file", "NaN is not a finite number",
        env={"OPENAI_API_KEY": "k", "GOLDLOOP_HOME": "{root}/../home"}),  # the caches' home
    "5-gold-check-deep": case(lambda w: ["gold", "check", w.write("g.json", "[" * 100_000)],
                              2, "{root}/g.json: not valid JSON: nested too deeply"),
    "5-gold-check-infinite-offset": case(lambda w: ["gold", "check", w.write("g.json",
        '[{"doc_id": "d", "text": "x", "ground_truth": [{"a": Infinity, "b": 1}]}]')],
        2, "{root}/g.json: not valid JSON: Infinity is not a finite number"),
    "5-documents-deep": case(lambda w: [*ANNOTATE, "--documents",
                                        w.write("d.jsonl", "[" * 100_000 + "\n"),
                                        "--out", w.root / "g.json"],
                             2, "{root}/d.jsonl: line 1: not valid JSON: nested too deeply"),
    "5-import-bioc-json-deep": case(lambda w: ["import", "--format", "bioc-json", "--in",
                                               w.write("c.json", "[" * 100_000),
                                               "--out", w.root / "g.json"],
                                    2, "{root}/c.json: not BioC JSON: nested too deeply"),
    # --- class 5: nothing to work on ---
    "5-annotate-no-documents": case(lambda w: [*ANNOTATE, "--documents", w.write("e.jsonl", ""),
                                               "--out", w.root / "g.json"],
                                    2, "--documents {root}/e.jsonl: holds no documents"),
    "5-annotate-no-document-of-the-roles": case(
        lambda w: [*ANNOTATE, "--documents", w.write("r.jsonl", json.dumps(
            {"doc_id": "d", "text": TEXT, "role": "curate"}) + "\n"),
            "--out", w.root / "g.json", "--roles", "primary"],
        2, "--documents {root}/r.jsonl: none of its 1 documents has a role among ['primary']"),
    "5-score-empty-gold": case(lambda w: ["score", "--gold", w.write("e.json", "[]"), "--system",
                                          f"s={w.system}", "--report-dir", w.root / "r"],
                               2, "{root}/e.json: the gold holds no documents to score against"),
    "5-baselines-empty-gold": case(lambda w: ["baselines", "--gold", w.write("e.json", "[]"),
                                              "--report-dir", w.root / "r"],
                                   2, "{root}/e.json: the gold holds no documents"),
    "5-precision-sample-verdict-outside": case(
        lambda w: ["precision", "sample", "--documents", w.docs, "-o", w.root / "s.jsonl", "--n", "1",
                   "--verdicts", w.write("v.jsonl", "".join(json.dumps(
                       {"doc_id": "pmid:1", "a": a, "b": b, "entity_id": "RO.0002211",
                        "verdict": "supported"}) + "\n" for a, b in [(5, 14), (30, 900)]))],
        2, "{root}/v.jsonl: mention", "span [30, 900) lies outside its document (length 33)"),
    "5-precision-report-verdict-not-a-span": case(
        lambda w: ["precision", "report", "--labels", w.labels, "-o", w.root / "p.json",
                   "--verdicts", w.write("v.jsonl", json.dumps(
                       {"doc_id": "pmid:1", "a": 14, "b": 5, "entity_id": "RO.0002211",
                        "verdict": "supported"}) + "\n")],
        2, "{root}/v.jsonl: line 1: span [14, 5) is not a span"),
    # --- class 7: the backend on a port in use ---
    "7-backend-port-in-use": case(lambda w: ["backend", "--port", "{busy}"], 2, "already in use"),
}  # fmt: skip


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "/"
        for p in sorted(root.rglob("*"))
    }


def _fill(text: str, work: Work, busy: int) -> str:
    return (
        text.replace("{root}", str(work.root))
        .replace("{busy}", str(busy))
        .format_map({name: getattr(work, name) for name in ("merged", "docs", "gold", "kb")})
    )


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_and_changes_nothing(
    name: str, work: Work, cli: Cli, busy_port: int
) -> None:
    assert_refused(CASES[name], work, cli, busy_port)


def assert_refused(spec: Case, work: Work, cli: Cli, busy_port: int = 0) -> None:
    """The case's command exits with its code and one error line holding its needles, with no
    traceback, and leaves every file of the workspace as it was."""
    args = [_fill(str(a), work, busy_port) for a in spec.args(work)]
    before = _snapshot(work.root)
    result = cli(*args, env={k: _fill(v, work, busy_port) for k, v in spec.env.items()})
    assert result.returncode == spec.code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in spec.needles:
        assert _fill(needle, work, busy_port) in lines[0]
    assert _snapshot(work.root) == before, "a file was created or changed"


# --- class 6: a server that is not Label Studio, a refused token, a missing project ---


class _NotLabelStudio(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><html><body><h1>Welcome to nginx!</h1>\n" + b"<p>x</p>\n" * 10
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def not_label_studio() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotLabelStudio)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


STUDIO_COMMANDS: dict[str, Args] = {
    "push": lambda w: ["push", "--sample", w.sample, "--project", "p"],
    "pull": lambda w: ["pull", "--project", "p", "--out", w.root / "verified.json"],
    "sync": lambda w: ["sync", "--sample", w.sample, "--project", "p", "--out", w.root / "v.json"],
    "agree": lambda w: ["agree", "--studio-project", "p", "-o", w.root / "k.json"],
    "precision-report": lambda w: ["precision", "report", "--verdicts", w.verdicts,
                                   "--studio-project", "p", "-o", w.root / "p.json"],
    "curate": lambda w: ["curate", "--project", "p"],
    "status": lambda w: ["status", "--project", "p", "-o", w.root / "s.json"],
    "effort": lambda w: ["effort", "--project", "p", "-o", w.root / "e.json",
                         "--png", w.root / "e.png"],
    "effect": lambda w: ["effect", "--project", "p", "--json", w.root / "f.json",
                         "--png", w.root / "f.png"],
}  # fmt: skip


def _studio_refusal(
    work: Work, cli: Cli, args: list[str], url: str, key: str, code: int = 2
) -> str:
    """Run a Label Studio command that must fail before writing: its one error line."""
    before = _snapshot(work.root)
    result = cli(*args, env={"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": key})
    assert result.returncode == code, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert key not in line and "Traceback" not in result.stderr
    assert _snapshot(work.root) == before
    return line


@pytest.mark.parametrize("name", list(STUDIO_COMMANDS))
def test_a_server_that_is_not_label_studio_is_named_in_one_line(
    name: str, work: Work, cli: Cli, not_label_studio: str
) -> None:
    args = [str(a) for a in STUDIO_COMMANDS[name](work)]
    line = _studio_refusal(work, cli, args, not_label_studio, "k" * 40)
    assert f"{not_label_studio} is not a Label Studio server" in line and "<html" not in line


@pytest.mark.parametrize("name", list(STUDIO_COMMANDS))
def test_a_refused_token_is_named_in_one_line(
    name: str, work: Work, cli: Cli, label_studio
) -> None:
    args = [str(a) for a in STUDIO_COMMANDS[name](work)]
    line = _studio_refusal(work, cli, args, label_studio.url, "0" * 40)
    assert "refused the API key" in line


@pytest.mark.parametrize(
    "name", ["pull", "agree", "precision-report", "status", "effort", "effect"]
)
def test_a_missing_project_is_named_in_one_line(
    name: str, work: Work, cli: Cli, label_studio
) -> None:
    args = [str(a) for a in STUDIO_COMMANDS[name](work)]
    args[args.index("p")] = "no-such-project-anywhere"
    line = _studio_refusal(work, cli, args, label_studio.url, label_studio.token)
    assert "no-such-project-anywhere" in line and "no Label Studio project" in line


def test_an_unreachable_label_studio_is_a_service_error(work: Work, cli: Cli) -> None:
    url = f"http://127.0.0.1:{work.port}"
    args = [str(a) for a in STUDIO_COMMANDS["pull"](work)]
    line = _studio_refusal(work, cli, args, url, "k" * 40, code=4)
    assert f"cannot reach Label Studio at {url}" in line


# --- fault: Label Studio stops in the middle of a pull ---


def test_label_studio_stopped_mid_pull_writes_nothing_and_keeps_the_old_gold(
    kb: KB, work: Work, cli: Cli, label_studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    from label_studio_sdk.projects.exports.client_ext import ExportsClientExt

    from goldloop.formats.gold import Document
    from goldloop.studio.push import push

    name = f"fault-{work.port}"
    documents = [Document(doc_id="pmid:1", text=TEXT, role="primary")]
    push(label_studio.studio, documents, name, kb)
    out = work.root / "verified.json"
    out.write_text('["the previous gold"]\n')
    before = _snapshot(work.root)
    download = ExportsClientExt.download

    def stop_then_download(self: ExportsClientExt, *args: object, **kwargs: object) -> object:
        label_studio.crash()  # the export was created; the server dies before it is read
        return download(self, *args, **kwargs)

    monkeypatch.setattr(ExportsClientExt, "download", stop_then_download)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    try:
        result = cli("pull", "--project", name, "--out", out, env=env)
    finally:
        label_studio.restart()
    assert result.returncode == 4, result.stderr
    (line,) = result.stderr.strip().splitlines()
    # The server dies while streaming the export: the body is cut off or the connection refused.
    assert f"Label Studio at {label_studio.url}" in line
    assert _snapshot(work.root) == before
    assert out.read_text() == '["the previous gold"]\n'


def test_an_unreachable_postgresql_is_a_service_error_before_anything_starts(
    work: Work, cli: Cli
) -> None:
    database = f"postgresql://goldloop:secret-pw@127.0.0.1:{work.port}/studio"
    before = _snapshot(work.root)
    result = cli("studio", "start", env={"GOLDLOOP_STUDIO_DATABASE": database})
    assert result.returncode == 4, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert f"PostgreSQL at 127.0.0.1:{work.port} does not answer" in line
    assert "secret-pw" not in line
    assert _snapshot(work.root) == before


# --- class 8: a secret in a refused URL is masked in the one line (and so in any log) ---

SECRET = "s3cret-pw"
SECRET_CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    "backend-base-url": (["backend", "--port", "{port}"],
                         {"GOLDLOOP_BASE_URL": f"ftp://user:{SECRET}@h/v1", "GOLDLOOP_MODEL": "m"},
                         "GOLDLOOP_BASE_URL='ftp://user:***@h/v1'"),
    "backend-other-base-url": (["backend", "--port", "{port}"],
                               {"GOLDLOOP_OTHER_PROVIDER": "openai",
                                "GOLDLOOP_OTHER_BASE_URL": f"ftp://user:{SECRET}@h/v1"},
                               "GOLDLOOP_OTHER_BASE_URL='ftp://user:***@h/v1'"),
    "studio-start-database-on-the-command-line": (
        ["studio", "start", "--database", f"postgresql://u:{SECRET}@127.0.0.1:{{port}}/db"], {},
        "--database postgresql://u:***@127.0.0.1:{port}/db: a password never comes from the "
        "command line"),
    "studio-start-database-malformed": (
        ["studio", "start"], {"GOLDLOOP_STUDIO_DATABASE": f"postgresql://u:{SECRET}@[h/db"},
        "database postgresql://u:***@[h/db: Invalid IPv6 URL"),
    "backend-redis-url-malformed": (
        ["backend", "--port", "{port}"],
        {"REDIS_URL": f"redis://u:{SECRET}@h:port/0", "GOLDLOOP_PROVIDER": "openai",
         "GOLDLOOP_MODEL": "m", "OPENAI_API_KEY": "k"}, "REDIS_URL redis://u:***@h:port/0"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(SECRET_CASES))
def test_a_password_in_a_refused_url_is_masked(name: str, work: Work, cli: Cli) -> None:
    args, env, needle = SECRET_CASES[name]
    before = _snapshot(work.root)
    result = cli(*[a.replace("{port}", str(work.port)) for a in args], env=env)
    assert result.returncode == 2, result.stderr
    line = result.stderr.strip().splitlines()[-1]  # the backend says what it found first
    assert line.startswith("error: ") and needle.replace("{port}", str(work.port)) in line
    assert SECRET not in result.stderr + result.stdout and "Traceback" not in result.stderr
    assert _snapshot(work.root) == before


# --- class 9: a campaign name whose derived titles Label Studio refuses, before any project ---


@pytest.mark.parametrize("command", ["push", "sync", "curate"])
def test_a_campaign_name_too_long_for_its_derived_titles_creates_nothing(
    command: str, work: Work, cli: Cli, label_studio
) -> None:
    from goldloop.studio.project import find_projects

    name = f"long-{command}-".ljust(45, "x")  # fits Label Studio's 50; NAME-double does not
    args = {
        "push": ["push", "--sample", work.sample, "--project", name],
        "sync": ["sync", "--sample", work.sample, "--project", name, "--out", work.root / "v.json"],
        "curate": ["curate", "--project", name],
    }[command]
    line = _studio_refusal(work, cli, [str(a) for a in args], label_studio.url, label_studio.token)
    assert f"--project: '{name}' (45 characters) gives the project title '{name}-double'" in line
    assert "3 to 50 characters, so a campaign name has 3 to 43" in line
    titles = [name, f"{name}-double", f"{name}-curate"]
    assert find_projects(label_studio.studio, titles) == {}


# --- class 10: a stored outcome is checked like a fresh one (or is a miss) ---


def _rewrite(cache: Path, table: str, column: str, change: Callable[[bytes], bytes]) -> int:
    with sqlite3.connect(cache) as conn:
        rows = conn.execute(f"SELECT rowid, {column} FROM {table}").fetchall()
        for rowid, blob in rows:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (change(blob), rowid))
    return len(rows)


def _past_the_text(blob: bytes) -> bytes:
    stored = json.loads(blob)
    for hit in stored["hits"]:
        hit["a"], hit["b"] = hit["a"] + 10_000, hit["b"] + 10_000
    return json.dumps(stored).encode()


@pytest.mark.parametrize("damage", [_past_the_text, lambda blob: b"{not json", lambda b: b"[]"])
def test_a_tampered_or_damaged_decoded_answer_is_decoded_again(
    damage: Callable[[bytes], bytes], work: Work, cli: Cli
) -> None:
    env = {"GOLDLOOP_PARSE_CACHE": str(work.root / "pc.sqlite")}
    out = work.root / "g.json"
    assert cli(*ANNOTATE, "--documents", work.docs, "--out", out, env=env).returncode == 0
    fresh = json.loads(out.read_text())
    assert fresh[0]["ground_truth"], "the lexical annotator finds 'regulates'"
    assert _rewrite(work.root / "pc.sqlite", "answers", "answer", damage) == 1
    again = cli(*ANNOTATE, "--documents", work.docs, "--out", out, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(out.read_text()) == fresh
    assert cli("gold", "check", out).returncode == 0


def test_a_damaged_parse_in_the_parse_cache_is_named_in_one_line(work: Work, cli: Cli) -> None:
    cache = work.root / "pc.sqlite"
    env = {"GOLDLOOP_PARSE_CACHE": str(cache)}
    out = work.root / "g.json"
    assert cli(*ANNOTATE, "--documents", work.docs, "--out", out, env=env).returncode == 0
    _rewrite(cache, "answers", "answer", lambda blob: b"[]")  # the parse is read again
    assert _rewrite(cache, "docs", "doc", lambda blob: blob[:40]) >= 1
    before = out.read_bytes()
    result = cli(*ANNOTATE, "--documents", work.docs, "--out", out, env=env)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert f"{cache}: a damaged entry in the parse cache" in line
    assert "Traceback" not in result.stderr and out.read_bytes() == before


# Issue 44, items 7-12


def _one_line(result: object, code: int = 2) -> str:
    """The run's one error line, after checking its exit code and that no traceback shows."""
    from tests.conftest import CliResult

    assert isinstance(result, CliResult)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


_SHEET = """# Precision labelling sheet 1 of 1 (G-0001 to G-0001)

## G-0001

key: `pmid:1:5:14:RO.0002211`

claim: **regulates** → regulates

sentence: IL\\-6 **regulates** TNF\\.

- [{mark}] supported
- [ ] contradicted
- [ ] not found

note:
"""


class TestLabellingSheetMarks:
    """Item 7: a box holds ``x`` (or ``X``), one space or nothing; any other mark is refused
    naming the file and line, never read as an unticked box."""

    @pytest.mark.parametrize("mark", ["xx", " x ", "x ", "  x", "v", "✓"])
    def test_a_mark_other_than_x_is_refused_naming_the_line(
        self, mark: str, work: Work, cli: Cli
    ) -> None:
        sheet = work.write("sheet-01.md", _SHEET.format(mark=mark))
        labels = work.root / "ticked.jsonl"
        line = _one_line(cli("precision", "labels", "--sheets", sheet, "--out", labels))
        assert f"{sheet}: line 11: mark {mark!r} in a box" in line
        assert not labels.exists()

    @pytest.mark.parametrize(("mark", "label"), [("x", "supported"), ("X", "supported"),
                                                 (" ", None), ("", None)])  # fmt: skip
    def test_x_ticks_and_an_empty_box_does_not(
        self, mark: str, label: str | None, work: Work, cli: Cli
    ) -> None:
        sheet = work.write("sheet-01.md", _SHEET.format(mark=mark))
        labels = work.root / "ticked.jsonl"
        result = cli("precision", "labels", "--sheets", sheet, "--out", labels)
        assert result.returncode == 0, result.stderr
        (row,) = [json.loads(line) for line in labels.read_text().splitlines()]
        assert row["key"] == "pmid:1:5:14:RO.0002211" and row["label"] == label


def _with_p_incl(w: Work, name: str, p_incl: object, hits: Path | None = None) -> Path:
    """A copy of the gold (or of ``hits``) whose one document carries ``p_incl``."""
    documents = json.loads((hits or w.gold).read_text())
    documents[0] |= {"p_incl": p_incl, "batch": 0, "stratum": "s"}
    return w.write(name, json.dumps(documents))


class TestTinyInclusionProbability:
    """Item 8: a p_incl inside (0, 1] whose weight 1/p_incl float cannot hold is refused in one
    line, before any report is written: no Infinity in a JSON, no numpy warning."""

    @pytest.mark.parametrize("command", ["score", "agree"])
    def test_a_weight_beyond_float_is_refused(self, command: str, work: Work, cli: Cli) -> None:
        import warnings

        gold = _with_p_incl(work, "tiny.json", 1e-310)
        args = {
            "score": ["score", "--gold", gold, "--system", f"s={work.system}",
                      "--report-dir", work.root / "reports"],
            "agree": ["agree", "--gold", gold, "--other", work.other, "-o", work.root / "k.json"],
        }[command]  # fmt: skip
        before = _snapshot(work.root)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a numpy overflow warning fails the run
            line = _one_line(cli(*args))
        assert "--design" in line and "p_incl 1e-310, outside [1e-12, 1]" in line
        assert f"{gold}: document 1 ('pmid:1')" in line
        assert _snapshot(work.root) == before

    def test_the_smallest_p_incl_taken_gives_finite_figures(self, work: Work, cli: Cli) -> None:
        gold = _with_p_incl(work, "small.json", 1e-12)
        reports = work.root / "reports"
        result = cli("score", "--gold", gold, "--system", f"s={work.system}", "--bootstrap", 20,
                     "--report-dir", reports)  # fmt: skip
        assert result.returncode == 0, result.stderr
        written = sorted(reports.rglob("*.json"))
        assert written
        for path in written:
            # Python's reader takes Infinity and NaN; goldloop never writes them.
            assert not re.search(r"\b(Infinity|NaN)\b", path.read_text()), path


class TestAnEmptyLabellingSheet:
    """Item 12: a sheet with no item (empty, or cut before its first item) is refused naming it;
    goldloop never writes one, so reading it as "nothing labelled" would hide the loss."""

    @pytest.mark.parametrize("text", ["", "# Precision labelling sheet 1 of 1\n\nTick one box.\n"])
    def test_a_sheet_without_items_is_refused(self, text: str, work: Work, cli: Cli) -> None:
        sheet = work.write("sheet-01.md", text)
        labels = work.root / "ticked.jsonl"
        line = _one_line(cli("precision", "labels", "--sheets", sheet, "--out", labels))
        assert f"{sheet}: no items" in line and not labels.exists()


class TestStudioUsersBeforeTheServer:
    """Item 9: ``studio users`` checks its addresses and its ``--out`` before asking the server
    anything (here no server listens: asking would end in exit 4), and never replaces a logins
    file, whose passwords were shown only once."""

    def test_an_existing_logins_file_is_refused(self, work: Work, cli: Cli) -> None:
        logins = work.write("logins.json", '[{"email": "a@lab.example", "password": "p"}]')
        before = _snapshot(work.root)
        line = _one_line(cli("studio", "users", "b@lab.example", "-o", logins,
                             "--url", f"http://127.0.0.1:{work.port}"))  # fmt: skip
        assert f"--out {logins}: exists already" in line
        assert _snapshot(work.root) == before

    @pytest.mark.parametrize("email", ["not-an-email", "a@b", "a@@b.example", "a b@lab.example",
                                       "a@lab..example", "a@.example", "@lab.example"])  # fmt: skip
    def test_a_bad_address_is_refused_without_a_server(
        self, email: str, work: Work, cli: Cli
    ) -> None:
        result = cli("studio", "users", "ok@lab.example", email,
                     "--url", f"http://127.0.0.1:{work.port}")  # fmt: skip
        assert _one_line(result) == f"error: {email.lower()!r} is not an e-mail address"


class TestAnnotateNeverShrinksAnOutput:
    """Item 11: an output answering more documents is kept unless ``--force`` (exit 3), whether
    requests failed or the run asked for fewer (``--limit``)."""

    def test_a_limited_run_keeps_the_fuller_output(self, work: Work, cli: Cli) -> None:
        texts = [TEXT, "IL-2 activates T cells.", "A binds B. C inhibits D."]
        docs = work.write("three.jsonl", "".join(
            json.dumps({"doc_id": f"pmid:{i}", "text": t}) + "\n" for i, t in enumerate(texts)
        ))  # fmt: skip
        out = work.root / "g.json"
        assert cli(*ANNOTATE, "--documents", docs, "--out", out).returncode == 0
        assert len(json.loads(out.read_text())) == 3
        before = _snapshot(work.root)
        line = _one_line(cli(*ANNOTATE, "--documents", docs, "--out", out, "--limit", 1), 3)
        assert f"kept {out}, which answers 3 (this run: 1): --force to replace it" in line
        assert _snapshot(work.root) == before
        forced = cli(*ANNOTATE, "--documents", docs, "--out", out, "--limit", 1, "--force")
        assert forced.returncode == 0, forced.stderr
        assert [d["doc_id"] for d in json.loads(out.read_text())] == ["pmid:0"]


def _to_a_closed_pipe(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``goldloop ARGS`` in its own process, its stdout a pipe whose reader has gone (what
    ``goldloop … | head`` becomes once ``head`` has its lines): every write to it fails."""
    read, write = os.pipe()
    os.close(read)
    # As a user's shell runs it: the width of goldloop's lines is not the test run's.
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    try:
        return subprocess.run(
            [str(Path(sys.executable).with_name("goldloop")), *map(str, args)],
            cwd=cwd, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)


class TestAClosedStdout:
    """Item 11: a reader that stops reading ends what is printed, not the run: the files are
    written, the exit code is the run's, and nothing reaches stderr (no traceback, no
    "Exception ignored", no "Broken pipe")."""

    def test_score_writes_its_reports_and_exits_0(self, work: Work) -> None:
        reports = work.root / "reports"
        result = _to_a_closed_pipe("score", "--gold", work.gold, "--system", f"s={work.system}",
                                   "--report-dir", reports, cwd=work.root)  # fmt: skip
        assert result.returncode == 0, result.stderr
        # The one line a gold without p_incl prints, nothing else.
        assert result.stderr.startswith("no corpus figures") and result.stderr.count("\n") == 1, (
            result.stderr
        )
        assert sorted(p.name for p in reports.iterdir()) == [
            "score_results.csv", "score_results.json", "score_results.png"]  # fmt: skip

    @pytest.mark.parametrize("args", [["--help"], ["score", "--help"]], ids=["root", "command"])
    def test_help_exits_0(self, args: list[str], work: Work) -> None:
        result = _to_a_closed_pipe(*args, cwd=work.root)
        assert (result.returncode, result.stderr) == (0, "")


# --- item 12: what the promise left open, decided (docs/reference/errors.md) ---


def _cells(path: Path) -> list[dict[str, str]]:
    """A TSV's rows as the csv module reads them: what a spreadsheet gets, escapes and all."""
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


class TestReviewSheetFormulas:
    """A review sheet's cell that a spreadsheet would run as a formula (=, +, -, @, tab, CR
    first) is written after an apostrophe, as OWASP advises; importing the sheet removes it."""

    IDS: ClassVar[list[str]] = [
        "=1+2",
        '=HYPERLINK("http://127.0.0.1/x","y")',
        "@SUM(A1)",
        "-2+3",
        "'=quoted",
    ]

    def test_formula_cells_are_escaped_and_read_back_unchanged(self, work: Work, cli: Cli) -> None:
        text = "+IL-6 regulates TNF."
        gold = work.write("formulas.json", json.dumps([
            {"doc_id": doc_id, "text": text, "ground_truth": [
                {"a": 0, "b": 5, "surface": "+IL-6", "entity_id": "RO.0002211",
                 "direction": "forward"}]}
            for doc_id in self.IDS
        ]))  # fmt: skip
        sheet = work.root / "review.tsv"
        assert cli("sheet", "export", "--gold", gold, "--output", sheet).returncode == 0
        rows = _cells(sheet)
        assert [row["doc_id"] for row in rows] == ["'" + doc_id for doc_id in self.IDS]
        assert {row["surface"] for row in rows} == {"'+IL-6"}
        for row in rows:
            for value in row.values():
                assert not (value or "").startswith(("=", "+", "-", "@", "\t", "\r")), row
        import csv

        with sheet.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t",
                                    lineterminator="\n")  # fmt: skip
            writer.writeheader()
            writer.writerows({**row, "verdict": "accept"} for row in rows)
        out = work.root / "verified.json"
        done = cli("sheet", "import", "--sheet", sheet, "--gold", gold, "--verified-by", "r@x.org",
                   "--output", out)  # fmt: skip
        assert done.returncode == 0, done.stderr
        verified = json.loads(out.read_text())
        assert [d["doc_id"] for d in verified] == self.IDS
        assert all([(h["a"], h["b"]) for h in d["ground_truth"]] == [(0, 5)] for d in verified)


class TestAgreeWithoutSharedDocuments:
    """Two golds with no document in common: exit 0, and the one line says so (not that the
    gold carries no p_incl)."""

    def test_the_line_says_no_document_is_shared(self, work: Work, cli: Cli) -> None:
        other = json.loads(work.other.read_text())
        other[0]["doc_id"] = "pmid:2"
        b = work.write("b.json", json.dumps(other))
        result = cli("agree", "--gold", work.gold, "--other", b, "-o", work.root / "k.json")
        assert result.returncode == 0, result.stderr
        assert result.err == (
            "no document both annotated: 1 only A annotated, 1 only B; every figure is undefined"
        )
        assert json.loads((work.root / "k.json").read_text())["n_docs_shared"] == 0


class TestBlindPartLargerThanThePool:
    """``--n-blind`` larger than the pool left to draw is refused: a short pool shrinks the
    other roles, never the blind comparison, whose size is the study's."""

    def test_refused_naming_the_option(self, work: Work, cli: Cli) -> None:
        from goldloop.settings import DEMO_CORPUS

        out = work.root / "s"
        line = _one_line(cli("sample", "--corpus", DEMO_CORPUS, "--out", out, "--n-primary", 2,
                             "--n-double", 0, "--n-reserve", 0, "--n-blind", 100,
                             "--workers", 1))  # fmt: skip
        assert line.startswith("error: --n-blind: 100 blind documents asked for, ")
        assert not (out / "manifest.csv").exists()


class TestNumbersInGold:
    """One rule for every number a gold holds, as for offsets: a string or a boolean is refused
    (an integer where a fraction is asked is taken)."""

    @pytest.mark.parametrize(
        ("document", "hit", "needle"),
        [
            ({"p_incl": "0.5"}, {}, "p_incl: Input should be a valid number (got '0.5')"),
            ({"p_incl": True}, {}, "p_incl: Input should be a valid number (got True)"),
            ({"batch": "1"}, {}, "batch: Input should be a valid integer (got '1')"),
            ({"batch": 1.0}, {}, "batch: Input should be a valid integer (got 1.0)"),
            ({}, {"confidence": "0.9"}, "hit 0: confidence: Input should be a valid number"),
            ({}, {"subject_span": ["0", "4"]}, "hit 0: subject_span.0: Input should be a valid"),
        ],
    )
    def test_a_number_written_otherwise_is_refused(
        self, document: dict[str, object], hit: dict[str, object], needle: str, work: Work,
        cli: Cli,
    ) -> None:  # fmt: skip
        data = json.loads(work.gold.read_text())
        data[0] |= document
        data[0]["ground_truth"][0] |= hit
        gold = work.write("numbers.json", json.dumps(data))
        line = _one_line(cli("gold", "check", gold))
        assert f"{gold}: document 0 (pmid:1): {needle}" in line

    def test_an_integer_is_a_number(self, work: Work, cli: Cli) -> None:
        gold = _with_p_incl(work, "one.json", 1)
        assert cli("gold", "check", gold).returncode == 0


_BIOC_NO_ID = """<?xml version="1.0" encoding="UTF-8"?>
<collection><source>s</source><date>2024</date><key>k</key>
<document>{id}
<passage><offset>0</offset><text>IL-6 regulates TNF.</text></passage>
</document>
</collection>
"""


class TestBiocWithoutAnId:
    """A BioC document without an id (or a blank one) is refused naming where it is: goldloop
    names every document by its id, and BioC's is the only one the file gives."""

    @pytest.mark.parametrize("element", ["", "<id></id>", "<id>  </id>"])
    def test_xml(self, element: str, work: Work, cli: Cli) -> None:
        source = work.write("c.xml", _BIOC_NO_ID.format(id=element))
        result = cli(
            "import", "--format", "bioc-xml", "--in", source, "--out", work.root / "c.json"
        )
        assert f"{source}: line 3: the document has no <id>" in _one_line(result)
        assert not (work.root / "c.json").exists()

    def test_json(self, work: Work, cli: Cli) -> None:
        passage = {"offset": 0, "infons": {}, "text": TEXT, "annotations": [], "relations": [],
                   "sentences": []}  # fmt: skip
        source = work.write("c.bioc.json", json.dumps({
            "source": "s", "date": "", "key": "", "infons": {},
            "documents": [{"id": "", "infons": {}, "passages": [passage], "annotations": [],
                           "relations": []}],
        }))  # fmt: skip
        result = cli(
            "import", "--format", "bioc-json", "--in", source, "--out", work.root / "c.json"
        )
        assert f"{source}: document 0 (): the document has no <id>" in _one_line(result)


class TestMissingOutputFolders:
    """One rule: an output's missing folders are created, with their parents (the nearest
    existing one must be a writable folder, checked before any work)."""

    OUTPUTS: ClassVar[dict[str, Callable[[Work, Path], list[object]]]] = {
        "score": lambda w, d: ["score", "--gold", w.gold, "--system", f"s={w.system}",
                               "--report-dir", d],
        "agree": lambda w, d: ["agree", "--gold", w.gold, "--other", w.other, "-o", d / "k.json"],
        "annotate": lambda w, d: [*ANNOTATE, "--documents", w.docs, "--out", d / "g.json"],
        "export": lambda w, d: ["export", "--gold", w.gold, "--format", "brat", "--out", d],
        "sheet-export": lambda w, d: ["sheet", "export", "--gold", w.gold, "-o", d / "r.tsv"],
        "label-config": lambda w, d: ["label-config", "--output", d / "c.xml"],
        "kb-derive": lambda w, d: ["kb", "derive", "--input", w.merged, "--output", d / "kb.csv"],
    }  # fmt: skip

    @pytest.mark.parametrize("command", list(OUTPUTS))
    def test_missing_folders_are_created(self, command: str, work: Work, cli: Cli) -> None:
        folder = work.root / "new" / "deeper"
        result = cli(*self.OUTPUTS[command](work, folder))
        assert result.returncode == 0, result.stderr
        assert any(folder.iterdir())

    def test_a_file_on_the_way_is_refused(self, work: Work, cli: Cli) -> None:
        folder = work.a_file / "deeper"
        line = _one_line(cli(*self.OUTPUTS["agree"](work, folder)))
        assert f"{work.a_file} is a file, not a folder" in line
