"""``goldloop export`` and ``goldloop import``: the gold in BioC, PubTator, BRAT and spaCy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    check_outputs,
    choice_option,
    console,
    kb_inputs,
    key_value_table,
    open_kb,
    read_beside,
)
from goldloop.files.atomic import atomic_write_json
from goldloop.files.beside import report_path, verification_path
from goldloop.interchange import EXPORT_FORMATS, IMPORT_FORMATS


def export(
    gold: Annotated[Path, typer.Option("--gold", help="Gold JSON to export.")],
    fmt: Annotated[
        str, choice_option("--format", choices=EXPORT_FORMATS, help="The format to write.")
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Output file (a folder of .txt/.ann files for brat)."),
    ],
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Write a gold file in one of the field's formats, every offset checked against its text."""
    from goldloop.formats.gold import read_gold
    from goldloop.interchange import (
        FOLDER_FORMATS,
        export_gold,
        folder_files,
        read_verification,
    )
    from goldloop.interchange.spans import FormatError

    verification = read_verification(gold)
    documents = read_gold(gold, open_kb(kb, equivalences)).documents
    outputs = {"--out": out}
    if verification is not None and not fmt.startswith("bioc"):
        outputs["--out (verification counts)"] = verification_path(out)
    check_outputs(
        outputs,
        {
            "--gold": gold,
            "--gold (its verification counts)": read_beside(gold, verification_path),
            **kb_inputs(kb, equivalences),
        },
        folders=("--out",) if fmt in FOLDER_FORMATS else (),
        receives={"--out": folder_files(fmt, documents)},
    )
    try:
        report = export_gold(fmt, documents, out, verification)
    except FormatError as exc:  # the library names the document; the line names the file too
        raise FormatError(f"{gold}: {exc}") from None
    rows: list[tuple[str, object]] = [("documents", report.documents), ("hits", report.hits)]
    rows += sorted(report.counts.items())
    console.print(key_value_table(f"export {gold} → {out} ({fmt})", rows))
    if report.sidecar is not None:
        console.print(f"verification counts: {report.sidecar}")


def import_(
    fmt: Annotated[
        str, choice_option("--format", choices=IMPORT_FORMATS, help="The corpus's format.")
    ],
    source: Annotated[
        Path, typer.Option("--in", help="Corpus file (a folder of .txt/.ann files for brat).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Gold JSON to write.")],
    type_map: Annotated[
        Path | None,
        typer.Option(
            "--type-map",
            help="CSV type,entity_id: the corpus's annotation types (or ids) → KB ids.",
            show_default=False,
        ),
    ] = None,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Read a corpus as gold (or as candidates for `push --candidates`); ids fold through the KB,
    unmapped types are counted and listed. Writes <out>.report.json beside it."""
    from goldloop.formats.gold import write_gold
    from goldloop.interchange import ImportReport, import_corpus
    from goldloop.interchange.spans import read_type_map

    report = report_path(out)
    check_outputs(
        {"--out": out, "--out (report)": report},
        {"--in": source, "--type-map": type_map, **kb_inputs(kb, equivalences)},
    )
    knowledge = open_kb(kb, equivalences)
    mapping = None if type_map is None else read_type_map(type_map, knowledge)
    gold, counts = import_corpus(fmt, source, knowledge, mapping)
    write_gold(out, gold.documents)
    s = gold.stats
    atomic_write_json(report, ImportReport(fmt, str(source), s, counts).to_dict())
    rows: list[tuple[str, object]] = [
        ("documents", s.documents),
        ("hits", s.hits),
        ("annotations of unmapped types (not imported)", sum(counts.unmapped_types.values())),
        ("folded to canonical (direction flipped)", s.folded_to_canonical),
        ("direction coerced to symmetric", s.direction_coerced),
        ("hits with ids not in the KB", sum(s.not_in_kb.values())),
    ]
    rows += sorted(counts.by_format.items())
    console.print(key_value_table(f"import {source} ({fmt}) → {out}", rows))
    if counts.unmapped_types:
        listed = ", ".join(f"{k} ({v})" for k, v in counts.unmapped_types.most_common())
        console.print(
            f"[yellow]unmapped types:[/] {listed} (map them with --type-map)", highlight=False
        )
    console.print(f"report: {report}")
